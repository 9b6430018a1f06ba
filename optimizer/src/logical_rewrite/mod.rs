//! Logical rewrites: what Flink's logical optimization does to a query
//! before it plans operators, where it changes what operators keep.
//!
//! Calcite and Flink rewrite the bound query before choosing operators:
//! filters move into join inputs and turn outer joins the WHERE clause
//! undoes into inner ones, and every join input carries only the columns
//! something above reads. Neither changes a result, but both change what
//! the joins keep in state (Nexmark q3 keeps two columns of `auction`, not
//! ten), the join's state layout (a unique key whose columns are pruned is
//! no longer one) and so EXPLAIN, state figures and speed. The lab applies
//! the same two rewrites, in this order, to the statement's plan before
//! [`crate::physical::planner`] translates it:
//!
//! 1. [`push_filters`]: filters into join inputs, outer joins simplified
//!    (Calcite's `FilterJoinRule`, `JoinConditionPushRule`).
//!    First, because a pushed filter needs its columns below the join, and
//!    pruning must see where it ended up.
//! 2. [`prune_columns`]: each join input reads only the columns used above
//!    it (Calcite's `ProjectJoinTransposeRule`, Flink's projection
//!    pushdown into a `filesystem` scan).
//!
//! The batch oracle evaluates the statement as bound, so the equivalence
//! tests hold the rewritten plan to the query as written; EXPLAIN's
//! abstract syntax tree is the plan as bound too, as Flink's is.

pub mod prune_columns;
pub mod push_filters;

use crate::config::Config;
use crate::logical::LogicalPlan;

/// The plan the physical planner translates.
pub fn rewrite(plan: &LogicalPlan, config: &Config) -> LogicalPlan {
    let plan = push_filters::apply(plan.clone());
    let rule_on = !config.optimizer_disabled_rules().contains(&"multi_join");
    let fusing = prune_columns::MultiJoinFusing {
        every_join: rule_on && config.multi_join_enabled(),
        hinted_joins: rule_on,
    };
    prune_columns::apply(plan, fusing)
}

/// `plan` with each input replaced by `f(input)`, in order.
pub(crate) fn map_inputs(
    mut plan: LogicalPlan,
    f: &mut dyn FnMut(LogicalPlan) -> LogicalPlan,
) -> LogicalPlan {
    for input in plan.inputs_mut() {
        let placeholder = LogicalPlan::Scan {
            table: String::new(),
            alias: String::new(),
            schema: Default::default(),
        };
        let taken = std::mem::replace(input.as_mut(), placeholder);
        **input = f(taken);
    }
    plan
}
