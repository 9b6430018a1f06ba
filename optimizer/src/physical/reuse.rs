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

use super::node::source::{pushes_down, read_columns, Source};
use super::plan::JobSettings;
use super::plan::PhysicalNode;

/// What the job's settings allow to be shared.
#[derive(Clone, Copy, Debug)]
pub struct Reuse {
    sub_plan: bool,
    source: bool,
}

fn contains_source(node: &PhysicalNode) -> bool {
    node.kind.is::<Source>() || node.inputs.iter().any(contains_source)
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
    pub fn new(settings: &JobSettings) -> Reuse {
        Reuse {
            sub_plan: settings.reuse_sub_plan,
            source: settings.reuse_sub_plan && settings.reuse_source,
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
    /// table scan, its fused filter and projection included);
    /// `None` when it is not shared.
    pub fn scan_key(&self, node: &PhysicalNode) -> Option<String> {
        let source = node.kind.get::<Source>()?;
        if !self.source {
            return None;
        }
        let table = &source.table;
        Some(if pushes_down(table) {
            format!(
                "{table:?}|{:?}|{:?}",
                source.predicate,
                read_columns(
                    table,
                    source.predicate.as_ref(),
                    source.projection.as_deref()
                )
            )
        } else {
            format!("{table:?}")
        })
    }
}
