//! `IntervalJoin`: an INNER join of two insert-only inputs on equal keys
//! and rowtime attributes bounded against each other (`l.ts BETWEEN r.ts -
//! INTERVAL '5' SECOND AND r.ts + INTERVAL '5' SECOND`), Flink's
//! `StreamExecIntervalJoin` with `RowTimeIntervalJoin`
//! (`operators/src/join/interval_join.rs`). Hashed on its join keys; each
//! side's rows are kept until the watermark passes the last time a row of
//! the other side could join them, so its state is bounded by time and
//! `table.exec.state.ttl` does not apply. Its output is insert-only.
//! The planner finds the bounds (`physical/interval_bounds.rs`).

use super::build::{operator_stage, JobContext, Out};
use super::check::{self, Check};
use super::explain::{exprs, same, ExplainContext, ExplainNode};
use super::join::{check_binary, join_condition};
use super::{JoinRole, NodeSpec, PhysicalNode};
use crate::error::Result;
use crate::physical::display::unique_names;
use operators::changelog::ChangelogMode;
use operators::exec::Exchange;
use operators::expr::Expr;
use operators::join::{IntervalJoinOperator, IntervalJoinSpec, JoinType};

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct IntervalJoin {
    pub join_type: JoinType,
    pub left_keys: Vec<usize>,
    pub right_keys: Vec<usize>,
    /// The rest of the ON condition (the time bounds included), over the
    /// concatenated row.
    pub residual: Option<Expr>,
    /// The rowtime columns of the left and the right input.
    pub left_time: usize,
    pub right_time: usize,
    /// `left time - right time` lies in `[lower, upper]` milliseconds.
    pub lower: i64,
    pub upper: i64,
}

impl IntervalJoin {
    pub const TYPE_NAMES: &'static [&'static str] = &["stream-exec-interval-join_1"];
}

impl NodeSpec for IntervalJoin {
    fn label(&self) -> String {
        "IntervalJoin".into()
    }

    fn type_name(&self) -> &'static str {
        Self::TYPE_NAMES[0]
    }

    fn input_count(&self) -> usize {
        2
    }

    fn input_exchange(&self, _node: &PhysicalNode, i: usize) -> Exchange {
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

    /// `IntervalJoin(joinType=[InnerJoin], windowBounds=[isRowTime=true,
    /// leftLowerBound=-5000, leftUpperBound=5000, leftTimeIndex=1,
    /// rightTimeIndex=1], where=[...], select=[...])`.
    fn explain(&self, n: &PhysicalNode, ctx: &mut dyn ExplainContext) -> ExplainNode {
        let out = unique_names(&n.schema);
        let lw = n.inputs[0].schema.len();
        let mut e = ExplainNode::new("IntervalJoin", n, ctx.identity(n));
        e.attrs.push(same("joinType", "InnerJoin"));
        e.attrs.push(same(
            "windowBounds",
            format!(
                "isRowTime=true, leftLowerBound={}, leftUpperBound={}, leftTimeIndex={}, rightTimeIndex={}",
                self.lower, self.upper, self.left_time, self.right_time
            ),
        ));
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
        check_binary(
            node,
            &self.left_keys,
            &self.right_keys,
            self.residual.as_ref(),
        )?;
        if self.join_type != JoinType::Inner {
            return Err(check::invalid(
                check::field(node, "join_type"),
                "the interval join runs INNER joins only",
            ));
        }
        if self.lower > self.upper {
            return Err(check::invalid(
                check::field(node, "lower"),
                format!(
                    "lower bound {} is above upper bound {}",
                    self.lower, self.upper
                ),
            ));
        }
        for (i, (field, c)) in [
            ("left_time", self.left_time),
            ("right_time", self.right_time),
        ]
        .into_iter()
        .enumerate()
        {
            let types = node.inputs[i].schema.types();
            check::column(&check::field(node, field), c, types.len(), "the input")?;
            if !types[c].is_timestamp() {
                return Err(check::invalid(
                    check::field(node, field),
                    format!("column {c} is {}, not a timestamp", types[c]),
                ));
            }
        }
        if !node.inputs.iter().all(PhysicalNode::is_insert_only) {
            return Err(check::invalid(
                "",
                "an interval join reads insert-only inputs",
            ));
        }
        Ok(())
    }

    fn build(&self, node: &PhysicalNode, id: usize, ctx: &mut dyn JobContext) -> Result<Out> {
        let scope = format!("{id}-IntervalJoin");
        let backend = ctx.backend().clone();
        let spec = IntervalJoinSpec {
            join_type: self.join_type,
            left_keys: self.left_keys.clone(),
            right_keys: self.right_keys.clone(),
            left_arity: node.inputs[0].schema.len(),
            right_arity: node.inputs[1].schema.len(),
            left_time: self.left_time,
            right_time: self.right_time,
            lower: self.lower,
            upper: self.upper,
            residual: self.residual.clone(),
        };
        operator_stage(node, ctx, || {
            Ok(Box::new(IntervalJoinOperator::new(
                &backend,
                &scope,
                spec.clone(),
            )?))
        })
    }
}
