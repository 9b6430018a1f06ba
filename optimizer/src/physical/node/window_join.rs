//! `WindowJoin`: a join of two window TVFs of one window on
//! `L.window_start = R.window_start AND L.window_end = R.window_end` and
//! any other keys, Flink's `StreamExecWindowJoin`
//! (`operators/src/join/window_join.rs`). Each input is a window TVF (or a
//! window aggregate) with a Calc between, if any; the join reads each
//! row's window from its `window_end` column and is hashed on the other
//! keys (one subtask without them). It emits each window's joined rows
//! once, as inserts, when the watermark passes the window's end; its state
//! is freed as windows fire and `table.exec.state.ttl` does not apply.

use super::build::{operator_stage, JobContext, Out};
use super::check::{self, Check};
use super::explain::{exprs, same, ExplainContext, ExplainNode};
use super::join::{check_binary, check_join_output, join_condition, join_type_name};
use super::{JoinRole, NodeSpec, PhysicalNode};
use crate::error::Result;
use crate::physical::display::{name, unique_names};
use operators::changelog::ChangelogMode;
use operators::exec::Exchange;
use operators::expr::Expr;
use operators::join::{JoinType, WindowJoinOperator, WindowJoinSpec};
use operators::window::WindowSpec;

/// One input's window: its kind and its `window_start`, `window_end`
/// columns.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct InputWindow {
    pub window: WindowSpec,
    pub window_start: usize,
    pub window_end: usize,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct WindowJoin {
    pub join_type: JoinType,
    /// The equi-keys other than the window columns.
    pub left_keys: Vec<usize>,
    pub right_keys: Vec<usize>,
    /// The rest of the ON condition, over the concatenated row.
    pub residual: Option<Expr>,
    pub left_window: InputWindow,
    pub right_window: InputWindow,
}

impl WindowJoin {
    pub const TYPE_NAMES: &'static [&'static str] = &["stream-exec-window-join_1"];
}

impl NodeSpec for WindowJoin {
    fn label(&self) -> String {
        "WindowJoin".into()
    }

    fn type_name(&self) -> &'static str {
        Self::TYPE_NAMES[0]
    }

    fn input_count(&self) -> usize {
        2
    }

    fn input_exchange(&self, _node: &PhysicalNode, i: usize) -> Exchange {
        if self.left_keys.is_empty() {
            return Exchange::Single;
        }
        super::join::hash_on_side_keys(&self.left_keys, &self.right_keys, i)
    }

    fn changelog(&self, _inputs: &[PhysicalNode]) -> ChangelogMode {
        ChangelogMode::INSERT_ONLY
    }

    fn require_update_before(&mut self, _inputs: &[PhysicalNode], _needed: bool) -> Option<bool> {
        Some(false)
    }

    fn is_join_result(&self, _node: &PhysicalNode) -> bool {
        true
    }

    fn join_role(&self) -> Option<JoinRole> {
        Some(JoinRole::KeepsInputs)
    }

    /// `WindowJoin(leftWindow=[TUMBLE(win_start=[window_start],
    /// win_end=[window_end], size=[15 min])], rightWindow=[...],
    /// joinType=[InnerJoin], where=[=(a, a0)], select=[...])`.
    fn explain(&self, n: &PhysicalNode, ctx: &mut dyn ExplainContext) -> ExplainNode {
        let out = unique_names(&n.schema);
        let lw = n.inputs[0].schema.len();
        let mut e = ExplainNode::new("WindowJoin", n, ctx.identity(n));
        for (attr, w, i) in [
            ("leftWindow", &self.left_window, 0),
            ("rightWindow", &self.right_window, 1),
        ] {
            let input = unique_names(&n.inputs[i].schema);
            let first = format!(
                "win_start=[{}], win_end=[{}]",
                name(&input, w.window_start),
                name(&input, w.window_end)
            );
            e.attrs.push(same(attr, w.window.explain(&first)));
        }
        e.attrs
            .push(same("joinType", join_type_name(self.join_type)));
        e.attrs.push(exprs("where", |s| {
            join_condition(
                &out,
                lw,
                &self.left_keys,
                &self.right_keys,
                self.residual.as_ref(),
                s,
            )
        }));
        e.attrs.push(same("select", out.join(", ")));
        e
    }

    fn validate(&self, node: &PhysicalNode) -> Check {
        if self.left_keys.is_empty() && self.right_keys.is_empty() {
            // The window columns pair the sides: no other key is needed
            // (the join then runs in one subtask).
            check_join_output(node, self.residual.as_ref())?;
        } else {
            check_binary(
                node,
                &self.left_keys,
                &self.right_keys,
                self.residual.as_ref(),
            )?;
        }
        if self.left_window.window != self.right_window.window {
            return Err(check::invalid(
                check::field(node, "right_window"),
                "a window join joins inputs of one window",
            ));
        }
        if !self.left_window.window.is_aligned() {
            return Err(check::invalid(
                check::field(node, "left_window"),
                "a window join runs over TUMBLE, HOP or CUMULATE",
            ));
        }
        for (i, (field, w)) in [
            ("left_window", &self.left_window),
            ("right_window", &self.right_window),
        ]
        .into_iter()
        .enumerate()
        {
            let types = node.inputs[i].schema.types();
            for c in [w.window_start, w.window_end] {
                check::column(&check::field(node, field), c, types.len(), "the input")?;
                if !types[c].is_timestamp() {
                    return Err(check::invalid(
                        check::field(node, field),
                        format!("column {c} is {}, not a timestamp", types[c]),
                    ));
                }
            }
        }
        if !node.inputs.iter().all(PhysicalNode::is_insert_only) {
            return Err(check::invalid("", "a window join reads insert-only inputs"));
        }
        Ok(())
    }

    fn build(&self, node: &PhysicalNode, id: usize, ctx: &mut dyn JobContext) -> Result<Out> {
        let scope = format!("{id}-WindowJoin");
        let backend = ctx.backend().clone();
        let spec = WindowJoinSpec {
            join_type: self.join_type,
            left_keys: self.left_keys.clone(),
            right_keys: self.right_keys.clone(),
            left_arity: node.inputs[0].schema.len(),
            right_arity: node.inputs[1].schema.len(),
            left_window_end: self.left_window.window_end,
            right_window_end: self.right_window.window_end,
            residual: self.residual.clone(),
        };
        operator_stage(node, ctx, || {
            Ok(Box::new(WindowJoinOperator::new(
                &backend,
                &scope,
                spec.clone(),
            )?))
        })
    }
}
