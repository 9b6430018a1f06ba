//! Joins.

pub mod join_state;
pub mod regular_join;

pub use join_state::JoinStateLayout;
pub use regular_join::{JoinSpec, RegularJoinOperator};
