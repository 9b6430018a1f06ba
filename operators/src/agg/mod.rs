//! Group aggregation: one record at a time, mini-batch, and local-global.

pub mod core;
pub mod functions;
pub mod group_agg;
pub mod local_agg;
pub mod packed_acc;

pub use functions::{AggKind, AggSpec};
pub use group_agg::GroupAggregateOperator;
pub use local_agg::LocalAggregateOperator;
