//! Flink itself as the lab's second engine.
//!
//! `lab flink install` makes a project-local virtualenv with PyFlink, whose
//! package bundles a whole Flink distribution (`bin/`, `lib/`, `conf/`), and
//! builds the lab's capture sink against it ([`install`]). `lab flink
//! start|status|stop` runs a standalone cluster of separate JVMs from that
//! distribution with its configuration, logs, pids and state under one
//! folder ([`cluster`]). `lab run --engine flink` runs a script there: the
//! lab's own sources are materialised to files with the same rows in the
//! same order and every sink becomes a capture sink with the same meaning
//! ([`rewrite`], [`data`]), a PyFlink driver submits the statements
//! ([`driver`]), and the job's changelog, result and metrics come back
//! through the JobManager's REST API ([`rest`], [`capture`], [`run`]).
//! `lab compare` runs a script on both engines ([`compare`]); `lab export`
//! writes a bundle for any Flink 2.x cluster ([`export`]).
//!
//! Everything lives under `<repo>/.flink/` (override: `JOINLAB_FLINK_DIR`):
//! `venv/` (PyFlink), `lib/lab-capture.jar`, `cluster/` (a local cluster's
//! `conf/`, `log/`, `pid/`, `tmp/`, `state/` and `cluster.json`), `data/`
//! (materialised inputs, reused while their definition is unchanged) and
//! `runs/` (per run: the driver's job file and output).

pub mod campaign;
pub mod capture;
pub mod checkpoint;
pub mod cluster;
pub mod compare;
pub mod data;
pub mod driver;
pub mod export;
pub mod install;
pub mod process;
pub mod rest;
pub mod rewrite;
pub mod run;

use clap::{Subcommand, ValueEnum};
use std::path::{Path, PathBuf};

/// The engine a script runs on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Engine {
    /// The lab's own engine.
    #[default]
    Lab,
    /// A Flink cluster (`--flink-rest`, default: the local cluster).
    Flink,
}

impl Engine {
    /// `lab` or `flink`, as `--engine` and campaign specs write it.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Lab => "lab",
            Engine::Flink => "flink",
        }
    }
}

/// An error with the exit code it maps to: 2 for bad input (a script, an
/// option, a statement Flink rejects), 3 for a failure of execution (a
/// missing tool, a cluster that does not answer, a job that fails).
#[derive(Debug)]
pub struct FlinkError {
    pub code: u8,
    pub message: String,
}

impl FlinkError {
    pub fn input(message: impl Into<String>) -> FlinkError {
        FlinkError {
            code: crate::exit_code::BAD_INPUT,
            message: message.into(),
        }
    }

    pub fn execution(message: impl Into<String>) -> FlinkError {
        FlinkError {
            code: crate::exit_code::EXECUTION_FAILED,
            message: message.into(),
        }
    }
}

impl From<crate::output::OutputError> for FlinkError {
    fn from(e: crate::output::OutputError) -> FlinkError {
        FlinkError::execution(e.to_string())
    }
}

impl std::fmt::Display for FlinkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// The repository this binary was built from: `flink/` (requirements,
/// driver, capture sink sources) is read from there.
pub fn repo_dir() -> PathBuf {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    dir.canonicalize().unwrap_or(dir)
}

/// Where the lab keeps Flink's files.
#[derive(Clone, Debug)]
pub struct FlinkHome {
    pub dir: PathBuf,
}

impl FlinkHome {
    /// `JOINLAB_FLINK_DIR`, or `<repo>/.flink`.
    pub fn from_env() -> FlinkHome {
        match std::env::var_os("JOINLAB_FLINK_DIR") {
            Some(d) if !d.is_empty() => FlinkHome { dir: d.into() },
            _ => FlinkHome {
                dir: repo_dir().join(".flink"),
            },
        }
    }

    pub fn venv(&self) -> PathBuf {
        self.dir.join("venv")
    }
    pub fn python(&self) -> PathBuf {
        self.venv().join("bin").join("python")
    }
    pub fn capture_jar(&self) -> PathBuf {
        self.dir.join("lib").join("lab-capture.jar")
    }
    /// The default local cluster's folder.
    pub fn cluster_dir(&self) -> PathBuf {
        self.dir.join("cluster")
    }
    pub fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }
    pub fn runs_dir(&self) -> PathBuf {
        self.dir.join("runs")
    }
}

