//! `lab run --engine flink`: a script on a Flink cluster, and what comes
//! back.
//!
//! Per INSERT, in the lab's terms where the meaning is the same: the sink's
//! changelog rows by kind (and every row, for `--changelog`, `--result` and
//! `lab compare`), input rows (what the source vertices read), the job's
//! wall time from its start (REST) to the end of its sinks' input (the
//! capture sink's clock), as the lab's runs to the end of its input. Where
//! Flink measures something else it keeps its own name: the job's time from
//! start to end (REST; it includes the wait for a final checkpoint), per
//! *vertex* (a chain of operators Flink runs as one task) records in and
//! out and busy, backpressured and idle time summed over its subtasks, the
//! TaskManagers its subtasks ran on, and, with checkpointing on, the state
//! each vertex wrote to its final checkpoint ([`super::checkpoint`]).
//!
//! A [`FlinkSession`] runs scripts one after the other on one cluster
//! through one driver process ([`super::driver`]); `lab run` uses one for
//! one script, `lab campaign` and `lab tune` one for all their runs.

use super::capture::{self, Captured};
use super::checkpoint::{self, CheckpointedState};
use super::driver::{DriverSession, Event, Submitted};
use super::install;
use super::rest::Rest;
use super::rewrite::{self, RewriteOptions, SinkRewrite, SinkSpec};
use super::{FlinkError, FlinkHome};
use crate::numbers::{self, Unit};
use indicatif::{ProgressBar, ProgressStyle};
use operators::changelog::{RowKind, SinkEncoding};
use operators::sink::SinkCollector;
use operators::Row;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One vertex of a finished job, from `/jobs/<id>` and its vertex details.
#[derive(Clone, Debug, Default)]
pub struct VertexMetrics {
    pub id: String,
    pub name: String,
    pub parallelism: u64,
    pub records_in: u64,
    pub records_out: u64,
    /// Milliseconds summed over the vertex's subtasks.
    pub busy_ms: f64,
    pub backpressured_ms: f64,
    pub idle_ms: f64,
    /// The TaskManagers that ran its subtasks, and how many each ran.
    pub taskmanagers: BTreeMap<String, u64>,
    /// Its state in its final checkpoint, with checkpointing on.
    pub checkpointed_bytes: Option<u64>,
}

/// What one job (an INSERT, or a statement set) did on Flink.
#[derive(Clone, Debug, Default)]
pub struct JobMetrics {
    pub job_id: String,
    pub state: String,
    /// The job's start (REST) to its sinks' end of input (the capture
    /// sink's clock); the job's duration when a sink did not say.
    pub wall: Duration,
    /// The job's start to its end (REST): deployment, the work, the wait
    /// for a final checkpoint and the tasks' shutdown.
    pub duration: Duration,
    /// Rows the source vertices read.
    pub input_rows: u64,
    pub vertices: Vec<VertexMetrics>,
    /// With checkpointing on: the state of every vertex in its final
    /// checkpoint.
    pub checkpointed: Option<CheckpointedState>,
    /// The sinks the job wrote (several for a statement set).
    pub sinks: Vec<String>,
}

