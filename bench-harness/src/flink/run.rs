//! `lab run --engine flink`: a script on a Flink cluster, and what comes
//! back.
//!
//! Per INSERT, in the lab's terms where the meaning is the same: the sink's
//! changelog rows by kind (and every row, for `--changelog`, `--result` and
//! `lab compare`), input rows (what the source vertices read), the job's
//! wall time from the REST API's start and end times (not the client's
//! start-up). Where Flink measures something else it keeps its own name:
//! per *vertex* (a chain of operators Flink runs as one task) records in
//! and out and busy, backpressured and idle time summed over its subtasks,
//! and the TaskManagers its subtasks ran on. State size is not reported:
//! Flink exposes it only while a job runs (RocksDB's native metrics, which
//! count flushed data and which the REST API samples every 10 s) or in
//! completed checkpoints, and these bounded jobs end first.

use super::capture::{self, Captured};
use super::driver::{self, Event};
use super::install;
use super::rest::Rest;
use super::rewrite::{self, RewriteOptions, SinkRewrite, SinkSpec};
use super::{FlinkError, FlinkHome};
use indicatif::{ProgressBar, ProgressStyle};
use operators::changelog::{RowKind, SinkEncoding};
use operators::sink::SinkCollector;
use operators::Row;
use serde_json::Value as Json;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One vertex of a finished job, from `/jobs/<id>` and its vertex details.
#[derive(Clone, Debug, Default)]
pub struct VertexMetrics {
    pub name: String,
    pub parallelism: u64,
    pub records_in: u64,
    pub records_out: u64,
    /// Milliseconds summed over the vertex's subtasks.
    pub busy_ms: f64,
    pub backpressured_ms: f64,
    pub idle_ms: f64,
    /// TaskManagers that ran its subtasks.
    pub taskmanagers: BTreeSet<String>,
}

/// What one INSERT did on Flink.
#[derive(Clone, Debug)]
pub struct FlinkOutcome {
    pub sink: SinkSpec,
    pub job_id: String,
    pub state: String,
    pub captured: Captured,
    /// The materialised result, sorted (when every row was captured).
    pub result: Option<Vec<Row>>,
    /// The job's end time minus its start time (REST).
    pub wall: Duration,
    /// From RUNNING to FINISHED (REST).
    pub running: Duration,
    /// Rows the source vertices read.
    pub input_rows: u64,
    pub vertices: Vec<VertexMetrics>,
}

impl FlinkOutcome {
    /// Input rows per second of wall time.
    pub fn throughput(&self) -> f64 {
        self.input_rows as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    /// TaskManagers that ran any subtask of the job.
    pub fn taskmanagers(&self) -> BTreeSet<String> {
        self.vertices
            .iter()
            .flat_map(|v| v.taskmanagers.iter().cloned())
            .collect()
    }
}

/// How to run a script on Flink.
pub struct FlinkRun<'a> {
    pub script: &'a Path,
    pub sql: &'a str,
    pub sets: &'a [(String, String)],
    pub params: &'a [(String, String)],
    /// `HOST:PORT`; `None`: the local cluster.
    pub rest: Option<&'a str>,
    /// Capture every row (for changelog, result and comparison); otherwise
    /// counts by kind only.
    pub rows: bool,
    pub quiet: bool,
}

/// A run's header line and its outcomes.
pub struct FlinkRunReport {
    pub rest: String,
    pub flink_version: String,
    pub outcomes: Vec<FlinkOutcome>,
    pub dropped_keys: Vec<String>,
    pub explains: Vec<String>,
}

fn run_id() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!("{}-{}", now.as_millis(), std::process::id())
}

