//! The walk that turns physical plans into EXPLAIN nodes: each node
//! describes itself ([`NodeSpec::explain`]); the walk adds what Flink shows
//! between nodes (keyed exchanges as `Exchange` nodes, the sink, the
//! materializer folded into it) and the identities that mark what the job
//! shares ([`Reuse`]).
//!
//! [`NodeSpec::explain`]: crate::physical::node::NodeSpec::explain

use crate::config::Config;
use crate::physical::display::{list, unique_names};
use crate::physical::node::explain::{qualified, same, ExplainContext, ExplainNode, Role};
use crate::physical::node::source::Source;
use crate::physical::plan::{JobSettings, PhysicalNode, PhysicalPlan};
use crate::physical::reuse::Reuse;
use operators::exec::Exchange;

/// Turns physical plans into EXPLAIN nodes.
pub(crate) struct Builder<'a> {
    /// The session's configuration, for advice.
    config: Option<&'a Config>,
    /// The plan's settings: what the job shares, the mini-batch interval.
    settings: Option<&'a JobSettings>,
    reuse: Option<Reuse>,
    /// Numbers identities that are shared with nothing.
    unique: usize,
    /// Whether the node being described sits below a mini-batch operator.
    under_mini_batch: bool,
}

impl ExplainContext for Builder<'_> {
    fn identity(&mut self, n: &PhysicalNode) -> String {
        match self.reuse.as_ref().and_then(|r| r.sub_plan_key(n)) {
            Some(k) => k,
            None => self.unique(),
        }
    }

    fn unique(&mut self) -> String {
        self.unique += 1;
        format!("#{}", self.unique)
    }

    fn scan_identity(&mut self, n: &PhysicalNode) -> String {
        match self.reuse.as_ref().and_then(|r| r.scan_key(n)) {
            Some(k) => format!("SCAN|{k}"),
            None => self.unique(),
        }
    }

    fn under_mini_batch(&self) -> bool {
        self.under_mini_batch
    }

    fn mini_batch_interval_ms(&self) -> u128 {
        self.settings
            .and_then(|s| s.mini_batch_latency)
            .map(|d| d.as_millis())
            .unwrap_or(0)
    }

    fn two_phase_advice(&self) -> Option<String> {
        self.config.and_then(two_phase_advice)
    }
}

impl<'a> Builder<'a> {
    /// A builder for a job planned with `settings`, explained in a
    /// session under `config`.
    pub fn new(config: &'a Config, settings: &'a JobSettings) -> Builder<'a> {
        Builder {
            config: Some(config),
            settings: Some(settings),
            reuse: Some(Reuse::new(settings)),
            unique: 0,
            under_mini_batch: false,
        }
    }

    /// A builder for one node's description (no job around it).
    pub fn plain() -> Builder<'a> {
        Builder {
            config: None,
            settings: None,
            reuse: None,
            unique: 0,
            under_mini_batch: false,
        }
    }

    /// The sink of `plan` over its query.
    pub fn sink(&mut self, plan: &PhysicalPlan) -> ExplainNode {
        let root = &plan.root;
        let mut sink = ExplainNode::new("Sink", root, self.unique());
        sink.changelog = None;
        sink.role = Role::Sink(plan.sink.table.name.clone());
        sink.attrs
            .push(same("table", qualified(&plan.sink.table.name)));
        sink.attrs
            .push(same("fields", unique_names(&root.schema).join(", ")));
        if root.spec().fold_into_sink(&mut sink) {
            sink.inputs.push(self.input(root, 0, false));
        } else {
            sink.inputs.push(self.node(root, false));
        }
        sink
    }

    /// A query without a sink (`EXPLAIN SELECT`).
    pub fn query(&mut self, root: &PhysicalNode) -> ExplainNode {
        self.node(root, false)
    }

    /// Input `i` of `parent`, under an `Exchange` when it is keyed.
    fn input(&mut self, parent: &PhysicalNode, i: usize, under_mini_batch: bool) -> ExplainNode {
        let child = &parent.inputs[i];
        let node = self.node(child, under_mini_batch || parent.spec().is_mini_batch());
        let (dist, ship) = match parent.input_exchange(i) {
            Exchange::Single => ("single".to_string(), "GLOBAL"),
            Exchange::Hash(k) => (
                format!("hash[{}]", list(&unique_names(&child.schema), &k)),
                "HASH",
            ),
            // Flink prints neither: they are chained (or rebalanced).
            Exchange::Forward | Exchange::Rebalance => return node,
        };
        let mut x = ExplainNode::new("Exchange", child, format!("X|{dist}|{}", node.identity));
        x.attrs.push(same("distribution", dist));
        x.role = Role::Exchange(ship);
        x.parallelism = parent.parallelism;
        x.inputs.push(node);
        x
    }

    /// The node (and its inputs).
    pub fn node(&mut self, n: &PhysicalNode, under_mini_batch: bool) -> ExplainNode {
        self.under_mini_batch = under_mini_batch;
        let mut e = n.spec().explain(n, self);
        let private = n.spec().reads_own_inputs();
        let id = e.identity.clone();
        for i in 0..n.inputs.len() {
            let mut x = self.input(n, i, under_mini_batch);
            if private {
                // Its inputs are the tables it looks up, read by it alone.
                mark_private(&mut x, &format!("{id}|input{i}"));
            }
            e.inputs.push(x);
        }
        e
    }
}

