//! Building and running a job (see the module doc of [`super`]).

mod checkpointing;
mod fault;
mod idleness;
mod savepoint;

pub use checkpointing::CheckpointConfig;
pub use savepoint::{SavepointConfig, SavepointRestore};

use super::exchange::Exchange;
use super::give_back::Returned;
use super::metrics::{JobReport, LatencyStats, SinkReport, StageReport, SubtaskLoad};
use crate::changelog::Change;
use crate::operator::{Emission, InputOwnership, OpError, OpResult, Operator};
use crate::sink::{ChangeWriter, RowWriter, SinkCollector};
use crate::state::{StateBackend, StateReport};
use idleness::SourceActivity;
use rayon::prelude::*;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// A bounded stream of changes read in batches: what every source of a
/// job is (the connectors of `datasets`, a store-writing wrapper, tests).
pub trait ChangeSource: Send {
    /// Appends up to `max` changes to `out`; returns how many rows it read
    /// (0 at end, and on every later call; more than it appended if it
    /// filters). A row that does not parse is an [`OpError::Source`] that
    /// says where.
    ///
    /// [`OpError::Source`]: crate::operator::OpError::Source
    fn next_batch(&mut self, max: usize, out: &mut Vec<Change>) -> OpResult<usize>;

    /// Whether the source's batches depend on nothing the job does (no
    /// store it shares with an operator, no state clock), so the executor
    /// may read them on a thread of their own, ahead of the job, as Flink
    /// runs a source as its own task. The batches, and so the run, are the
    /// same either way.
    fn can_read_ahead(&self) -> bool {
        false
    }

    /// The source's event-time watermark after the rows it has read (the
    /// greatest its watermark expression gave so far), if it has one.
    fn watermark(&self) -> Option<i64> {
        None
    }

    /// Whether the source declares a watermark (it has none before its
    /// first row): only such a source can go idle
    /// ([`JobOptions::source_idle_timeout_ms`]).
    fn has_watermark(&self) -> bool {
        false
    }

    /// Whether the source is unbounded (Flink's continuous file source): a
    /// call that reads nothing means nothing to read yet, not its end. The
    /// job asks it again every round and never reads it ahead; a round in
    /// which no source reads a row ends the job, and the sources still open
    /// then end as a stop with drain ends them, with the greatest watermark.
    fn is_unbounded(&self) -> bool {
        false
    }
}

/// What one subtask gets for a batch: the operator and the date of its
/// held records, the batch and its date, and its load counters.
type SubtaskInput<'a> = (
    (&'a mut Box<dyn Operator>, &'a mut Option<Instant>),
    ((Vec<Change>, Option<Instant>), &'a mut SubtaskLoad),
);

/// Source batches a reader thread hands over at once (one wake-up of the
/// job per group, not per batch), and groups it keeps ready: enough that a
/// moment's stall of the reader's core does not leave the job waiting.
const READ_AHEAD_GROUP: usize = 8;
const READ_AHEAD_GROUPS: usize = 4;

/// One source batch: rows read, the changes and the source's watermark
/// after them.
type SourceBatch = OpResult<(usize, Vec<Change>, Option<i64>)>;

/// How the job takes a source's batches.
enum Feed<'a> {
    /// Calls the source itself.
    Direct(&'a mut Box<dyn ChangeSource>),
    /// Receives batches a reader thread read ahead, in groups.
    Thread(
        std::sync::mpsc::Receiver<Vec<SourceBatch>>,
        std::collections::VecDeque<SourceBatch>,
    ),
}

impl Feed<'_> {
    fn next(&mut self, max: usize) -> SourceBatch {
        match self {
            Feed::Direct(source) => {
                let mut batch = Vec::with_capacity(max);
                let n = source.next_batch(max, &mut batch)?;
                Ok((n, batch, source.watermark()))
            }
            Feed::Thread(rx, ready) => {
                if ready.is_empty() {
                    // A reader that stopped sent its end (0 rows) or error first.
                    ready.extend(rx.recv().unwrap_or_default());
                }
                ready
                    .pop_front()
                    .unwrap_or_else(|| Ok((0, Vec::new(), None)))
            }
        }
    }
}

/// Reads `source` to its end (or first error) into `tx`; stops early when
/// the job hangs up. Batch buffers come from `returned` when operators
/// gave some back.
fn read_ahead(
    source: &mut Box<dyn ChangeSource>,
    max: usize,
    tx: std::sync::mpsc::SyncSender<Vec<SourceBatch>>,
    mut returned: Returned,
) {
    loop {
        let mut group = Vec::with_capacity(READ_AHEAD_GROUP);
        let mut last = false;
        while group.len() < READ_AHEAD_GROUP && !last {
            let mut batch = returned.batch(max);
            let item = source
                .next_batch(max, &mut batch)
                .map(|n| (n, batch, source.watermark()));
            last = !matches!(item, Ok((n, _, _)) if n > 0);
            group.push(item);
        }
        if tx.send(group).is_err() || last {
            return;
        }
    }
}

pub type StageId = usize;

/// What a stage emitted: a batch per subtask, with each one's oldest
/// ingestion time.
type StageOutput = (StageId, Vec<Vec<Change>>, Vec<Option<Instant>>);

/// What a subtask made of a batch: its output, the output's stamp, and the
/// batch itself when it was only lent ([`InputOwnership::Reads`]).
type Processed = (Vec<Change>, Option<Instant>, Option<Vec<Change>>);
pub type SinkId = usize;

/// Where a source or stage sends its output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A stage and which of its inputs.
    Stage(StageId, usize),
    Sink(SinkId),
}

