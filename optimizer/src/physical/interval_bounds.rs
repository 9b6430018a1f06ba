//! Which join conditions make an interval join, as Flink's
//! `IntervalJoinUtil.extractWindowBoundsFromPredicate` decides: among the
//! conjuncts of the condition, comparisons of a rowtime attribute of the
//! left input with one of the right, each side a column plus or minus an
//! interval literal, that bound `left time - right time` from below and
//! from above (`l.ts BETWEEN r.ts - INTERVAL '5' SECOND AND r.ts +
//! INTERVAL '5' SECOND`, or the same with `>=`/`<=`, `>`/`<`, either side
//! first). A strict bound is one millisecond tighter.

use crate::catalog_view::CatalogView;
use crate::logical::LogicalPlan;
use operators::expr::{BinOp, Expr};
use operators::value::Value;

/// The bounds of an interval join.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntervalBounds {
    /// The rowtime column of the left input and of the right input.
    pub left_time: usize,
    pub right_time: usize,
    /// `left time - right time` lies in `[lower, upper]` milliseconds.
    pub lower: i64,
    pub upper: i64,
}

/// The interval bounds in `condition` (over `left ++ right`), if it has a
/// lower and an upper one over the same two rowtime attributes.
pub fn interval_bounds(
    left: &LogicalPlan,
    right: &LogicalPlan,
    condition: &Expr,
    catalog: &dyn CatalogView,
) -> Option<IntervalBounds> {
    let lw = left.schema().len();
    let conjuncts = condition.conjuncts();
    let (mut lower, mut upper, mut cols) = (None::<i64>, None::<i64>, None);
    for c in conjuncts {
        let Expr::Binary(op, a, b) = c else { continue };
        let (Some((ca, oa)), Some((cb, ob))) = (column_plus(a), column_plus(b)) else {
            continue;
        };
        // `ca + oa op cb + ob`, with the left column first.
        let (op, (l, ol), (r, or)) = match (ca < lw, cb < lw) {
            (true, false) => (*op, (ca, oa), (cb - lw, ob)),
            (false, true) => (flip(*op)?, (cb, ob), (ca - lw, oa)),
            _ => continue,
        };
        if !matches!(op, BinOp::Lt | BinOp::LtEq | BinOp::Gt | BinOp::GtEq) {
            continue;
        }
        if !is_rowtime(left, l, catalog) || !is_rowtime(right, r, catalog) {
            continue;
        }
        if cols.is_some_and(|p| p != (l, r)) {
            return None;
        }
        cols = Some((l, r));
        // l - r op k
        let k = or.checked_sub(ol)?;
        match op {
            BinOp::GtEq => lower = Some(lower.map_or(k, |v| v.max(k))),
            BinOp::Gt => {
                lower = Some(lower.map_or(k.saturating_add(1), |v| v.max(k.saturating_add(1))))
            }
            BinOp::LtEq => upper = Some(upper.map_or(k, |v| v.min(k))),
            _ => upper = Some(upper.map_or(k.saturating_sub(1), |v| v.min(k.saturating_sub(1)))),
        }
    }
    let (left_time, right_time) = cols?;
    let (lower, upper) = (lower?, upper?);
    (lower <= upper).then_some(IntervalBounds {
        left_time,
        right_time,
        lower,
        upper,
    })
}

/// `a op b` as `b op' a`.
fn flip(op: BinOp) -> Option<BinOp> {
    Some(match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::LtEq => BinOp::GtEq,
        BinOp::Gt => BinOp::Lt,
        BinOp::GtEq => BinOp::LtEq,
        _ => return None,
    })
}

/// `col`, `col + ms`, `col - ms` or `ms + col` (an interval literal).
fn column_plus(e: &Expr) -> Option<(usize, i64)> {
    match e {
        Expr::Column(c) => Some((*c, 0)),
        Expr::Binary(BinOp::Add, a, b) => match (&**a, &**b) {
            (Expr::Column(c), Expr::Literal(Value::Int(ms)))
            | (Expr::Literal(Value::Int(ms)), Expr::Column(c)) => Some((*c, *ms)),
            _ => None,
        },
        Expr::Binary(BinOp::Sub, a, b) => match (&**a, &**b) {
            (Expr::Column(c), Expr::Literal(Value::Int(ms))) => Some((*c, ms.checked_neg()?)),
            _ => None,
        },
        _ => None,
    }
}

/// Whether column `c` of `plan` is the rowtime attribute of the table it
/// is read from (through filters and projections that pass it on).
fn is_rowtime(plan: &LogicalPlan, c: usize, catalog: &dyn CatalogView) -> bool {
    match plan {
        LogicalPlan::Scan { table, .. } => catalog
            .table(table)
            .and_then(|def| def.watermark.as_ref())
            .is_some_and(|w| w.rowtime == c),
        LogicalPlan::Filter { input, .. } => is_rowtime(input, c, catalog),
        LogicalPlan::Project { input, exprs, .. } => match exprs.get(c) {
            Some(Expr::Column(i)) => is_rowtime(input, *i, catalog),
            _ => false,
        },
        _ => false,
    }
}