impl JobMetrics {
    /// Input rows per second of wall time.
    pub fn throughput(&self) -> f64 {
        self.input_rows as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    /// The TaskManagers that ran any subtask of the job, and how many
    /// subtasks (of all its vertices) each ran.
    pub fn taskmanagers(&self) -> BTreeMap<String, u64> {
        let mut out = BTreeMap::new();
        for (tm, n) in self.vertices.iter().flat_map(|v| &v.taskmanagers) {
            *out.entry(tm.clone()).or_insert(0) += n;
        }
        out
    }

    /// The largest parallelism of its vertices.
    pub fn parallelism(&self) -> u64 {
        self.vertices
            .iter()
            .map(|v| v.parallelism)
            .max()
            .unwrap_or(0)
    }

    /// Busy time summed over every subtask of every vertex.
    pub fn busy_ms(&self) -> f64 {
        self.vertices.iter().map(|v| v.busy_ms).sum()
    }

    pub fn backpressured_ms(&self) -> f64 {
        self.vertices.iter().map(|v| v.backpressured_ms).sum()
    }

    /// The state of every vertex in its final checkpoint (with
    /// checkpointing on).
    pub fn checkpointed_bytes(&self) -> Option<u64> {
        self.checkpointed
            .as_ref()
            .map(CheckpointedState::total_bytes)
    }
}

/// What one INSERT did on Flink: its sink's own figures and its job's.
#[derive(Clone, Debug)]
pub struct FlinkOutcome {
    pub sink: SinkSpec,
    pub captured: Captured,
    /// The materialised result, sorted (when every row was captured).
    pub result: Option<Vec<Row>>,
    /// The job's figures, shared by the INSERTs of a statement set.
    pub job: JobMetrics,
}

/// How to run a script on Flink.
pub struct FlinkRun<'a> {
    pub script: &'a Path,
    pub sql: &'a str,
    pub sets: &'a [(String, String)],
    pub params: &'a [(String, String)],
    /// Capture every row (for changelog, result and comparison); otherwise
    /// counts by kind only.
    pub rows: bool,
    pub quiet: bool,
    /// Only the INSERTs into these sinks (a campaign variant's `sinks`).
    pub only_sinks: Option<&'a [String]>,
}

/// A run's outcomes and what it printed.
pub struct FlinkRunReport {
    pub rest: String,
    pub flink_version: String,
    pub outcomes: Vec<FlinkOutcome>,
    pub dropped_keys: Vec<String>,
    /// Flink's plan of each EXPLAIN statement, in script order.
    pub explains: Vec<String>,
}

fn run_id() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!("{}-{}", now.as_millis(), std::process::id())
}

/// Runs `r` on the cluster at `rest` (default: the local cluster) and
/// reads back what every INSERT did.
pub fn run_on_flink(rest: Option<&str>, r: &FlinkRun) -> Result<FlinkRunReport, FlinkError> {
    FlinkSession::connect(rest)?.run(r)
}

/// One cluster and one driver process for any number of runs.
pub struct FlinkSession {
    home: FlinkHome,
    rest: Rest,
    pub address: String,
    pub flink_version: String,
    driver: Option<DriverSession>,
    /// How long the REST API serves a TaskManager's standard output from
    /// its cache (`web.refresh-interval`, from `/config`).
    stdout_cache: Duration,
}

impl FlinkSession {
    /// Checks that the cluster at `rest` (default: the local one) answers
    /// and that Flink is installed; the driver starts with the first run.
    pub fn connect(rest: Option<&str>) -> Result<FlinkSession, FlinkError> {
        let home = FlinkHome::from_env();
        let address = super::rest_address(rest, &home)?;
        let client = Rest::new(&address);
        let overview = client.overview()?;
        install::require(&home)?;
        let refresh = client
            .get("/config")
            .ok()
            .and_then(|c| c["refresh-interval"].as_u64())
            .unwrap_or(3000);
        Ok(FlinkSession {
            stdout_cache: Duration::from_millis(refresh),
            home,
            rest: client,
            flink_version: overview["flink-version"]
                .as_str()
                .unwrap_or("?")
                .to_string(),
            address,
            driver: None,
        })
    }

