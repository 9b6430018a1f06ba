//! `lab tune SCRIPT.sql --try key=v1,v2 [--try key2=a,b] [--repeats N]`:
//! runs the script under every combination of the `--try` values (the
//! first `--try` slowest): one untimed warm-up run of each, then the
//! repeats with the variants interleaved (v1 v2, then v2 v1, so neither
//! always runs first). Per sink it prints each timing as median [min–max]
//! with the ratio to the first variant and its 95% interval, and says in
//! words whether the difference stands out of the noise; then the
//! counters, which are the same in every run.
//!
//! `--engine flink` runs every variant on a Flink cluster (`--flink-rest`,
//! else the local one, started for the tune when none runs), through one
//! driver; the counters are then Flink's (its checkpointed state with
//! `--flink-set execution.checkpointing.interval=...`).
//!
//! `--save-baseline NAME` keeps the runs in
//! `reports/tune/<script name>/baselines/NAME.csv`; `--baseline NAME`
//! prints the change of each variant against them.

use super::baseline::{ChangeRow, Changes};
use super::cells::{self, SHORT_MARK};
use super::metrics::{metric, Metric, Sample};
use super::results::{self, Table};
use super::spec::MAX_REPEATS;
use super::CampaignError;
use crate::flink::campaign::{FlinkRunner, FlinkScriptRun};
use crate::flink::Engine;
use crate::stats::{self, Spread};
use indicatif::{ProgressBar, ProgressStyle};
use optimizer::config::Config;
use optimizer::session::{explain_script, run_script, RunOptions};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Timings: a line per variant, with spread, ratio and verdict.
const TIMINGS: &[&str] = &["throughput_rows_per_s", "latency_p99_ms"];
/// Counters: one table, a column each.
const COUNTERS: &[(&str, &str)] = &[
    ("state size", "state_bytes"),
    ("state accesses", "state_accesses"),
    ("records shuffled", "records_shuffled"),
    ("changelog rows", "changelog_rows"),
];
/// Counters of runs on Flink.
const FLINK_COUNTERS: &[(&str, &str)] = &[
    ("checkpointed state", "flink_checkpointed_state_bytes"),
    ("changelog rows", "changelog_rows"),
    ("TaskManagers", "flink_taskmanagers"),
];

fn counters(engine: Engine) -> &'static [(&'static str, &'static str)] {
    match engine {
        Engine::Lab => COUNTERS,
        Engine::Flink => FLINK_COUNTERS,
    }
}

pub struct TuneArgs<'a> {
    pub script: &'a Path,
    /// `key=v1,v2,...`
    pub tries: &'a [String],
    /// Fixed `key=value` for every variant.
    pub sets: &'a [(String, String)],
    /// `--param name=value`: fills `${name}` in the script.
    pub params: &'a [(String, String)],
    pub repeats: u32,
    pub quiet: bool,
    pub save_baseline: Option<&'a str>,
    pub baseline: Option<&'a str>,
    pub engine: Engine,
    /// The Flink cluster's REST address (default: the local cluster).
    pub flink_rest: Option<&'a str>,
    /// Configuration for Flink only.
    pub flink_sets: &'a [(String, String)],
}

/// Every metric a tune run keeps, in the order of a baseline's columns.
fn kept_metrics(engine: Engine) -> Vec<&'static Metric> {
    TIMINGS
        .iter()
        .chain(counters(engine).iter().map(|(_, n)| n))
        .chain(["wall_ms", "source_wait_ms"].iter())
        .filter_map(|n| metric(n))
        .collect()
}

/// The runs of one variant and sink: per kept metric, the values by repeat.
type Runs = Vec<Vec<f64>>;

/// Parses `key=v1,v2` and checks every value with `Config::set`.
pub fn parse_try(t: &str) -> Result<(String, Vec<String>), CampaignError> {
    let (key, values) = t
        .split_once('=')
        .filter(|(k, _)| !k.trim().is_empty())
        .ok_or_else(|| {
            CampaignError::input(format!("--try '{t}': expected KEY=VALUE1,VALUE2,..."))
        })?;
    let key = key.trim().to_string();
    let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
    if values.iter().any(|v| v.is_empty()) {
        return Err(CampaignError::input(format!(
            "--try '{t}': a value is empty; expected KEY=VALUE1,VALUE2,..."
        )));
    }
    for v in &values {
        Config::new()
            .set(&key, v)
            .map_err(|e| CampaignError::input(format!("--try '{t}': {}", e.message)))?;
    }
    Ok((key, values))
}

