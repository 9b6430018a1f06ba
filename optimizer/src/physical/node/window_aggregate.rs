//! `WindowAggregate`: an aggregate grouped by `window_start` and
//! `window_end` of a window TVF (and any other keys), planned as Flink
//! merges the TVF into the aggregate: the operator assigns each record to
//! its slice and fires each window when the watermark passes its end,
//! emitting one insert per key and window (`operators/src/window/`).
//!
//! Its input carries the grouping columns, the calls' arguments and
//! filters, and the time column; its output is the group key, the calls,
//! then `window_start` and `window_end` (a Calc above puts them where the
//! query has them). It emits inserts only; its state is freed as windows
//! fire and `table.exec.state.ttl` does not apply to it. With
//! `lab.window.slicing` = false a HOP or CUMULATE one keeps per-window
//! state instead of slices (EXPLAIN: `slicing=[false]`), one phase or as
//! the global half of two.

use super::aggregate_calls::{call_text, check_calls, partial_names};
use super::build::{operator_stage, JobContext, Out};
use super::check::{self, Check};
use super::explain::{same, ExplainContext, ExplainNode};
use super::local_window_aggregate::LocalWindowAggregate;
pub use super::window_attached::AttachedWindow;
use super::PhysicalNode;
use crate::error::Result;
use crate::physical::display::{list, name, unique_names};
use operators::agg::AggSpec;
use operators::changelog::ChangelogMode;
use operators::exec::Exchange;
use operators::value::DataType;
use operators::window::{SessionWindowAggregateOperator, WindowAggregateOperator, WindowSpec};

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct WindowAggregate {
    pub group_by: Vec<usize>,
    pub aggs: Vec<AggSpec>,
    pub agg_names: Vec<String>,
    pub window: WindowSpec,
    /// The input column holding each record's event time (in the global
    /// half, the slice end of each partial).
    pub time_col: usize,
    /// The global half of a two-phase window aggregate
    /// (`GlobalWindowAggregate`): its input is a `LocalWindowAggregate`'s
    /// partials, the group key leading.
    #[serde(default)]
    pub global: bool,
    /// SESSION's `PARTITION BY` columns of the input (group keys).
    #[serde(default)]
    pub partition_keys: Vec<usize>,
    /// The lab's comparison strategy (`lab.window.slicing` = false): state
    /// per (group key, window end) instead of per slice; HOP and CUMULATE
    /// only (a TUMBLE's slices are its windows).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub per_window: bool,
    /// Window-attached (Flink's `WindowAttachedWindowingStrategy`): an
    /// aggregate over a window aggregate's `window_start` and `window_end`,
    /// whose windows are its input's own. `time_col` is then the input's
    /// `window_end` column (in the global half, the partials' window end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attached: Option<AttachedWindow>,
}

impl WindowAggregate {
    pub const TYPE_NAMES: &'static [&'static str] = &[
        "stream-exec-window-aggregate_1",
        "stream-exec-global-window-aggregate_1",
    ];
}