    /// Runs the script and reads back what every INSERT did.
    pub fn run(&mut self, r: &FlinkRun) -> Result<FlinkRunReport, FlinkError> {
        let id = run_id();
        prune_runs(&self.home.runs_dir(), 20);
        let run_dir = self.home.runs_dir().join(&id);
        std::fs::create_dir_all(&run_dir).map_err(|e| {
            FlinkError::execution(format!("cannot create {}: {e}", run_dir.display()))
        })?;
        let base_dir = r.script.parent().map(Path::to_path_buf).unwrap_or_default();
        let base_dir = if base_dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            base_dir
        };
        let data_dir = self.home.data_dir();
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
                only_sinks: r.only_sinks,
            },
        )?;
        let _ = std::fs::write(run_dir.join("script.sql"), rewritten.script());

        let address = self.address.clone();
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
        if self.driver.is_none() {
            bar.set_message(format!("Flink at {address}: starting the PyFlink driver"));
            // The session's driver writes its standard error beside the
            // first run's files.
            self.driver = Some(DriverSession::start(
                &self.home,
                &run_dir.join("driver.stderr"),
            )?);
        }
        let driver = self.driver.as_mut().expect("started");
        let mut explains = Vec::new();
        let mut last_finished = None;
        let jobs = driver.run(
            &self.home,
            &run_dir,
            &address,
            &rewritten.statements,
            &mut |ev| match ev {
                Event::Submitted(s) => bar.set_message(format!(
                    "Flink at {address}: INSERT INTO {} running as job {}",
                    s.sinks.join(", "),
                    s.job_id
                )),
                Event::Finished(s) => {
                    last_finished = Some(std::time::Instant::now());
                    bar.set_message(format!("Flink at {address}: job {} finished", s.job_id))
                }
                Event::Explain(t) => explains.push(t.to_string()),
            },
        );
        bar.finish_and_clear();
        let jobs = match jobs {
            Ok(j) => j,
            Err(e) => {
                if e.code != 2 {
                    // A failed job may have left the driver unusable.
                    self.driver = None;
                }
                return Err(e);
            }
        };

        // The REST API serves a TaskManager's standard output from a copy
        // it keeps for `web.refresh-interval`: a copy made before the last
        // job ended lacks its lines, and every copy is younger than that
        // once the interval has passed since.
        if let Some(t) = last_finished {
            let ready = t + self.stdout_cache + Duration::from_millis(100);
            let now = std::time::Instant::now();
            if ready > now {
                std::thread::sleep(ready - now);
            }
        }
        let mut lines: Vec<String> = Vec::new();
        for tm in self.rest.taskmanager_ids()? {
            lines.extend(
                self.rest
                    .taskmanager_stdout_lines(&tm, &|l| capture::is_run_line(l, &id))?,
            );
        }
        let mut outcomes = Vec::new();
        for job in &jobs {
            let mut captured = Vec::new();
            for name in &job.sinks {
                let sink = rewritten
                    .sinks
                    .iter()
                    .find(|s| s.name == *name)
                    .cloned()
                    .ok_or_else(|| {
                        FlinkError::execution(format!("no sink '{name}' was rewritten"))
                    })?;
                let c = capture::collect(&lines, &sink)?;
                if c.subtasks == 0 {
                    return Err(FlinkError::execution(format!(
                        "job {} (INSERT INTO {}) finished but no capture output reached the \
                         TaskManagers' standard output at {address}",
                        job.job_id, sink.name
                    )));
                }
                captured.push((sink, c));
            }
            let metrics = job_metrics(&self.rest, job, &captured)?;
            for (sink, c) in captured {
                let result = r.rows.then(|| materialize(&sink, &c));
                outcomes.push(FlinkOutcome {
                    sink,
                    captured: c,
                    result,
                    job: metrics.clone(),
                });
            }
        }
        Ok(FlinkRunReport {
            rest: address,
            flink_version: self.flink_version.clone(),
            outcomes,
            dropped_keys: rewritten.dropped_keys,
            explains,
        })
    }
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