/// The most variants (combinations of `--try` values) a tune runs.
const MAX_VARIANTS: usize = 1000;

/// The variants: the cartesian product of the tries, first try slowest.
fn variants(tries: &[(String, Vec<String>)]) -> Vec<Vec<(String, String)>> {
    let mut out: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for (key, values) in tries {
        let mut next = Vec::new();
        for v in &out {
            for value in values {
                let mut w = v.clone();
                w.push((key.clone(), value.clone()));
                next.push(w);
            }
        }
        out = next;
    }
    out
}

pub fn tune(args: &TuneArgs) -> Result<String, CampaignError> {
    if args.tries.is_empty() {
        return Err(CampaignError::input(
            "lab tune needs at least one --try KEY=VALUE1,VALUE2",
        ));
    }
    if !(1..=MAX_REPEATS).contains(&args.repeats) {
        return Err(CampaignError::input(format!(
            "--repeats {}: expected an integer from 1 to {MAX_REPEATS}",
            args.repeats
        )));
    }
    let tries: Vec<(String, Vec<String>)> = args
        .tries
        .iter()
        .map(|t| parse_try(t))
        .collect::<Result<_, _>>()?;
    // The variants are the product of the tries: bound it before making it.
    let mut count: usize = 1;
    for (t, (_, values)) in args.tries.iter().zip(&tries) {
        count = count.saturating_mul(values.len());
        if count > MAX_VARIANTS {
            return Err(CampaignError::input(format!(
                "--try '{t}': the --try values make more than {MAX_VARIANTS} variants \
                 (the product of their counts); try fewer"
            )));
        }
    }
    for (i, (k, _)) in tries.iter().enumerate() {
        if tries[..i].iter().any(|(j, _)| j == k) {
            return Err(CampaignError::input(format!(
                "--try names '{k}' twice; give all its values in one --try"
            )));
        }
    }
    let store = baseline_dir(args.script);
    for (flag, name) in [
        ("--save-baseline", args.save_baseline),
        ("--baseline", args.baseline),
    ] {
        if let Some(n) = name {
            super::baseline::check_name(flag, n)?;
        }
    }
    if let Some(name) = args.baseline {
        let path = store.join(format!("{name}.csv"));
        if !path.exists() {
            return Err(CampaignError::input(format!(
                "--baseline {name}: no baseline '{name}' for {} ({} does not exist); save one \
                 first with --save-baseline {name}",
                args.script.display(),
                path.display()
            )));
        }
    }
    let text = std::fs::read_to_string(args.script).map_err(|e| {
        CampaignError::input(format!("cannot read script {}: {e}", args.script.display()))
    })?;
    let sql = crate::template::fill_script(&args.script.display().to_string(), &text, args.params)
        .map_err(CampaignError::input)?;
    let base_dir = args.script.parent().unwrap_or(Path::new("")).to_path_buf();
    let variants = variants(&tries);
    let overrides: Vec<Vec<(String, String)>> = variants
        .iter()
        .map(|v| args.sets.iter().cloned().chain(v.iter().cloned()).collect())
        .collect();
    let labels: Vec<String> = variants
        .iter()
        .map(|v| {
            v.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect();
    for (o, label) in overrides.iter().zip(&labels) {
        explain_script(&sql, o).map_err(|e| {
            CampaignError::input(format!("{} with {label}: {e}", args.script.display()))
        })?;
    }

    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::new(variants.len() as u64 * (u64::from(args.repeats) + 1));
        b.set_style(
            ProgressStyle::with_template("{bar:30.cyan/blue} {pos}/{len} runs, ETA {eta} | {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b
    };
    let kept = kept_metrics(args.engine);
    let mut flink = match args.engine {
        Engine::Flink => {
            let mut say = |line: String| bar.suspend(|| crate::output::errln!("lab tune: {line}"));
            Some(FlinkRunner::open(args.flink_rest, args.quiet, &mut say)?)
        }
        Engine::Lab => None,
    };
    // runs[variant][sink][metric] = values by repeat.
    let mut sinks: Vec<String> = Vec::new();
    let mut runs: Vec<Vec<Runs>> = vec![Vec::new(); variants.len()];
    for round in 0..=args.repeats {
        let order: Vec<usize> = if round % 2 == 0 {
            (0..variants.len()).rev().collect()
        } else {
            (0..variants.len()).collect()
        };
        for vi in order {
            let what = if round == 0 {
                "warm-up run".to_string()
            } else {
                format!("repeat {round}/{}", args.repeats)
            };
            bar.set_message(format!("v{} {} ({what})", vi + 1, labels[vi]));
            let context = || format!("{} with {}", args.script.display(), labels[vi]);
            // Per sink: its name and the value of each kept metric.
            let measured: Vec<(String, Vec<Option<f64>>)> = match flink.as_mut() {
                None => run_script(
                    &sql,
                    &base_dir,
                    &overrides[vi],
                    RunOptions::default(),
                    &mut |_, _| {},
                )
                .map_err(|e| {
                    bar.abandon();
                    CampaignError::run(&context(), e)
                })?
                .iter()
                .map(|out| {
                    let sample = Sample {
                        report: &out.report,
                        sink: out.sink_report(),
                        peak_rss_kb: None,
                    };
                    (
                        out.sink.clone(),
                        kept.iter().map(|m| m.value(&sample)).collect(),
                    )
                })
                .collect(),
                Some(runner) => runner
                    .run(&FlinkScriptRun {
                        script: args.script,
                        sql: &sql,
                        sets: &overrides[vi],
                        flink_sets: args.flink_sets,
                        only_sinks: None,
                    })
                    .map_err(|e| {
                        bar.abandon();
                        CampaignError {
                            code: e.code,
                            message: format!("{}: {}", context(), e.message),
                        }
                    })?
                    .iter()
                    .map(|o| {
                        (
                            o.sink.name.clone(),
                            kept.iter().map(|m| m.flink_value(o)).collect(),
                        )
                    })
                    .collect(),
            };
            bar.inc(1);
            if round == 0 {
                continue;
            }
            for (si, (sink, values)) in measured.into_iter().enumerate() {
                if si >= sinks.len() {
                    sinks.push(sink);
                }
                if runs[vi].len() <= si {
                    runs[vi].push(vec![Vec::new(); kept.len()]);
                }
                for (mi, v) in values.into_iter().enumerate() {
                    if let Some(v) = v {
                        runs[vi][si][mi].push(v);
                    }
                }
            }
        }
    }
    bar.finish_and_clear();
    let on = match &flink {
        Some(f) => format!(" on Flink at {}", f.address()),
        None => String::new(),
    };
    drop(flink);

    let mut s = String::new();
    let _ = writeln!(s, "lab tune {}{on}", args.script.display());
    let _ = writeln!(
        s,
        "{} variant(s) × {} run(s) each, interleaved, after a warm-up run of each:",
        variants.len(),
        args.repeats
    );
    for (vi, label) in labels.iter().enumerate() {
        let _ = writeln!(s, "  v{}  {label}", vi + 1);
    }
    let values = |vi: usize, si: usize, m: &Metric| -> Vec<f64> {
        let mi = kept.iter().position(|k| k.name == m.name).unwrap_or(0);
        runs[vi].get(si).map(|r| r[mi].clone()).unwrap_or_default()
    };
    let (wall, wait) = (metric("wall_ms"), metric("source_wait_ms"));
    let mut any_short = false;
    for (si, sink) in sinks.iter().enumerate() {
        let _ = writeln!(s, "\nINSERT INTO {sink}");
        let short: Vec<bool> = (0..variants.len())
            .map(|vi| {
                let walls = wall.map(|w| values(vi, si, w)).unwrap_or_default();
                let waits = wait.map(|w| values(vi, si, w)).unwrap_or_default();
                walls
                    .iter()
                    .enumerate()
                    .any(|(i, ms)| stats::too_short(*ms, waits.get(i).copied().unwrap_or(0.0)))
            })
            .collect();
        any_short |= short.iter().any(|x| *x);
        for name in TIMINGS {
            let Some(m) = metric(name) else { continue };
            // Flink measures no latency.
            if (0..variants.len()).all(|vi| values(vi, si, m).is_empty()) {
                continue;
            }
            let _ = writeln!(
                s,
                "{}: median [min–max]; ratio to v1 [95% interval]",
                m.axis_label()
            );
            let mut rows: Vec<Vec<String>> = Vec::new();
            for (vi, too_short) in short.iter().enumerate() {
                let v = values(vi, si, m);
                let Some(sp) = Spread::of(&v) else { continue };
                let mut cell = cells::spread(&sp, m);
                if *too_short {
                    let _ = write!(cell, " {SHORT_MARK}");
                }
                let mut row = vec![format!("v{}", vi + 1), cell];
                if vi > 0 {
                    if let Some(r) = stats::ratio_paired(&values(0, si, m), &v) {
                        row.push(cells::ratio(&r));
                        row.push(cells::verdict(&r, m).to_string());
                    }
                }
                rows.push(row);
            }
            write_table(&mut s, "  ", &rows);
        }
        let _ = writeln!(
            s,
            "counters (one value: the same in every run; ratio to v1):"
        );
        let mut rows: Vec<Vec<String>> = vec![std::iter::once("variant".to_string())
            .chain(counters(args.engine).iter().map(|(t, _)| t.to_string()))
            .collect()];
        for vi in 0..variants.len() {
            let mut row = vec![format!("v{}", vi + 1)];
            for (_, name) in counters(args.engine) {
                let cell = metric(name).and_then(|m| {
                    let v = values(vi, si, m);
                    let sp = Spread::of(&v)?;
                    let mut c = cells::spread(&sp, m);
                    if vi > 0 {
                        if let Some(r) = stats::ratio_paired(&values(0, si, m), &v) {
                            let _ = write!(c, " ({})", crate::numbers::ratio(r.estimate));
                        }
                    }
                    Some(c)
                });
                row.push(cell.unwrap_or_else(|| "–".to_string()));
            }
            rows.push(row);
        }
        write_table(&mut s, "  ", &rows);
    }
    if any_short {
        let _ = writeln!(s, "\n{}", cells::short_note());
    }

    let record = TuneRuns {
        labels: &labels,
        sinks: &sinks,
        runs: &runs,
        kept: &kept,
        counters: counters(args.engine),
    };
    if let Some(name) = args.baseline {
        let then = read_baseline(&store.join(format!("{name}.csv")))?;
        let _ = write!(s, "\n{}", compare(&record, &then, name).text());
    }
    if let Some(name) = args.save_baseline {
        let _ = writeln!(s, "\n{}", save_baseline(&record, &store, name)?);
    }
    Ok(s)
}

/// Writes `rows` as left-aligned columns two spaces apart, each line
/// indented by `indent`.
fn write_table(s: &mut String, indent: &str, rows: &[Vec<String>]) {
    let n = rows.iter().map(|r| r.len()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..n)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|x| x.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in rows {
        let mut line = indent.to_string();
        for (c, cell) in row.iter().enumerate() {
            let pad = widths[c] - cell.chars().count();
            let _ = write!(line, "{cell}{}  ", " ".repeat(pad));
        }
        let _ = writeln!(s, "{}", line.trim_end());
    }
}

/// Where `lab tune` keeps the baselines of a script.
fn baseline_dir(script: &Path) -> PathBuf {
    let stem = script
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "script".to_string());
    Path::new("reports")
        .join("tune")
        .join(stem)
        .join("baselines")
}

/// The runs of a tune, for baselines.
struct TuneRuns<'a> {
    labels: &'a [String],
    sinks: &'a [String],
    runs: &'a [Vec<Runs>],
    kept: &'a [&'static Metric],
    counters: &'static [(&'static str, &'static str)],
}