impl super::NodeSpec for WindowAggregate {
    fn label(&self) -> String {
        if self.global {
            "GlobalWindowAggregate".into()
        } else {
            "WindowAggregate".into()
        }
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

    /// The one-phase aggregate; the global half of a two-phase one sees
    /// partial accumulators, not records.
    fn writes_late_records(&self) -> bool {
        !self.global
    }

    fn changelog(&self, _inputs: &[PhysicalNode]) -> ChangelogMode {
        ChangelogMode::INSERT_ONLY
    }

    fn changes_ordered_by_unique_key(&self, _node: &PhysicalNode) -> bool {
        true
    }

    fn require_update_before(&mut self, _inputs: &[PhysicalNode], _needed: bool) -> Option<bool> {
        Some(false)
    }

    fn explain(&self, n: &PhysicalNode, ctx: &mut dyn ExplainContext) -> ExplainNode {
        let input = unique_names(&n.inputs[0].schema);
        let output = unique_names(&n.schema);
        let g = self.group_by.len();
        let op = if self.global {
            "GlobalWindowAggregate"
        } else {
            "WindowAggregate"
        };
        let mut e = ExplainNode::new(op, n, ctx.identity(n));
        if g > 0 {
            e.attrs.push(same("groupBy", list(&input, &self.group_by)));
        }
        let first = if let Some(a) = &self.attached {
            a.explain(&input, self.time_col)
        } else if self.global {
            "slice_end=[$slice_end]".to_string()
        } else {
            format!("time_col=[{}]", name(&input, self.time_col))
        };
        let partition_keys: Vec<String> = self
            .partition_keys
            .iter()
            .map(|&c| name(&input, c))
            .collect();
        e.attrs.push(same(
            "window",
            self.window.explain_partitioned(&first, &partition_keys),
        ));
        let mut select: Vec<String> = (0..g).map(|i| name(&output, i)).collect();
        if self.global {
            let partials = partial_names(&self.aggs);
            select.extend(
                self.aggs
                    .iter()
                    .zip(&partials)
                    .enumerate()
                    .map(|(i, (a, p))| {
                        format!("{}({p}) AS {}", a.kind.name(), name(&output, g + i))
                    }),
            );
        } else {
            select.extend(self.aggs.iter().enumerate().map(|(i, a)| {
                format!(
                    "{} AS {}",
                    call_text(a, &input, false),
                    name(&output, g + i)
                )
            }));
        }
        select.push("start('w$) AS window_start".into());
        select.push("end('w$) AS window_end".into());
        e.attrs.push(same("select", select.join(", ")));
        if self.per_window {
            e.lab.push(("slicing", "false".into()));
        }
        e
    }

    fn validate(&self, node: &PhysicalNode) -> Check {
        let types = node.inputs[0].schema.types();
        check::length(
            &check::field(node, "agg_names"),
            self.agg_names.len(),
            self.aggs.len(),
            "aggs",
        )?;
        if self.per_window
            && !matches!(
                self.window,
                WindowSpec::Hop { .. } | WindowSpec::Cumulate { .. }
            )
        {
            return Err(check::invalid(
                check::field(node, "per_window"),
                "only a HOP or CUMULATE window aggregate keeps per-window state",
            ));
        }
        if self.global {
            let Some(local) = node.inputs[0].kind.get::<LocalWindowAggregate>() else {
                return Err(check::invalid(
                    "",
                    "a global window aggregate reads a LocalWindowAggregate's partials",
                ));
            };
            let g = self.group_by.len();
            if local.aggs != self.aggs
                || local.window != self.window
                || local.attached.is_some() != self.attached.is_some()
                || self.group_by != (0..g).collect::<Vec<_>>()
                || local.group_by.len() != g
                || self.time_col != g + 2 * self.aggs.len()
            {
                return Err(check::invalid(
                    check::field(node, "aggs"),
                    "a global window aggregate merges the calls, keys and window of the local one below it",
                ));
            }
            let mut out: Vec<DataType> = types[..g].to_vec();
            out.extend(self.aggs.iter().map(|a| a.result_type));
            out.extend([DataType::Timestamp, DataType::Timestamp]);
            return check::schema_types(&node.schema, &out, "the window aggregate");
        }
        check_calls(node, &self.aggs, &types)?;
        if let Some(&c) = self
            .partition_keys
            .iter()
            .find(|c| !self.group_by.contains(c))
        {
            return Err(check::invalid(
                check::field(node, "partition_keys"),
                format!("partition key {c} is not a group key"),
            ));
        }
        if !self.partition_keys.is_empty() && self.window.is_aligned() {
            return Err(check::invalid(
                check::field(node, "partition_keys"),
                "only a SESSION window has partition keys",
            ));
        }
        if !node.inputs[0].is_insert_only() {
            return Err(check::invalid(
                "",
                "a window aggregate reads an insert-only input",
            ));
        }
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
        if !types[self.time_col].is_timestamp() {
            return Err(check::invalid(
                check::field(node, "time_col"),
                format!(
                    "the time column is {}, not a timestamp",
                    types[self.time_col]
                ),
            ));
        }
        let sizes = match self.window {
            WindowSpec::Tumble { size } => size > 0,
            WindowSpec::Hop { size, slide } => size > 0 && slide > 0,
            WindowSpec::Cumulate { max_size, step } => step > 0 && max_size % step == 0,
            WindowSpec::Session { gap } => gap > 0,
        };
        if !sizes {
            return Err(check::invalid(
                check::field(node, "window"),
                "window sizes must be positive (and a CUMULATE's max size a multiple of its step)",
            ));
        }
        let mut out: Vec<DataType> = self.group_by.iter().map(|&c| types[c]).collect();
        out.extend(self.aggs.iter().map(|a| a.result_type));
        out.extend([DataType::Timestamp, DataType::Timestamp]);
        check::schema_types(&node.schema, &out, "the window aggregate")
    }

    fn build(&self, node: &PhysicalNode, id: usize, ctx: &mut dyn JobContext) -> Result<Out> {
        let scope = format!("{id}-WindowAggregate");
        let backend = ctx.backend().clone();
        operator_stage(node, ctx, || {
            if let WindowSpec::Session { gap } = self.window {
                return Ok(Box::new(SessionWindowAggregateOperator::new(
                    &backend,
                    &scope,
                    self.group_by.clone(),
                    self.aggs.clone(),
                    self.time_col,
                    gap,
                )?)
                    as Box<dyn operators::operator::Operator>);
            }
            let build = if self.per_window || self.attached.is_some() {
                WindowAggregateOperator::per_window
            } else {
                WindowAggregateOperator::new
            };
            let mut o = build(
                &backend,
                &scope,
                self.group_by.clone(),
                self.aggs.clone(),
                self.time_col,
                self.window,
            )?;
            if self.attached.is_some() {
                o = o.attached();
            }
            Ok(Box::new(if self.global {
                o.with_partial_input()
            } else {
                o
            }))
        })
    }
}
