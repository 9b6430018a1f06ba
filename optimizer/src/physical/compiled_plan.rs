//! Compiled plans: `COMPILE PLAN 'plan.json' FOR INSERT ...` writes the
//! physical plan as JSON; `EXECUTE PLAN 'plan.json'` rebuilds it.
//!
//! The file is for people to read and edit, as Flink's is: a list of
//! `nodes`, each with `id`, `type`, `description`, `outputType`, and for
//! stateful operators a `state` array of `{"index", "ttl", "name"}` (TTL as
//! `"<n> ms"`), plus `edges` from input node to consuming node. Each node
//! also carries its full `spec`, so the plan is rebuilt exactly. A TTL
//! edited in `state` wins over hint and config (origin `plan`); the rest of
//! the spec is taken as written. `settings` holds what the whole job runs
//! with (source batch size, mini-batch allow-latency, clock, reuse): a
//! plan runs as it was planned, whatever the session it is executed in
//! sets (the session chooses only the state backend and its directory).
//!
//! Compiling, executing and compiling again gives the same JSON: the TTL
//! lives only in `state`, and every other field is written from the spec.

use super::explain::describe;
use super::node::state::StateTtl;
use super::plan::{JobSettings, NodeKind, PhysicalNode, PhysicalPlan, SinkPlan};
use crate::config::{format_duration, parse_duration, ClockKind};
use crate::error::{PlanError, Result};
use crate::logical::Schema;
use operators::changelog::ChangelogMode;
use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanFile {
    #[serde(rename = "flinkVersion")]
    flink_version: String,
    nodes: Vec<NodeEntry>,
    edges: Vec<Edge>,
    sink: SinkPlan,
    settings: SettingsEntry,
}

/// [`JobSettings`] as the file writes them.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct SettingsEntry {
    source_batch_size: usize,
    /// `"<n> ms"`; `null` with mini-batch off.
    mini_batch_allow_latency: Option<String>,
    clock: ClockKind,
    reuse_sub_plan: bool,
    reuse_source: bool,
}

impl SettingsEntry {
    fn new(s: &JobSettings) -> SettingsEntry {
        SettingsEntry {
            source_batch_size: s.source_batch_size,
            mini_batch_allow_latency: s.mini_batch_latency.map(format_duration),
            clock: s.clock,
            reuse_sub_plan: s.reuse_sub_plan,
            reuse_source: s.reuse_source,
        }
    }

    fn settings(&self, file: &str) -> Result<JobSettings> {
        let max = JobSettings::MAX_SOURCE_BATCH_SIZE;
        if !(1..=max).contains(&self.source_batch_size) {
            return Err(plan_err(
                file,
                format!(
                    "settings.sourceBatchSize: {} is not between 1 and {max}",
                    self.source_batch_size
                ),
            ));
        }
        let latency = match &self.mini_batch_allow_latency {
            None => None,
            Some(text) => Some(duration(text, "settings.miniBatchAllowLatency", file)?),
        };
        Ok(JobSettings {
            source_batch_size: self.source_batch_size,
            mini_batch_latency: latency,
            clock: self.clock,
            reuse_sub_plan: self.reuse_sub_plan,
            reuse_source: self.reuse_source,
        })
    }
}