const BASELINE_LEADING: &[&str] = &["variant", "sink", "repeat"];

fn save_baseline(r: &TuneRuns, store: &Path, name: &str) -> Result<String, CampaignError> {
    std::fs::create_dir_all(store)
        .map_err(|e| CampaignError::execution(format!("cannot create {}: {e}", store.display())))?;
    let path = store.join(format!("{name}.csv"));
    let header: Vec<String> = BASELINE_LEADING
        .iter()
        .map(|s| s.to_string())
        .chain(r.kept.iter().map(|m| m.name.to_string()))
        .collect();
    let mut rows = Vec::new();
    for (vi, label) in r.labels.iter().enumerate() {
        for (si, sink) in r.sinks.iter().enumerate() {
            let Some(per_metric) = r.runs[vi].get(si) else {
                continue;
            };
            let repeats = per_metric.iter().map(|v| v.len()).max().unwrap_or(0);
            for rep in 0..repeats {
                let mut row = vec![label.clone(), sink.clone(), (rep + 1).to_string()];
                row.extend(
                    per_metric
                        .iter()
                        .map(|v| super::metrics::csv_value(v.get(rep).copied())),
                );
                rows.push(row);
            }
        }
    }
    let replaced = path.exists();
    results::write_table(&path, &header, &rows)?;
    Ok(format!(
        "{} baseline '{name}' ({})",
        if replaced {
            "replaced with this run:"
        } else {
            "saved this run as"
        },
        path.display()
    ))
}