/// Where a source or stage sends its output: one consumer, or several
/// (each gets every record).
type Outputs = Vec<(Target, Exchange)>;

struct Stage {
    name: String,
    /// The operator's uid: what its state is filed under in a checkpoint
    /// ([`JobBuilder::set_uid`]; by default its index and name).
    uid: Option<String>,
    /// Its state layout, recorded in checkpoints and checked by a savepoint
    /// restore ([`JobBuilder::set_state_schema`]).
    schema: String,
    subtasks: Vec<Box<dyn Operator>>,
    load: Vec<SubtaskLoad>,
    /// Per subtask: ingestion time of the oldest record its open bundle holds.
    held_since: Vec<Option<Instant>>,
    outputs: Outputs,
    shuffled: u64,
    /// The watermark of each input, and the stage's own (the least of its
    /// active inputs', see `idleness.rs`).
    input_watermarks: Vec<i64>,
    watermark: i64,
    /// Which inputs are idle, and whether the stage is (all of them are).
    input_idle: Vec<bool>,
    idle: bool,
    /// How its operators were built to emit ([`JobBuilder::set_emission`]).
    emission: Emission,
    /// Where the records its operators drop as late go ([`Job::keep_late`]).
    late: Option<Box<dyn RowWriter>>,
    /// The most live state entries (all subtasks) seen so far.
    peak_entries: i64,
}

struct SourceSlot {
    /// What a savepoint matches it by ([`JobBuilder::name_source`]).
    name: String,
    source: Box<dyn ChangeSource>,
    outputs: Outputs,
}

struct SinkSlot {
    name: String,
    /// Its table and row type ([`JobBuilder::set_sink_schema`]).
    schema: String,
    collector: SinkCollector,
    /// (latency, rows) per partition delivered to this sink.
    latencies: Vec<(Duration, u64)>,
}

#[derive(Default)]
pub struct JobBuilder {
    sources: Vec<SourceSlot>,
    stages: Vec<Stage>,
    sinks: Vec<SinkSlot>,
}

impl JobBuilder {
    pub fn new() -> JobBuilder {
        JobBuilder::default()
    }

    pub fn add_source(&mut self, source: Box<dyn ChangeSource>) -> usize {
        self.sources.push(SourceSlot {
            name: format!("source {}", self.sources.len()),
            source,
            outputs: Vec::new(),
        });
        self.sources.len() - 1
    }

    /// Adds a stage with one operator instance per subtask. Stages must be
    /// added upstream first (the planner builds bottom-up).
    pub fn add_stage(
        &mut self,
        name: impl Into<String>,
        subtasks: Vec<Box<dyn Operator>>,
    ) -> StageId {
        let n = subtasks.len();
        self.stages.push(Stage {
            name: name.into(),
            uid: None,
            schema: String::new(),
            subtasks,
            load: vec![SubtaskLoad::default(); n],
            held_since: vec![None; n],
            outputs: Vec::new(),
            shuffled: 0,
            input_watermarks: Vec::new(),
            watermark: i64::MIN,
            input_idle: Vec::new(),
            idle: false,
            emission: Emission::Rows,
            late: None,
            peak_entries: 0,
        });
        self.stages.len() - 1
    }

    /// Records that the stage's operators were built with `emission`;
    /// [`JobBuilder::build`] (and [`Job::set_sink_writer`]) refuse a
    /// kinds-only stage that feeds anything but sinks that count kinds.
    pub fn set_emission(&mut self, stage: StageId, emission: Emission) {
        self.stages[stage].emission = emission;
    }

    /// Names the stage's operator for checkpoints (the plan's uid).
    pub fn set_uid(&mut self, stage: StageId, uid: impl Into<String>) {
        self.stages[stage].uid = Some(uid.into());
    }

    /// Names a source (its table) for savepoints, which match a changed
    /// job's sources by name.
    pub fn name_source(&mut self, source: usize, name: impl Into<String>) {
        self.sources[source].name = name.into();
    }

    /// Adds a sink; `name` labels its report.
    pub fn add_sink(&mut self, name: impl Into<String>, collector: SinkCollector) -> SinkId {
        self.sinks.push(SinkSlot {
            name: name.into(),
            schema: String::new(),
            collector,
            latencies: Vec::new(),
        });
        self.sinks.len() - 1
    }

    /// Sends the source's batches to `target`; a source connected several
    /// times feeds every target (it is read once).
    pub fn connect_source(&mut self, source: usize, target: Target, exchange: Exchange) {
        self.sources[source].outputs.push((target, exchange));
    }

    /// Sends the stage's output to `target`; a stage connected several
    /// times feeds every target.
    pub fn connect_stage(&mut self, stage: StageId, target: Target, exchange: Exchange) {
        self.stages[stage].outputs.push((target, exchange));
    }

