//! Values, rows and SQL types.
//!
//! A [`Value`] is one SQL scalar: `NULL`, `BOOLEAN`, an integer (`INT` and
//! `BIGINT` share the 64-bit representation; the planner keeps the declared
//! type), `DOUBLE`, `STRING` or a timestamp (`TIMESTAMP(3)` and
//! `TIMESTAMP_LTZ(3)` share one representation: milliseconds since the
//! epoch, printed in UTC, the lab's session time zone). An `INTERVAL` is an
//! integer number of milliseconds. Values are compared and hashed by content, so
//! rows can be keys of hash maps and of RocksDB column families alike.
//! `DOUBLE` equality is bitwise after folding `-0.0` into `0.0` and every NaN
//! into one NaN, so that equal keys always hash equally.

pub use smol_str::SmolStr;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

/// A SQL type of the lab's dialect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum DataType {
    Boolean,
    Int,
    BigInt,
    Double,
    String,
    /// `TIMESTAMP(3)`: a date and time of day to the millisecond.
    Timestamp,
    /// `TIMESTAMP_LTZ(3)`: an instant, shown in the session time zone (UTC).
    TimestampLtz,
    /// `INTERVAL DAY TO SECOND(3)`: a duration in milliseconds.
    Interval,
}

impl DataType {
    /// The name Flink prints for the type.
    pub fn sql_name(self) -> &'static str {
        match self {
            DataType::Boolean => "BOOLEAN",
            DataType::Int => "INT",
            DataType::BigInt => "BIGINT",
            DataType::Double => "DOUBLE",
            DataType::String => "STRING",
            DataType::Timestamp => "TIMESTAMP(3)",
            DataType::TimestampLtz => "TIMESTAMP_LTZ(3)",
            DataType::Interval => "INTERVAL DAY TO SECOND(3)",
        }
    }

    /// `TIMESTAMP(3)` or `TIMESTAMP_LTZ(3)`: a type an event-time attribute
    /// may have.
    pub fn is_timestamp(self) -> bool {
        matches!(self, DataType::Timestamp | DataType::TimestampLtz)
    }

    pub fn is_numeric(self) -> bool {
        matches!(self, DataType::Int | DataType::BigInt | DataType::Double)
    }

    pub fn is_integer(self) -> bool {
        matches!(self, DataType::Int | DataType::BigInt)
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.sql_name())
    }
}

/// One SQL scalar value. Every variant is plain data but a string held on
/// the heap ([`extend_copy`] copies values bitwise and counts only those):
/// a variant owning anything else must be counted there too.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Int(i64),
    Double(f64),
    /// A string: up to 23 bytes inline in the value (no allocation to
    /// build, copy or drop it, nothing to dereference to compare it),
    /// longer ones shared by reference count. Rows of short strings
    /// (keys, names, the tenant joins' payloads) are copied and dropped
    /// per record on the join paths; with a shared pointer each copy and
    /// drop touched a counter in another cache line.
    Str(SmolStr),
    /// A timestamp: milliseconds since 1970-01-01 00:00:00 UTC.
    Ts(i64),
}

/// A row: the values of one record, in schema order.
pub type Row = Vec<Value>;

/// Appends a copy of `v` to `out`, each variant written in place. A
/// `Value` built apart and moved in whole is read back with wider loads
/// than it was written with (a store-forwarding stall per value), and a
/// derived clone copies the padding after the tag; on the hot emission
/// paths (result rows) that costs more than the rest of the copy.
#[inline]
pub fn push_copy(out: &mut Vec<Value>, v: &Value) {
    match v {
        Value::Int(i) => out.push(Value::Int(*i)),
        Value::Ts(t) => out.push(Value::Ts(*t)),
        Value::Double(d) => out.push(Value::Double(*d)),
        Value::Bool(b) => out.push(Value::Bool(*b)),
        Value::Null => out.push(Value::Null),
        Value::Str(s) => out.push(Value::Str(s.clone())),
    }
}

/// Appends a copy of each value of `row` to `out`: the values' bytes
/// copied at once, then one more owner counted for each string held on
/// the heap, which is all that cloning them one by one would do (every
/// other value, an inline string too, is plain data). The join operators
/// copy rows per record with it (matched rows, joined and NULL-padded
/// results); a clone per value branches twice per value.
#[inline]
pub fn extend_copy(out: &mut Vec<Value>, row: &[Value]) {
    out.reserve(row.len());
    for v in row {
        if let Value::Str(s) = v {
            if s.is_heap_allocated() {
                std::mem::forget(s.clone());
            }
        }
    }
    // SAFETY: room for `row.len()` more values is reserved and `row`
    // cannot overlap `out`'s spare capacity (one is borrowed shared, the
    // other exclusively). The bitwise copies own what the originals own:
    // nothing but the heap strings, whose extra owners were counted above,
    // so dropping copies and originals frees each exactly once.
    unsafe {
        let len = out.len();
        std::ptr::copy_nonoverlapping(row.as_ptr(), out.as_mut_ptr().add(len), row.len());
        out.set_len(len + row.len());
    }
}