/// A saved baseline: (variant label, sink) -> metric name -> values.
type Baseline = Vec<((String, String), Vec<(String, Vec<f64>)>)>;

fn read_baseline(path: &Path) -> Result<Baseline, CampaignError> {
    let table = Table::read(path)?;
    if table.header.len() < BASELINE_LEADING.len()
        || table.header[..BASELINE_LEADING.len()] != *BASELINE_LEADING
    {
        return Err(CampaignError::input(format!(
            "{}: not a baseline of lab tune (expected columns {} first)",
            path.display(),
            BASELINE_LEADING.join(", ")
        )));
    }
    let mut out: Baseline = Vec::new();
    for (line, row) in table.rows.iter().enumerate() {
        let key = (row[0].clone(), row[1].clone());
        let i = match out.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                let metrics = table.header[BASELINE_LEADING.len()..]
                    .iter()
                    .map(|h| (h.clone(), Vec::new()))
                    .collect();
                out.push((key, metrics));
                out.len() - 1
            }
        };
        for (c, text) in row[BASELINE_LEADING.len()..].iter().enumerate() {
            if text.is_empty() {
                continue;
            }
            let v: f64 = text.parse().map_err(|_| {
                CampaignError::input(format!(
                    "{}:{}: '{text}' is not a number",
                    path.display(),
                    line + 2
                ))
            })?;
            out[i].1[c].1.push(v);
        }
    }
    Ok(out)
}