    pub fn build(self, options: JobOptions) -> Result<Job, String> {
        let sinks = self.sinks.len();
        let check_sink = |t: &Target| match t {
            Target::Sink(k) if *k >= sinks => Err(format!("sink {k} was not added")),
            _ => Ok(()),
        };
        let mut fed = vec![false; sinks];
        for (i, s) in self.sources.iter().enumerate() {
            if s.outputs.is_empty() {
                return Err(format!("source {i} is not connected"));
            }
            for (t, _) in &s.outputs {
                check_sink(t)?;
                if let Target::Sink(k) = t {
                    fed[*k] = true;
                }
            }
        }
        for (i, s) in self.stages.iter().enumerate() {
            if s.outputs.is_empty() {
                return Err(format!("stage {i} ({}) is not connected", s.name));
            }
            for (t, _) in &s.outputs {
                check_sink(t)?;
                match t {
                    Target::Stage(t, _) if *t <= i => {
                        return Err(format!(
                            "stage {i} feeds stage {t}, which is not downstream"
                        ))
                    }
                    Target::Sink(k) => fed[*k] = true,
                    _ => {}
                }
            }
            if s.subtasks.is_empty() {
                return Err(format!("stage {i} ({}) has no subtasks", s.name));
            }
            let counts_only = |t: &Target| match t {
                Target::Sink(k) => self.sinks[*k].collector.counts_only(),
                Target::Stage(..) => false,
            };
            if s.emission == Emission::KindsOnly && !s.outputs.iter().all(|(t, _)| counts_only(t)) {
                return Err(format!(
                    "stage {i} ({}) emits kinds only but feeds a consumer that reads rows",
                    s.name
                ));
            }
        }
        if let Some(k) = fed.iter().position(|f| !f) {
            return Err(format!("sink {k} ({}) is not fed", self.sinks[k].name));
        }
        let mut stages = self.stages;
        let ports: Vec<(usize, usize)> = self
            .sources
            .iter()
            .flat_map(|s| &s.outputs)
            .chain(stages.iter().flat_map(|s| &s.outputs))
            .filter_map(|(t, _)| match t {
                Target::Stage(s, i) => Some((*s, *i)),
                Target::Sink(_) => None,
            })
            .collect();
        for (s, i) in ports {
            let st = &mut stages[s];
            if st.input_watermarks.len() <= i {
                st.input_watermarks.resize(i + 1, i64::MIN);
                st.input_idle.resize(i + 1, false);
            }
        }
        for (i, st) in stages.iter_mut().enumerate() {
            if st.uid.is_none() {
                st.uid = Some(format!("{i}_{}", st.name));
            }
        }
        Ok(Job {
            source_names: self.sources.iter().map(|s| s.name.clone()).collect(),
            sources: self.sources,
            stages,
            sinks: self.sinks,
            options,
            return_to_reader: None,
            source_wait: Duration::ZERO,
            sink_time: Duration::ZERO,
            checkpointing: None,
            resume: None,
            checkpoint_counts: Default::default(),
            shared_files: Default::default(),
            fault: None,
            savepoint: None,
            pending: None,
            savepoint_taken: None,
            non_restored: Vec::new(),
        })
    }
}

/// Run options that are not part of the plan.
#[derive(Clone)]
pub struct JobOptions {
    /// Records per source batch.
    pub batch_size: usize,
    /// Close mini-batch bundles when this much time passed since the last close.
    pub bundle_latency: Option<Duration>,
    /// The backend the operators' states live in (for physical sizes and
    /// the state clock).
    pub backend: StateBackend,
    /// Advance the state clock by one millisecond per input record instead
    /// of by wall time (`lab.clock = deterministic`).
    pub deterministic_clock: bool,
    /// A source emits its watermark when this much time passed on the
    /// clock since it last did (0: after every batch).
    pub watermark_interval_ms: u64,
    /// A source with a watermark that read no rows for longer than this on
    /// the clock is idle (`table.exec.source.idle-timeout`; 0: never).
    pub source_idle_timeout_ms: u64,
    /// How a round's source batches move through the plan
    /// (`lab.source.delivery`): false, each source's batch goes through
    /// the whole plan before the next source's is read; true, every source
    /// reads its batch, then they all move one stage per step, so a row
    /// that crosses fewer stages arrives first, as in Flink's pipelined
    /// tasks (see `run_feeds`).
    pub breadth_first: bool,
}

pub struct Job {
    sources: Vec<SourceSlot>,
    /// Each source's name (the sources are lent to the run loop while it
    /// runs, their names stay here for checkpoints).
    source_names: Vec<String>,
    stages: Vec<Stage>,
    sinks: Vec<SinkSlot>,
    options: JobOptions,
    /// The way back to the one read-ahead source, during a run that has
    /// exactly one: where the batches lent to operators that only read them
    /// go once processed ([`InputOwnership::Reads`]).
    return_to_reader: Option<std::sync::mpsc::Sender<Vec<Change>>>,
    /// Time the job's thread waited for sources, and spent in the sinks.
    source_wait: Duration,
    sink_time: Duration,
    /// Where and how often to take checkpoints ([`Job::enable_checkpoints`]).
    checkpointing: Option<CheckpointConfig>,
    /// The checkpoint a run resumes from ([`Job::restore`]): its source
    /// positions and runtime, applied when the run starts.
    resume: Option<crate::checkpoint::Checkpoint>,
    checkpoint_counts: super::metrics::CheckpointCounts,
    /// The SST files this run's incremental checkpoints have shared.
    shared_files: crate::checkpoint::native::SharedFiles,
    /// The fault to inject ([`Job::inject_fault`]), until it fires.
    fault: Option<fault::Fault>,
    /// In a breadth-first round, stage outputs waiting for the next step,
    /// in the order they were emitted ([`JobOptions::breadth_first`]).
    pending: Option<VecDeque<StageOutput>>,
    /// The savepoint to take ([`Job::take_savepoint`]), until taken.
    savepoint: Option<SavepointConfig>,
    /// Where the savepoint went.
    savepoint_taken: Option<std::path::PathBuf>,
    /// State a savepoint held that this job dropped ([`Job::restore_savepoint`]).
    non_restored: Vec<String>,
}

impl Job {
    /// Names stage `stage`'s operator for checkpoints (a planned uid), in
    /// place of the one it was built with.
    pub fn set_uid(&mut self, stage: StageId, uid: impl Into<String>) {
        self.stages[stage].uid = Some(uid.into());
    }

