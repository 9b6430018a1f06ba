//! Physical planning: from a logical plan to operators, exchanges and a job.
//!
//! [`node`] defines the tree (each node kind in a module of its own that
//! owns what the kind means); [`planner`] translates a logical plan into
//! it and runs the [`rules`] in order; [`explain`] prints it, [`job`]
//! instantiates its operators and wires the executor, [`compiled_plan`]
//! writes it as JSON and reads it back. `docs/architecture.md` has the
//! whole path.

pub mod compiled_plan;
pub mod display;
pub mod explain;
pub mod interval_bounds;
pub mod job;
pub mod node;
pub mod plan;
pub mod planner;
pub mod reuse;
pub mod rules;
pub mod state_ttl;
pub mod uid;

pub use plan::{PhysicalNode, PhysicalPlan, SinkPlan};
pub use planner::{plan_insert, plan_query};