impl Value {
    pub fn str(s: &str) -> Value {
        Value::Str(SmolStr::new(s))
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The milliseconds of a timestamp.
    pub fn as_ts(&self) -> Option<i64> {
        match self {
            Value::Ts(t) => Some(*t),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Double(d) => Some(*d),
            _ => None,
        }
    }

    /// Doubles folded so that equal values have equal bits.
    fn canonical_bits(d: f64) -> u64 {
        if d == 0.0 {
            0
        } else if d.is_nan() {
            f64::NAN.to_bits()
        } else {
            d.to_bits()
        }
    }

    /// SQL ordering for `MIN`/`MAX` and comparisons; `None` when either side
    /// is NULL or the kinds are not comparable.
    pub fn sql_cmp(&self, other: &Value) -> Option<Ordering> {
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => Some(a.cmp(b)),
            (Value::Int(_), Value::Double(_)) | (Value::Double(_), Value::Int(_)) => {
                self.as_f64()?.partial_cmp(&other.as_f64()?)
            }
            (Value::Double(a), Value::Double(b)) => Some(a.total_cmp(b)),
            (Value::Str(a), Value::Str(b)) => Some(a.cmp(b)),
            (Value::Bool(a), Value::Bool(b)) => Some(a.cmp(b)),
            (Value::Ts(a), Value::Ts(b)) => Some(a.cmp(b)),
            _ => None,
        }
    }

    /// A total order over all values (NULL first), for sorting results.
    pub fn total_cmp(&self, other: &Value) -> Ordering {
        fn rank(v: &Value) -> u8 {
            match v {
                Value::Null => 0,
                Value::Bool(_) => 1,
                Value::Int(_) | Value::Double(_) => 2,
                Value::Str(_) => 3,
                Value::Ts(_) => 4,
            }
        }
        match rank(self).cmp(&rank(other)) {
            Ordering::Equal => self.sql_cmp(other).unwrap_or(Ordering::Equal),
            o => o,
        }
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Double(a), Value::Double(b)) => {
                Value::canonical_bits(*a) == Value::canonical_bits(*b)
            }
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::Ts(a), Value::Ts(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Value {}

impl Hash for Value {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self {
            Value::Null => state.write_u8(0),
            Value::Bool(b) => state.write_u8(1 + *b as u8),
            Value::Int(i) => state.write_i64(*i),
            Value::Double(d) => state.write_u64(Value::canonical_bits(*d) ^ 0x9e37_79b9_7f4a_7c15),
            Value::Str(s) => s.hash(state),
            Value::Ts(t) => {
                state.write_u8(7);
                state.write_i64(*t)
            }
        }
    }
}

impl fmt::Display for Value {
    /// The text form used in CSV files and printed results; NULL is empty in
    /// CSV and printed as `NULL` by [`DisplayRow`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => Ok(()),
            Value::Bool(b) => write!(f, "{}", if *b { "TRUE" } else { "FALSE" }),
            Value::Int(i) => write!(f, "{i}"),
            Value::Double(d) => {
                if d.is_finite() && d.fract() == 0.0 && d.abs() < 1e15 {
                    write!(f, "{d:.1}")
                } else {
                    write!(f, "{d}")
                }
            }
            Value::Str(s) => f.write_str(s),
            Value::Ts(t) => f.write_str(&format_timestamp(*t)),
        }
    }
}

/// `yyyy-MM-dd HH:mm:ss.SSS` in UTC, as Flink prints a `TIMESTAMP(3)`.
pub fn format_timestamp(millis: i64) -> String {
    let days = millis.div_euclid(86_400_000);
    let ms_of_day = millis.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let (h, rest) = (ms_of_day / 3_600_000, ms_of_day % 3_600_000);
    let (min, rest) = (rest / 60_000, rest % 60_000);
    let (s, ms) = (rest / 1000, rest % 1000);
    format!("{y:04}-{m:02}-{d:02} {h:02}:{min:02}:{s:02}.{ms:03}")
}

