//! The accumulator logic every aggregate operator shares: how one input
//! row changes a group's accumulator row, how two accumulators merge, and
//! how a result row is read off an accumulator.
//!
//! Accumulator row: `[row count, slots of call 0, slots of call 1, ...]`,
//! two slots per call (see [`super::functions`]), held wherever the
//! operator's store keeps it ([`super::acc::Acc`]). The row count is the
//! number of input rows in the group (accumulated minus retracted); when it
//! returns to 0 the group is empty and its result is retracted.
//!
//! State beside the accumulator, per group key: for each distinct column a
//! map `distinct_<col>` (value → one count per distinct call on that
//! column: every `FILTER` variant of a distinct call on one column shares one
//! map, as Flink shares distinct state); for MIN/MAX over an input that can
//! retract, a map `minmax_<i>` (value → count).

use super::acc::Acc;
use super::functions::{self, AggKind, AggSpec, Retracted, SLOTS};
use crate::checkpoint::OperatorImage;
use crate::operator::{OpError, OpResult};
use crate::state::{MapState, StateBackend, StateReport};
use crate::value::{Row, Value};

struct DistinctGroup {
    column: usize,
    /// The calls (indices into `aggs`) that count distinct values of `column`.
    calls: Vec<usize>,
    state: MapState,
}

/// A call as [`AggCore::accumulate`] runs it, decided once from its spec
/// (the arithmetic is [`super::functions`]').
#[derive(Clone, Copy)]
struct Call {
    kind: AggKind,
    step: Step,
    /// The `FILTER` flag column.
    filter: Option<usize>,
}

#[derive(Clone, Copy)]
enum Step {
    /// Nothing: a distinct call (counted through its map, before the
    /// others), or one without an argument (every value NULL).
    Skip,
    CountStar,
    /// `COUNT(x)`: non-NULL values of column `x`.
    Count(usize),
    /// `SUM(x)`, `AVG(x)`.
    Sum(usize),
    /// `MIN(x)`, `MAX(x)`.
    Extreme(usize),
}

pub struct AggCore {
    aggs: Vec<AggSpec>,
    /// Per call, what accumulating a row does.
    calls: Vec<Call>,
    distinct: Vec<DistinctGroup>,
    /// Per call: the value map of a retractable MIN/MAX.
    minmax: Vec<Option<MapState>>,
    /// Accumulators are deltas (a local aggregate's partials).
    partial: bool,
    /// A fresh accumulator row, cloned for each new group.
    init: Row,
}

/// Why a set of calls cannot be computed in two phases, if it cannot.
pub fn not_mergeable(aggs: &[AggSpec], input_insert_only: bool) -> Option<String> {
    for a in aggs {
        let extreme = matches!(a.kind, AggKind::Min | AggKind::Max);
        if a.distinct && !extreme {
            return Some(format!(
                "{}(DISTINCT ...) keeps a distinct map that cannot merge",
                a.kind.name()
            ));
        }
        if extreme && !input_insert_only {
            return Some(format!(
                "{} over an updating input keeps a value map that cannot merge",
                a.kind.name()
            ));
        }
    }
    None
}

impl AggCore {
    /// `scope` names the operator's state; `input_insert_only` lets MIN/MAX
    /// skip their value maps. `backend` is `None` for an operator that keeps
    /// no state (a local aggregate), whose calls must then be mergeable.
    pub fn new(
        backend: Option<&StateBackend>,
        scope: &str,
        aggs: Vec<AggSpec>,
        input_insert_only: bool,
    ) -> OpResult<AggCore> {
        let mut distinct: Vec<DistinctGroup> = Vec::new();
        let mut calls = Vec::with_capacity(aggs.len());
        let mut minmax = Vec::with_capacity(aggs.len());
        for (i, a) in aggs.iter().enumerate() {
            let extreme = matches!(a.kind, AggKind::Min | AggKind::Max);
            if a.distinct && !extreme {
                let backend = backend
                    .ok_or_else(|| OpError::Spec("a distinct aggregate needs state".into()))?;
                let col = a.arg.expect("distinct aggregate has an argument");
                let g = match distinct.iter().position(|d| d.column == col) {
                    Some(g) => g,
                    None => {
                        let state = backend.map_state(scope, &format!("distinct_{col}"), 1, 0)?;
                        distinct.push(DistinctGroup {
                            column: col,
                            calls: Vec::new(),
                            state,
                        });
                        distinct.len() - 1
                    }
                };
                distinct[g].calls.push(i);
            }
            let step = match (a.kind, a.arg) {
                _ if a.distinct && !extreme => Step::Skip,
                (AggKind::CountStar, _) => Step::CountStar,
                (_, None) => Step::Skip,
                (AggKind::Count, Some(c)) => Step::Count(c),
                (AggKind::Sum | AggKind::Avg, Some(c)) => Step::Sum(c),
                (AggKind::Min | AggKind::Max, Some(c)) => Step::Extreme(c),
            };
            calls.push(Call {
                kind: a.kind,
                step,
                filter: a.filter,
            });
            minmax.push(match backend {
                Some(b) if extreme && !input_insert_only => {
                    Some(b.map_state(scope, &format!("minmax_{i}"), 1, 1)?)
                }
                _ => None,
            });
        }
        let mut init = Vec::with_capacity(1 + SLOTS * aggs.len());
        init.push(Value::Int(0));
        for a in &aggs {
            init.extend(functions::init(a.kind));
        }
        Ok(AggCore {
            aggs,
            calls,
            distinct,
            minmax,
            partial: backend.is_none(),
            init,
        })
    }

