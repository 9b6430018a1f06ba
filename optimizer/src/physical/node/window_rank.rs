//! `WindowRank`: `ROW_NUMBER() OVER (PARTITION BY window_start,
//! window_end, ... ORDER BY ...)` kept in a rank range, over a window TVF
//! or a window aggregate (Flink's `StreamPhysicalWindowRankRule`): the
//! top rows of each key and window, emitted once as inserts when the
//! watermark passes the window's end (`operators/src/window/window_rank.rs`).
//!
//! It reads each row's window from its `window_end` column, as Flink's
//! `WindowAttachedWindowingStrategy` does, and is hashed on the other
//! partition keys (one subtask without them). Its output is its input's
//! columns, and the rank (`w0$o0`) when the query selects it. Its state is
//! freed as windows fire; `table.exec.state.ttl` does not apply to it.

use super::build::{operator_stage, JobContext, Out};
use super::check::{self, Check};
use super::explain::{same, ExplainContext, ExplainNode};
use super::PhysicalNode;
use crate::error::Result;
use crate::logical::{Field, Schema};
use crate::physical::display::{list, name, unique_names};
use operators::changelog::ChangelogMode;
use operators::exec::Exchange;
use operators::rank::topn::SortField;
use operators::value::DataType;
use operators::window::{WindowRankOperator, WindowRankSpec, WindowSpec};

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct WindowRank {
    pub window: WindowSpec,
    /// The input's `window_start` and `window_end` columns.
    pub window_start: usize,
    pub window_end: usize,
    /// The partition keys other than the window's.
    pub partition_keys: Vec<usize>,
    pub order: Vec<SortField>,
    /// 1-based and inclusive.
    pub rank_start: u64,
    pub rank_end: u64,
    pub output_rank_number: bool,
    /// Whether the input is a window TVF's rows (it may then drop late
    /// records); `false` over a window aggregate, whose rows are on time.
    pub over_window_tvf: bool,
}

impl WindowRank {
    pub const TYPE_NAMES: &'static [&'static str] = &["stream-exec-window-rank_1"];

    /// The node over `input`: its columns, then the rank when output.
    pub fn over(rank: WindowRank, input: PhysicalNode, parallelism: usize) -> PhysicalNode {
        let schema = Self::output_schema(&input.schema, rank.output_rank_number);
        PhysicalNode::new(rank, vec![input], schema, None, parallelism)
    }

    fn output_schema(input: &Schema, output_rank_number: bool) -> Schema {
        let mut schema = input.clone();
        if output_rank_number {
            schema.fields.push(Field {
                name: "w0$o0".into(),
                qualifier: None,
                data_type: DataType::BigInt,
                nullable: false,
            });
        }
        schema
    }
}

impl super::NodeSpec for WindowRank {
    fn label(&self) -> String {
        "WindowRank".into()
    }

    fn type_name(&self) -> &'static str {
        Self::TYPE_NAMES[0]
    }

    fn input_count(&self) -> usize {
        1
    }

    fn input_exchange(&self, _node: &PhysicalNode, _i: usize) -> Exchange {
        if self.partition_keys.is_empty() {
            Exchange::Single
        } else {
            Exchange::Hash(self.partition_keys.clone())
        }
    }

    /// Over a window TVF; over a window aggregate its input is the
    /// aggregate's rows, which are never late.
    fn writes_late_records(&self) -> bool {
        self.over_window_tvf
    }

    fn changelog(&self, _inputs: &[PhysicalNode]) -> ChangelogMode {
        ChangelogMode::INSERT_ONLY
    }

    fn require_update_before(&mut self, _inputs: &[PhysicalNode], _needed: bool) -> Option<bool> {
        Some(false)
    }

    /// `WindowRank(window=[TUMBLE(win_start=[window_start],
    /// win_end=[window_end], size=[10 min])], rankType=[ROW_NUMBER],
    /// rankRange=[rankStart=1, rankEnd=3], partitionBy=[item],
    /// orderBy=[price DESC], select=[...])`.
    fn explain(&self, n: &PhysicalNode, ctx: &mut dyn ExplainContext) -> ExplainNode {
        let input = unique_names(&n.inputs[0].schema);
        let mut e = ExplainNode::new("WindowRank", n, ctx.identity(n));
        let first = format!(
            "win_start=[{}], win_end=[{}]",
            name(&input, self.window_start),
            name(&input, self.window_end)
        );
        e.attrs.push(same("window", self.window.explain(&first)));
        e.attrs.push(same("rankType", "ROW_NUMBER"));
        e.attrs.push(same(
            "rankRange",
            format!("rankStart={}, rankEnd={}", self.rank_start, self.rank_end),
        ));
        e.attrs
            .push(same("partitionBy", list(&input, &self.partition_keys)));
        let order: Vec<String> = self
            .order
            .iter()
            .map(|f| {
                let dir = if f.descending { "DESC" } else { "ASC" };
                format!("{} {dir}", name(&input, f.column))
            })
            .collect();
        e.attrs.push(same("orderBy", order.join(", ")));
        let mut select = input.clone();
        if self.output_rank_number {
            select.push("w0$o0".into());
        }
        e.attrs.push(same("select", select.join(", ")));
        e
    }

    fn validate(&self, node: &PhysicalNode) -> Check {
        let input = &node.inputs[0];
        let types = input.schema.types();
        let arity = types.len();
        check::columns(
            &check::field(node, "partition_keys"),
            &self.partition_keys,
            arity,
            "the input",
        )?;
        super::rank::check_order_and_range(
            node,
            &self.order,
            (self.rank_start, self.rank_end),
            "a window Top-N",
        )?;
        for (field, c) in [
            ("window_start", self.window_start),
            ("window_end", self.window_end),
        ] {
            check::column(&check::field(node, field), c, arity, "the input")?;
            if !types[c].is_timestamp() {
                return Err(check::invalid(
                    check::field(node, field),
                    format!("column {c} is {}, not a timestamp", types[c]),
                ));
            }
        }
        if self.over_window_tvf && !self.window.is_aligned() {
            return Err(check::invalid(
                check::field(node, "window"),
                "a window Top-N over a window TVF runs over TUMBLE, HOP or CUMULATE",
            ));
        }
        if !input.is_insert_only() {
            return Err(check::invalid(
                "",
                "a window Top-N reads an insert-only input",
            ));
        }
        let expected = Self::output_schema(&input.schema, self.output_rank_number);
        check::schema_types(&node.schema, &expected.types(), "the input and the rank")
    }

    fn build(&self, node: &PhysicalNode, id: usize, ctx: &mut dyn JobContext) -> Result<Out> {
        let scope = format!("{id}-WindowRank");
        let backend = ctx.backend().clone();
        // A window's end names it when windows are aligned; sessions of
        // different keys may end together, so the state key then holds
        // the start too (Flink keys by the end alone and ranks such
        // sessions as one window: docs/windows.md).
        let mut partition_keys = self.partition_keys.clone();
        if !self.window.is_aligned() {
            partition_keys.push(self.window_start);
        }
        let spec = WindowRankSpec {
            partition_keys,
            window_end: self.window_end,
            order: self.order.clone(),
            rank_start: self.rank_start,
            rank_end: self.rank_end,
            output_rank_number: self.output_rank_number,
            arity: node.inputs[0].schema.len(),
        };
        operator_stage(node, ctx, || {
            Ok(Box::new(WindowRankOperator::new(
                &backend,
                &scope,
                spec.clone(),
            )?))
        })
    }
}
