//! The legacy group windows: `GROUP BY k, TUMBLE(ts, size)`, `HOP(ts,
//! slide, size)` and `SESSION(ts, gap)`, with their auxiliary functions
//! `TUMBLE_START`, `TUMBLE_END`, `TUMBLE_ROWTIME` (and HOP_*, SESSION_*)
//! in the select list, which Flink plans as `GroupWindowAggregate`.
//!
//! The binder reads one as the window TVF it computes: the FROM table
//! under a `WindowTvf` marked `group_window` (its window columns named
//! `w$start`, `w$end`, `w$rowtime`, which no name in the query reaches),
//! grouped by `w$start` and `w$end`. The batch answer is the same; the
//! planner makes it a `GroupWindowAggregate`, which takes Flink's emit
//! strategy (allowed lateness, late firings), and the auxiliary functions
//! read the window columns (`sql/expr.rs`, `GroupWindowRef`).

use super::catalog::Catalog;
use super::expr::{interval_millis, GroupWindowRef};
use super::names::err_at;
use crate::error::PlanError;
use crate::logical::{Field, LogicalPlan, Schema};
use operators::value::DataType;
use operators::window::WindowSpec;
use sqlparser::ast;

/// The group window call among `GROUP BY` expressions, if any: its index.
pub(crate) fn position(group_exprs: &[ast::Expr]) -> Result<Option<usize>, PlanError> {
    let mut found = None;
    for (i, g) in group_exprs.iter().enumerate() {
        if window_name(g).is_some() {
            if found.is_some() {
                return Err(err_at(
                    PlanError::validation("a GROUP BY holds one group window"),
                    g,
                ));
            }
            found = Some(i);
        }
    }
    Ok(found)
}

fn window_name(e: &ast::Expr) -> Option<&'static str> {
    let ast::Expr::Function(f) = e else {
        return None;
    };
    let name = f.name.to_string().to_uppercase();
    ["TUMBLE", "HOP", "SESSION"]
        .into_iter()
        .find(|n| *n == name)
}

/// Puts the group window `call` (a `GROUP BY` expression) over `plan`, the
/// FROM clause (one table of the catalog), and appends its columns to
/// `fields`. Returns the windowed plan and what the auxiliary functions
/// need.
pub(crate) fn bind(
    call: &ast::Expr,
    plan: LogicalPlan,
    fields: &mut Vec<Field>,
    catalog: &Catalog,
) -> Result<(LogicalPlan, GroupWindowRef), PlanError> {
    let name = window_name(call).expect("a group window call");
    let ast::Expr::Function(f) = call else {
        unreachable!("a group window is a call")
    };
    let LogicalPlan::Scan { table, .. } = &plan else {
        return Err(err_at(
            PlanError::unsupported(format!(
                "a group window ({name}) over a join or subquery is not supported: the lab runs \
                 GROUP BY {name}(...) over one table"
            )),
            call,
        ));
    };
    let args: Vec<&ast::Expr> = match &f.args {
        ast::FunctionArguments::List(l) => l
            .args
            .iter()
            .filter_map(|a| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => Some(x),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let expected = if name == "HOP" { 3 } else { 2 };
    let shape = match name {
        "TUMBLE" => "TUMBLE(time_attr, size)",
        "HOP" => "HOP(time_attr, slide, size)",
        _ => "SESSION(time_attr, gap)",
    };
    let arg_count = match &f.args {
        ast::FunctionArguments::List(l) => l.args.len(),
        _ => 0,
    };
    if args.len() != expected || arg_count != expected {
        let offset = if arg_count == expected + 1 && name != "SESSION" {
            "; the offset argument is not supported"
        } else {
            ""
        };
        return Err(err_at(
            PlanError::unsupported(format!(
                "the group window {name} takes {expected} arguments, {shape}{offset}: '{call}'"
            )),
            call,
        ));
    }
    // The time attribute: a column of the table, its rowtime attribute.
    let col = match args[0] {
        ast::Expr::Identifier(id) => fields
            .iter()
            .position(|fl| fl.name.eq_ignore_ascii_case(&id.value)),
        ast::Expr::CompoundIdentifier(ids) => ids.last().and_then(|id| {
            fields
                .iter()
                .position(|fl| fl.name.eq_ignore_ascii_case(&id.value))
        }),
        _ => None,
    };
    let Some(time_col) = col else {
        return Err(err_at(
            PlanError::validation(format!(
                "the time attribute of {name} must be a column of '{table}', found '{}'",
                args[0]
            )),
            args[0],
        ));
    };
    let def = catalog
        .get(table)
        .expect("a scanned table is in the catalog");
    if def.watermark.as_ref().is_none_or(|w| w.rowtime != time_col) {
        let proctime = def
            .computed
            .get(time_col)
            .and_then(Option::as_ref)
            .is_some_and(|e| matches!(e, operators::expr::Expr::ProcTime));
        let what = if proctime {
            "processing-time group windows are not supported: the lab runs event-time ones"
                .to_string()
        } else {
            format!(
                "Window can only be defined over a time attribute column: '{}' of table '{}' \
                 has no WATERMARK (declare WATERMARK FOR {} AS ...)",
                fields[time_col].name, def.name, fields[time_col].name
            )
        };
        let e = if proctime {
            PlanError::unsupported(what)
        } else {
            PlanError::validation(what)
        };
        return Err(err_at(e, args[0]));
    }
    let mut sizes = Vec::new();
    for (a, what) in args[1..].iter().zip(match name {
        "HOP" => ["slide", "size"].as_slice(),
        "TUMBLE" => ["size"].as_slice(),
        _ => ["gap"].as_slice(),
    }) {
        let ast::Expr::Interval(iv) = a else {
            return Err(err_at(
                PlanError::validation(format!(
                    "the {what} of {name} must be an INTERVAL literal, found '{a}'"
                )),
                *a,
            ));
        };
        let ms = interval_millis(iv)?;
        if ms <= 0 {
            return Err(err_at(
                PlanError::validation(format!(
                    "the {what} of {name} must be positive, found '{a}'"
                )),
                *a,
            ));
        }
        sizes.push(ms);
    }
    let window = match name {
        "TUMBLE" => WindowSpec::Tumble { size: sizes[0] },
        "HOP" => WindowSpec::Hop {
            slide: sizes[0],
            size: sizes[1],
        },
        _ => WindowSpec::Session { gap: sizes[0] },
    };
    let start_col = fields.len();
    let time_type = fields[time_col].data_type;
    let window_field = |n: &str, data_type: DataType| Field {
        name: n.to_string(),
        qualifier: None,
        data_type,
        nullable: false,
    };
    fields.push(window_field("w$start", DataType::Timestamp));
    fields.push(window_field("w$end", DataType::Timestamp));
    fields.push(window_field("w$rowtime", time_type));
    let plan = LogicalPlan::WindowTvf {
        input: Box::new(plan),
        time_col,
        window,
        partition_by: Vec::new(),
        group_window: true,
        schema: Schema {
            fields: fields.clone(),
        },
    };
    Ok((
        plan,
        GroupWindowRef {
            name,
            time_col,
            sizes,
            start_col,
            text: call.to_string(),
        },
    ))
}
