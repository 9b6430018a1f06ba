//! From a logical plan to the physical plan that runs: a translation node
//! by node into the plainest physical tree, then the optimizer's rules
//! (`physical/rules/mod.rs`), in order.
//!
//! The translation:
//! - adjacent `Filter`/`Project` nodes fuse into one `Calc`, and a `Calc`
//!   directly above a scan fuses into the source read;
//! - `Aggregate` becomes a one-phase `GroupAggregate` hashed on its group
//!   key (a global aggregate runs on one subtask), in mini-batch mode when
//!   `table.exec.mini-batch.enabled` is on;
//! - `Join` becomes the binary regular join hashed on its join keys, with
//!   each side's state layout chosen from its unique key (mini-batch when
//!   configured), keeping what the query's hints say of it;
//! - each stateful node gets the TTL of its inputs (`physical/state_ttl.rs`).
//!
//! Everything that chooses between strategies is a rule.

use super::node::calc;
use super::node::group_aggregate::GroupAggregate;
use super::node::join::{Join, JoinHints};
use super::node::source::Source;
use super::plan::{JobSettings, PhysicalNode, PhysicalPlan, QueryPlan, SinkPlan};
use super::rules::{PhysicalOptimizer, RuleContext};
use super::state_ttl;
use crate::catalog_view::CatalogView;
use crate::config::Config;
use crate::error::{PlanError, Result};
use crate::logical::{AggFunc, InsertStatement, JoinKind, LogicalPlan};
use operators::agg::{AggKind, AggSpec};
use operators::changelog::SinkEncoding;
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
    let optimizer = PhysicalOptimizer::from_config(config)?;
    let table = catalog
        .table(&stmt.sink)
        .ok_or_else(|| PlanError::validation(format!("unknown sink table '{}'", stmt.sink)))?;
    let root = translate(&stmt.query, catalog, config)?;
    let encoding = match &table.primary_key {
        Some(pk) => SinkEncoding::Upsert { key: pk.clone() },
        None => SinkEncoding::Retract,
    };
    let sink = SinkPlan {
        table: table.clone(),
        encoding,
    };
    let ctx = RuleContext {
        config,
        sink: Some(&sink),
    };
    let root = optimizer.optimize(root, &ctx)?;
    Ok(PhysicalPlan {
        root,
        sink,
        settings: JobSettings::resolve(config),
    })
}

/// Plans a query without a sink (`EXPLAIN SELECT`): its result as a
/// stream with update-before rows, as a retract sink would take it.
pub fn plan_query(
    query: &LogicalPlan,
    catalog: &dyn CatalogView,
    config: &Config,
) -> Result<QueryPlan> {
    config.validate()?;
    let optimizer = PhysicalOptimizer::from_config(config)?;
    let root = translate(query, catalog, config)?;
    let root = optimizer.optimize(root, &RuleContext { config, sink: None })?;
    Ok(QueryPlan {
        root,
        settings: JobSettings::resolve(config),
    })
}

/// The name a hint gives a join input: its alias, when it reads a table
/// directly.
fn scan_alias(plan: &LogicalPlan) -> Option<String> {
    match plan {
        LogicalPlan::Scan { alias, .. } => Some(alias.to_lowercase()),
        _ => None,
    }
}

/// The physical node of each logical node, inputs first.
fn translate(
    plan: &LogicalPlan,
    catalog: &dyn CatalogView,
    config: &Config,
) -> Result<PhysicalNode> {
    Ok(match plan {
        LogicalPlan::Scan { table, schema, .. } => {
            let def = catalog
                .table(table)
                .ok_or_else(|| PlanError::validation(format!("unknown table '{table}'")))?;
            Source::scan(def, schema.clone())
        }
        LogicalPlan::Filter { input, predicate } => {
            let child = translate(input, catalog, config)?;
            let schema = child.schema.clone();
            calc::over(child, Some(predicate.clone()), None, schema)
        }
        LogicalPlan::Project {
            input,
            exprs,
            schema,
        } => {
            let child = translate(input, catalog, config)?;
            let identity = exprs.len() == child.schema.len()
                && exprs.iter().enumerate().all(|(i, e)| *e == Expr::Column(i));
            if identity {
                let mut c = child;
                c.schema = schema.clone();
                c
            } else {
                calc::over(child, None, Some(exprs.clone()), schema.clone())
            }
        }
        LogicalPlan::Aggregate {
            input,
            group_by,
            aggs,
            schema,
            hints,
        } => {
            let child = translate(input, catalog, config)?;
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
            GroupAggregate::over(
                child,
                group_by.clone(),
                specs,
                names,
                schema.clone(),
                config.mini_batch().map(|m| m.size),
                ttl,
                config.parallelism(),
            )
        }
        LogicalPlan::Join {
            left,
            right,
            kind,
            left_keys,
            right_keys,
            residual,
            schema,
            hints,
        } => {
            let mut multi_join: Vec<String> = Vec::new();
            for hint in hints
                .iter()
                .filter(|h| h.name.eq_ignore_ascii_case("MULTI_JOIN"))
            {
                for a in &hint.args {
                    let a = a.to_lowercase();
                    if !multi_join.contains(&a) {
                        multi_join.push(a);
                    }
                }
            }
            let hints = JoinHints {
                left_in_chain: matches!(**left, LogicalPlan::Join { .. }),
                left_alias: scan_alias(left),
                right_alias: scan_alias(right),
                multi_join,
                state_ttl: state_ttl::hinted(hints)?,
            };
            let l = translate(left, catalog, config)?;
            let r = translate(right, catalog, config)?;
            let ttl = [
                state_ttl::ttl_for(hints.left_alias.as_deref(), &hints.state_ttl, config),
                state_ttl::ttl_for(hints.right_alias.as_deref(), &hints.state_ttl, config),
            ];
            let join = Join {
                join_type: match kind {
                    JoinKind::Inner => JoinType::Inner,
                    JoinKind::Left => JoinType::Left,
                },
                left_keys: left_keys.clone(),
                right_keys: right_keys.clone(),
                residual: residual.clone(),
                // (Chosen from the inputs by `Join::over`.)
                left_layout: JoinStateLayout::NoUniqueKey,
                right_layout: JoinStateLayout::NoUniqueKey,
                mini_batch_size: config.mini_batch().map(|m| m.size),
                note: None,
                ttl,
                hints,
            };
            Join::over(l, r, join, schema.clone(), config.parallelism())
        }
    })
}
