//! The binary regular join's step, shared by the one-record-at-a-time join
//! ([`super::RegularJoinOperator`]) and the mini-batch join
//! ([`super::MiniBatchJoinOperator`]): one input record joined against the
//! other side's state, or a retraction and an accumulate of the same state
//! entry joined as one update.
//!
//! Semantics (see [`super::regular_join`] for the emission order): a
//! single record is joined exactly as Flink's `StreamingJoinOperator` joins
//! it, so both operators emit the same rows for it. A pair is the
//! retraction of a row followed by its replacement, as a folded mini-batch
//! bundle hands them over: the retraction is joined first, then the
//! accumulate, against one scan of the other side, and when the other side
//! is outer, an outer row that both rows match keeps its NULL-padded row
//! retracted, so the `+I[other+NULL]`/`-D[other+NULL]` the two records
//! would emit one at a time are not emitted (see
//! [`super::mini_batch_join`]).
//!
//! Rows whose join key contains NULL match nothing (SQL equality).

use super::join_spec::JoinSpec;
use super::join_state::{JoinSideState, Stored};
use crate::changelog::{Change, RowKind};
use crate::checkpoint::OperatorImage;
use crate::operator::OpResult;
use crate::state::{StateBackend, StateReport};
use crate::value::{extend_copy, Row, Value};

pub(crate) struct JoinCore {
    pub(crate) spec: JoinSpec,
    sides: [JoinSideState; 2],
    joined_buf: Vec<Value>,
    /// Per matched row of the current scan: (matches the retraction,
    /// matches the accumulate).
    flags: Vec<(bool, bool)>,
    /// The other side's matching rows of the current record, kept from
    /// record to record so their buffers are reused.
    found: Vec<Stored>,
    /// Other-side rows scanned.
    pub(crate) rows_visited: u64,
    /// NULL-padded rows a pair did not emit.
    pub(crate) suppressed_rows: u64,
}

impl JoinCore {
    /// Both sides' state, named `left` and `right` in `scope`.
    pub(crate) fn new(backend: &StateBackend, scope: &str, spec: JoinSpec) -> OpResult<JoinCore> {
        let left_outer = spec.join_type.left_is_outer();
        let right_outer = spec.join_type.right_is_outer();
        let left = JoinSideState::new(
            backend,
            scope,
            "left",
            spec.left_layout.clone(),
            left_outer,
            spec.left_arity,
        )?;
        let right = JoinSideState::new(
            backend,
            scope,
            "right",
            spec.right_layout.clone(),
            right_outer,
            spec.right_arity,
        )?;
        Ok(JoinCore {
            spec,
            sides: [left, right],
            joined_buf: Vec::new(),
            flags: Vec::new(),
            found: Vec::new(),
            rows_visited: 0,
            suppressed_rows: 0,
        })
    }

    /// Both sides' state (asynchronous state loads and writes their
    /// batch images, [`super::join_async_state`]).
    pub(crate) fn sides_mut(&mut self) -> &mut [JoinSideState; 2] {
        &mut self.sides
    }

    pub(crate) fn state_reports(&self) -> Vec<StateReport> {
        vec![self.sides[0].report(), self.sides[1].report()]
    }

    /// Both sides' state into a checkpoint, as `left` and `right`.
    pub(crate) fn snapshot(&mut self, image: &mut OperatorImage) -> OpResult<()> {
        self.sides[0].snapshot("left", image)?;
        self.sides[1].snapshot("right", image)
    }

    /// Both sides' state back from a checkpoint.
    pub(crate) fn restore(
        &mut self,
        image: &OperatorImage,
        owns: &dyn Fn(&[Value]) -> bool,
    ) -> OpResult<()> {
        self.sides[0].restore("left", image, owns)?;
        self.sides[1].restore("right", image, owns)
    }

    /// Joins one record of input `side` (0 left, 1 right) under join key
    /// `key`. The record is the caller's no more: an accumulated row is
    /// moved into state rather than copied.
    pub(crate) fn join_one_owned(
        &mut self,
        side: usize,
        key: &[Value],
        change: Change,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        if change.kind.is_retract() {
            self.join(side, key, Some(&change), None, out)
        } else {
            let associations = self.emit(side, key, None, Some(&change), out)?;
            self.sides[side].add_owned(key, change.row, associations)
        }
    }

    /// Joins, on input `side` under join key `key`, a retraction `old`, an
    /// accumulate `new`, or both as one update of the same state entry.
    pub(crate) fn join(
        &mut self,
        side: usize,
        key: &[Value],
        old: Option<&Change>,
        new: Option<&Change>,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        let associations = self.emit(side, key, old, new, out)?;
        if let Some(new) = new {
            self.sides[side].add(key, &new.row, associations)?;
        }
        Ok(())
    }

