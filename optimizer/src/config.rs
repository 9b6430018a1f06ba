//! The configuration registry: Flink's key names, types and defaults, plus a
//! few `lab.*` keys of the lab itself.
//!
//! [`Config::set`] validates one key and value as `SET 'key' = 'value'` does
//! (unknown keys and malformed values fail with a message that says what was
//! expected); [`Config::validate`] checks the rules that involve several keys
//! and runs at planning time, so that a script may set related keys in any
//! order. Values are stored in canonical form: enums in their canonical
//! spelling, durations in milliseconds (`5000 ms`).
//!
//! Every key, with its type, default and description, is in [`KEYS`]
//! (README's table is made from it by `optimizer/tests/readme_config.rs`):
//! add a key there, with a constant for its name and a typed getter below,
//! and, when its value sizes something allocated before data arrives, its
//! largest value in `MAXIMA` (see [`maximum`]; compiled plans are held to
//! the same).

use crate::error::PlanError;
use operators::state::rocksdb_options::{CompactionStyle, RocksDbOptions};
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

pub const MINI_BATCH_ENABLED: &str = "table.exec.mini-batch.enabled";
pub const MINI_BATCH_ALLOW_LATENCY: &str = "table.exec.mini-batch.allow-latency";
pub const MINI_BATCH_SIZE: &str = "table.exec.mini-batch.size";
pub const AGG_PHASE_STRATEGY: &str = "table.optimizer.agg-phase-strategy";
pub const DISTINCT_AGG_SPLIT_ENABLED: &str = "table.optimizer.distinct-agg.split.enabled";
pub const DISTINCT_AGG_SPLIT_BUCKET_NUM: &str = "table.optimizer.distinct-agg.split.bucket-num";
pub const MULTI_JOIN_ENABLED: &str = "table.optimizer.multi-join.enabled";
pub const DELTA_JOIN_STRATEGY: &str = "table.optimizer.delta-join.strategy";
pub const REUSE_SUB_PLAN_ENABLED: &str = "table.optimizer.reuse-sub-plan-enabled";
pub const REUSE_SOURCE_ENABLED: &str = "table.optimizer.reuse-source-enabled";
pub const DELTA_JOIN_CACHE_ENABLED: &str = "table.exec.delta-join.cache-enabled";
pub const DELTA_JOIN_LEFT_CACHE_SIZE: &str = "table.exec.delta-join.left.cache-size";
pub const DELTA_JOIN_RIGHT_CACHE_SIZE: &str = "table.exec.delta-join.right.cache-size";
pub const STATE_TTL: &str = "table.exec.state.ttl";
pub const EMIT_ALLOW_LATENESS: &str = "table.exec.emit.allow-lateness";
pub const EMIT_EARLY_FIRE_ENABLED: &str = "table.exec.emit.early-fire.enabled";
pub const EMIT_EARLY_FIRE_DELAY: &str = "table.exec.emit.early-fire.delay";
pub const EMIT_LATE_FIRE_ENABLED: &str = "table.exec.emit.late-fire.enabled";
pub const EMIT_LATE_FIRE_DELAY: &str = "table.exec.emit.late-fire.delay";
pub const RANK_TOPN_CACHE_SIZE: &str = "table.exec.rank.topn-cache-size";
pub const ASYNC_STATE_ENABLED: &str = "table.exec.async-state.enabled";
pub const SINK_UPSERT_MATERIALIZE: &str = "table.exec.sink.upsert-materialize";
pub const PARALLELISM_DEFAULT: &str = "parallelism.default";
pub const AUTO_WATERMARK_INTERVAL: &str = "pipeline.auto-watermark-interval";
pub const SOURCE_IDLE_TIMEOUT: &str = "table.exec.source.idle-timeout";
pub const STATE_BACKEND_TYPE: &str = "state.backend.type";
pub const UID_GENERATION: &str = "table.exec.uid.generation";
pub const UID_FORMAT: &str = "table.exec.uid.format";
pub const CHECKPOINTING_INTERVAL: &str = "execution.checkpointing.interval";
pub const CHECKPOINTING_DIR: &str = "execution.checkpointing.dir";
pub const CHECKPOINTING_NUM_RETAINED: &str = "execution.checkpointing.num-retained";
pub const CHECKPOINTING_INCREMENTAL: &str = "execution.checkpointing.incremental";
pub const RESTART_STRATEGY_TYPE: &str = "restart-strategy.type";
pub const RESTART_FIXED_DELAY_ATTEMPTS: &str = "restart-strategy.fixed-delay.attempts";
pub const RESTART_FIXED_DELAY_DELAY: &str = "restart-strategy.fixed-delay.delay";
pub const LAB_FAULT_OPERATOR: &str = "lab.fault.operator";
pub const LAB_FAULT_AFTER_RECORDS: &str = "lab.fault.after-records";
pub const SAVEPOINT_PATH: &str = "execution.savepoint.path";
pub const SAVEPOINT_IGNORE_UNCLAIMED_STATE: &str = "execution.savepoint.ignore-unclaimed-state";
pub const ROCKSDB_BLOCK_CACHE_SIZE: &str = "state.backend.rocksdb.block.cache-size";
pub const ROCKSDB_BLOCK_SIZE: &str = "state.backend.rocksdb.block.blocksize";
pub const ROCKSDB_USE_BLOOM_FILTER: &str = "state.backend.rocksdb.use-bloom-filter";
pub const ROCKSDB_BLOOM_BITS_PER_KEY: &str = "state.backend.rocksdb.bloom-filter.bits-per-key";
pub const ROCKSDB_WRITE_BUFFER_SIZE: &str = "state.backend.rocksdb.writebuffer.size";
pub const ROCKSDB_WRITE_BUFFER_COUNT: &str = "state.backend.rocksdb.writebuffer.count";
pub const ROCKSDB_WRITE_BUFFER_MERGE: &str = "state.backend.rocksdb.writebuffer.number-to-merge";
pub const ROCKSDB_COMPACTION_STYLE: &str = "state.backend.rocksdb.compaction.style";
pub const ROCKSDB_DYNAMIC_LEVEL_SIZE: &str =
    "state.backend.rocksdb.compaction.level.use-dynamic-size";
pub const ROCKSDB_TARGET_FILE_SIZE_BASE: &str =
    "state.backend.rocksdb.compaction.level.target-file-size-base";
pub const ROCKSDB_MAX_SIZE_LEVEL_BASE: &str =
    "state.backend.rocksdb.compaction.level.max-size-level-base";
pub const ROCKSDB_THREAD_NUM: &str = "state.backend.rocksdb.thread.num";
pub const LAB_SOURCE_BATCH_SIZE: &str = "lab.source.batch-size";
pub const LAB_STATE_DIR: &str = "lab.state.dir";
pub const LAB_CLOCK: &str = "lab.clock";
pub const LAB_SOURCE_DELIVERY: &str = "lab.source.delivery";
pub const LAB_DELTA_JOIN_READ_AHEAD: &str = "lab.delta-join.source-read-ahead";
pub const LAB_OPTIMIZER_DISABLED_RULES: &str = "lab.optimizer.disabled-rules";
pub const LAB_WINDOW_SLICING: &str = "lab.window.slicing";

