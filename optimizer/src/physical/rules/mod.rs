//! Rules that choose among physical strategies. Each rule's doc comment
//! shows the plan before and after.

pub mod agg_strategy;
pub mod delta_join;
pub mod multi_join;
pub mod split_distinct;
pub mod state_ttl;
