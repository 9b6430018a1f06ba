//! The metrics of a campaign: one definition, used by `results.csv`, the
//! charts, `index.md` and `lab tune`. What each measures is documented in
//! `docs/campaigns.md` ("Metrics"); keep it in step with [`METRICS`].
//!
//! Every metric is measured per `INSERT` (one row of `results.csv` per
//! point, variant, repeat and sink). An empty cell means "does not apply".
//! A metric is read from a run on the lab ([`Sample`]), on Flink
//! ([`FlinkOutcome`]), or both where the meaning is the same; what only
//! Flink measures is named `flink_...`.

use crate::flink::run::FlinkOutcome;
use crate::numbers::{self, Unit};
use operators::changelog::RowKind;
use operators::exec::{JobReport, SinkReport};

/// What one run of a script measured for one of its sinks.
pub struct Sample<'a> {
    /// The job's report (shared by the sinks of a statement set).
    pub report: &'a JobReport,
    /// What this sink received.
    pub sink: &'a SinkReport,
    /// `VmHWM` after the run, in KiB.
    pub peak_rss_kb: Option<u64>,
}

/// One metric: its column name, unit and how it is read from a run.
pub struct Metric {
    /// The column name in `results.csv` and the name charts use.
    pub name: &'static str,
    /// What axis labels and tables call it.
    pub label: &'static str,
    pub unit: &'static str,
    extract: fn(&Sample) -> Option<f64>,
    flink: fn(&FlinkOutcome) -> Option<f64>,
}

impl Metric {
    /// The metric's value for one sample (`None` when it does not apply).
    pub fn value(&self, sample: &Sample) -> Option<f64> {
        (self.extract)(sample)
    }

    /// The metric's value for one INSERT run on Flink (`None` when Flink
    /// does not measure it).
    pub fn flink_value(&self, o: &FlinkOutcome) -> Option<f64> {
        (self.flink)(o)
    }

    /// How values are written ([`crate::numbers`]).
    pub fn kind(&self) -> Unit {
        match self.unit {
            "rows/s" => Unit::Rate,
            "ms" => Unit::Millis,
            "bytes" => Unit::Bytes,
            "KiB" => Unit::KiB,
            "max/mean" => Unit::Factor,
            _ => Unit::Count,
        }
    }

    /// A timing, which varies from run to run (counters do not); flagged
    /// when the run was too short to time.
    pub fn timed(&self) -> bool {
        matches!(self.unit, "rows/s" | "ms")
    }

    /// The heading of axes and table rows: `label (unit)`, or the label
    /// alone when every value carries its unit (`12 ms`, `21 MB`).
    pub fn axis_label(&self) -> String {
        if self.kind().self_describing() {
            self.label.to_string()
        } else {
            format!("{} ({})", self.label, self.unit)
        }
    }