    /// Records the layout of a stage's state (checked by a savepoint
    /// restore).
    pub fn set_state_schema(&mut self, stage: StageId, schema: impl Into<String>) {
        self.stages[stage].schema = schema.into();
    }

    /// Records a sink's table and row type (checked by a savepoint restore).
    pub fn set_sink_schema(&mut self, sink: SinkId, schema: impl Into<String>) {
        self.sinks[sink].schema = schema.into();
    }

    /// The uid each stage's state is filed under in a checkpoint.
    pub fn uids(&self) -> Vec<&str> {
        self.stages
            .iter()
            .map(|s| s.uid.as_deref().unwrap_or(""))
            .collect()
    }

    pub fn sink(&self, sink: SinkId) -> &SinkCollector {
        &self.sinks[sink].collector
    }

    /// Writes the sink's rows to `writer` as they arrive; [`Job::finish_sink`]
    /// completes it after the run. Refused for a sink fed by a stage built
    /// to emit kinds only: the rows it would write are empty.
    pub fn set_sink_writer(&mut self, sink: SinkId, writer: Box<dyn RowWriter>) -> OpResult<()> {
        self.check_rows_reach(sink)?;
        self.sinks[sink].collector.set_writer(writer);
        Ok(())
    }

    /// Refuses a sink fed by a stage built to emit kinds only.
    fn check_rows_reach(&self, sink: SinkId) -> OpResult<()> {
        let kinds_only = self.stages.iter().find(|s| {
            s.emission == Emission::KindsOnly
                && s.outputs.iter().any(|(t, _)| *t == Target::Sink(sink))
        });
        if let Some(s) = kinds_only {
            return Err(OpError::Spec(format!(
                "sink {} is fed by {}, built to emit kinds only; it cannot write rows",
                self.sinks[sink].name, s.name
            )));
        }
        Ok(())
    }

    /// Writes every change the sink receives to `writer` as it arrives;
    /// [`Job::take_changelog_writer`] hands it back, not completed.
    /// Refused, as [`Job::set_sink_writer`] is, for a kinds-only feed.
    pub fn set_changelog_writer(
        &mut self,
        sink: SinkId,
        writer: Box<dyn ChangeWriter>,
    ) -> OpResult<()> {
        self.check_rows_reach(sink)?;
        self.sinks[sink].collector.set_changelog_writer(writer);
        Ok(())
    }

    /// Writes the records the stage's operators drop as late to `writer`
    /// as they are dropped; the writer comes back when its operators drop
    /// none (not window operators) or it has one already.
    /// [`Job::take_late_writer`] hands it back, not completed.
    pub fn keep_late(
        &mut self,
        stage: StageId,
        writer: Box<dyn RowWriter>,
    ) -> Result<(), Box<dyn RowWriter>> {
        let st = &mut self.stages[stage];
        let mut keeps = false;
        for op in &mut st.subtasks {
            keeps |= op.keep_late();
        }
        if !keeps || st.late.is_some() {
            return Err(writer);
        }
        st.late = Some(writer);
        Ok(())
    }

    /// The stage's late-record writer, for its owner to complete.
    pub fn take_late_writer(&mut self, stage: StageId) -> Option<Box<dyn RowWriter>> {
        self.stages[stage].late.take()
    }

    /// Writes what the stage's subtasks dropped as late, in subtask order.
    fn write_late(&mut self, stage: StageId) -> OpResult<()> {
        let st = &mut self.stages[stage];
        let Some(w) = st.late.as_mut() else {
            return Ok(());
        };
        let mut rows = Vec::new();
        for op in &mut st.subtasks {
            op.take_late(&mut rows);
        }
        for r in &rows {
            w.write(r)?;
        }
        Ok(())
    }

    /// The sink's changelog writer, for its owner to complete.
    pub fn take_changelog_writer(&mut self, sink: SinkId) -> Option<Box<dyn ChangeWriter>> {
        self.sinks[sink].collector.take_changelog_writer()
    }

    /// Completes the sink's writer (after a successful run).
    pub fn finish_sink(&mut self, sink: SinkId) -> OpResult<()> {
        Ok(self.sinks[sink].collector.finish_writer()?)
    }

    /// Runs the job to the end of its input. `progress` is called after
    /// each source batch with the number of input rows read so far.
    pub fn run(&mut self, progress: &mut dyn FnMut(u64)) -> OpResult<JobReport> {
        if self.stages.iter().any(|s| s.subtasks.len() > 1) {
            // The first parallel job of a process would time the start of
            // rayon's worker threads; start them before the clock does.
            rayon::broadcast(|_| ());
        }
        let start = Instant::now();
        let mut sources = std::mem::take(&mut self.sources);
        let batch_size = self.options.batch_size.max(1);
        let outputs: Vec<Outputs> = sources.iter().map(|s| s.outputs.clone()).collect();
        let reads_ahead = |s: &SourceSlot| s.source.can_read_ahead() && !s.source.is_unbounded();
        let readers = sources.iter().filter(|s| reads_ahead(s)).count();
        let mut activity: Vec<SourceActivity> = sources
            .iter()
            .map(|s| SourceActivity::new(s.source.as_ref()))
            .collect();
        let result = std::thread::scope(|scope| {
            let mut feeds: Vec<Feed> = sources
                .iter_mut()
                .map(|slot| {
                    if !reads_ahead(slot) {
                        return Feed::Direct(&mut slot.source);
                    }
                    let (tx, rx) = std::sync::mpsc::sync_channel(READ_AHEAD_GROUPS);
                    let (back, returned) = std::sync::mpsc::channel();
                    if readers == 1 {
                        self.return_to_reader = Some(back);
                    }
                    let returned = Returned::new(returned);
                    let source = &mut slot.source;
                    scope.spawn(move || read_ahead(source, batch_size, tx, returned));
                    Feed::Thread(rx, Default::default())
                })
                .collect();
            let result = self.run_feeds(start, &mut feeds, &mut activity, &outputs, progress);
            self.return_to_reader = None;
            result
            // Dropping the feeds hangs up on readers still running.
        });
        self.sources = sources;
        result
    }

