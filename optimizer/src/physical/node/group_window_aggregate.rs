//! `GroupWindowAggregate`: Flink's legacy group window aggregate (`GROUP
//! BY k, TUMBLE(ts, size)`, HOP, SESSION; `StreamExecGroupWindowAggregate`
//! running the table `WindowOperator`), with the emit strategy Flink's
//! `WindowEmitStrategy` reads from the configuration when it is planned:
//! the allowed lateness (`table.exec.emit.allow-lateness`; 0 for SESSION)
//! and whether late firings are on (`table.exec.emit.late-fire.enabled`,
//! with a delay of 0: on every late element).
//!
//! Its input carries the group keys, the calls' arguments and filters, and
//! the time column; its output is the group key, the calls, then Flink's
//! window properties `w$start`, `w$end`, `w$rowtime`, `w$proctime` (a Calc
//! above puts what the query selects where it has it). It emits inserts
//! only without lateness; with lateness a window updated by a late record
//! fires again with `-U`/`+U` (`produceUpdates`). Window state is freed
//! when the watermark passes a window's end - 1 + lateness, and
//! `table.exec.state.ttl` does not apply to it.

use super::aggregate_calls::{call_text, check_calls};
use super::build::{operator_stage, JobContext, Out};
use super::check::{self, Check};
use super::explain::{same, ExplainContext, ExplainNode};
use super::PhysicalNode;
use crate::error::Result;
use crate::physical::display::{list, name, unique_names};
use operators::agg::AggSpec;
use operators::changelog::ChangelogMode;
use operators::exec::Exchange;
use operators::value::DataType;
use operators::window::{GroupWindowAggregateOperator, WindowSpec};

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct GroupWindowAggregate {
    pub group_by: Vec<usize>,
    pub aggs: Vec<AggSpec>,
    pub agg_names: Vec<String>,
    /// TUMBLE, HOP or SESSION.
    pub window: WindowSpec,
    /// The input column holding each record's event time.
    pub time_col: usize,
    /// Milliseconds a fired window is kept for late records (Flink's
    /// `allowLateness`; 0 for SESSION).
    pub allow_lateness: i64,
    /// `table.exec.emit.late-fire.enabled` with a delay of 0 (EXPLAIN's
    /// `emit=[late no delay]`).
    pub late_fire: bool,
}

impl GroupWindowAggregate {
    pub const TYPE_NAMES: &'static [&'static str] = &["stream-exec-group-window-aggregate_1"];

    /// Whether a window may fire more than once (`-U`/`+U`): Flink's
    /// `WindowEmitStrategy.produceUpdates` for event time.
    pub fn produces_updates(&self) -> bool {
        self.allow_lateness > 0 || self.late_fire
    }

    /// Flink's `LogicalWindow` text: `TumblingGroupWindow('w$, ts, 5000)`.
    fn window_text(&self, time: &str) -> String {
        match self.window {
            WindowSpec::Tumble { size } => format!("TumblingGroupWindow('w$, {time}, {size})"),
            WindowSpec::Hop { size, slide } => {
                format!("SlidingGroupWindow('w$, {time}, {size}, {slide})")
            }
            WindowSpec::Session { gap } => format!("SessionGroupWindow('w$, {time}, {gap})"),
            WindowSpec::Cumulate { max_size, step } => {
                format!("CumulativeGroupWindow('w$, {time}, {max_size}, {step})")
            }
        }
    }
}

impl super::NodeSpec for GroupWindowAggregate {
    fn label(&self) -> String {
        "GroupWindowAggregate".into()
    }

    fn type_name(&self) -> &'static str {
        Self::TYPE_NAMES[0]
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

    fn writes_late_records(&self) -> bool {
        true
    }

    fn changelog(&self, _inputs: &[PhysicalNode]) -> ChangelogMode {
        if self.produces_updates() {
            ChangelogMode {
                insert: true,
                update_before: true,
                update_after: true,
                delete: false,
            }
        } else {
            ChangelogMode::INSERT_ONLY
        }
    }

