//! Operator uids, as Flink 2.x SQL makes them: what a checkpoint files an
//! operator's state under.
//!
//! Flink's `ExecNodeBase.generateUid` fills `table.exec.uid.format`
//! (default `<id>_<transformation>`) with the node's id in the compiled
//! plan (`<id>`), its type without and with version (`<type>`,
//! `<version>`: `stream-exec-group-aggregate`, `1`) and the name of the
//! transformation (`<transformation>`: `group-aggregate`), and
//! `table.exec.uid.generation` says when: `PLAN_ONLY` (the default) only
//! for a job run from a compiled plan, whose ids are stable; `ALWAYS` for
//! every job; `DISABLED` never. An operator without a uid gets one from
//! the executor, from its place in the job and its description, as
//! Flink's lower layers hash the topology: stable as long as the query is.
//!
//! Ids are those of compiled plans (`compiled_plan.rs`): the nodes in
//! post-order from 1, counted on across the plans of a statement set.

use super::node::PhysicalNode;
pub use crate::config::UidGeneration;
use std::collections::HashMap;

/// Each node's compiled-plan id, by address, for the plans of one job.
pub fn node_ids<'a>(
    roots: impl IntoIterator<Item = &'a PhysicalNode>,
) -> HashMap<*const PhysicalNode, usize> {
    fn walk(n: &PhysicalNode, ids: &mut HashMap<*const PhysicalNode, usize>, next: &mut usize) {
        for c in &n.inputs {
            walk(c, ids, next);
        }
        *next += 1;
        ids.insert(n as *const PhysicalNode, *next);
    }
    let mut ids = HashMap::new();
    let mut next = 0;
    for r in roots {
        walk(r, &mut ids, &mut next);
    }
    ids
}

/// The uid `format` gives node `id` of compiled-plan type `type_name`
/// (`stream-exec-group-aggregate_1`).
pub fn format_uid(format: &str, id: usize, type_name: &str) -> String {
    let (ty, version) = type_name.rsplit_once('_').unwrap_or((type_name, "1"));
    let transformation = ty.strip_prefix("stream-exec-").unwrap_or(ty);
    format
        .replace("<id>", &id.to_string())
        .replace("<type>", ty)
        .replace("<version>", version)
        .replace("<transformation>", transformation)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flink_s_default_format_names_id_and_transformation() {
        let t = "stream-exec-group-aggregate_1";
        assert_eq!(
            format_uid("<id>_<transformation>", 3, t),
            "3_group-aggregate"
        );
        assert_eq!(
            format_uid("<id>_<type>_<version>", 3, t),
            "3_stream-exec-group-aggregate_1"
        );
        assert!(UidGeneration::PlanOnly.applies(true));
        assert!(!UidGeneration::PlanOnly.applies(false));
        assert!(UidGeneration::Always.applies(false));
        assert!(!UidGeneration::Disabled.applies(true));
    }
}
