//! The accumulator logic every aggregate operator shares: how one input
//! row changes a group's accumulator row, how two accumulators merge, and
//! how a result row is read off an accumulator.
//!
//! Accumulator row: `[row count, slots of call 0, slots of call 1, ...]`,
//! two slots per call (see [`super::functions`]). The row count is the
//! number of input rows in the group (accumulated minus retracted); when it
//! returns to 0 the group is empty and its result is retracted.
//!
//! State beside the accumulator, per group key: for each distinct column a
//! map `distinct_<col>` (value → one count per distinct call on that
//! column: every `FILTER` variant of a distinct call on one column shares one
//! map, as Flink shares distinct state); for MIN/MAX over an input that can
//! retract, a map `minmax_<i>` (value → count).

use super::functions::{self, AggKind, AggSpec, Retracted, SLOTS};
use crate::operator::{OpError, OpResult};
use crate::state::{MapState, StateBackend, StateReport};
use crate::value::{Row, Value};

struct DistinctGroup {
    column: usize,
    /// The calls (indices into `aggs`) that count distinct values of `column`.
    calls: Vec<usize>,
    state: MapState,
}

pub struct AggCore {
    aggs: Vec<AggSpec>,
    /// Per call: whether it goes through a distinct map.
    distinct_call: Vec<bool>,
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
        let mut distinct_call = vec![false; aggs.len()];
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
                distinct_call[i] = true;
            }
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
            distinct_call,
            distinct,
            minmax,
            partial: backend.is_none(),
            init,
        })
    }

    pub fn aggs(&self) -> &[AggSpec] {
        &self.aggs
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

    /// Applies one input row (`sign` +1 accumulate, -1 retract) to `acc`.
    pub fn accumulate(
        &mut self,
        key: &[Value],
        acc: &mut [Value],
        row: &[Value],
        sign: i64,
    ) -> OpResult<()> {
        if let Value::Int(c) = &mut acc[0] {
            *c += sign;
        }
        let aggs = &self.aggs;
        for d in self.distinct.iter_mut() {
            let v = &row[d.column];
            if v.is_null() {
                continue;
            }
            let passes: Vec<bool> = d
                .calls
                .iter()
                .map(|&i| passes_filter(&aggs[i], row))
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
                    // The call sees the value when its count leaves or reaches 0.
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
                    functions::apply(aggs[i].kind, slots_mut(acc, i), v, sign);
                }
            }
        }
        for (i, spec) in aggs.iter().enumerate() {
            if self.distinct_call[i] || !passes_filter(spec, row) {
                continue;
            }
            let v = match spec.arg {
                Some(c) => &row[c],
                None => &Value::Null,
            };
            if spec.kind != AggKind::CountStar && v.is_null() {
                continue;
            }
            match spec.kind {
                AggKind::Min | AggKind::Max => {
                    let value_left = match &mut self.minmax[i] {
                        Some(map) => map.modify(key, std::slice::from_ref(v), |s| {
                            let c = s.as_ref().and_then(|r| r[0].as_int()).unwrap_or(0) + sign;
                            *s = (c > 0).then(|| vec![Value::Int(c)]);
                            c > 0
                        })?,
                        None => false,
                    };
                    let slots = slots_mut(acc, i);
                    if let Retracted::Rescan =
                        functions::apply_extreme(spec.kind, slots, v, sign, value_left)
                    {
                        let mut best = Value::Null;
                        if let Some(map) = &mut self.minmax[i] {
                            map.for_each(key, |k, _| {
                                if functions::better(spec.kind, &k[0], &best) {
                                    best = k[0].clone();
                                }
                            })?;
                        }
                        slots[0] = best;
                    }
                }
                kind if self.partial => functions::apply_delta(kind, slots_mut(acc, i), v, sign),
                kind => functions::apply(kind, slots_mut(acc, i), v, sign),
            }
        }
        Ok(())
    }

    /// Merges a partial accumulator (as a local aggregate emits it) into `acc`.
    pub fn merge(&self, acc: &mut [Value], partial: &[Value]) {
        acc[0] = Value::Int(acc[0].as_int().unwrap_or(0) + partial[0].as_int().unwrap_or(0));
        for (i, a) in self.aggs.iter().enumerate() {
            functions::merge(
                a.kind,
                slots_mut(acc, i),
                &partial[1 + SLOTS * i..1 + SLOTS * (i + 1)],
            );
        }
    }

    /// The calls' results (a result row without its key) into `out`, which
    /// is cleared first: a buffer reused from record to record, so results
    /// are compared without building rows.
    #[inline]
    pub fn results_into(&self, acc: &[Value], out: &mut Vec<Value>) {
        out.clear();
        for (a, slots) in self.aggs.iter().zip(acc[1..].chunks_exact(SLOTS)) {
            out.push(functions::result(a, slots));
        }
    }

    pub fn state_reports(&self) -> Vec<StateReport> {
        let mut r: Vec<StateReport> = self.distinct.iter().map(|d| d.state.report()).collect();
        r.extend(self.minmax.iter().flatten().map(|m| m.report()));
        r
    }
}

fn passes_filter(spec: &AggSpec, row: &[Value]) -> bool {
    match spec.filter {
        Some(f) => matches!(row[f], Value::Bool(true)),
        None => true,
    }
}

fn slots_mut(acc: &mut [Value], i: usize) -> &mut [Value] {
    &mut acc[1 + SLOTS * i..1 + SLOTS * (i + 1)]
}

/// The row count of an accumulator.
pub fn row_count(acc: &[Value]) -> i64 {
    acc[0].as_int().unwrap_or(0)
}
