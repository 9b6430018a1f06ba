//! Flink's `datagen` connector, bounded, seeded, with the lab's skew options.
//!
//! Semantics. A `datagen` table emits `number-of-rows` rows, all `+I`. Each
//! column is filled by its own generator, configured by options named as in
//! Flink:
//!
//! | option | meaning |
//! |---|---|
//! | `number-of-rows` | rows to emit; required unless a column is a `sequence`, in which case it defaults to the shortest sequence's length (and may not exceed it) |
//! | `seed` | global seed (default `0`); column `i` draws from the stream `(seed, i)`, so adding a column after the others leaves their values unchanged |
//! | `rows-per-second` | accepted and ignored (the lab runs as fast as it can) |
//! | `fields.<f>.kind` | `random` (default), `sequence` or `event-time` |
//! | `fields.<f>.null-rate` | probability in `[0, 1]` that the value is NULL (default `0`); a NULL still consumes a sequence value |
//!
//! `kind = 'event-time'` (BIGINT): epoch milliseconds rising with the row
//! number from `fields.<f>.start` by `fields.<f>.step`, a fraction
//! `fields.<f>.out-of-order-rate` of rows moved back by up to
//! `fields.<f>.max-out-of-orderness` ms, and a jump of `fields.<f>.gap` ms
//! after every `fields.<f>.gap-every` rows (see `datagen/event_time.rs`).
//!
//! `kind = 'sequence'` (INT, BIGINT, DOUBLE, STRING): `fields.<f>.start` and
//! `fields.<f>.end` (both required, integers, `start <= end`) give the values
//! `start, start + 1, ..., end`; STRING columns get their decimal text.
//!
//! `kind = 'random'`:
//! - INT, BIGINT: uniform over `fields.<f>.min ..= fields.<f>.max`
//!   (defaults: the type's range), or Zipf-skewed with
//!   `fields.<f>.distribution = 'zipf'` and `fields.<f>.zipf-exponent`
//!   (`s > 0`, default `1.0`): rank `r` in `1..=(max - min + 1)` is drawn
//!   with probability proportional to `r^-s` and the value is `min + r - 1`,
//!   so `min` is the hottest value.
//! - DOUBLE: uniform over `[min, max]` (defaults `0.0` and `1.0`; Flink's
//!   default spans the whole type, which makes every `SUM` overflow); with
//!   `zipf` the value is `min + r - 1` for `r` in `1..=floor(max - min) + 1`.
//! - BOOLEAN: `true` or `false` with equal probability; takes no range.
//! - STRING: with `fields.<f>.max` (and optionally `min`, default `0`), an
//!   integer drawn exactly as for BIGINT (uniform or Zipf) printed in decimal:
//!   the way to get skewed string keys. Otherwise a random string of
//!   `fields.<f>.length` (default 10) characters from `[0-9A-Za-z]`.
//!
//! Any unknown option, an option for a column the table lacks, a value that
//! does not parse, or an option that does not apply to the column's kind or
//! type (for example `fields.f.start` on a random column) is an error naming
//! the option and what was expected.
//!
//! Speed: one enum dispatch and a few random words per value; no allocation
//! per row other than the row `Vec` and `STRING` values.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use operators::exec::ChangeSource;
use operators::operator::OpResult;
use operators::{Change, DataType, Value};
use rand::distr::Uniform;
use rand::{Rng, RngCore};

use crate::error::{quote_list, DatasetError};
use crate::rng::LabRng;
use crate::zipf::Zipf;

mod event_time;
use event_time::EventTimeGen;

/// Options that apply to the whole table.
const TABLE_OPTIONS: [&str; 4] = ["connector", "number-of-rows", "rows-per-second", "seed"];

/// Properties of `fields.<f>.<property>`.
const FIELD_PROPERTIES: [&str; 14] = [
    "kind",
    "min",
    "max",
    "length",
    "distribution",
    "zipf-exponent",
    "null-rate",
    "start",
    "end",
    "step",
    "out-of-order-rate",
    "max-out-of-orderness",
    "gap-every",
    "gap",
];

/// Properties only `kind = 'event-time'` takes.
const EVENT_TIME_ONLY: [&str; 5] = [
    "step",
    "out-of-order-rate",
    "max-out-of-orderness",
    "gap-every",
    "gap",
];

/// Default length of random strings (Flink's default).
const DEFAULT_STRING_LENGTH: usize = 10;

/// Longest random string accepted (guards against typos like `1e9`).
const MAX_STRING_LENGTH: usize = 1 << 20;

const ALPHANUMERIC: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A bounded stream of generated rows.
#[derive(Debug)]
pub struct DatagenSource {
    fields: Vec<FieldGen>,
    total: u64,
    remaining: u64,
    /// Scratch buffer for formatting strings.
    text: String,
}

