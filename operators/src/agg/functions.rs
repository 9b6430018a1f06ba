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
//!
//! Each function works on the slots of one call, from index `s` of the
//! accumulator row, whatever holds the row ([`super::acc::Acc`]).

use super::acc::Acc;
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

/// Slot `s` += `sign` * `v` (integers wrap, as Flink's `BIGINT` does; an
/// integer meeting a double becomes a double; a NULL slot starts from
/// `v`). Anything but numbers leaves the slot as it is.
#[inline]
fn add<A: Acc + ?Sized>(acc: &mut A, s: usize, v: &Value, sign: i64) {
    if let (Some(x), Value::Int(y)) = (acc.int(s), v) {
        acc.set_int(s, x.wrapping_add(y.wrapping_mul(sign)));
        return;
    }
    let sum = match (&*acc.get(s), v) {
        (Value::Null, Value::Int(y)) => Value::Int(y.wrapping_mul(sign)),
        (Value::Null, Value::Double(y)) => Value::Double(*y * sign as f64),
        (Value::Double(x), Value::Double(y)) => Value::Double(x + y * sign as f64),
        (Value::Int(x), Value::Double(y)) => Value::Double(*x as f64 + y * sign as f64),
        (Value::Double(x), Value::Int(y)) => Value::Double(x + y.wrapping_mul(sign) as f64),
        _ => return,
    };
    acc.set(s, sum);
}

