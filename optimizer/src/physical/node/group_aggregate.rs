//! `GroupAggregate`: a group aggregate keyed by its group key, one record
//! at a time or one mini-batch bundle at a time; in a local-global
//! aggregate, the global half (`GlobalGroupAggregate`), which merges the
//! partial accumulators of a [`super::local_group_aggregate`].
//!
//! It keeps one accumulator per group (plus distinct and MIN/MAX value maps
//! where its calls need them) and emits `+I` for a new group, `-U`/`+U`
//! when a group's result changes (the `-U` only where a consumer needs it)
//! and `-D` when a group empties (only over an input that retracts).

pub use super::aggregate_calls::PartialFinal;
use super::aggregate_calls::{
    call_text, check_calls, func_name, partial_final_attr, partial_names,
};
use super::build::{operator_stage, JobContext, Out};
use super::check::{self, Check};
use super::explain::{same, ExplainContext, ExplainNode};
use super::local_group_aggregate::LocalGroupAggregate;
use super::state::{StateSlot, StateTtl};
use super::PhysicalNode;
use crate::error::Result;
use crate::logical::Schema;
use crate::physical::display::{list, name, unique_names};
use operators::agg::core::not_mergeable;
use operators::agg::{AggKind, AggSpec, GroupAggregateOperator};
use operators::changelog::ChangelogMode;
use operators::exec::Exchange;
use operators::value::DataType;

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct GroupAggregate {
    pub group_by: Vec<usize>,
    pub aggs: Vec<AggSpec>,
    pub agg_names: Vec<String>,
    pub generate_update_before: bool,
    pub input_insert_only: bool,
    /// Bundle size in mini-batch mode.
    pub mini_batch_size: Option<usize>,
    /// The global half of a local-global aggregate: its input is
    /// `LocalGroupAggregate` partials keyed by the leading columns.
    pub global: bool,
    /// The strategy and why, for EXPLAIN.
    pub strategy: String,
    /// Flink's asynchronous state execution
    /// (`table.exec.async-state.enabled`, one record at a time only; see
    /// [`GroupAggregate::async_state_applies`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub async_state: bool,
    /// Set on the two aggregates of a split distinct aggregate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial_final: Option<PartialFinal>,
    /// Idle state retention of all its state (in a compiled plan: the
    /// node's `state` entries).
    #[serde(skip, default)]
    pub ttl: StateTtl,
}

/// The strategy text of an aggregate no rule has chosen a strategy for.
pub const ONE_PHASE: &str = "ONE_PHASE";

impl GroupAggregate {
    pub const TYPE_NAMES: &'static [&'static str] = &[
        "stream-exec-group-aggregate_1",
        "stream-exec-global-group-aggregate_1",
    ];

    /// A one-phase aggregate of `child` grouped by `group_by` (one subtask
    /// when it has no group key).
    #[allow(clippy::too_many_arguments)]
    pub fn over(
        child: PhysicalNode,
        group_by: Vec<usize>,
        aggs: Vec<AggSpec>,
        agg_names: Vec<String>,
        schema: Schema,
        mini_batch_size: Option<usize>,
        ttl: StateTtl,
        parallelism: usize,
    ) -> PhysicalNode {
        let g = group_by.len();
        let node = GroupAggregate {
            group_by,
            aggs,
            agg_names,
            generate_update_before: true,
            input_insert_only: child.is_insert_only(),
            mini_batch_size,
            global: false,
            strategy: ONE_PHASE.to_string(),
            async_state: false,
            partial_final: None,
            ttl,
        };
        PhysicalNode::new(
            node,
            vec![child],
            schema,
            Some((0..g).collect()),
            if g == 0 { 1 } else { parallelism },
        )
    }
}

impl GroupAggregate {
    /// Whether Flink plans this aggregate with asynchronous state when
    /// `table.exec.async-state.enabled` is on: one record at a time (not
    /// mini-batch, not the global half of two phases) and no call keeping
    /// a data view (Flink's `MapView`: the lab's distinct and MIN/MAX value
    /// maps).
    pub fn async_state_applies(&self) -> bool {
        self.mini_batch_size.is_none()
            && !self.global
            && self.aggs.iter().all(|a| {
                let extreme = matches!(a.kind, AggKind::Min | AggKind::Max);
                !a.distinct && (!extreme || self.input_insert_only)
            })
    }
}

impl super::NodeSpec for GroupAggregate {
    fn label(&self) -> String {
        "GroupAggregate".into()
    }