/// The figures of a finished job, from the REST API and its sinks' end of
/// input.
fn job_metrics(
    rest: &Rest,
    job: &Submitted,
    captured: &[(SinkSpec, Captured)],
) -> Result<JobMetrics, FlinkError> {
    let detail = rest.job(&job.job_id)?;
    let duration = Duration::from_millis(ms_field(&detail["duration"]));
    let start = ms_field(&detail["start-time"]);
    let ends: Option<Vec<u64>> = captured.iter().map(|(_, c)| c.end_of_input_ms).collect();
    let wall = match ends.and_then(|e| e.into_iter().max()) {
        Some(end) if start > 0 && end >= start => Duration::from_millis(end - start),
        _ => duration,
    };
    let mut vertices = Vec::new();
    let mut input_rows = 0;
    for v in detail["vertices"].as_array().into_iter().flatten() {
        let m = &v["metrics"];
        let mut vm = VertexMetrics {
            id: v["id"].as_str().unwrap_or("").to_string(),
            name: v["name"].as_str().unwrap_or("?").to_string(),
            parallelism: v["parallelism"].as_u64().unwrap_or(0),
            records_in: ms_field(&m["read-records"]),
            records_out: ms_field(&m["write-records"]),
            busy_ms: m["accumulated-busy-time"].as_f64().unwrap_or(0.0),
            backpressured_ms: m["accumulated-backpressured-time"].as_f64().unwrap_or(0.0),
            idle_ms: m["accumulated-idle-time"].as_f64().unwrap_or(0.0),
            taskmanagers: BTreeMap::new(),
            checkpointed_bytes: None,
        };
        if vm.name.starts_with("Source:") {
            input_rows += if vm.records_in > 0 {
                vm.records_in
            } else {
                vm.records_out
            };
        }
        if !vm.id.is_empty() {
            let sub = rest.get(&format!("/jobs/{}/vertices/{}", job.job_id, vm.id))?;
            for s in sub["subtasks"].as_array().into_iter().flatten() {
                if let Some(tm) = s["taskmanager-id"].as_str() {
                    *vm.taskmanagers.entry(tm.to_string()).or_insert(0) += 1;
                }
            }
        }
        vertices.push(vm);
    }
    let ids: Vec<String> = vertices.iter().map(|v| v.id.clone()).collect();
    let checkpointed = checkpoint::read(rest, &job.job_id, &ids);
    if let Some(c) = &checkpointed {
        for v in &mut vertices {
            v.checkpointed_bytes = c.bytes_by_vertex.get(&v.id).copied();
        }
    }
    Ok(JobMetrics {
        job_id: job.job_id.clone(),
        state: detail["state"].as_str().unwrap_or("?").to_string(),
        wall,
        duration,
        input_rows,
        vertices,
        checkpointed,
        sinks: job.sinks.clone(),
    })
}

/// The summary of one INSERT on Flink.
pub fn render(o: &FlinkOutcome) -> String {
    let c = &o.captured.counts;
    let j = &o.job;
    let mut s = String::new();
    let n = |v: f64| numbers::format(v, Unit::Count);
    let ms = |d: Duration| numbers::format(d.as_secs_f64() * 1e3, Unit::Millis);
    let _ = writeln!(
        s,
        "INSERT INTO {} (Flink job {}, {}, parallelism {})",
        o.sink.name,
        j.job_id,
        j.state,
        j.parallelism()
    );
    if j.sinks.len() > 1 {
        let _ = writeln!(
            s,
            "  statement set     one job for {} (the job's figures are shared)",
            j.sinks.join(", ")
        );
    }
    let _ = writeln!(s, "  input rows        {}", n(j.input_rows as f64));
    let _ = writeln!(
        s,
        "  changelog rows    {} (+I {}, -U {}, +U {}, -D {})",
        n(c.total() as f64),
        n(c.get(RowKind::Insert) as f64),
        n(c.get(RowKind::UpdateBefore) as f64),
        n(c.get(RowKind::UpdateAfter) as f64),
        n(c.get(RowKind::Delete) as f64)
    );
    if let Some(rows) = &o.result {
        let _ = writeln!(s, "  result rows       {}", n(rows.len() as f64));
    }
    let _ = writeln!(
        s,
        "  wall time         {} ({} rows/s; from the job's start to its sinks' end of input)",
        ms(j.wall),
        numbers::format(j.throughput(), Unit::Rate),
    );
    let _ = writeln!(
        s,
        "  job duration      {} (start to end from the REST API: deployment, work, final \
         checkpoint, shutdown)",
        ms(j.duration)
    );
    let tms = j.taskmanagers();
    let _ = writeln!(
        s,
        "  taskmanagers      {} ({})",
        tms.len(),
        tms.iter()
            .map(|(tm, n)| format!("{tm}: {n} subtask(s)"))
            .collect::<Vec<_>>()
            .join("; ")
    );
    match &j.checkpointed {
        Some(cp) => {
            let _ = writeln!(
                s,
                "  state             {} in the final checkpoint (of {} completed; per vertex below)",
                numbers::format(cp.total_bytes() as f64, Unit::Bytes),
                cp.completed
            );
        }
        None => {
            let _ = writeln!(
                s,
                "  state             not reported: no checkpoint completed (set \
                 execution.checkpointing.interval for a final checkpoint)"
            );
        }
    }
    let _ = writeln!(s, "  vertices (Flink tasks; times summed over subtasks):");
    for v in &j.vertices {
        let state = match v.checkpointed_bytes {
            Some(b) => format!("; checkpointed {}", numbers::format(b as f64, Unit::Bytes)),
            None => String::new(),
        };
        let _ = writeln!(
            s,
            "    {} (parallelism {}): records in {}, out {}; busy {}, backpressured {}, idle {}{state}",
            v.name,
            v.parallelism,
            n(v.records_in as f64),
            n(v.records_out as f64),
            numbers::format(v.busy_ms, Unit::Millis),
            numbers::format(v.backpressured_ms, Unit::Millis),
            numbers::format(v.idle_ms, Unit::Millis),
        );
    }
    s
}