/// The type of a key's value and the values it accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueType {
    /// `true` or `false`, case-insensitive.
    Boolean,
    /// A 32-bit integer (Flink's `Integer`) of at least `min`.
    Integer { min: Option<i64> },
    /// A 64-bit integer (Flink's `Long`) of at least `min`.
    Long { min: Option<i64> },
    /// A duration in Flink's syntax, see [`parse_duration`].
    Duration,
    /// A byte count in Flink's `MemorySize` syntax (`64mb`, `4 kb`, `100`),
    /// see [`parse_memory_size`]; at least 1 byte.
    MemorySize,
    /// A floating-point number (Flink's `Double`), finite and > 0.
    Double,
    /// One of the listed names, case-insensitive; stored as listed.
    Enum(&'static [&'static str]),
    /// Any text.
    String,
}

/// One configuration key, for documentation and `lab` help.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyInfo {
    pub name: &'static str,
    /// `Boolean`, `Integer`, `Long`, `Duration`, `Enum` or `String`, as
    /// Flink's documentation names them.
    pub type_name: &'static str,
    /// The default value in canonical text.
    pub default: &'static str,
    pub description: &'static str,
    pub value_type: ValueType,
}

impl KeyInfo {
    /// The allowed values of an enum key (empty for other types).
    pub fn allowed(&self) -> &'static [&'static str] {
        match self.value_type {
            ValueType::Enum(values) => values,
            _ => &[],
        }
    }
}

const AGG_PHASES: &[&str] = &["AUTO", "ONE_PHASE", "TWO_PHASE"];
const RESTART_STRATEGIES: &[&str] = &["none", "off", "disable", "fixed-delay"];
const DELTA_STRATEGIES: &[&str] = &["AUTO", "FORCE", "NONE"];
const MATERIALIZE: &[&str] = &["NONE", "AUTO", "FORCE"];
const BACKENDS: &[&str] = &["hashmap", "rocksdb"];
const CLOCKS: &[&str] = &["processing", "deterministic"];
const DELIVERIES: &[&str] = &["depth-first", "breadth-first"];
const UID_GENERATIONS: &[&str] = &["PLAN_ONLY", "ALWAYS", "DISABLED"];
const COMPACTION_STYLES: &[&str] = &["LEVEL", "UNIVERSAL", "FIFO"];

const fn key(
    name: &'static str,
    value_type: ValueType,
    default: &'static str,
    description: &'static str,
) -> KeyInfo {
    let type_name = match value_type {
        ValueType::Boolean => "Boolean",
        ValueType::Integer { .. } => "Integer",
        ValueType::Long { .. } => "Long",
        ValueType::Duration => "Duration",
        ValueType::MemorySize => "MemorySize",
        ValueType::Double => "Double",
        ValueType::Enum(_) => "Enum",
        ValueType::String => "String",
    };
    KeyInfo {
        name,
        type_name,
        default,
        description,
        value_type,
    }
}

