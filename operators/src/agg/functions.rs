//! Aggregate functions and their accumulators, all retractable.
//!
//! Each call owns two slots of the accumulator row:
//!
//! | function | slot 0 | slot 1 |
//! |---|---|---|
//! | `COUNT(*)`, `COUNT(x)` | count | unused (NULL) |
//! | `SUM(x)`, `AVG(x)` | sum of non-NULL values | their count |
//! | `MIN(x)`, `MAX(x)` | current extreme | count of non-NULL values |
//!
//! `SUM`/`AVG` keep the count so the result returns to NULL when every value
//! is retracted. `MIN`/`MAX` over an input that can retract also keep a map
//! value → count in state (as Flink's `MinWithRetractAggFunction` does): when
//! the current extreme is retracted for the last time, the map is scanned
//! for the new one. Over an insert-only input they keep only the extreme.
//! NULL arguments are ignored by every function but `COUNT(*)`.

use crate::value::{DataType, Value};
use std::cmp::Ordering;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum AggKind {
    CountStar,
    Count,
    Sum,
    Min,
    Max,
    Avg,
}

impl AggKind {
    pub fn name(self) -> &'static str {
        match self {
            AggKind::CountStar | AggKind::Count => "COUNT",
            AggKind::Sum => "SUM",
            AggKind::Min => "MIN",
            AggKind::Max => "MAX",
            AggKind::Avg => "AVG",
        }
    }
}

/// One aggregate call of a physical aggregate; columns refer to its input.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AggSpec {
    pub kind: AggKind,
    pub arg: Option<usize>,
    pub distinct: bool,
    pub filter: Option<usize>,
    /// The declared result type (decides integer vs floating `AVG`).
    pub result_type: DataType,
}

pub const SLOTS: usize = 2;

/// The initial accumulator slots of a call.
pub fn init(kind: AggKind) -> [Value; SLOTS] {
    match kind {
        AggKind::CountStar | AggKind::Count => [Value::Int(0), Value::Null],
        _ => [Value::Null, Value::Int(0)],
    }
}

/// `a + sign * b` in place (integers wrap, as Flink's `BIGINT` does).
#[inline]
fn add(a: &mut Value, b: &Value, sign: i64) {
    if let (Value::Int(x), Value::Int(y)) = (&mut *a, b) {
        *x = x.wrapping_add(y.wrapping_mul(sign));
        return;
    }
    *a = add_mixed(a, b, sign);
}

fn add_mixed(a: &Value, b: &Value, sign: i64) -> Value {
    match (a, b) {
        (Value::Null, Value::Int(y)) => Value::Int(y.wrapping_mul(sign)),
        (Value::Null, Value::Double(y)) => Value::Double(*y * sign as f64),
        (Value::Int(x), Value::Int(y)) => Value::Int(x.wrapping_add(y.wrapping_mul(sign))),
        (Value::Double(x), Value::Double(y)) => Value::Double(x + y * sign as f64),
        (Value::Int(x), Value::Double(y)) => Value::Double(*x as f64 + y * sign as f64),
        (Value::Double(x), Value::Int(y)) => Value::Double(x + (*y * sign) as f64),
        (a, _) => a.clone(),
    }
}

/// `true` when `candidate` beats `current` for MIN (`Less`) or MAX (`Greater`).
pub fn better(kind: AggKind, candidate: &Value, current: &Value) -> bool {
    if current.is_null() {
        return true;
    }
    let want = if kind == AggKind::Min {
        Ordering::Less
    } else {
        Ordering::Greater
    };
    candidate.sql_cmp(current) == Some(want)
}

/// What a MIN/MAX retraction asks of its caller.
pub enum Retracted {
    Done,
    /// The extreme left; the caller rescans the value map.
    Rescan,
}

/// Applies one non-NULL value (`sign` +1 accumulate, -1 retract) to the
/// slots of a call other than MIN/MAX. A `SUM`/`AVG` whose count returns to
/// 0 resets its sum to NULL, so floating-point residue does not survive an
/// empty group.
#[inline]
pub fn apply(kind: AggKind, slots: &mut [Value], v: &Value, sign: i64) {
    apply_delta(kind, slots, v, sign);
    if matches!(kind, AggKind::Sum | AggKind::Avg) && matches!(slots[1], Value::Int(0)) {
        slots[0] = Value::Null;
    }
}

