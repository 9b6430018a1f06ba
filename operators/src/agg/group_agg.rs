//! `GroupAggregate`: one record at a time, read-modify-write per record.
//!
//! Semantics: for each group key the operator keeps an accumulator whose
//! result equals the aggregate over every row of that group seen so far
//! (accumulated minus retracted), so the emitted changelog materialises to
//! the batch `GROUP BY`. Emission follows Flink's `GroupAggFunction` with no
//! state TTL:
//! - first row of a group: `+I(result)`;
//! - result changed: `-U(old)` (unless the consumer is an upsert sink that
//!   does not need update-before) then `+U(new)`;
//! - result unchanged (a repeated distinct value, a MAX that did not move):
//!   nothing;
//! - last row retracted: `-D(old)` and the group's state is cleared.
//!
//! State: `acc` (group key → `[row count, slots...]`, see
//! [`super::functions`]); for each distinct column a map
//! `distinct_<col>` (group key → {value → one count per distinct call on
//! that column}), shared by every `FILTER` variant of the call, as Flink
//! shares distinct state; for MIN/MAX over a retracting input a map
//! `minmax_<i>` (group key → {value → count}).
//!
//! Counters, per input record: one read and one write (or delete) of `acc`;
//! plus one read-modify-write per distinct map the record touches and per
//! retractable MIN/MAX.

use super::functions::{self, AggKind, AggSpec, Retracted, SLOTS};
use crate::changelog::{Change, RowKind};
use crate::operator::{OpResult, Operator};
use crate::state::{MapState, StateBackend, StateReport, ValueState};
use crate::value::{Row, Value};

struct DistinctGroup {
    column: usize,
    /// The calls (indices into `aggs`) that count distinct values of `column`.
    calls: Vec<usize>,
    state: MapState,
}

pub struct GroupAggregateOperator {
    group_key: Vec<usize>,
    aggs: Vec<AggSpec>,
    /// Per call: its distinct group, if it is a distinct COUNT/SUM/AVG.
    distinct_of: Vec<Option<usize>>,
    distinct: Vec<DistinctGroup>,
    /// Per call: the value map of a retractable MIN/MAX.
    minmax: Vec<Option<MapState>>,
    acc: ValueState,
    generate_update_before: bool,
    key_buf: Vec<Value>,
}

impl GroupAggregateOperator {
    /// `scope` names the operator's state (one column family per state).
    /// `input_insert_only` lets MIN/MAX skip their value maps.
    pub fn new(
        backend: &StateBackend,
        scope: &str,
        group_key: Vec<usize>,
        aggs: Vec<AggSpec>,
        input_insert_only: bool,
        generate_update_before: bool,
    ) -> OpResult<GroupAggregateOperator> {
        let acc = backend.value_state(scope, "acc", 1 + SLOTS * aggs.len())?;
        let mut distinct: Vec<DistinctGroup> = Vec::new();
        let mut distinct_of = vec![None; aggs.len()];
        let mut minmax = Vec::with_capacity(aggs.len());
        for (i, a) in aggs.iter().enumerate() {
            let extreme = matches!(a.kind, AggKind::Min | AggKind::Max);
            if a.distinct && !extreme {
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
                distinct_of[i] = Some(g);
            }
            minmax.push(if extreme && !input_insert_only {
                Some(backend.map_state(scope, &format!("minmax_{i}"), 1, 1)?)
            } else {
                None
            });
        }
        Ok(GroupAggregateOperator {
            group_key,
            aggs,
            distinct_of,
            distinct,
            minmax,
            acc,
            generate_update_before,
            key_buf: Vec::new(),
        })
    }