static KEYS: &[KeyInfo] = &[
    key(
        MINI_BATCH_ENABLED,
        ValueType::Boolean,
        "false",
        "Buffers input records into bundles to cut state accesses; needs \
         allow-latency and size to be set (> 0).",
    ),
    key(
        MINI_BATCH_ALLOW_LATENCY,
        ValueType::Duration,
        "0 ms",
        "The longest a record may wait in a mini-batch bundle; must be > 0 \
         when mini-batch is enabled.",
    ),
    key(
        MINI_BATCH_SIZE,
        ValueType::Long { min: None },
        "-1",
        "The most records a mini-batch bundle holds; must be > 0 when \
         mini-batch is enabled.",
    ),
    key(
        AGG_PHASE_STRATEGY,
        ValueType::Enum(AGG_PHASES),
        "AUTO",
        "Aggregation phases: AUTO (two-phase when mini-batch is on and every \
         function can merge), ONE_PHASE, or TWO_PHASE (local-global).",
    ),
    key(
        DISTINCT_AGG_SPLIT_ENABLED,
        ValueType::Boolean,
        "false",
        "Splits COUNT(DISTINCT ..) into a bucketed inner aggregate and an \
         outer SUM to spread hot groups.",
    ),
    key(
        DISTINCT_AGG_SPLIT_BUCKET_NUM,
        ValueType::Integer { min: Some(1) },
        "1024",
        "The number of buckets of a split distinct aggregate.",
    ),
    key(
        MULTI_JOIN_ENABLED,
        ValueType::Boolean,
        "false",
        "Fuses chains of joins on a common key into one MultiJoin operator \
         that keeps no intermediate state.",
    ),
    key(
        DELTA_JOIN_STRATEGY,
        ValueType::Enum(DELTA_STRATEGIES),
        "AUTO",
        "Delta join: AUTO (when possible), FORCE (fail when impossible), or \
         NONE (never).",
    ),
    key(
        REUSE_SUB_PLAN_ENABLED,
        ValueType::Boolean,
        "true",
        "Runs identical sub-plans of one job (the INSERTs of a statement \
         set, a self-join) once, feeding every consumer.",
    ),
    key(
        REUSE_SOURCE_ENABLED,
        ValueType::Boolean,
        "true",
        "Reads a table scanned several times in one job once (needs \
         table.optimizer.reuse-sub-plan-enabled).",
    ),
    key(
        DELTA_JOIN_CACHE_ENABLED,
        ValueType::Boolean,
        "true",
        "Whether a delta join caches lookups in per-side LRU caches.",
    ),
    key(
        DELTA_JOIN_LEFT_CACHE_SIZE,
        ValueType::Long { min: Some(1) },
        "10000",
        "Entries of the delta join's cache of left-side lookups.",
    ),
    key(
        DELTA_JOIN_RIGHT_CACHE_SIZE,
        ValueType::Long { min: Some(1) },
        "10000",
        "Entries of the delta join's cache of right-side lookups.",
    ),
    key(
        RANK_TOPN_CACHE_SIZE,
        ValueType::Long { min: Some(1) },
        "10000",
        "Rows of a Top-N's heap cache (append-only and updatable \
         strategies): cache size / N partitions are kept, the rest are read \
         from state.",
    ),
    key(
        STATE_TTL,
        ValueType::Duration,
        "0 ms",
        "How long idle state is kept; 0 ms keeps it forever.",
    ),
    key(
        EMIT_ALLOW_LATENESS,
        ValueType::Duration,
        "0 ms",
        "The allowed lateness of the legacy group windows (GROUP BY TUMBLE(ts, \
         ...) or HOP): a window is kept this long after it fired, a record \
         for it meanwhile fires it again (-U/+U), and one after it is late. \
         0 ms: table.exec.state.ttl, as Flink falls back to the idle state \
         retention; SESSION takes none. Window TVFs ignore it, as Flink's do.",
    ),
    key(
        EMIT_EARLY_FIRE_ENABLED,
        ValueType::Boolean,
        "false",
        "Early firings of the legacy group windows. A window TVF aggregate \
         refuses it, as Flink 2.x does; a group window too (early firings \
         run on processing-time timers, which the lab does not run).",
    ),
    key(
        EMIT_EARLY_FIRE_DELAY,
        ValueType::Duration,
        "0 ms",
        "The interval of early firings (0 ms: on every element); read with \
         early-fire enabled only.",
    ),
    key(
        EMIT_LATE_FIRE_ENABLED,
        ValueType::Boolean,
        "false",
        "Late firings of the legacy group windows: with an allowed lateness, \
         a record behind a fired window fires it again (-U/+U). A window TVF \
         aggregate refuses it, as Flink 2.x does.",
    ),
    key(
        EMIT_LATE_FIRE_DELAY,
        ValueType::Duration,
        "0 ms",
        "The interval of late firings (0 ms: on every element); read with \
         late-fire enabled only. A group window refuses more than 0 ms \
         (processing-time timers).",
    ),
    key(
        SINK_UPSERT_MATERIALIZE,
        ValueType::Enum(MATERIALIZE),
        "AUTO",
        "Whether a SinkUpsertMaterializer keys an updating result by the \
         sink's primary key: AUTO (when the query's unique key is not within \
         the primary key), FORCE (whenever the sink has a primary key), or \
         NONE (never; the lab then refuses such a sink).",
    ),
    key(
        PARALLELISM_DEFAULT,
        ValueType::Integer { min: Some(1) },
        "1",
        "The number of subtasks of each stage.",
    ),
    key(
        AUTO_WATERMARK_INTERVAL,
        ValueType::Duration,
        "200 ms",
        "How often a source with a WATERMARK emits its watermark, on the lab's \
         clock (checked after each source batch; 0 ms: after every batch). With \
         lab.clock = deterministic the clock advances 1 ms per input row.",
    ),
    key(
        SOURCE_IDLE_TIMEOUT,
        ValueType::Duration,
        "0 ms",
        "A source with a WATERMARK that reads no rows for longer than this on \
         the lab's clock is idle: its consumers' watermark no longer waits for \
         it, until it reads rows again (0 ms: never idle). Only an unbounded \
         source (filesystem with source.monitor-interval) can fall silent.",
    ),
    key(
        UID_GENERATION,
        ValueType::Enum(UID_GENERATIONS),
        "PLAN_ONLY",
        "When stateful operators get uids from the plan, which checkpoints \
         file their state under: PLAN_ONLY (a job run from a compiled plan), \
         ALWAYS, or DISABLED; without one an operator's uid comes from its \
         place in the job and its description.",
    ),
    key(
        UID_FORMAT,
        ValueType::String,
        "<id>_<transformation>",
        "The pattern of a planned uid: `<id>` (the node's id in the compiled \
         plan), `<type>` (e.g. stream-exec-join), `<version>`, \
         `<transformation>` (e.g. join).",
    ),
    key(
        CHECKPOINTING_INTERVAL,
        ValueType::Duration,
        "0 ms",
        "How often a checkpoint is taken; 0 ms takes none (Flink: unset). The \
         lab's barriers fall between rounds of source batches and count input \
         rows, as its deterministic clock does: an interval of N ms is a \
         checkpoint at the first barrier after every N input rows, whichever \
         clock the run uses.",
    ),
    key(
        CHECKPOINTING_DIR,
        ValueType::String,
        "",
        "Where checkpoints are written (one `chk-<id>` directory each); \
         required when execution.checkpointing.interval is set.",
    ),
    key(
        CHECKPOINTING_NUM_RETAINED,
        ValueType::Integer { min: Some(1) },
        "1",
        "How many completed checkpoints are kept; older ones are deleted.",
    ),
    key(
        CHECKPOINTING_INCREMENTAL,
        ValueType::Boolean,
        "false",
        "On RocksDB, checkpoints keep RocksDB's own files and share the SST \
         files unchanged since the previous checkpoint (in `shared/`), so a \
         checkpoint writes only what changed; the heap backend takes full \
         checkpoints, as Flink's does.",
    ),
    key(
        RESTART_STRATEGY_TYPE,
        ValueType::Enum(RESTART_STRATEGIES),
        "none",
        "What a run does when it fails (an injected fault, an IO or RocksDB \
         error): none (also off, disable) fails the run; fixed-delay restarts \
         it from the latest completed checkpoint (from the start when there \
         is none), up to restart-strategy.fixed-delay.attempts times. Flink \
         leaves it unset, which restarts with exponential-delay when \
         checkpointing is on; the lab restarts only when asked.",
    ),
    key(
        RESTART_FIXED_DELAY_ATTEMPTS,
        ValueType::Integer { min: Some(0) },
        "1",
        "How many times fixed-delay restarts a failed run before it fails.",
    ),
    key(
        RESTART_FIXED_DELAY_DELAY,
        ValueType::Duration,
        "1000 ms",
        "How long fixed-delay waits (wall time) before a restart.",
    ),
    key(
        SAVEPOINT_PATH,
        ValueType::String,
        "",
        "The savepoint a run starts from (`lab run --from-savepoint`): its \
         state is matched to the job's operators by uid and state name.",
    ),
    key(
        SAVEPOINT_IGNORE_UNCLAIMED_STATE,
        ValueType::Boolean,
        "false",
        "Drops, and reports, savepoint state no operator of the job claims \
         (`--allow-non-restored-state`); otherwise such a savepoint is refused.",
    ),
    key(
        STATE_BACKEND_TYPE,
        ValueType::Enum(BACKENDS),
        "hashmap",
        "The state backend: hashmap (heap) or rocksdb.",
    ),
    key(
        ASYNC_STATE_ENABLED,
        ValueType::Boolean,
        "false",
        "Asynchronous state execution: a group aggregate (one record at a time, \
         calls without distinct or MIN/MAX value maps) reads each input batch's \
         keys together (one RocksDB MultiGet) and writes them together, applying \
         the records one at a time in order: the same changelog, fewer state \
         reads. A regular join (one record at a time) loads each batch's join \
         keys for both sides together (one MultiGet, or one sorted prefix pass of \
         a map state) and writes its changes in one WriteBatch, with the same \
         changelog. On the heap backend it changes nothing.",
    ),
    key(
        ROCKSDB_BLOCK_CACHE_SIZE,
        ValueType::MemorySize,
        "8 mb",
        "RocksDB: the LRU cache of data blocks (one for the run's database).",
    ),
    key(
        ROCKSDB_BLOCK_SIZE,
        ValueType::MemorySize,
        "4 kb",
        "RocksDB: user data packed per block of an SST file.",
    ),
    key(
        ROCKSDB_USE_BLOOM_FILTER,
        ValueType::Boolean,
        "false",
        "RocksDB: a full bloom filter in every new SST file.",
    ),
    key(
        ROCKSDB_BLOOM_BITS_PER_KEY,
        ValueType::Double,
        "10.0",
        "RocksDB: bits per key of the bloom filter (when it is used).",
    ),
    key(
        ROCKSDB_WRITE_BUFFER_SIZE,
        ValueType::MemorySize,
        "64 mb",
        "RocksDB: the size of one memtable before it is flushed to an SST file.",
    ),
    key(
        ROCKSDB_WRITE_BUFFER_COUNT,
        ValueType::Integer { min: Some(1) },
        "2",
        "RocksDB: the most memtables kept in memory per column family.",
    ),
    key(
        ROCKSDB_WRITE_BUFFER_MERGE,
        ValueType::Integer { min: Some(1) },
        "1",
        "RocksDB: the fewest memtables merged together before a flush.",
    ),
    key(
        ROCKSDB_COMPACTION_STYLE,
        ValueType::Enum(COMPACTION_STYLES),
        "LEVEL",
        "RocksDB: the compaction style (Flink's NONE is not offered).",
    ),
    key(
        ROCKSDB_DYNAMIC_LEVEL_SIZE,
        ValueType::Boolean,
        "false",
        "RocksDB: pick each level's target size dynamically.",
    ),
    key(
        ROCKSDB_TARGET_FILE_SIZE_BASE,
        ValueType::MemorySize,
        "64 mb",
        "RocksDB: the target size of a level-1 SST file.",
    ),
    key(
        ROCKSDB_MAX_SIZE_LEVEL_BASE,
        ValueType::MemorySize,
        "256 mb",
        "RocksDB: the upper bound of the base level's total size.",
    ),
    key(
        ROCKSDB_THREAD_NUM,
        ValueType::Integer { min: Some(1) },
        "2",
        "RocksDB: background flush and compaction jobs.",
    ),
    key(
        LAB_SOURCE_BATCH_SIZE,
        ValueType::Integer { min: Some(1) },
        "1024",
        "Records per input batch fed to the sources.",
    ),
    key(
        LAB_STATE_DIR,
        ValueType::String,
        "",
        "Where RocksDB puts its per-run directory; empty means the system \
         temp dir.",
    ),
    key(
        LAB_CLOCK,
        ValueType::Enum(CLOCKS),
        "processing",
        "The clock of latency triggers and TTL: processing (wall time) or \
         deterministic (advanced by input, for reproducible tests).",
    ),
    key(
        LAB_SOURCE_DELIVERY,
        ValueType::Enum(DELIVERIES),
        "depth-first",
        "How a round of source batches (one per source) moves through the \
         plan: depth-first, each batch through the whole plan before the \
         next source's is read; breadth-first, all of them one operator per \
         step, so rows that cross fewer operators arrive first, as Flink's \
         sources running ahead of a pipeline. Results are the same; the \
         changelog (and so the work) can differ: see docs/architecture.md.",
    ),
    key(
        LAB_DELTA_JOIN_READ_AHEAD,
        ValueType::Integer { min: Some(0) },
        "1",
        "Batches a delta join's sources write to the index-lookup store ahead \
         of the join (as a Fluss table is written ahead of its readers); 0 \
         means no lookup ever sees a row the join has not processed.",
    ),
    key(
        LAB_OPTIMIZER_DISABLED_RULES,
        ValueType::String,
        "",
        "Optimizer rules to skip, comma-separated (e.g. multi_join, delta_join), \
         to see a plan without them; the rules and their order are in \
         optimizer/src/physical/rules/mod.rs.",
    ),
    key(
        LAB_WINDOW_SLICING,
        ValueType::Boolean,
        "true",
        "The lab's comparison strategy (Flink always slices): false keeps a \
         HOP or CUMULATE window aggregate's state per window, each record \
         added to every window it falls in, instead of per slice; the \
         global half of a two-phase one does the same with the local \
         half's slices. TUMBLE and SESSION are unchanged.",
    ),
    key(
        LAB_FAULT_OPERATOR,
        ValueType::String,
        "",
        "Injects a fault: the operator (its uid, or the start of its EXPLAIN \
         line, e.g. GroupAggregate) that fails once lab.fault.after-records \
         records have reached it; the fault strikes once per run (a \
         restarted run does not meet it again); empty: none.",
    ),
    key(
        LAB_FAULT_AFTER_RECORDS,
        ValueType::Integer { min: Some(1) },
        "1",
        "The number of records reaching lab.fault.operator at which it fails.",
    ),
];

