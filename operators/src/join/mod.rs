//! Joins.

pub mod cascaded_delta_join;
pub mod delta_join;
pub mod interval_join;
mod join_async_state;
pub mod join_bundle;
mod join_core;
pub mod join_spec;
pub mod join_state;
pub mod lookup_join;
pub mod mini_batch_join;
pub mod multi_join;
pub mod regular_join;
mod side_access;
pub mod store_writing_source;
pub mod window_join;

pub use cascaded_delta_join::{
    CascadedDeltaJoinOperator, CascadedDeltaJoinSpec, KeySource, LookupChain, LookupRound,
};
pub use delta_join::{DeltaJoinOperator, DeltaJoinOptions, DeltaJoinSpec, SideCalc};
pub use interval_join::{IntervalJoinOperator, IntervalJoinSpec};
pub use join_bundle::JoinBundle;
pub use join_spec::{JoinSpec, JoinType};
pub use join_state::JoinStateLayout;
pub use lookup_join::{LookupJoinOperator, LookupJoinSpec};
pub use mini_batch_join::MiniBatchJoinOperator;
pub use multi_join::{MultiJoinOperator, MultiJoinSpec};
pub use regular_join::RegularJoinOperator;
pub use store_writing_source::StoreWritingSource;
pub use window_join::{WindowJoinOperator, WindowJoinSpec};
