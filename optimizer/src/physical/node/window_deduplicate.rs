//! `WindowDeduplicate`: `ROW_NUMBER() OVER (PARTITION BY window_start,
//! window_end, ... ORDER BY rowtime) = 1` over a window TVF (Flink's
//! `StreamPhysicalWindowDeduplicateRule`): the first or last row of each
//! key and window, emitted once as an insert when the watermark passes the
//! window's end (`operators/src/window/window_dedup.rs`).
//!
//! Its input is the window TVF's rows (with a Calc between, if any); it
//! reads each row's window from its `window_end` column, as Flink's
//! `WindowAttachedWindowingStrategy` does, and is hashed on the other
//! partition keys (one subtask without them). Its output is its input's
//! columns. Its state is freed as windows fire; `table.exec.state.ttl`
//! does not apply to it.

use super::build::{operator_stage, JobContext, Out};
use super::check::{self, Check};
use super::explain::{same, ExplainContext, ExplainNode};
use super::PhysicalNode;
use crate::error::Result;
use crate::physical::display::{list, name, unique_names};
use operators::changelog::ChangelogMode;
use operators::exec::Exchange;
use operators::rank::deduplicate::Keep;
use operators::window::{WindowDedupSpec, WindowDeduplicateOperator, WindowSpec};

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct WindowDeduplicate {
    pub window: WindowSpec,
    /// The input's `window_start` and `window_end` columns.
    pub window_start: usize,
    pub window_end: usize,
    /// The partition keys other than the window's.
    pub partition_keys: Vec<usize>,
    /// The rowtime column the rows are ordered by.
    pub order_key: usize,
    pub keep: Keep,
}

impl WindowDeduplicate {
    pub const TYPE_NAMES: &'static [&'static str] = &["stream-exec-window-deduplicate_1"];
}

impl super::NodeSpec for WindowDeduplicate {
    fn label(&self) -> String {
        "WindowDeduplicate".into()
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

    fn writes_late_records(&self) -> bool {
        true
    }

    fn changelog(&self, _inputs: &[PhysicalNode]) -> ChangelogMode {
        ChangelogMode::INSERT_ONLY
    }

    fn require_update_before(&mut self, _inputs: &[PhysicalNode], _needed: bool) -> Option<bool> {
        Some(false)
    }

    /// `WindowDeduplicate(window=[TUMBLE(win_start=[window_start],
    /// win_end=[window_end], size=[10 min])], keep=[LastRow],
    /// partitionKeys=[item], orderKey=[bidtime], order=[ROWTIME])`.
    fn explain(&self, n: &PhysicalNode, ctx: &mut dyn ExplainContext) -> ExplainNode {
        let input = unique_names(&n.inputs[0].schema);
        let mut e = ExplainNode::new("WindowDeduplicate", n, ctx.identity(n));
        let first = format!(
            "win_start=[{}], win_end=[{}]",
            name(&input, self.window_start),
            name(&input, self.window_end)
        );
        e.attrs.push(same("window", self.window.explain(&first)));
        let keep = match self.keep {
            Keep::FirstRow => "FirstRow",
            Keep::LastRow => "LastRow",
        };
        e.attrs.push(same("keep", keep));
        e.attrs
            .push(same("partitionKeys", list(&input, &self.partition_keys)));
        e.attrs.push(same("orderKey", name(&input, self.order_key)));
        e.attrs.push(same("order", "ROWTIME"));
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
        for (field, c) in [
            ("window_start", self.window_start),
            ("window_end", self.window_end),
            ("order_key", self.order_key),
        ] {
            check::column(&check::field(node, field), c, arity, "the input")?;
            if !types[c].is_timestamp() {
                return Err(check::invalid(
                    check::field(node, field),
                    format!("column {c} is {}, not a timestamp", types[c]),
                ));
            }
        }
        if !self.window.is_aligned() {
            return Err(check::invalid(
                check::field(node, "window"),
                "a window deduplication runs over TUMBLE, HOP or CUMULATE",
            ));
        }
        if !input.is_insert_only() {
            return Err(check::invalid(
                "",
                "a window deduplication reads an insert-only input",
            ));
        }
        check::schema_types(&node.schema, &types, "the input")
    }

    fn build(&self, node: &PhysicalNode, id: usize, ctx: &mut dyn JobContext) -> Result<Out> {
        let scope = format!("{id}-WindowDeduplicate");
        let backend = ctx.backend().clone();
        let spec = WindowDedupSpec {
            partition_keys: self.partition_keys.clone(),
            window_end: self.window_end,
            order_key: self.order_key,
            keep: self.keep,
            arity: node.schema.len(),
        };
        operator_stage(node, ctx, || {
            Ok(Box::new(WindowDeduplicateOperator::new(
                &backend,
                &scope,
                spec.clone(),
            )?))
        })
    }
}
