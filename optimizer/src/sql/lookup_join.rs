//! Binding a lookup join: `JOIN dim FOR SYSTEM_TIME AS OF o.pt AS d ON
//! o.k = d.id [AND ...]` (the clause reaches the binder as the table's
//! named argument, see `system_time.rs`). What Flink checks is checked
//! here, each error at its place in the script: the time attribute is a
//! processing-time attribute of the left input (an event-time temporal
//! join against a versioned table is not supported yet), the join is INNER
//! or LEFT, the condition equates a column of the table with one of the
//! left input, and the table's `lookup.*` options are valid.

use super::catalog::Catalog;
use super::names::{err_at, At};
use super::rank::time_attribute;
use super::system_time::ARGUMENT;
use crate::error::PlanError;
use crate::logical::{Field, JoinKind, LogicalPlan, Lookup};
use operators::expr::Expr;
use operators::rank::deduplicate::DedupOrder;
use sqlparser::ast::{self, Spanned};

/// The table reference without its `FOR SYSTEM_TIME AS OF`, and the time
/// attribute it names, when `tf` has one.
pub(super) fn system_time_of(tf: &ast::TableFactor) -> Option<(ast::TableFactor, &ast::Expr)> {
    let ast::TableFactor::Table {
        args: Some(args), ..
    } = tf
    else {
        return None;
    };
    let [ast::FunctionArg::Named {
        name,
        arg: ast::FunctionArgExpr::Expr(time),
        operator: ast::FunctionArgOperator::RightArrow,
    }] = args.args.as_slice()
    else {
        return None;
    };
    if !name.value.eq_ignore_ascii_case(ARGUMENT) || args.settings.is_some() {
        return None;
    }
    let mut plain = tf.clone();
    if let ast::TableFactor::Table { args, .. } = &mut plain {
        *args = None;
    }
    Some((plain, time))
}

/// Whether a conjunct equates a column of the table (at `nl` and after)
/// with a constant: a lookup key of its own (`ON d.id = 1`).
pub(super) fn constant_key(conjuncts: &[Expr], nl: usize) -> bool {
    conjuncts
        .iter()
        .any(|c| Lookup::constant_equality(c, nl).is_some())
}

/// `FOR SYSTEM_TIME AS OF` where it cannot be: not on a JOIN's right side.
pub(super) fn misplaced(tf: &ast::TableFactor) -> PlanError {
    err_at(
        PlanError::unsupported(
            "FOR SYSTEM_TIME AS OF is supported on the right side of a JOIN only (a lookup join: FROM probe AS o JOIN dim FOR SYSTEM_TIME AS OF o.pt AS d ON o.k = d.id)",
        ),
        tf,
    )
}

/// Checks a lookup join of `left` (its columns `left_fields`) with the
/// table `right` and returns what makes it one. `time` is the clause's
/// time attribute, `has_key` whether the ON condition equates columns of
/// the two sides.
#[allow(clippy::too_many_arguments)]
pub(super) fn bind(
    catalog: &Catalog,
    left: &LogicalPlan,
    left_fields: &[Field],
    right: &LogicalPlan,
    rel: &ast::TableFactor,
    kind: JoinKind,
    time: &ast::Expr,
    on: &ast::Expr,
    has_key: bool,
) -> Result<Lookup, PlanError> {
    let LogicalPlan::Scan { table, .. } = right else {
        return Err(misplaced(rel));
    };
    let def = catalog
        .get(table)
        .expect("a scanned table is in the catalog");
    if !matches!(kind, JoinKind::Inner | JoinKind::Left) {
        return Err(err_at(
            PlanError::unsupported(format!(
                "a lookup join (FOR SYSTEM_TIME AS OF) is INNER or LEFT, not {kind}"
            )),
            rel,
        ));
    }
    let time_col = time_column(left_fields, time)?;
    match lookup_time_attribute(left, time_col, catalog) {
        Some(DedupOrder::ProcTime) => {}
        Some(DedupOrder::RowTime(_)) => {
            return Err(err_at(
                PlanError::unsupported(format!(
                    "FOR SYSTEM_TIME AS OF the rowtime attribute '{time}' is an event-time temporal join (against a versioned table), which is not supported yet; the lab runs lookup joins, FOR SYSTEM_TIME AS OF a processing-time attribute (pt AS PROCTIME())"
                )),
                time,
            ))
        }
        None => {
            return Err(err_at(
                PlanError::validation(format!(
                    "Temporal table join currently only supports 'FOR SYSTEM_TIME AS OF' left table's time attribute field; '{time}' is not a time attribute (declare pt AS PROCTIME())"
                )),
                time,
            ))
        }
    }
    if !has_key {
        return Err(err_at(
            PlanError::validation(format!(
                "Temporal table join requires an equality condition on fields of table [default_catalog.default_database.{}]: ON must equate a column of '{}' with a column of the left input (found '{on}')",
                def.name, def.name
            )),
            on,
        ));
    }
    crate::lookup_options::partial_cache(&def.options).map_err(|e| {
        err_at(
            PlanError::config(format!("table '{}': {e}", def.name)),
            &At(rel_name_span(rel)),
        )
    })?;
    Ok(Lookup { time_col })
}

fn rel_name_span(rel: &ast::TableFactor) -> sqlparser::tokenizer::Span {
    match rel {
        ast::TableFactor::Table { name, .. } => name.span(),
        other => other.span(),
    }
}

/// The left column the time attribute names (`pt` or `o.pt`).
fn time_column(fields: &[Field], time: &ast::Expr) -> Result<usize, PlanError> {
    let (qualifier, name) = match time {
        ast::Expr::Identifier(id) => (None, &id.value),
        ast::Expr::CompoundIdentifier(ids) if ids.len() == 2 => (Some(&ids[0].value), &ids[1].value),
        _ => {
            return Err(err_at(
                PlanError::validation(format!(
                    "FOR SYSTEM_TIME AS OF takes a time attribute column of the left input, found '{time}'"
                )),
                time,
            ))
        }
    };
    let found: Vec<usize> = fields
        .iter()
        .enumerate()
        .filter(|(_, f)| {
            f.name.eq_ignore_ascii_case(name)
                && qualifier.is_none_or(|q| {
                    f.qualifier
                        .as_deref()
                        .is_some_and(|fq| fq.eq_ignore_ascii_case(q))
                })
        })
        .map(|(i, _)| i)
        .collect();
    match found.as_slice() {
        [c] => Ok(*c),
        [] => Err(err_at(
            PlanError::validation(format!(
                "Column '{time}' of FOR SYSTEM_TIME AS OF not found in the left input of the join"
            )),
            time,
        )),
        _ => Err(err_at(
            PlanError::validation(format!("Column '{time}' is ambiguous")),
            time,
        )),
    }
}

/// The time attribute column `c` of `plan` is: through joins (a chain of
/// lookup joins keeps the probe's processing time) only a processing-time
/// one, as a join's output has no rowtime attribute in Flink.
fn lookup_time_attribute(plan: &LogicalPlan, c: usize, catalog: &Catalog) -> Option<DedupOrder> {
    match plan {
        LogicalPlan::Join { left, right, .. } => {
            let lw = left.schema().len();
            let side = if c < lw {
                lookup_time_attribute(left, c, catalog)
            } else {
                lookup_time_attribute(right, c - lw, catalog)
            };
            side.filter(|o| *o == DedupOrder::ProcTime)
        }
        other => time_attribute(other, c, catalog),
    }
}
