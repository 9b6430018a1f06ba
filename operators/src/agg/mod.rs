//! Group aggregation: one record at a time (also with asynchronous state
//! execution), mini-batch, and local-global.

pub mod acc;
mod acc_store;
mod async_state;
pub mod core;
mod fold;
pub mod functions;
pub mod group_agg;
pub mod local_agg;

pub use functions::{AggKind, AggSpec};
pub use group_agg::GroupAggregateOperator;
pub use local_agg::LocalAggregateOperator;