/// Every configuration key with its type, default and description.
pub fn keys() -> &'static [KeyInfo] {
    KEYS
}

/// The key named `name` exactly.
pub fn key_info(name: &str) -> Option<&'static KeyInfo> {
    KEYS.iter().find(|k| k.name == name)
}

/// Mini-batch mode: bundles of at most `size` rows, closed at the latest
/// `allow_latency` after the last close.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MiniBatch {
    pub size: usize,
    pub allow_latency: Duration,
}

/// `table.optimizer.agg-phase-strategy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AggPhaseStrategy {
    Auto,
    OnePhase,
    TwoPhase,
}

/// `table.optimizer.delta-join.strategy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeltaJoinStrategy {
    Auto,
    Force,
    None,
}

/// `table.exec.sink.upsert-materialize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UpsertMaterialize {
    None,
    Auto,
    Force,
}

impl UpsertMaterialize {
    pub fn as_str(self) -> &'static str {
        match self {
            UpsertMaterialize::None => "NONE",
            UpsertMaterialize::Auto => "AUTO",
            UpsertMaterialize::Force => "FORCE",
        }
    }
}

/// `state.backend.type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StateBackendKind {
    HashMap,
    RocksDb,
}

/// `lab.clock`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClockKind {
    /// Wall-clock time.
    Processing,
    /// Time advanced by the input, so runs are reproducible.
    Deterministic,
}

impl AggPhaseStrategy {
    pub fn as_str(self) -> &'static str {
        match self {
            AggPhaseStrategy::Auto => "AUTO",
            AggPhaseStrategy::OnePhase => "ONE_PHASE",
            AggPhaseStrategy::TwoPhase => "TWO_PHASE",
        }
    }
}

impl DeltaJoinStrategy {
    pub fn as_str(self) -> &'static str {
        match self {
            DeltaJoinStrategy::Auto => "AUTO",
            DeltaJoinStrategy::Force => "FORCE",
            DeltaJoinStrategy::None => "NONE",
        }
    }
}

impl StateBackendKind {
    pub fn as_str(self) -> &'static str {
        match self {
            StateBackendKind::HashMap => "hashmap",
            StateBackendKind::RocksDb => "rocksdb",
        }
    }
}

impl ClockKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ClockKind::Processing => "processing",
            ClockKind::Deterministic => "deterministic",
        }
    }
}

macro_rules! display_as_str {
    ($($t:ty),*) => {$(
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    )*};
}
display_as_str!(
    AggPhaseStrategy,
    DeltaJoinStrategy,
    UpsertMaterialize,
    StateBackendKind,
    ClockKind
);

/// A parsed value, in the shape of its key's [`ValueType`].
#[derive(Clone, Debug, PartialEq, Eq)]
enum Setting {
    Bool(bool),
    Int(i64),
    Duration(Duration),
    Bytes(u64),
    /// A finite double, by its bits (so settings compare exactly).
    Double(u64),
    Enum(&'static str),
    Str(String),
}

impl Setting {
    fn canonical(&self) -> String {
        match self {
            Setting::Bool(b) => b.to_string(),
            Setting::Int(i) => i.to_string(),
            Setting::Duration(d) => format_duration(*d),
            Setting::Bytes(b) => operators::state::rocksdb_options::size(*b),
            Setting::Double(bits) => format!("{:?}", f64::from_bits(*bits)),
            Setting::Enum(s) => (*s).to_string(),
            Setting::Str(s) => s.clone(),
        }
    }
}

/// The configuration of one run: every key's effective value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// One value per entry of [`KEYS`], in the same order.
    values: Vec<Setting>,
    /// Which keys were given by [`Config::set`].
    explicit: Vec<bool>,
}