    /// [`JoinCore::join`] but for adding `new`'s row to its side's state:
    /// emits the changes, retracts `old` and updates the other side's
    /// associations, and returns the associations `new`'s row is to be
    /// stored with (0 when there is no `new`).
    fn emit(
        &mut self,
        side: usize,
        key: &[Value],
        old: Option<&Change>,
        new: Option<&Change>,
        out: &mut Vec<Change>,
    ) -> OpResult<i64> {
        let input_is_left = side == 0;
        let outer = [
            self.spec.join_type.left_is_outer(),
            self.spec.join_type.right_is_outer(),
        ];
        let input_outer = outer[side];
        let other_outer = outer[1 - side];
        let arities = [self.spec.left_arity, self.spec.right_arity];
        // A row of input `side` (or of the other input) padded with NULLs.
        let pad = |row: &[Value]| padded(input_is_left, row, arities[1 - side]);
        let pad_other = |row: &[Value]| padded(!input_is_left, row, arities[side]);
        let paired = old.is_some() && new.is_some();

        let flags = &mut self.flags;
        flags.clear();
        let mut matches = std::mem::take(&mut self.found);
        if key.iter().any(Value::is_null) {
            matches.clear();
        } else {
            let residual = self.spec.residual.as_ref();
            let buf = &mut self.joined_buf;
            let visited = &mut self.rows_visited;
            let mut holds = |row: &[Value], other: &[Value]| match residual {
                None => true,
                Some(p) => {
                    buf.clear();
                    if input_is_left {
                        extend_copy(buf, row);
                        extend_copy(buf, other);
                    } else {
                        extend_copy(buf, other);
                        extend_copy(buf, row);
                    }
                    p.is_true(buf)
                }
            };
            self.sides[1 - side].matches_into(
                key,
                |other| {
                    *visited += 1;
                    let o = old.is_some_and(|c| holds(&c.row, other));
                    let n = new.is_some_and(|c| holds(&c.row, other));
                    if paired && (o || n) {
                        flags.push((o, n));
                    }
                    o || n
                },
                &mut matches,
            )?;
        }
        // A single record matches each returned row; only a pair needs
        // to know which of its two rows matched which.
        let flags = std::mem::take(&mut self.flags);
        let single = (old.is_some(), new.is_some());
        let matched = || {
            matches
                .iter()
                .enumerate()
                .map(|(i, m)| (m, if paired { flags[i] } else { single }))
        };
        let old_total: i64 = matched().filter(|(_, f)| f.0).map(|(m, _)| m.count).sum();
        let new_total: i64 = matched().filter(|(_, f)| f.1).map(|(m, _)| m.count).sum();

        if let Some(old) = old {
            // A pair's accumulate overwrites the same state entry.
            if !paired {
                self.sides[side].retract(key, &old.row)?;
            }
            if old_total == 0 {
                if input_outer {
                    out.push(Change::new(RowKind::Delete, pad(&old.row)));
                }
            } else {
                let kind = if input_outer {
                    RowKind::Delete
                } else {
                    old.kind
                };
                for (m, _) in matched().filter(|(_, f)| f.0) {
                    for _ in 0..m.count {
                        out.push(Change::new(kind, joined(input_is_left, &old.row, &m.row)));
                    }
                }
                if other_outer {
                    for (m, (_, in_new)) in matched().filter(|(_, f)| f.0) {
                        if in_new {
                            // Matched again by the accumulate: unchanged.
                            if m.associations == 1 {
                                self.suppressed_rows += 2 * m.count as u64;
                            }
                            continue;
                        }
                        if m.associations == 1 {
                            for _ in 0..m.count {
                                out.push(Change::new(RowKind::Insert, pad_other(&m.row)));
                            }
                        }
                        self.sides[1 - side].set_associations(key, &m.row, m.associations - 1)?;
                    }
                }
            }
        }

        if let Some(new) = new {
            // The other side's outer rows that gain a match: their padded
            // row goes (`-D`) when this is their first.
            if other_outer && new_total > 0 {
                for (m, (in_old, _)) in matched().filter(|(_, f)| f.1) {
                    if in_old {
                        // Its match by the retraction was kept.
                        continue;
                    }
                    if m.associations == 0 {
                        for _ in 0..m.count {
                            out.push(Change::new(RowKind::Delete, pad_other(&m.row)));
                        }
                    }
                    self.sides[1 - side].set_associations(key, &m.row, m.associations + 1)?;
                }
            }
            if input_outer && new_total == 0 {
                out.push(Change::new(RowKind::Insert, pad(&new.row)));
            } else {
                // An outer join emits `+I`; an inner one forwards the kind.
                let kind = if input_outer || other_outer {
                    RowKind::Insert
                } else {
                    new.kind
                };
                for (m, _) in matched().filter(|(_, f)| f.1) {
                    for _ in 0..m.count {
                        out.push(Change::new(kind, joined(input_is_left, &new.row, &m.row)));
                    }
                }
            }
        }
        self.flags = flags;
        self.found = matches;
        Ok(if input_outer { new_total } else { 0 })
    }
}

/// `row ++ other` in left-right order.
fn joined(input_is_left: bool, row: &[Value], other: &[Value]) -> Row {
    let (l, r) = if input_is_left {
        (row, other)
    } else {
        (other, row)
    };
    let mut out = Vec::with_capacity(l.len() + r.len());
    extend_copy(&mut out, l);
    extend_copy(&mut out, r);
    out
}

/// A row padded with NULLs for the other side's `other_arity` columns, in
/// left-right order.
fn padded(row_is_left: bool, row: &[Value], other_arity: usize) -> Row {
    let mut out = Vec::with_capacity(row.len() + other_arity);
    if row_is_left {
        extend_copy(&mut out, row);
        out.resize(row.len() + other_arity, Value::Null);
    } else {
        out.resize(other_arity, Value::Null);
        extend_copy(&mut out, row);
    }
    out
}
