//! `ROW_NUMBER() OVER (PARTITION BY .. ORDER BY ..)` in a subquery kept
//! where it is 1, as Flink's deduplication is written:
//!
//! ```sql
//! SELECT a, b FROM (
//!   SELECT *, ROW_NUMBER() OVER (PARTITION BY a ORDER BY pt ASC) AS rn FROM t
//! ) WHERE rn = 1
//! ```
//!
//! [`match_row_number`] recognises the shape on the outer `SELECT`; the
//! subquery is bound without its row number and [`bind_deduplicate`] puts a
//! [`LogicalPlan::Deduplicate`] over it (Flink's `StreamPhysicalDeduplicateRule`:
//! ordered by a `PROCTIME()` or rowtime attribute, row number not selected).
//! What it cannot plan yet (a Top-N, the row number in the output, an
//! order by a plain column) is refused where it is written.

use super::catalog::Catalog;
use super::names::{err_at, At};
use crate::error::PlanError;
use crate::logical::{Field, LogicalPlan};
use operators::expr::Expr;
use operators::rank::deduplicate::{DedupOrder, Keep};
use sqlparser::ast::{self, Spanned};

/// An outer `SELECT` over a subquery numbered by `ROW_NUMBER()`.
pub(super) struct RowNumberQuery {
    /// The subquery without its row number, with its alias.
    pub factor: ast::TableFactor,
    partition_by: Vec<ast::Expr>,
    order_by: ast::OrderByExpr,
    row_number: ast::Ident,
    call: ast::Expr,
}

fn unsupported(what: impl Into<String>, node: &impl Spanned) -> PlanError {
    err_at(PlanError::unsupported(what), node)
}

