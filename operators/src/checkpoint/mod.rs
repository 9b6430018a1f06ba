//! Checkpoints: consistent snapshots of a job, taken by the executor
//! between batches, and read back to resume it.
//!
//! A checkpoint holds, in one backend-independent format
//! ([`format`]):
//! - every stateful operator's keyed state, per operator uid and state
//!   name ([`image::OperatorImage`]): each entry once, in the order of its
//!   encoded key ([`crate::state::codec`]), whichever backend and however
//!   many subtasks held it; savepoints and rescaling by key groups build on
//!   this layout;
//! - the executor's own position: rows read per source, the clock, the
//!   watermarks of sources and stages;
//! - each sink's materialised result and counts, and how many bytes of each
//!   output file were committed.
//!
//! On RocksDB, `execution.checkpointing.incremental` keeps RocksDB's own
//! files instead of the entries, sharing unchanged SST files between
//! checkpoints ([`native`]); reading one gives the same canonical image.
//!
//! Files are written under a temporary name and renamed when complete, so
//! a partial checkpoint never looks complete; a checksum makes a truncated
//! or corrupt one fail to load with an error that says so ([`store`]).
//! Operators never see files: they hand over and take back their state
//! through [`crate::operator::Operator::snapshot_state`] and
//! [`crate::operator::Operator::restore_state`].

pub mod error;
pub mod format;
pub mod image;
pub mod native;
pub mod store;

pub use error::CheckpointError;
pub use format::{Checkpoint, SinkImage};
pub use image::{NativeFile, NativeState, OperatorImage, StateImage};
pub use store::CheckpointStore;