    fn process_one(&mut self, change: Change, out: &mut Vec<Change>) -> OpResult<()> {
        let sign: i64 = if change.kind.is_accumulate() { 1 } else { -1 };
        let row = &change.row;
        self.key_buf.clear();
        self.key_buf
            .extend(self.group_key.iter().map(|&i| row[i].clone()));
        let GroupAggregateOperator {
            aggs,
            distinct_of,
            distinct,
            minmax,
            acc,
            generate_update_before,
            key_buf,
            ..
        } = self;
        let key: &[Value] = key_buf;
        let emitted = acc.modify(key, |slot| -> OpResult<()> {
            if slot.is_none() && sign < 0 {
                // A retraction of a group never seen: nothing to take away.
                return Ok(());
            }
            let first = slot.is_none();
            let acc_row = slot.get_or_insert_with(|| init_row(aggs));
            let prev = (!first).then(|| result_row(key, aggs, acc_row));
            if let Value::Int(c) = &mut acc_row[0] {
                *c += sign;
            }
            for d in distinct.iter_mut() {
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
                        functions::apply(aggs[i].kind, slots_mut(acc_row, i), v, sign);
                    }
                }
            }
            for (i, spec) in aggs.iter().enumerate() {
                if distinct_of[i].is_some() || !passes_filter(spec, row) {
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
                        let value_left = match &mut minmax[i] {
                            Some(map) => map.modify(key, std::slice::from_ref(v), |s| {
                                let c = s.as_ref().and_then(|r| r[0].as_int()).unwrap_or(0) + sign;
                                *s = (c > 0).then(|| vec![Value::Int(c)]);
                                c > 0
                            })?,
                            None => false,
                        };
                        let slots = slots_mut(acc_row, i);
                        if let Retracted::Rescan =
                            functions::apply_extreme(spec.kind, slots, v, sign, value_left)
                        {
                            let mut best = Value::Null;
                            if let Some(map) = &mut minmax[i] {
                                map.for_each(key, |k, _| {
                                    if functions::better(spec.kind, &k[0], &best) {
                                        best = k[0].clone();
                                    }
                                })?;
                            }
                            slots[0] = best;
                        }
                    }
                    kind => functions::apply(kind, slots_mut(acc_row, i), v, sign),
                }
            }
            if acc_row[0].as_int() == Some(0) {
                if let Some(prev) = prev {
                    out.push(Change::new(RowKind::Delete, prev));
                }
                *slot = None;
                return Ok(());
            }
            let new = result_row(key, aggs, acc_row);
            match prev {
                None => out.push(Change::new(RowKind::Insert, new)),
                Some(prev) if prev != new => {
                    if *generate_update_before {
                        out.push(Change::new(RowKind::UpdateBefore, prev));
                    }
                    out.push(Change::new(RowKind::UpdateAfter, new));
                }
                Some(_) => {}
            }
            Ok(())
        })?;
        emitted
    }
}

fn passes_filter(spec: &AggSpec, row: &[Value]) -> bool {
    match spec.filter {
        Some(f) => matches!(row[f], Value::Bool(true)),
        None => true,
    }
}

fn init_row(aggs: &[AggSpec]) -> Row {
    let mut r = Vec::with_capacity(1 + SLOTS * aggs.len());
    r.push(Value::Int(0));
    for a in aggs {
        r.extend(functions::init(a.kind));
    }
    r
}

fn slots_mut(acc: &mut [Value], i: usize) -> &mut [Value] {
    &mut acc[1 + SLOTS * i..1 + SLOTS * (i + 1)]
}

fn result_row(key: &[Value], aggs: &[AggSpec], acc: &[Value]) -> Row {
    let mut r = Vec::with_capacity(key.len() + aggs.len());
    r.extend_from_slice(key);
    for (i, a) in aggs.iter().enumerate() {
        r.push(functions::result(
            a,
            &acc[1 + SLOTS * i..1 + SLOTS * (i + 1)],
        ));
    }
    r
}

impl Operator for GroupAggregateOperator {
    fn process(
        &mut self,
        _input: usize,
        batch: Vec<Change>,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        for c in batch {
            self.process_one(c, out)?;
        }
        Ok(())
    }

    fn state_reports(&self) -> Vec<StateReport> {
        let mut r = vec![self.acc.report()];
        r.extend(self.distinct.iter().map(|d| d.state.report()));
        r.extend(self.minmax.iter().flatten().map(|m| m.report()));
        r
    }
}
