//! The accumulator of `COUNT(*)`, `COUNT(x)`, `SUM(x)`, `AVG(x)`, and
//! `MIN(x)`/`MAX(x)` over an insert-only input, on packed machine words: the heap backend's fast path for the aggregates
//! most queries run (Flink generates typed code for the same reason).
//!
//! Semantics: exactly those of [`super::core::AggCore::accumulate`] and
//! [`super::functions::result`] for these calls, on an accumulator row of
//! the same layout (`[row count, 2 slots per call]`, see
//! [`super::functions`]) held as a [`PackedRow`]: integers and doubles
//! add as `functions::apply` adds them (integers wrap, an integer meeting a
//! double becomes a double), a `SUM`/`AVG` whose count returns to 0 is
//! reset to NULL, NULL arguments are skipped, and a `FILTER` passes on
//! `TRUE` only. Anything else (an argument that is neither a number nor
//! NULL, a slot of an unexpected kind) makes [`PackedAccumulator::accumulate`]
//! return `false`, and the operator takes the general path for that record
//! on the unchanged state. [`PackedAccumulator::merge`] does the same for
//! the partial accumulators a global aggregate merges (`functions::merge`).
//! The equivalence tests run both paths (heap and RocksDB) against the
//! oracle, and `tests/packed_acc.rs` runs them side by side on random input.

use super::functions::{AggKind, AggSpec, SLOTS};
use crate::state::heap::{PackedRow, PackedTemplate};
use crate::value::{Row, Value};
use std::cmp::Ordering;

#[derive(Clone, Copy)]
enum Kind {
    CountStar,
    Count,
    Sum,
    /// `AVG`; `integer` when its result type is an integer type.
    Avg {
        integer: bool,
    },
    /// `MIN` (`Less`) or `MAX` (`Greater`) over an insert-only input: the
    /// extreme and a count, no value map.
    Extreme(Ordering),
}

#[derive(Clone, Copy)]
struct Call {
    kind: Kind,
    arg: usize,
    filter: Option<usize>,
    /// Index of the call's first slot in the accumulator row.
    slot: usize,
}

pub struct PackedAccumulator {
    calls: Vec<Call>,
    /// The fresh accumulator of a new group.
    init: PackedTemplate,
}

