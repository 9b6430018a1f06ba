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
use super::plan::{JobSettings, PhysicalNode};
use std::cell::RefCell;
use std::collections::HashMap;

/// What the job's settings allow to be shared, and the sub-plans seen.
///
/// A sub-plan's key is the number of what it computes: its own node in
/// full (without the names its columns go by: `FROM t a` and `FROM t b`
/// read the same rows) and its inputs by their numbers, so equal numbers
/// mean equal sub-plans and each node is written out once. Numbers are
/// remembered by node address: a `Reuse` serves one walk over plans that
/// do not change meanwhile (building a job, explaining a statement).
#[derive(Debug)]
pub struct Reuse {
    sub_plan: bool,
    source: bool,
    /// Per node seen: its computation's number, and whether it reads a
    /// table.
    seen: RefCell<HashMap<*const PhysicalNode, (usize, bool)>>,
    /// The number of each computation.
    numbers: RefCell<HashMap<String, usize>>,
}

impl Reuse {
    pub fn new(settings: &JobSettings) -> Reuse {
        Reuse {
            sub_plan: settings.reuse_sub_plan,
            source: settings.reuse_sub_plan && settings.reuse_source,
            seen: RefCell::default(),
            numbers: RefCell::default(),
        }
    }

    /// The number of what `node`'s sub-plan computes, and whether it reads
    /// a table.
    fn computation(&self, node: &PhysicalNode) -> (usize, bool) {
        let at = node as *const PhysicalNode;
        if let Some(&c) = self.seen.borrow().get(&at) {
            return c;
        }
        let inputs: Vec<(usize, bool)> = node.inputs.iter().map(|c| self.computation(c)).collect();
        let text = format!(
            "{:?}|{:?}|{}|{:?}|{}|{:?}",
            node.kind,
            node.schema.types(),
            node.changelog,
            node.unique_key,
            node.parallelism,
            inputs.iter().map(|c| c.0).collect::<Vec<_>>()
        );
        let reads = node.kind.is::<Source>() || inputs.iter().any(|c| c.1);
        let mut numbers = self.numbers.borrow_mut();
        let next = numbers.len();
        let number = *numbers.entry(text).or_insert(next);
        self.seen.borrow_mut().insert(at, (number, reads));
        (number, reads)
    }

    /// The key under which `node`'s whole sub-plan is shared with identical
    /// ones; `None` when it is not shared.
    pub fn sub_plan_key(&self, node: &PhysicalNode) -> Option<String> {
        if !self.sub_plan {
            return None;
        }
        let (number, reads) = self.computation(node);
        if reads && !self.source {
            return None;
        }
        Some(format!("plan#{number}"))
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
