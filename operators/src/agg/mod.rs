//! Group aggregation.

pub mod functions;
pub mod group_agg;

pub use functions::{AggKind, AggSpec};
pub use group_agg::GroupAggregateOperator;
