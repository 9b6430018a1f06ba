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
use super::node::{check, type_names};
use super::plan::{JobSettings, NodeKind, PhysicalNode, PhysicalPlan, SinkPlan};
use crate::config::{format_duration, parse_duration, ClockKind};
use crate::error::{PlanError, Result};
use crate::logical::Schema;
use operators::changelog::{ChangelogMode, SinkEncoding};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
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
    /// `"<n> ms"`; absent in plans from before watermarks (200 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    auto_watermark_interval: Option<String>,
    /// `"<n> ms"`; absent when sources never go idle (0 ms), so plans from
    /// before idle sources read the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    source_idle_timeout: Option<String>,
    /// `true` with breadth-first delivery; absent with depth-first, so plans
    /// from before the key read the same.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    breadth_first_delivery: bool,
}

impl SettingsEntry {
    fn new(s: &JobSettings) -> SettingsEntry {
        SettingsEntry {
            source_batch_size: s.source_batch_size,
            mini_batch_allow_latency: s.mini_batch_latency.map(format_duration),
            clock: s.clock,
            reuse_sub_plan: s.reuse_sub_plan,
            reuse_source: s.reuse_source,
            auto_watermark_interval: Some(format_duration(s.watermark_interval)),
            source_idle_timeout: (!s.source_idle_timeout.is_zero())
                .then(|| format_duration(s.source_idle_timeout)),
            breadth_first_delivery: s.breadth_first_delivery,
        }
    }