/// Runs the script on the cluster and reads back what every INSERT did.
pub fn run_on_flink(r: &FlinkRun) -> Result<FlinkRunReport, FlinkError> {
    let home = FlinkHome::from_env();
    let address = super::rest_address(r.rest, &home)?;
    let rest = Rest::new(&address);
    let overview = rest.overview()?;
    let marker = install::require(&home)?;
    let id = run_id();
    prune_runs(&home.runs_dir(), 20);
    let run_dir = home.runs_dir().join(&id);
    std::fs::create_dir_all(&run_dir)
        .map_err(|e| FlinkError::execution(format!("cannot create {}: {e}", run_dir.display())))?;
    let base_dir = r.script.parent().map(Path::to_path_buf).unwrap_or_default();
    let base_dir = if base_dir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        base_dir
    };
    let data_dir = home.data_dir();
    let rewritten = rewrite::rewrite(
        r.sql,
        &RewriteOptions {
            params: r.params,
            overrides: r.sets,
            base_dir: &base_dir,
            data_dir: &data_dir,
            sinks: SinkRewrite::Capture {
                run_id: id.clone(),
                rows: r.rows,
            },
            data_path: &|m| absolute(&m.path).display().to_string(),
        },
    )?;
    let _ = std::fs::write(run_dir.join("script.sql"), rewritten.script());

    let bar = if r.quiet {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::new_spinner();
        b.set_style(
            ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        b.enable_steady_tick(Duration::from_millis(200));
        b
    };
    bar.set_message(format!("Flink at {address}: starting the PyFlink driver"));
    let mut explains = Vec::new();
    let jobs = driver::run_driver(
        &home,
        &marker,
        &run_dir,
        &address,
        &rewritten.statements,
        &mut |ev| match ev {
            Event::Submitted(s) => bar.set_message(format!(
                "Flink at {address}: INSERT INTO {} running as job {}",
                s.sink, s.job_id
            )),
            Event::Finished(s) => {
                bar.set_message(format!("Flink at {address}: job {} finished", s.job_id))
            }
            Event::Explain(t) => explains.push(t.to_string()),
        },
    );
    bar.finish_and_clear();
    let jobs = jobs?;

    let mut lines: Vec<String> = Vec::new();
    for tm in rest.taskmanager_ids()? {
        lines.extend(rest.taskmanager_stdout_lines(&tm, &|l| capture::is_run_line(l, &id))?);
    }
    let mut outcomes = Vec::new();
    for job in &jobs {
        let sink = rewritten
            .sinks
            .iter()
            .find(|s| s.name == job.sink)
            .cloned()
            .ok_or_else(|| {
                FlinkError::execution(format!("no sink '{}' was rewritten", job.sink))
            })?;
        let captured = capture::collect(&lines, &sink)?;
        if captured.subtasks == 0 {
            return Err(FlinkError::execution(format!(
                "job {} (INSERT INTO {}) finished but no capture output reached the \
                 TaskManagers' standard output at {address}",
                job.job_id, sink.name
            )));
        }
        let result = r.rows.then(|| materialize(&sink, &captured));
        outcomes.push(job_outcome(&rest, job, sink, captured, result)?);
    }
    Ok(FlinkRunReport {
        rest: address,
        flink_version: overview["flink-version"]
            .as_str()
            .unwrap_or("?")
            .to_string(),
        outcomes,
        dropped_keys: rewritten.dropped_keys,
        explains,
    })
}

/// Keeps the newest `keep` run folders (their names start with the time).
fn prune_runs(dir: &Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut runs: Vec<(u128, PathBuf)> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?;
            Some((name.split('-').next()?.parse().ok()?, p.clone()))
        })
        .collect();
    runs.sort();
    let n = runs.len().saturating_sub(keep);
    for (_, p) in runs.into_iter().take(n) {
        let _ = std::fs::remove_dir_all(p);
    }
}

