//! `ROW_NUMBER() OVER (PARTITION BY .. ORDER BY ..)` in a subquery kept in
//! a range of row numbers, as Flink's deduplication and Top-N are written:
//!
//! ```sql
//! SELECT a, b FROM (
//!   SELECT *, ROW_NUMBER() OVER (PARTITION BY a ORDER BY pt ASC) AS rn FROM t
//! ) WHERE rn = 1
//! SELECT a, b, c, rn FROM (
//!   SELECT *, ROW_NUMBER() OVER (PARTITION BY a ORDER BY c DESC) AS rn FROM t
//! ) WHERE rn <= 3
//! ```
//!
//! [`match_row_number`] recognises the shape on the outer `SELECT` (the
//! range from `rn <= N`, `rn < N`, `rn = N`, `rn BETWEEN a AND b`; other
//! conjuncts of the `WHERE` apply after the numbering); the subquery is
//! bound without its row number and [`bind_row_number`] puts over it a
//! [`LogicalPlan::Deduplicate`] where Flink's `StreamPhysicalDeduplicateRule`
//! would (`rn = 1`, ordered by one `PROCTIME()` or rowtime attribute, row
//! number not selected) and a [`LogicalPlan::Rank`] otherwise. A qualified
//! column of the window (`B.price`) the subquery does not select as it is
//! becomes a hidden column of the subquery, dropped after the numbering. `RANK()`
//! and `DENSE_RANK()` are refused, as Flink's streaming runtime does.

use super::catalog::Catalog;
use super::names::{err_at, At};
use crate::error::PlanError;
use crate::logical::{Field, LogicalPlan, Schema};
use operators::expr::Expr;
use operators::rank::deduplicate::{DedupOrder, Keep};
use operators::rank::topn::SortField;
use operators::value::DataType;
use sqlparser::ast::{self, Spanned};

/// An outer `SELECT` over a subquery numbered by `ROW_NUMBER()`.
pub(super) struct RowNumberQuery {
    /// The subquery without its row number, with its alias.
    pub factor: ast::TableFactor,
    partition_by: Vec<ast::Expr>,
    order_by: Vec<ast::OrderByExpr>,
    /// How many columns the subquery selects only for the window's keys
    /// (its last ones), dropped after the numbering.
    hidden: usize,
    row_number: ast::Ident,
    call: ast::Expr,
    /// The kept row numbers, 1-based and inclusive.
    range: (u64, u64),
    /// Whether the outer query selects the row number (Flink's
    /// `outputRankNumber`).
    output_rank_number: bool,
    /// The outer `WHERE`'s conjuncts that are not about the row number,
    /// applied after the numbering.
    pub residual: Option<ast::Expr>,
}

fn unsupported(what: impl Into<String>, node: &impl Spanned) -> PlanError {
    err_at(PlanError::unsupported(what), node)
}

