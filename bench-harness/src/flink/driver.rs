//! Submitting statements through the PyFlink driver (`flink/driver.py`).
//!
//! PyFlink's package carries no SQL Gateway, so the lab runs a small
//! Python program with the project's virtualenv: a `TableEnvironment` with
//! `execution.target = remote` and the cluster's `rest.address` and
//! `rest.port`, which runs the statements in order and reports each job's
//! id as a JSON line. The capture sink's jar goes with every job
//! (`pipeline.jars`), so any cluster can run it.
//!
//! A [`DriverSession`] is one driver process serving job files one after
//! the other (`driver.py --serve`): starting its Java gateway takes longer
//! than a small job, so a campaign or `lab tune` keeps one for all its runs.

use super::rewrite::DriverStatement;
use super::{repo_dir, write_atomic, FlinkError, FlinkHome};
use std::io::{BufRead, BufReader, Lines, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// A job the driver submitted: one INSERT, or a statement set's INSERTs.
#[derive(Clone, Debug)]
pub struct Submitted {
    pub statement: usize,
    pub sinks: Vec<String>,
    pub job_id: String,
}

/// What the driver reports as it goes.
pub enum Event<'a> {
    Submitted(&'a Submitted),
    Finished(&'a Submitted),
    /// Flink's plan of an EXPLAIN statement.
    Explain(&'a str),
}

#[derive(serde::Serialize)]
struct JobFile<'a> {
    rest: &'a str,
    jars: Vec<String>,
    config: std::collections::BTreeMap<String, String>,
    statements: &'a [DriverStatement],
}

/// Java options of the driver's gateway JVM (PyFlink reads `JVM_ARGS`).
const DRIVER_JVM_ARGS: &str = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC";

pub fn driver_path() -> PathBuf {
    repo_dir().join("flink").join("driver.py")
}

/// One `driver.py --serve` process.
pub struct DriverSession {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    stderr_path: PathBuf,
}

impl DriverSession {
    /// Starts the driver; its standard error goes to `stderr_path`.
    pub fn start(home: &FlinkHome, stderr_path: &Path) -> Result<DriverSession, FlinkError> {
        if let Some(dir) = stderr_path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| {
                FlinkError::execution(format!("cannot create {}: {e}", dir.display()))
            })?;
        }
        let stderr = std::fs::File::create(stderr_path).map_err(|e| {
            FlinkError::execution(format!("cannot write {}: {e}", stderr_path.display()))
        })?;
        let mut command = Command::new(home.python());
        // The driver's JVM (PyFlink's gateway) only plans and submits jobs,
        // which run on the cluster: C1 alone compiles its short life's hot
        // code for less CPU than tiered C2 (a `lab compare` of three small
        // jobs took 15% less wall time on two cores). A JVM_ARGS of the
        // user's own is left as it is.
        if std::env::var_os("JVM_ARGS").is_none() {
            command.env("JVM_ARGS", DRIVER_JVM_ARGS);
        }
        let mut child = command
            .arg(driver_path())
            .arg("--serve")
            .current_dir(stderr_path.parent().unwrap_or(Path::new(".")))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| {
                FlinkError::execution(format!(
                    "cannot start the PyFlink driver ({}): {e}",
                    home.python().display()
                ))
            })?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped");
        Ok(DriverSession {
            child,
            stdin,
            lines: BufReader::new(stdout).lines(),
            stderr_path: stderr_path.to_path_buf(),
        })
    }

    /// Runs `statements` on the cluster at `rest`; the job file is written
    /// to `run_dir`.
    pub fn run(
        &mut self,
        home: &FlinkHome,
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
        let sent = self
            .stdin
            .as_mut()
            .map(|s| writeln!(s, "{}", job_path.display()).and_then(|_| s.flush()));
        if !matches!(sent, Some(Ok(()))) {
            return Err(self.died());
        }
        let mut jobs: Vec<Submitted> = Vec::new();
        let mut error: Option<FlinkError> = None;
        loop {
            let Some(Ok(line)) = self.lines.next() else {
                return Err(self.died());
            };
            let Ok(ev) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            let statement = ev["statement"].as_i64().unwrap_or(0).max(0) as usize;
            let sinks = || -> Vec<String> {
                ev["sinks"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            };
            match ev["event"].as_str() {
                Some("submitted") => {
                    let s = Submitted {
                        statement,
                        sinks: sinks(),
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
                    let what = if ev["statement"].as_i64() == Some(-1) {
                        job_path.display().to_string()
                    } else {
                        statements
                            .get(statement)
                            .map(|s| first_line(&s.text()))
                            .unwrap_or_default()
                    };
                    error = Some(if ev["phase"].as_str() == Some("run") {
                        FlinkError::execution(format!(
                            "the Flink job of '{what}' failed at {rest}:\n{message}"
                        ))
                    } else {
                        FlinkError::input(format!("Flink rejected '{what}':\n{message}"))
                    });
                }
                Some("done") => break,
                _ => {}
            }
        }
        match error {
            Some(e) => Err(e),
            None => Ok(jobs),
        }
    }

    /// The driver ended (or closed its output) before saying it was done.
    fn died(&mut self) -> FlinkError {
        drop(self.stdin.take());
        let status = self
            .child
            .wait()
            .map(|s| s.to_string())
            .unwrap_or_else(|e| e.to_string());
        let text = std::fs::read_to_string(&self.stderr_path).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        FlinkError::execution(format!(
            "the PyFlink driver exited ({status}); the end of its output ({}):\n{}",
            self.stderr_path.display(),
            lines[lines.len().saturating_sub(15)..].join("\n")
        ))
    }
}

impl Drop for DriverSession {
    fn drop(&mut self) {
        // Closing its input ends the driver after the job file it runs.
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

fn first_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or("");
    if line.chars().count() > 80 {
        format!("{}...", line.chars().take(80).collect::<String>())
    } else {
        line.to_string()
    }
}