/// Like [`apply`], for a partial accumulator (a delta a local aggregate
/// ships): its count may net to 0 while its sum does not.
#[inline]
pub fn apply_delta(kind: AggKind, slots: &mut [Value], v: &Value, sign: i64) {
    match kind {
        AggKind::CountStar | AggKind::Count => {
            if let Value::Int(c) = &mut slots[0] {
                *c += sign;
            }
        }
        AggKind::Sum | AggKind::Avg => {
            add(&mut slots[0], v, sign);
            if let Value::Int(c) = &mut slots[1] {
                *c += sign;
            }
        }
        AggKind::Min | AggKind::Max => unreachable!("MIN/MAX go through apply_extreme"),
    }
}

/// Applies a value to MIN/MAX slots. On retraction of the current extreme
/// with values left, returns [`Retracted::Rescan`] when `value_left` says
/// no copy of it remains.
pub fn apply_extreme(
    kind: AggKind,
    slots: &mut [Value],
    v: &Value,
    sign: i64,
    value_left: bool,
) -> Retracted {
    let count = slots[1].as_int().unwrap_or(0) + sign;
    slots[1] = Value::Int(count);
    if sign > 0 {
        if better(kind, v, &slots[0]) {
            slots[0] = v.clone();
        }
        return Retracted::Done;
    }
    if count == 0 {
        slots[0] = Value::Null;
        Retracted::Done
    } else if &slots[0] == v && !value_left {
        Retracted::Rescan
    } else {
        Retracted::Done
    }
}

/// Merges partial slots (from a local aggregate) into `slots`.
pub fn merge(kind: AggKind, slots: &mut [Value], partial: &[Value]) {
    match kind {
        AggKind::CountStar | AggKind::Count => {
            slots[0] =
                Value::Int(slots[0].as_int().unwrap_or(0) + partial[0].as_int().unwrap_or(0));
        }
        AggKind::Sum | AggKind::Avg => {
            if !partial[0].is_null() {
                add(&mut slots[0], &partial[0], 1);
            }
            let count = slots[1].as_int().unwrap_or(0) + partial[1].as_int().unwrap_or(0);
            slots[1] = Value::Int(count);
            if count == 0 {
                slots[0] = Value::Null;
            }
        }
        AggKind::Min | AggKind::Max => {
            // Only over insert-only input (see `core::not_mergeable`).
            if !partial[0].is_null() && better(kind, &partial[0], &slots[0]) {
                slots[0] = partial[0].clone();
            }
            slots[1] =
                Value::Int(slots[1].as_int().unwrap_or(0) + partial[1].as_int().unwrap_or(0));
        }
    }
}

/// The call's result from its slots.
#[inline]
pub fn result(spec: &AggSpec, slots: &[Value]) -> Value {
    match spec.kind {
        AggKind::CountStar | AggKind::Count => slots[0].clone(),
        AggKind::Sum | AggKind::Min | AggKind::Max if matches!(slots[1], Value::Int(0)) => {
            Value::Null
        }
        AggKind::Sum | AggKind::Min | AggKind::Max => slots[0].clone(),
        AggKind::Avg => match (&slots[0], &slots[1]) {
            (_, Value::Int(0)) | (Value::Null, _) => Value::Null,
            (Value::Int(s), Value::Int(c)) if spec.result_type.is_integer() => Value::Int(s / c),
            (s, Value::Int(c)) => Value::Double(s.as_f64().unwrap_or(0.0) / *c as f64),
            _ => Value::Null,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sum_returns_to_null_when_all_retracted() {
        let mut s = init(AggKind::Sum);
        apply(AggKind::Sum, &mut s, &Value::Int(5), 1);
        apply(AggKind::Sum, &mut s, &Value::Int(3), 1);
        apply(AggKind::Sum, &mut s, &Value::Int(5), -1);
        assert_eq!(s[0], Value::Int(3));
        apply(AggKind::Sum, &mut s, &Value::Int(3), -1);
        assert_eq!(s[0], Value::Null);
    }

    #[test]
    fn avg_of_integers_truncates() {
        let spec = AggSpec {
            kind: AggKind::Avg,
            arg: Some(0),
            distinct: false,
            filter: None,
            result_type: DataType::Int,
        };
        let mut s = init(AggKind::Avg);
        apply(AggKind::Avg, &mut s, &Value::Int(1), 1);
        apply(AggKind::Avg, &mut s, &Value::Int(2), 1);
        assert_eq!(result(&spec, &s), Value::Int(1));
    }
}
