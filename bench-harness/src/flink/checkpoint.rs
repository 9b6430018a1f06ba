//! State size on Flink, from the final checkpoint of a bounded job.
//!
//! Flink exposes state size only while a job runs (RocksDB's native
//! metrics, sampled every 10 s) or in completed checkpoints, and a bounded
//! job usually ends first. With checkpointing on
//! (`execution.checkpointing.interval`), Flink 2.x takes checkpoints after
//! tasks finish (`execution.checkpointing.checkpoints-after-tasks-finish`,
//! default true; FLIP-147): a task that reached the end of its input
//! finishes its operators, still snapshots their state
//! (`RegularOperatorChain::snapshotState` skips closed operators only, and
//! operators close after the final checkpoint), and waits for the first
//! checkpoint triggered after that before it ends. So the newest checkpoint
//! a vertex's subtasks all acknowledged holds its state at the end of the
//! input, and the job ends at most one interval after its input.
//!
//! The checkpoint statistics of the REST API (`/jobs/<id>/checkpoints`,
//! `/jobs/<id>/checkpoints/details/<id>`) give each vertex's `state_size`:
//! the bytes of its snapshot as written (the heap backend's serialized
//! key/value pairs; RocksDB's SST files of a full checkpoint, or the
//! checkpoint's share of them with incremental checkpoints), sources'
//! split state included.

use super::rest::Rest;
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// A finished job's state, by vertex id, from its checkpoints.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CheckpointedState {
    /// Per vertex: the state size in the newest checkpoint all its subtasks
    /// acknowledged.
    pub bytes_by_vertex: BTreeMap<String, u64>,
    /// The newest completed checkpoint's id, and how many completed.
    pub latest: u64,
    pub completed: u64,
}

impl CheckpointedState {
    pub fn total_bytes(&self) -> u64 {
        self.bytes_by_vertex.values().sum()
    }
}

/// The job's checkpointed state; `None` when it took no checkpoint (or
/// checkpointing was off).
pub fn read(rest: &Rest, job_id: &str, vertex_ids: &[String]) -> Option<CheckpointedState> {
    let overview = rest.get(&format!("/jobs/{job_id}/checkpoints")).ok()?;
    let completed = overview["counts"]["completed"].as_u64().unwrap_or(0);
    if completed == 0 {
        return None;
    }
    let mut ids: Vec<u64> = overview["history"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["status"].as_str() == Some("COMPLETED"))
        .filter_map(|c| c["id"].as_u64())
        .collect();
    ids.sort_unstable_by(|a, b| b.cmp(a));
    let mut state = CheckpointedState {
        latest: ids.first().copied().unwrap_or(0),
        completed,
        ..Default::default()
    };
    for id in ids {
        if vertex_ids
            .iter()
            .all(|v| state.bytes_by_vertex.contains_key(v))
        {
            break;
        }
        let Ok(detail) = rest.get(&format!("/jobs/{job_id}/checkpoints/details/{id}")) else {
            continue;
        };
        for (vertex, bytes) in acknowledged(&detail) {
            state.bytes_by_vertex.entry(vertex).or_insert(bytes);
        }
    }
    Some(state)
}

/// The vertices of a checkpoint's details that every subtask acknowledged,
/// with their state size.
fn acknowledged(detail: &Json) -> Vec<(String, u64)> {
    let Some(tasks) = detail["tasks"].as_object() else {
        return Vec::new();
    };
    tasks
        .iter()
        .filter(|(_, t)| {
            let n = t["num_subtasks"].as_u64().unwrap_or(0);
            n > 0 && t["num_acknowledged_subtasks"].as_u64() == Some(n)
        })
        .map(|(v, t)| (v.clone(), t["state_size"].as_u64().unwrap_or(0)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_vertices_every_subtask_acknowledged() {
        let detail: Json = serde_json::json!({
            "id": 5,
            "tasks": {
                "agg": {"state_size": 479260, "num_subtasks": 2, "num_acknowledged_subtasks": 2},
                "src": {"state_size": 0, "num_subtasks": 2, "num_acknowledged_subtasks": 0},
                "sink": {"state_size": 7, "num_subtasks": 0, "num_acknowledged_subtasks": 0}
            }
        });
        assert_eq!(acknowledged(&detail), vec![("agg".to_string(), 479260)]);
        let s = CheckpointedState {
            bytes_by_vertex: [("a".to_string(), 5), ("b".to_string(), 7)].into(),
            latest: 3,
            completed: 3,
        };
        assert_eq!(s.total_bytes(), 12);
    }
}
