//! `Calc`: a filter and a projection fused, as Flink's planner fuses them.
//!
//! Stateless and kind-preserving: a change passes with its row kind when its
//! row satisfies the predicate, and is projected. Because the same function
//! is applied to a row and to its later retraction, retractions stay exact.

use crate::changelog::Change;
use crate::expr::Expr;
use crate::operator::{OpResult, Operator};

pub struct CalcOperator {
    predicate: Option<Expr>,
    /// `None`: the identity projection.
    projection: Option<Vec<Expr>>,
}

impl CalcOperator {
    pub fn new(predicate: Option<Expr>, projection: Option<Vec<Expr>>) -> CalcOperator {
        CalcOperator {
            predicate,
            projection,
        }
    }
}

impl Operator for CalcOperator {
    fn process(
        &mut self,
        _input: usize,
        batch: Vec<Change>,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        out.reserve(batch.len());
        for c in batch {
            if let Some(p) = &self.predicate {
                if !p.is_true(&c.row) {
                    continue;
                }
            }
            match &self.projection {
                Some(exprs) => out.push(Change::new(c.kind, Expr::project(exprs, &c.row))),
                None => out.push(c),
            }
        }
        Ok(())
    }
}