    /// The run loop, in rounds of one batch per source until every source
    /// is done.
    ///
    /// Depth-first (the default), each source's batch goes through the
    /// whole plan before the next source's is read. Breadth-first, every
    /// source reads its batch and the batches then move one stage per
    /// step: a stage's output waits until the stages fed in this step have
    /// run. Both are legal schedules of the same dataflow (each input of a
    /// stage still sees its rows in order; watermarks follow the round's
    /// rows) and end with the same results; they differ in the changelog.
    /// A left-deep chain of LEFT joins over tables read side by side shows
    /// it: depth-first, a key's row of the first table reaches the sink
    /// NULL-padded and each later table's row retracts and re-emits it;
    /// breadth-first, the tables after the second are in their joins'
    /// state before the chain's rows get there (only the first join's
    /// retraction reaches the sink), as when Flink's sources run ahead of
    /// a pipeline of joins (`optimizer/tests/source_delivery.rs`).
    fn run_feeds(
        &mut self,
        start: Instant,
        feeds: &mut [Feed],
        activity: &mut [SourceActivity],
        outputs: &[Outputs],
        progress: &mut dyn FnMut(u64),
    ) -> OpResult<JobReport> {
        let mut last_flush = Instant::now();
        let mut input_rows = 0u64;
        let batch_size = self.options.batch_size.max(1);
        let mut done = vec![false; feeds.len()];
        // Per source: the watermark it last emitted and when (clock ms).
        let mut emitted: Vec<(Option<i64>, u64)> = vec![(None, 0); feeds.len()];
        // Per source: rows read (a checkpoint's source positions).
        let mut positions = vec![0u64; feeds.len()];
        let mut next_id = 1;
        if let Some(c) = self.resume.take() {
            input_rows = self.resume_at(&c, feeds, batch_size, &mut emitted, &mut done)?;
            positions.clone_from(&c.sources);
            next_id = c.id + 1;
        }
        let mut last_checkpoint = input_rows;
        let idle_timeout = self.options.source_idle_timeout_ms;
        let clock = |input_rows: u64, deterministic: bool| {
            if deterministic {
                input_rows
            } else {
                start.elapsed().as_millis() as u64
            }
        };
        // The sources whose batches move through the plan together: one at
        // a time (depth-first), or all of them (breadth-first).
        let groups: Vec<Vec<usize>> = if self.options.breadth_first {
            vec![(0..feeds.len()).collect()]
        } else {
            (0..feeds.len()).map(|s| vec![s]).collect()
        };
        loop {
            let mut any = false;
            for group in &groups {
                // The group's batches: source, rows, watermark after them,
                // whether a reader thread lent them.
                let mut read = Vec::with_capacity(group.len());
                // Sources that had no rows: open ones (silent) and ended ones,
                // handled after the group's rows.
                let mut empty = Vec::new();
                for &s in group {
                    if done[s] {
                        continue;
                    }
                    let feed = &mut feeds[s];
                    let t = Instant::now();
                    let (n, batch, watermark) = feed.next(batch_size)?;
                    self.source_wait += t.elapsed();
                    if n == 0 {
                        empty.push(s);
                        continue;
                    }
                    any = true;
                    input_rows += n as u64;
                    positions[s] += n as u64;
                    read.push((s, batch, watermark, matches!(feed, Feed::Thread(..))));
                }
                let now = clock(input_rows, self.options.deterministic_clock);
                if !read.is_empty() {
                    self.options.backend.clock().set(now);
                    self.deliver_round(read, now, &mut activity[..], outputs, &mut emitted)?;
                    progress(input_rows);
                }
                for s in empty {
                    if activity[s].unbounded {
                        // Nothing to read yet: idle once silent long enough.
                        if activity[s].goes_idle(now, idle_timeout) {
                            self.push_idleness_all(&outputs[s], true)?;
                        }
                    } else {
                        done[s] = true;
                        self.end_source(&mut activity[s], &outputs[s])?;
                    }
                }
                if let Some(lat) = self.options.bundle_latency {
                    if last_flush.elapsed() >= lat {
                        self.flush_all()?;
                        last_flush = Instant::now();
                    }
                }
            }
            if !any {
                // No source read a row: those still open (unbounded) end
                // now, as a stop with drain ends them.
                for s in 0..feeds.len() {
                    if !done[s] {
                        done[s] = true;
                        self.end_source(&mut activity[s], &outputs[s])?;
                    }
                }
                break;
            }
            // A barrier between rounds: every source has handed over the
            // same number of batches, so a resumed run reads on from here.
            let due = self
                .checkpointing
                .as_ref()
                .is_some_and(|c| input_rows.saturating_sub(last_checkpoint) >= c.every_rows);
            if due && !done.iter().all(|d| *d) {
                self.checkpoint(next_id, &positions, input_rows, &emitted, &done)?;
                next_id += 1;
                last_checkpoint = input_rows;
            }
            let savepoint = self.savepoint.as_ref().map(|s| (s.after_rows, s.stop));
            if let Some((after, stop)) = savepoint {
                if input_rows >= after && !done.iter().all(|d| *d) {
                    self.write_savepoint(next_id, &positions, input_rows, &emitted, &done)?;
                    if stop {
                        // Flink's stop-with-savepoint: the job ends here,
                        // its outputs as the savepoint committed them.
                        return Ok(self.report(input_rows, start.elapsed()));
                    }
                }
            }
        }
        self.flush_all()?;
        // A savepoint asked for after more rows than the input has: taken
        // once the input has ended.
        if self.savepoint.is_some() {
            self.write_savepoint(next_id, &positions, input_rows, &emitted, &done)?;
        }
        // A final checkpoint once the input has ended (Flink's checkpoint
        // after tasks finish): the run's outputs are complete in it, so a
        // run killed while completing its files resumes from it.
        if self.checkpointing.is_some() {
            self.checkpoint(next_id, &positions, input_rows, &emitted, &done)?;
        }
        let wall = start.elapsed();
        Ok(self.report(input_rows, wall))
    }