fn absolute(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

/// The sink's final rows: an upsert sink keeps the last row per key, a
/// retract sink the multiset, as the lab's sink does.
pub fn materialize(sink: &SinkSpec, captured: &Captured) -> Vec<Row> {
    let encoding = match &sink.key {
        Some(key) => SinkEncoding::Upsert { key: key.clone() },
        None => SinkEncoding::Retract,
    };
    let mut c = SinkCollector::new(encoding, false, true, None);
    // Consuming only fails for a writer, and this collector has none.
    let _ = c.consume(captured.changelog.clone());
    c.result()
}

fn ms_field(j: &Json) -> u64 {
    j.as_u64()
        .or_else(|| j.as_f64().map(|f| f as u64))
        .unwrap_or(0)
}

fn job_outcome(
    rest: &Rest,
    job: &driver::Submitted,
    sink: SinkSpec,
    captured: Captured,
    result: Option<Vec<Row>>,
) -> Result<FlinkOutcome, FlinkError> {
    let detail = rest.job(&job.job_id)?;
    let wall = Duration::from_millis(ms_field(&detail["duration"]));
    let ts = &detail["timestamps"];
    let running =
        Duration::from_millis(ms_field(&ts["FINISHED"]).saturating_sub(ms_field(&ts["RUNNING"])));
    let mut vertices = Vec::new();
    let mut input_rows = 0;
    for v in detail["vertices"].as_array().into_iter().flatten() {
        let m = &v["metrics"];
        let name = v["name"].as_str().unwrap_or("?").to_string();
        let mut vm = VertexMetrics {
            parallelism: v["parallelism"].as_u64().unwrap_or(0),
            records_in: ms_field(&m["read-records"]),
            records_out: ms_field(&m["write-records"]),
            busy_ms: m["accumulated-busy-time"].as_f64().unwrap_or(0.0),
            backpressured_ms: m["accumulated-backpressured-time"].as_f64().unwrap_or(0.0),
            idle_ms: m["accumulated-idle-time"].as_f64().unwrap_or(0.0),
            taskmanagers: BTreeSet::new(),
            name,
        };
        if vm.name.starts_with("Source:") {
            input_rows += if vm.records_in > 0 {
                vm.records_in
            } else {
                vm.records_out
            };
        }
        if let Some(id) = v["id"].as_str() {
            let sub = rest.get(&format!("/jobs/{}/vertices/{id}", job.job_id))?;
            for s in sub["subtasks"].as_array().into_iter().flatten() {
                if let Some(tm) = s["taskmanager-id"].as_str() {
                    vm.taskmanagers.insert(tm.to_string());
                }
            }
        }
        vertices.push(vm);
    }
    Ok(FlinkOutcome {
        sink,
        job_id: job.job_id.clone(),
        state: detail["state"].as_str().unwrap_or("?").to_string(),
        captured,
        result,
        wall,
        running,
        input_rows,
        vertices,
    })
}

fn rate(r: f64) -> String {
    if r >= 1e6 {
        format!("{:.2} M rows/s", r / 1e6)
    } else if r >= 1e3 {
        format!("{:.1} k rows/s", r / 1e3)
    } else {
        format!("{r:.0} rows/s")
    }
}

/// The summary of one INSERT on Flink.
pub fn render(o: &FlinkOutcome) -> String {
    let c = &o.captured.counts;
    let mut s = String::new();
    let parallelism = o.vertices.iter().map(|v| v.parallelism).max().unwrap_or(0);
    let _ = writeln!(
        s,
        "INSERT INTO {} (Flink job {}, {}, parallelism {})",
        o.sink.name, o.job_id, o.state, parallelism
    );
    let _ = writeln!(s, "  input rows        {}", o.input_rows);
    let _ = writeln!(
        s,
        "  changelog rows    {} (+I {}, -U {}, +U {}, -D {})",
        c.total(),
        c.get(RowKind::Insert),
        c.get(RowKind::UpdateBefore),
        c.get(RowKind::UpdateAfter),
        c.get(RowKind::Delete)
    );
    if let Some(rows) = &o.result {
        let _ = writeln!(s, "  result rows       {}", rows.len());
    }
    let _ = writeln!(
        s,
        "  wall time         {:.3} ms ({}; job start to end from the REST API, running {:.3} ms)",
        o.wall.as_secs_f64() * 1e3,
        rate(o.throughput()),
        o.running.as_secs_f64() * 1e3
    );
    let tms = o.taskmanagers();
    let _ = writeln!(
        s,
        "  taskmanagers      {} ({})",
        tms.len(),
        tms.iter().cloned().collect::<Vec<_>>().join(", ")
    );
    let _ = writeln!(
        s,
        "  state             not reported (Flink exposes it while a job runs or in checkpoints)"
    );
    let _ = writeln!(
        s,
        "  vertices (Flink tasks; times in ms summed over subtasks):"
    );
    for v in &o.vertices {
        let _ = writeln!(
            s,
            "    {} (parallelism {}): records in {}, out {}; busy {:.0}, backpressured {:.0}, idle {:.0}",
            v.name, v.parallelism, v.records_in, v.records_out, v.busy_ms, v.backpressured_ms, v.idle_ms
        );
    }
    s
}

/// Prints a run's summary and writes `--changelog` / `--result` files.
pub fn print_report(
    script: &Path,
    report: &FlinkRunReport,
    changelog: Option<&Path>,
    result: Option<&Path>,
    output_path: &dyn Fn(&Path, &str, bool) -> PathBuf,
) -> Result<(), FlinkError> {
    println!(
        "joinlab run {} on Flink {} at {}",
        script.display(),
        report.flink_version,
        report.rest
    );
    if !report.dropped_keys.is_empty() {
        println!(
            "  (lab-only keys not sent to Flink: {})",
            report.dropped_keys.join(", ")
        );
    }
    for e in &report.explains {
        println!("{e}");
    }
    let many = report.outcomes.len() > 1;
    for o in &report.outcomes {
        print!("{}", render(o));
        if let Some(path) = changelog {
            let p = output_path(path, &o.sink.name, many);
            datasets::csv_write::write_changelog_csv(&p, &o.sink.columns, &o.captured.changelog)
                .map_err(|e| FlinkError::execution(e.to_string()))?;
            println!("  changelog written to {}", p.display());
        }
        if let Some(path) = result {
            let p = output_path(path, &o.sink.name, many);
            datasets::csv_write::write_result_csv(
                &p,
                &o.sink.columns,
                o.result.as_deref().unwrap_or_default(),
            )
            .map_err(|e| FlinkError::execution(e.to_string()))?;
            println!("  result written to {}", p.display());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_runs_are_pruned() {
        let dir = tempfile::tempdir().unwrap();
        for t in [5, 1, 3, 4, 2] {
            std::fs::create_dir_all(dir.path().join(format!("{t}-99"))).unwrap();
        }
        std::fs::create_dir_all(dir.path().join("other")).unwrap();
        prune_runs(dir.path(), 2);
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, vec!["4-99", "5-99", "other"]);
    }
}
