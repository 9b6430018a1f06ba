//! Filters into join inputs, and outer joins the WHERE clause undoes made
//! inner, as Flink's logical optimization does (Calcite's `FilterJoinRule`
//! and `JoinConditionPushRule`).
//!
//! ```text
//! before (Nexmark q3):
//!   Filter(category = 10 AND state IN ('OR', 'ID', 'CA'))
//!   +- Join(seller = p.id, INNER)
//!      :- Scan(auction)
//!      +- Scan(person)
//! after:
//!   Join(seller = p.id, INNER)
//!   :- Filter(category = 10) -- Scan(auction)
//!   +- Filter(state IN ('OR', 'ID', 'CA')) -- Scan(person)
//! ```
//!
//! For a WHERE filter directly over a join (or over a projection of one,
//! whose expressions it is rewritten through), conjunct by conjunct:
//!
//! 1. A conjunct that is never TRUE when the columns of a side the join
//!    pads with NULLs are NULL removes every padded row of that side: the
//!    join need not pad it (LEFT becomes INNER, FULL becomes LEFT or
//!    RIGHT). Exact: the rows the padding adds are the rows the filter
//!    drops. Decided from the conjunct's form as Calcite's `Strong` does
//!    (`b.w > 0`, `a.v < b.w`: yes; `b.w IS NULL`, `CASE ...`: no), so
//!    the lab makes the joins inner that Flink does.
//! 2. A conjunct that reads only one side, when that side is not padded,
//!    filters that input instead: the side's rows reach the output
//!    unchanged or not at all, so filtering them first changes nothing.
//! 3. Over an INNER join a conjunct that reads both sides joins the
//!    condition (an inner join is a filter of the cross product): a column
//!    equality between the sides, of one type, becomes a key pair.
//! 4. The rest stays a filter above the join. So do conjuncts that read
//!    no column, and, of a lookup join, any on the looked-up table (it
//!    stays a table scan, see `physical/planner.rs`).
//!
//! And for a join's own ON condition: a conjunct that reads only the side
//! whose unmatched rows are not kept filters that input (an INNER join
//! both, a LEFT join its right, a RIGHT join its left). A conjunct on a
//! kept side stays: the row it fails is kept, padded. Lookup joins keep
//! their ON condition whole.

use super::map_inputs;
use crate::logical::{JoinKind, LogicalPlan, Schema};
use operators::expr::{BinOp, Expr};
use operators::value::Value;

/// The plan with every filter pushed as far into joins as it goes.
pub fn apply(plan: LogicalPlan) -> LogicalPlan {
    match plan {
        LogicalPlan::Filter { input, predicate } => match *input {
            join @ LogicalPlan::Join { .. } => {
                let (join, above) = filter_join(join, predicate.into_conjuncts());
                with_filter(apply(join), above)
            }
            LogicalPlan::Project {
                input: inner,
                exprs,
                schema,
            } if matches!(*inner, LogicalPlan::Join { .. }) => {
                // Through the projection: its columns are its expressions.
                let below = predicate.replace_columns(&|c| exprs[c].clone());
                let filtered = LogicalPlan::Filter {
                    input: inner,
                    predicate: below,
                };
                LogicalPlan::Project {
                    input: Box::new(apply(filtered)),
                    exprs,
                    schema,
                }
            }
            other => LogicalPlan::Filter {
                input: Box::new(apply(other)),
                predicate,
            },
        },
        LogicalPlan::Join { .. } => push_join_condition(plan),
        other => map_inputs(other, &mut apply),
    }
}

/// Which inputs of a join a conjunct reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reads {
    Nothing,
    Left,
    Right,
    Both,
}

fn reads(c: &Expr, nl: usize) -> Reads {
    let mut cols = Vec::new();
    c.columns(&mut cols);
    match (cols.iter().any(|&x| x < nl), cols.iter().any(|&x| x >= nl)) {
        (false, false) => Reads::Nothing,
        (true, false) => Reads::Left,
        (false, true) => Reads::Right,
        (true, true) => Reads::Both,
    }
}

/// Whether `e` is NULL whenever every column `side` holds is NULL, read
/// from its form as Calcite's `Strong` does: a column of the side, or a
/// strict operator (comparisons, arithmetic, `||`, `NOT`, `IN`, casts)
/// over such an operand; `AND`/`OR` only when both operands are.
fn null_when_null(e: &Expr, side: &dyn Fn(usize) -> bool) -> bool {
    let n = |x: &Expr| null_when_null(x, side);
    match e {
        Expr::Column(c) => side(*c),
        Expr::Literal(v) => v.is_null(),
        Expr::Binary(BinOp::And | BinOp::Or, l, r) => n(l) && n(r),
        Expr::Binary(_, l, r) => n(l) || n(r),
        Expr::Not(x) | Expr::Neg(x) | Expr::ToDouble(x) => n(x),
        Expr::DecimalTimes { expr, .. } | Expr::ToTimestamp { expr, .. } => n(expr),
        Expr::InList { expr, .. } => n(expr),
        Expr::IsNull { .. }
        | Expr::Case { .. }
        | Expr::Hash(_)
        | Expr::ProcTime
        | Expr::StringFn(..) => false,
    }
}

/// Whether `c` is never TRUE when every column `side` holds is NULL: a
/// filter on `c` drops every row NULL-padded on that side.
fn rejects_nulls(c: &Expr, side: &dyn Fn(usize) -> bool) -> bool {
    let t = |x: &Expr| rejects_nulls(x, side);
    null_when_null(c, side)
        || match c {
            Expr::Literal(Value::Bool(false)) => true,
            Expr::Binary(BinOp::And, l, r) => t(l) || t(r),
            Expr::Binary(BinOp::Or, l, r) => t(l) && t(r),
            Expr::IsNull {
                expr,
                negated: true,
            } => null_when_null(expr, side),
            _ => false,
        }
}