    /// Pushes a group's batches (source, rows, its watermark after them,
    /// whether a reader lent them) through the plan, depth-first or
    /// breadth-first ([`JobOptions::breadth_first`]), then each source's
    /// watermark when due on the lab's clock (`now`).
    fn deliver_round(
        &mut self,
        read: Vec<(usize, Vec<Change>, Option<i64>, bool)>,
        now: u64,
        activity: &mut [SourceActivity],
        outputs: &[Outputs],
        emitted: &mut [(Option<i64>, u64)],
    ) -> OpResult<()> {
        for &(s, ..) in &read {
            if activity[s].read_rows(now) {
                // Active again before its rows go downstream.
                self.push_idleness_all(&outputs[s], false)?;
            }
        }
        let mut watermarks = Vec::with_capacity(read.len());
        self.pending = self.options.breadth_first.then(VecDeque::new);
        for (s, batch, watermark, from_reader) in read {
            // Latency counts from when the batch enters the plan (time a
            // read-ahead batch waited for the job is the source's).
            let stamps = vec![Some(Instant::now())];
            self.push_all(&outputs[s], vec![batch], stamps, from_reader)?;
            watermarks.push((s, watermark));
        }
        self.drain_pending()?;
        let interval = self.options.watermark_interval_ms;
        for (s, watermark) in watermarks {
            let Some(w) = watermark else { continue };
            let (last, at) = emitted[s];
            let due = interval == 0 || last.is_none() || now.saturating_sub(at) >= interval;
            if due && last.is_none_or(|l| w > l) {
                emitted[s] = (Some(w), now);
                self.push_watermark_all(&outputs[s], w)?;
            }
        }
        Ok(())
    }

    /// Sends a watermark to each of `outputs`.
    fn push_watermark_all(
        &mut self,
        outputs: &[(Target, Exchange)],
        watermark: i64,
    ) -> OpResult<()> {
        for (target, _) in outputs {
            self.push_watermark(*target, watermark)?;
        }
        Ok(())
    }

    /// A bounded source ends (or an open one is stopped) with the greatest
    /// watermark, which fires every window (Flink's MAX_WATERMARK); an idle
    /// one is active again first, so its consumers take it.
    fn end_source(&mut self, activity: &mut SourceActivity, outputs: &Outputs) -> OpResult<()> {
        if activity.ends() {
            self.push_idleness_all(outputs, false)?;
        }
        self.push_watermark_all(outputs, i64::MAX)
    }

    /// A watermark reaches input `port` of a stage: the stage's watermark
    /// is the least of its active inputs' (as a Flink task's is the least
    /// of its channels'; every subtask of the upstream stage has the same
    /// one here; an idle input's watermark is ignored, see `idleness.rs`);
    /// when it advances, each subtask handles it, what they emit goes
    /// downstream, and then the watermark.
    fn push_watermark(&mut self, target: Target, watermark: i64) -> OpResult<()> {
        let Target::Stage(s, port) = target else {
            return Ok(());
        };
        let stage = &mut self.stages[s];
        if watermark <= stage.input_watermarks[port] || stage.input_idle[port] {
            return Ok(());
        }
        stage.input_watermarks[port] = watermark;
        match stage.least_active_watermark() {
            Some(least) => self.advance_watermark(s, least),
            None => Ok(()),
        }
    }

    /// Stage `s`'s watermark moves to `least` if that is ahead of it: each
    /// subtask handles it, what they emit goes downstream, and then the
    /// watermark.
    fn advance_watermark(&mut self, s: StageId, least: i64) -> OpResult<()> {
        let stage = &mut self.stages[s];
        if least <= stage.watermark {
            return Ok(());
        }
        stage.watermark = least;
        // Before windows fire: a window operator's state only grows
        // between watermarks, so this sees its peak.
        stage.peak_entries = stage.peak_entries.max(stage_entries(&stage.subtasks));
        let fire = |(op, load): (&mut Box<dyn Operator>, &mut SubtaskLoad)| {
            let t = Instant::now();
            let mut out = Vec::new();
            let r = op.on_watermark(least, &mut out);
            load.records_out += out.len() as u64;
            load.busy += t.elapsed();
            r.map(|_| out)
        };
        let outputs: Vec<OpResult<Vec<Change>>> = if stage.subtasks.len() == 1 {
            stage
                .subtasks
                .iter_mut()
                .zip(stage.load.iter_mut())
                .map(fire)
                .collect()
        } else {
            stage
                .subtasks
                .par_iter_mut()
                .zip(stage.load.par_iter_mut())
                .map(fire)
                .collect()
        };
        let outputs = outputs.into_iter().collect::<OpResult<Vec<_>>>()?;
        if outputs.iter().any(|o| !o.is_empty()) {
            let now = Instant::now();
            let stamps = vec![Some(now); outputs.len()];
            self.push_from(s, outputs, stamps)?;
        }
        let targets = std::mem::take(&mut self.stages[s].outputs);
        let r = self.push_watermark_all(&targets, least);
        self.stages[s].outputs = targets;
        r
    }