    fn settings(&self, file: &str) -> Result<JobSettings> {
        let max = JobSettings::max_source_batch_size();
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
        let watermark_interval = match &self.auto_watermark_interval {
            None => Duration::from_millis(200),
            Some(text) => duration(text, "settings.autoWatermarkInterval", file)?,
        };
        let source_idle_timeout = match &self.source_idle_timeout {
            None => Duration::ZERO,
            Some(text) => duration(text, "settings.sourceIdleTimeout", file)?,
        };
        Ok(JobSettings {
            source_batch_size: self.source_batch_size,
            mini_batch_latency: latency,
            clock: self.clock,
            reuse_sub_plan: self.reuse_sub_plan,
            reuse_source: self.reuse_source,
            watermark_interval,
            source_idle_timeout,
            breadth_first_delivery: self.breadth_first_delivery,
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

/// The most nodes a plan may have: walks of the tree recurse once per
/// level (a plan the lab compiles has far fewer; see `MAX_OPERATORS` in
/// `sql/script.rs`).
pub const MAX_NODES: usize = 1000;

/// The most subtasks a node may run: `parallelism.default`'s maximum
/// (Flink's upper bound of a job's maximum parallelism).
pub fn max_parallelism() -> usize {
    crate::config::maximum(crate::config::PARALLELISM_DEFAULT)
        .map_or(usize::MAX, |(m, _)| m as usize)
}

/// Rebuilds a plan from JSON; `file` names it in errors.
///
/// The file is untrusted input: every node is checked against its inputs
/// (column positions and arities, key lists, expression types, state
/// entries and TTLs, state layouts, parallelism; see
/// `physical/node/check.rs` and each kind's `validate`) and its changelog
/// against what it emits, so a plan that loads runs without a panic; an
/// error names the field by its JSON path (`nodes[3].spec.kind.Join.left_keys[0]`).
pub fn load(json: &str, file: &str) -> Result<PhysicalPlan> {
    let parsed: PlanFile = serde_json::from_str(json).map_err(|e| {
        plan_err(
            file,
            format!("line {} column {}: {e}", e.line(), e.column()),
        )
    })?;
    let err = |msg: String| plan_err(file, msg);
    if parsed.nodes.len() > MAX_NODES {
        return Err(err(format!(
            "nodes: {} nodes, more than the {MAX_NODES} a plan may have",
            parsed.nodes.len()
        )));
    }
    let settings = parsed.settings.settings(file)?;
    // Each node's position in `nodes` by its id.
    let mut position: HashMap<usize, usize> = HashMap::new();
    for (n, entry) in parsed.nodes.iter().enumerate() {
        if let Some(first) = position.insert(entry.id, n) {
            return Err(err(format!(
                "nodes[{n}].id: {} is the id of nodes[{first}] too",
                entry.id
            )));
        }
    }
    // Each node's inputs, by input index: (position of the input, edge).
    let mut inputs: Vec<Vec<Option<(usize, usize)>>> = parsed
        .nodes
        .iter()
        .map(|e| vec![None; e.spec.kind.spec().input_count()])
        .collect();
    let mut consumer: Vec<Option<usize>> = vec![None; parsed.nodes.len()];
    for (k, e) in parsed.edges.iter().enumerate() {
        let find = |id: usize, what: &str| {
            position
                .get(&id)
                .copied()
                .ok_or_else(|| err(format!("edges[{k}].{what}: no node has id {id}")))
        };
        let (src, dst) = (find(e.source, "source")?, find(e.target, "target")?);
        if src >= dst {
            return Err(err(format!(
                "edges[{k}]: node {} must come before its consumer {} in `nodes` (inputs first)",
                e.source, e.target
            )));
        }
        if let Some(other) = consumer[src] {
            return Err(err(format!(
                "edges[{k}].source: node {} already feeds node {}; a node feeds one consumer",
                e.source, parsed.nodes[other].id
            )));
        }
        let count = inputs[dst].len();
        let Some(slot) = inputs[dst].get_mut(e.input_index) else {
            return Err(err(format!(
                "edges[{k}].inputIndex: {} is not an input of node {} ({}, which takes {count})",
                e.input_index, e.target, parsed.nodes[dst].node_type
            )));
        };
        if slot.is_some() {
            return Err(err(format!(
                "edges[{k}].inputIndex: input {} of node {} is fed twice",
                e.input_index, e.target
            )));
        }
        *slot = Some((src, k));
        consumer[src] = Some(dst);
    }
    // Build the tree inputs first: when a node is reached, its inputs are
    // built and checked.
    let mut built: Vec<Option<PhysicalNode>> = Vec::with_capacity(parsed.nodes.len());
    for (n, entry) in parsed.nodes.iter().enumerate() {
        let at = format!("nodes[{n}]");
        let mut node_inputs = Vec::new();
        for (i, slot) in inputs[n].iter().enumerate() {
            let Some((src, _)) = slot else {
                return Err(err(format!(
                    "{at}: no edge feeds input {i} of node {} ({} takes {})",
                    entry.id,
                    entry.node_type,
                    inputs[n].len()
                )));
            };
            node_inputs.push(
                built[*src]
                    .take()
                    .expect("an input is built before its consumer"),
            );
        }
        built.push(Some(node(entry, &at, node_inputs, file)?));
    }
    let roots: Vec<usize> = (0..built.len())
        .filter(|&i| consumer[i].is_none())
        .collect();
    let root = match roots.as_slice() {
        [r] => built[*r].take().expect("the root is built"),
        _ => {
            return Err(err(format!(
                "expected one root node (a node no edge leaves), found {}",
                roots.len()
            )))
        }
    };
    check_sink(&parsed.sink, &root).map_err(err)?;
    Ok(PhysicalPlan {
        root,
        sink: parsed.sink,
        settings,
    })
}

/// The node of `entry` over its built (and checked) `inputs`, checked.
fn node(
    entry: &NodeEntry,
    at: &str,
    inputs: Vec<PhysicalNode>,
    file: &str,
) -> Result<PhysicalNode> {
    let err = |msg: String| plan_err(file, format!("{at}{msg}"));
    let types = type_names();
    if !types.contains(&entry.node_type.as_str()) {
        return Err(err(format!(
            ".type: unknown node type '{}'; known types: {}",
            entry.node_type,
            types.join(", ")
        )));
    }
    let mut kind = entry.spec.kind.clone();
    let spec_type = kind.spec().type_name();
    if spec_type != entry.node_type {
        return Err(err(format!(
            ".type: '{}' does not match its spec ({spec_type})",
            entry.node_type,
        )));
    }
    let states = kind.spec().states();
    let mut ttls = Vec::new();
    for (i, s) in entry.state.iter().enumerate() {
        let here = format!("{at}.state[{i}]");
        if s.index != i {
            return Err(plan_err(
                file,
                format!("{here}.index: {} is not {i}", s.index),
            ));
        }
        if let Some(slot) = states.get(i) {
            if s.name != slot.name {
                return Err(plan_err(
                    file,
                    format!(
                        "{here}.name: '{}' is not this node's state '{}'",
                        s.name, slot.name
                    ),
                ));
            }
        }
        let d = duration(&s.ttl, &format!("{here}.ttl"), file)?;
        ttls.push(StateTtl {
            ms: d.as_millis() as u64,
            origin: "plan".into(),
        });
    }
    if ttls.len() != states.len() {
        return Err(err(format!(
            ".state: expected {} state entries for {}, found {}",
            states.len(),
            entry.node_type,
            ttls.len()
        )));
    }
    kind.spec_mut().set_state_ttls(ttls);
    let spec = &entry.spec;
    let max = max_parallelism();
    if !(1..=max).contains(&spec.parallelism) {
        return Err(err(format!(
            ".spec.parallelism: {} is not between 1 and {max}",
            spec.parallelism
        )));
    }
    if let Some(key) = &spec.unique_key {
        let width = spec.schema.len();
        if let Some((j, c)) = key.iter().enumerate().find(|(_, c)| **c >= width) {
            return Err(err(format!(
                ".spec.unique_key[{j}]: column {c} does not exist: the node has {width} column(s)"
            )));
        }
    }
    let node = PhysicalNode {
        kind,
        inputs,
        schema: spec.schema.clone(),
        changelog: spec.changelog,
        unique_key: spec.unique_key.clone(),
        parallelism: spec.parallelism,
    };
    node.spec()
        .validate(&node)
        .map_err(|e| match e.field.as_str() {
            "" => err(format!(": {}", e.message)),
            field => err(format!(".spec.{field}: {}", e.message)),
        })?;
    let emits = node.spec().changelog(&node.inputs);
    if emits != node.changelog {
        return Err(err(format!(
            ".spec.changelog: {} is not what the node emits over its inputs: {emits}",
            node.changelog
        )));
    }
    Ok(node)
}

/// Checks the sink against the root it writes.
fn check_sink(sink: &SinkPlan, root: &PhysicalNode) -> std::result::Result<(), String> {
    let table = &sink.table;
    let width = table.schema.len();
    if width != root.schema.len() {
        return Err(format!(
            "sink.table.schema: {width} column(s), but the plan's root makes {}",
            root.schema.len()
        ));
    }
    for (i, (f, r)) in table
        .schema
        .fields
        .iter()
        .zip(&root.schema.fields)
        .enumerate()
    {
        if !check::fits(Some(r.data_type), f.data_type) {
            return Err(format!(
                "sink.table.schema.fields[{i}]: column '{}' is {}, but the plan's root makes {}",
                f.name, f.data_type, r.data_type
            ));
        }
    }
    let in_range =
        |at: &str, cols: &[usize]| match cols.iter().enumerate().find(|(_, c)| **c >= width) {
            Some((j, c)) => Err(format!(
                "{at}[{j}]: column {c} does not exist: the sink has {width} column(s)"
            )),
            None => Ok(()),
        };
    if let Some(pk) = &table.primary_key {
        in_range("sink.table.primary_key", pk)?;
    }
    if let SinkEncoding::Upsert { key } = &sink.encoding {
        in_range("sink.encoding.Upsert.key", key)?;
    }
    Ok(())
}
