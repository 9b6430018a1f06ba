//! Submitting statements through the PyFlink driver (`flink/driver.py`).
//!
//! PyFlink's package carries no SQL Gateway, so the lab runs a small
//! Python program with the project's virtualenv: a `TableEnvironment` with
//! `execution.target = remote` and the cluster's `rest.address` and
//! `rest.port`, which runs the statements in order and reports each job's
//! id as a JSON line. The capture sink's jar goes with every job
//! (`pipeline.jars`), so any cluster can run it.

use super::install::Marker;
use super::rewrite::DriverStatement;
use super::{repo_dir, write_atomic, FlinkError, FlinkHome};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A job the driver submitted.
#[derive(Clone, Debug)]
pub struct Submitted {
    pub statement: usize,
    pub sink: String,
    pub job_id: String,
}

/// What the driver reports as it goes.
pub enum Event<'a> {
    Submitted(&'a Submitted),
    Finished(&'a Submitted),
    Explain(&'a str),
}

#[derive(serde::Serialize)]
struct JobFile<'a> {
    rest: &'a str,
    jars: Vec<String>,
    config: std::collections::BTreeMap<String, String>,
    statements: &'a [DriverStatement],
}

pub fn driver_path() -> PathBuf {
    repo_dir().join("flink").join("driver.py")
}

/// Runs `statements` on the cluster at `rest`; the job file and the
/// driver's standard error stay in `run_dir`.
pub fn run_driver(
    home: &FlinkHome,
    _marker: &Marker,
    run_dir: &Path,
    rest: &str,
    statements: &[DriverStatement],
    on_event: &mut dyn FnMut(Event),
) -> Result<Vec<Submitted>, FlinkError> {
    let job = JobFile {
        rest,
        jars: vec![format!("file://{}", home.capture_jar().display())],
        config: Default::default(),
        statements,
    };
    let job_path = run_dir.join("job.json");
    write_atomic(
        &job_path,
        serde_json::to_string_pretty(&job)
            .expect("a job serialises")
            .as_bytes(),
    )
    .map_err(|e| FlinkError::execution(format!("cannot write {}: {e}", job_path.display())))?;
    let stderr_path = run_dir.join("driver.stderr");
    let stderr = std::fs::File::create(&stderr_path).map_err(|e| {
        FlinkError::execution(format!("cannot write {}: {e}", stderr_path.display()))
    })?;
    let mut child = Command::new(home.python())
        .arg(driver_path())
        .arg(&job_path)
        .current_dir(run_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .map_err(|e| {
            FlinkError::execution(format!(
                "cannot start the PyFlink driver ({}): {e}",
                home.python().display()
            ))
        })?;
    let mut jobs: Vec<Submitted> = Vec::new();
    let mut error: Option<FlinkError> = None;
    let stdout = child.stdout.take().expect("piped");
    for line in BufReader::new(stdout).lines().map_while(Result::ok) {
        let Ok(ev) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        let statement = ev["statement"].as_u64().unwrap_or(0) as usize;
        match ev["event"].as_str() {
            Some("submitted") => {
                let s = Submitted {
                    statement,
                    sink: ev["sink"].as_str().unwrap_or("").to_string(),
                    job_id: ev["job_id"].as_str().unwrap_or("").to_string(),
                };
                on_event(Event::Submitted(&s));
                jobs.push(s);
            }
            Some("finished") => {
                if let Some(s) = jobs.iter().find(|j| j.statement == statement) {
                    on_event(Event::Finished(s));
                }
            }
            Some("explain") => on_event(Event::Explain(ev["text"].as_str().unwrap_or(""))),
            Some("error") => {
                let message = ev["message"].as_str().unwrap_or("").to_string();
                let what = statements
                    .get(statement)
                    .map(|s| first_line(&s.text()))
                    .unwrap_or_default();
                error = Some(if ev["phase"].as_str() == Some("run") {
                    FlinkError::execution(format!(
                        "the Flink job of '{what}' failed at {rest}:\n{message}"
                    ))
                } else {
                    FlinkError::input(format!("Flink rejected '{what}':\n{message}"))
                });
            }
            _ => {}
        }
    }
    let status = child
        .wait()
        .map_err(|e| FlinkError::execution(format!("the PyFlink driver: {e}")))?;
    if let Some(e) = error {
        return Err(e);
    }
    if !status.success() {
        let text = std::fs::read_to_string(&stderr_path).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        return Err(FlinkError::execution(format!(
            "the PyFlink driver exited with {status}; the end of its output ({}):\n{}",
            stderr_path.display(),
            lines[lines.len().saturating_sub(15)..].join("\n")
        )));
    }
    Ok(jobs)
}

fn first_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or("");
    if line.chars().count() > 80 {
        format!("{}...", line.chars().take(80).collect::<String>())
    } else {
        line.to_string()
    }
}