impl Default for Config {
    fn default() -> Config {
        let values = KEYS
            .iter()
            .map(|k| {
                parse_value(k, k.default)
                    .unwrap_or_else(|e| panic!("bad default of {}: {e}", k.name))
            })
            .collect();
        Config {
            values,
            explicit: vec![false; KEYS.len()],
        }
    }
}

impl Config {
    /// All defaults.
    pub fn new() -> Config {
        Config::default()
    }

    /// Sets `key` to `value` (both trimmed), checking the key exists and the
    /// value has the key's type and range. Rules between keys are checked by
    /// [`Config::validate`].
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), PlanError> {
        let key = key.trim();
        let index = KEYS
            .iter()
            .position(|k| k.name == key)
            .ok_or_else(|| unknown_key(key))?;
        let info = &KEYS[index];
        let setting = parse_value(info, value.trim()).map_err(|expected| {
            PlanError::config(format!(
                "invalid value '{value}' for configuration key '{}': {expected}",
                info.name
            ))
        })?;
        self.values[index] = setting;
        self.explicit[index] = true;
        Ok(())
    }

    /// The effective value of `key` in canonical text, `None` for an unknown
    /// key.
    pub fn get(&self, key: &str) -> Option<String> {
        let index = KEYS.iter().position(|k| k.name == key)?;
        Some(self.values[index].canonical())
    }

    /// True when `key` was given by [`Config::set`].
    pub fn is_set(&self, key: &str) -> bool {
        KEYS.iter()
            .position(|k| k.name == key)
            .is_some_and(|i| self.explicit[i])
    }

    /// Checks the rules that involve several keys (run at planning time):
    /// with mini-batch enabled, allow-latency and size must both be > 0.
    /// Every broken rule is reported, separated by `; `.
    pub fn validate(&self) -> Result<(), PlanError> {
        let mut problems = Vec::new();
        if self.mini_batch_enabled() {
            if self.mini_batch_allow_latency().is_zero() {
                problems.push(format!(
                    "'{MINI_BATCH_ALLOW_LATENCY}' must be > 0 when '{MINI_BATCH_ENABLED}' \
                     is true (got '{}'); set it, e.g. to '5 s'",
                    format_duration(self.mini_batch_allow_latency())
                ));
            }
            if self.mini_batch_size() <= 0 {
                problems.push(format!(
                    "'{MINI_BATCH_SIZE}' must be > 0 when '{MINI_BATCH_ENABLED}' is true \
                     (got '{}'); set it, e.g. to '5000'",
                    self.mini_batch_size()
                ));
            }
        }
        if !self.checkpointing_interval().is_zero() && self.checkpointing_dir().is_none() {
            problems.push(format!(
                "'{CHECKPOINTING_INTERVAL}' is set but '{CHECKPOINTING_DIR}' is not; \
                 set it to the directory checkpoints go to"
            ));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(PlanError::config(problems.join("; ")))
        }
    }

    /// Every key with its effective value in canonical text, in the order
    /// of [`keys`].
    pub fn entries(&self) -> Vec<(String, String)> {
        KEYS.iter()
            .zip(&self.values)
            .map(|(k, v)| (k.name.to_string(), v.canonical()))
            .collect()
    }

    /// The keys given by [`Config::set`] with their values in canonical
    /// text, in the order of [`keys`].
    pub fn explicitly_set(&self) -> Vec<(String, String)> {
        KEYS.iter()
            .zip(&self.values)
            .zip(&self.explicit)
            .filter(|(_, set)| **set)
            .map(|((k, v), _)| (k.name.to_string(), v.canonical()))
            .collect()
    }

    fn setting(&self, key: &str) -> &Setting {
        let index = KEYS
            .iter()
            .position(|k| k.name == key)
            .unwrap_or_else(|| panic!("no configuration key {key}"));
        &self.values[index]
    }

    fn bool(&self, key: &str) -> bool {
        match self.setting(key) {
            Setting::Bool(b) => *b,
            other => panic!("{key} is not a boolean: {other:?}"),
        }
    }

    fn int(&self, key: &str) -> i64 {
        match self.setting(key) {
            Setting::Int(i) => *i,
            other => panic!("{key} is not an integer: {other:?}"),
        }
    }

    fn duration(&self, key: &str) -> Duration {
        match self.setting(key) {
            Setting::Duration(d) => *d,
            other => panic!("{key} is not a duration: {other:?}"),
        }
    }

    fn bytes(&self, key: &str) -> u64 {
        match self.setting(key) {
            Setting::Bytes(b) => *b,
            other => panic!("{key} is not a memory size: {other:?}"),
        }
    }

    fn double(&self, key: &str) -> f64 {
        match self.setting(key) {
            Setting::Double(bits) => f64::from_bits(*bits),
            other => panic!("{key} is not a double: {other:?}"),
        }
    }

    /// `table.exec.async-state.enabled`
    pub fn async_state_enabled(&self) -> bool {
        self.bool(ASYNC_STATE_ENABLED)
    }

    /// The `state.backend.rocksdb.*` keys, as the RocksDB backend takes them.
    pub fn rocksdb_options(&self) -> RocksDbOptions {
        RocksDbOptions {
            block_cache_size: self.bytes(ROCKSDB_BLOCK_CACHE_SIZE),
            block_size: self.bytes(ROCKSDB_BLOCK_SIZE),
            use_bloom_filter: self.bool(ROCKSDB_USE_BLOOM_FILTER),
            bloom_bits_per_key: self.double(ROCKSDB_BLOOM_BITS_PER_KEY),
            write_buffer_size: self.bytes(ROCKSDB_WRITE_BUFFER_SIZE),
            write_buffer_count: self.int(ROCKSDB_WRITE_BUFFER_COUNT) as i32,
            write_buffer_number_to_merge: self.int(ROCKSDB_WRITE_BUFFER_MERGE) as i32,
            compaction_style: match self.enumeration(ROCKSDB_COMPACTION_STYLE) {
                "UNIVERSAL" => CompactionStyle::Universal,
                "FIFO" => CompactionStyle::Fifo,
                _ => CompactionStyle::Level,
            },
            dynamic_level_size: self.bool(ROCKSDB_DYNAMIC_LEVEL_SIZE),
            target_file_size_base: self.bytes(ROCKSDB_TARGET_FILE_SIZE_BASE),
            max_size_level_base: self.bytes(ROCKSDB_MAX_SIZE_LEVEL_BASE),
            background_jobs: self.int(ROCKSDB_THREAD_NUM) as i32,
        }
    }

    fn enumeration(&self, key: &str) -> &'static str {
        match self.setting(key) {
            Setting::Enum(s) => s,
            other => panic!("{key} is not an enum: {other:?}"),
        }
    }

    /// `table.exec.mini-batch.enabled`
    pub fn mini_batch_enabled(&self) -> bool {
        self.bool(MINI_BATCH_ENABLED)
    }

    /// `table.exec.mini-batch.allow-latency`
    pub fn mini_batch_allow_latency(&self) -> Duration {
        self.duration(MINI_BATCH_ALLOW_LATENCY)
    }

    /// `table.exec.mini-batch.size` (`-1` when unset).
    pub fn mini_batch_size(&self) -> i64 {
        self.int(MINI_BATCH_SIZE)
    }

    /// The mini-batch settings when `table.exec.mini-batch.enabled`: the
    /// one place the bundle size is read as a size.
    pub fn mini_batch(&self) -> Option<MiniBatch> {
        self.mini_batch_enabled().then(|| MiniBatch {
            // At least 1: `validate` refuses <= 0 when mini-batch is on.
            size: self.mini_batch_size().max(1) as usize,
            allow_latency: self.mini_batch_allow_latency(),
        })
    }

    /// `table.optimizer.agg-phase-strategy`
    pub fn agg_phase_strategy(&self) -> AggPhaseStrategy {
        match self.enumeration(AGG_PHASE_STRATEGY) {
            "ONE_PHASE" => AggPhaseStrategy::OnePhase,
            "TWO_PHASE" => AggPhaseStrategy::TwoPhase,
            _ => AggPhaseStrategy::Auto,
        }
    }

    /// `table.optimizer.distinct-agg.split.enabled`
    pub fn split_distinct_enabled(&self) -> bool {
        self.bool(DISTINCT_AGG_SPLIT_ENABLED)
    }

    /// `table.optimizer.distinct-agg.split.bucket-num` (>= 1).
    pub fn split_bucket_num(&self) -> u32 {
        self.int(DISTINCT_AGG_SPLIT_BUCKET_NUM) as u32
    }

    /// `table.optimizer.multi-join.enabled`
    pub fn multi_join_enabled(&self) -> bool {
        self.bool(MULTI_JOIN_ENABLED)
    }

    /// `table.optimizer.reuse-sub-plan-enabled`
    pub fn reuse_sub_plan_enabled(&self) -> bool {
        self.bool(REUSE_SUB_PLAN_ENABLED)
    }

    /// `table.optimizer.reuse-source-enabled`
    pub fn reuse_source_enabled(&self) -> bool {
        self.bool(REUSE_SOURCE_ENABLED)
    }

    /// `table.optimizer.delta-join.strategy`
    pub fn delta_join_strategy(&self) -> DeltaJoinStrategy {
        match self.enumeration(DELTA_JOIN_STRATEGY) {
            "FORCE" => DeltaJoinStrategy::Force,
            "NONE" => DeltaJoinStrategy::None,
            _ => DeltaJoinStrategy::Auto,
        }
    }

    /// `table.exec.sink.upsert-materialize`
    pub fn sink_upsert_materialize(&self) -> UpsertMaterialize {
        match self.enumeration(SINK_UPSERT_MATERIALIZE) {
            "NONE" => UpsertMaterialize::None,
            "FORCE" => UpsertMaterialize::Force,
            _ => UpsertMaterialize::Auto,
        }
    }

    /// `table.exec.delta-join.cache-enabled`
    pub fn delta_join_cache_enabled(&self) -> bool {
        self.bool(DELTA_JOIN_CACHE_ENABLED)
    }

    /// `table.exec.delta-join.left.cache-size` (>= 1).
    pub fn delta_join_left_cache_size(&self) -> usize {
        self.int(DELTA_JOIN_LEFT_CACHE_SIZE) as usize
    }

    /// `table.exec.delta-join.right.cache-size` (>= 1).
    pub fn delta_join_right_cache_size(&self) -> usize {
        self.int(DELTA_JOIN_RIGHT_CACHE_SIZE) as usize
    }

    /// `table.exec.rank.topn-cache-size` (>= 1).
    pub fn rank_topn_cache_size(&self) -> u64 {
        self.int(RANK_TOPN_CACHE_SIZE) as u64
    }

    /// `table.exec.state.ttl` (zero = state never expires).
    pub fn state_ttl(&self) -> Duration {
        self.duration(STATE_TTL)
    }

    /// `table.exec.emit.allow-lateness`
    pub fn emit_allow_lateness(&self) -> Duration {
        self.duration(EMIT_ALLOW_LATENESS)
    }

    /// `table.exec.emit.early-fire.enabled`
    pub fn emit_early_fire_enabled(&self) -> bool {
        self.bool(EMIT_EARLY_FIRE_ENABLED)
    }

    /// `table.exec.emit.early-fire.delay`
    pub fn emit_early_fire_delay(&self) -> Duration {
        self.duration(EMIT_EARLY_FIRE_DELAY)
    }

    /// `table.exec.emit.late-fire.enabled`
    pub fn emit_late_fire_enabled(&self) -> bool {
        self.bool(EMIT_LATE_FIRE_ENABLED)
    }

    /// `table.exec.emit.late-fire.delay`
    pub fn emit_late_fire_delay(&self) -> Duration {
        self.duration(EMIT_LATE_FIRE_DELAY)
    }

    /// `parallelism.default` (>= 1).
    pub fn parallelism(&self) -> usize {
        self.int(PARALLELISM_DEFAULT) as usize
    }

    /// `state.backend.type`
    pub fn state_backend(&self) -> StateBackendKind {
        match self.enumeration(STATE_BACKEND_TYPE) {
            "rocksdb" => StateBackendKind::RocksDb,
            _ => StateBackendKind::HashMap,
        }
    }

    /// `lab.delta-join.source-read-ahead` (>= 0).
    pub fn delta_join_read_ahead(&self) -> usize {
        self.int(LAB_DELTA_JOIN_READ_AHEAD) as usize
    }

    /// `lab.source.batch-size` (>= 1).
    pub fn source_batch_size(&self) -> usize {
        self.int(LAB_SOURCE_BATCH_SIZE) as usize
    }

    /// `lab.state.dir`; `None` when empty (use the system temp dir).
    pub fn state_dir(&self) -> Option<PathBuf> {
        match self.setting(LAB_STATE_DIR) {
            Setting::Str(s) if !s.is_empty() => Some(PathBuf::from(s)),
            _ => None,
        }
    }

    /// `lab.window.slicing`
    pub fn window_slicing(&self) -> bool {
        self.bool(LAB_WINDOW_SLICING)
    }

    /// `lab.optimizer.disabled-rules`: the names listed.
    pub fn optimizer_disabled_rules(&self) -> Vec<&str> {
        match self.setting(LAB_OPTIMIZER_DISABLED_RULES) {
            Setting::Str(s) => s
                .split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .collect(),
            _ => Vec::new(),
        }
    }

    /// `lab.clock`
    /// `pipeline.auto-watermark-interval`
    pub fn auto_watermark_interval(&self) -> Duration {
        self.duration(AUTO_WATERMARK_INTERVAL)
    }

    /// `table.exec.source.idle-timeout` (zero: sources never go idle).
    pub fn source_idle_timeout(&self) -> Duration {
        self.duration(SOURCE_IDLE_TIMEOUT)
    }

    /// `table.exec.uid.generation`.
    pub fn uid_generation(&self) -> UidGeneration {
        match self.enumeration(UID_GENERATION) {
            "ALWAYS" => UidGeneration::Always,
            "DISABLED" => UidGeneration::Disabled,
            _ => UidGeneration::PlanOnly,
        }
    }

    /// `table.exec.uid.format`.
    pub fn uid_format(&self) -> &str {
        match self.setting(UID_FORMAT) {
            Setting::Str(s) => s,
            other => panic!("{UID_FORMAT} is not text: {other:?}"),
        }
    }

    /// `execution.checkpointing.interval` (zero: no checkpoints).
    pub fn checkpointing_interval(&self) -> Duration {
        self.duration(CHECKPOINTING_INTERVAL)
    }

    /// `execution.checkpointing.dir`, if set.
    pub fn checkpointing_dir(&self) -> Option<PathBuf> {
        match self.setting(CHECKPOINTING_DIR) {
            Setting::Str(s) if !s.is_empty() => Some(PathBuf::from(s)),
            _ => None,
        }
    }

    /// `execution.savepoint.path`, if set.
    pub fn savepoint_path(&self) -> Option<PathBuf> {
        match self.setting(SAVEPOINT_PATH) {
            Setting::Str(s) if !s.is_empty() => Some(PathBuf::from(s)),
            _ => None,
        }
    }

    /// `execution.savepoint.ignore-unclaimed-state`.
    pub fn savepoint_ignore_unclaimed_state(&self) -> bool {
        self.bool(SAVEPOINT_IGNORE_UNCLAIMED_STATE)
    }

    /// `restart-strategy.*`: how many restarts a failed run gets, and the
    /// wait before each (none: no restart).
    pub fn restart_strategy(&self) -> Option<(u32, Duration)> {
        match self.enumeration(RESTART_STRATEGY_TYPE) {
            "fixed-delay" => Some((
                self.int(RESTART_FIXED_DELAY_ATTEMPTS)
                    .clamp(0, u32::MAX as i64) as u32,
                self.duration(RESTART_FIXED_DELAY_DELAY),
            )),
            _ => None,
        }
    }

    /// `lab.fault.*`: the operator to fail and after how many records.
    pub fn fault(&self) -> Option<(String, u64)> {
        match self.setting(LAB_FAULT_OPERATOR) {
            Setting::Str(s) if !s.is_empty() => {
                Some((s.clone(), self.int(LAB_FAULT_AFTER_RECORDS).max(1) as u64))
            }
            _ => None,
        }
    }

    /// `execution.checkpointing.incremental`.
    pub fn checkpointing_incremental(&self) -> bool {
        self.bool(CHECKPOINTING_INCREMENTAL)
    }

    /// `execution.checkpointing.num-retained` (>= 1).
    pub fn checkpointing_num_retained(&self) -> usize {
        self.int(CHECKPOINTING_NUM_RETAINED) as usize
    }

    /// `lab.source.delivery`: whether a round's source batches move through
    /// the plan breadth-first.
    pub fn breadth_first_delivery(&self) -> bool {
        self.enumeration(LAB_SOURCE_DELIVERY) == "breadth-first"
    }

    pub fn clock(&self) -> ClockKind {
        match self.enumeration(LAB_CLOCK) {
            "deterministic" => ClockKind::Deterministic,
            _ => ClockKind::Processing,
        }
    }
}

