//! EXPLAIN: the physical plan as Flink prints it, with each operator's
//! changelog mode.
//!
//! ```text
//! Sink(table=[per_user], fields=[user_id, cnt], changelogMode=[NONE])
//! +- GroupAggregate(groupBy=[user_id], select=[user_id, COUNT(*) AS cnt], changelogMode=[I,UB,UA])
//!    +- Exchange(distribution=[hash[user_id]], changelogMode=[I])
//!       +- TableSourceScan(table=[[clicks]], fields=[user_id], changelogMode=[I])
//! ```

use super::plan::{NodeKind, PhysicalNode, PhysicalPlan};
use crate::logical::Schema;
use operators::exec::Exchange;
use operators::expr::Expr;
use operators::join::JoinStateLayout;
use operators::join::JoinType;
use std::fmt::Write;

pub(crate) fn field_names(schema: &Schema, cols: &[usize]) -> String {
    cols.iter()
        .map(|&i| {
            schema
                .fields
                .get(i)
                .map(|f| f.name.clone())
                .unwrap_or_else(|| format!("${i}"))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// An expression with input column names instead of positions.
fn expr_text(e: &Expr, input: &Schema) -> String {
    e.render(&|i| {
        input
            .fields
            .get(i)
            .map(|f| f.name.clone())
            .unwrap_or_else(|| format!("${i}"))
    })
}

fn layout_text(l: &JoinStateLayout, schema: &Schema) -> String {
    match l {
        JoinStateLayout::HasUniqueKey(k) => format!("HasUniqueKey({})", field_names(schema, k)),
        other => other.describe().to_string(),
    }
}

/// One line describing a node (also the stage name in run summaries).
pub fn describe(node: &PhysicalNode) -> String {
    let input_schema = node.inputs.first().map(|c| &c.schema);
    match &node.kind {
        NodeKind::Source {
            table,
            predicate,
            projection,
        } => {
            let mut s = format!(
                "TableSourceScan(table=[[{}]], fields=[{}]",
                table.name,
                table.schema.names().join(", ")
            );
            if let Some(p) = predicate {
                let _ = write!(s, ", where=[{}]", expr_text(p, &table.schema));
            }
            if let Some(p) = projection {
                let _ = write!(
                    s,
                    ", select=[{}]",
                    p.iter()
                        .map(|e| expr_text(e, &table.schema))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            s.push(')');
            s
        }
        NodeKind::Calc {
            predicate,
            projection,
        } => {
            let schema = input_schema.expect("calc has an input");
            let select = match projection {
                Some(p) => p
                    .iter()
                    .map(|e| expr_text(e, schema))
                    .collect::<Vec<_>>()
                    .join(", "),
                None => schema.names().join(", "),
            };
            match predicate {
                Some(p) => format!("Calc(select=[{select}], where=[{}])", expr_text(p, schema)),
                None => format!("Calc(select=[{select}])"),
            }
        }
        NodeKind::GroupAggregate {
            group_by,
            aggs,
            agg_names,
            global,
            ..
        } => {
            let input = input_schema.expect("aggregate has an input");
            if *global {
                // Arguments refer to the local aggregate's input.
                let args = &node.inputs[0].inputs[0].schema;
                agg_text(
                    "GlobalGroupAggregate",
                    &field_names(input, group_by),
                    aggs,
                    agg_names,
                    args,
                )
            } else {
                agg_text(
                    "GroupAggregate",
                    &field_names(input, group_by),
                    aggs,
                    agg_names,
                    input,
                )
            }
        }
        NodeKind::LocalGroupAggregate {
            group_by,
            aggs,
            agg_names,
            ..
        } => {
            let input = input_schema.expect("aggregate has an input");
            agg_text(
                "LocalGroupAggregate",
                &field_names(input, group_by),
                aggs,
                agg_names,
                input,
            )
        }
        NodeKind::DeltaJoin {
            left_keys,
            right_keys,
            residual,
            ..
        } => {
            let cond = join_condition(node, left_keys, right_keys, residual.as_ref());
            format!("DeltaJoin(joinType=[InnerJoin], where=[{cond}])")
        }
        NodeKind::SinkMaterializer { primary_key, .. } => {
            format!(
                "SinkMaterializer(pk=[{}])",
                field_names(&node.schema, primary_key)
            )
        }
        NodeKind::MultiJoin {
            keys,
            join_types,
            conditions,
            layouts,
            ..
        } => {
            let types: Vec<&str> = join_types[1..]
                .iter()
                .map(|t| match t {
                    JoinType::Inner => "INNER",
                    JoinType::Left => "LEFT",
                })
                .collect();
            let conds: Vec<String> = conditions[1..]
                .iter()
                .map(|c| {
                    c.as_ref()
                        .map(|e| expr_text(e, &node.schema))
                        .unwrap_or_else(|| "true".into())
                })
                .collect();
            let specs: Vec<String> = node
                .inputs
                .iter()
                .zip(layouts)
                .map(|(i, l)| layout_text(l, &i.schema))
                .collect();
            let key = field_names(&node.inputs[0].schema, &keys[0]);
            format!(
                "MultiJoin(commonJoinKey=[{key}], joinTypes=[{}], joinConditions=[{}], inputSpecs=[{}])",
                types.join(", "),
                conds.join(", "),
                specs.join(", ")
            )
        }
        NodeKind::Expand { projections } => {
            let input = input_schema.expect("expand has an input");
            let rows: Vec<String> = projections
                .iter()
                .map(|p| {
                    format!(
                        "{{{}}}",
                        p.iter()
                            .map(|e| expr_text(e, input))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })
                .collect();
            format!("Expand(projects=[{}])", rows.join(", "))
        }
        NodeKind::Join {
            join_type,
            left_keys,
            right_keys,
            residual,
            left_layout,
            right_layout,
            ..
        } => {
            let (l, r) = (&node.inputs[0].schema, &node.inputs[1].schema);
            let cond = join_condition(node, left_keys, right_keys, residual.as_ref());
            format!(
                "Join(joinType=[{}], where=[{cond}], leftInputSpec=[{}], rightInputSpec=[{}])",
                match join_type {
                    JoinType::Inner => "InnerJoin",
                    JoinType::Left => "LeftOuterJoin",
                },
                layout_text(left_layout, l),
                layout_text(right_layout, r)
            )
        }
    }
}

/// `=(a, b)` per key pair, and the residual, as Flink prints a join's `where`.
fn join_condition(
    node: &PhysicalNode,
    left_keys: &[usize],
    right_keys: &[usize],
    residual: Option<&Expr>,
) -> String {
    let (l, r) = (&node.inputs[0].schema, &node.inputs[1].schema);
    let mut cond: Vec<String> = left_keys
        .iter()
        .zip(right_keys)
        .map(|(a, b)| format!("=({}, {})", field_names(l, &[*a]), field_names(r, &[*b])))
        .collect();
    if let Some(res) = residual {
        cond.push(expr_text(res, &node.schema));
    }
    if cond.len() == 1 {
        cond.remove(0)
    } else {
        format!("AND({})", cond.join(", "))
    }
}

fn agg_text(
    op: &str,
    group: &str,
    aggs: &[operators::agg::AggSpec],
    names: &[String],
    args: &Schema,
) -> String {
    let calls: Vec<String> = aggs
        .iter()
        .zip(names)
        .map(|(a, name)| {
            let arg = match a.arg {
                None => "*".to_string(),
                Some(c) => format!(
                    "{}{}",
                    if a.distinct { "DISTINCT " } else { "" },
                    field_names(args, &[c])
                ),
            };
            let filter = a
                .filter
                .map(|f| format!(" FILTER {}", field_names(args, &[f])))
                .unwrap_or_default();
            format!("{}({arg}){filter} AS {name}", a.kind.name())
        })
        .collect();
    let mut select = vec![group.to_string()];
    select.retain(|s| !s.is_empty());
    select.extend(calls);
    if group.is_empty() {
        format!("{op}(select=[{}])", select.join(", "))
    } else {
        format!("{op}(groupBy=[{group}], select=[{}])", select.join(", "))
    }
}

/// What EXPLAIN adds to a node's line: mini-batch and the strategy chosen.
fn annotations(node: &PhysicalNode) -> String {
    match &node.kind {
        NodeKind::GroupAggregate {
            mini_batch,
            strategy,
            ttl,
            ..
        } => {
            let mb = mini_batch
                .map(|n| format!(", miniBatch=[size={n}]"))
                .unwrap_or_default();
            format!("{mb}, strategy=[{strategy}], stateTtl=[{}]", ttl.describe())
        }
        NodeKind::LocalGroupAggregate { bundle_size, .. } => {
            format!(", miniBatch=[size={bundle_size}]")
        }
        NodeKind::SinkMaterializer { ttl, .. } => {
            format!(", stateTtl=[{}]", ttl.describe())
        }
        NodeKind::Join {
            mini_batch,
            note,
            ttl,
            ..
        } => {
            let mut s = mini_batch
                .map(|n| format!(", miniBatch=[size={n}]"))
                .unwrap_or_default();
            s.push_str(&format!(
                ", stateTtl=[left={}, right={}]",
                ttl[0].describe(),
                ttl[1].describe()
            ));
            if let Some(n) = note {
                s.push_str(&format!(", note=[{n}]"));
            }
            s
        }
        NodeKind::MultiJoin { reason, ttls, .. } => {
            let t: Vec<String> = ttls
                .iter()
                .enumerate()
                .map(|(i, t)| format!("input{i}={}", t.describe()))
                .collect();
            format!(
                ", strategy=[MultiJoin: {reason}], stateTtl=[{}]",
                t.join(", ")
            )
        }
        NodeKind::DeltaJoin {
            cache_enabled,
            left_cache_size,
            right_cache_size,
            ..
        } => {
            if *cache_enabled {
                format!(", cache=[left={left_cache_size}, right={right_cache_size}]")
            } else {
                ", cache=[off]".to_string()
            }
        }
        _ => String::new(),
    }
}

fn with_mode(line: &str, node: &PhysicalNode) -> String {
    let base = line.strip_suffix(')').unwrap_or(line);
    format!(
        "{base}{}, changelogMode={})",
        annotations(node),
        node.changelog
    )
}

fn exchange_line(
    parent: &PhysicalNode,
    child_index: usize,
    child: &PhysicalNode,
) -> Option<String> {
    // Flink prints the keyed exchanges; forward and rebalance are chained.
    let dist = match parent.input_exchange(child_index) {
        Exchange::Single => "single".to_string(),
        Exchange::Hash(k) => format!("hash[{}]", field_names(&child.schema, &k)),
        Exchange::Forward | Exchange::Rebalance => return None,
    };
    Some(format!(
        "Exchange(distribution=[{dist}], changelogMode={})",
        child.changelog
    ))
}

fn write_tree(out: &mut String, node: &PhysicalNode, prefix: &str, last: bool, is_root: bool) {
    let (branch, child_prefix) = if is_root {
        (String::new(), String::new())
    } else if last {
        (format!("{prefix}+- "), format!("{prefix}   "))
    } else {
        (format!("{prefix}:- "), format!("{prefix}:  "))
    };
    let _ = writeln!(out, "{branch}{}", with_mode(&describe(node), node));
    let n = node.inputs.len();
    for (i, c) in node.inputs.iter().enumerate() {
        let last_child = i + 1 == n;
        match exchange_line(node, i, c) {
            Some(ex) => {
                let (b2, p2) = if last_child {
                    (format!("{child_prefix}+- "), format!("{child_prefix}   "))
                } else {
                    (format!("{child_prefix}:- "), format!("{child_prefix}:  "))
                };
                let _ = writeln!(out, "{b2}{ex}");
                write_tree(out, c, &p2, true, false);
            }
            None => write_tree(out, c, &child_prefix, last_child, false),
        }
    }
}

/// The plan as text, sink first.
pub fn explain(plan: &PhysicalPlan) -> String {
    let mut out = String::new();
    let sink = &plan.sink.table;
    let upsert = match &plan.sink.encoding {
        operators::changelog::SinkEncoding::Upsert { key } => {
            format!(", upsertKey=[{}]", field_names(&sink.schema, key))
        }
        _ => String::new(),
    };
    // Flink folds the materializer into its sink node and says so there.
    let materialize = if matches!(plan.root.kind, NodeKind::SinkMaterializer { .. }) {
        ", upsertMaterialize=[true]"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "Sink(table=[{}], fields=[{}]{upsert}{materialize}, changelogMode=[NONE])",
        sink.name,
        plan.root.schema.names().join(", ")
    );
    let mut body = String::new();
    write_tree(&mut body, &plan.root, "", true, true);
    for line in body.lines() {
        let _ = writeln!(out, "+- {line}");
    }
    // Child lines of the root were written without the sink's indent.
    out.lines()
        .enumerate()
        .map(|(i, l)| {
            if i <= 1 {
                l.to_string()
            } else {
                format!("   {}", &l[3..])
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}
