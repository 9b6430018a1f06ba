//! Flink runs for `lab campaign` and `lab tune`: which cluster, and one
//! driver for every run.
//!
//! The cluster: `--flink-rest HOST:PORT` when given (it must answer);
//! otherwise the local cluster of `.flink/cluster/` when one is running
//! (it is used and left running); otherwise the campaign starts one there
//! itself, two TaskManagers of two slots as `lab flink start` does, and
//! stops it when it ends, also when a run fails. A campaign that is killed
//! leaves that cluster running: `lab flink stop` stops it (Ctrl-C reaches
//! its processes too, which share the campaign's process group).

use super::cluster::{self, ClusterInfo, StartOptions};
use super::run::{FlinkOutcome, FlinkRun, FlinkSession};
use super::{FlinkError, FlinkHome};
use std::path::{Path, PathBuf};

/// A cluster and a driver for a campaign's (or a tune's) Flink runs.
pub struct FlinkRunner {
    session: FlinkSession,
    /// The folder of a cluster this runner started (and stops).
    started: Option<PathBuf>,
    quiet: bool,
}

/// One run of a script on Flink.
pub struct FlinkScriptRun<'a> {
    pub script: &'a Path,
    pub sql: &'a str,
    /// Configuration both engines know (as `--set`).
    pub sets: &'a [(String, String)],
    /// Configuration for Flink only.
    pub flink_sets: &'a [(String, String)],
    pub only_sinks: Option<&'a [String]>,
}

impl FlinkRunner {
    /// Connects to the cluster at `rest`, or the running local cluster, or
    /// starts one; `say` gets a line saying which.
    pub fn open(
        rest: Option<&str>,
        quiet: bool,
        say: &mut dyn FnMut(String),
    ) -> Result<FlinkRunner, FlinkError> {
        if let Some(address) = rest {
            let session = FlinkSession::connect(Some(address))?;
            say(format!(
                "Flink runs on the cluster at {} (Flink {})",
                session.address, session.flink_version
            ));
            return Ok(FlinkRunner {
                session,
                started: None,
                quiet,
            });
        }
        let home = FlinkHome::from_env();
        let dir = home.cluster_dir();
        if let Some(info) = running_local(&dir) {
            let session = FlinkSession::connect(Some(&info.rest))?;
            say(format!(
                "Flink runs on the local cluster at {} (started by `lab flink start`; left running)",
                session.address
            ));
            return Ok(FlinkRunner {
                session,
                started: None,
                quiet,
            });
        }
        let shape = StartOptions {
            taskmanagers: 2,
            slots: 2,
            rest_port: None,
        };
        let info = cluster::start(&home, &dir, &shape)?;
        say(format!(
            "started a local Flink {} cluster at {} for these runs (1 JobManager, {} TaskManagers x \
             {} slots; files in {}); it is stopped at the end (`lab flink stop` if this process is \
             killed)",
            info.flink_version,
            info.rest,
            info.taskmanagers,
            info.slots,
            dir.display()
        ));
        let session = match FlinkSession::connect(Some(&info.rest)) {
            Ok(s) => s,
            Err(e) => {
                let _ = cluster::stop(&dir);
                return Err(e);
            }
        };
        Ok(FlinkRunner {
            session,
            started: Some(dir),
            quiet,
        })
    }

    /// The cluster's REST address.
    pub fn address(&self) -> &str {
        &self.session.address
    }

    /// Runs a script; counts by kind only, no rows.
    pub fn run(&mut self, r: &FlinkScriptRun) -> Result<Vec<FlinkOutcome>, FlinkError> {
        let sets: Vec<(String, String)> = r.sets.iter().chain(r.flink_sets).cloned().collect();
        let report = self.session.run(&FlinkRun {
            script: r.script,
            sql: r.sql,
            sets: &sets,
            params: &[],
            rows: false,
            quiet: self.quiet,
            only_sinks: r.only_sinks,
        })?;
        Ok(report.outcomes)
    }
}

impl Drop for FlinkRunner {
    fn drop(&mut self) {
        if let Some(dir) = self.started.take() {
            match cluster::stop(&dir) {
                Ok(msg) => eprintln!("lab: {msg}"),
                Err(e) => eprintln!("lab: stopping the cluster this run started: {e}"),
            }
        }
    }
}

/// The local cluster recorded in `dir`, when its processes run and its
/// REST API answers.
fn running_local(dir: &Path) -> Option<ClusterInfo> {
    let info = ClusterInfo::read(dir)?;
    let dir = dir.canonicalize().ok()?;
    if cluster::live_pids(&dir).is_empty() {
        return None;
    }
    super::rest::Rest::new(&info.rest).overview().ok()?;
    Some(info)
}