/// `table.exec.uid.generation`: when planned operators get uids.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UidGeneration {
    /// Only a job run from a compiled plan (whose ids are stable).
    PlanOnly,
    Always,
    Disabled,
}

impl UidGeneration {
    /// Whether a job run from a compiled plan (`compiled`) or not gets uids.
    pub fn applies(self, compiled: bool) -> bool {
        match self {
            UidGeneration::PlanOnly => compiled,
            UidGeneration::Always => true,
            UidGeneration::Disabled => false,
        }
    }
}

/// The error for an unknown key, suggesting the nearest known one.
fn unknown_key(key: &str) -> PlanError {
    let mut message = format!("unknown configuration key '{key}'");
    match suggest(key) {
        Some(s) => message.push_str(&format!("; did you mean '{s}'?")),
        None => {
            let names: Vec<&str> = KEYS.iter().map(|k| k.name).collect();
            message.push_str(&format!("; known keys: {}", names.join(", ")));
        }
    }
    PlanError::config(message)
}

/// The known key nearest to `key`: the only one that `key` is a dotted
/// suffix or prefix of (`mini-batch.enabled`, `state.backend`), else the one at the smallest edit distance
/// (ignoring case) when that distance is small enough to be a typo.
fn suggest(key: &str) -> Option<&'static str> {
    let lower = key.to_ascii_lowercase();
    if lower.is_empty() {
        return None;
    }
    let (suffix, prefix) = (format!(".{lower}"), format!("{lower}."));
    let partial: Vec<&str> = KEYS
        .iter()
        .map(|k| k.name)
        .filter(|n| n.ends_with(&suffix) || n.starts_with(&prefix))
        .collect();
    // Several (`state.backend` starts every RocksDB key): the shortest, if
    // only one is.
    let shortest = partial.iter().map(|n| n.len()).min();
    if let [only] = partial
        .iter()
        .filter(|n| Some(n.len()) == shortest)
        .collect::<Vec<_>>()[..]
    {
        return Some(only);
    }
    // A key this much longer than every known one is no typo of one; and
    // the edit distance costs the product of the lengths.
    let longest = KEYS.iter().map(|k| k.name.len()).max().unwrap_or(0);
    if lower.len() > 2 * longest {
        return None;
    }
    let (best, distance) = KEYS
        .iter()
        .map(|k| (k.name, strsim::levenshtein(&lower, k.name)))
        .min_by_key(|(_, d)| *d)?;
    let limit = (lower.chars().count() / 3).max(3);
    (distance <= limit).then_some(best)
}

