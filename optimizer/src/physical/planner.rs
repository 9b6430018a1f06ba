//! Chooses physical operators for a logical plan.
//!
//! Rules applied here (later strategies add their own rule files):
//! - adjacent `Filter`/`Project` nodes fuse into one `Calc`, and a `Calc`
//!   directly above a scan fuses into the source read;
//! - `Aggregate` becomes `GroupAggregate` hashed on its group key (a global
//!   aggregate runs on one subtask);
//! - `Join` becomes the binary regular join hashed on its join keys, with
//!   each side's state layout chosen from its unique key;
//! - update-before rows are produced only where a consumer needs them: an
//!   upsert sink keyed on the query's unique key does not, so the aggregate
//!   feeding it emits `[I,UA]` instead of `[I,UB,UA]`.

use super::explain::field_names;
use super::plan::{NodeKind, PhysicalNode, PhysicalPlan, SinkPlan};
use super::rules::state_ttl::{self, StateTtl};
use super::rules::{agg_strategy, multi_join, split_distinct};
use crate::catalog_view::CatalogView;
use crate::config::{Config, UpsertMaterialize};
use crate::error::{PlanError, Result};
use crate::logical::{AggFunc, InsertStatement, LogicalPlan, Schema};
use operators::agg::{AggKind, AggSpec};
use operators::changelog::{ChangelogMode, SinkEncoding};
use operators::expr::Expr;
use operators::join::JoinStateLayout;
use operators::join::JoinType;

/// Plans `INSERT INTO sink <query>`.
pub fn plan_insert(
    stmt: &InsertStatement,
    catalog: &dyn CatalogView,
    config: &Config,
) -> Result<PhysicalPlan> {
    config.validate()?;
    let sink_table = catalog
        .table(&stmt.sink)
        .ok_or_else(|| PlanError::validation(format!("unknown sink table '{}'", stmt.sink)))?;
    let mut root = plan_node(&stmt.query, catalog, config)?;
    let connector = sink_table
        .options
        .get("connector")
        .map(String::as_str)
        .unwrap_or("");
    // A sink keyed on another key than the query's unique key gets a
    // SinkUpsertMaterializer (`table.exec.sink.upsert-materialize`).
    let mut materialize: Option<Vec<usize>> = None;
    let encoding = match &sink_table.primary_key {
        Some(pk) => {
            let mut want = pk.clone();
            want.sort_unstable();
            // The unique key can key an upsert sink only if each key's
            // changes reach the sink in order.
            let mut have = root
                .unique_key
                .clone()
                .filter(|_| changes_ordered_by_unique_key(&root));
            if let Some(h) = &mut have {
                h.sort_unstable();
            }
            let mismatch = !root.is_insert_only() && have.as_ref() != Some(&want);
            let mode = config.sink_upsert_materialize();
            match mode {
                UpsertMaterialize::Force => materialize = Some(pk.clone()),
                UpsertMaterialize::Auto if mismatch => materialize = Some(pk.clone()),
                UpsertMaterialize::None if mismatch => {
                    return Err(PlanError::plan(format!(
                        "sink '{}' has PRIMARY KEY ({}) but the query's unique key is {}, and \
                         '{}' = 'NONE' forbids the SinkUpsertMaterializer that would key the \
                         result by ({}); use AUTO or FORCE, or declare the query's unique key",
                        sink_table.name,
                        field_names(&sink_table.schema, pk),
                        match &root.unique_key {
                            Some(k) => format!("({})", field_names(&root.schema, k)),
                            None => "unknown".to_string(),
                        },
                        crate::config::SINK_UPSERT_MATERIALIZE,
                        field_names(&sink_table.schema, pk),
                    )));
                }
                _ => {}
            }
            SinkEncoding::Upsert { key: pk.clone() }
        }
        None if connector == "filesystem" && !root.is_insert_only() => {
            return Err(PlanError::plan(format!(
                "Table sink '{}' doesn't support consuming update changes which is produced by node {}; \
                 write updating results with `lab run --changelog FILE` or to a print/blackhole sink",
                sink_table.name,
                node_label(&root)
            )));
        }
        None => SinkEncoding::Retract,
    };
    let needs_ub = !matches!(encoding, SinkEncoding::Upsert { .. });
    // Duplicates a delta join may emit are harmless only to an upsert sink
    // on the join's own unique key.
    super::rules::delta_join::apply(&mut root, !needs_ub && materialize.is_none(), config)?;
    if let Some(pk) = materialize {
        root = sink_materializer(root, pk, config);
    }
    assign_update_before(&mut root, needs_ub);
    Ok(PhysicalPlan {
        root,
        sink: SinkPlan {
            table: sink_table.clone(),
            encoding,
        },
    })
}

