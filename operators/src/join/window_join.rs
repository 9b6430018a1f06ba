//! The window join: Flink's `WindowJoinOperator`. Both inputs carry the
//! window columns of one window TVF; a row belongs to the window whose
//! `window_end` it holds. Each side keeps its rows per join key and window
//! until the watermark passes the window's end - 1; then the window's rows
//! of each key are joined (INNER, LEFT, RIGHT or FULL, outer rows padded
//! with NULLs), emitted as `+I`, and deleted. Windows fire in order of
//! their end, keys in the order they first reached the window; within a
//! key, rows pair in arrival order as Flink's loops have them (LEFT, FULL
//! and INNER: left rows outside, right rows inside; RIGHT: the other way
//! round; FULL pads its unmatched right rows last).
//!
//! A row whose window has fired when it arrives (the watermark is at least
//! its end - 1, Flink's `isWindowFired`) is late: dropped and counted per
//! side (`leftNumLateRecordsDropped`, `rightNumLateRecordsDropped`). After
//! the final watermark the state is empty; `table.exec.state.ttl` does not
//! apply. A row with a NULL join key matches nothing (Flink's null filter)
//! but an outer join still emits it padded.

use super::join_spec::JoinType;
use crate::changelog::{Change, RowKind};
use crate::expr::Expr;
use crate::operator::{OpError, OpResult, Operator};
use crate::state::{MapState, StateBackend, StateReport};
use crate::value::{Row, Value};
use std::collections::{BTreeMap, HashSet};

/// What the planner fixed of a window join.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowJoinSpec {
    pub join_type: JoinType,
    /// The equi-keys other than the window columns.
    pub left_keys: Vec<usize>,
    pub right_keys: Vec<usize>,
    pub left_arity: usize,
    pub right_arity: usize,
    /// The `window_end` column of the left and of the right input.
    pub left_window_end: usize,
    pub right_window_end: usize,
    /// The rest of the condition (neither key nor window equality), over
    /// `left ++ right`.
    pub residual: Option<Expr>,
}

pub struct WindowJoinOperator {
    spec: WindowJoinSpec,
    /// Per side: (join key, window end) -> (arrival) -> row.
    sides: [MapState; 2],
    /// Window end -> keys with a row there, in the order they came.
    timers: BTreeMap<i64, (Vec<Row>, HashSet<Row>)>,
    watermark: i64,
    seq: i64,
    late_dropped: [u64; 2],
}

impl WindowJoinOperator {
    pub fn new(
        backend: &StateBackend,
        scope: &str,
        spec: WindowJoinSpec,
    ) -> OpResult<WindowJoinOperator> {
        if spec.left_keys.len() != spec.right_keys.len() {
            return Err(OpError::Spec(format!(
                "a window join needs key lists of one length, got {} and {}",
                spec.left_keys.len(),
                spec.right_keys.len()
            )));
        }
        for (cols, end, arity) in [
            (&spec.left_keys, spec.left_window_end, spec.left_arity),
            (&spec.right_keys, spec.right_window_end, spec.right_arity),
        ] {
            if let Some(c) = cols.iter().chain([&end]).find(|&&c| c >= arity) {
                return Err(OpError::Spec(format!(
                    "column {c} is not among the {arity} input columns"
                )));
            }
        }
        Ok(WindowJoinOperator {
            sides: [
                backend.map_state(scope, "left-records", 1, spec.left_arity)?,
                backend.map_state(scope, "right-records", 1, spec.right_arity)?,
            ],
            spec,
            timers: BTreeMap::new(),
            watermark: i64::MIN,
            seq: 0,
            late_dropped: [0, 0],
        })
    }

    fn fired(end: i64, wm: i64) -> bool {
        wm >= end.saturating_sub(1)
    }