/// Steps 1-4 for the WHERE conjuncts over `join`: the join with its
/// inputs filtered (not yet pushed further) and the conjuncts left above.
fn filter_join(join: LogicalPlan, conjuncts: Vec<Expr>) -> (LogicalPlan, Vec<Expr>) {
    let LogicalPlan::Join {
        left,
        right,
        mut kind,
        mut left_keys,
        mut right_keys,
        residual,
        mut schema,
        hints,
        lookup,
    } = join
    else {
        unreachable!("filter_join is called on joins")
    };
    let nl = left.schema().len();
    // 1. Outer joins the filter undoes.
    let (left_side, right_side) = (|c: usize| c < nl, |c: usize| c >= nl);
    for c in &conjuncts {
        if kind.keeps_right() && rejects_nulls(c, &left_side) {
            kind = match kind {
                JoinKind::Full => JoinKind::Left,
                _ => JoinKind::Inner,
            }
        }
        if kind.keeps_left() && rejects_nulls(c, &right_side) {
            kind = match kind {
                JoinKind::Full => JoinKind::Right,
                _ => JoinKind::Inner,
            }
        }
    }
    set_nullability(&mut schema, &left, &right, kind);
    // 2-4.
    let (mut to_left, mut to_right, mut to_join, mut above) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for c in conjuncts {
        match reads(&c, nl) {
            Reads::Left if !kind.keeps_right() => to_left.push(c),
            Reads::Right if !kind.keeps_left() && lookup.is_none() => {
                to_right.push(c.replace_columns(&|x| Expr::Column(x - nl)))
            }
            Reads::Both if kind == JoinKind::Inner && lookup.is_none() => to_join.push(c),
            _ => above.push(c),
        }
    }
    let mut residual_conjuncts = residual.map(Expr::into_conjuncts).unwrap_or_default();
    for c in to_join {
        match key_pair(&c, nl, &schema) {
            Some((l, r)) if !left_keys.iter().zip(&right_keys).any(|p| p == (&l, &r)) => {
                left_keys.push(l);
                right_keys.push(r);
            }
            Some(_) => {}
            None => residual_conjuncts.push(c),
        }
    }
    let join = LogicalPlan::Join {
        left: Box::new(with_filter(*left, to_left)),
        right: Box::new(with_filter(*right, to_right)),
        kind,
        left_keys,
        right_keys,
        residual: Expr::and_all(residual_conjuncts),
        schema,
        hints,
        lookup,
    };
    (join, above)
}

/// The join's columns are NULL-padded as its kind says (the binder's rule).
fn set_nullability(schema: &mut Schema, left: &LogicalPlan, right: &LogicalPlan, kind: JoinKind) {
    let nl = left.schema().len();
    for (i, f) in schema.fields.iter_mut().enumerate() {
        f.nullable = if i < nl {
            left.schema().fields[i].nullable || kind.keeps_right()
        } else {
            right.schema().fields[i - nl].nullable || kind.keeps_left()
        };
    }
}

/// `(left column, right column)` when `c` equates a column of each side
/// of one type (integers hash alike, as the binder's join keys).
fn key_pair(c: &Expr, nl: usize, schema: &Schema) -> Option<(usize, usize)> {
    let Expr::Binary(BinOp::Eq, a, b) = c else {
        return None;
    };
    let (Expr::Column(a), Expr::Column(b)) = (a.as_ref(), b.as_ref()) else {
        return None;
    };
    let (l, r) = match (*a < nl, *b < nl) {
        (true, false) => (*a, *b),
        (false, true) => (*b, *a),
        _ => return None,
    };
    let (tl, tr) = (schema.fields[l].data_type, schema.fields[r].data_type);
    (tl == tr || (tl.is_integer() && tr.is_integer())).then_some((l, r - nl))
}

/// A join's ON conjuncts on the side whose unmatched rows are not kept
/// filter that input; then the inputs are pushed into.
fn push_join_condition(join: LogicalPlan) -> LogicalPlan {
    let LogicalPlan::Join {
        left,
        right,
        kind,
        left_keys,
        right_keys,
        residual,
        schema,
        hints,
        lookup,
    } = join
    else {
        unreachable!("push_join_condition is called on joins")
    };
    let nl = left.schema().len();
    let (mut to_left, mut to_right, mut stay) = (Vec::new(), Vec::new(), Vec::new());
    for c in residual.map(Expr::into_conjuncts).unwrap_or_default() {
        match reads(&c, nl) {
            Reads::Left if lookup.is_none() && !kind.keeps_left() => to_left.push(c),
            Reads::Right if lookup.is_none() && !kind.keeps_right() => {
                to_right.push(c.replace_columns(&|x| Expr::Column(x - nl)))
            }
            _ => stay.push(c),
        }
    }
    LogicalPlan::Join {
        left: Box::new(apply(with_filter(*left, to_left))),
        right: Box::new(apply(with_filter(*right, to_right))),
        kind,
        left_keys,
        right_keys,
        residual: Expr::and_all(stay),
        schema,
        hints,
        lookup,
    }
}

/// `input` filtered by the conjuncts (itself when there are none); one
/// filter, when `input` is a filter already.
fn with_filter(input: LogicalPlan, conjuncts: Vec<Expr>) -> LogicalPlan {
    let Some(extra) = Expr::and_all(conjuncts) else {
        return input;
    };
    match input {
        LogicalPlan::Filter { input, predicate } => LogicalPlan::Filter {
            input,
            predicate: Expr::bin(BinOp::And, predicate, extra),
        },
        other => LogicalPlan::Filter {
            input: Box::new(other),
            predicate: extra,
        },
    }
}
