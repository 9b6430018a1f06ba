//! `Union`: `UNION ALL` of two inputs, stateless (Flink's
//! `StreamExecUnion`): every change of either input passes on unchanged, so
//! the output's changelog is the union of the inputs' and it has no unique
//! key (the same row may come from both sides).
//!
//! Flink does not run a union as an operator of its own (it merges the
//! input streams); the lab runs it as a stage that forwards its inputs'
//! batches, so each input keeps its own order.

use super::build::{operator_stage, JobContext, Out};
use super::check::{self, Check};
use super::explain::{same, ExplainContext, ExplainNode};
use super::PhysicalNode;
use crate::error::Result;
use crate::logical::Schema;
use crate::physical::display::unique_names;
use operators::calc::CalcOperator;
use operators::changelog::ChangelogMode;

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Union {}

impl Union {
    pub const TYPE_NAMES: &'static [&'static str] = &["stream-exec-union_1"];

    /// `left UNION ALL right`, with the planner's `schema`, at the
    /// parallelism of the wider input.
    pub fn over(left: PhysicalNode, right: PhysicalNode, schema: Schema) -> PhysicalNode {
        let parallelism = left.parallelism.max(right.parallelism);
        PhysicalNode::new(Union {}, vec![left, right], schema, None, parallelism)
    }
}

impl super::NodeSpec for Union {
    fn label(&self) -> String {
        "Union".into()
    }

    fn type_name(&self) -> &'static str {
        Self::TYPE_NAMES[0]
    }

    fn input_count(&self) -> usize {
        2
    }

    fn changelog(&self, inputs: &[PhysicalNode]) -> ChangelogMode {
        inputs[0].changelog.union(inputs[1].changelog)
    }

    /// Passes `-U` on: its inputs must emit them if its output must.
    fn require_update_before(&mut self, _inputs: &[PhysicalNode], needed: bool) -> Option<bool> {
        Some(needed)
    }

    fn explain(&self, n: &PhysicalNode, ctx: &mut dyn ExplainContext) -> ExplainNode {
        let mut e = ExplainNode::new("Union", n, ctx.identity(n));
        e.attrs.push(same("all", "true"));
        e.attrs
            .push(same("union", unique_names(&n.schema).join(", ")));
        e
    }

    fn validate(&self, node: &PhysicalNode) -> Check {
        let left = node.inputs[0].schema.types();
        check::schema_types(&node.inputs[1].schema, &left, "the left input")?;
        check::schema_types(&node.schema, &left, "the left input")
    }

    fn build(&self, node: &PhysicalNode, _id: usize, ctx: &mut dyn JobContext) -> Result<Out> {
        // A Calc without filter or projection passes either input's rows on.
        operator_stage(node, ctx, || Ok(Box::new(CalcOperator::new(None, None))))
    }
}