    fn process_row(&mut self, side: usize, row: Row) -> OpResult<()> {
        let (keys, end_col) = if side == 0 {
            (&self.spec.left_keys, self.spec.left_window_end)
        } else {
            (&self.spec.right_keys, self.spec.right_window_end)
        };
        let Some(end) = row[end_col].as_ts() else {
            return Ok(());
        };
        if Self::fired(end, self.watermark) {
            self.late_dropped[side] += 1;
            return Ok(());
        }
        let key: Row = keys.iter().map(|&c| row[c].clone()).collect();
        let (order, set) = self.timers.entry(end).or_default();
        if set.insert(key.clone()) {
            order.push(key.clone());
        }
        let mut skey = key;
        skey.push(Value::Ts(end));
        self.seq += 1;
        self.sides[side].put(&skey, &[Value::Int(self.seq)], row)?;
        Ok(())
    }

    /// A side's rows of one key and window, in arrival order; deleted.
    fn take(&mut self, side: usize, skey: &[Value]) -> OpResult<Vec<Row>> {
        let mut rows = self.sides[side].entries(skey)?;
        rows.sort_by_key(|(ukey, _)| ukey[0].as_int());
        for (ukey, _) in &rows {
            self.sides[side].delete(skey, ukey)?;
        }
        Ok(rows.into_iter().map(|(_, r)| r).collect())
    }

    /// Joins one key's rows of one window, as Flink's join processors do.
    fn join(&self, left: &[Row], right: &[Row], out: &mut Vec<Change>) {
        let (la, ra) = (self.spec.left_arity, self.spec.right_arity);
        let joined = |l: &Row, r: &Row| -> Row { l.iter().chain(r).cloned().collect() };
        let null_key = |row: &Row, keys: &[usize]| keys.iter().any(|&c| row[c].is_null());
        let matches = |l: &Row, r: &Row| -> Option<Row> {
            if null_key(l, &self.spec.left_keys) || null_key(r, &self.spec.right_keys) {
                return None;
            }
            let j = joined(l, r);
            self.spec
                .residual
                .as_ref()
                .is_none_or(|p| p.is_true(&j))
                .then_some(j)
        };
        let pad_left = |l: &Row| -> Row {
            let mut j = l.clone();
            j.extend(std::iter::repeat_n(Value::Null, ra));
            j
        };
        let pad_right = |r: &Row| -> Row {
            let mut j = vec![Value::Null; la];
            j.extend(r.iter().cloned());
            j
        };
        match self.spec.join_type {
            JoinType::Right => {
                for r in right {
                    let mut matched = false;
                    for l in left {
                        if let Some(j) = matches(l, r) {
                            matched = true;
                            out.push(Change::insert(j));
                        }
                    }
                    if !matched {
                        out.push(Change::insert(pad_right(r)));
                    }
                }
            }
            kind => {
                let mut right_matched = vec![false; right.len()];
                for l in left {
                    let mut matched = false;
                    for (r, m) in right.iter().zip(right_matched.iter_mut()) {
                        if let Some(j) = matches(l, r) {
                            matched = true;
                            *m = true;
                            out.push(Change::insert(j));
                        }
                    }
                    if !matched && kind.left_is_outer() {
                        out.push(Change::insert(pad_left(l)));
                    }
                }
                if kind == JoinType::Full {
                    for (r, _) in right.iter().zip(&right_matched).filter(|(_, m)| !**m) {
                        out.push(Change::insert(pad_right(r)));
                    }
                }
            }
        }
    }
}

impl Operator for WindowJoinOperator {
    fn process(
        &mut self,
        input: usize,
        batch: Vec<Change>,
        _out: &mut Vec<Change>,
    ) -> OpResult<()> {
        let side = input.min(1);
        for change in batch {
            if change.kind != RowKind::Insert {
                return Err(OpError::Record(format!(
                    "WindowJoin takes insert-only inputs, got {change}"
                )));
            }
            self.process_row(side, change.row)?;
        }
        Ok(())
    }

    fn on_watermark(&mut self, watermark: i64, out: &mut Vec<Change>) -> OpResult<()> {
        self.watermark = self.watermark.max(watermark);
        while let Some(entry) = self.timers.first_entry() {
            let end = *entry.key();
            if !Self::fired(end, self.watermark) {
                break;
            }
            let (keys, _) = entry.remove();
            for mut key in keys {
                key.push(Value::Ts(end));
                let left = self.take(0, &key)?;
                let right = self.take(1, &key)?;
                self.join(&left, &right, out);
            }
        }
        Ok(())
    }