    /// A fresh accumulator row.
    pub fn init_row(&self) -> Row {
        self.init.clone()
    }

    /// The values of a fresh accumulator row.
    pub fn init_values(&self) -> &[Value] {
        &self.init
    }

    /// Width of an accumulator row.
    pub fn acc_width(&self) -> usize {
        1 + SLOTS * self.aggs.len()
    }

    /// Whether the accumulator is all the state the calls keep (no
    /// distinct or MIN/MAX value maps): then folding a record changes
    /// nothing but the accumulator, and a store may drop a half-folded one.
    pub fn acc_is_all_state(&self) -> bool {
        self.distinct.is_empty() && self.minmax.iter().all(Option::is_none)
    }

    /// Applies one input row (`sign` +1 accumulate, -1 retract) to `acc`.
    #[inline]
    pub fn accumulate<A: Acc + ?Sized>(
        &mut self,
        key: &[Value],
        acc: &mut A,
        row: &[Value],
        sign: i64,
    ) -> OpResult<()> {
        if let Some(c) = acc.int(0) {
            acc.set_int(0, c + sign);
        }
        if !self.distinct.is_empty() {
            self.accumulate_distinct(key, acc, row, sign)?;
        }
        for (i, call) in self.calls.iter().enumerate() {
            if !passes_filter(call.filter, row) {
                continue;
            }
            let s = slot(i);
            match call.step {
                Step::CountStar => functions::count(acc, s, sign),
                Step::Count(c) if !row[c].is_null() => functions::count(acc, s, sign),
                Step::Sum(c) if !row[c].is_null() => {
                    functions::sum(acc, s, &row[c], sign, !self.partial)
                }
                Step::Extreme(c) if !row[c].is_null() => match &mut self.minmax[i] {
                    None => {
                        // Nothing to rescan: no copy of a retracted extreme is known.
                        let v = &row[c];
                        if let Retracted::Rescan =
                            functions::apply_extreme(call.kind, acc, s, v, sign, false)
                        {
                            acc.set(s, Value::Null);
                        }
                    }
                    Some(map) => extreme_with_map(map, call.kind, key, acc, s, &row[c], sign)?,
                },
                // Distinct (done above), or a NULL argument.
                Step::Skip | Step::Count(_) | Step::Sum(_) | Step::Extreme(_) => {}
            }
        }
        Ok(())
    }

    /// The distinct calls' part of [`AggCore::accumulate`]: each call sees
    /// a value when its count in the distinct map leaves or reaches 0.
    fn accumulate_distinct<A: Acc + ?Sized>(
        &mut self,
        key: &[Value],
        acc: &mut A,
        row: &[Value],
        sign: i64,
    ) -> OpResult<()> {
        let aggs = &self.aggs;
        for d in self.distinct.iter_mut() {
            let v = &row[d.column];
            if v.is_null() {
                continue;
            }
            let passes: Vec<bool> = d
                .calls
                .iter()
                .map(|&i| passes_filter(aggs[i].filter, row))
                .collect();
            if !passes.iter().any(|p| *p) {
                continue;
            }
            let n = d.calls.len();
            let flips = d.state.modify(key, std::slice::from_ref(v), |s| {
                let counts = s.get_or_insert_with(|| vec![Value::Int(0); n]);
                let mut flips = Vec::with_capacity(n);
                for (j, c) in counts.iter_mut().enumerate() {
                    let old = c.as_int().unwrap_or(0);
                    let new = if passes[j] { old + sign } else { old };
                    *c = Value::Int(new);
                    flips.push(passes[j] && ((old == 0 && new > 0) || (old > 0 && new == 0)));
                }
                if counts.iter().all(|c| c.as_int() == Some(0)) {
                    *s = None;
                }
                flips
            })?;
            for (j, flip) in flips.into_iter().enumerate() {
                if flip {
                    let i = d.calls[j];
                    functions::apply(aggs[i].kind, acc, slot(i), v, sign);
                }
            }
        }
        Ok(())
    }