#[derive(Debug)]
struct FieldGen {
    rng: LabRng,
    null_rate: f64,
    gen: Gen,
}

#[derive(Debug)]
enum Gen {
    /// Epoch milliseconds rising with the row, some out of order.
    EventTime(EventTimeGen),
    /// `next, next + 1, ...` as the column's type.
    Sequence {
        next: i64,
        ty: DataType,
    },
    /// Integers; `as_string` prints them as STRING values.
    Int {
        dist: IntDist,
        as_string: bool,
    },
    /// Uniform doubles in `[min, max]`.
    UniformDouble {
        min: f64,
        max: f64,
    },
    /// `min + r - 1` for a Zipf rank `r`.
    ZipfDouble {
        min: f64,
        zipf: Zipf,
    },
    Bool,
    Alphanumeric {
        length: usize,
    },
}

#[derive(Debug)]
enum IntDist {
    Uniform(Uniform<i64>),
    Zipf { min: i64, zipf: Zipf },
}

impl IntDist {
    #[inline]
    fn sample(&self, rng: &mut LabRng) -> i64 {
        match self {
            IntDist::Uniform(u) => rng.sample(u),
            IntDist::Zipf { min, zipf } => {
                let r = zipf.sample(rng);
                (*min as i128 + r as i128 - 1) as i64
            }
        }
    }
}

impl FieldGen {
    #[inline]
    fn next(&mut self, text: &mut String) -> Value {
        let null = self.null_rate > 0.0 && self.rng.random::<f64>() < self.null_rate;
        if let Gen::Sequence { next, ty } = &mut self.gen {
            let v = *next;
            *next = next.wrapping_add(1);
            return if null {
                Value::Null
            } else {
                match ty {
                    DataType::Double => Value::Double(v as f64),
                    DataType::String => int_string(text, v),
                    _ => Value::Int(v),
                }
            };
        }
        if let Gen::EventTime(g) = &mut self.gen {
            // A NULL takes the row's time all the same.
            let t = g.next(&mut self.rng);
            return if null { Value::Null } else { Value::Int(t) };
        }
        if null {
            return Value::Null;
        }
        let rng = &mut self.rng;
        match &self.gen {
            Gen::Sequence { .. } | Gen::EventTime(_) => unreachable!("handled above"),
            Gen::Int { dist, as_string } => {
                let v = dist.sample(rng);
                if *as_string {
                    int_string(text, v)
                } else {
                    Value::Int(v)
                }
            }
            Gen::UniformDouble { min, max } => {
                let u: f64 = rng.random();
                Value::Double((min * (1.0 - u) + max * u).clamp(*min, *max))
            }
            Gen::ZipfDouble { min, zipf } => Value::Double(min + (zipf.sample(rng) - 1) as f64),
            Gen::Bool => Value::Bool(rng.next_u64() >> 63 == 1),
            Gen::Alphanumeric { length } => {
                text.clear();
                let mut left = *length;
                while left > 0 {
                    let word = rng.next_u64();
                    for half in [word as u32, (word >> 32) as u32] {
                        if left == 0 {
                            break;
                        }
                        // Multiply-shift maps 32 random bits onto 0..62
                        // (bias below 2^-26, irrelevant for test data).
                        let i = ((half as u64 * 62) >> 32) as usize;
                        text.push(ALPHANUMERIC[i] as char);
                        left -= 1;
                    }
                }
                Value::str(text.as_str())
            }
        }
    }
}

fn int_string(text: &mut String, v: i64) -> Value {
    text.clear();
    // Writing into a String cannot fail.
    let _ = write!(text, "{v}");
    Value::str(text.as_str())
}

/// The options of one column, by property.
type FieldOptions<'a> = BTreeMap<&'a str, &'a str>;