fn compare(now: &TuneRuns, then: &Baseline, name: &str) -> Changes {
    let mut rows = Vec::new();
    for (vi, label) in now.labels.iter().enumerate() {
        for (si, sink) in now.sinks.iter().enumerate() {
            let base = then
                .iter()
                .find(|((l, s), _)| l == label && s == sink)
                .map(|(_, m)| m);
            for name in TIMINGS.iter().chain(now.counters.iter().map(|(_, n)| n)) {
                let Some(m) = metric(name) else { continue };
                let mi = now.kept.iter().position(|k| k.name == m.name).unwrap_or(0);
                let current = now.runs[vi]
                    .get(si)
                    .map(|r| r[mi].clone())
                    .unwrap_or_default();
                let before: Vec<f64> = base
                    .and_then(|b| b.iter().find(|(n, _)| n == m.name))
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default();
                rows.push(ChangeRow {
                    point: format!("v{} ({label}), INSERT INTO {sink}", vi + 1),
                    variant: String::new(),
                    metric: m.axis_label(),
                    ratio: stats::ratio_independent(&before, &current).map(|r| (r, m)),
                    note: if base.is_none() {
                        "the baseline has no run of this variant".to_string()
                    } else {
                        "no ratio: the baseline's median is 0".to_string()
                    },
                });
            }
        }
    }
    Changes {
        name: name.to_string(),
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tries_make_a_cartesian_product() {
        let t = vec![
            parse_try("parallelism.default=1,4").unwrap(),
            parse_try("state.backend.type=hashmap, rocksdb").unwrap(),
        ];
        let v = variants(&t);
        assert_eq!(v.len(), 4);
        assert_eq!(v[1][1].1, "rocksdb");
        assert_eq!(v[2][0].1, "4");
        assert!(parse_try("state.backend.type=disk")
            .unwrap_err()
            .message
            .contains("hashmap, rocksdb"));
        assert!(parse_try("nokey").is_err());
    }
}