    /// Merges a partial accumulator (as a local aggregate emits it) into `acc`.
    #[inline]
    pub fn merge<A: Acc + ?Sized>(&self, acc: &mut A, partial: &[Value]) {
        let n = acc.int(0).unwrap_or(0) + partial[0].as_int().unwrap_or(0);
        acc.set_int(0, n);
        for (i, a) in self.aggs.iter().enumerate() {
            let s = slot(i);
            functions::merge(a.kind, acc, s, &partial[s..s + SLOTS]);
        }
    }

    /// The calls' results (a result row without its key) into `out`, which
    /// is cleared first: a buffer reused from record to record, so results
    /// are compared without building rows.
    #[inline]
    pub fn results_into<A: Acc + ?Sized>(&self, acc: &A, out: &mut Vec<Value>) {
        out.clear();
        self.push_results(acc, out);
    }

    /// A result row: the group key, then the calls' results.
    #[inline]
    pub fn result_row<A: Acc + ?Sized>(&self, key: &[Value], acc: &A) -> Row {
        let mut r = Vec::with_capacity(key.len() + self.aggs.len());
        for v in key {
            crate::value::push_copy(&mut r, v);
        }
        self.push_results(acc, &mut r);
        r
    }

    #[inline]
    fn push_results<A: Acc + ?Sized>(&self, acc: &A, out: &mut Vec<Value>) {
        for (i, a) in self.aggs.iter().enumerate() {
            functions::push_result(a, acc, slot(i), out);
        }
    }

    /// Whether any call's result differs between `a` and `b`.
    #[inline]
    pub fn results_differ<A: Acc + ?Sized>(&self, a: &A, b: &A) -> bool {
        self.aggs
            .iter()
            .enumerate()
            .any(|(i, spec)| functions::results_differ(spec, a, b, slot(i)))
    }

    /// The value maps into a checkpoint, under their state names
    /// (`distinct_<column>`, `minmax_<call>`), keyed by the group key.
    pub fn snapshot(&mut self, image: &mut OperatorImage) -> OpResult<()> {
        for d in &mut self.distinct {
            image.add_map(&format!("distinct_{}", d.column), &mut d.state)?;
        }
        for (i, m) in self.minmax.iter_mut().enumerate() {
            if let Some(m) = m {
                image.add_map(&format!("minmax_{i}"), m)?;
            }
        }
        Ok(())
    }

    /// The value maps' owned entries back from a checkpoint.
    pub fn restore(
        &mut self,
        image: &OperatorImage,
        owns: &dyn Fn(&[Value]) -> bool,
    ) -> OpResult<()> {
        for d in &mut self.distinct {
            image.restore_map(&format!("distinct_{}", d.column), &mut d.state, owns)?;
        }
        for (i, m) in self.minmax.iter_mut().enumerate() {
            if let Some(m) = m {
                image.restore_map(&format!("minmax_{i}"), m, owns)?;
            }
        }
        Ok(())
    }

    pub fn state_reports(&self) -> Vec<StateReport> {
        let mut r: Vec<StateReport> = self.distinct.iter().map(|d| d.state.report()).collect();
        r.extend(self.minmax.iter().flatten().map(|m| m.report()));
        r
    }
}

/// A MIN/MAX over an input that can retract: its value map counts each
/// value; when the extreme's last copy is retracted, the map is scanned
/// for the new one.
fn extreme_with_map<A: Acc + ?Sized>(
    map: &mut MapState,
    kind: AggKind,
    key: &[Value],
    acc: &mut A,
    s: usize,
    v: &Value,
    sign: i64,
) -> OpResult<()> {
    let value_left = map.modify(key, std::slice::from_ref(v), |entry| {
        let c = entry.as_ref().and_then(|r| r[0].as_int()).unwrap_or(0) + sign;
        *entry = (c > 0).then(|| vec![Value::Int(c)]);
        c > 0
    })?;
    if let Retracted::Rescan = functions::apply_extreme(kind, acc, s, v, sign, value_left) {
        let mut best = Value::Null;
        map.for_each(key, |k, _| {
            if functions::better(kind, &k[0], &best) {
                best = k[0].clone();
            }
        })?;
        acc.set(s, best);
    }
    Ok(())
}

fn passes_filter(filter: Option<usize>, row: &[Value]) -> bool {
    match filter {
        Some(f) => matches!(row[f], Value::Bool(true)),
        None => true,
    }
}

/// Index of call `i`'s first slot in the accumulator row.
#[inline]
fn slot(i: usize) -> usize {
    1 + SLOTS * i
}