    /// A value of this metric, as every output writes it.
    pub fn format(&self, v: f64) -> String {
        numbers::format(v, self.kind())
    }
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn kind(s: &Sample, k: RowKind) -> Option<f64> {
    Some(s.sink.counts.get(k) as f64)
}

fn flink_kind(o: &FlinkOutcome, k: RowKind) -> Option<f64> {
    Some(o.captured.counts.get(k) as f64)
}

fn not_on_flink(_: &FlinkOutcome) -> Option<f64> {
    None
}

fn not_on_the_lab(_: &Sample) -> Option<f64> {
    None
}

/// A metric the lab measures.
const fn m(
    name: &'static str,
    label: &'static str,
    unit: &'static str,
    extract: fn(&Sample) -> Option<f64>,
) -> Metric {
    Metric {
        name,
        label,
        unit,
        extract,
        flink: not_on_flink,
    }
}

/// A metric both engines measure, with the same meaning.
const fn both(
    name: &'static str,
    label: &'static str,
    unit: &'static str,
    extract: fn(&Sample) -> Option<f64>,
    flink: fn(&FlinkOutcome) -> Option<f64>,
) -> Metric {
    Metric {
        name,
        label,
        unit,
        extract,
        flink,
    }
}

/// A metric only Flink measures (named `flink_...`).
const fn f(
    name: &'static str,
    label: &'static str,
    unit: &'static str,
    flink: fn(&FlinkOutcome) -> Option<f64>,
) -> Metric {
    Metric {
        name,
        label,
        unit,
        extract: not_on_the_lab,
        flink,
    }
}

/// Every metric, in the order of the columns of `results.csv`.
pub static METRICS: &[Metric] = &[
    both(
        "throughput_rows_per_s",
        "throughput",
        "rows/s",
        |s| Some(s.report.throughput()),
        |o| Some(o.job.throughput()),
    ),
    // Nexmark's figure: the job's throughput over the cores it was given,
    // one per parallel subtask of its widest stage.
    both(
        "throughput_per_core_rows_per_s",
        "throughput per core",
        "rows/s",
        |s| {
            let p = s.report.stages.iter().map(|st| st.parallelism).max();
            Some(s.report.throughput() / p.unwrap_or(1).max(1) as f64)
        },
        |o| Some(o.job.throughput() / o.job.parallelism().max(1) as f64),
    ),
    m(
        "hottest_subtask_rows_per_s",
        "hottest-subtask throughput",
        "rows/s",
        |s| Some(s.report.hottest_throughput()),
    ),
    both(
        "wall_ms",
        "wall time",
        "ms",
        |s| Some(ms(s.report.wall)),
        |o| Some(ms(o.job.wall)),
    ),
    m("source_wait_ms", "source wait", "ms", |s| {
        Some(ms(s.report.source_wait))
    }),
    m("sink_ms", "time in sink", "ms", |s| {
        Some(ms(s.report.sink_time))
    }),
    m("state_entries", "state entries", "entries", |s| {
        Some(s.report.state_entries() as f64)
    }),
    m("peak_state_entries", "peak state entries", "entries", |s| {
        Some(s.report.peak_state_entries() as f64)
    }),
    m("state_bytes", "state size", "bytes", |s| {
        Some(s.report.state_bytes() as f64)
    }),
    m(
        "state_physical_bytes",
        "RocksDB physical state size",
        "bytes",
        |s| {
            let mut any = false;
            let mut total = 0u64;
            for p in s
                .report
                .stages
                .iter()
                .flat_map(|st| &st.physical_bytes)
                .flatten()
            {
                any = true;
                total += p;
            }
            any.then_some(total as f64)
        },
    ),
    m("state_reads", "state reads", "accesses", |s| {
        Some(s.report.state_reads() as f64)
    }),
    m("state_writes", "state writes", "accesses", |s| {
        Some(s.report.state_writes() as f64)
    }),
    m("state_accesses", "state accesses", "accesses", |s| {
        Some((s.report.state_reads() + s.report.state_writes()) as f64)
    }),
    m("records_shuffled", "records shuffled", "records", |s| {
        Some(s.report.records_shuffled() as f64)
    }),
    m("hotspot_factor", "hotspot factor", "max/mean", |s| {
        Some(s.report.hotspot_factor())
    }),
    m("latency_p50_ms", "p50 latency", "ms", |s| {
        Some(ms(s.sink.latency.p50))
    }),
    m("latency_p99_ms", "p99 latency", "ms", |s| {
        Some(ms(s.sink.latency.p99))
    }),
    both(
        "changelog_rows",
        "changelog rows",
        "rows",
        |s| Some(s.sink.counts.total() as f64),
        |o| Some(o.captured.counts.total() as f64),
    ),
    both(
        "changelog_insert",
        "+I rows",
        "rows",
        |s| kind(s, RowKind::Insert),
        |o| flink_kind(o, RowKind::Insert),
    ),
    both(
        "changelog_update_before",
        "-U rows",
        "rows",
        |s| kind(s, RowKind::UpdateBefore),
        |o| flink_kind(o, RowKind::UpdateBefore),
    ),
    both(
        "changelog_update_after",
        "+U rows",
        "rows",
        |s| kind(s, RowKind::UpdateAfter),
        |o| flink_kind(o, RowKind::UpdateAfter),
    ),
    both(
        "changelog_delete",
        "-D rows",
        "rows",
        |s| kind(s, RowKind::Delete),
        |o| flink_kind(o, RowKind::Delete),
    ),
    both(
        "input_rows",
        "input rows",
        "rows",
        |s| Some(s.report.input_rows as f64),
        |o| Some(o.job.input_rows as f64),
    ),
    // What the sink received per row read: the changelog a strategy
    // sends downstream (a Top-N over an input that can fall retracts more).
    m(
        "changelog_rows_per_input_row",
        "changelog rows per input row",
        "rows/row",
        |s| {
            (s.report.input_rows > 0)
                .then(|| s.sink.counts.total() as f64 / s.report.input_rows as f64)
        },
    ),
    // The Top-N caches' hits over their lookups (`cache_hits` and
    // `cache_requests` of the append-only, updatable and fast Top-1
    // operators); empty for a job without such a cache.
    m(
        "topn_cache_hit_rate",
        "Top-N cache hit rate",
        "hits/lookup",
        |s| {
            let (mut hits, mut requests) = (0u64, 0u64);
            for st in &s.report.stages {
                hits += st.counter("cache_hits");
                requests += st.counter("cache_requests");
            }
            (requests > 0).then(|| hits as f64 / requests as f64)
        },
    ),
    // The lookup joins' cache hits over their lookups (`lookup_cache_hits`
    // and `lookups` of the lookup join operator); 0 without a cache, empty
    // for a job without a lookup join.
    m(
        "lookup_cache_hit_rate",
        "lookup cache hit rate",
        "hits/lookup",
        |s| {
            // (A delta join counts `lookups` too: only lookup joins' stages.)
            let (mut hits, mut lookups) = (0u64, 0u64);
            for st in &s.report.stages {
                if st.counters.iter().any(|(n, _)| n == "lookup_store_lookups") {
                    hits += st.counter("lookup_cache_hits");
                    lookups += st.counter("lookups");
                }
            }
            (lookups > 0).then(|| hits as f64 / lookups as f64)
        },
    ),
    // Lookups that went to the lookup table (the cache's misses, or every
    // lookup without a cache): the load on the external system.
    m(
        "lookup_store_lookups",
        "lookups sent to the table",
        "lookups",
        |s| {
            let mut joins = false;
            let mut total = 0u64;
            for st in &s.report.stages {
                if st.counters.iter().any(|(n, _)| n == "lookup_store_lookups") {
                    joins = true;
                    total += st.counter("lookup_store_lookups");
                }
            }
            joins.then_some(total as f64)
        },
    ),
    // Records the window operators dropped as late (their
    // `numLateRecordsDropped`, Flink's metric of the same name); empty for
    // a job without a window operator.
    m(
        "late_records_dropped",
        "late records dropped",
        "records",
        |s| {
            s.report
                .stages
                .iter()
                .any(|st| {
                    st.counters
                        .iter()
                        .any(|(n, _)| n == "numLateRecordsDropped")
                })
                .then(|| {
                    s.report
                        .stages
                        .iter()
                        .map(|st| st.counter("numLateRecordsDropped"))
                        .sum::<u64>() as f64
                })
        },
    ),
    // Checkpoints (`execution.checkpointing.*`): what each wrote, on
    // average, what the last one holds with the files it shares with
    // earlier ones, and the time each took; empty for a run that took none.
    m(
        "checkpoint_bytes",
        "bytes written per checkpoint",
        "bytes",
        |s| {
            let k = &s.report.checkpoints;
            (k.taken > 0).then(|| k.bytes as f64 / k.taken as f64)
        },
    ),
    m(
        "checkpoint_full_bytes",
        "last checkpoint, shared files included",
        "bytes",
        |s| {
            let k = &s.report.checkpoints;
            (k.taken > 0).then_some(k.last_full_bytes as f64)
        },
    ),
    m("checkpoint_ms", "time per checkpoint", "ms", |s| {
        let k = &s.report.checkpoints;
        (k.taken > 0).then(|| k.time.as_secs_f64() * 1e3 / k.taken as f64)
    }),
    m("peak_rss_kb", "peak RSS", "KiB", |s| {
        s.peak_rss_kb.map(|k| k as f64)
    }),
    f(
        "flink_checkpointed_state_bytes",
        "Flink checkpointed state",
        "bytes",
        |o| o.job.checkpointed_bytes().map(|b| b as f64),
    ),
    f("flink_job_ms", "Flink job duration", "ms", |o| {
        Some(ms(o.job.duration))
    }),
    f("flink_busy_ms", "Flink busy time", "ms", |o| {
        Some(o.job.busy_ms())
    }),
    f(
        "flink_backpressured_ms",
        "Flink backpressured time",
        "ms",
        |o| Some(o.job.backpressured_ms()),
    ),
    f(
        "flink_taskmanagers",
        "Flink TaskManagers used",
        "TaskManagers",
        |o| Some(o.job.taskmanagers().len() as f64),
    ),
];

/// The metric named `name`.
pub fn metric(name: &str) -> Option<&'static Metric> {
    METRICS.iter().find(|m| m.name == name)
}

