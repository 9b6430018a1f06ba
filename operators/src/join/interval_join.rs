//! The event-time interval join, INNER: Flink's `RowTimeIntervalJoin`
//! (`TimeIntervalJoin`). A left row at `tl` joins a right row of the same
//! key at `tr` when `tl - tr` lies in `[lower, upper]` and the rest of the
//! condition holds; each joined pair is emitted once, as `+I`, by whichever
//! of the two rows arrives second.
//!
//! Each side keeps its rows in a map state, join key -> (time, sequence)
//! -> row, as long as a row of the other side may still join it. The
//! operator's time is the watermark of its inputs (the least of both), as
//! in Flink: a left row is kept while the watermark is below `tl - lower`
//! (a right row that could still join it is later than the watermark), a
//! right row while the watermark is below `tr + upper`. When the watermark
//! passes that bound the row is deleted, so the state is empty after the
//! final watermark; `table.exec.state.ttl` does not apply. A row that
//! arrives when the watermark has passed its bound still joins the rows
//! kept, and is not kept itself (Flink's "not cached"): rows at or behind
//! the watermark may miss pairs the batch join would have.

use super::join_spec::JoinType;
use crate::changelog::{Change, RowKind};
use crate::expr::Expr;
use crate::operator::{OpError, OpResult, Operator};
use crate::state::{MapState, StateBackend, StateReport};
use crate::value::{Row, Value};
use std::collections::BTreeMap;

/// What the planner fixed of an interval join.
#[derive(Clone, Debug, PartialEq)]
pub struct IntervalJoinSpec {
    pub join_type: JoinType,
    pub left_keys: Vec<usize>,
    pub right_keys: Vec<usize>,
    pub left_arity: usize,
    pub right_arity: usize,
    /// The rowtime columns of the left and of the right input.
    pub left_time: usize,
    pub right_time: usize,
    /// `left time - right time` lies in `[lower, upper]` (milliseconds).
    pub lower: i64,
    pub upper: i64,
    /// The whole join condition but the key equalities, over `left ++ right`.
    pub residual: Option<Expr>,
}

/// One input's kept rows and the times at which they stop being needed.
struct Side {
    rows: MapState,
    /// Expiry bound -> (join key, (time, sequence)) of the rows it frees.
    expiry: BTreeMap<i64, Vec<(Row, Row)>>,
}

pub struct IntervalJoinOperator {
    spec: IntervalJoinSpec,
    sides: [Side; 2],
    watermark: i64,
    seq: i64,
    joined: Row,
}

impl IntervalJoinOperator {
    pub fn new(
        backend: &StateBackend,
        scope: &str,
        spec: IntervalJoinSpec,
    ) -> OpResult<IntervalJoinOperator> {
        if spec.join_type != JoinType::Inner {
            return Err(OpError::Spec(
                "the interval join runs INNER joins only".to_string(),
            ));
        }
        if spec.left_keys.len() != spec.right_keys.len() || spec.lower > spec.upper {
            return Err(OpError::Spec(format!(
                "an interval join needs key lists of one length and lower <= upper, got {} and {} keys, [{}, {}]",
                spec.left_keys.len(),
                spec.right_keys.len(),
                spec.lower,
                spec.upper
            )));
        }
        for (cols, arity) in [
            (&spec.left_keys, spec.left_arity),
            (&spec.right_keys, spec.right_arity),
        ] {
            if let Some(c) = cols.iter().find(|&&c| c >= arity) {
                return Err(OpError::Spec(format!(
                    "column {c} is not among the {arity} input columns"
                )));
            }
        }
        if spec.left_time >= spec.left_arity || spec.right_time >= spec.right_arity {
            return Err(OpError::Spec(
                "an interval join's time column is not among its input's columns".to_string(),
            ));
        }
        let side = |name: &str, arity: usize| -> OpResult<Side> {
            Ok(Side {
                rows: backend.map_state(scope, name, 2, arity)?,
                expiry: BTreeMap::new(),
            })
        };
        Ok(IntervalJoinOperator {
            sides: [
                side("interval-join-left", spec.left_arity)?,
                side("interval-join-right", spec.right_arity)?,
            ],
            spec,
            watermark: i64::MIN,
            seq: 0,
            joined: Vec::new(),
        })
    }

    /// The bound a row of `side` at `t` is kept below: the watermark must
    /// stay under it for a row of the other side to still join it.
    fn bound(&self, side: usize, t: i64) -> i64 {
        if side == 0 {
            t.saturating_sub(self.spec.lower)
        } else {
            t.saturating_add(self.spec.upper)
        }
    }

