//! Values, rows and SQL types.
//!
//! A [`Value`] is one SQL scalar: `NULL`, `BOOLEAN`, an integer (`INT` and
//! `BIGINT` share the 64-bit representation; the planner keeps the declared
//! type), `DOUBLE` or `STRING`. Values are compared and hashed by content, so
//! rows can be keys of hash maps and of RocksDB column families alike.
//! `DOUBLE` equality is bitwise after folding `-0.0` into `0.0` and every NaN
//! into one NaN, so that equal keys always hash equally.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A SQL type of the lab's dialect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum DataType {
    Boolean,
    Int,
    BigInt,
    Double,
    String,
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
        }
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

/// One SQL scalar value.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Int(i64),
    Double(f64),
    Str(Arc<str>),
}

/// A row: the values of one record, in schema order.
pub type Row = Vec<Value>;

impl Value {
    pub fn str(s: &str) -> Value {
        Value::Str(Arc::from(s))
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
        }
    }
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
    fn doubles_fold_signed_zero_and_nan() {
        assert_eq!(Value::Double(0.0), Value::Double(-0.0));
        assert_eq!(Value::Double(f64::NAN), Value::Double(-f64::NAN));
        assert_ne!(Value::Int(1), Value::Double(1.0));
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