/// A duration the file writes as `"<n> ms"` (a unit is required).
fn duration(text: &str, at: &str, file: &str) -> Result<Duration> {
    if !text.trim().chars().any(|c| c.is_ascii_alphabetic()) {
        return Err(plan_err(
            file,
            format!(
                "{at}: '{text}' has no unit; write e.g. '{} ms'",
                text.trim()
            ),
        ));
    }
    parse_duration(text).map_err(|e| plan_err(file, format!("{at}: {e}")))
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeEntry {
    id: usize,
    #[serde(rename = "type")]
    node_type: String,
    description: String,
    #[serde(rename = "outputType")]
    output_type: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    state: Vec<StateEntry>,
    spec: NodeSpec,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StateEntry {
    index: usize,
    ttl: String,
    name: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeSpec {
    kind: NodeKind,
    schema: Schema,
    changelog: ChangelogMode,
    unique_key: Option<Vec<usize>>,
    parallelism: usize,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Edge {
    source: usize,
    target: usize,
    #[serde(rename = "inputIndex")]
    input_index: usize,
}

fn output_type(schema: &Schema) -> String {
    let fields: Vec<String> = schema
        .fields
        .iter()
        .map(|f| {
            format!(
                "`{}` {}{}",
                f.name,
                f.data_type,
                if f.nullable { "" } else { " NOT NULL" }
            )
        })
        .collect();
    format!("ROW<{}>", fields.join(", "))
}

fn collect(node: &PhysicalNode, nodes: &mut Vec<NodeEntry>, edges: &mut Vec<Edge>) -> usize {
    let children: Vec<usize> = node
        .inputs
        .iter()
        .map(|c| collect(c, nodes, edges))
        .collect();
    let id = nodes.len() + 1;
    for (i, c) in children.into_iter().enumerate() {
        edges.push(Edge {
            source: c,
            target: id,
            input_index: i,
        });
    }
    let state = node
        .spec()
        .states()
        .into_iter()
        .enumerate()
        .map(|(index, slot)| StateEntry {
            index,
            ttl: format_duration(Duration::from_millis(slot.ttl.ms)),
            name: slot.name,
        })
        .collect();
    nodes.push(NodeEntry {
        id,
        node_type: node.spec().type_name().to_string(),
        description: describe(node),
        output_type: output_type(&node.schema),
        state,
        spec: NodeSpec {
            kind: node.kind.clone(),
            schema: node.schema.clone(),
            changelog: node.changelog,
            unique_key: node.unique_key.clone(),
            parallelism: node.parallelism,
        },
    });
    id
}

/// The plan as pretty JSON.
pub fn compile(plan: &PhysicalPlan) -> String {
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    collect(&plan.root, &mut nodes, &mut edges);
    let file = PlanFile {
        flink_version: "2.1".into(),
        nodes,
        edges,
        sink: plan.sink.clone(),
        settings: SettingsEntry::new(&plan.settings),
    };
    serde_json::to_string_pretty(&file).expect("plans serialise") + "\n"
}

fn plan_err(file: &str, msg: String) -> PlanError {
    PlanError::plan(format!("{file}: {msg}"))
}

/// Rebuilds a plan from JSON; `file` names it in errors.
pub fn load(json: &str, file: &str) -> Result<PhysicalPlan> {
    let parsed: PlanFile = serde_json::from_str(json).map_err(|e| {
        plan_err(
            file,
            format!("line {} column {}: {e}", e.line(), e.column()),
        )
    })?;
    let mut built: Vec<Option<PhysicalNode>> = Vec::new();
    let mut ids = Vec::new();
    for (n, entry) in parsed.nodes.iter().enumerate() {
        let at = format!("nodes[{n}]");
        let types = NodeKind::type_names();
        if !types.contains(&entry.node_type.as_str()) {
            return Err(plan_err(
                file,
                format!(
                    "{at}.type: unknown node type '{}'; known types: {}",
                    entry.node_type,
                    types.join(", ")
                ),
            ));
        }
        let spec_type = entry.spec.kind.spec().type_name();
        if spec_type != entry.node_type {
            return Err(plan_err(
                file,
                format!(
                    "{at}.type: '{}' does not match its spec ({spec_type})",
                    entry.node_type,
                ),
            ));
        }
        let mut kind = entry.spec.kind.clone();
        let expected = kind.spec().states().len();
        let mut ttls = Vec::new();
        for (i, s) in entry.state.iter().enumerate() {
            let d = duration(&s.ttl, &format!("{at}.state[{i}].ttl"), file)?;
            ttls.push(StateTtl {
                ms: d.as_millis() as u64,
                origin: "plan".into(),
            });
        }
        if ttls.len() != expected {
            return Err(plan_err(
                file,
                format!(
                    "{at}.state: expected {expected} state entries for {}, found {}",
                    entry.node_type,
                    ttls.len()
                ),
            ));
        }
        kind.spec_mut().set_state_ttls(ttls);
        ids.push(entry.id);
        built.push(Some(PhysicalNode {
            kind,
            inputs: Vec::new(),
            schema: entry.spec.schema.clone(),
            changelog: entry.spec.changelog,
            unique_key: entry.spec.unique_key.clone(),
            parallelism: entry.spec.parallelism,
        }));
    }
    let index_of = |id: usize, what: &str| {
        ids.iter()
            .position(|x| *x == id)
            .ok_or_else(|| plan_err(file, format!("{what}: no node with id {id}")))
    };
    // Attach inputs: children always come before their consumer.
    let mut edges: Vec<&Edge> = parsed.edges.iter().collect();
    edges.sort_by_key(|e| (e.target, e.input_index));
    let mut consumed = vec![false; built.len()];
    for pos in 0..built.len() {
        let id = ids[pos];
        let mut inputs = Vec::new();
        for (k, e) in edges.iter().enumerate().filter(|(_, e)| e.target == id) {
            let src = index_of(e.source, &format!("edges[{k}].source"))?;
            let child = built[src].take().ok_or_else(|| {
                plan_err(
                    file,
                    format!(
                        "edges[{k}]: node {} feeds more than one node or comes after its consumer",
                        e.source
                    ),
                )
            })?;
            consumed[src] = true;
            inputs.push(child);
        }
        if let Some(n) = built[pos].as_mut() {
            n.inputs = inputs;
        }
    }
    let roots: Vec<usize> = (0..built.len())
        .filter(|i| !consumed[*i] && built[*i].is_some())
        .collect();
    let root = match roots.as_slice() {
        [r] => built[*r].take().expect("root"),
        _ => {
            return Err(plan_err(
                file,
                format!("expected one root node, found {}", roots.len()),
            ))
        }
    };
    Ok(PhysicalPlan {
        root,
        sink: parsed.sink,
        settings: parsed.settings.settings(file)?,
    })
}
