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
    plan: LogicalPlan,
    f: &mut dyn FnMut(LogicalPlan) -> LogicalPlan,
) -> LogicalPlan {
    let mut g = |b: Box<LogicalPlan>| Box::new(f(*b));
    match plan {
        LogicalPlan::Scan { .. } => plan,
        LogicalPlan::Filter { input, predicate } => LogicalPlan::Filter {
            input: g(input),
            predicate,
        },
        LogicalPlan::Project {
            input,
            exprs,
            schema,
        } => LogicalPlan::Project {
            input: g(input),
            exprs,
            schema,
        },
        LogicalPlan::Join {
            left,
            right,
            kind,
            left_keys,
            right_keys,
            residual,
            schema,
            hints,
            lookup,
        } => {
            let left = g(left);
            let right = g(right);
            LogicalPlan::Join {
                left,
                right,
                kind,
                left_keys,
                right_keys,
                residual,
                schema,
                hints,
                lookup,
            }
        }
        LogicalPlan::WindowTvf {
            input,
            time_col,
            window,
            partition_by,
            group_window,
            schema,
        } => LogicalPlan::WindowTvf {
            input: g(input),
            time_col,
            window,
            partition_by,
            group_window,
            schema,
        },
        LogicalPlan::Union {
            left,
            right,
            schema,
        } => {
            let left = g(left);
            let right = g(right);
            LogicalPlan::Union {
                left,
                right,
                schema,
            }
        }
        LogicalPlan::Deduplicate {
            input,
            key,
            keep,
            order,
            time_col,
            row_number,
        } => LogicalPlan::Deduplicate {
            input: g(input),
            key,
            keep,
            order,
            time_col,
            row_number,
        },
        LogicalPlan::Rank {
            input,
            partition_by,
            order,
            rank_start,
            rank_end,
            output_rank_number,
            row_number,
            schema,
        } => LogicalPlan::Rank {
            input: g(input),
            partition_by,
            order,
            rank_start,
            rank_end,
            output_rank_number,
            row_number,
            schema,
        },
        LogicalPlan::Aggregate {
            input,
            group_by,
            aggs,
            schema,
            hints,
        } => LogicalPlan::Aggregate {
            input: g(input),
            group_by,
            aggs,
            schema,
            hints,
        },
    }
}
