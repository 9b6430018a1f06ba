//! `Join`: the binary regular join, INNER and LEFT, one record at a time.
//!
//! Semantics: both inputs are kept in state (see [`super::join_state`]), so
//! at any point the emitted changelog materialises to the batch join of the
//! inputs seen so far: an accumulated row joins every stored row of the
//! other side with the same key that satisfies the residual condition, and
//! a retracted row retracts exactly those pairs. For LEFT joins the left
//! row's number of matches decides when its NULL-padded row appears (no
//! matches) and disappears (first match).
//!
//! Emission follows Flink's `StreamingJoinOperator` (the synchronous one):
//! an INNER join forwards the input's row kind; a LEFT join emits `+I` and
//! `-D`. Order per input record:
//! - accumulate on the outer side: `+I[row+NULL]` if nothing matches, else
//!   `+I[row+other]` per match;
//! - accumulate on the inner side: for each matched outer row with no
//!   matches yet `-D[other+NULL]`, then the joined rows;
//! - retract: the joined rows (`-D`, or the input kind on an inner join),
//!   then for each matched outer row that loses its last match
//!   `+I[other+NULL]`; an unmatched outer row retracts `-D[row+NULL]`.
//!
//! Rows whose join key contains NULL match nothing (SQL equality).

use super::join_state::{JoinSideState, JoinStateLayout};
use crate::changelog::{Change, RowKind};
use crate::expr::Expr;
use crate::operator::{OpResult, Operator};
use crate::state::{StateBackend, StateReport};
use crate::value::{Row, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum JoinType {
    Inner,
    Left,
}

#[derive(Clone, Debug)]
pub struct JoinSpec {
    pub join_type: JoinType,
    pub left_keys: Vec<usize>,
    pub right_keys: Vec<usize>,
    pub left_arity: usize,
    pub right_arity: usize,
    /// Evaluated over `left ++ right`.
    pub residual: Option<Expr>,
    pub left_layout: JoinStateLayout,
    pub right_layout: JoinStateLayout,
}

pub struct RegularJoinOperator {
    spec: JoinSpec,
    sides: [JoinSideState; 2],
    key_buf: Vec<Value>,
    joined_buf: Vec<Value>,
    rows_visited: u64,
}

impl RegularJoinOperator {
    pub fn new(
        backend: &StateBackend,
        scope: &str,
        spec: JoinSpec,
    ) -> OpResult<RegularJoinOperator> {
        let left_outer = spec.join_type == JoinType::Left;
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
            false,
            spec.right_arity,
        )?;
        Ok(RegularJoinOperator {
            spec,
            sides: [left, right],
            key_buf: Vec::new(),
            joined_buf: Vec::new(),
            rows_visited: 0,
        })
    }

    fn joined(&self, input_is_left: bool, row: &[Value], other: &[Value]) -> Row {
        let (l, r) = if input_is_left {
            (row, other)
        } else {
            (other, row)
        };
        let mut out = Vec::with_capacity(l.len() + r.len());
        out.extend_from_slice(l);
        out.extend_from_slice(r);
        out
    }

    fn padded(&self, left: &[Value]) -> Row {
        let mut out = Vec::with_capacity(left.len() + self.spec.right_arity);
        out.extend_from_slice(left);
        out.resize(left.len() + self.spec.right_arity, Value::Null);
        out
    }

    fn process_one(&mut self, side: usize, change: Change, out: &mut Vec<Change>) -> OpResult<()> {
        let input_is_left = side == 0;
        let is_left_join = self.spec.join_type == JoinType::Left;
        let input_outer = is_left_join && input_is_left;
        let other_outer = is_left_join && !input_is_left;
        let row = &change.row;
        let keys = if input_is_left {
            &self.spec.left_keys
        } else {
            &self.spec.right_keys
        };
        self.key_buf.clear();
        self.key_buf.extend(keys.iter().map(|&i| row[i].clone()));
        let key = std::mem::take(&mut self.key_buf);
        let null_key = key.iter().any(Value::is_null);

        let matches = if null_key {
            Vec::new()
        } else {
            let residual = self.spec.residual.as_ref();
            let joined_buf = &mut self.joined_buf;
            let visited = &mut self.rows_visited;
            self.sides[1 - side].matches(&key, |other| {
                *visited += 1;
                match residual {
                    None => true,
                    Some(p) => {
                        joined_buf.clear();
                        if input_is_left {
                            joined_buf.extend_from_slice(row);
                            joined_buf.extend_from_slice(other);
                        } else {
                            joined_buf.extend_from_slice(other);
                            joined_buf.extend_from_slice(row);
                        }
                        p.is_true(joined_buf)
                    }
                }
            })?
        };
        let total: i64 = matches.iter().map(|m| m.count).sum();

        if change.kind.is_accumulate() {
            if input_outer {
                if matches.is_empty() {
                    out.push(Change::new(RowKind::Insert, self.padded(row)));
                } else {
                    for m in &matches {
                        for _ in 0..m.count {
                            out.push(Change::new(RowKind::Insert, self.joined(true, row, &m.row)));
                        }
                    }
                }
                self.sides[side].add(&key, row, total)?;
            } else {
                self.sides[side].add(&key, row, 0)?;
                if !matches.is_empty() {
                    let kind = if other_outer {
                        for m in &matches {
                            if m.associations == 0 {
                                for _ in 0..m.count {
                                    out.push(Change::new(RowKind::Delete, self.padded(&m.row)));
                                }
                            }
                            self.sides[1 - side].set_associations(
                                &key,
                                &m.row,
                                m.associations + 1,
                            )?;
                        }
                        RowKind::Insert
                    } else {
                        change.kind
                    };
                    for m in &matches {
                        for _ in 0..m.count {
                            out.push(Change::new(kind, self.joined(input_is_left, row, &m.row)));
                        }
                    }
                }
            }
        } else {
            self.sides[side].retract(&key, row)?;
            if matches.is_empty() {
                if input_outer {
                    out.push(Change::new(RowKind::Delete, self.padded(row)));
                }
            } else {
                let kind = if input_outer {
                    RowKind::Delete
                } else {
                    change.kind
                };
                for m in &matches {
                    for _ in 0..m.count {
                        out.push(Change::new(kind, self.joined(input_is_left, row, &m.row)));
                    }
                }
                if other_outer {
                    for m in &matches {
                        if m.associations == 1 {
                            for _ in 0..m.count {
                                out.push(Change::new(RowKind::Insert, self.padded(&m.row)));
                            }
                        }
                        self.sides[1 - side].set_associations(&key, &m.row, m.associations - 1)?;
                    }
                }
            }
        }
        self.key_buf = key;
        Ok(())
    }
}

impl Operator for RegularJoinOperator {
    fn process(&mut self, input: usize, batch: Vec<Change>, out: &mut Vec<Change>) -> OpResult<()> {
        for c in batch {
            self.process_one(input, c, out)?;
        }
        Ok(())
    }

    fn state_reports(&self) -> Vec<StateReport> {
        vec![self.sides[0].report(), self.sides[1].report()]
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("rows_visited", self.rows_visited)]
    }
}
