//! The one trait every physical operator implements.
//!
//! An operator instance is one *subtask*: it sees the records that its
//! stage's exchange routes to it, keeps its own keyed state, and emits
//! changes. The executor calls [`Operator::process`] once per batch and
//! [`Operator::finish_bundle`] when a mini-batch bundle closes (on size, on
//! latency, and at end of input).

use crate::changelog::Change;
use crate::state::{StateError, StateReport};

#[derive(Debug, thiserror::Error)]
pub enum OpError {
    #[error(transparent)]
    State(#[from] StateError),
    /// A source could not read its input (bad file, malformed row).
    #[error("{0}")]
    Source(String),
    #[error("{0}")]
    Other(String),
}

pub type OpResult<T> = Result<T, OpError>;

pub trait Operator: Send {
    /// Processes `batch`, which arrived on input `input` (0 for one-input
    /// operators; 0 = left and 1 = right for joins), appending output to `out`.
    fn process(&mut self, input: usize, batch: Vec<Change>, out: &mut Vec<Change>) -> OpResult<()>;

    /// The event-time watermark of its inputs (the least of theirs) passed
    /// `watermark`: no record with an earlier time is expected any more. A
    /// window operator fires the windows that end by then. Default: nothing.
    fn on_watermark(&mut self, _watermark: i64, _out: &mut Vec<Change>) -> OpResult<()> {
        Ok(())
    }

    /// Emits whatever a mini-batch bundle buffered. One-record-at-a-time
    /// operators have nothing buffered.
    fn finish_bundle(&mut self, _out: &mut Vec<Change>) -> OpResult<()> {
        Ok(())
    }

    /// Records held in an open mini-batch bundle (as they arrived, before
    /// folding); the executor dates its latency samples by them.
    fn buffered(&self) -> usize {
        0
    }

    /// Tells the operator that of its output only the kinds are observed:
    /// it feeds a sink that just counts `+I`/`-U`/`+U`/`-D` (a blackhole
    /// with no `--changelog` or `--result` asked for). It may then emit
    /// changes with empty rows; which changes it emits, and when, must not
    /// change. Flink hands such a sink a reused row object; building a
    /// fresh row no one reads would make emitting look dearer here than
    /// there. Default: rows are built anyway.
    fn emit_kinds_only(&mut self) {}

    /// Every state the operator keeps, with its counters.
    fn state_reports(&self) -> Vec<StateReport> {
        Vec::new()
    }

    /// Operator-specific counters (rows visited, lookups, cache hits, ...).
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}
