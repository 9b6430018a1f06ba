//! Flink runs for `lab campaign` and `lab tune`: which cluster, and one
//! driver for every run.
//!
//! The cluster: `--flink-rest HOST:PORT` when given (it must answer);
//! otherwise the local cluster of `.flink/cluster/` when one is running
//! (it is used and left running); otherwise the campaign starts one there
//! itself, two TaskManagers of two slots as `lab flink start` does, and
//! stops it when it ends, also when a run fails, or when the lab is
//! interrupted (Ctrl-C, SIGTERM, SIGHUP: the cluster's JVMs ignore SIGINT,
//! since Flink's scripts start them in the background of a non-interactive
//! shell, so the lab stops them itself, then exits with 130). Killed with
//! SIGKILL, it leaves the cluster running: `lab flink stop` stops it.

use super::cluster::{self, ClusterInfo, StartOptions};
use super::run::{FlinkOutcome, FlinkRun, FlinkSession};
use super::{FlinkError, FlinkHome};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once};
use std::time::Duration;

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
            taskmanager_memory_mb: None,
        };
        // From here an interruption stops what `start` began.
        stop_on_interrupt(Some(dir.clone()));
        let info = cluster::start(&home, &dir, &shape).inspect_err(|_| stop_on_interrupt(None))?;
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
                stop_started();
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
        if self.started.take().is_some() {
            stop_started();
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

/// The cluster a runner started and has not stopped yet: stopped once,
/// by the runner's end or by an interruption, whichever comes first (the
/// lock is held while stopping, so the other waits for it).
static TO_STOP: Mutex<Option<PathBuf>> = Mutex::new(None);
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static WATCH: Once = Once::new();

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// From now on, SIGINT, SIGTERM and SIGHUP stop the cluster in `dir` (when
/// given) and end the lab with exit code 130. The handler only sets a flag
/// (all a signal handler may do); a thread watches it. (Not the `ctrlc`
/// crate: its `nix` dependency turns on a libc feature that makes every
/// checkout rebuild RocksDB.)
fn stop_on_interrupt(dir: Option<PathBuf>) {
    *TO_STOP.lock().unwrap_or_else(|e| e.into_inner()) = dir;
    WATCH.call_once(|| {
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            let handler = on_signal as extern "C" fn(libc::c_int);
            // SAFETY: the handler only stores to an atomic.
            unsafe {
                libc::signal(sig, handler as libc::sighandler_t);
            }
        }
        std::thread::spawn(|| loop {
            std::thread::sleep(Duration::from_millis(100));
            if INTERRUPTED.load(Ordering::SeqCst) {
                crate::output::errln!("\nlab: interrupted");
                stop_started();
                std::process::exit(130);
            }
        });
    });
}

/// Stops the cluster a runner started, unless it was stopped already.
fn stop_started() {
    let mut to_stop = TO_STOP.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(dir) = to_stop.take() {
        match cluster::stop(&dir) {
            Ok(msg) => crate::output::errln!("lab: {msg}"),
            Err(e) => crate::output::errln!("lab: stopping the cluster this run started: {e}"),
        }
    }
}
