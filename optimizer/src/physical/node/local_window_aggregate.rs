//! `LocalWindowAggregate`: the local half of a two-phase window aggregate
//! (see `rules/window_agg_phase.rs`): per subtask, folds records into one
//! partial accumulator per group key and slice, emitted when the watermark
//! advances (`operators/src/window/local_window_agg.rs`). Its output is
//! the group key, two slots per call, and `$slice_end`.

use super::aggregate_calls::{call_text, partial_names};
use super::build::{operator_stage, JobContext, Out};
use super::check::{self, Check};
use super::explain::{same, ExplainContext, ExplainNode};
use super::window_attached::AttachedWindow;
use super::PhysicalNode;
use crate::error::Result;
use crate::logical::{Field, Schema};
use crate::physical::display::{list, name, unique_names};
use operators::agg::AggSpec;
use operators::changelog::ChangelogMode;
use operators::value::DataType;
use operators::window::{LocalWindowAggregateOperator, WindowSpec};

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct LocalWindowAggregate {
    pub group_by: Vec<usize>,
    pub aggs: Vec<AggSpec>,
    pub window: WindowSpec,
    pub time_col: usize,
    /// Window-attached: `time_col` is the input's `window_end`, and the
    /// partials carry it (`$window_end`) instead of a slice end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attached: Option<AttachedWindow>,
}

impl LocalWindowAggregate {
    pub const TYPE_NAMES: &'static [&'static str] = &["stream-exec-local-window-aggregate_1"];

    /// The local half over `child`: the group key, two slots per call,
    /// the slice end.
    pub fn over(
        child: PhysicalNode,
        local: LocalWindowAggregate,
        parallelism: usize,
    ) -> PhysicalNode {
        let mut fields: Vec<Field> = local
            .group_by
            .iter()
            .map(|&i| child.schema.fields[i].clone())
            .collect();
        fields.extend((0..2 * local.aggs.len()).map(|i| Field {
            name: format!("acc${i}"),
            qualifier: None,
            data_type: DataType::BigInt,
            nullable: true,
        }));
        let end = if local.attached.is_some() {
            "$window_end"
        } else {
            "$slice_end"
        };
        fields.push(Field {
            name: end.into(),
            qualifier: None,
            data_type: DataType::Timestamp,
            nullable: false,
        });
        PhysicalNode::new(local, vec![child], Schema { fields }, None, parallelism)
    }
}

impl super::NodeSpec for LocalWindowAggregate {
    fn label(&self) -> String {
        "LocalWindowAggregate".into()
    }

    fn type_name(&self) -> &'static str {
        Self::TYPE_NAMES[0]
    }

    fn input_count(&self) -> usize {
        1
    }

    fn writes_late_records(&self) -> bool {
        true
    }

    fn changelog(&self, _inputs: &[PhysicalNode]) -> ChangelogMode {
        ChangelogMode::INSERT_ONLY
    }

    fn require_update_before(&mut self, _inputs: &[PhysicalNode], _needed: bool) -> Option<bool> {
        Some(false)
    }

    fn explain(&self, n: &PhysicalNode, ctx: &mut dyn ExplainContext) -> ExplainNode {
        let input = unique_names(&n.inputs[0].schema);
        let mut e = ExplainNode::new("LocalWindowAggregate", n, ctx.identity(n));
        if !self.group_by.is_empty() {
            e.attrs.push(same("groupBy", list(&input, &self.group_by)));
        }
        let first = match &self.attached {
            Some(a) => a.explain(&input, self.time_col),
            None => format!("time_col=[{}]", name(&input, self.time_col)),
        };
        e.attrs.push(same("window", self.window.explain(&first)));
        let mut select: Vec<String> = self.group_by.iter().map(|&c| name(&input, c)).collect();
        let partials = partial_names(&self.aggs);
        select.extend(
            self.aggs
                .iter()
                .zip(&partials)
                .map(|(a, p)| format!("{} AS {p}", call_text(a, &input, false))),
        );
        select.push(if self.attached.is_some() {
            "slice_end('w$) AS $window_end".into()
        } else {
            "slice_end('w$) AS $slice_end".into()
        });
        e.attrs.push(same("select", select.join(", ")));
        e
    }

    fn validate(&self, node: &PhysicalNode) -> Check {
        let types = node.inputs[0].schema.types();
        super::aggregate_calls::check_calls(node, &self.aggs, &types)?;
        check::columns(
            &check::field(node, "group_by"),
            &self.group_by,
            types.len(),
            "the input",
        )?;
        check::column(
            &check::field(node, "time_col"),
            self.time_col,
            types.len(),
            "the input",
        )?;
        if !types[self.time_col].is_timestamp() || self.aggs.iter().any(|a| a.distinct) {
            return Err(check::invalid(
                check::field(node, "time_col"),
                "a local window aggregate needs a timestamp time column and no DISTINCT calls",
            ));
        }
        if !node.inputs[0].is_insert_only() {
            return Err(check::invalid(
                "",
                "a window aggregate reads an insert-only input",
            ));
        }
        check::length(
            "schema",
            node.schema.len(),
            self.group_by.len() + 2 * self.aggs.len() + 1,
            "the partials",
        )
    }

    fn build(&self, node: &PhysicalNode, _id: usize, ctx: &mut dyn JobContext) -> Result<Out> {
        operator_stage(node, ctx, || {
            let o = LocalWindowAggregateOperator::new(
                self.group_by.clone(),
                self.aggs.clone(),
                self.time_col,
                self.window,
            );
            Ok(Box::new(if self.attached.is_some() {
                o.attached()
            } else {
                o
            }))
        })
    }
}
