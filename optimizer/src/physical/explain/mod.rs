//! EXPLAIN in Flink's layout: one block per statement, in three sections.
//!
//! ```text
//! == Abstract Syntax Tree ==
//! LogicalSink(table=[default_catalog.default_database.per_user], fields=[user_id, cnt])
//! +- LogicalAggregate(group=[{0}], cnt=[COUNT()])
//!    +- LogicalProject(user_id=[$0])
//!       +- LogicalTableScan(table=[[default_catalog, default_database, clicks]])
//!
//! == Optimized Physical Plan ==
//! Sink(table=[default_catalog.default_database.per_user], fields=[user_id, cnt], changelogMode=[NONE])
//! +- GroupAggregate(groupBy=[user_id], select=[user_id, COUNT(*) AS cnt], strategy=[...], stateTtl=[0 ms (config)], changelogMode=[I,UB,UA])
//!    +- Exchange(distribution=[hash[user_id]], changelogMode=[I])
//!       +- TableSourceScan(table=[[default_catalog, default_database, clicks, project=[user_id], metadata=[]]], fields=[user_id], changelogMode=[I])
//!
//! == Optimized Execution Plan ==
//! Sink(table=[default_catalog.default_database.per_user], fields=[user_id, cnt])
//! +- GroupAggregate(groupBy=[user_id], select=[user_id, COUNT(*) AS cnt])
//!    +- Exchange(distribution=[hash[user_id]])
//!       +- TableSourceScan(table=[[default_catalog, default_database, clicks, project=[user_id], metadata=[]]], fields=[user_id])
//! ```
//!
//! As in Flink: the physical plan uses Calcite's prefix expressions
//! (`=(a, b)`) and shows `changelogMode` only with `CHANGELOG_MODE`; the
//! execution plan uses infix expressions (`(a = b)`) and marks what the job
//! shares (`(reuse_id=[1])`, `Reused(reference_id=[1])`); a statement set
//! is one plan with a sink per INSERT. The lab's own attributes (strategy
//! and why, state TTL and its origin, mini-batch size, caches, notes) are
//! extra fields of the physical plan, before `changelogMode`; the
//! execution plan has Flink's fields only. `PLAN_ADVICE` gives Flink's
//! local-global advice, `JSON_EXECUTION_PLAN` the job graph as JSON.
//!
//! Each node describes itself (`describe` in its module under
//! `physical/node/`); [`builder`] walks the plan and adds exchanges, the
//! sink and what the job shares; [`render`] prints the trees.

mod ast;
mod builder;
mod json;
mod render;

pub use builder::describe;

use super::node::explain::ExplainNode;
use super::plan::{JobSettings, PhysicalNode, PhysicalPlan, QueryPlan};
use crate::config::Config;
use crate::logical::{ExplainDetails, LogicalPlan};
use builder::Builder;

/// One statement's plan to explain.
pub struct Explained<'a> {
    /// The bound query, for the Abstract Syntax Tree (none for a compiled
    /// plan, which keeps only the physical plan).
    query: Option<&'a LogicalPlan>,
    plan: Option<&'a PhysicalPlan>,
    root: &'a PhysicalNode,
    settings: &'a JobSettings,
}

impl<'a> Explained<'a> {
    /// An INSERT: its bound query when known, and its plan.
    pub fn insert(query: Option<&'a LogicalPlan>, plan: &'a PhysicalPlan) -> Explained<'a> {
        Explained {
            query,
            plan: Some(plan),
            root: &plan.root,
            settings: &plan.settings,
        }
    }

    /// A query without a sink (`EXPLAIN SELECT`).
    pub fn query(query: &'a LogicalPlan, plan: &'a QueryPlan) -> Explained<'a> {
        Explained {
            query: Some(query),
            plan: None,
            root: &plan.root,
            settings: &plan.settings,
        }
    }
}

/// Advice texts numbered in order of first appearance, per node.
fn number_advice(roots: &[ExplainNode]) -> (Vec<String>, std::collections::HashMap<String, usize>) {
    fn walk(n: &ExplainNode, texts: &mut Vec<String>) {
        if let Some(a) = &n.advice {
            if !texts.contains(a) {
                texts.push(a.clone());
            }
        }
        n.inputs.iter().for_each(|c| walk(c, texts));
    }
    let mut texts = Vec::new();
    roots.iter().for_each(|r| walk(r, &mut texts));
    let ids = texts
        .iter()
        .enumerate()
        .map(|(i, t)| (t.clone(), i + 1))
        .collect();
    (texts, ids)
}

/// The EXPLAIN text of one statement: its INSERTs (one for an INSERT,
/// several for a statement set) as one job, planned with the settings of
/// the first; `config` is the session's, for `PLAN_ADVICE`.
pub fn explain(items: &[Explained], details: ExplainDetails, config: &Config) -> String {
    let Some(first) = items.first() else {
        return String::new();
    };
    let mut b = Builder::new(config, first.settings);
    let roots: Vec<ExplainNode> = items
        .iter()
        .map(|i| match i.plan {
            Some(p) => b.sink(p),
            None => b.query(i.root),
        })
        .collect();
    let mut out = String::new();
    let asts: Vec<String> = items
        .iter()
        .filter_map(|i| {
            i.query
                .map(|q| ast::ast(i.plan.map(|p| p.sink.table.name.as_str()), q))
        })
        .collect();
    if asts.len() == items.len() {
        out.push_str("== Abstract Syntax Tree ==\n");
        out.push_str(&asts.join("\n"));
        out.push('\n');
    }
    let (advice, advice_ids) = number_advice(&roots);
    out.push_str(if details.plan_advice {
        "== Optimized Physical Plan With Advice ==\n"
    } else {
        "== Optimized Physical Plan ==\n"
    });
    out.push_str(&render::trees(&roots, &|n| {
        let id = if details.plan_advice {
            n.advice.as_ref().and_then(|a| advice_ids.get(a).copied())
        } else {
            None
        };
        n.physical_line(details.changelog_mode, id)
    }));
    out.push('\n');
    if details.plan_advice {
        if advice.is_empty() {
            out.push_str("No available advice...\n");
        }
        for (i, a) in advice.iter().enumerate() {
            out.push_str(&format!("advice[{}]: {a}\n", i + 1));
        }
        out.push('\n');
    }
    out.push_str("== Optimized Execution Plan ==\n");
    let graph = render::Graph::new(&roots);
    out.push_str(&render::exec_plan(&graph));
    if details.json_execution_plan {
        out.push_str("\n== Physical Execution Plan ==\n");
        out.push_str(&json::json_plan(&graph));
    }
    out
}