    /// Closes every stage's bundle, upstream first, pushing what it emits.
    fn flush_all(&mut self) -> OpResult<()> {
        for s in 0..self.stages.len() {
            let stage = &mut self.stages[s];
            let mut outputs = Vec::with_capacity(stage.subtasks.len());
            let mut stamps = Vec::with_capacity(stage.subtasks.len());
            for (op, held) in stage.subtasks.iter_mut().zip(stage.held_since.iter_mut()) {
                let mut out = Vec::new();
                op.finish_bundle(&mut out)?;
                stamps.push((!out.is_empty()).then(|| held.unwrap_or_else(Instant::now)));
                if op.buffered() == 0 {
                    *held = None;
                }
                outputs.push(out);
            }
            for (load, o) in stage.load.iter_mut().zip(&outputs) {
                load.records_out += o.len() as u64;
            }
            if outputs.iter().any(|o| !o.is_empty()) {
                self.push_from(s, outputs, stamps)?;
            }
        }
        Ok(())
    }

    /// Moves the queued outputs of a breadth-first round on, one stage
    /// step at a time, until none is left; then pushes go depth-first
    /// again (a watermark or a flush must not overtake rows).
    fn drain_pending(&mut self) -> OpResult<()> {
        while let Some((s, parts, stamps)) = self.pending.as_mut().and_then(VecDeque::pop_front) {
            self.push_from(s, parts, stamps)?;
        }
        self.pending = None;
        Ok(())
    }

    /// Pushes stage `s`'s output to its consumers.
    fn push_from(
        &mut self,
        s: StageId,
        partitions: Vec<Vec<Change>>,
        stamps: Vec<Option<Instant>>,
    ) -> OpResult<()> {
        // Taken for the push (no stage feeds itself) rather than copied
        // per batch.
        let targets = std::mem::take(&mut self.stages[s].outputs);
        let r = self.push_all(&targets, partitions, stamps, false);
        self.stages[s].outputs = targets;
        r
    }

    /// Pushes `partitions` to each of `outputs`: a copy to every one but
    /// the last, which gets them as they are (and alone may hand a
    /// reader's batch back to it).
    fn push_all(
        &mut self,
        outputs: &[(Target, Exchange)],
        partitions: Vec<Vec<Change>>,
        stamps: Vec<Option<Instant>>,
        from_reader: bool,
    ) -> OpResult<()> {
        let Some(((last_target, last_exchange), rest)) = outputs.split_last() else {
            return Ok(());
        };
        for (target, exchange) in rest {
            self.push(*target, exchange, partitions.clone(), stamps.clone(), false)?;
        }
        self.push(*last_target, last_exchange, partitions, stamps, from_reader)
    }

    /// Pushes `partitions` through the tree. `stamps[i]` is the ingestion
    /// time of the oldest record partition `i` stands for: its own records
    /// for a source batch, and for an operator's output also the records
    /// its bundle held, so a delivery's latency is that of its oldest row.
    /// `from_reader`: the partitions are a read-ahead source's batch.
    fn push(
        &mut self,
        target: Target,
        exchange: &Exchange,
        partitions: Vec<Vec<Change>>,
        stamps: Vec<Option<Instant>>,
        from_reader: bool,
    ) -> OpResult<()> {
        match target {
            Target::Sink(k) => {
                let sink = &mut self.sinks[k];
                for (part, stamp) in partitions.iter().zip(&stamps) {
                    if !part.is_empty() {
                        let since = stamp.unwrap_or_else(Instant::now);
                        sink.latencies.push((since.elapsed(), part.len() as u64));
                    }
                }
                let batch: Vec<Change> = if partitions.len() == 1 {
                    partitions.into_iter().next().unwrap_or_default()
                } else {
                    partitions.into_iter().flatten().collect()
                };
                if !batch.is_empty() {
                    let t = Instant::now();
                    sink.collector.consume(batch)?;
                    self.sink_time += t.elapsed();
                }
                Ok(())
            }
            Target::Stage(s, input) => {
                self.check_fault(s, &partitions)?;
                let stage = &mut self.stages[s];
                let p = stage.subtasks.len();
                if matches!(exchange, Exchange::Hash(_)) {
                    stage.shuffled += partitions.iter().map(|b| b.len() as u64).sum::<u64>();
                }
                let (batches, in_stamps) = exchange.route_stamped(partitions, &stamps, p);
                // A read-ahead source's batch, whole (one subtask), goes
                // back to its reader to be freed and refilled there.
                let return_lent = from_reader && p == 1 && self.return_to_reader.is_some();
                let run = |((op, held), ((batch, stamp), load)): SubtaskInput| {
                    let t = Instant::now();
                    let n = batch.len();
                    load.records_in += n as u64;
                    let before = op.buffered();
                    // Room for an update's two rows per record, so an
                    // aggregate's output is not copied while it grows.
                    let mut out = Vec::with_capacity(2 * n);
                    // The ownership contract (`operator.rs`): a reader is
                    // lent the batch; it comes back to go to its reader,
                    // or is dropped here, on the subtask's thread.
                    let (r, lent) = match op.input_ownership() {
                        InputOwnership::Takes => (op.process(input, batch, &mut out), None),
                        InputOwnership::Reads => {
                            let r = op.process_read(input, &batch, &mut out);
                            (r, return_lent.then_some(batch))
                        }
                    };
                    load.records_out += out.len() as u64;
                    load.busy += t.elapsed();
                    let after = op.buffered();
                    // Fewer held than held before plus this batch: a bundle
                    // closed (or the operator holds nothing), so the output
                    // may carry the held records, and what is held now
                    // arrived with this batch.
                    let closed = after < before + n;
                    let oldest = match (*held, stamp) {
                        (Some(h), Some(s)) => Some(h.min(s)),
                        (h, s) => h.or(s),
                    };
                    let out_stamp = if out.is_empty() {
                        None
                    } else if closed {
                        oldest
                    } else {
                        stamp
                    };
                    *held = match (after, closed) {
                        (0, _) => None,
                        (_, true) => stamp,
                        (_, false) => oldest,
                    };
                    r.map(|_| (out, out_stamp, lent))
                };
                let outputs: Vec<OpResult<Processed>> = if p == 1 {
                    stage
                        .subtasks
                        .iter_mut()
                        .zip(stage.held_since.iter_mut())
                        .zip(
                            batches
                                .into_iter()
                                .zip(in_stamps)
                                .zip(stage.load.iter_mut()),
                        )
                        .map(run)
                        .collect()
                } else {
                    stage
                        .subtasks
                        .par_iter_mut()
                        .zip(stage.held_since.par_iter_mut())
                        .zip(
                            batches
                                .into_par_iter()
                                .zip(in_stamps.into_par_iter())
                                .zip(stage.load.par_iter_mut()),
                        )
                        .map(run)
                        .collect()
                };
                let mut parts = Vec::with_capacity(p);
                let mut stamps = Vec::with_capacity(p);
                for o in outputs {
                    let (out, stamp, lent) = o?;
                    if let (Some(batch), Some(back)) = (lent, &self.return_to_reader) {
                        // A reader that already stopped: dropped here.
                        let _ = back.send(batch);
                    }
                    parts.push(out);
                    stamps.push(stamp);
                }
                let outputs = parts;
                self.write_late(s)?;
                if outputs.iter().all(Vec::is_empty) {
                    return Ok(());
                }
                match &mut self.pending {
                    // Breadth-first: on after what other stages emitted
                    // in this step.
                    Some(queue) => {
                        queue.push_back((s, outputs, stamps));
                        Ok(())
                    }
                    None => self.push_from(s, outputs, stamps),
                }
            }
        }
    }

