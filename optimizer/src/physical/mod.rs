//! Physical planning: from a logical plan to operators, exchanges and a job.
//!
//! [`plan::PhysicalNode`] is the tree EXPLAIN prints; each node knows the
//! changelog it emits and its unique key, which decide the join state
//! layouts and whether an aggregate must emit update-before rows.
//! [`planner`] chooses the nodes; [`job`] instantiates the operators
//! (one per subtask) and wires the executor.

pub mod compiled_plan;
pub mod explain;
pub mod job;
pub mod plan;
pub mod planner;
pub mod reuse;
pub mod rules;

pub use plan::{PhysicalNode, PhysicalPlan, SinkPlan};
pub use planner::{plan_insert, plan_query};
