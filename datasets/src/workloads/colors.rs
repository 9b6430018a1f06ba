//! The `colors` connector: the local-global aggregation example with a hot
//! colour.
//!
//! Semantics. Flink's tuning guide motivates two-phase aggregation with
//! `SELECT color, SUM(id) FROM T GROUP BY color` where most rows share one
//! colour. A `colors` table emits `number-of-rows` rows, all `+I`, with
//! exactly the columns
//!
//! ```sql
//! color STRING, id BIGINT
//! ```
//!
//! | option | default | meaning |
//! |---|---|---|
//! | `number-of-rows` | required | rows to emit |
//! | `colors` | `10` | distinct colours, at most 1000: `'red'` (the hot one), `'orange'`, `'yellow'`, `'green'`, `'blue'`, `'indigo'`, `'violet'`, `'black'`, `'white'`, `'gray'`, `'brown'`, `'pink'`, `'cyan'`, `'magenta'`, `'olive'`, `'navy'`, then `'color-17'`, `'color-18'`, ... |
//! | `hot-color-share` | `0.8` | fraction of rows that are `'red'` (in `[0, 1]`); the other rows are uniform over the other colours. With `colors = 1` every row is red, and a share other than 1 is an error |
//! | `seed` | `0` | |
//!
//! `id` is the row's 1-based position (`1, 2, 3, ...`): unique, so every
//! `SUM(id)` is exact and easy to check (`n (n + 1) / 2` over all colours).
//! Speed: one draw and the row `Vec` per row; colour names are shared strings.

use std::collections::BTreeMap;

use operators::{Change, DataType, Value};
use rand::RngCore;

use super::draw::{below, unit};
use super::options::{check_schema, Options};
use crate::error::DatasetError;
use crate::rng::LabRng;
use operators::exec::ChangeSource;
use operators::operator::OpResult;

/// The connector's name.
pub const CONNECTOR: &str = "colors";

/// The first colour names; colour `i > 16` (1-based) is `color-<i>`.
pub const COLOR_NAMES: [&str; 16] = [
    "red", "orange", "yellow", "green", "blue", "indigo", "violet", "black", "white", "gray",
    "brown", "pink", "cyan", "magenta", "olive", "navy",
];

/// The largest accepted `colors`.
pub const MAX_COLORS: u64 = 1000;

const OPTIONS: [&str; 5] = [
    "connector",
    "number-of-rows",
    "colors",
    "hot-color-share",
    "seed",
];

/// The columns a `colors` table must declare.
pub const SCHEMA: [(&str, DataType); 2] = [("color", DataType::String), ("id", DataType::BigInt)];

/// Random streams of the connector (`'co'` in the high bits).
const STREAM: u64 = 0x636f << 32;

/// The name of colour `i` (0-based).
pub fn color_name(i: usize) -> String {
    match COLOR_NAMES.get(i) {
        Some(n) => n.to_string(),
        None => format!("color-{}", i + 1),
    }
}

/// A bounded, seeded stream of `(color, id)` inserts.
#[derive(Debug)]
pub struct ColorsSource {
    next_id: i64,
    remaining: u64,
    hot_share: f64,
    names: Vec<Value>,
    rng: LabRng,
}

impl ColorsSource {
    /// Validates the options and the declared columns.
    pub fn new(
        options: &BTreeMap<String, String>,
        column_names: &[String],
        types: &[DataType],
    ) -> Result<ColorsSource, DatasetError> {
        let opts = Options::new(options, &OPTIONS)?;
        check_schema(CONNECTOR, &SCHEMA, "", column_names, types)?;
        let total = opts.number_of_rows()?;
        if total > i64::MAX as u64 {
            return Err(DatasetError::bad_option(
                "number-of-rows",
                opts.get("number-of-rows").unwrap_or_default(),
                format!("at most {} (ids are BIGINT)", i64::MAX),
            ));
        }
        let colors = opts.int_in("colors", Some(10), 1, MAX_COLORS)?;
        let hot_share = opts.share("hot-color-share", 0.8)?;
        if colors == 1 && hot_share != 1.0 && opts.has("hot-color-share") {
            return Err(DatasetError::conflict(
                "hot-color-share",
                "with 'colors' = '1' every row is red; leave it out or set it to 1",
            ));
        }
        let seed = opts.seed()?;
        Ok(ColorsSource {
            next_id: 1,
            remaining: total,
            hot_share: if colors == 1 { 1.0 } else { hot_share },
            names: (0..colors as usize)
                .map(|i| Value::str(&color_name(i)))
                .collect(),
            rng: LabRng::seed_from(seed, STREAM),
        })
    }

    /// The number of rows the source emits in all.
    pub fn total_rows(&self) -> u64 {
        self.remaining + (self.next_id - 1) as u64
    }
}

impl ChangeSource for ColorsSource {
    fn next_batch(&mut self, max: usize, out: &mut Vec<Change>) -> OpResult<usize> {
        let n = (max as u64).min(self.remaining) as usize;
        out.reserve(n);
        let others = self.names.len() as u64 - 1;
        for _ in 0..n {
            let color = if unit(&mut self.rng) < self.hot_share {
                0
            } else {
                1 + below(self.rng.next_u64(), others) as usize
            };
            out.push(Change::insert(vec![
                self.names[color].clone(),
                Value::Int(self.next_id),
            ]));
            self.next_id += 1;
        }
        self.remaining -= n as u64;
        Ok(n)
    }

    fn can_read_ahead(&self) -> bool {
        true
    }
}
