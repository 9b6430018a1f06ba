//! The parallel executor.
//!
//! A job is a graph of stages fed by sources and ending in sinks: one sink
//! for an `INSERT`, one per `INSERT` for a statement set. Each stage runs
//! `P` subtasks (operator instances with their own state). A source or a
//! stage may feed several consumers (a source read by several `INSERT`s of
//! a statement set, a sub-plan they share): each consumer gets every record
//! (a copy; the last consumer gets the original), in the order the
//! consumers were connected, and the source is read once. Between stages
//! an exchange routes records:
//! - `Forward`: subtask `i` to subtask `i` (equal parallelism);
//! - `Rebalance`: the upstream output, concatenated, cut into `P`
//!   contiguous chunks (for stateless stages after a source);
//! - `Hash(keys)`: each record to subtask `stable_hash(key) % P`;
//! - `Single`: everything to subtask 0.
//!
//! Execution is batch-synchronous: the sources are read one batch at a time,
//! round-robin in source order (one batch from the first source, then one
//! from the second, ...; a finished source drops out; an unbounded one
//! that reads nothing stays in, and a round in which no source reads a row
//! ends the job), and each batch is pushed through the whole graph
//! (consumer after consumer) before the next is read. Watermarks follow
//! each source's batch; idle sources are in `job/idleness.rs`. A source whose rows depend on nothing the job does (files,
//! generators: [`ChangeSource::can_read_ahead`]) is read on a thread of its
//! own, a few batches ahead, as Flink runs a source as its own task; the
//! job takes its batches in the same order, so the run is the same.
//! `rayon` runs a stage's subtasks in parallel, and their outputs are
//! concatenated in subtask order. Every exchange preserves the relative order of records
//! with the same key, so each key's changelog is processed in order, and a
//! run is deterministic for a given input and configuration.
//!
//! Mini-batch bundles close when an operator's own size trigger fires, when
//! `allow-latency` has passed since the last close (checked between
//! batches), and at end of input, where stages are flushed upstream first.
//! Latency samples are dated per subtask (see [`LatencyStats`]): a bundle
//! that closes late on one subtask is not hidden by another that closed
//! early.
//!
//! Input batches are handed over by the ownership contract of
//! [`crate::operator`]: an operator that takes its input
//! ([`Takes`](crate::operator::InputOwnership::Takes)) is given each batch; one that only reads it
//! ([`Reads`](crate::operator::InputOwnership::Reads)) is lent each batch, which the executor then
//! disposes of: a read-ahead source's batch that one subtask read whole
//! goes back to the reader's thread, to be freed and refilled where it was
//! allocated (`give_back.rs`); any other is dropped on the subtask's thread.
//!
//! How operators emit is fixed when they are built ([`Emission`](crate::operator::Emission)); a stage
//! whose operators were built to emit kinds only
//! ([`JobBuilder::set_emission`]) must feed only sinks that count kinds
//! (no materialising, changelog, printing or writer): [`JobBuilder::build`]
//! and [`Job::set_sink_writer`] refuse anything else, so an empty row never
//! reaches a consumer that reads it.
//!
//! A run reports per job ([`JobReport`]: input rows, each counted once,
//! wall time, every stage, time waiting for sources and in sinks) and per
//! sink ([`SinkReport`]: the rows it received by kind, their latency, its
//! materialised result).

pub mod exchange;
mod give_back;
pub mod job;
pub mod metrics;

pub use exchange::Exchange;

pub use job::{ChangeSource, Job, JobBuilder, SinkId, StageId, Target};
pub use job::{CheckpointConfig, SavepointConfig, SavepointRestore};
pub use metrics::{
    CheckpointCounts, JobReport, LatencyStats, SinkReport, StageReport, SubtaskLoad,
};
