//! `Calc`: a filter and a projection fused, as Flink's planner fuses them.
//!
//! Stateless and kind-preserving: a change passes with its row kind when its
//! row satisfies the predicate, and is projected. Because the same function
//! is applied to a row and to its later retraction, retractions stay exact.
//!
//! The operator owns its input rows (see `operator.rs`), so a projection of
//! plain columns moves their values instead of cloning them: the Calcs the
//! planner puts between joins to drop columns copy no string.

use crate::changelog::Change;
use crate::expr::Expr;
use crate::operator::{OpResult, Operator};
use crate::value::Row;

pub struct CalcOperator {
    predicate: Option<Expr>,
    projection: Projection,
}

/// How a row is projected.
enum Projection {
    Identity,
    /// Plain columns in increasing order: the row compacted in place; the
    /// first `stay` of them are already in their place (a Calc between
    /// joins drops a column near the end of a wide row).
    Retain {
        cols: Vec<usize>,
        stay: usize,
    },
    /// Plain columns, each once: their values moved into a new row.
    Move(Vec<usize>),
    /// Anything else: each expression evaluated.
    Exprs(Vec<Expr>),
}

impl Projection {
    fn of(exprs: Option<Vec<Expr>>) -> Projection {
        let Some(exprs) = exprs else {
            return Projection::Identity;
        };
        let columns: Option<Vec<usize>> = exprs
            .iter()
            .map(|e| match e {
                Expr::Column(c) => Some(*c),
                _ => None,
            })
            .collect();
        match columns {
            Some(cols) if cols.windows(2).all(|w| w[0] < w[1]) => {
                let stay = cols
                    .iter()
                    .enumerate()
                    .take_while(|(j, &c)| *j == c)
                    .count();
                Projection::Retain { cols, stay }
            }
            Some(cols) if distinct(&cols) => Projection::Move(cols),
            _ => Projection::Exprs(exprs),
        }
    }

    fn apply(&self, mut row: Row) -> Row {
        match self {
            Projection::Identity => row,
            Projection::Retain { cols, stay } => {
                // Increasing, so column `c` is at or after slot `j`.
                for (j, &c) in cols.iter().enumerate().skip(*stay) {
                    row.swap(j, c);
                }
                row.truncate(cols.len());
                row
            }
            Projection::Move(cols) => cols.iter().map(|&c| std::mem::take(&mut row[c])).collect(),
            Projection::Exprs(exprs) => Expr::project(exprs, &row),
        }
    }
}

fn distinct(cols: &[usize]) -> bool {
    let mut sorted = cols.to_vec();
    sorted.sort_unstable();
    sorted.windows(2).all(|w| w[0] != w[1])
}

impl CalcOperator {
    pub fn new(predicate: Option<Expr>, projection: Option<Vec<Expr>>) -> CalcOperator {
        CalcOperator {
            predicate,
            projection: Projection::of(projection),
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
            out.push(Change::new(c.kind, self.projection.apply(c.row)));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    fn project(exprs: Vec<Expr>) -> Row {
        let row = vec![
            Value::Int(0),
            Value::str("one"),
            Value::Int(2),
            Value::str("three"),
        ];
        Projection::of(Some(exprs)).apply(row)
    }

    #[test]
    fn plain_columns_move_in_any_order_and_expressions_evaluate() {
        let c = Expr::Column;
        // Retain: increasing.
        assert_eq!(
            project(vec![c(1), c(3)]),
            vec![Value::str("one"), Value::str("three")]
        );
        assert_eq!(project(vec![c(0), c(2), c(3)]).len(), 3);
        // Move: any order, each once.
        assert_eq!(
            project(vec![c(3), c(0), c(1)]),
            vec![Value::str("three"), Value::Int(0), Value::str("one")]
        );
        // A column twice, or an expression: evaluated.
        assert_eq!(
            project(vec![c(1), c(1)]),
            vec![Value::str("one"), Value::str("one")]
        );
        assert_eq!(
            project(vec![c(0), Expr::lit(Value::Int(7))]),
            vec![Value::Int(0), Value::Int(7)]
        );
        assert_eq!(project(vec![]), Vec::<Value>::new());
    }
}