    fn state_reports(&self) -> Vec<StateReport> {
        self.sides.iter().map(MapState::report).collect()
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("leftNumLateRecordsDropped", self.late_dropped[0]),
            ("rightNumLateRecordsDropped", self.late_dropped[1]),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(k, v, window_end)` on both sides, joined on `k`.
    fn op(join_type: JoinType, backend: &StateBackend) -> WindowJoinOperator {
        WindowJoinOperator::new(
            backend,
            "t",
            WindowJoinSpec {
                join_type,
                left_keys: vec![0],
                right_keys: vec![0],
                left_arity: 3,
                right_arity: 3,
                left_window_end: 2,
                right_window_end: 2,
                residual: None,
            },
        )
        .unwrap()
    }

    fn row(k: Option<&str>, v: i64, end: i64) -> Change {
        Change::insert(vec![
            k.map_or(Value::Null, Value::str),
            Value::Int(v),
            Value::Ts(end),
        ])
    }

    fn entries(o: &WindowJoinOperator) -> i64 {
        o.sides.iter().map(|s| s.metrics().entries).sum()
    }

    fn values(out: &[Change]) -> Vec<(Value, Value)> {
        out.iter()
            .map(|c| (c.row[1].clone(), c.row[4].clone()))
            .collect()
    }

    #[test]
    fn joins_each_window_when_it_fires_and_pads_outer_rows() {
        let n = Value::Null;
        let i = Value::Int;
        for backend in [StateBackend::heap(), StateBackend::rocksdb(None).unwrap()] {
            for (kind, expected) in [
                (JoinType::Inner, vec![(i(1), i(10)), (i(1), i(11))]),
                (
                    JoinType::Left,
                    vec![
                        (i(1), i(10)),
                        (i(1), i(11)),
                        (i(2), n.clone()),
                        (i(3), n.clone()),
                    ],
                ),
                (
                    JoinType::Right,
                    vec![
                        (i(1), i(10)),
                        (i(1), i(11)),
                        (n.clone(), i(12)),
                        (n.clone(), i(13)),
                    ],
                ),
                (
                    JoinType::Full,
                    vec![
                        (i(1), i(10)),
                        (i(1), i(11)),
                        (i(2), n.clone()),
                        (n.clone(), i(12)),
                        (i(3), n.clone()),
                        (n.clone(), i(13)),
                    ],
                ),
            ] {
                let mut o = op(kind, &backend);
                let mut out = Vec::new();
                o.process(
                    0,
                    vec![
                        row(Some("a"), 1, 10),
                        row(None, 2, 10),
                        row(Some("c"), 3, 20),
                    ],
                    &mut out,
                )
                .unwrap();
                o.process(
                    1,
                    vec![
                        row(Some("a"), 10, 10),
                        row(Some("a"), 11, 10),
                        row(None, 12, 10),
                        row(Some("a"), 13, 20),
                    ],
                    &mut out,
                )
                .unwrap();
                o.on_watermark(8, &mut out).unwrap();
                assert!(out.is_empty());
                o.on_watermark(9, &mut out).unwrap();
                assert_eq!(entries(&o), 2, "{kind:?}");
                // Window 10 has fired: a row of it is late.
                o.process(0, vec![row(Some("a"), 4, 10)], &mut out).unwrap();
                o.on_watermark(i64::MAX, &mut out).unwrap();
                assert_eq!(values(&out), expected, "{kind:?}");
                assert!(out.iter().all(|c| c.kind == RowKind::Insert));
                assert_eq!(entries(&o), 0);
                assert_eq!(
                    o.counters(),
                    vec![
                        ("leftNumLateRecordsDropped", 1),
                        ("rightNumLateRecordsDropped", 0)
                    ]
                );
            }
        }
    }
}