impl DatagenSource {
    /// Validates the options against the schema and builds the generators.
    /// Errors carry no table name; [`crate::open_source`] adds it.
    pub fn new(
        options: &BTreeMap<String, String>,
        column_names: &[String],
        types: &[DataType],
    ) -> Result<DatagenSource, DatasetError> {
        if column_names.len() != types.len() {
            return Err(DatasetError::SchemaMismatch {
                names: column_names.len(),
                types: types.len(),
            });
        }
        let mut per_field: Vec<FieldOptions> = vec![BTreeMap::new(); column_names.len()];
        let mut number_of_rows = None;
        let mut seed = 0u64;
        for (key, value) in options {
            match key.as_str() {
                "connector" => {}
                "number-of-rows" => number_of_rows = Some(parse_count(key, value)?),
                "rows-per-second" => {
                    parse_count(key, value)?;
                }
                "seed" => seed = parse_seed(key, value)?,
                _ => {
                    let (column, property) =
                        split_field_key(key).ok_or_else(|| unknown_option(key))?;
                    if !FIELD_PROPERTIES.contains(&property) {
                        return Err(unknown_option(key));
                    }
                    let index = column_names
                        .iter()
                        .position(|c| c == column)
                        .ok_or_else(|| DatasetError::UnknownColumn {
                            table: String::new(),
                            key: key.clone(),
                            column: column.to_string(),
                            columns: quote_list(column_names),
                        })?;
                    per_field[index].insert(property, value.as_str());
                }
            }
        }

        let mut fields = Vec::with_capacity(types.len());
        // The shortest sequence: (length, column) for defaults and checks.
        let mut shortest: Option<(u64, &str)> = None;
        for (index, (name, ty)) in column_names.iter().zip(types).enumerate() {
            let opts = &per_field[index];
            let spec = FieldSpec {
                name,
                ty: *ty,
                opts,
            };
            let (gen, seq_len) = spec.build()?;
            if let Some(len) = seq_len {
                if shortest.is_none_or(|(l, _)| len < l) {
                    shortest = Some((len, name));
                }
            }
            let null_rate = match opts.get("null-rate") {
                None => 0.0,
                Some(v) => {
                    let key = spec.key("null-rate");
                    let r = parse_f64(&key, v, "a probability between 0.0 and 1.0")?;
                    if !(0.0..=1.0).contains(&r) {
                        return Err(DatasetError::bad_option(
                            &key,
                            v,
                            "a probability between 0.0 and 1.0",
                        ));
                    }
                    r
                }
            };
            fields.push(FieldGen {
                rng: LabRng::seed_from(seed, index as u64),
                null_rate,
                gen,
            });
        }

        let total = match (number_of_rows, shortest) {
            (Some(n), Some((len, column))) if n > len => {
                return Err(DatasetError::conflict(
                    "number-of-rows",
                    format!("{n} rows exceed the {len} values of sequence column '{column}'"),
                ));
            }
            (Some(n), _) => n,
            (None, Some((len, _))) => len,
            (None, None) => {
                return Err(DatasetError::missing(
                    "number-of-rows",
                    "the lab needs bounded input: give the number of rows, \
                     or make a column a sequence with start and end",
                ));
            }
        };
        Ok(DatagenSource {
            fields,
            total,
            remaining: total,
            text: String::new(),
        })
    }

    /// The number of rows the source emits in all.
    pub fn total_rows(&self) -> u64 {
        self.total
    }
}

/// Rows (as `+I` changes), up to `max` a batch.
impl ChangeSource for DatagenSource {
    fn next_batch(&mut self, max: usize, out: &mut Vec<Change>) -> OpResult<usize> {
        let n = (max as u64).min(self.remaining) as usize;
        out.reserve(n);
        let width = self.fields.len();
        for _ in 0..n {
            let mut row = Vec::with_capacity(width);
            for f in &mut self.fields {
                row.push(f.next(&mut self.text));
            }
            out.push(Change::insert(row));
        }
        self.remaining -= n as u64;
        Ok(n)
    }

    fn can_read_ahead(&self) -> bool {
        true
    }
}

/// `fields.<column>.<property>` split at the last dot (column names may
/// contain dots).
fn split_field_key(key: &str) -> Option<(&str, &str)> {
    key.strip_prefix("fields.")?.rsplit_once('.')
}

fn unknown_option(key: &str) -> DatasetError {
    let mut allowed: Vec<String> = TABLE_OPTIONS.iter().map(|s| s.to_string()).collect();
    allowed.extend(
        FIELD_PROPERTIES
            .iter()
            .map(|p| format!("fields.<column>.{p}")),
    );
    DatasetError::UnknownOption {
        table: String::new(),
        key: key.to_string(),
        allowed: quote_list(&allowed),
    }
}

fn parse_count(key: &str, value: &str) -> Result<u64, DatasetError> {
    value
        .trim()
        .parse::<u64>()
        .map_err(|_| DatasetError::bad_option(key, value, "a non-negative integer"))
}

fn parse_seed(key: &str, value: &str) -> Result<u64, DatasetError> {
    let v = value.trim();
    v.parse::<u64>()
        .or_else(|_| v.parse::<i64>().map(|i| i as u64))
        .map_err(|_| DatasetError::bad_option(key, value, "an integer"))
}

fn parse_f64(key: &str, value: &str, expected: &str) -> Result<f64, DatasetError> {
    match value.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(DatasetError::bad_option(key, value, expected)),
    }
}

/// One column's options, checked against its kind and type.
struct FieldSpec<'a> {
    name: &'a str,
    ty: DataType,
    opts: &'a FieldOptions<'a>,
}