/// Parses `yyyy-MM-dd HH:mm:ss[.f{1,3}]` (or with `T` between date and
/// time, or a date alone) as milliseconds since the epoch in UTC.
pub fn parse_timestamp(text: &str) -> Option<i64> {
    let text = text.trim();
    let (date, time) = match text.find([' ', 'T']) {
        Some(i) => (&text[..i], Some(&text[i + 1..])),
        None => (text, None),
    };
    let mut dp = date.splitn(3, '-');
    let y: i64 = digits(dp.next()?, 4, 4)?;
    let m: i64 = digits(dp.next()?, 1, 2)?;
    let d: i64 = digits(dp.next()?, 1, 2)?;
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    let mut ms_of_day = 0;
    if let Some(time) = time {
        let (hms, frac) = match time.split_once('.') {
            Some((a, b)) => (a, Some(b)),
            None => (time, None),
        };
        let mut tp = hms.splitn(3, ':');
        let h: i64 = digits(tp.next()?, 1, 2)?;
        let mi: i64 = digits(tp.next()?, 1, 2)?;
        let s: i64 = match tp.next() {
            Some(s) => digits(s, 1, 2)?,
            None => 0,
        };
        if h > 23 || mi > 59 || s > 59 {
            return None;
        }
        let ms = match frac {
            Some(f) => {
                let v: i64 = digits(f, 1, 3)?;
                v * 10i64.pow(3 - f.len() as u32)
            }
            None => 0,
        };
        ms_of_day = ((h * 60 + mi) * 60 + s) * 1000 + ms;
    }
    Some(days_from_civil(y, m, d) * 86_400_000 + ms_of_day)
}

fn digits(s: &str, min: usize, max: usize) -> Option<i64> {
    if s.len() < min || s.len() > max || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
/// algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

pub(crate) fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Prints a row as `a, b, NULL` for summaries and test failures.
pub struct DisplayRow<'a>(pub &'a [Value]);

impl fmt::Display for DisplayRow<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, v) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            if v.is_null() {
                f.write_str("NULL")?;
            } else {
                write!(f, "{v}")?;
            }
        }
        Ok(())
    }
}

/// Orders rows value by value with [`Value::total_cmp`].
pub fn cmp_rows(a: &[Value], b: &[Value]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        match x.total_cmp(y) {
            Ordering::Equal => continue,
            o => return o,
        }
    }
    a.len().cmp(&b.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitwise_copies_own_their_heap_strings() {
        let long = "a string longer than twenty-three bytes";
        let row = vec![
            Value::Int(1),
            Value::str("short"),
            Value::str(long),
            Value::Null,
            Value::Str(SmolStr::new_static("static")),
        ];
        assert!(matches!(&row[2], Value::Str(s) if s.is_heap_allocated()));
        let mut copies = Vec::new();
        for _ in 0..3 {
            let mut out = vec![Value::Bool(true)];
            extend_copy(&mut out, &row);
            copies.push(out);
        }
        // The original goes first, then each copy: each frees only its own.
        drop(row);
        for c in &copies {
            assert_eq!(c[3], Value::str(long));
            assert_eq!(c[2], Value::str("short"));
            assert_eq!(c[5], Value::str("static"));
        }
        drop(copies);
    }

    #[test]
    fn doubles_fold_signed_zero_and_nan() {
        assert_eq!(Value::Double(0.0), Value::Double(-0.0));
        assert_eq!(Value::Double(f64::NAN), Value::Double(-f64::NAN));
        assert_ne!(Value::Int(1), Value::Double(1.0));
    }

    #[test]
    fn timestamps_print_and_parse_in_utc() {
        assert_eq!(format_timestamp(0), "1970-01-01 00:00:00.000");
        assert_eq!(
            format_timestamp(1_602_288_005_123),
            "2020-10-10 00:00:05.123"
        );
        assert_eq!(format_timestamp(-1), "1969-12-31 23:59:59.999");
        assert_eq!(
            parse_timestamp("2020-10-10 00:00:05.123"),
            Some(1_602_288_005_123)
        );
        assert_eq!(
            parse_timestamp("2020-10-10T00:00:05.1"),
            Some(1_602_288_005_100)
        );
        assert_eq!(
            parse_timestamp("2020-10-10 00:00:05"),
            Some(1_602_288_005_000)
        );
        assert_eq!(parse_timestamp("2020-02-30 00:00:00"), None);
        assert_eq!(parse_timestamp("2020-10-10 24:00:00"), None);
        assert_eq!(parse_timestamp("12345"), None);
        for t in [-86_400_001, 0, 951_782_400_000, 4_102_444_799_999] {
            assert_eq!(parse_timestamp(&format_timestamp(t)), Some(t));
        }
    }

    #[test]
    fn display_matches_csv_conventions() {
        assert_eq!(Value::Null.to_string(), "");
        assert_eq!(Value::Double(2.0).to_string(), "2.0");
        assert_eq!(
            DisplayRow(&[Value::Int(1), Value::Null]).to_string(),
            "1, NULL"
        );
    }
}
