//! What a run measured: per job, per stage and per sink.

use crate::changelog::KindCounts;
use crate::state::StateReport;
use crate::value::Row;
use std::time::Duration;

/// One subtask's load.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SubtaskLoad {
    pub records_in: u64,
    pub records_out: u64,
    pub busy: Duration,
}

/// One stage (operator) of the job.
#[derive(Clone, Debug)]
pub struct StageReport {
    pub name: String,
    pub parallelism: usize,
    pub subtasks: Vec<SubtaskLoad>,
    /// States merged over subtasks, by state name.
    pub states: Vec<StateReport>,
    /// RocksDB physical bytes per state (same order as `states`).
    pub physical_bytes: Vec<Option<u64>>,
    /// Operator counters summed over subtasks.
    pub counters: Vec<(String, u64)>,
    /// Records this stage received through a hash exchange.
    pub records_shuffled: u64,
    /// The most live state entries over its subtasks at once: sampled when
    /// a watermark reaches the stage (before its windows fire) and at the
    /// end. Exact for window operators, whose state grows only between
    /// watermarks; for others a lower bound (their state may shrink in
    /// between, by retractions or TTL).
    pub peak_state_entries: i64,
}

impl StageReport {
    pub fn records_in(&self) -> u64 {
        self.subtasks.iter().map(|s| s.records_in).sum()
    }
    pub fn records_out(&self) -> u64 {
        self.subtasks.iter().map(|s| s.records_out).sum()
    }
    /// Max over mean of records in per subtask (1.0 = perfectly even).
    pub fn hotspot_factor(&self) -> f64 {
        let n = self.subtasks.len().max(1) as f64;
        let total = self.records_in() as f64;
        if total == 0.0 {
            return 1.0;
        }
        let max = self
            .subtasks
            .iter()
            .map(|s| s.records_in)
            .max()
            .unwrap_or(0) as f64;
        max / (total / n)
    }
    pub fn max_busy(&self) -> Duration {
        self.subtasks
            .iter()
            .map(|s| s.busy)
            .max()
            .unwrap_or_default()
    }
    pub fn state_entries(&self) -> i64 {
        self.states.iter().map(|s| s.metrics.entries).sum()
    }
    pub fn state_bytes(&self) -> i64 {
        self.states.iter().map(|s| s.metrics.logical_bytes).sum()
    }
    pub fn state_reads(&self) -> u64 {
        self.states.iter().map(|s| s.metrics.reads).sum()
    }
    pub fn state_writes(&self) -> u64 {
        self.states
            .iter()
            .map(|s| s.metrics.writes + s.metrics.deletes)
            .sum()
    }
    pub fn counter(&self, name: &str) -> u64 {
        self.counters
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v)
            .sum()
    }
}

/// Ingestion-to-emission latency of the rows the sink received, weighted
/// by rows. A source batch is dated when it enters the plan; an operator's
/// output carries the date of the oldest record it stands for (the oldest
/// held in a mini-batch bundle that closed, else its input batch's), and an
/// exchange gives each downstream partition the oldest date among the
/// partitions that sent it rows. A row's latency is measured when the sink
/// receives it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LatencyStats {
    pub p50: Duration,
    pub p99: Duration,
    pub max: Duration,
}

/// What one sink of a job received.
#[derive(Clone, Debug)]
pub struct SinkReport {
    /// The name the sink was added with (its table).
    pub name: String,
    /// Rows received, by kind.
    pub counts: KindCounts,
    pub latency: LatencyStats,
    /// The sink's materialised rows, sorted; `None` when not materialised.
    pub result: Option<Vec<Row>>,
    /// Retractions the sink received for rows it never had.
    pub negative_rows: Vec<(Row, i64)>,
}