/// Whether the changes of each value of `node`'s unique key leave it in
/// the order they happened (Flink calls such a key an upsert key). A
/// source's and an aggregate's do. A join's do when its unique key holds
/// the join key (of either side): then every change of one key value is
/// joined on one subtask. Otherwise an update that changes the join key
/// is retracted on one subtask and re-added on another, and the two can
/// reach the sink in either order (Flink keeps an input's upsert key
/// through a join only if it contains the join key, for the same reason).
/// Whole rows stay in order either way: a row is retracted on the
/// subtask that added it.
fn changes_ordered_by_unique_key(node: &PhysicalNode) -> bool {
    let Some(key) = &node.unique_key else {
        return false;
    };
    let holds = |cols: &[usize], offset: usize| cols.iter().all(|c| key.contains(&(c + offset)));
    match &node.kind {
        NodeKind::Source { .. } | NodeKind::GroupAggregate { .. } => true,
        NodeKind::Calc { .. } | NodeKind::Expand { .. } => {
            node.inputs.iter().all(changes_ordered_by_unique_key)
        }
        NodeKind::Join {
            left_keys,
            right_keys,
            ..
        }
        | NodeKind::DeltaJoin {
            left_keys,
            right_keys,
            ..
        } => holds(left_keys, 0) || holds(right_keys, node.inputs[0].schema.len()),
        NodeKind::MultiJoin { keys, .. } => holds(&keys[0], 0),
        NodeKind::LocalGroupAggregate { .. } | NodeKind::SinkMaterializer { .. } => false,
    }
}

/// `root` keyed by the sink's primary key `pk` (before: `Sink <- root`;
/// after: `Sink <- SinkMaterializer(pk) <- root`, hashed on `pk`). It emits
/// upserts: `+I`/`+U`, and `-D` when its input retracts.
fn sink_materializer(root: PhysicalNode, pk: Vec<usize>, config: &Config) -> PhysicalNode {
    let changelog = ChangelogMode {
        insert: true,
        update_before: false,
        update_after: true,
        delete: !root.is_insert_only(),
    };
    PhysicalNode {
        kind: NodeKind::SinkMaterializer {
            primary_key: pk.clone(),
            ttl: state_ttl::ttl_for(None, &[], config),
        },
        schema: root.schema.clone(),
        changelog,
        unique_key: Some(pk),
        parallelism: config.parallelism(),
        inputs: vec![root],
    }
}

pub fn node_label(n: &PhysicalNode) -> String {
    match &n.kind {
        NodeKind::Source { table, .. } => format!("TableSourceScan({})", table.name),
        NodeKind::Calc { .. } => "Calc".into(),
        NodeKind::GroupAggregate { .. } => "GroupAggregate".into(),
        NodeKind::LocalGroupAggregate { .. } => "LocalGroupAggregate".into(),
        NodeKind::Expand { .. } => "Expand".into(),
        NodeKind::Join { .. } => "Join".into(),
        NodeKind::MultiJoin { .. } => "MultiJoin".into(),
        NodeKind::DeltaJoin { .. } => "DeltaJoin".into(),
        NodeKind::SinkMaterializer { .. } => "SinkMaterializer".into(),
    }
}

/// Replaces column references of `e` by the projection's expressions.
fn inline(e: &Expr, p: &[Expr]) -> Expr {
    e.replace_columns(&|i| p[i].clone())
}

fn and(a: Option<Expr>, b: Option<Expr>) -> Option<Expr> {
    match (a, b) {
        (Some(a), Some(b)) => Some(Expr::bin(operators::expr::BinOp::And, a, b)),
        (a, None) => a,
        (None, b) => b,
    }
}

/// Pushes a filter/projection onto `input`: fuses with a Calc or a source.
pub(crate) fn calc_over(
    input: PhysicalNode,
    predicate: Option<Expr>,
    projection: Option<Vec<Expr>>,
    schema: Schema,
) -> PhysicalNode {
    let unique_key = match (&input.unique_key, &projection) {
        (None, _) => None,
        (Some(k), None) => Some(k.clone()),
        (Some(k), Some(p)) => k
            .iter()
            .map(|c| p.iter().position(|e| *e == Expr::Column(*c)))
            .collect::<Option<Vec<usize>>>(),
    };
    let changelog = input.changelog;
    let parallelism = input.parallelism;
    let mut input = input;
    match &mut input.kind {
        NodeKind::Source {
            predicate: p0,
            projection: q0,
            ..
        }
        | NodeKind::Calc {
            predicate: p0,
            projection: q0,
        } => {
            // New predicate/projection are over the old projection's output.
            let pred = predicate.map(|e| match q0 {
                Some(q) => inline(&e, q),
                None => e,
            });
            let proj = match (projection, q0.take()) {
                (Some(p), Some(q)) => Some(p.iter().map(|e| inline(e, &q)).collect()),
                (Some(p), None) => Some(p),
                (None, q) => q,
            };
            *p0 = and(p0.take(), pred);
            *q0 = proj;
        }
        _ => {
            return PhysicalNode {
                kind: NodeKind::Calc {
                    predicate,
                    projection,
                },
                inputs: vec![input],
                schema,
                changelog,
                unique_key,
                parallelism,
            }
        }
    }
    input.schema = schema;
    input.unique_key = unique_key;
    input
}

