//! `Expand`: emits each input change once per projection, with the same
//! row kind. Stateless, so retractions stay exact: a retracted row is
//! expanded into exactly the rows its accumulation produced.

use crate::changelog::Change;
use crate::expr::Expr;
use crate::operator::{OpResult, Operator};

pub struct ExpandOperator {
    projections: Vec<Vec<Expr>>,
}

impl ExpandOperator {
    pub fn new(projections: Vec<Vec<Expr>>) -> ExpandOperator {
        ExpandOperator { projections }
    }
}

impl Operator for ExpandOperator {
    fn process(
        &mut self,
        _input: usize,
        batch: Vec<Change>,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        out.reserve(batch.len() * self.projections.len());
        for c in &batch {
            for p in &self.projections {
                out.push(Change::new(c.kind, Expr::project(p, &c.row)));
            }
        }
        Ok(())
    }
}