/// What a run measured. Everything but `sinks` is the job's: a job with
/// several sinks (a statement set) reads its input once, so `input_rows`
/// counts each source row once whatever the number of sinks it feeds, and
/// `stages` lists every operator of the job once.
#[derive(Clone, Debug)]
pub struct JobReport {
    pub input_rows: u64,
    pub wall: Duration,
    pub stages: Vec<StageReport>,
    /// Time the job's thread spent waiting for its sources (reading them,
    /// for a source without a reader thread): near zero when the operators
    /// are the bottleneck, most of the wall time when the input is.
    pub source_wait: Duration,
    /// Time the job's thread spent in its sinks (counting, writing,
    /// materialising and dropping rows).
    pub sink_time: Duration,
    /// One per sink, in the order the sinks were added.
    pub sinks: Vec<SinkReport>,
    /// The checkpoints this run took.
    pub checkpoints: CheckpointCounts,
    /// The savepoint this run took: its directory.
    pub savepoint: Option<std::path::PathBuf>,
    /// State the savepoint this run started from held and this job dropped
    /// (`--allow-non-restored-state`), one line per operator, source or sink.
    pub non_restored: Vec<String>,
    /// Times the run was restarted after a failure (`restart-strategy.*`):
    /// this report is the last attempt's.
    pub restarts: u32,
}

/// Checkpoints a run took, their total and last size, and the time spent
/// taking them (closing bundles, copying state, writing the files).
/// Sizes are the bytes each checkpoint wrote (Flink's "checkpointed data
/// size"); `last_full_bytes` is all the last one holds, files shared with
/// earlier checkpoints included (Flink's "full checkpoint data size"):
/// the two differ only for incremental checkpoints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CheckpointCounts {
    pub taken: u64,
    pub bytes: u64,
    pub last_bytes: u64,
    pub last_full_bytes: u64,
    /// Whether the checkpoints were incremental (RocksDB's files).
    pub incremental: bool,
    pub time: Duration,
}

impl JobReport {
    /// Input records per second of wall time.
    pub fn throughput(&self) -> f64 {
        self.input_rows as f64 / self.wall.as_secs_f64().max(1e-9)
    }
    /// Input records per busy second of the hottest subtask of the busiest stage.
    pub fn hottest_throughput(&self) -> f64 {
        let busiest = self
            .stages
            .iter()
            .map(|s| s.max_busy())
            .max()
            .unwrap_or_default();
        self.input_rows as f64 / busiest.as_secs_f64().max(1e-9)
    }
    pub fn records_shuffled(&self) -> u64 {
        self.stages.iter().map(|s| s.records_shuffled).sum()
    }
    pub fn state_entries(&self) -> i64 {
        self.stages.iter().map(|s| s.state_entries()).sum()
    }
    pub fn state_bytes(&self) -> i64 {
        self.stages.iter().map(|s| s.state_bytes()).sum()
    }
    /// Each stage's peak live state entries, summed (stages may peak at
    /// different moments).
    pub fn peak_state_entries(&self) -> i64 {
        self.stages.iter().map(|s| s.peak_state_entries).sum()
    }
    pub fn state_reads(&self) -> u64 {
        self.stages.iter().map(|s| s.state_reads()).sum()
    }
    pub fn state_writes(&self) -> u64 {
        self.stages.iter().map(|s| s.state_writes()).sum()
    }
    /// The busiest task slot's records in over the mean slot's, where slot
    /// `i` runs subtask `i` of every stage at the job's full parallelism (as
    /// Flink's slot sharing places them). 1.0 is perfectly even; `P` means
    /// one slot does all the work.
    pub fn hotspot_factor(&self) -> f64 {
        let p = self.stages.iter().map(|s| s.parallelism).max().unwrap_or(1);
        if p <= 1 {
            return 1.0;
        }
        let mut slots = vec![0u64; p];
        for s in self.stages.iter().filter(|s| s.parallelism == p) {
            for (slot, load) in slots.iter_mut().zip(&s.subtasks) {
                *slot += load.records_in;
            }
        }
        let total: u64 = slots.iter().sum();
        if total == 0 {
            return 1.0;
        }
        let max = *slots.iter().max().unwrap_or(&0) as f64;
        max / (total as f64 / p as f64)
    }
}