    fn type_name(&self) -> &'static str {
        Self::TYPE_NAMES[usize::from(self.global)]
    }

    fn input_count(&self) -> usize {
        1
    }

    fn input_exchange(&self, _node: &PhysicalNode, _i: usize) -> Exchange {
        if self.group_by.is_empty() {
            Exchange::Single
        } else {
            Exchange::Hash(self.group_by.clone())
        }
    }

    fn changelog(&self, _inputs: &[PhysicalNode]) -> ChangelogMode {
        ChangelogMode {
            insert: true,
            update_before: self.generate_update_before,
            update_after: true,
            delete: !self.input_insert_only,
        }
    }

    fn changes_ordered_by_unique_key(&self, _node: &PhysicalNode) -> bool {
        true
    }

    fn require_update_before(&mut self, _inputs: &[PhysicalNode], needed: bool) -> Option<bool> {
        self.generate_update_before = needed;
        Some(true)
    }

    fn states(&self) -> Vec<StateSlot> {
        vec![StateSlot::new("groupAggregateState", &self.ttl)]
    }

    fn set_state_ttls(&mut self, ttls: Vec<StateTtl>) {
        if let Some(t) = ttls.into_iter().next() {
            self.ttl = t;
        }
    }

    fn is_mini_batch(&self) -> bool {
        self.mini_batch_size.is_some()
    }

    fn explain(&self, n: &PhysicalNode, ctx: &mut dyn ExplainContext) -> ExplainNode {
        let input = unique_names(&n.inputs[0].schema);
        let output = unique_names(&n.schema);
        let g = self.group_by.len();
        let aggs = &self.aggs;
        let retract = !self.input_insert_only;
        let calls: Vec<String> = if self.global {
            // Arguments are the local aggregate's accumulators.
            partial_names(aggs)
                .iter()
                .zip(aggs)
                .enumerate()
                .map(|(i, (acc, a))| {
                    format!(
                        "{}({acc}) AS {}",
                        func_name(a, retract),
                        name(&output, g + i)
                    )
                })
                .collect()
        } else {
            aggs.iter()
                .enumerate()
                .map(|(i, a)| {
                    format!(
                        "{} AS {}",
                        call_text(a, &input, retract),
                        name(&output, g + i)
                    )
                })
                .collect()
        };
        let op = if self.global {
            "GlobalGroupAggregate"
        } else {
            "GroupAggregate"
        };
        let mut e = ExplainNode::new(op, n, ctx.identity(n));
        if g > 0 {
            e.attrs.push(same("groupBy", list(&input, &self.group_by)));
        }
        e.attrs.extend(partial_final_attr(&self.partial_final));
        let mut select: Vec<String> = (0..g).map(|i| name(&output, i)).collect();
        select.extend(calls);
        e.attrs.push(same("select", select.join(", ")));
        if let Some(size) = self.mini_batch_size {
            e.lab.push(("miniBatchSize", size.to_string()));
        }
        if self.async_state {
            e.lab.push(("asyncState", "true".to_string()));
        }
        e.lab.push(("strategy", self.strategy.clone()));
        e.lab.push(("stateTtl", self.ttl.describe()));
        let mergeable = not_mergeable(aggs, self.input_insert_only).is_none();
        if !self.global && self.partial_final.is_none() && mergeable {
            e.advice = ctx.two_phase_advice();
        }
        e
    }

    fn validate(&self, node: &PhysicalNode) -> Check {
        let input = &node.inputs[0];
        let types = input.schema.types();
        let g = self.group_by.len();
        check::length(
            &check::field(node, "agg_names"),
            self.agg_names.len(),
            self.aggs.len(),
            "aggs",
        )?;
        if let Some(size) = self.mini_batch_size {
            check::bundle_size(&check::field(node, "mini_batch_size"), size)?;
        }
        let mut out: Vec<DataType> = Vec::new();
        if self.global {
            // Over a local aggregate's partials: the group key first, then
            // the row count and two slots per call.
            check::length(
                "schema",
                types.len(),
                g + 1 + 2 * self.aggs.len(),
                "the input of partial accumulators",
            )
            .map_err(|_| {
                check::invalid(
                    check::field(node, "aggs"),
                    format!(
                        "{} call(s) over {} group column(s) need {} partial columns, but the input has {}",
                        self.aggs.len(),
                        g,
                        g + 1 + 2 * self.aggs.len(),
                        types.len()
                    ),
                )
            })?;
            if self.group_by != (0..g).collect::<Vec<_>>() {
                return Err(check::invalid(
                    check::field(node, "group_by"),
                    "a global aggregate groups by the leading columns of its partials",
                ));
            }
            if let Some(why) = not_mergeable(&self.aggs, self.input_insert_only) {
                return Err(check::invalid(check::field(node, "aggs"), why));
            }
            let Some(local) = input.kind.get::<LocalGroupAggregate>() else {
                return Err(check::invalid(
                    "",
                    "a global aggregate reads a LocalGroupAggregate's partials",
                ));
            };
            if local.aggs != self.aggs {
                return Err(check::invalid(
                    check::field(node, "aggs"),
                    "a global aggregate merges the calls of the local aggregate below it",
                ));
            }
            let local_input = &input.inputs[0];
            if self.input_insert_only != local_input.is_insert_only() {
                return Err(check::invalid(
                    check::field(node, "input_insert_only"),
                    format!(
                        "is {}, but the local aggregate's input emits {}",
                        self.input_insert_only, local_input.changelog
                    ),
                ));
            }
        } else {
            check_calls(node, &self.aggs, &types)?;
            if self.input_insert_only != input.is_insert_only() {
                return Err(check::invalid(
                    check::field(node, "input_insert_only"),
                    format!(
                        "is {}, but the input emits {}",
                        self.input_insert_only, input.changelog
                    ),
                ));
            }
        }
        check::columns(
            &check::field(node, "group_by"),
            &self.group_by,
            types.len(),
            "the input",
        )?;
        out.extend(self.group_by.iter().map(|&c| types[c]));
        out.extend(self.aggs.iter().map(|a| a.result_type));
        check::schema_types(&node.schema, &out, "the aggregate")
    }

    fn build(&self, node: &PhysicalNode, id: usize, ctx: &mut dyn JobContext) -> Result<Out> {
        let scope = format!("{id}-GroupAggregate");
        let backend = ctx.backend().clone();
        backend.set_ttl(&scope, "*", self.ttl.duration());
        let emission = ctx.emission(node);
        operator_stage(node, ctx, || {
            let o = GroupAggregateOperator::new(
                &backend,
                &scope,
                self.group_by.clone(),
                self.aggs.clone(),
                self.input_insert_only,
                self.generate_update_before,
            )?;
            let o = match self.mini_batch_size {
                Some(size) => o.with_mini_batch(size),
                None if self.async_state => o.with_async_state(),
                None => o,
            };
            let o = if self.global {
                o.with_partial_input()
            } else {
                o
            };
            Ok(Box::new(o.with_emission(emission)))
        })
    }
}