impl PackedAccumulator {
    /// The packed form of `aggs` over keys of `key_len` values, whose fresh
    /// accumulator row is `init`; `None` unless every call has one (no
    /// `DISTINCT`; `MIN`/`MAX` only over an insert-only input, which keeps
    /// no value map) and key and accumulator pack together.
    pub fn new(
        aggs: &[AggSpec],
        input_insert_only: bool,
        key_len: usize,
        init: &[Value],
    ) -> Option<PackedAccumulator> {
        let init = PackedTemplate::new(key_len, init)?;
        let calls = aggs
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let kind = match a.kind {
                    _ if a.distinct => return None,
                    AggKind::CountStar => Kind::CountStar,
                    AggKind::Count => Kind::Count,
                    AggKind::Sum => Kind::Sum,
                    AggKind::Avg => Kind::Avg {
                        integer: a.result_type.is_integer(),
                    },
                    AggKind::Min if input_insert_only => Kind::Extreme(Ordering::Less),
                    AggKind::Max if input_insert_only => Kind::Extreme(Ordering::Greater),
                    AggKind::Min | AggKind::Max => return None,
                };
                Some(Call {
                    kind,
                    arg: a.arg.unwrap_or(0),
                    filter: a.filter,
                    slot: 1 + SLOTS * i,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(PackedAccumulator { calls, init })
    }

    /// The fresh accumulator of a new group.
    pub fn init(&self) -> &PackedTemplate {
        &self.init
    }

    /// Applies `row` (`sign` +1 accumulate, -1 retract) to `acc`; `false`
    /// when the row needs the general path (`acc` is then half-updated and
    /// must be dropped).
    #[inline]
    pub fn accumulate(&self, acc: &mut PackedRow, row: &[Value], sign: i64) -> bool {
        let Some(count) = acc.int(0) else {
            return false;
        };
        acc.set_int(0, count + sign);
        for c in &self.calls {
            if let Some(f) = c.filter {
                if !matches!(row[f], Value::Bool(true)) {
                    continue;
                }
            }
            let s = c.slot;
            match c.kind {
                Kind::CountStar => match acc.int(s) {
                    Some(n) => acc.set_int(s, n + sign),
                    None => return false,
                },
                Kind::Count => {
                    if row[c.arg].is_null() {
                        continue;
                    }
                    match acc.int(s) {
                        Some(n) => acc.set_int(s, n + sign),
                        None => return false,
                    }
                }
                Kind::Sum | Kind::Avg { .. } => {
                    let v = &row[c.arg];
                    if v.is_null() {
                        continue;
                    }
                    if !add(acc, s, v, sign) {
                        return false;
                    }
                    let Some(n) = acc.int(s + 1) else {
                        return false;
                    };
                    acc.set_int(s + 1, n + sign);
                    if n + sign == 0 {
                        acc.set_null(s);
                    }
                }
                Kind::Extreme(want) => {
                    let v = &row[c.arg];
                    if v.is_null() {
                        continue;
                    }
                    // A retraction (the input was said to have none) and
                    // what is not a number go the general way.
                    let Some(n) = acc.int(s + 1).filter(|_| sign > 0) else {
                        return false;
                    };
                    if !keep_extreme(acc, s, v, want) {
                        return false;
                    }
                    acc.set_int(s + 1, n + 1);
                }
            }
        }
        true
    }

    /// Merges a partial accumulator (as a local aggregate ships it, same
    /// layout) into `acc`, as [`super::core::AggCore::merge`] does; `false`
    /// when it needs the general path.
    #[inline]
    pub fn merge(&self, acc: &mut PackedRow, partial: &[Value]) -> bool {
        let (Some(count), Value::Int(more)) = (acc.int(0), &partial[0]) else {
            return false;
        };
        acc.set_int(0, count + more);
        for c in &self.calls {
            let s = c.slot;
            let p = &partial[s..s + SLOTS];
            match c.kind {
                Kind::CountStar | Kind::Count => match (acc.int(s), &p[0]) {
                    (Some(n), Value::Int(m)) => acc.set_int(s, n + m),
                    _ => return false,
                },
                Kind::Sum | Kind::Avg { .. } => {
                    if !p[0].is_null() && !add(acc, s, &p[0], 1) {
                        return false;
                    }
                    let (Some(n), Value::Int(m)) = (acc.int(s + 1), &p[1]) else {
                        return false;
                    };
                    acc.set_int(s + 1, n + m);
                    if n + m == 0 {
                        acc.set_null(s);
                    }
                }
                Kind::Extreme(want) => {
                    if !p[0].is_null() && !keep_extreme(acc, s, &p[0], want) {
                        return false;
                    }
                    let (Some(n), Value::Int(m)) = (acc.int(s + 1), &p[1]) else {
                        return false;
                    };
                    acc.set_int(s + 1, n + m);
                }
            }
        }
        true
    }

    /// The row count of `acc` (its first value).
    #[inline]
    pub fn row_count(acc: &PackedRow) -> i64 {
        acc.int(0).unwrap_or(0)
    }

    /// Whether any call's result differs between `a` and `b` (as `Value`s
    /// compare).
    #[inline]
    pub fn results_differ(&self, a: &PackedRow, b: &PackedRow) -> bool {
        self.calls.iter().any(|c| match c.kind {
            // A count is an integer in its slot: equal exactly when packed
            // the same.
            Kind::CountStar | Kind::Count => !a.same_packed(b, c.slot),
            _ => result(c, a) != result(c, b),
        })
    }

    /// The result row of `acc`: the group key, then the calls' results, as
    /// [`super::core::AggCore::results_into`] reads them.
    #[inline]
    pub fn result_row(&self, key: &[Value], acc: &PackedRow) -> Row {
        let mut r = Vec::with_capacity(key.len() + self.calls.len());
        r.extend_from_slice(key);
        r.extend(self.calls.iter().map(|c| result(c, acc)));
        r
    }
}

/// Call `c`'s result on `acc` (`functions::result`).
#[inline]
fn result(c: &Call, acc: &PackedRow) -> Value {
    let s = c.slot;
    match c.kind {
        Kind::CountStar | Kind::Count => acc.value(s),
        Kind::Sum | Kind::Extreme(_) if acc.int(s + 1) == Some(0) => Value::Null,
        Kind::Sum | Kind::Extreme(_) => acc.value(s),
        Kind::Avg { integer } => match (acc.int(s + 1), acc.int(s), acc.double(s)) {
            (Some(0), _, _) => Value::Null,
            _ if acc.is_null(s) => Value::Null,
            (Some(n), Some(sum), _) if integer => Value::Int(sum / n),
            (Some(n), Some(sum), _) => Value::Double(sum as f64 / n as f64),
            (Some(n), None, Some(sum)) => Value::Double(sum / n as f64),
            _ => Value::Null,
        },
    }
}

/// Slot `s` += `sign` * `v`, as `functions::add` does; `false` if `v` or
/// the slot is not a number (or NULL, for the slot).
#[inline]
fn add(acc: &mut PackedRow, s: usize, v: &Value, sign: i64) -> bool {
    match (acc.is_null(s), acc.int(s), acc.double(s), v) {
        (true, _, _, Value::Int(y)) => acc.set_int(s, y.wrapping_mul(sign)),
        (true, _, _, Value::Double(y)) => acc.set_double(s, y * sign as f64),
        (_, Some(x), _, Value::Int(y)) => acc.set_int(s, x.wrapping_add(y.wrapping_mul(sign))),
        (_, _, Some(x), Value::Double(y)) => acc.set_double(s, x + y * sign as f64),
        (_, Some(x), _, Value::Double(y)) => acc.set_double(s, x as f64 + y * sign as f64),
        (_, _, Some(x), Value::Int(y)) => acc.set_double(s, x + y.wrapping_mul(sign) as f64),
        _ => return false,
    }
    true
}

/// Slot `s` becomes `v` if `v` beats it (`want`: `Less` for MIN, `Greater`
/// for MAX), as `functions::better` and `Value::sql_cmp` decide: a NULL
/// slot always loses, integers and doubles compare as numbers (two doubles
/// by their total order); `false` if `v` or the slot is not a number.
#[inline]
fn keep_extreme(acc: &mut PackedRow, s: usize, v: &Value, want: Ordering) -> bool {
    let beats = match (acc.is_null(s), acc.int(s), acc.double(s), v) {
        (true, _, _, Value::Int(_) | Value::Double(_)) => true,
        (_, Some(x), _, Value::Int(y)) => y.cmp(&x) == want,
        (_, _, Some(x), Value::Double(y)) => y.total_cmp(&x) == want,
        (_, Some(x), _, Value::Double(y)) => y.partial_cmp(&(x as f64)) == Some(want),
        (_, _, Some(x), Value::Int(y)) => (*y as f64).partial_cmp(&x) == Some(want),
        _ => return false,
    };
    if beats {
        match v {
            Value::Int(y) => acc.set_int(s, *y),
            Value::Double(y) => acc.set_double(s, *y),
            _ => return false,
        }
    }
    true
}
