//! The physical plan of one INSERT: its tree of nodes (see [`super::node`]),
//! the sink it writes, and the settings the whole job runs with.
//!
//! Every setting a plan runs with is resolved once, when it is planned:
//! what belongs to one operator is a field of its node (bundle size,
//! TTLs, caches, read-ahead, parallelism), what belongs to the job is in
//! [`JobSettings`]. The job builder reads no configuration, so a compiled
//! plan runs as it was planned.

use crate::config::{self, ClockKind, Config, LAB_SOURCE_BATCH_SIZE};
use crate::logical::TableDef;
use operators::changelog::SinkEncoding;
use std::time::Duration;

pub use super::node::{NodeKind, PhysicalNode};

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct SinkPlan {
    pub table: TableDef,
    pub encoding: SinkEncoding,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct PhysicalPlan {
    pub root: PhysicalNode,
    pub sink: SinkPlan,
    pub settings: JobSettings,
}

/// A query without a sink (`EXPLAIN SELECT`) as planned.
#[derive(Clone, Debug)]
pub struct QueryPlan {
    pub root: PhysicalNode,
    pub settings: JobSettings,
}

/// What the whole job runs with (each operator's own settings are fields
/// of its node).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct JobSettings {
    /// Records per source batch (`lab.source.batch-size`).
    pub source_batch_size: usize,
    /// With mini-batch on, the longest a record waits in a bundle
    /// (`table.exec.mini-batch.allow-latency`); `None` with mini-batch off.
    pub mini_batch_latency: Option<Duration>,
    /// The clock of latency triggers and TTL (`lab.clock`).
    pub clock: ClockKind,
    /// Whether identical sub-plans of one job run once
    /// (`table.optimizer.reuse-sub-plan-enabled`).
    pub reuse_sub_plan: bool,
    /// Whether a table scanned several times is read once
    /// (`table.optimizer.reuse-source-enabled`, which needs sub-plan reuse).
    pub reuse_source: bool,
    /// How often a source emits its watermark
    /// (`pipeline.auto-watermark-interval`).
    #[serde(default = "default_watermark_interval")]
    pub watermark_interval: Duration,
    /// How long a source with a watermark reads nothing before it is idle
    /// (`table.exec.source.idle-timeout`; zero: never).
    #[serde(default)]
    pub source_idle_timeout: Duration,
    /// Whether a round's source batches move through the plan
    /// breadth-first (`lab.source.delivery`).
    #[serde(default)]
    pub breadth_first_delivery: bool,
}

fn default_watermark_interval() -> Duration {
    Duration::from_millis(200)
}

impl JobSettings {
    /// The most records a source batch may hold (the executor allocates a
    /// batch up front): `lab.source.batch-size`'s maximum.
    pub fn max_source_batch_size() -> usize {
        config::maximum(LAB_SOURCE_BATCH_SIZE).map_or(usize::MAX, |(m, _)| m as usize)
    }

    /// The settings `config` asks for.
    pub fn resolve(config: &Config) -> JobSettings {
        JobSettings {
            source_batch_size: config.source_batch_size(),
            mini_batch_latency: config.mini_batch().map(|m| m.allow_latency),
            clock: config.clock(),
            reuse_sub_plan: config.reuse_sub_plan_enabled(),
            reuse_source: config.reuse_source_enabled(),
            watermark_interval: config.auto_watermark_interval(),
            source_idle_timeout: config.source_idle_timeout(),
            breadth_first_delivery: config.breadth_first_delivery(),
        }
    }

    /// When mini-batch bundles close besides their size trigger: after the
    /// allow-latency, on the processing clock only (a deterministic run
    /// closes them by size and at the end of input).
    pub fn bundle_latency(&self) -> Option<Duration> {
        self.mini_batch_latency
            .filter(|_| self.clock == ClockKind::Processing)
    }
}