/// Parses `text` as a value of `info`'s type; the error says what was
/// expected.
fn parse_value(info: &KeyInfo, text: &str) -> Result<Setting, String> {
    match info.value_type {
        ValueType::Boolean => {
            if text.eq_ignore_ascii_case("true") {
                Ok(Setting::Bool(true))
            } else if text.eq_ignore_ascii_case("false") {
                Ok(Setting::Bool(false))
            } else {
                Err("expected a boolean: true or false".to_string())
            }
        }
        ValueType::Integer { min } => parse_integer(
            text,
            min,
            maximum(info.name),
            i32::MIN as i64,
            i32::MAX as i64,
        ),
        ValueType::Long { min } => parse_integer(text, min, maximum(info.name), i64::MIN, i64::MAX),
        ValueType::Duration => parse_duration(text)
            .map(Setting::Duration)
            .map_err(|e| format!("expected a duration such as '500 ms', '5 s' or '1 min' ({e})")),
        ValueType::MemorySize => {
            let bytes = parse_memory_size(text).map_err(|e| {
                format!("expected a memory size such as '64 mb', '4kb' or '1024' ({e})")
            })?;
            match maximum(info.name) {
                Some((max, why)) if bytes > max as u64 => Err(format!(
                    "expected at most {} ({why})",
                    operators::state::rocksdb_options::size(max as u64)
                )),
                _ => Ok(Setting::Bytes(bytes)),
            }
        }
        ValueType::Double => match text.parse::<f64>() {
            Ok(d) if d.is_finite() && d > 0.0 => Ok(Setting::Double(d.to_bits())),
            _ => Err("expected a number > 0 such as '10.0'".to_string()),
        },
        ValueType::Enum(allowed) => allowed
            .iter()
            .copied()
            .find(|a| a.eq_ignore_ascii_case(text))
            .map(Setting::Enum)
            .ok_or_else(|| format!("expected one of {}", allowed.join(", "))),
        ValueType::String => Ok(Setting::Str(text.to_string())),
    }
}