impl FieldSpec<'_> {
    fn key(&self, property: &str) -> String {
        format!("fields.{}.{}", self.name, property)
    }

    fn get(&self, property: &str) -> Option<&str> {
        self.opts.get(property).copied()
    }

    /// Rejects any of `properties` that is set, saying why it does not apply.
    fn reject(&self, properties: &[&str], why: &str) -> Result<(), DatasetError> {
        match properties.iter().find(|p| self.opts.contains_key(*p)) {
            Some(p) => Err(DatasetError::conflict(&self.key(p), why.to_string())),
            None => Ok(()),
        }
    }

    /// An integer option within the column's type range.
    fn int(&self, property: &str) -> Result<Option<i64>, DatasetError> {
        let Some(value) = self.get(property) else {
            return Ok(None);
        };
        let key = self.key(property);
        let v = value
            .trim()
            .parse::<i64>()
            .map_err(|_| DatasetError::bad_option(&key, value, "an integer"))?;
        if self.ty == DataType::Int && i32::try_from(v).is_err() {
            return Err(DatasetError::bad_option(
                &key,
                value,
                "an integer from -2147483648 to 2147483647 (the column is INT)",
            ));
        }
        Ok(Some(v))
    }

    /// Builds the generator; for a sequence also returns its length.
    fn build(&self) -> Result<(Gen, Option<u64>), DatasetError> {
        match self.get("kind").map(str::trim) {
            None | Some("random") => self.random().map(|g| (g, None)),
            Some("sequence") => self.sequence().map(|(g, n)| (g, Some(n))),
            Some("event-time") => self.event_time().map(|g| (g, None)),
            Some(other) => Err(DatasetError::bad_option(
                &self.key("kind"),
                other,
                "'random', 'sequence' or 'event-time'",
            )),
        }
    }

    fn event_time(&self) -> Result<Gen, DatasetError> {
        if self.ty != DataType::BigInt {
            return Err(DatasetError::conflict(
                &self.key("kind"),
                format!(
                    "kind 'event-time' applies to BIGINT columns (epoch milliseconds), not {}; \
                     declare a computed column (ts AS TO_TIMESTAMP_LTZ(millis, 3)) for a timestamp",
                    self.ty
                ),
            ));
        }
        self.reject(
            &[
                "min",
                "max",
                "length",
                "distribution",
                "zipf-exponent",
                "end",
            ],
            "does not apply to kind 'event-time'",
        )?;
        EventTimeGen::new(self).map(Gen::EventTime)
    }

    fn sequence(&self) -> Result<(Gen, u64), DatasetError> {
        let kind = self.key("kind");
        if !matches!(
            self.ty,
            DataType::Int | DataType::BigInt | DataType::Double | DataType::String
        ) {
            return Err(DatasetError::conflict(
                &kind,
                format!(
                    "kind 'sequence' applies to INT, BIGINT, DOUBLE and STRING columns, not {}",
                    self.ty
                ),
            ));
        }
        self.reject(
            &["min", "max", "length", "distribution", "zipf-exponent"],
            "applies only to kind 'random'",
        )?;
        self.reject(&EVENT_TIME_ONLY, "applies only to kind 'event-time'")?;
        let start = self.int("start")?.ok_or_else(|| {
            DatasetError::missing(
                &self.key("start"),
                "an integer: a sequence needs start and end",
            )
        })?;
        let end = self.int("end")?.ok_or_else(|| {
            DatasetError::missing(
                &self.key("end"),
                "an integer: a sequence needs start and end",
            )
        })?;
        if end < start {
            return Err(DatasetError::bad_option(
                &self.key("end"),
                self.get("end").unwrap_or_default(),
                format!("an integer >= '{}' ({start})", self.key("start")),
            ));
        }
        let len = (end as i128 - start as i128 + 1).min(u64::MAX as i128) as u64;
        Ok((
            Gen::Sequence {
                next: start,
                ty: self.ty,
            },
            len,
        ))
    }

    fn random(&self) -> Result<Gen, DatasetError> {
        self.reject(
            &["start"],
            "applies only to kinds 'sequence' and 'event-time'",
        )?;
        self.reject(&["end"], "applies only to kind 'sequence'")?;
        self.reject(&EVENT_TIME_ONLY, "applies only to kind 'event-time'")?;
        let zipf_exponent = match self.get("distribution").map(str::trim) {
            None | Some("uniform") => {
                self.reject(&["zipf-exponent"], "applies only with distribution 'zipf'")?;
                None
            }
            Some("zipf") => Some(match self.get("zipf-exponent") {
                None => 1.0,
                Some(v) => {
                    let key = self.key("zipf-exponent");
                    let s = parse_f64(&key, v, "a number > 0")?;
                    if s <= 0.0 {
                        return Err(DatasetError::bad_option(&key, v, "a number > 0"));
                    }
                    s
                }
            }),
            Some(other) => {
                return Err(DatasetError::bad_option(
                    &self.key("distribution"),
                    other,
                    "'uniform' or 'zipf'",
                ))
            }
        };
        match self.ty {
            DataType::Timestamp | DataType::TimestampLtz | DataType::Interval => {
                Err(DatasetError::conflict(
                    &self.key("kind"),
                    format!(
                        "datagen does not generate {} columns; generate a BIGINT of epoch milliseconds \
                         and declare a computed column (ts AS TO_TIMESTAMP_LTZ(millis, 3))",
                        self.ty
                    ),
                ))
            }
            DataType::Boolean => {
                self.reject(
                    &["min", "max", "length", "distribution", "zipf-exponent"],
                    "does not apply to BOOLEAN columns (uniform true/false)",
                )?;
                Ok(Gen::Bool)
            }
            DataType::Int | DataType::BigInt => {
                self.reject(&["length"], "applies only to STRING columns")?;
                let (lo, hi) = if self.ty == DataType::Int {
                    (i32::MIN as i64, i32::MAX as i64)
                } else {
                    (i64::MIN, i64::MAX)
                };
                let min = self.int("min")?.unwrap_or(lo);
                let max = self.int("max")?.unwrap_or(hi);
                let dist = self.int_dist(min, max, zipf_exponent)?;
                Ok(Gen::Int {
                    dist,
                    as_string: false,
                })
            }
            DataType::String => {
                if self.opts.contains_key("min") || self.opts.contains_key("max") {
                    self.reject(
                        &["length"],
                        "cannot be combined with min/max (which draw integer keys)",
                    )?;
                    let max = self.int("max")?.ok_or_else(|| {
                        DatasetError::missing(
                            &self.key("max"),
                            "an integer: a STRING column with a min draws integer keys up to max",
                        )
                    })?;
                    let min = self.int("min")?.unwrap_or(0);
                    let dist = self.int_dist(min, max, zipf_exponent)?;
                    Ok(Gen::Int {
                        dist,
                        as_string: true,
                    })
                } else {
                    if zipf_exponent.is_some() {
                        return Err(DatasetError::conflict(
                            &self.key("distribution"),
                            format!(
                                "'zipf' on a STRING column needs '{}' (keys are drawn as integers)",
                                self.key("max")
                            ),
                        ));
                    }
                    let length = match self.get("length") {
                        None => DEFAULT_STRING_LENGTH,
                        Some(v) => match v.trim().parse::<usize>() {
                            Ok(n) if n <= MAX_STRING_LENGTH => n,
                            _ => {
                                return Err(DatasetError::bad_option(
                                    &self.key("length"),
                                    v,
                                    format!("an integer from 0 to {MAX_STRING_LENGTH}"),
                                ))
                            }
                        },
                    };
                    Ok(Gen::Alphanumeric { length })
                }
            }
            DataType::Double => {
                self.reject(&["length"], "applies only to STRING columns")?;
                let number = |p: &str, default: f64| match self.get(p) {
                    None => Ok(default),
                    Some(v) => parse_f64(&self.key(p), v, "a finite number"),
                };
                let min = number("min", 0.0)?;
                let max = number("max", 1.0)?;
                self.check_order(min <= max, &min.to_string())?;
                match zipf_exponent {
                    None => Ok(Gen::UniformDouble { min, max }),
                    Some(s) => {
                        let n = ((max - min).floor() + 1.0).min(u64::MAX as f64) as u64;
                        let zipf = Zipf::new(n, s).map_err(|e| self.zipf_error(e))?;
                        Ok(Gen::ZipfDouble { min, zipf })
                    }
                }
            }
        }
    }

    fn check_order(&self, ok: bool, min: &str) -> Result<(), DatasetError> {
        if ok {
            return Ok(());
        }
        Err(DatasetError::bad_option(
            &self.key("max"),
            self.get("max").unwrap_or_default(),
            format!("a value >= '{}' ({min})", self.key("min")),
        ))
    }

    fn zipf_error(&self, e: DatasetError) -> DatasetError {
        DatasetError::conflict(&self.key("distribution"), e.to_string())
    }

    fn int_dist(
        &self,
        min: i64,
        max: i64,
        zipf_exponent: Option<f64>,
    ) -> Result<IntDist, DatasetError> {
        self.check_order(min <= max, &min.to_string())?;
        match zipf_exponent {
            None => {
                let u = Uniform::new_inclusive(min, max)
                    .map_err(|e| self.range_error(e.to_string()))?;
                Ok(IntDist::Uniform(u))
            }
            Some(s) => {
                let n = (max as i128 - min as i128 + 1).min(u64::MAX as i128) as u64;
                let zipf = Zipf::new(n, s).map_err(|e| self.zipf_error(e))?;
                Ok(IntDist::Zipf { min, zipf })
            }
        }
    }

    fn range_error(&self, text: String) -> DatasetError {
        DatasetError::conflict(&self.key("min"), text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        let mut m: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        m.entry("connector".into())
            .or_insert_with(|| "datagen".into());
        m
    }

    fn names(ns: &[&str]) -> Vec<String> {
        ns.iter().map(|s| s.to_string()).collect()
    }

    fn generate(pairs: &[(&str, &str)], cols: &[&str], types: &[DataType]) -> Vec<Vec<Value>> {
        let mut src = DatagenSource::new(&opts(pairs), &names(cols), types).unwrap();
        let mut out = Vec::new();
        while src.next_batch(1000, &mut out).unwrap() > 0 {}
        assert!(out.iter().all(|c| c.kind == operators::RowKind::Insert));
        out.into_iter().map(|c| c.row).collect()
    }

    fn error(pairs: &[(&str, &str)], cols: &[&str], types: &[DataType]) -> String {
        DatagenSource::new(&opts(pairs), &names(cols), types)
            .unwrap_err()
            .to_string()
    }

    const T3: [DataType; 3] = [DataType::BigInt, DataType::String, DataType::Double];

    #[test]
    fn same_seed_same_rows_different_seed_different_rows() {
        let base = [("number-of-rows", "500"), ("fields.k.max", "100")];
        let a = generate(&[base[0], base[1], ("seed", "7")], &["k", "s", "d"], &T3);
        let b = generate(&[base[0], base[1], ("seed", "7")], &["k", "s", "d"], &T3);
        let c = generate(&[base[0], base[1], ("seed", "8")], &["k", "s", "d"], &T3);
        assert_eq!(a.len(), 500);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn adding_a_column_keeps_the_others() {
        let pairs = [
            ("number-of-rows", "100"),
            ("fields.k.min", "1"),
            ("fields.k.max", "50"),
        ];
        let one = generate(&pairs, &["k"], &[DataType::Int]);
        let two = generate(&pairs, &["k", "extra"], &[DataType::Int, DataType::String]);
        let first: Vec<&Value> = two.iter().map(|r| &r[0]).collect();
        assert_eq!(one.iter().map(|r| &r[0]).collect::<Vec<_>>(), first);
    }

    #[test]
    fn sequence_counts_and_defaults_the_row_count() {
        let rows = generate(
            &[
                ("fields.id.kind", "sequence"),
                ("fields.id.start", "5"),
                ("fields.id.end", "9"),
            ],
            &["id", "name"],
            &[DataType::Int, DataType::String],
        );
        let ids: Vec<Value> = rows.iter().map(|r| r[0].clone()).collect();
        assert_eq!(ids, (5..=9).map(Value::Int).collect::<Vec<_>>());
        let rows = generate(
            &[
                ("number-of-rows", "3"),
                ("fields.s.kind", "sequence"),
                ("fields.s.start", "-1"),
                ("fields.s.end", "100"),
                ("fields.d.kind", "sequence"),
                ("fields.d.start", "0"),
                ("fields.d.end", "10"),
            ],
            &["s", "d"],
            &[DataType::String, DataType::Double],
        );
        assert_eq!(
            rows,
            vec![
                vec![Value::str("-1"), Value::Double(0.0)],
                vec![Value::str("0"), Value::Double(1.0)],
                vec![Value::str("1"), Value::Double(2.0)],
            ]
        );
    }

    #[test]
    fn sequence_shorter_than_number_of_rows_is_an_error() {
        let msg = error(
            &[
                ("number-of-rows", "10"),
                ("fields.id.kind", "sequence"),
                ("fields.id.start", "1"),
                ("fields.id.end", "5"),
            ],
            &["id"],
            &[DataType::BigInt],
        );
        assert_eq!(
            msg,
            "option 'number-of-rows': 10 rows exceed the 5 values of sequence column 'id'"
        );
    }

    #[test]
    fn zipf_makes_min_the_hottest_value() {
        let rows = generate(
            &[
                ("number-of-rows", "20000"),
                ("fields.k.min", "100"),
                ("fields.k.max", "1099"),
                ("fields.k.distribution", "zipf"),
                ("fields.k.zipf-exponent", "1.2"),
            ],
            &["k"],
            &[DataType::BigInt],
        );
        let mut counts = BTreeMap::new();
        for r in &rows {
            let k = r[0].as_int().unwrap();
            assert!((100..=1099).contains(&k));
            *counts.entry(k).or_insert(0u32) += 1;
        }
        let (hottest, _) = counts.iter().max_by_key(|(_, c)| **c).unwrap();
        assert_eq!(*hottest, 100);
        assert!(counts[&100] > 2 * counts[&101]);
    }

    #[test]
    fn zipf_string_keys() {
        let rows = generate(
            &[
                ("number-of-rows", "5000"),
                ("fields.u.max", "99"),
                ("fields.u.distribution", "zipf"),
            ],
            &["u"],
            &[DataType::String],
        );
        let hot = rows.iter().filter(|r| r[0] == Value::str("0")).count();
        let cold = rows.iter().filter(|r| r[0] == Value::str("50")).count();
        assert!(hot > 10 * cold.max(1), "hot {hot}, cold {cold}");
    }

    #[test]
    fn uniform_ranges_are_inclusive_and_typed() {
        let rows = generate(
            &[
                ("number-of-rows", "2000"),
                ("fields.i.min", "-2"),
                ("fields.i.max", "2"),
                ("fields.d.min", "10"),
                ("fields.d.max", "11"),
                ("fields.s.length", "4"),
            ],
            &["i", "d", "b", "s"],
            &[
                DataType::Int,
                DataType::Double,
                DataType::Boolean,
                DataType::String,
            ],
        );
        let ints: std::collections::BTreeSet<i64> =
            rows.iter().map(|r| r[0].as_int().unwrap()).collect();
        assert_eq!(ints.into_iter().collect::<Vec<_>>(), vec![-2, -1, 0, 1, 2]);
        assert!(rows
            .iter()
            .all(|r| (10.0..=11.0).contains(&r[1].as_f64().unwrap())));
        let trues = rows.iter().filter(|r| r[2] == Value::Bool(true)).count();
        assert!((800..1200).contains(&trues), "{trues}");
        assert!(rows.iter().all(|r| match &r[3] {
            Value::Str(s) => s.len() == 4 && s.bytes().all(|b| b.is_ascii_alphanumeric()),
            _ => false,
        }));
    }

    #[test]
    fn defaults_cover_the_type_range() {
        let rows = generate(
            &[("number-of-rows", "1000")],
            &["i", "s"],
            &[DataType::Int, DataType::String],
        );
        assert!(rows
            .iter()
            .all(|r| i32::try_from(r[0].as_int().unwrap()).is_ok()));
        assert!(rows.iter().any(|r| r[0].as_int().unwrap() < 0));
        assert!(rows
            .iter()
            .all(|r| matches!(&r[1], Value::Str(s) if s.len() == 10)));
    }

    #[test]
    fn null_rate_makes_nulls() {
        let rows = generate(
            &[("number-of-rows", "1000"), ("fields.x.null-rate", "0.3")],
            &["x"],
            &[DataType::BigInt],
        );
        let nulls = rows.iter().filter(|r| r[0].is_null()).count();
        assert!((220..380).contains(&nulls), "{nulls}");
        let all = generate(
            &[("number-of-rows", "10"), ("fields.x.null-rate", "1")],
            &["x"],
            &[DataType::BigInt],
        );
        assert!(all.iter().all(|r| r[0].is_null()));
    }

    #[test]
    fn batches_stop_at_number_of_rows() {
        let mut src = DatagenSource::new(
            &opts(&[("number-of-rows", "5")]),
            &names(&["x"]),
            &[DataType::Int],
        )
        .unwrap();
        let mut out = Vec::new();
        assert_eq!(src.total_rows(), 5);
        assert_eq!(src.next_batch(3, &mut out).unwrap(), 3);
        assert_eq!(src.next_batch(3, &mut out).unwrap(), 2);
        assert_eq!(src.next_batch(3, &mut out).unwrap(), 0);
    }

    #[test]
    fn rows_per_second_is_accepted() {
        let rows = generate(
            &[("number-of-rows", "2"), ("rows-per-second", "1000")],
            &["x"],
            &[DataType::Int],
        );
        assert_eq!(rows.len(), 2);
    }

    #[test]
    fn option_errors_name_the_option_and_the_expectation() {
        let k = &["k"];
        let int = &[DataType::Int];
        type Case<'a> = (Vec<(&'a str, &'a str)>, &'a [DataType], &'a str);
        let cases: Vec<Case> = vec![
            (vec![], int, "missing required option 'number-of-rows' (the lab needs bounded input"),
            (vec![("number-of-rows", "x")], int, "option 'number-of-rows' = 'x': expected a non-negative integer"),
            (vec![("number-of-rows", "1"), ("fields.k.min", "x")], int, "option 'fields.k.min' = 'x': expected an integer"),
            (
                vec![("number-of-rows", "1"), ("fields.k.max", "3000000000")],
                int,
                "option 'fields.k.max' = '3000000000': expected an integer from -2147483648 to 2147483647 (the column is INT)",
            ),
            (
                vec![("number-of-rows", "1"), ("fields.k.min", "5"), ("fields.k.max", "1")],
                int,
                "option 'fields.k.max' = '1': expected a value >= 'fields.k.min' (5)",
            ),
            (vec![("number-of-rows", "1"), ("fields.k.kind", "random!")], int, "option 'fields.k.kind' = 'random!': expected 'random', 'sequence' or 'event-time'"),
            (
                vec![("number-of-rows", "1"), ("fields.k.distribution", "normal")],
                int,
                "option 'fields.k.distribution' = 'normal': expected 'uniform' or 'zipf'",
            ),
            (
                vec![("number-of-rows", "1"), ("fields.k.distribution", "zipf"), ("fields.k.zipf-exponent", "0")],
                int,
                "option 'fields.k.zipf-exponent' = '0': expected a number > 0",
            ),
            (
                vec![("number-of-rows", "1"), ("fields.k.zipf-exponent", "1.5")],
                int,
                "option 'fields.k.zipf-exponent': applies only with distribution 'zipf'",
            ),
            (
                vec![("number-of-rows", "1"), ("fields.k.null-rate", "1.5")],
                int,
                "option 'fields.k.null-rate' = '1.5': expected a probability between 0.0 and 1.0",
            ),
            (vec![("number-of-rows", "1"), ("fields.k.start", "1")], int, "option 'fields.k.start': applies only to kinds 'sequence' and 'event-time'"),
            (vec![("number-of-rows", "1"), ("fields.k.length", "3")], int, "option 'fields.k.length': applies only to STRING columns"),
            (
                vec![("fields.k.kind", "sequence"), ("fields.k.start", "1")],
                int,
                "missing required option 'fields.k.end' (an integer: a sequence needs start and end)",
            ),
            (
                vec![("fields.k.kind", "sequence"), ("fields.k.start", "3"), ("fields.k.end", "1")],
                int,
                "option 'fields.k.end' = '1': expected an integer >= 'fields.k.start' (3)",
            ),
            (
                vec![("fields.k.kind", "sequence"), ("fields.k.start", "1"), ("fields.k.end", "3"), ("fields.k.max", "3")],
                int,
                "option 'fields.k.max': applies only to kind 'random'",
            ),
            (
                vec![("number-of-rows", "1"), ("fields.k.kind", "sequence")],
                &[DataType::Boolean],
                "option 'fields.k.kind': kind 'sequence' applies to INT, BIGINT, DOUBLE and STRING columns, not BOOLEAN",
            ),
            (
                vec![("number-of-rows", "1"), ("fields.k.max", "1")],
                &[DataType::Boolean],
                "option 'fields.k.max': does not apply to BOOLEAN columns",
            ),
            (
                vec![("number-of-rows", "1"), ("fields.k.distribution", "zipf")],
                &[DataType::String],
                "option 'fields.k.distribution': 'zipf' on a STRING column needs 'fields.k.max'",
            ),
            (
                vec![("number-of-rows", "1"), ("fields.k.min", "1")],
                &[DataType::String],
                "missing required option 'fields.k.max'",
            ),
            (
                vec![("number-of-rows", "1"), ("fields.k.max", "9"), ("fields.k.length", "3")],
                &[DataType::String],
                "option 'fields.k.length': cannot be combined with min/max",
            ),
            (
                vec![("number-of-rows", "1"), ("fields.k.length", "-3")],
                &[DataType::String],
                "option 'fields.k.length' = '-3': expected an integer from 0 to 1048576",
            ),
            (
                vec![("number-of-rows", "1"), ("fields.k.min", "nan")],
                &[DataType::Double],
                "option 'fields.k.min' = 'nan': expected a finite number",
            ),
            (vec![("number-of-rows", "1"), ("seed", "s")], int, "option 'seed' = 's': expected an integer"),
        ];
        for (pairs, types, want) in cases {
            let msg = error(&pairs, k, types);
            assert!(
                msg.starts_with(want),
                "for {pairs:?}\n got: {msg}\nwant: {want}"
            );
        }
    }

    #[test]
    fn unknown_options_and_columns() {
        let msg = error(
            &[("number-of-rows", "1"), ("rows", "1")],
            &["k"],
            &[DataType::Int],
        );
        assert!(
            msg.starts_with(
                "unknown option 'rows'; allowed options: 'connector', 'number-of-rows'"
            ),
            "{msg}"
        );
        assert!(msg.contains("'fields.<column>.zipf-exponent'"), "{msg}");
        let msg = error(
            &[("number-of-rows", "1"), ("fields.k.mn", "1")],
            &["k"],
            &[DataType::Int],
        );
        assert!(msg.starts_with("unknown option 'fields.k.mn'"), "{msg}");
        let msg = error(
            &[("number-of-rows", "1"), ("fields.user.min", "1")],
            &["k", "v"],
            &[DataType::Int, DataType::Int],
        );
        assert_eq!(
            msg,
            "option 'fields.user.min' names unknown column 'user'; columns are: 'k', 'v'"
        );
    }

    #[test]
    fn zipf_over_the_whole_bigint_range_works() {
        let rows = generate(
            &[
                ("number-of-rows", "100"),
                ("fields.k.distribution", "zipf"),
                ("fields.k.zipf-exponent", "2"),
            ],
            &["k"],
            &[DataType::BigInt],
        );
        assert!(rows.iter().filter(|r| r[0] == Value::Int(i64::MIN)).count() > 30);
    }
}