/// `lab flink ...`
#[derive(Subcommand, Debug)]
pub enum FlinkCommand {
    /// Creates .flink/venv with the pinned apache-flink (flink/requirements.txt)
    /// and builds the lab's capture sink; does nothing when both are there.
    #[command(after_help = "Example:\n  lab flink install")]
    Install,
    /// Starts a local standalone cluster: one JobManager and N TaskManagers,
    /// each its own JVM, from the installed distribution.
    #[command(after_help = "Examples:\n  \
        lab flink start\n  \
        lab flink start --taskmanagers 2 --slots 4 --rest-port 8081")]
    Start {
        /// TaskManager processes.
        #[arg(long, default_value_t = 2)]
        taskmanagers: u32,
        /// Task slots per TaskManager.
        #[arg(long, default_value_t = 2)]
        slots: u32,
        /// REST port (default: 8081, or a free port when 8081 is taken).
        #[arg(long)]
        rest_port: Option<u16>,
        /// Memory of each TaskManager process in MB
        /// (`taskmanager.memory.process.size`; default: 1024 + 512 per slot).
        #[arg(long, value_name = "MB", value_parser = clap::value_parser!(u32).range(1024..=1_048_576))]
        taskmanager_memory: Option<u32>,
        /// The cluster's folder (config, logs, pids, state).
        #[arg(long, value_name = "DIR")]
        cluster_dir: Option<PathBuf>,
    },
    /// Shows the cluster's TaskManagers, slots and jobs (from its REST API).
    #[command(after_help = "Examples:\n  \
        lab flink status\n  \
        lab flink status --flink-rest flink-jm:8081")]
    Status {
        /// A cluster's REST address (default: the local cluster).
        #[arg(long, value_name = "HOST:PORT")]
        flink_rest: Option<String>,
        /// The local cluster's folder (default: .flink/cluster).
        #[arg(long, value_name = "DIR")]
        cluster_dir: Option<PathBuf>,
    },
    /// Stops the local cluster: ends exactly the processes `start` recorded.
    #[command(after_help = "Example:\n  lab flink stop")]
    Stop {
        /// The local cluster's folder (default: .flink/cluster).
        #[arg(long, value_name = "DIR")]
        cluster_dir: Option<PathBuf>,
    },
}

/// Runs a `lab flink` command.
pub fn dispatch(cmd: &FlinkCommand) -> Result<(), FlinkError> {
    let home = FlinkHome::from_env();
    let cluster_dir = |d: &Option<PathBuf>| d.clone().unwrap_or_else(|| home.cluster_dir());
    match cmd {
        FlinkCommand::Install => {
            let report = install::install(&home, &install::Tools::from_env())?;
            crate::output::outln!("{report}")?;
            Ok(())
        }
        FlinkCommand::Start {
            taskmanagers,
            slots,
            rest_port,
            taskmanager_memory,
            cluster_dir: d,
        } => {
            let info = cluster::start(
                &home,
                &cluster_dir(d),
                &cluster::StartOptions {
                    taskmanagers: *taskmanagers,
                    slots: *slots,
                    rest_port: *rest_port,
                    taskmanager_memory_mb: *taskmanager_memory,
                },
            )?;
            crate::output::outln!(
                "Flink {} cluster at {}: 1 JobManager, {} TaskManager(s) x {} slot(s); config, logs and pids in {}",
                info.flink_version,
                info.rest,
                info.taskmanagers,
                info.slots,
                cluster_dir(d).display()
            )?;
            Ok(())
        }
        FlinkCommand::Status {
            flink_rest,
            cluster_dir: d,
        } => {
            crate::output::out(&cluster::status(&cluster_dir(d), flink_rest.as_deref())?)?;
            Ok(())
        }
        FlinkCommand::Stop { cluster_dir: d } => {
            crate::output::outln!("{}", cluster::stop(&cluster_dir(d))?)?;
            Ok(())
        }
    }
}

/// The REST address to use: the one given, or the local cluster's.
pub fn rest_address(given: Option<&str>, home: &FlinkHome) -> Result<String, FlinkError> {
    if let Some(a) = given {
        return rest::check_address(a).map(|_| a.to_string());
    }
    match cluster::ClusterInfo::read(&home.cluster_dir()) {
        Some(info) => Ok(info.rest),
        None => Err(FlinkError::execution(format!(
            "no local Flink cluster is recorded in {}: start one with `lab flink start` \
             or give --flink-rest HOST:PORT",
            home.cluster_dir().display()
        ))),
    }
}

/// Writes `bytes` to `path` through a temporary file renamed into place.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_file_name(format!(
        ".{}.{}.tmp",
        path.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default(),
        std::process::id()
    ));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}