/// Makes `node`'s subtree shared with nothing but copies of itself.
fn mark_private(node: &mut ExplainNode, prefix: &str) {
    node.identity = format!("{prefix}|{}", node.identity);
    for (i, c) in node.inputs.iter_mut().enumerate() {
        mark_private(c, &format!("{prefix}|{i}"));
    }
}

/// Flink's advice for a one-phase aggregate that could run in two phases
/// (its `GroupAggregationAnalyzer`): the settings that would allow it.
fn two_phase_advice(config: &Config) -> Option<String> {
    use crate::config::{
        AggPhaseStrategy, AGG_PHASE_STRATEGY, MINI_BATCH_ALLOW_LATENCY, MINI_BATCH_ENABLED,
        MINI_BATCH_SIZE,
    };
    let mut tuning: Vec<String> = Vec::new();
    if config.agg_phase_strategy() == AggPhaseStrategy::OnePhase {
        tuning.push(format!("'{AGG_PHASE_STRATEGY}' to 'AUTO'"));
    }
    if !config.mini_batch_enabled() {
        tuning.push(format!("'{MINI_BATCH_ENABLED}' to 'true'"));
    }
    if config.mini_batch_allow_latency().is_zero() {
        tuning.push(format!(
            "'{MINI_BATCH_ALLOW_LATENCY}' to a positive long value"
        ));
    }
    if config.mini_batch_size() <= 0 {
        tuning.push(format!("'{MINI_BATCH_SIZE}' to a positive long value"));
    }
    if tuning.is_empty() {
        return None;
    }
    Some(format!(
        "[ADVICE] You might want to enable local-global two-phase optimization by configuring ({}).",
        tuning.join(", ")
    ))
}

/// One line describing a node, as the execution plan prints it (also the
/// stage name in run summaries and the description in compiled plans).
pub fn describe(node: &PhysicalNode) -> String {
    let mut b = Builder::plain();
    let e = node.spec().explain(node, &mut b);
    if !node.kind.is::<Source>() {
        return e.exec_line();
    }
    // A read: the scan, and the Calc applied as it reads.
    let mut lines = Vec::new();
    let mut cur = Some(&e);
    while let Some(n) = cur {
        lines.push(n.exec_line());
        cur = n.inputs.first();
    }
    lines.reverse();
    lines.join(" -> ")
}
