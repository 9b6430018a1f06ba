//! The metrics of a campaign: one definition, used by `results.csv`, the
//! charts, `index.md` and `lab tune` (DESIGN.md §8).
//!
//! Every metric is measured per `INSERT` (one row of `results.csv` per
//! point, variant, repeat and sink). An empty cell means "does not apply".
//!
//! | name | unit | definition |
//! |---|---|---|
//! | `throughput_rows_per_s` | rows/s | input rows per second of wall time (`JobReport::throughput`) |
//! | `hottest_subtask_rows_per_s` | rows/s | input rows per busy second of the hottest subtask of the busiest stage (`JobReport::hottest_throughput`); independent of the machine's core count |
//! | `wall_ms` | ms | wall time of the job, from the first source read to the end of input |
//! | `source_wait_ms` | ms | of the wall time, how long the job's thread waited for its sources (`JobReport::source_wait`): near 0 when the operators are the bottleneck, most of `wall_ms` when reading the input is |
//! | `sink_ms` | ms | of the wall time, how long the job's thread spent in the sink (`JobReport::sink_time`) |
//! | `state_entries` | entries | live state entries at the end, summed over operators and states |
//! | `state_bytes` | bytes | live logical state bytes at the end (encoded key + value sizes, the same rule on both backends) |
//! | `state_physical_bytes` | bytes | RocksDB's own size estimate of its column families at the end; empty on the heap backend |
//! | `state_reads` | accesses | state reads (a map scan counts each entry it visits) |
//! | `state_writes` | accesses | state writes plus deletes |
//! | `state_accesses` | accesses | `state_reads + state_writes` |
//! | `records_shuffled` | records | records sent through hash exchanges, over all stages |
//! | `hotspot_factor` | × | the busiest task slot's records in over the mean slot's (slot `i` runs subtask `i` of every stage at full parallelism; 1 = perfectly even) |
//! | `latency_p50_ms` | ms | median ingestion-to-emission latency of the rows the sink received |
//! | `latency_p99_ms` | ms | 99th percentile of the same |
//! | `changelog_rows` | rows | rows the sink received, all kinds |
//! | `changelog_insert` | rows | `+I` rows the sink received |
//! | `changelog_update_before` | rows | `-U` rows the sink received |
//! | `changelog_update_after` | rows | `+U` rows the sink received |
//! | `changelog_delete` | rows | `-D` rows the sink received |
//! | `input_rows` | rows | rows read from the sources |
//! | `peak_rss_kb` | KiB | the process's peak resident set size (`VmHWM` of `/proc/self/status`) read after the run; the high-water mark is reset (`/proc/self/clear_refs`) before each run where the kernel allows, so it is the process peak during that run, which includes memory the process already held; otherwise the peak since the process started. The same for every sink of one run; empty where `/proc` is unavailable |

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
    /// Whole numbers (counts); others are real numbers.
    pub integer: bool,
    extract: fn(&Sample) -> Option<f64>,
}

impl Metric {
    /// The metric's value for one sample (`None` when it does not apply).
    pub fn value(&self, sample: &Sample) -> Option<f64> {
        (self.extract)(sample)
    }

