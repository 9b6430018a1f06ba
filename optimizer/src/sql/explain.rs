//! A readable, indented rendering of a logical plan, for tests and for
//! looking at what the binder built:
//!
//! ```text
//! Aggregate(groupBy=[$0], aggs=[COUNT(*) AS EXPR$1])
//!   Project(exprs=[$0], fields=[user_id])
//!     Scan(table=[clicks], fields=[user_id, url, ts])
//! ```

use crate::logical::{AggCall, AggFunc, Hint, LogicalPlan, Schema};
use std::fmt::Write;

/// The plan as an indented tree, one node per line (trailing newline).
pub fn explain_logical(plan: &LogicalPlan) -> String {
    let mut out = String::new();
    node(plan, 0, &mut out);
    out
}

/// `name TYPE [NOT NULL], ...` of a schema.
pub fn schema_string(schema: &Schema) -> String {
    schema
        .fields
        .iter()
        .map(|f| {
            format!(
                "{} {}{}",
                f.name,
                f.data_type,
                if f.nullable { "" } else { " NOT NULL" }
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn names(schema: &Schema) -> String {
    schema.names().join(", ")
}

fn hint_string(h: &Hint) -> String {
    let mut items: Vec<String> = h.args.clone();
    items.extend(h.kv.iter().map(|(k, v)| format!("'{k}'='{v}'")));
    format!("{}({})", h.name, items.join(", "))
}

fn hints_attr(hints: &[Hint]) -> String {
    if hints.is_empty() {
        String::new()
    } else {
        format!(
            ", hints=[{}]",
            hints.iter().map(hint_string).collect::<Vec<_>>().join(", ")
        )
    }
}

fn cols(cs: &[usize]) -> String {
    cs.iter()
        .map(|c| format!("${c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn agg_string(a: &AggCall) -> String {
    let arg = match (a.func, a.arg) {
        (AggFunc::CountStar, _) | (_, None) => "*".to_string(),
        (_, Some(c)) => format!("{}${c}", if a.distinct { "DISTINCT " } else { "" }),
    };
    let filter = a
        .filter
        .map(|f| format!(" FILTER ${f}"))
        .unwrap_or_default();
    format!("{}({arg}){filter} AS {}", a.func.name(), a.name)
}

fn node(plan: &LogicalPlan, depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    let line = match plan {
        LogicalPlan::Scan {
            table,
            alias,
            schema,
        } => {
            let alias = if alias == table {
                String::new()
            } else {
                format!(", alias=[{alias}]")
            };
            format!("Scan(table=[{table}]{alias}, fields=[{}])", names(schema))
        }
        LogicalPlan::Filter { predicate, .. } => format!("Filter(condition=[{predicate}])"),
        LogicalPlan::Deduplicate {
            key, keep, order, ..
        } => format!(
            "Deduplicate(keep=[{keep:?}], key=[{}], order=[{order:?}])",
            key.iter()
                .map(|k| format!("${k}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        LogicalPlan::WindowTvf {
            time_col,
            window,
            schema,
            ..
        } => format!(
            "WindowTvf(window=[{}], fields=[{}])",
            window.explain(&format!("time_col=[${time_col}]")),
            names(schema)
        ),
        LogicalPlan::Project { exprs, schema, .. } => format!(
            "Project(exprs=[{}], fields=[{}])",
            exprs
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            names(schema)
        ),
        LogicalPlan::Union { schema, .. } => {
            format!("Union(all=[true], fields=[{}])", names(schema))
        }
        LogicalPlan::Rank {
            partition_by,
            order,
            rank_start,
            rank_end,
            schema,
            ..
        } => format!(
            "Rank(partitionBy=[{}], orderBy=[{}], rankRange=[{rank_start}, {rank_end}], fields=[{}])",
            partition_by
                .iter()
                .map(|k| format!("${k}"))
                .collect::<Vec<_>>()
                .join(", "),
            order
                .iter()
                .map(|f| format!("${}{}", f.column, if f.descending { " DESC" } else { "" }))
                .collect::<Vec<_>>()
                .join(", "),
            names(schema)
        ),
        LogicalPlan::Join {
            kind,
            left_keys,
            right_keys,
            residual,
            schema,
            hints,
            ..
        } => {
            let residual = residual
                .as_ref()
                .map(|r| format!(", residual=[{r}]"))
                .unwrap_or_default();
            format!(
                "Join(joinType=[{kind}], leftKeys=[{}], rightKeys=[{}]{residual}, fields=[{}]{})",
                cols(left_keys),
                cols(right_keys),
                names(schema),
                hints_attr(hints)
            )
        }
        LogicalPlan::Aggregate {
            group_by,
            aggs,
            hints,
            ..
        } => format!(
            "Aggregate(groupBy=[{}], aggs=[{}]{})",
            cols(group_by),
            aggs.iter().map(agg_string).collect::<Vec<_>>().join(", "),
            hints_attr(hints)
        ),
    };
    let _ = writeln!(out, "{pad}{line}");
    for c in plan.children() {
        node(c, depth + 1, out);
    }
}