/// Slot `s` as an integer, 0 if it is not one.
#[inline]
fn int_or_zero<A: Acc + ?Sized>(acc: &A, s: usize) -> i64 {
    acc.int(s).unwrap_or(0)
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
/// slots from `s` on of a call other than MIN/MAX.
#[inline]
pub fn apply<A: Acc + ?Sized>(kind: AggKind, acc: &mut A, s: usize, v: &Value, sign: i64) {
    match kind {
        AggKind::CountStar | AggKind::Count => count(acc, s, sign),
        AggKind::Sum | AggKind::Avg => sum(acc, s, v, sign, true),
        AggKind::Min | AggKind::Max => unreachable!("MIN/MAX go through apply_extreme"),
    }
}

/// `COUNT`, and the count slot of the others: integer slot `s` += `n` (+1
/// accumulate, -1 retract); a slot that is not an integer stays.
#[inline]
pub fn count<A: Acc + ?Sized>(acc: &mut A, s: usize, n: i64) {
    if let Some(c) = acc.int(s) {
        acc.set_int(s, c + n);
    }
}

/// `SUM`/`AVG` of a non-NULL value. With `reset_empty`, a sum whose count
/// returns to 0 is reset to NULL, so floating-point residue does not
/// survive an empty group; a partial accumulator (a delta a local
/// aggregate ships) keeps it: its count may net to 0 while its sum does not.
#[inline]
pub fn sum<A: Acc + ?Sized>(acc: &mut A, s: usize, v: &Value, sign: i64, reset_empty: bool) {
    add(acc, s, v, sign);
    count(acc, s + 1, sign);
    if reset_empty && acc.int(s + 1) == Some(0) {
        acc.set(s, Value::Null);
    }
}

/// Applies one non-NULL value to the slots from `s` on of a MIN/MAX. On
/// retracting the current extreme with values left, returns
/// [`Retracted::Rescan`] when `value_left` says no copy of it remains.
#[inline]
pub fn apply_extreme<A: Acc + ?Sized>(
    kind: AggKind,
    acc: &mut A,
    s: usize,
    v: &Value,
    sign: i64,
    value_left: bool,
) -> Retracted {
    let count = int_or_zero(acc, s + 1) + sign;
    acc.set_int(s + 1, count);
    if sign > 0 {
        if better(kind, v, &acc.get(s)) {
            acc.set(s, v.clone());
        }
        return Retracted::Done;
    }
    if count == 0 {
        acc.set(s, Value::Null);
        Retracted::Done
    } else if *acc.get(s) == *v && !value_left {
        Retracted::Rescan
    } else {
        Retracted::Done
    }
}

/// Merges a call's partial slots (from a local aggregate) into the slots
/// from `s` on.
#[inline]
pub fn merge<A: Acc + ?Sized>(kind: AggKind, acc: &mut A, s: usize, partial: &[Value]) {
    let partial_count = partial[1].as_int().unwrap_or(0);
    match kind {
        AggKind::CountStar | AggKind::Count => {
            let n = int_or_zero(acc, s) + partial[0].as_int().unwrap_or(0);
            acc.set_int(s, n);
        }
        AggKind::Sum | AggKind::Avg => {
            if !partial[0].is_null() {
                add(acc, s, &partial[0], 1);
            }
            let count = int_or_zero(acc, s + 1) + partial_count;
            acc.set_int(s + 1, count);
            if count == 0 {
                acc.set(s, Value::Null);
            }
        }
        AggKind::Min | AggKind::Max => {
            // Only over insert-only input (see `core::not_mergeable`).
            if !partial[0].is_null() && better(kind, &partial[0], &acc.get(s)) {
                acc.set(s, partial[0].clone());
            }
            let count = int_or_zero(acc, s + 1) + partial_count;
            acc.set_int(s + 1, count);
        }
    }
}

/// The call's result from its slots (from `s` on). Always inlined: a
/// result row calls it once per call, and a call per result (with a jump
/// on the kind inside) made the heap's packed path slower than its own
/// typed loop had been.
#[inline(always)]
pub fn result<A: Acc + ?Sized>(spec: &AggSpec, acc: &A, s: usize) -> Value {
    match spec.kind {
        AggKind::CountStar | AggKind::Count => acc.value(s),
        AggKind::Sum | AggKind::Min | AggKind::Max if acc.int(s + 1) == Some(0) => Value::Null,
        AggKind::Sum | AggKind::Min | AggKind::Max => acc.value(s),
        AggKind::Avg => avg(spec, acc, s),
    }
}

/// Appends the call's result to `out` ([`result`]), written in place.
#[inline]
pub fn push_result<A: Acc + ?Sized>(spec: &AggSpec, acc: &A, s: usize, out: &mut Vec<Value>) {
    match spec.kind {
        AggKind::CountStar | AggKind::Count => acc.push_to(s, out),
        AggKind::Sum | AggKind::Min | AggKind::Max if acc.int(s + 1) == Some(0) => {
            out.push(Value::Null)
        }
        AggKind::Sum | AggKind::Min | AggKind::Max => acc.push_to(s, out),
        AggKind::Avg => out.push(avg(spec, acc, s)),
    }
}

/// Whether the call's results on `a` and `b` differ. A count's result is
/// its slot, compared as stored.
#[inline]
pub fn results_differ<A: Acc + ?Sized>(spec: &AggSpec, a: &A, b: &A, s: usize) -> bool {
    match spec.kind {
        AggKind::CountStar | AggKind::Count => !a.same(b, s),
        _ => result(spec, a, s) != result(spec, b, s),
    }
}

fn avg<A: Acc + ?Sized>(spec: &AggSpec, acc: &A, s: usize) -> Value {
    match (&*acc.get(s), &*acc.get(s + 1)) {
        (_, Value::Int(0)) | (Value::Null, _) => Value::Null,
        (Value::Int(sum), Value::Int(c)) if spec.result_type.is_integer() => Value::Int(sum / c),
        (sum, Value::Int(c)) => Value::Double(sum.as_f64().unwrap_or(0.0) / *c as f64),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sum_returns_to_null_when_all_retracted() {
        let mut s = init(AggKind::Sum);
        apply(AggKind::Sum, &mut s[..], 0, &Value::Int(5), 1);
        apply(AggKind::Sum, &mut s[..], 0, &Value::Int(3), 1);
        apply(AggKind::Sum, &mut s[..], 0, &Value::Int(5), -1);
        assert_eq!(s[0], Value::Int(3));
        apply(AggKind::Sum, &mut s[..], 0, &Value::Int(3), -1);
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
        apply(AggKind::Avg, &mut s[..], 0, &Value::Int(1), 1);
        apply(AggKind::Avg, &mut s[..], 0, &Value::Int(2), 1);
        assert_eq!(result(&spec, &s[..], 0), Value::Int(1));
    }
}