    /// `label (unit)`, for axes and tables.
    pub fn axis_label(&self) -> String {
        format!("{} ({})", self.label, self.unit)
    }
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn kind(s: &Sample, k: RowKind) -> Option<f64> {
    Some(s.sink.counts.get(k) as f64)
}

const fn m(
    name: &'static str,
    label: &'static str,
    unit: &'static str,
    integer: bool,
    extract: fn(&Sample) -> Option<f64>,
) -> Metric {
    Metric {
        name,
        label,
        unit,
        integer,
        extract,
    }
}

/// Every metric, in the order of the columns of `results.csv`.
pub static METRICS: &[Metric] = &[
    m(
        "throughput_rows_per_s",
        "throughput",
        "rows/s",
        false,
        |s| Some(s.report.throughput()),
    ),
    m(
        "hottest_subtask_rows_per_s",
        "hottest-subtask throughput",
        "rows/s",
        false,
        |s| Some(s.report.hottest_throughput()),
    ),
    m("wall_ms", "wall time", "ms", false, |s| {
        Some(ms(s.report.wall))
    }),
    m("source_wait_ms", "source wait", "ms", false, |s| {
        Some(ms(s.report.source_wait))
    }),
    m("sink_ms", "time in sink", "ms", false, |s| {
        Some(ms(s.report.sink_time))
    }),
    m("state_entries", "state entries", "entries", true, |s| {
        Some(s.report.state_entries() as f64)
    }),
    m("state_bytes", "state size", "bytes", true, |s| {
        Some(s.report.state_bytes() as f64)
    }),
    m(
        "state_physical_bytes",
        "RocksDB physical state size",
        "bytes",
        true,
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
    m("state_reads", "state reads", "accesses", true, |s| {
        Some(s.report.state_reads() as f64)
    }),
    m("state_writes", "state writes", "accesses", true, |s| {
        Some(s.report.state_writes() as f64)
    }),
    m("state_accesses", "state accesses", "accesses", true, |s| {
        Some((s.report.state_reads() + s.report.state_writes()) as f64)
    }),
    m(
        "records_shuffled",
        "records shuffled",
        "records",
        true,
        |s| Some(s.report.records_shuffled() as f64),
    ),
    m("hotspot_factor", "hotspot factor", "max/mean", false, |s| {
        Some(s.report.hotspot_factor())
    }),
    m("latency_p50_ms", "p50 latency", "ms", false, |s| {
        Some(ms(s.sink.latency.p50))
    }),
    m("latency_p99_ms", "p99 latency", "ms", false, |s| {
        Some(ms(s.sink.latency.p99))
    }),
    m("changelog_rows", "changelog rows", "rows", true, |s| {
        Some(s.sink.counts.total() as f64)
    }),
    m("changelog_insert", "+I rows", "rows", true, |s| {
        kind(s, RowKind::Insert)
    }),
    m("changelog_update_before", "-U rows", "rows", true, |s| {
        kind(s, RowKind::UpdateBefore)
    }),
    m("changelog_update_after", "+U rows", "rows", true, |s| {
        kind(s, RowKind::UpdateAfter)
    }),
    m("changelog_delete", "-D rows", "rows", true, |s| {
        kind(s, RowKind::Delete)
    }),
    m("input_rows", "input rows", "rows", true, |s| {
        Some(s.report.input_rows as f64)
    }),
    m("peak_rss_kb", "peak RSS", "KiB", true, |s| {
        s.peak_rss_kb.map(|k| k as f64)
    }),
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

/// A value for tables: whole numbers as integers, others with three
/// significant digits (at least), SI suffixes from a million up.
pub fn display_value(v: f64, integer: bool) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let a = v.abs();
    if integer && v.fract() == 0.0 && a < 1e7 {
        return format!("{}", v as i64);
    }
    if a >= 1e9 {
        format!("{:.2} G", v / 1e9)
    } else if a >= 1e7 {
        format!("{:.2} M", v / 1e6)
    } else if a >= 1e3 || v == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 0.1 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// A ratio to the baseline, `0.52×`; `n/a` when the baseline is zero.
pub fn display_ratio(v: f64, base: f64) -> String {
    if base == 0.0 || !base.is_finite() || !v.is_finite() {
        if v == base {
            return "1.00×".to_string();
        }
        return "n/a".to_string();
    }
    format!("{:.2}×", v / base)
}

/// The median of `values` (mean of the two middle values for an even count).
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
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
    fn medians_and_formats() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(csv_value(Some(12.0)), "12");
        assert_eq!(csv_value(Some(0.25)), "0.25");
        assert_eq!(csv_value(Some(145.07731600000002)), "145.077316");
        assert_eq!(csv_value(None), "");
        assert_eq!(display_ratio(1.0, 2.0), "0.50×");
        assert_eq!(display_ratio(0.0, 0.0), "1.00×");
        assert_eq!(display_ratio(1.0, 0.0), "n/a");
        assert_eq!(display_value(444314.0, true), "444314");
        assert_eq!(display_value(2731234.5, false), "2731234");
        assert_eq!(display_value(1.2345, false), "1.23");
    }
}