/// The window of a `ROW_NUMBER()`, `RANK()` or `DENSE_RANK()` call, and the
/// function's name.
fn ranking_call(e: &ast::Expr) -> Option<(String, &ast::WindowSpec)> {
    match e {
        ast::Expr::Function(f) => {
            let name = f.name.to_string().to_ascii_uppercase();
            if !matches!(name.as_str(), "ROW_NUMBER" | "RANK" | "DENSE_RANK") {
                return None;
            }
            match &f.over {
                Some(ast::WindowType::WindowSpec(w)) => Some((name, w)),
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

fn names(e: &ast::Expr, rn: &str) -> bool {
    match e {
        ast::Expr::Identifier(i) => i.value.eq_ignore_ascii_case(rn),
        ast::Expr::CompoundIdentifier(p) => {
            p.last().is_some_and(|i| i.value.eq_ignore_ascii_case(rn))
        }
        ast::Expr::Nested(e) => names(e, rn),
        _ => false,
    }
}

fn integer(e: &ast::Expr) -> Option<i64> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n.parse().ok(),
            _ => None,
        },
        ast::Expr::Nested(e) => integer(e),
        _ => None,
    }
}

/// The bounds one conjunct puts on the row number `rn` (`rn <= N`, `rn <
/// N`, `rn = N`, `rn >= N`, `rn > N`, `rn BETWEEN a AND b`, or the literal
/// first), as (lowest kept, highest kept); `None` if it is not one.
fn bounds(w: &ast::Expr, rn: &str) -> Option<(Option<i64>, Option<i64>)> {
    use ast::BinaryOperator as Op;
    match w {
        ast::Expr::Nested(e) => bounds(e, rn),
        ast::Expr::Between {
            expr,
            negated: false,
            low,
            high,
        } if names(expr, rn) => Some((Some(integer(low)?), Some(integer(high)?))),
        ast::Expr::BinaryOp { left, op, right } => {
            let (n, op) = if names(left, rn) {
                (integer(right)?, op.clone())
            } else if names(right, rn) {
                let flipped = match op {
                    Op::Lt => Op::Gt,
                    Op::LtEq => Op::GtEq,
                    Op::Gt => Op::Lt,
                    Op::GtEq => Op::LtEq,
                    other => other.clone(),
                };
                (integer(left)?, flipped)
            } else {
                return None;
            };
            match op {
                Op::Eq => Some((Some(n), Some(n))),
                Op::LtEq => Some((None, Some(n))),
                Op::Lt => Some((None, Some(n.saturating_sub(1)))),
                Op::GtEq => Some((Some(n), None)),
                Op::Gt => Some((Some(n.saturating_add(1)), None)),
                _ => None,
            }
        }
        _ => None,
    }
}

fn conjuncts(e: &ast::Expr, out: &mut Vec<ast::Expr>) {
    match e {
        ast::Expr::BinaryOp {
            left,
            op: ast::BinaryOperator::And,
            right,
        } => {
            conjuncts(left, out);
            conjuncts(right, out);
        }
        ast::Expr::Nested(inner)
            if matches!(
                inner.as_ref(),
                ast::Expr::BinaryOp {
                    op: ast::BinaryOperator::And,
                    ..
                }
            ) =>
        {
            conjuncts(inner, out)
        }
        other => out.push(other.clone()),
    }
}

/// The kept range of the row number `rn` in `where_`, and what else it
/// keeps; an error naming what is not a bound on `rn` it can use.
fn rank_range(
    where_: Option<&ast::Expr>,
    rn: &str,
    call: &ast::Expr,
) -> Result<((u64, u64), Option<ast::Expr>), PlanError> {
    let mut parts = Vec::new();
    if let Some(w) = where_ {
        conjuncts(w, &mut parts);
    }
    let (mut low, mut high): (i64, Option<i64>) = (1, None);
    let mut rest: Vec<ast::Expr> = Vec::new();
    for part in parts {
        match bounds(&part, rn) {
            Some((l, h)) => {
                if let Some(l) = l {
                    low = low.max(l);
                }
                if let Some(h) = h {
                    high = Some(high.map_or(h, |x| x.min(h)));
                }
            }
            None if mentions(&part, rn) => {
                return Err(unsupported(
                    format!(
                        "the row number '{rn}' can only be bounded by integer literals (`{rn} <= N`, `{rn} < N`, `{rn} = N`, `{rn} BETWEEN a AND b`)"
                    ),
                    &part,
                ))
            }
            None => rest.push(part),
        }
    }
    let Some(high) = high else {
        return Err(unsupported(
            format!(
                "ROW_NUMBER() needs an upper bound on '{rn}' in the outer WHERE (`{rn} <= N`: a Top-N, or `{rn} = 1`: a deduplication); Flink's streaming rank must have a rank end"
            ),
            &At(where_.map_or_else(|| call.span(), |w| w.span())),
        ));
    };
    if high < low || high < 1 {
        return Err(unsupported(
            format!("the bounds on '{rn}' keep no row ({low} to {high})"),
            &At(where_.map_or_else(|| call.span(), |w| w.span())),
        ));
    }
    let residual = rest.into_iter().reduce(|a, b| ast::Expr::BinaryOp {
        left: Box::new(a),
        op: ast::BinaryOperator::And,
        right: Box::new(b),
    });
    Ok(((low as u64, high as u64), residual))
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
            ranking_call(expr).is_some()
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
    let (function, window) = ranking_call(&call).expect("matched above");
    if function != "ROW_NUMBER" {
        return Err(unsupported(
            format!(
                "{function}() on a streaming table is not supported (as in Flink's streaming Top-N, whose functions take ROW_NUMBER() only): use ROW_NUMBER()"
            ),
            &call,
        ));
    }
    if !from.joins.is_empty() {
        return Err(unsupported(
            "a ROW_NUMBER() subquery joined in FROM is not supported",
            &from.joins[0].relation,
        ));
    }
    let (range, residual) = rank_range(s.selection.as_ref(), &row_number.value, &call)?;
    let mut output_rank_number = false;
    for item in &s.projection {
        let selects_rn = match item {
            ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..) => {
                if position + 1 != inner.projection.len() {
                    return Err(unsupported(
                        format!(
                            "SELECT * over a subquery whose row number '{}' is not its last item: list the columns, or put the row number last",
                            row_number.value
                        ),
                        item,
                    ));
                }
                true
            }
            other => mentions(other, &row_number.value),
        };
        output_rank_number |= selects_rn;
    }
    if window.order_by.is_empty() {
        return Err(unsupported(
            "ROW_NUMBER() OVER needs an ORDER BY (Flink's streaming Top-N sorts by it)",
            &call,
        ));
    }
    if window.window_frame.is_some() || window.window_name.is_some() {
        return Err(unsupported(
            "a window frame or name on ROW_NUMBER() is not supported",
            &call,
        ));
    }
    let mut without = subquery.as_ref().clone();
    let mut partition_by = window.partition_by.clone();
    let mut order_by = window.order_by.clone();
    let mut hidden = 0;
    if let ast::SetExpr::Select(sel) = without.body.as_mut() {
        sel.projection.remove(position);
        let exprs = partition_by
            .iter_mut()
            .chain(order_by.iter_mut().map(|o| &mut o.expr));
        for e in exprs {
            hidden += usize::from(select_qualified(e, &mut sel.projection, hidden));
        }
    }
    Ok(Some(RowNumberQuery {
        factor: ast::TableFactor::Derived {
            lateral: false,
            subquery: Box::new(without),
            alias: alias.clone(),
            sample: None,
        },
        partition_by,
        order_by,
        hidden,
        row_number,
        call,
        range,
        output_rank_number,
        residual,
    }))
}

