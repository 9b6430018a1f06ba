//! `LocalGroupAggregate`: the local half of a local-global aggregate. It
//! folds each mini-batch bundle into one partial accumulator per group key
//! and keeps no state; the `GlobalGroupAggregate` above merges the
//! partials (see `physical/rules/agg_strategy.rs`).
//!
//! Its output is the group key followed by the accumulator: the row count
//! and two slots per call (`acc$0`, `acc$1`, ...), insert-only.

use super::aggregate_calls::{
    call_text, check_calls, partial_final_attr, partial_names, PartialFinal,
};
use super::build::{operator_stage, JobContext, Out};
use super::check::{self, Check};
use super::explain::{same, ExplainContext, ExplainNode};
use super::PhysicalNode;
use crate::error::Result;
use crate::logical::{Field, Schema};
use crate::physical::display::{list, name, unique_names};
use operators::agg::core::not_mergeable;
use operators::agg::{AggKind, AggSpec, LocalAggregateOperator};
use operators::changelog::ChangelogMode;
use operators::exec::Exchange;
use operators::value::DataType;

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct LocalGroupAggregate {
    pub group_by: Vec<usize>,
    pub aggs: Vec<AggSpec>,
    pub agg_names: Vec<String>,
    /// Rows per bundle.
    pub mini_batch_size: usize,
    /// Set on the local halves of a split distinct aggregate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial_final: Option<PartialFinal>,
}

impl LocalGroupAggregate {
    pub const TYPE_NAMES: &'static [&'static str] = &["stream-exec-local-group-aggregate_1"];

    /// The local aggregate of `child` for these calls.
    pub fn over(
        child: PhysicalNode,
        local: LocalGroupAggregate,
        parallelism: usize,
    ) -> PhysicalNode {
        let schema = Schema {
            fields: local
                .group_by
                .iter()
                .map(|&i| child.schema.fields[i].clone())
                .chain((0..1 + 2 * local.aggs.len()).map(|i| Field {
                    name: format!("acc${i}"),
                    qualifier: None,
                    data_type: DataType::BigInt,
                    nullable: true,
                }))
                .collect(),
        };
        PhysicalNode::new(local, vec![child], schema, None, parallelism)
    }
}

impl super::NodeSpec for LocalGroupAggregate {
    fn label(&self) -> String {
        "LocalGroupAggregate".into()
    }

    fn type_name(&self) -> &'static str {
        Self::TYPE_NAMES[0]
    }

    fn input_count(&self) -> usize {
        1
    }

    /// A local aggregate closes bundles per subtask, so every version of
    /// one input row must reach the same subtask (or a retraction could
    /// overtake its row): an updating input read at another parallelism is
    /// hashed on its unique key (or, with none, on the group key, which
    /// keeps the order but not the spread).
    fn input_exchange(&self, node: &PhysicalNode, i: usize) -> Exchange {
        let child = &node.inputs[i];
        if child.parallelism == node.parallelism {
            Exchange::Forward
        } else if child.is_insert_only() {
            Exchange::Rebalance
        } else {
            match &child.unique_key {
                Some(k) if !k.is_empty() => Exchange::Hash(k.clone()),
                _ => Exchange::Hash(self.group_by.clone()),
            }
        }
    }

    fn changelog(&self, _inputs: &[PhysicalNode]) -> ChangelogMode {
        ChangelogMode::INSERT_ONLY
    }

    fn is_mini_batch(&self) -> bool {
        true
    }

    fn explain(&self, n: &PhysicalNode, ctx: &mut dyn ExplainContext) -> ExplainNode {
        let aggs = &self.aggs;
        let input = unique_names(&n.inputs[0].schema);
        let retract = !n.inputs[0].is_insert_only();
        let mut select: Vec<String> = self.group_by.iter().map(|&c| name(&input, c)).collect();
        for (a, acc) in aggs.iter().zip(partial_names(aggs)) {
            select.push(format!("{} AS {acc}", call_text(a, &input, retract)));
        }
        if retract && !aggs.iter().any(|a| a.kind == AggKind::CountStar) {
            // Flink counts the records of each group to know when it empties.
            let slot: usize = aggs
                .iter()
                .map(|a| if a.kind == AggKind::Avg { 2 } else { 1 })
                .sum();
            select.push(format!("COUNT_RETRACT(*) AS count1${slot}"));
        }
        let mut e = ExplainNode::new("LocalGroupAggregate", n, ctx.identity(n));
        if !self.group_by.is_empty() {
            e.attrs.push(same("groupBy", list(&input, &self.group_by)));
        }
        e.attrs.extend(partial_final_attr(&self.partial_final));
        e.attrs.push(same("select", select.join(", ")));
        e.lab
            .push(("miniBatchSize", self.mini_batch_size.to_string()));
        e
    }

    fn validate(&self, node: &PhysicalNode) -> Check {
        let input = &node.inputs[0];
        let types = input.schema.types();
        check::length(
            &check::field(node, "agg_names"),
            self.agg_names.len(),
            self.aggs.len(),
            "aggs",
        )?;
        check::bundle_size(&check::field(node, "mini_batch_size"), self.mini_batch_size)?;
        check_calls(node, &self.aggs, &types)?;
        if let Some(why) = not_mergeable(&self.aggs, input.is_insert_only()) {
            return Err(check::invalid(check::field(node, "aggs"), why));
        }
        check::columns(
            &check::field(node, "group_by"),
            &self.group_by,
            types.len(),
            "the input",
        )?;
        let mut out: Vec<DataType> = self.group_by.iter().map(|&c| types[c]).collect();
        out.extend(std::iter::repeat_n(
            DataType::BigInt,
            1 + 2 * self.aggs.len(),
        ));
        check::schema_types(&node.schema, &out, "the local aggregate")
    }

    fn build(&self, node: &PhysicalNode, _id: usize, ctx: &mut dyn JobContext) -> Result<Out> {
        operator_stage(node, ctx, || {
            let o = LocalAggregateOperator::new(
                self.group_by.clone(),
                self.aggs.clone(),
                self.mini_batch_size,
            )?;
            Ok(Box::new(o))
        })
    }
}