pub(crate) fn plan_node(
    plan: &LogicalPlan,
    catalog: &dyn CatalogView,
    config: &Config,
) -> Result<PhysicalNode> {
    Ok(match plan {
        LogicalPlan::Scan { table, schema, .. } => {
            let def = catalog
                .table(table)
                .ok_or_else(|| PlanError::validation(format!("unknown table '{table}'")))?;
            let changelog = datasets::source_changelog_mode(&def.options);
            PhysicalNode {
                kind: NodeKind::Source {
                    table: def.clone(),
                    predicate: None,
                    projection: None,
                },
                inputs: vec![],
                schema: schema.clone(),
                changelog,
                unique_key: def.primary_key.clone(),
                parallelism: 1,
            }
        }
        LogicalPlan::Filter { input, predicate } => {
            let child = plan_node(input, catalog, config)?;
            let schema = child.schema.clone();
            calc_over(child, Some(predicate.clone()), None, schema)
        }
        LogicalPlan::Project {
            input,
            exprs,
            schema,
        } => {
            let child = plan_node(input, catalog, config)?;
            let identity = exprs.len() == child.schema.len()
                && exprs.iter().enumerate().all(|(i, e)| *e == Expr::Column(i));
            if identity {
                let mut c = child;
                c.schema = schema.clone();
                c
            } else {
                calc_over(child, None, Some(exprs.clone()), schema.clone())
            }
        }
        LogicalPlan::Aggregate {
            input,
            group_by,
            aggs,
            schema,
            hints,
        } => {
            let child = plan_node(input, catalog, config)?;
            let specs: Vec<AggSpec> = aggs
                .iter()
                .map(|a| AggSpec {
                    kind: match a.func {
                        AggFunc::CountStar => AggKind::CountStar,
                        AggFunc::Count => AggKind::Count,
                        AggFunc::Sum => AggKind::Sum,
                        AggFunc::Min => AggKind::Min,
                        AggFunc::Max => AggKind::Max,
                        AggFunc::Avg => AggKind::Avg,
                    },
                    arg: a.arg,
                    distinct: a.distinct,
                    filter: a.filter,
                    result_type: a.output_type,
                })
                .collect();
            let names: Vec<String> = aggs.iter().map(|a| a.name.clone()).collect();
            let hinted = state_ttl::hinted(hints)?;
            let ttl = state_ttl::ttl_for(state_ttl::input_alias(input).as_deref(), &hinted, config);
            if config.split_distinct_enabled() && split_distinct::applies(&specs) {
                split_distinct::rewrite(child, group_by, &specs, &names, schema, config, ttl)
            } else {
                aggregate(
                    child,
                    group_by.clone(),
                    specs,
                    names,
                    schema.clone(),
                    config,
                    ttl,
                )
            }
        }
        LogicalPlan::Join {
            left,
            right,
            kind,
            left_keys,
            right_keys,
            residual,
            schema,
            ..
        } => {
            let _ = (left, right, kind, left_keys, right_keys, residual, schema);
            multi_join::plan_join_chain(plan, catalog, config)?
        }
    })
}

/// How a join input keeps its rows: by the unique key it has, if any.
pub(crate) fn layout_for(n: &PhysicalNode, keys: &[usize]) -> JoinStateLayout {
    match &n.unique_key {
        Some(u) if u.iter().all(|c| keys.contains(c)) => JoinStateLayout::JoinKeyContainsUniqueKey,
        Some(u) => JoinStateLayout::HasUniqueKey(u.clone()),
        None => JoinStateLayout::NoUniqueKey,
    }
}

/// The changelog a join emits for inputs with these changelogs.
pub(crate) fn join_changelog(
    join_type: JoinType,
    l: ChangelogMode,
    r: ChangelogMode,
) -> ChangelogMode {
    match join_type {
        JoinType::Inner => l.union(r),
        JoinType::Left => ChangelogMode {
            insert: true,
            update_before: r.update_before,
            update_after: false,
            delete: true,
        },
    }
}

