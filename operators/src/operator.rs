//! The one trait every physical operator implements.
//!
//! An operator instance is one *subtask*: it sees the records that its
//! stage's exchange routes to it, keeps its own keyed state, and emits
//! changes. The executor calls [`Operator::process`] once per batch and
//! [`Operator::finish_bundle`] when a mini-batch bundle closes (on size, on
//! latency, and at end of input). Operators, sources and the sink fail
//! with one error type, [`OpError`], whose causes stay typed.
//!
//! Input buffers are owned by contract, as dbsp's operators state an
//! ownership preference for their inputs. An operator declares once, when
//! it is built, whether it keeps the rows of its input batches
//! ([`InputOwnership::Takes`]: into state, a bundle, its output) or only
//! reads them ([`InputOwnership::Reads`]). The executor hands a taker each
//! batch by value ([`Operator::process`]) and lends a reader each batch
//! ([`Operator::process_read`]); a lent batch stays the executor's, which
//! sends it back to the thread that read it, so its rows are freed where
//! they were allocated (see `exec/mod.rs`). The declaration may change only
//! where the operator says so; it never changes what the operator computes.
//!
//! How an operator emits is fixed by whoever builds it, never switched by
//! the executor: an operator built to feed a sink that only counts kinds
//! (the aggregate's [`Emission::KindsOnly`]) emits the same changes with
//! empty rows; the job builder chooses that, and the executor refuses a
//! stage so built that feeds anything but such sinks.

use crate::changelog::Change;
use crate::checkpoint::{CheckpointError, OperatorImage};
use crate::lookup::LookupStoreError;
use crate::sink::SinkError;
use crate::state::{StateError, StateReport};

/// Why a job failed. Each cause is kept typed; [`OpError::is_bad_input`]
/// tells the failures of the input (a malformed row, a record or spec an
/// operator cannot take) from the failures of execution (IO, RocksDB, a
/// full disk), which the command line reports with different exit codes.
#[derive(Debug, thiserror::Error)]
pub enum OpError {
    /// The state backend failed: RocksDB, the disk under it, corrupt bytes.
    #[error(transparent)]
    State(#[from] StateError),
    /// The index-lookup store failed, or refused a row its table cannot take.
    #[error(transparent)]
    Lookup(#[from] LookupStoreError),
    /// A source could not deliver its next batch.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// The sink's writer failed.
    #[error(transparent)]
    Sink(#[from] SinkError),
    /// A checkpoint could not be written, read or restored.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    /// The operator cannot run as specified (a setting out of range, inputs
    /// wired to it that its spec does not have).
    #[error("{0}")]
    Spec(String),
    /// A record the operator's input contract rules out (a delete reaching
    /// a delta join).
    #[error("{0}")]
    Record(String),
    /// A fault injected on purpose (`lab.fault.*`): a failure of the
    /// execution, which a restart strategy may recover from.
    #[error("{0}")]
    Fault(String),
}

impl OpError {
    /// Whether the input is at fault (bad input) rather than the execution.
    pub fn is_bad_input(&self) -> bool {
        match self {
            OpError::State(_) | OpError::Sink(_) | OpError::Fault(_) => false,
            OpError::Lookup(e) => e.is_bad_input(),
            OpError::Source(e) => matches!(e, SourceError::BadInput(_)),
            OpError::Checkpoint(e) => e.is_bad_input(),
            OpError::Spec(_) | OpError::Record(_) => true,
        }
    }
}

/// Why a source could not deliver its next batch. The cause is the
/// connector's own error, kept whole (for a CSV row: the file, line and
/// column, and what was expected).
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The input is wrong: a row that does not parse, a value of another type.
    #[error(transparent)]
    BadInput(Box<dyn std::error::Error + Send + Sync>),
    /// Reading failed for a reason outside the input (IO, a disk).
    #[error(transparent)]
    Read(Box<dyn std::error::Error + Send + Sync>),
}

pub type OpResult<T> = Result<T, OpError>;

/// Whether an operator keeps the rows of its input batches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputOwnership {
    /// It moves rows out of its batches: the executor gives it each batch.
    Takes,
    /// It only reads them: the executor lends it each batch
    /// ([`Operator::process_read`]) and disposes of the batch after.
    Reads,
}

/// How an operator builds the rows it emits; a constructor's choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Emission {
    /// Every change with its row.
    #[default]
    Rows,
    /// The same changes, in the same order, with empty rows: only their
    /// kinds are observed (a sink that counts `+I`/`-U`/`+U`/`-D`, such as
    /// a blackhole with no `--changelog` or `--result`). Flink hands such a
    /// sink a reused row object; building a fresh row no one reads would
    /// make emitting look dearer here than there.
    KindsOnly,
}

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

    /// What the operator does with its input batches; the executor calls
    /// [`Operator::process_read`] instead of [`Operator::process`] for a
    /// reader. Asked per batch (a mini-batch aggregate takes, the same
    /// aggregate one record at a time reads). Default: it takes them.
    fn input_ownership(&self) -> InputOwnership {
        InputOwnership::Takes
    }

    /// Processes a lent `batch`, as [`Operator::process`] would; for
    /// operators that only read their input. Default: processes a copy.
    fn process_read(
        &mut self,
        input: usize,
        batch: &[Change],
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        self.process(input, batch.to_vec(), out)
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

    /// Every state the operator keeps, with its counters.
    fn state_reports(&self) -> Vec<StateReport> {
        Vec::new()
    }

    /// Operator-specific counters (rows visited, lookups, cache hits, ...).
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }

    /// From now on, keeps the input records it drops as late (`lab run
    /// --late`, the lab's form of Flink's late side output); whether it is
    /// an operator that sees records and may drop them. Default: no.
    fn keep_late(&mut self) -> bool {
        false
    }

    /// Moves the late records kept since the last call to `late`, in the
    /// order they arrived.
    fn take_late(&mut self, _late: &mut Vec<crate::value::Row>) {}

    /// Hands over everything the operator needs to go on after a restart,
    /// at a checkpoint barrier: the executor calls it between batches,
    /// after closing every bundle ([`Operator::finish_bundle`]), so nothing
    /// is in flight. The contract:
    /// - every keyed state goes into `image` under its state name
    ///   ([`OperatorImage::add_value`], [`OperatorImage::add_map`]), and
    ///   whatever else the operator keeps between batches (timers, packed
    ///   accumulators) under a name of its own, keyed by the key the
    ///   stage's input is hashed on;
    /// - the subtasks of one stage add to one image: an entry added by two
    ///   (RocksDB's shared column family) is kept once;
    /// - it changes nothing the operator computes afterwards.
    ///
    /// Default: an operator that reports no state keeps nothing; one that
    /// does and does not implement this refuses to be checkpointed.
    fn snapshot_state(&mut self, _image: &mut OperatorImage) -> OpResult<()> {
        if self.state_reports().is_empty() {
            return Ok(());
        }
        Err(OpError::Spec(
            "an operator of this job does not take part in checkpoints yet".into(),
        ))
    }

    /// Takes back, into a freshly built operator, what
    /// [`Operator::snapshot_state`] handed over: the entries of `image`
    /// whose key `owns` says this subtask holds (the executor routes keys
    /// as its exchange does). Called before the first batch.
    fn restore_state(
        &mut self,
        image: &OperatorImage,
        _owns: &dyn Fn(&[crate::value::Value]) -> bool,
    ) -> OpResult<()> {
        if image.is_empty() {
            return Ok(());
        }
        Err(OpError::Spec(
            "an operator of this job does not take part in checkpoints yet".into(),
        ))
    }
}