    fn process_row(&mut self, side: usize, row: Row, out: &mut Vec<Change>) -> OpResult<()> {
        let (keys, time_col) = if side == 0 {
            (&self.spec.left_keys, self.spec.left_time)
        } else {
            (&self.spec.right_keys, self.spec.right_time)
        };
        let key: Row = keys.iter().map(|&c| row[c].clone()).collect();
        // A NULL key joins nothing; Flink's rowtime is NOT NULL.
        let Some(t) = row[time_col].as_ts() else {
            return Ok(());
        };
        if key.iter().any(Value::is_null) {
            return Ok(());
        }
        // The other side's times that join `t`.
        let (lo, hi) = if side == 0 {
            (
                t.saturating_sub(self.spec.upper),
                t.saturating_sub(self.spec.lower),
            )
        } else {
            (
                t.saturating_add(self.spec.lower),
                t.saturating_add(self.spec.upper),
            )
        };
        let mut candidates: Vec<(Row, Row)> = Vec::new();
        self.sides[1 - side].rows.for_each(&key, |ukey, other| {
            if let Some(ot) = ukey[0].as_ts() {
                if ot >= lo && ot <= hi {
                    candidates.push((ukey.to_vec(), other.to_vec()));
                }
            }
        })?;
        // In time order, then arrival order, on both backends.
        candidates.sort_by_key(|(ukey, _)| (ukey[0].as_ts(), ukey[1].as_int()));
        for (_, other) in candidates {
            self.joined.clear();
            if side == 0 {
                self.joined.extend_from_slice(&row);
                self.joined.extend_from_slice(&other);
            } else {
                self.joined.extend_from_slice(&other);
                self.joined.extend_from_slice(&row);
            }
            if self
                .spec
                .residual
                .as_ref()
                .is_none_or(|p| p.is_true(&self.joined))
            {
                out.push(Change::insert(self.joined.clone()));
            }
        }
        let bound = self.bound(side, t);
        if self.watermark < bound {
            self.seq += 1;
            let ukey = vec![Value::Ts(t), Value::Int(self.seq)];
            let s = &mut self.sides[side];
            s.rows.put(&key, &ukey, row)?;
            s.expiry.entry(bound).or_default().push((key, ukey));
        }
        Ok(())
    }
}

impl Operator for IntervalJoinOperator {
    fn process(&mut self, input: usize, batch: Vec<Change>, out: &mut Vec<Change>) -> OpResult<()> {
        let side = input.min(1);
        for change in batch {
            if change.kind != RowKind::Insert {
                return Err(OpError::Record(format!(
                    "IntervalJoin takes insert-only inputs, got {change}"
                )));
            }
            self.process_row(side, change.row, out)?;
        }
        Ok(())
    }

    fn on_watermark(&mut self, watermark: i64, _out: &mut Vec<Change>) -> OpResult<()> {
        self.watermark = self.watermark.max(watermark);
        for s in &mut self.sides {
            while let Some(entry) = s.expiry.first_entry() {
                if *entry.key() > self.watermark {
                    break;
                }
                for (key, ukey) in entry.remove() {
                    s.rows.delete(&key, &ukey)?;
                }
            }
        }
        Ok(())
    }

    fn state_reports(&self) -> Vec<StateReport> {
        self.sides.iter().map(|s| s.rows.report()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(k, ts)` on both sides, `l.ts - r.ts` in `[-5, 5]`.
    fn op() -> IntervalJoinOperator {
        IntervalJoinOperator::new(
            &StateBackend::heap(),
            "t",
            IntervalJoinSpec {
                join_type: JoinType::Inner,
                left_keys: vec![0],
                right_keys: vec![0],
                left_arity: 2,
                right_arity: 2,
                left_time: 1,
                right_time: 1,
                lower: -5,
                upper: 5,
                residual: None,
            },
        )
        .unwrap()
    }

    fn row(k: &str, t: i64) -> Change {
        Change::insert(vec![Value::str(k), Value::Ts(t)])
    }

    fn entries(o: &IntervalJoinOperator) -> i64 {
        o.sides.iter().map(|s| s.rows.metrics().entries).sum()
    }

    #[test]
    fn joins_within_the_bounds_and_frees_rows_as_the_watermark_passes() {
        let mut o = op();
        let mut out = Vec::new();
        o.process(0, vec![row("a", 10), row("b", 10)], &mut out)
            .unwrap();
        o.process(
            1,
            vec![row("a", 4), row("a", 5), row("a", 15), row("a", 16)],
            &mut out,
        )
        .unwrap();
        let joined: Vec<i64> = out.iter().map(|c| c.row[3].as_ts().unwrap()).collect();
        assert_eq!(joined, vec![5, 15]);
        assert!(out.iter().all(|c| c.kind == RowKind::Insert));
        // Left 10 is kept while the watermark is below 15; right 4 below 9.
        o.on_watermark(9, &mut out).unwrap();
        assert_eq!(entries(&o), 5);
        o.on_watermark(15, &mut out).unwrap();
        assert_eq!(entries(&o), 2);
        // Rights 15 and 16 (kept below 20 and 21) still join a left row at 11.
        out.clear();
        o.process(0, vec![row("a", 11)], &mut out).unwrap();
        assert_eq!(out.len(), 2);
        o.on_watermark(i64::MAX, &mut out).unwrap();
        assert_eq!(entries(&o), 0);
    }

    #[test]
    fn a_row_behind_its_bound_joins_what_is_kept_and_is_not_kept() {
        let mut o = op();
        let mut out = Vec::new();
        o.process(1, vec![row("a", 30)], &mut out).unwrap();
        o.on_watermark(20, &mut out).unwrap();
        // Left 12: bound 17 <= 20, not kept; it joins nothing (30 - 12 > 5).
        o.process(0, vec![row("a", 12), row("a", 26)], &mut out)
            .unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(entries(&o), 2);
        // A right row at 13 would have joined left 12, which was not kept.
        o.process(1, vec![row("a", 13)], &mut out).unwrap();
        assert_eq!(out.len(), 1);
    }
}