/// Every metric name, comma-separated (for error messages).
pub fn metric_names() -> String {
    METRICS
        .iter()
        .map(|m| m.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A value as written to `results.csv`: whole numbers without a fraction,
/// others with at most six decimals (nanoseconds, for milliseconds); empty
/// for `None`.
pub fn csv_value(v: Option<f64>) -> String {
    match v {
        None => String::new(),
        Some(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{}", x as i64),
        Some(x) if x.is_finite() => {
            let mut s = format!("{x:.6}");
            while s.ends_with('0') {
                s.pop();
            }
            if s.ends_with('.') {
                s.pop();
            }
            s
        }
        Some(x) => format!("{x}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        for (i, a) in METRICS.iter().enumerate() {
            assert!(METRICS[i + 1..].iter().all(|b| b.name != a.name));
            assert!(metric(a.name).is_some());
        }
        assert!(metric("thruput").is_none());
    }

    #[test]
    fn csv_values_and_headings() {
        assert_eq!(csv_value(Some(12.0)), "12");
        assert_eq!(csv_value(Some(0.25)), "0.25");
        assert_eq!(csv_value(Some(145.07731600000002)), "145.077316");
        assert_eq!(csv_value(None), "");
        let wall = metric("wall_ms").unwrap();
        assert!(wall.timed());
        assert_eq!(wall.axis_label(), "wall time");
        assert_eq!(wall.format(1297.381), "1.3 s");
        let tp = metric("throughput_rows_per_s").unwrap();
        assert_eq!(tp.axis_label(), "throughput (rows/s)");
        assert_eq!(tp.format(15_300_000.0), "15.3M");
        assert!(!metric("state_accesses").unwrap().timed());
        assert_eq!(metric("state_bytes").unwrap().format(21_013_318.0), "21 MB");
    }
}