/// The largest values of keys that size what the lab allocates up front
/// or keeps per unit, with why: a number in a script or a flag must not
/// become a 64 GiB buffer (`lab.source.batch-size` = 2147483647 asked for
/// one). Other integer keys size nothing before data arrives.
const MAXIMA: &[(&str, i64, &str)] = &[
    (
        PARALLELISM_DEFAULT,
        32_768,
        "Flink's upper bound of the maximum parallelism",
    ),
    (
        LAB_SOURCE_BATCH_SIZE,
        1 << 20,
        "a batch's buffer is allocated before it is filled",
    ),
    (
        ROCKSDB_WRITE_BUFFER_SIZE,
        1 << 30,
        "a memtable allocates its arena in blocks of an eighth of it",
    ),
    (
        ROCKSDB_BLOCK_SIZE,
        1 << 26,
        "a block is read into one buffer",
    ),
    (
        ROCKSDB_BLOCK_CACHE_SIZE,
        1 << 34,
        "the cache is held in memory",
    ),
    (
        ROCKSDB_WRITE_BUFFER_COUNT,
        64,
        "each memtable may be held in memory",
    ),
    (
        ROCKSDB_WRITE_BUFFER_MERGE,
        64,
        "each memtable may be held in memory",
    ),
    (ROCKSDB_THREAD_NUM, 256, "each job may start a thread"),
];

/// The largest value of `key` and why, if it has one.
pub fn maximum(key: &str) -> Option<(i64, &'static str)> {
    MAXIMA
        .iter()
        .find(|(k, _, _)| *k == key)
        .map(|(_, max, why)| (*max, *why))
}

fn parse_integer(
    text: &str,
    min: Option<i64>,
    max: Option<(i64, &str)>,
    lo: i64,
    hi: i64,
) -> Result<Setting, String> {
    let what = if hi == i32::MAX as i64 {
        "a 32-bit integer"
    } else {
        "a 64-bit integer"
    };
    let expected = match (min, max) {
        (Some(m), Some((x, why))) => format!("expected {what} from {m} to {x} ({why})"),
        (None, Some((x, why))) => format!("expected {what} <= {x} ({why})"),
        (Some(m), None) => format!("expected {what} >= {m}"),
        (None, None) => format!("expected {what}"),
    };
    let n: i64 = text.parse().map_err(|_| expected.clone())?;
    if n < lo || n > hi || min.is_some_and(|m| n < m) || max.is_some_and(|(x, _)| n > x) {
        return Err(expected);
    }
    Ok(Setting::Int(n))
}

/// The duration units Flink's `TimeUtils` accepts, milliseconds and up,
/// with their length in milliseconds.
const UNITS: &[(&[&str], u64)] = &[
    (&["ms", "milli", "millis", "millisecond", "milliseconds"], 1),
    (&["s", "sec", "secs", "second", "seconds"], 1_000),
    (&["min", "m", "minute", "minutes"], 60_000),
    (&["h", "hour", "hours"], 3_600_000),
    (&["d", "day", "days"], 86_400_000),
];

/// Parses a duration as Flink's `TimeUtils.parseDuration` does:
/// `<number>` (milliseconds), `<number> <unit>` or `<number><unit>`, with
/// the units `ms`/`milli(s)`/`millisecond(s)`, `s`/`sec(s)`/`second(s)`,
/// `min`/`m`/`minute(s)`, `h`/`hour(s)`, `d`/`day(s)`, case-insensitive.
/// The number is a non-negative integer. Sub-millisecond units (`us`,
/// `ns`), which Flink also accepts, are rejected: the lab works in
/// milliseconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let text = s.trim();
    if text.is_empty() {
        return Err("the duration is empty".to_string());
    }
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(digits_end);
    if digits.is_empty() {
        return Err(format!("'{text}' does not start with a number"));
    }
    let number: u64 = digits
        .parse()
        .map_err(|_| format!("the number '{digits}' is too large"))?;
    let unit = unit.trim().to_ascii_lowercase();
    let millis_per_unit = if unit.is_empty() {
        1
    } else {
        UNITS
            .iter()
            .find(|(names, _)| names.contains(&unit.as_str()))
            .map(|(_, ms)| *ms)
            .ok_or_else(|| {
                format!(
                    "unknown time unit '{unit}'; use one of ms, s, min, h, d \
                     (or milli(s), millisecond(s), sec(s), second(s), m, \
                     minute(s), hour(s), day(s))"
                )
            })?
    };
    let millis = number
        .checked_mul(millis_per_unit)
        .ok_or_else(|| format!("'{text}' is too large"))?;
    Ok(Duration::from_millis(millis))
}

/// A byte count in Flink's `MemorySize` syntax: a whole number, then
/// optionally a unit (`b`/`bytes`, `k`/`kb`/`kibibytes`, `m`/`mb`/`mebibytes`,
/// `g`/`gb`/`gibibytes`, `t`/`tb`/`tebibytes`, case-insensitive; 1 kb = 1024
/// bytes); at least 1 byte.
pub fn parse_memory_size(s: &str) -> Result<u64, String> {
    const UNITS: &[(&[&str], u64)] = &[
        (&["b", "bytes"], 1),
        (&["k", "kb", "kibibytes"], 1 << 10),
        (&["m", "mb", "mebibytes"], 1 << 20),
        (&["g", "gb", "gibibytes"], 1 << 30),
        (&["t", "tb", "tebibytes"], 1 << 40),
    ];
    let text = s.trim();
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(digits_end);
    if digits.is_empty() {
        return Err(format!("'{text}' does not start with a number"));
    }
    let number: u64 = digits
        .parse()
        .map_err(|_| format!("the number '{digits}' is too large"))?;
    let unit = unit.trim().to_ascii_lowercase();
    let per_unit = if unit.is_empty() {
        1
    } else {
        UNITS
            .iter()
            .find(|(names, _)| names.contains(&unit.as_str()))
            .map(|(_, n)| *n)
            .ok_or_else(|| format!("unknown unit '{unit}'; use one of b, kb, mb, gb, tb"))?
    };
    let bytes = number
        .checked_mul(per_unit)
        .ok_or_else(|| format!("'{text}' is too large"))?;
    if bytes == 0 {
        return Err("the size must be at least 1 byte".to_string());
    }
    Ok(bytes)
}

/// The canonical text of a duration: whole milliseconds, `"5000 ms"`.
pub fn format_duration(d: Duration) -> String {
    format!("{} ms", d.as_millis())
}
