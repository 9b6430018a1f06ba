//! Event-time windows: the slices and windows of the window TVFs, and the
//! window aggregate, deduplication and Top-N that fire on the watermark,
//! and the legacy group window aggregate (`GROUP BY TUMBLE(ts, ...)`).

pub mod assigner;
pub mod group_window_agg;
mod late;
pub mod local_window_agg;
pub mod session_agg;
pub mod tvf;
pub mod window_agg;
pub mod window_dedup;
pub mod window_rank;

pub use assigner::WindowSpec;
pub use group_window_agg::GroupWindowAggregateOperator;
pub use local_window_agg::LocalWindowAggregateOperator;
pub use session_agg::SessionWindowAggregateOperator;
pub use tvf::WindowTableFunctionOperator;
pub use window_agg::WindowAggregateOperator;
pub use window_dedup::{WindowDedupSpec, WindowDeduplicateOperator};
pub use window_rank::{WindowRankOperator, WindowRankSpec};
