//! `Expand`: emits each input row several times, once per projection
//! (the split-distinct rewrite with distinct calls on several columns,
//! see `physical/rules/split_distinct.rs`). Stateless.

use super::build::{operator_stage, JobContext, Out};
use super::check::{self, Check};
use super::explain::{exprs, select_items, ExplainContext, ExplainNode};
use super::PhysicalNode;
use crate::error::Result;
use crate::physical::display::unique_names;
use operators::changelog::ChangelogMode;
use operators::expand::ExpandOperator;
use operators::expr::Expr;

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Expand {
    /// One projection per copy of the row, each over the input's columns.
    pub projections: Vec<Vec<Expr>>,
}

impl Expand {
    pub const TYPE_NAMES: &'static [&'static str] = &["stream-exec-expand_1"];
}

impl super::NodeSpec for Expand {
    fn label(&self) -> String {
        "Expand".into()
    }

    fn type_name(&self) -> &'static str {
        Self::TYPE_NAMES[0]
    }

    fn input_count(&self) -> usize {
        1
    }

    fn changelog(&self, inputs: &[PhysicalNode]) -> ChangelogMode {
        inputs[0].changelog
    }

    fn explain(&self, n: &PhysicalNode, ctx: &mut dyn ExplainContext) -> ExplainNode {
        let input = unique_names(&n.inputs[0].schema);
        let output = unique_names(&n.schema);
        let mut e = ExplainNode::new("Expand", n, ctx.identity(n));
        e.attrs.push(exprs("projects", |s| {
            self.projections
                .iter()
                .map(|p| format!("{{{}}}", select_items(p, &input, &output, s)))
                .collect::<Vec<_>>()
                .join(", ")
        }));
        e
    }

    fn validate(&self, node: &PhysicalNode) -> Check {
        let types = node.inputs[0].schema.types();
        let at = check::field(node, "projections");
        if self.projections.is_empty() {
            return Err(check::invalid(
                at,
                "an Expand needs at least one projection",
            ));
        }
        for (i, p) in self.projections.iter().enumerate() {
            check::projection(&format!("{at}[{i}]"), p, &types, &node.schema)?;
        }
        Ok(())
    }

    fn build(&self, node: &PhysicalNode, _id: usize, ctx: &mut dyn JobContext) -> Result<Out> {
        operator_stage(node, ctx, || {
            Ok(Box::new(ExpandOperator::new(self.projections.clone())))
        })
    }
}
