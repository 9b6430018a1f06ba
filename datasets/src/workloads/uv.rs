//! The `uv` connector: page views for Flink's split-distinct example.
//!
//! Semantics. Flink's tuning guide splits `COUNT(DISTINCT user_id) ... GROUP
//! BY day` because one day is hot. A `uv` table emits `number-of-rows` rows,
//! all `+I`, with exactly the columns
//!
//! ```sql
//! day INT, user_id BIGINT, flag STRING
//! ```
//!
//! | option | default | meaning |
//! |---|---|---|
//! | `number-of-rows` | required | rows to emit |
//! | `days` | `7` | `day` is in `1..=days` |
//! | `hot-day-share` | `0.5` | fraction of rows on day 1 (in `[0, 1]`); the other rows are uniform over days `2..=days`. With `days = 1` every row is on day 1, and a share other than 1 is an error |
//! | `users` | `100000` | `user_id` is in `1..=users` |
//! | `user-zipf-exponent` | `1.1` | Zipf exponent of `user_id` (user 1 is the most active); `0` means uniform |
//! | `flag-weights` | `'40,40,15,5'` | four non-negative weights (not all zero) of the flags `'android'`, `'iphone'`, `'web'`, `'other'` |
//! | `seed` | `0` | |
//!
//! Each column draws from its own random stream, so changing one column's
//! knob (say `flag-weights`) leaves the other columns' values unchanged.
//! Speed: three draws and the row `Vec` per row; flags are shared strings.

use std::collections::BTreeMap;

use operators::{Change, DataType, Value};
use rand::RngCore;

use super::draw::{below, unit, Categorical};
use super::options::{check_schema, Options};
use crate::error::DatasetError;
use crate::rng::LabRng;
use crate::zipf::Zipf;
use operators::exec::ChangeSource;
use operators::operator::OpResult;

/// The connector's name.
pub const CONNECTOR: &str = "uv";

/// The values of `flag`, in the order of `flag-weights`.
pub const FLAGS: [&str; 4] = ["android", "iphone", "web", "other"];

const OPTIONS: [&str; 8] = [
    "connector",
    "number-of-rows",
    "days",
    "hot-day-share",
    "users",
    "user-zipf-exponent",
    "flag-weights",
    "seed",
];

/// The columns a `uv` table must declare.
pub const SCHEMA: [(&str, DataType); 3] = [
    ("day", DataType::Int),
    ("user_id", DataType::BigInt),
    ("flag", DataType::String),
];

/// Random streams of the connector, one per column (`'uv'` in the high bits
/// keeps them apart from other connectors' streams under the same seed).
const STREAM: u64 = 0x7576 << 32;

/// A bounded, seeded stream of `(day, user_id, flag)` inserts.
#[derive(Debug)]
pub struct UvSource {
    remaining: u64,
    total: u64,
    days: u64,
    hot_day_share: f64,
    users: UserDist,
    flags: Categorical,
    flag_values: [Value; 4],
    day_rng: LabRng,
    user_rng: LabRng,
    flag_rng: LabRng,
}

#[derive(Debug)]
enum UserDist {
    Uniform(u64),
    Zipf(Zipf),
}

impl UvSource {
    /// Validates the options and the declared columns.
    pub fn new(
        options: &BTreeMap<String, String>,
        column_names: &[String],
        types: &[DataType],
    ) -> Result<UvSource, DatasetError> {
        let opts = Options::new(options, &OPTIONS)?;
        check_schema(CONNECTOR, &SCHEMA, "", column_names, types)?;
        let total = opts.number_of_rows()?;
        let days = opts.int_in("days", Some(7), 1, i32::MAX as u64)?;
        let hot_day_share = opts.share("hot-day-share", 0.5)?;
        if days == 1 && hot_day_share != 1.0 && opts.has("hot-day-share") {
            return Err(DatasetError::conflict(
                "hot-day-share",
                "with 'days' = '1' every row is on day 1; leave it out or set it to 1",
            ));
        }
        let users = opts.int_in("users", Some(100_000), 1, i64::MAX as u64)?;
        let exponent = opts.number_in(
            "user-zipf-exponent",
            1.1,
            0.0,
            f64::INFINITY,
            true,
            "a number >= 0 (0 means uniform)",
        )?;
        let users = if exponent == 0.0 {
            UserDist::Uniform(users)
        } else {
            UserDist::Zipf(Zipf::new(users, exponent)?)
        };
        let weights = flag_weights(opts.get("flag-weights"))?;
        let seed = opts.seed()?;
        Ok(UvSource {
            remaining: total,
            total,
            days,
            hot_day_share: if days == 1 { 1.0 } else { hot_day_share },
            users,
            flags: Categorical::new(&weights),
            flag_values: FLAGS.map(Value::str),
            day_rng: LabRng::seed_from(seed, STREAM),
            user_rng: LabRng::seed_from(seed, STREAM + 1),
            flag_rng: LabRng::seed_from(seed, STREAM + 2),
        })
    }

    /// The number of rows the source emits in all.
    pub fn total_rows(&self) -> u64 {
        self.total
    }

    #[inline]
    fn day(&mut self) -> i64 {
        if unit(&mut self.day_rng) < self.hot_day_share {
            1
        } else {
            2 + below(self.day_rng.next_u64(), self.days - 1) as i64
        }
    }

    #[inline]
    fn user(&mut self) -> i64 {
        match &self.users {
            UserDist::Uniform(n) => 1 + below(self.user_rng.next_u64(), *n) as i64,
            UserDist::Zipf(z) => z.sample(&mut self.user_rng) as i64,
        }
    }
}

impl ChangeSource for UvSource {
    fn next_batch(&mut self, max: usize, out: &mut Vec<Change>) -> OpResult<usize> {
        let n = (max as u64).min(self.remaining) as usize;
        out.reserve(n);
        for _ in 0..n {
            let day = self.day();
            let user = self.user();
            let flag = self.flag_values[self.flags.sample(&mut self.flag_rng)].clone();
            out.push(Change::insert(vec![
                Value::Int(day),
                Value::Int(user),
                flag,
            ]));
        }
        self.remaining -= n as u64;
        Ok(n)
    }

    fn can_read_ahead(&self) -> bool {
        true
    }
}

const FLAG_WEIGHTS_EXPECTED: &str =
    "four non-negative numbers separated by commas, not all zero, for 'android', 'iphone', 'web', 'other'";

fn flag_weights(value: Option<&str>) -> Result<[f64; 4], DatasetError> {
    let Some(text) = value else {
        return Ok([40.0, 40.0, 15.0, 5.0]);
    };
    let bad = || DatasetError::bad_option("flag-weights", text, FLAG_WEIGHTS_EXPECTED);
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.len() != 4 {
        return Err(bad());
    }
    let mut weights = [0.0; 4];
    for (w, p) in weights.iter_mut().zip(parts) {
        *w = match p.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => v,
            _ => return Err(bad()),
        };
    }
    if weights.iter().sum::<f64>() <= 0.0 {
        return Err(bad());
    }
    Ok(weights)
}