/// Writes `--changelog` / `--result` files, then prints the run's
/// summary (as `lab run` does: a failed write to stdout costs no file).
/// When a write fails, the files written before it are complete and the
/// error names them.
pub fn print_report(
    script: &Path,
    report: &FlinkRunReport,
    changelog: Option<&Path>,
    result: Option<&Path>,
    output_path: &dyn Fn(&Path, &str, bool) -> PathBuf,
) -> Result<(), FlinkError> {
    use crate::output::{out, outln};
    let many = report.outcomes.len() > 1;
    let mut written: Vec<Vec<PathBuf>> = Vec::new();
    let failed = |e: datasets::DatasetError, written: &[Vec<PathBuf>]| {
        let kept: Vec<String> = written
            .iter()
            .flatten()
            .map(|p| p.display().to_string())
            .collect();
        FlinkError::execution(if kept.is_empty() {
            format!("{e}; no output file was written")
        } else {
            format!(
                "{e}; the output files written before it are complete and kept: {}",
                kept.join(", ")
            )
        })
    };
    for o in &report.outcomes {
        written.push(Vec::new());
        if let Some(path) = changelog {
            let p = output_path(path, &o.sink.name, many);
            datasets::csv_write::write_changelog_csv(&p, &o.sink.columns, &o.captured.changelog)
                .map_err(|e| failed(e, &written))?;
            written.last_mut().expect("pushed").push(p);
        }
        if let Some(path) = result {
            let p = output_path(path, &o.sink.name, many);
            let rows = o.result.as_deref().unwrap_or_default();
            datasets::csv_write::write_result_csv(&p, &o.sink.columns, rows)
                .map_err(|e| failed(e, &written))?;
            written.last_mut().expect("pushed").push(p);
        }
    }
    let printed = (|| {
        outln!(
            "joinlab run {} on Flink {} at {}",
            script.display(),
            report.flink_version,
            report.rest
        )?;
        if !report.dropped_keys.is_empty() {
            outln!(
                "  (lab-only keys not sent to Flink: {})",
                report.dropped_keys.join(", ")
            )?;
        }
        for e in &report.explains {
            outln!("{e}")?;
        }
        for (o, files) in report.outcomes.iter().zip(&written) {
            out(&render(o))?;
            let mut files = files.iter();
            if changelog.is_some() {
                if let Some(p) = files.next() {
                    outln!("  changelog written to {}", p.display())?;
                }
            }
            if result.is_some() {
                if let Some(p) = files.next() {
                    outln!("  result written to {}", p.display())?;
                }
            }
        }
        Ok::<(), crate::output::OutputError>(())
    })();
    printed.map_err(|e| {
        let kept: Vec<String> = written
            .iter()
            .flatten()
            .map(|p| p.display().to_string())
            .collect();
        if kept.is_empty() {
            FlinkError::from(e)
        } else {
            FlinkError::execution(format!(
                "{e}; the output files are complete: {}",
                kept.join(", ")
            ))
        }
    })
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