/// Makes the qualified column `e` of a window's `PARTITION BY` or `ORDER
/// BY` (`B.price`) a column of the subquery: the item that selects it as
/// it is, else a hidden item added to `projection`, named after `hidden`
/// (returns true then). The window reads the subquery's FROM, so it may
/// order by a column the subquery does not select (Nexmark q9 orders by
/// `B.dateTime`, selected only as `bid_dateTime`).
fn select_qualified(
    e: &mut ast::Expr,
    projection: &mut Vec<ast::SelectItem>,
    hidden: usize,
) -> bool {
    let ast::Expr::CompoundIdentifier(parts) = &*e else {
        return false;
    };
    let Some(last) = parts.last().cloned() else {
        return false;
    };
    let wildcard = by_wildcard(parts, projection);
    let selected = projection
        .iter()
        .any(|item| matches!(item, ast::SelectItem::UnnamedExpr(x) if x == &*e));
    if selected || wildcard {
        *e = ast::Expr::Identifier(last);
        return false;
    }
    let name = ast::Ident::new(format!("$rank_key{hidden}"));
    projection.push(ast::SelectItem::ExprWithAlias {
        expr: e.clone(),
        alias: name.clone(),
    });
    *e = ast::Expr::Identifier(name);
    true
}

/// Whether `X.c` (`parts`) is selected as `c` by the projection's one
/// wildcard, `X.*`, with no other item named `c`.
fn by_wildcard(parts: &[ast::Ident], projection: &[ast::SelectItem]) -> bool {
    let [relation, column] = parts else {
        return false;
    };
    let mut wildcards = projection.iter().filter(|item| {
        matches!(
            item,
            ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..)
        )
    });
    let covered = match (wildcards.next(), wildcards.next()) {
        (
            Some(ast::SelectItem::QualifiedWildcard(
                ast::SelectItemQualifiedWildcardKind::ObjectName(name),
                _,
            )),
            None,
        ) => name.to_string().eq_ignore_ascii_case(&relation.value),
        _ => false,
    };
    let named = |i: &ast::Ident| i.value.eq_ignore_ascii_case(&column.value);
    covered
        && !projection.iter().any(|item| match item {
            ast::SelectItem::ExprWithAlias { alias, .. } => named(alias),
            ast::SelectItem::UnnamedExpr(ast::Expr::Identifier(i)) => named(i),
            ast::SelectItem::UnnamedExpr(ast::Expr::CompoundIdentifier(p)) => {
                p.last().is_some_and(named)
            }
            ast::SelectItem::UnnamedExpr(_) => false,
            _ => false,
        })
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
pub(super) fn time_attribute(
    plan: &LogicalPlan,
    c: usize,
    catalog: &Catalog,
) -> Option<DedupOrder> {
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
        LogicalPlan::Filter { input, .. }
        | LogicalPlan::Deduplicate { input, .. }
        | LogicalPlan::Rank { input, .. } => time_attribute(input, c, catalog),
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

fn descending(o: &ast::OrderByExpr, call: &ast::Expr) -> Result<bool, PlanError> {
    match o.options.sort {
        None | Some(ast::OrderBySort::Asc) => Ok(false),
        Some(ast::OrderBySort::Desc) => Ok(true),
        Some(ast::OrderBySort::Using(_)) => Err(unsupported(
            "ORDER BY ... USING is not supported",
            &At(call.span()),
        )),
    }
}

/// `plan` (the subquery bound without its row number, `fields` its
/// columns) numbered as the row number's window says and kept in its
/// range: a deduplication when Flink plans one (`rn = 1`, the row number
/// not selected, ordered by one time attribute), else a Top-N. Returns the
/// plan and its columns (the row number last, when selected).
pub(super) fn bind_row_number(
    q: &RowNumberQuery,
    plan: LogicalPlan,
    fields: &[Field],
    catalog: &Catalog,
) -> Result<(LogicalPlan, Vec<Field>), PlanError> {
    let key = q
        .partition_by
        .iter()
        .map(|e| column_of(e, fields, "PARTITION BY"))
        .collect::<Result<Vec<_>, _>>()?;
    let mut order = Vec::with_capacity(q.order_by.len());
    for o in &q.order_by {
        let column = column_of(&o.expr, fields, "ORDER BY")?;
        if o.options.nulls_first.is_some() {
            return Err(unsupported(
                "NULLS FIRST/LAST in a ROW_NUMBER() window is not supported (ascending sorts NULL first, descending NULL last)",
                &o.expr,
            ));
        }
        order.push((column, descending(o, &q.call)?, &o.expr));
    }
    if let [(time_col, desc, _)] = order[..] {
        if q.range == (1, 1) && !q.output_rank_number {
            if let Some(order) = time_attribute(&plan, time_col, catalog) {
                let plan = LogicalPlan::Deduplicate {
                    input: Box::new(plan),
                    key,
                    keep: if desc { Keep::LastRow } else { Keep::FirstRow },
                    order,
                    time_col,
                    row_number: q.row_number.value.clone(),
                };
                return Ok(without_hidden(plan, fields.to_vec(), q.hidden, false));
            }
        }
    }
    for &(c, _, e) in &order {
        if time_attribute(&plan, c, catalog) == Some(DedupOrder::ProcTime) {
            return Err(unsupported(
                format!(
                    "a Top-N ordered by the PROCTIME() column '{e}' is not supported (deduplication, `rn = 1` without selecting the row number, is)"
                ),
                e,
            ));
        }
    }
    let mut out_fields = fields.to_vec();
    if q.output_rank_number {
        out_fields.push(Field {
            name: q.row_number.value.clone(),
            qualifier: fields.first().and_then(|f| f.qualifier.clone()),
            data_type: DataType::BigInt,
            nullable: false,
        });
    }
    let plan = LogicalPlan::Rank {
        input: Box::new(plan),
        partition_by: key,
        order: order
            .iter()
            .map(|&(column, descending, _)| SortField { column, descending })
            .collect(),
        rank_start: q.range.0,
        rank_end: q.range.1,
        output_rank_number: q.output_rank_number,
        row_number: q.row_number.value.clone(),
        schema: Schema {
            fields: out_fields.clone(),
        },
    };
    Ok(without_hidden(
        plan,
        out_fields,
        q.hidden,
        q.output_rank_number,
    ))
}

/// `plan` (whose columns are `fields`) without the `hidden` columns the
/// subquery selected only for the window's keys: they come before the row
/// number when it is output, last otherwise.
fn without_hidden(
    plan: LogicalPlan,
    mut fields: Vec<Field>,
    hidden: usize,
    output_rank_number: bool,
) -> (LogicalPlan, Vec<Field>) {
    if hidden == 0 {
        return (plan, fields);
    }
    let end = fields.len() - usize::from(output_rank_number);
    let kept: Vec<usize> = (0..end - hidden).chain(end..fields.len()).collect();
    fields = kept.iter().map(|&c| fields[c].clone()).collect();
    let plan = LogicalPlan::Project {
        input: Box::new(plan),
        exprs: kept.into_iter().map(Expr::Column).collect(),
        schema: Schema {
            fields: fields.clone(),
        },
    };
    (plan, fields)
}