fn is_row_number(e: &ast::Expr) -> Option<&ast::WindowSpec> {
    match e {
        ast::Expr::Function(f) if f.name.to_string().eq_ignore_ascii_case("ROW_NUMBER") => {
            match &f.over {
                Some(ast::WindowType::WindowSpec(w)) => Some(w),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether the text of `e` names `name` as a word (an identifier).
fn mentions(e: &impl std::fmt::Display, name: &str) -> bool {
    e.to_string()
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| w.eq_ignore_ascii_case(name))
}

/// The `N` of `rn = 1`, `rn <= N` or `rn < N + 1`, if `w` is one of them.
fn rank_end(w: &ast::Expr, rn: &str) -> Option<i64> {
    let ast::Expr::BinaryOp { left, op, right } = w else {
        return None;
    };
    let names_rn = match left.as_ref() {
        ast::Expr::Identifier(i) => i.value.eq_ignore_ascii_case(rn),
        ast::Expr::CompoundIdentifier(p) => {
            p.last().is_some_and(|i| i.value.eq_ignore_ascii_case(rn))
        }
        _ => false,
    };
    let ast::Expr::Value(v) = right.as_ref() else {
        return None;
    };
    let ast::Value::Number(n, _) = &v.value else {
        return None;
    };
    let n: i64 = n.parse().ok()?;
    if !names_rn {
        return None;
    }
    match op {
        ast::BinaryOperator::Eq if n == 1 => Some(1),
        ast::BinaryOperator::LtEq => Some(n),
        ast::BinaryOperator::Lt => Some(n - 1),
        _ => None,
    }
}

/// The row-number shape of `s`, if its FROM is a subquery with a
/// `ROW_NUMBER() OVER (...)` item; an error if it is one the lab cannot plan.
pub(super) fn match_row_number(s: &ast::Select) -> Result<Option<RowNumberQuery>, PlanError> {
    let [from] = s.from.as_slice() else {
        return Ok(None);
    };
    let ast::TableFactor::Derived {
        lateral: false,
        subquery,
        alias,
        sample: None,
    } = &from.relation
    else {
        return Ok(None);
    };
    let ast::SetExpr::Select(inner) = subquery.body.as_ref() else {
        return Ok(None);
    };
    let Some(position) = inner.projection.iter().position(|item| match item {
        ast::SelectItem::ExprWithAlias { expr, .. } | ast::SelectItem::UnnamedExpr(expr) => {
            is_row_number(expr).is_some()
        }
        _ => false,
    }) else {
        return Ok(None);
    };
    let (call, row_number) = match &inner.projection[position] {
        ast::SelectItem::ExprWithAlias { expr, alias } => (expr.clone(), alias.clone()),
        ast::SelectItem::UnnamedExpr(expr) => {
            return Err(unsupported(
                "ROW_NUMBER() needs a name (AS rn) to be filtered on",
                expr,
            ))
        }
        _ => unreachable!("matched above"),
    };
    let window = is_row_number(&call).expect("matched above");
    if !from.joins.is_empty() {
        return Err(unsupported(
            "a ROW_NUMBER() subquery joined in FROM is not supported",
            &from.joins[0].relation,
        ));
    }
    let end = s
        .selection
        .as_ref()
        .and_then(|w| rank_end(w, &row_number.value));
    match end {
        Some(1) => {}
        Some(n) if n > 1 => {
            return Err(unsupported(
                format!("Top-N ({} <= {n}) is not supported yet; deduplication ({} = 1) is", row_number.value, row_number.value),
                s.selection.as_ref().expect("has a WHERE"),
            ))
        }
        _ => {
            return Err(unsupported(
                format!(
                    "ROW_NUMBER() is supported when the outer query keeps only `WHERE {} = 1` (deduplication)",
                    row_number.value
                ),
                &call,
            ))
        }
    }
    for item in &s.projection {
        let selects_rn = match item {
            ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..) => true,
            other => mentions(other, &row_number.value),
        };
        if selects_rn {
            return Err(unsupported(
                format!(
                    "selecting the row number '{}' (or *) is a Rank, which is not supported yet: list the other columns",
                    row_number.value
                ),
                item,
            ));
        }
    }
    let [order_by] = window.order_by.as_slice() else {
        return Err(unsupported(
            "ROW_NUMBER() OVER needs exactly one ORDER BY column (a time attribute)",
            &call,
        ));
    };
    if window.window_frame.is_some() || window.window_name.is_some() {
        return Err(unsupported(
            "a window frame or name on ROW_NUMBER() is not supported",
            &call,
        ));
    }
    let mut without = subquery.as_ref().clone();
    if let ast::SetExpr::Select(sel) = without.body.as_mut() {
        sel.projection.remove(position);
    }
    Ok(Some(RowNumberQuery {
        factor: ast::TableFactor::Derived {
            lateral: false,
            subquery: Box::new(without),
            alias: alias.clone(),
            sample: None,
        },
        partition_by: window.partition_by.clone(),
        order_by: order_by.clone(),
        row_number,
        call,
    }))
}

fn column_of(e: &ast::Expr, fields: &[Field], what: &str) -> Result<usize, PlanError> {
    let name = match e {
        ast::Expr::Identifier(i) => &i.value,
        ast::Expr::CompoundIdentifier(p) if !p.is_empty() => &p[p.len() - 1].value,
        _ => {
            return Err(unsupported(
                format!("{what} takes columns of the subquery, found '{e}'"),
                e,
            ))
        }
    };
    fields
        .iter()
        .position(|f| f.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            err_at(
                PlanError::validation(format!(
                    "Column '{name}' not found in the ROW_NUMBER() subquery"
                )),
                e,
            )
        })
}

/// The time attribute column `c` of `plan` is, if any: a `PROCTIME()`
/// column or the watermark's rowtime column of the table it comes from.
fn time_attribute(plan: &LogicalPlan, c: usize, catalog: &Catalog) -> Option<DedupOrder> {
    match plan {
        LogicalPlan::Scan { table, .. } => {
            let def = catalog.get(table)?;
            if matches!(def.computed.get(c), Some(Some(Expr::ProcTime))) {
                return Some(DedupOrder::ProcTime);
            }
            def.watermark
                .as_ref()
                .filter(|w| w.rowtime == c)
                .map(|_| DedupOrder::RowTime(c))
        }
        LogicalPlan::Filter { input, .. } | LogicalPlan::Deduplicate { input, .. } => {
            time_attribute(input, c, catalog)
        }
        // A window TVF keeps its input's columns first (`window_time`, a
        // rowtime too in Flink, is not taken as one here).
        LogicalPlan::WindowTvf { input, .. } if c < input.schema().len() => {
            time_attribute(input, c, catalog)
        }
        LogicalPlan::Project { input, exprs, .. } => match exprs.get(c) {
            Some(Expr::Column(i)) => match time_attribute(input, *i, catalog)? {
                DedupOrder::ProcTime => Some(DedupOrder::ProcTime),
                DedupOrder::RowTime(_) => Some(DedupOrder::RowTime(c)),
            },
            _ => None,
        },
        _ => None,
    }
}

/// `plan` (the subquery bound without its row number, `fields` its
/// columns) deduplicated as the row number's window says.
pub(super) fn bind_deduplicate(
    q: &RowNumberQuery,
    plan: LogicalPlan,
    fields: &[Field],
    catalog: &Catalog,
) -> Result<LogicalPlan, PlanError> {
    let key = q
        .partition_by
        .iter()
        .map(|e| column_of(e, fields, "PARTITION BY"))
        .collect::<Result<Vec<_>, _>>()?;
    let time_col = column_of(&q.order_by.expr, fields, "ORDER BY")?;
    let Some(order) = time_attribute(&plan, time_col, catalog) else {
        return Err(unsupported(
            format!(
                "ROW_NUMBER() ordered by '{}', which is not a time attribute, is a Top-N: not supported yet (order by a PROCTIME() or rowtime column to deduplicate)",
                q.order_by.expr
            ),
            &q.order_by.expr,
        ));
    };
    let keep = match q.order_by.options.sort {
        None | Some(ast::OrderBySort::Asc) => Keep::FirstRow,
        Some(ast::OrderBySort::Desc) => Keep::LastRow,
        Some(ast::OrderBySort::Using(_)) => {
            return Err(unsupported(
                "ORDER BY ... USING is not supported",
                &At(q.call.span()),
            ))
        }
    };
    Ok(LogicalPlan::Deduplicate {
        input: Box::new(plan),
        key,
        keep,
        order,
        time_col,
        row_number: q.row_number.value.clone(),
    })
}
