//! Which parts of a job are shared: Flink's sub-plan and source reuse.
//!
//! Within one job (a statement set's INSERTs, or one INSERT that reads a
//! table twice) an identical sub-plan runs once and feeds every consumer
//! (`table.optimizer.reuse-sub-plan-enabled`), and a table scanned several
//! times is read once (`table.optimizer.reuse-source-enabled`). Two scans
//! are the same read when they scan the same table with the same
//! pushed-down filter and projection: a connector that pushes neither down
//! (every one but `filesystem`, as Flink's `datagen`) reads whole rows,
//! so all its scans of a table are one read, each consumer applying its own
//! Calc; a `filesystem` scan is shared only with scans that push down the
//! same filter and projection (Flink reads the file once per distinct
//! projection).
//!
//! The job builder ([`super::job`]) and EXPLAIN ([`super::explain`]) both
//! ask this module, so what EXPLAIN marks as reused is what the job shares.

use super::plan::{NodeKind, PhysicalNode};
use crate::config::Config;
use crate::logical::TableDef;

/// What the configuration allows to be shared.
#[derive(Clone, Copy, Debug)]
pub struct Reuse {
    sub_plan: bool,
    source: bool,
}

/// Whether the table's connector takes a filter and projection into its
/// read (Flink's `SupportsFilterPushDown`/`SupportsProjectionPushDown`).
pub fn pushes_down(table: &TableDef) -> bool {
    table
        .options
        .get("connector")
        .is_some_and(|c| c.trim().eq_ignore_ascii_case("filesystem"))
}

/// The columns a scan reads: for a connector that takes the projection,
/// those the fused filter and projection use (in table order), else all.
pub fn read_columns(
    table: &TableDef,
    predicate: Option<&operators::expr::Expr>,
    projection: Option<&[operators::expr::Expr]>,
) -> Vec<usize> {
    let width = table.schema.len();
    if !pushes_down(table) {
        return (0..width).collect();
    }
    let mut used = Vec::new();
    predicate.iter().for_each(|p| p.columns(&mut used));
    match projection {
        Some(p) => p.iter().for_each(|e| e.columns(&mut used)),
        None => used.extend(0..width),
    }
    used.sort_unstable();
    used.dedup();
    used
}

fn contains_source(node: &PhysicalNode) -> bool {
    matches!(node.kind, NodeKind::Source { .. }) || node.inputs.iter().any(contains_source)
}

/// What a sub-plan computes, in full, without the names its columns go by
/// (`FROM t a` and `FROM t b` read the same rows).
fn computation(node: &PhysicalNode) -> String {
    let inputs: Vec<String> = node.inputs.iter().map(computation).collect();
    format!(
        "{:?}|{:?}|{}|{:?}|{}|[{}]",
        node.kind,
        node.schema.types(),
        node.changelog,
        node.unique_key,
        node.parallelism,
        inputs.join(";")
    )
}

impl Reuse {
    pub fn new(config: &Config) -> Reuse {
        let sub_plan = config.reuse_sub_plan_enabled();
        Reuse {
            sub_plan,
            source: sub_plan && config.reuse_source_enabled(),
        }
    }

    /// The key under which `node`'s whole sub-plan is shared with identical
    /// ones; `None` when it is not shared.
    pub fn sub_plan_key(&self, node: &PhysicalNode) -> Option<String> {
        if !self.sub_plan || (!self.source && contains_source(node)) {
            return None;
        }
        Some(computation(node))
    }

    /// The key under which a scan's read is shared (`node` is a
    /// [`NodeKind::Source`], its fused filter and projection included);
    /// `None` when it is not shared.
    pub fn scan_key(&self, node: &PhysicalNode) -> Option<String> {
        let NodeKind::Source { table, .. } = &node.kind else {
            return None;
        };
        if !self.source {
            return None;
        }
        Some(match &node.kind {
            NodeKind::Source {
                predicate,
                projection,
                ..
            } if pushes_down(table) => format!(
                "{table:?}|{predicate:?}|{:?}",
                read_columns(table, predicate.as_ref(), projection.as_deref())
            ),
            _ => format!("{table:?}"),
        })
    }
}
