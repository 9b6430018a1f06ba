//! `SinkMaterializer`: keys an updating result by the sink's primary key
//! (Flink's `SinkUpsertMaterializer`) when the query's unique key differs
//! from it, so the sink receives one upsert stream per primary key. It
//! keeps every row of each key and emits upserts: `+I`/`+U`, and `-D` when
//! its input retracts. When one is added: `physical/rules/sink_upsert_materializer.rs`.

use super::build::{operator_stage, JobContext, Out};
use super::check::{self, Check};
use super::explain::{same, ExplainContext, ExplainNode};
use super::state::{StateSlot, StateTtl};
use super::PhysicalNode;
use crate::error::Result;
use crate::physical::display::{list, unique_names};
use operators::changelog::ChangelogMode;
use operators::exec::Exchange;
use operators::sink_materializer::SinkUpsertMaterializer;

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct SinkMaterializer {
    pub primary_key: Vec<usize>,
    /// Idle state retention of its state.
    #[serde(skip, default)]
    pub ttl: StateTtl,
}

impl SinkMaterializer {
    pub const TYPE_NAMES: &'static [&'static str] = &["stream-exec-sink-upsert-materializer_1"];

    /// `root` keyed by the sink's primary key `pk` (before: `Sink <- root`;
    /// after: `Sink <- SinkMaterializer(pk) <- root`, hashed on `pk`).
    pub fn over(
        root: PhysicalNode,
        pk: Vec<usize>,
        ttl: StateTtl,
        parallelism: usize,
    ) -> PhysicalNode {
        let schema = root.schema.clone();
        PhysicalNode::new(
            SinkMaterializer {
                primary_key: pk.clone(),
                ttl,
            },
            vec![root],
            schema,
            Some(pk),
            parallelism,
        )
    }
}

impl super::NodeSpec for SinkMaterializer {
    fn label(&self) -> String {
        "SinkMaterializer".into()
    }

    fn type_name(&self) -> &'static str {
        // Flink folds it into its sink node (`upsertMaterialize`).
        Self::TYPE_NAMES[0]
    }

    fn input_count(&self) -> usize {
        1
    }

    fn input_exchange(&self, _node: &PhysicalNode, _i: usize) -> Exchange {
        Exchange::Hash(self.primary_key.clone())
    }

    fn changelog(&self, inputs: &[PhysicalNode]) -> ChangelogMode {
        ChangelogMode {
            insert: true,
            update_before: false,
            update_after: true,
            delete: !inputs[0].is_insert_only(),
        }
    }

    // (A materializer finds the rows to retract by their -U: the default
    // `require_update_before`.)

    fn states(&self) -> Vec<StateSlot> {
        vec![StateSlot::new("sinkMaterializeState", &self.ttl)]
    }

    fn set_state_ttls(&mut self, ttls: Vec<StateTtl>) {
        if let Some(t) = ttls.into_iter().next() {
            self.ttl = t;
        }
    }

    /// Only ever the root, folded into the sink; alone (EXPLAIN of a node)
    /// it shows as the operator the lab runs.
    fn explain(&self, n: &PhysicalNode, ctx: &mut dyn ExplainContext) -> ExplainNode {
        let mut e = ExplainNode::new("SinkMaterializer", n, ctx.identity(n));
        e.attrs.push(same(
            "pk",
            list(&unique_names(&n.schema), &self.primary_key),
        ));
        e.lab.push(("stateTtl", self.ttl.describe()));
        e
    }

    fn fold_into_sink(&self, sink: &mut ExplainNode) -> bool {
        sink.attrs.push(same("upsertMaterialize", "true"));
        sink.lab.push(("stateTtl", self.ttl.describe()));
        true
    }

    fn validate(&self, node: &PhysicalNode) -> Check {
        let input = &node.inputs[0].schema;
        check::columns(
            &check::field(node, "primary_key"),
            &self.primary_key,
            input.len(),
            "the input",
        )?;
        if self.primary_key.is_empty() {
            return Err(check::invalid(
                check::field(node, "primary_key"),
                "a primary key has at least one column",
            ));
        }
        check::schema_types(&node.schema, &input.types(), "the input")
    }

    fn build(&self, node: &PhysicalNode, id: usize, ctx: &mut dyn JobContext) -> Result<Out> {
        let scope = format!("{id}-SinkMaterializer");
        let backend = ctx.backend().clone();
        backend.set_ttl(&scope, "*", self.ttl.duration());
        let arity = node.schema.len();
        operator_stage(node, ctx, || {
            let o = SinkUpsertMaterializer::new(&backend, &scope, self.primary_key.clone(), arity)?;
            Ok(Box::new(o))
        })
    }
}