    fn changes_ordered_by_unique_key(&self, _node: &PhysicalNode) -> bool {
        true
    }

    /// Its input is insert-only; it emits `-U` whatever its consumer
    /// needs, as Flink's `WindowOperator` does.
    fn require_update_before(&mut self, _inputs: &[PhysicalNode], _needed: bool) -> Option<bool> {
        Some(false)
    }

    fn explain(&self, n: &PhysicalNode, ctx: &mut dyn ExplainContext) -> ExplainNode {
        let input = unique_names(&n.inputs[0].schema);
        let output = unique_names(&n.schema);
        let g = self.group_by.len();
        let mut e = ExplainNode::new("GroupWindowAggregate", n, ctx.identity(n));
        if g > 0 {
            e.attrs.push(same("groupBy", list(&input, &self.group_by)));
        }
        e.attrs.push(same(
            "window",
            self.window_text(&name(&input, self.time_col)),
        ));
        e.attrs
            .push(same("properties", "w$start, w$end, w$rowtime, w$proctime"));
        let mut select: Vec<String> = (0..g).map(|i| name(&output, i)).collect();
        select.extend(self.aggs.iter().enumerate().map(|(i, a)| {
            format!(
                "{} AS {}",
                call_text(a, &input, false),
                name(&output, g + i)
            )
        }));
        select.extend([
            "start('w$) AS w$start".to_string(),
            "end('w$) AS w$end".into(),
            "rowtime('w$) AS w$rowtime".into(),
            "proctime('w$) AS w$proctime".into(),
        ]);
        e.attrs.push(same("select", select.join(", ")));
        if self.late_fire {
            e.attrs.push(same("emit", "late no delay"));
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
        check_calls(node, &self.aggs, &types)?;
        if !node.inputs[0].is_insert_only() {
            return Err(check::invalid(
                "",
                "a group window aggregate reads an insert-only input",
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
        let time = types[self.time_col];
        if !time.is_timestamp() {
            return Err(check::invalid(
                check::field(node, "time_col"),
                format!("the time column is {time}, not a timestamp"),
            ));
        }
        let sizes = match self.window {
            WindowSpec::Tumble { size } => size > 0,
            WindowSpec::Hop { size, slide } => size > 0 && slide > 0,
            WindowSpec::Session { gap } => gap > 0,
            WindowSpec::Cumulate { .. } => false,
        };
        if !sizes {
            return Err(check::invalid(
                check::field(node, "window"),
                "a group window is a TUMBLE, HOP or SESSION with positive sizes",
            ));
        }
        let session = matches!(self.window, WindowSpec::Session { .. });
        if self.allow_lateness < 0 || (session && self.produces_updates()) {
            return Err(check::invalid(
                check::field(node, "allow_lateness"),
                "the allowed lateness is 0 or more, and 0 with no late firing for SESSION",
            ));
        }
        if self.late_fire && self.allow_lateness == 0 {
            return Err(check::invalid(
                check::field(node, "late_fire"),
                "late firings need an allowed lateness",
            ));
        }
        let mut out: Vec<DataType> = self.group_by.iter().map(|&c| types[c]).collect();
        out.extend(self.aggs.iter().map(|a| a.result_type));
        out.extend([
            DataType::Timestamp,
            DataType::Timestamp,
            time,
            DataType::TimestampLtz,
        ]);
        check::schema_types(&node.schema, &out, "the group window aggregate")
    }

    fn build(&self, node: &PhysicalNode, id: usize, ctx: &mut dyn JobContext) -> Result<Out> {
        let scope = format!("{id}-GroupWindowAggregate");
        let backend = ctx.backend().clone();
        operator_stage(node, ctx, || {
            Ok(Box::new(GroupWindowAggregateOperator::new(
                &backend,
                &scope,
                self.group_by.clone(),
                self.aggs.clone(),
                self.time_col,
                self.window,
                self.allow_lateness,
            )?))
        })
    }
}