    fn report(&self, input_rows: u64, wall: Duration) -> JobReport {
        let stages = self
            .stages
            .iter()
            .map(|s| {
                let mut states: Vec<StateReport> = Vec::new();
                let mut counters: Vec<(String, u64)> = Vec::new();
                for op in &s.subtasks {
                    for r in op.state_reports() {
                        match states.iter_mut().find(|x| x.name == r.name) {
                            Some(x) => x.metrics.merge(&r.metrics),
                            None => states.push(r),
                        }
                    }
                    for (name, v) in op.counters() {
                        match counters.iter_mut().find(|(n, _)| n == name) {
                            Some((_, x)) => *x += v,
                            None => counters.push((name.to_string(), v)),
                        }
                    }
                }
                let physical_bytes = states
                    .iter()
                    .map(|r| {
                        r.column_family
                            .as_ref()
                            .and_then(|cf| self.options.backend.physical_bytes(cf))
                    })
                    .collect();
                let entries: i64 = states.iter().map(|r| r.metrics.entries).sum();
                StageReport {
                    peak_state_entries: s.peak_entries.max(entries),
                    name: s.name.clone(),
                    parallelism: s.subtasks.len(),
                    subtasks: s.load.clone(),
                    states,
                    physical_bytes,
                    counters,
                    records_shuffled: s.shuffled,
                }
            })
            .collect();
        let sinks = self
            .sinks
            .iter()
            .map(|s| SinkReport {
                name: s.name.clone(),
                counts: s.collector.counts(),
                latency: latency_stats(&s.latencies),
                result: s.collector.is_materialized().then(|| s.collector.result()),
                negative_rows: s.collector.negative_rows(),
            })
            .collect();
        JobReport {
            input_rows,
            wall,
            stages,
            source_wait: self.source_wait,
            sink_time: self.sink_time,
            sinks,
            checkpoints: self.checkpoint_counts,
            savepoint: self.savepoint_taken.clone(),
            non_restored: self.non_restored.clone(),
            restarts: 0,
        }
    }
}

/// Live state entries of a stage's subtasks, summed.
fn stage_entries(subtasks: &[Box<dyn Operator>]) -> i64 {
    subtasks
        .iter()
        .flat_map(|op| op.state_reports())
        .map(|r| r.metrics.entries)
        .sum()
}

/// Row-weighted percentiles of the sink's delivery latencies.
fn latency_stats(samples: &[(Duration, u64)]) -> LatencyStats {
    let mut s: Vec<(Duration, u64)> = samples.to_vec();
    s.sort_by_key(|(d, _)| *d);
    let total: u64 = s.iter().map(|(_, n)| n).sum();
    if total == 0 {
        return LatencyStats::default();
    }
    let pct = |p: f64| {
        let want = ((total as f64) * p).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (d, n) in &s {
            seen += n;
            if seen >= want {
                return *d;
            }
        }
        s.last().map(|x| x.0).unwrap_or_default()
    };
    LatencyStats {
        p50: pct(0.50),
        p99: pct(0.99),
        max: s.last().map(|x| x.0).unwrap_or_default(),
    }
}