/// The binary regular join of `l` and `r` (mini-batch when configured).
#[allow(clippy::too_many_arguments)]
pub(crate) fn binary_join(
    l: PhysicalNode,
    r: PhysicalNode,
    join_type: JoinType,
    left_keys: Vec<usize>,
    right_keys: Vec<usize>,
    residual: Option<Expr>,
    schema: Schema,
    config: &Config,
    note: Option<String>,
    ttl: [StateTtl; 2],
) -> PhysicalNode {
    let left_layout = layout_for(&l, &left_keys);
    let right_layout = layout_for(&r, &right_keys);
    let la = l.schema.len();
    let unique_key = match (&l.unique_key, &r.unique_key) {
        (Some(lk), Some(rk)) if rk.iter().all(|c| right_keys.contains(c)) => Some(lk.clone()),
        (Some(lk), Some(rk)) => Some(
            lk.iter()
                .copied()
                .chain(rk.iter().map(|c| c + la))
                .collect(),
        ),
        _ => None,
    };
    let changelog = join_changelog(join_type, l.changelog, r.changelog);
    let mini_batch = config
        .mini_batch_enabled()
        .then(|| config.mini_batch_size().max(1) as usize);
    PhysicalNode {
        kind: NodeKind::Join {
            join_type,
            left_keys,
            right_keys,
            residual,
            left_layout,
            right_layout,
            mini_batch,
            note,
            ttl,
        },
        inputs: vec![l, r],
        schema,
        changelog,
        unique_key,
        parallelism: config.parallelism(),
    }
}

/// A group aggregate over `child` with the strategy the configuration
/// asks for (see [`agg_strategy`]): one node, or local and global nodes.
pub(crate) fn aggregate(
    child: PhysicalNode,
    group_by: Vec<usize>,
    specs: Vec<AggSpec>,
    names: Vec<String>,
    schema: Schema,
    config: &Config,
    ttl: StateTtl,
) -> PhysicalNode {
    let p = config.parallelism();
    let input_insert_only = child.is_insert_only();
    let strategy = agg_strategy::choose(config, &specs, input_insert_only);
    let changelog = ChangelogMode {
        insert: true,
        update_before: true,
        update_after: true,
        delete: !input_insert_only,
    };
    let g = group_by.len();
    let (input, global_group_by) = if strategy.two_phase {
        let mini_batch = strategy.mini_batch.unwrap_or(1);
        let local_schema = Schema {
            fields: group_by
                .iter()
                .map(|&i| child.schema.fields[i].clone())
                .chain((0..1 + 2 * specs.len()).map(|i| crate::logical::Field {
                    name: format!("acc${i}"),
                    qualifier: None,
                    data_type: operators::value::DataType::BigInt,
                    nullable: true,
                }))
                .collect(),
        };
        let local = PhysicalNode {
            kind: NodeKind::LocalGroupAggregate {
                group_by: group_by.clone(),
                aggs: specs.clone(),
                agg_names: names.clone(),
                bundle_size: mini_batch,
            },
            changelog: ChangelogMode::INSERT_ONLY,
            unique_key: None,
            parallelism: p,
            inputs: vec![child],
            schema: local_schema,
        };
        (local, (0..g).collect())
    } else {
        (child, group_by)
    };
    PhysicalNode {
        kind: NodeKind::GroupAggregate {
            group_by: global_group_by,
            aggs: specs,
            agg_names: names,
            generate_update_before: true,
            input_insert_only,
            mini_batch: strategy.mini_batch,
            global: strategy.two_phase,
            strategy: strategy.reason,
            ttl,
        },
        inputs: vec![input],
        schema,
        changelog,
        unique_key: Some((0..g).collect()),
        parallelism: if g == 0 { 1 } else { p },
    }
}

/// Decides, top-down, which aggregates must emit update-before rows, and
/// recomputes changelog modes bottom-up accordingly.
fn assign_update_before(node: &mut PhysicalNode, needed: bool) {
    match &mut node.kind {
        NodeKind::GroupAggregate {
            generate_update_before,
            ..
        } => {
            *generate_update_before = needed;
            node.changelog.update_before = needed;
            for c in &mut node.inputs {
                assign_update_before(c, true);
            }
        }
        NodeKind::LocalGroupAggregate { .. }
        | NodeKind::Expand { .. }
        | NodeKind::SinkMaterializer { .. } => {
            // (A materializer finds the rows to retract by their -U.)
            for c in &mut node.inputs {
                assign_update_before(c, true);
            }
        }
        NodeKind::Calc { .. } | NodeKind::Source { .. } => {
            for c in &mut node.inputs {
                assign_update_before(c, needed);
            }
            if let Some(c) = node.inputs.first() {
                node.changelog = c.changelog;
            }
        }
        NodeKind::Join { join_type, .. } => {
            let jt = *join_type;
            for c in &mut node.inputs {
                assign_update_before(c, true);
            }
            node.changelog = join_changelog(jt, node.inputs[0].changelog, node.inputs[1].changelog);
        }
        NodeKind::MultiJoin { .. } | NodeKind::DeltaJoin { .. } => {
            for c in &mut node.inputs {
                assign_update_before(c, true);
            }
        }
    }
}
