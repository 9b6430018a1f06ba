//! A local standalone Flink cluster: `lab flink start|status|stop`.
//!
//! The cluster is the installed distribution's own daemons (Flink's
//! "Standalone" deployment): `bin/jobmanager.sh start` once and
//! `bin/taskmanager.sh start` once per TaskManager, each a JVM of its own.
//! Everything they write lives under one folder (default `.flink/cluster/`):
//!
//! - `conf/config.yaml`: generated here (ports, memory, slots, directories),
//!   with the distribution's log4j files beside it (`FLINK_CONF_DIR`);
//! - `log/`: each daemon's `.log` and `.out` (`FLINK_LOG_DIR`);
//! - `pid/`: the pid files Flink's `flink-daemon.sh` writes, one line per
//!   process it started (`FLINK_PID_DIR`); `stop` ends exactly those pids,
//!   and only while their command line still names this folder (a pid
//!   reused by another process is left alone);
//! - `tmp/` (`io.tmp.dirs`, RocksDB's working files), `state/` (checkpoints);
//! - `cluster.json`: the REST address and the shape `start` chose.
//!
//! Ports: the REST port (8081 unless taken, then a free one, or
//! `--rest-port`, which must be free) and the JobManager's RPC port (6123
//! unless taken, then a free one) are checked before start; the others
//! (blob server, TaskManager RPC and data) are picked by Flink at random.
//!
//! The REST API serves a TaskManager's standard output (where the capture
//! sink writes) from a copy it keeps for `web.refresh-interval`; 1 s here
//! instead of Flink's 3 s, since every run waits that long after its last
//! job before reading it ([`super::run`]).
//!
//! Memory for a 2-core, 24 GiB machine: the JobManager gets 1 GiB, each
//! TaskManager 1 GiB plus 512 MiB per slot (Flink's default fractions: 40%
//! of its Flink memory is managed memory, which RocksDB uses).

use super::install::{self, Marker, Tools};
use super::rest::Rest;
use super::{write_atomic, FlinkError, FlinkHome};
use indicatif::{ProgressBar, ProgressStyle};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// What `start` chose, recorded in `cluster.json`.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ClusterInfo {
    /// `host:port` of the REST API.
    pub rest: String,
    pub rpc_port: u16,
    pub taskmanagers: u32,
    pub slots: u32,
    pub flink_version: String,
}

impl ClusterInfo {
    pub fn read(dir: &Path) -> Option<ClusterInfo> {
        let text = std::fs::read_to_string(dir.join("cluster.json")).ok()?;
        serde_json::from_str(&text).ok()
    }
}

#[derive(Clone, Debug)]
pub struct StartOptions {
    pub taskmanagers: u32,
    pub slots: u32,
    pub rest_port: Option<u16>,
    /// `taskmanager.memory.process.size` in MB (default: 1024 + 512 per
    /// slot).
    pub taskmanager_memory_mb: Option<u32>,
}

/// The `--add-opens` Flink's own config.yaml gives every JVM on Java 17;
/// used when the distribution's file does not carry the line.
const JAVA_OPTS: &str = "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED \
--add-exports=jdk.compiler/com.sun.tools.javac.api=ALL-UNNAMED \
--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED \
--add-exports=jdk.compiler/com.sun.tools.javac.parser=ALL-UNNAMED \
--add-exports=jdk.compiler/com.sun.tools.javac.tree=ALL-UNNAMED \
--add-exports=jdk.compiler/com.sun.tools.javac.util=ALL-UNNAMED \
--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED \
--add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED \
--add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED \
--add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED \
--add-opens=java.base/java.text=ALL-UNNAMED --add-opens=java.base/java.time=ALL-UNNAMED \
--add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED \
--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED \
--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED";

/// The `env.java.opts.all` line of the distribution's config.yaml.
fn distribution_java_opts(flink_home: &Path) -> String {
    let text =
        std::fs::read_to_string(flink_home.join("conf").join("config.yaml")).unwrap_or_default();
    text.lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("all:").filter(|v| v.contains("--add-")))
        .map(|v| v.trim().to_string())
        .unwrap_or_else(|| JAVA_OPTS.to_string())
}

/// Whether nothing listens on `port` (on loopback and on all interfaces).
pub fn port_free(port: u16) -> bool {
    TcpListener::bind(("127.0.0.1", port)).is_ok() && TcpListener::bind(("0.0.0.0", port)).is_ok()
}

fn free_port() -> Result<u16, FlinkError> {
    TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| FlinkError::execution(format!("cannot find a free port: {e}")))
}

fn choose_port(preferred: u16) -> Result<u16, FlinkError> {
    if port_free(preferred) {
        Ok(preferred)
    } else {
        free_port()
    }
}

fn absolute(dir: &Path) -> Result<PathBuf, FlinkError> {
    std::fs::create_dir_all(dir)
        .and_then(|_| dir.canonicalize())
        .map_err(|e| FlinkError::execution(format!("cannot create {}: {e}", dir.display())))
}

/// The config.yaml of a cluster in `dir`.
pub fn config_yaml(
    dir: &Path,
    o: &StartOptions,
    rest_port: u16,
    rpc_port: u16,
    java_opts: &str,
) -> String {
    let d = |sub: &str| dir.join(sub).display().to_string();
    let tm_mb = o.taskmanager_memory_mb.unwrap_or(1024 + 512 * o.slots);
    format!(
        "# Written by `lab flink start`; rewritten at every start.\n\
         env.java.opts.all: \"{java_opts}\"\n\
         env.log.dir: \"{log}\"\n\
         env.pid.dir: \"{pid}\"\n\
         jobmanager.bind-host: localhost\n\
         jobmanager.rpc.address: localhost\n\
         jobmanager.rpc.port: {rpc_port}\n\
         jobmanager.memory.process.size: 1024m\n\
         jobmanager.execution.failover-strategy: region\n\
         taskmanager.bind-host: localhost\n\
         taskmanager.host: localhost\n\
         taskmanager.numberOfTaskSlots: {slots}\n\
         taskmanager.memory.process.size: {tm_mb}m\n\
         parallelism.default: 1\n\
         rest.address: localhost\n\
         rest.bind-address: localhost\n\
         rest.port: {rest_port}\n\
         web.refresh-interval: 1000\n\
         io.tmp.dirs: \"{tmp}\"\n\
         execution.checkpointing.dir: \"file://{state}/checkpoints\"\n\
         execution.checkpointing.savepoint-dir: \"file://{state}/savepoints\"\n",
        log = d("log"),
        pid = d("pid"),
        slots = o.slots,
        tmp = d("tmp"),
        state = d("state"),
    )
}

/// The pids recorded in the pid files of the cluster in `dir`.
pub fn recorded_pids(dir: &Path) -> Vec<u32> {
    let mut pids = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir.join("pid")) {
        let mut files: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        for f in files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "pid"))
        {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            pids.extend(text.lines().filter_map(|l| l.trim().parse::<u32>().ok()));
        }
    }
    pids
}

/// Whether `pid` is a live process started for the cluster in `dir` (its
/// command line names the cluster's log folder).
pub fn is_ours(pid: u32, dir: &Path) -> bool {
    let proc_dir = PathBuf::from(format!("/proc/{pid}"));
    let stat = std::fs::read_to_string(proc_dir.join("stat")).unwrap_or_default();
    // Field 3, after the parenthesised command: Z is a zombie (dead).
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .unwrap_or("");
    if state.is_empty() || state == "Z" || state == "X" {
        return false;
    }
    let cmdline = std::fs::read(proc_dir.join("cmdline")).unwrap_or_default();
    let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
    let log_dir = dir.join("log").display().to_string();
    cmdline.contains(&log_dir)
}

/// The recorded pids still running as this cluster's processes.
pub fn live_pids(dir: &Path) -> Vec<u32> {
    recorded_pids(dir)
        .into_iter()
        .filter(|&p| is_ours(p, dir))
        .collect()
}

fn daemon(marker: &Marker, dir: &Path, script: &str) -> Result<(), FlinkError> {
    let out = Command::new("bash")
        .arg(marker.flink_home.join("bin").join(script))
        .arg("start")
        .env("FLINK_CONF_DIR", dir.join("conf"))
        .env("FLINK_LOG_DIR", dir.join("log"))
        .env("FLINK_PID_DIR", dir.join("pid"))
        .env("FLINK_IDENT_STRING", "joinlab")
        .output()
        .map_err(|e| FlinkError::execution(format!("cannot run bash {script}: {e}")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(FlinkError::execution(format!(
            "{script} start failed: {}{}",
            String::from_utf8_lossy(&out.stdout).trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

/// Starts a cluster in `dir` and waits until its TaskManagers registered.
pub fn start(home: &FlinkHome, dir: &Path, o: &StartOptions) -> Result<ClusterInfo, FlinkError> {
    let marker = install::require(home)?;
    install::check_java(&Tools::from_env())?;
    if !(1..=16).contains(&o.taskmanagers) || !(1..=64).contains(&o.slots) {
        return Err(FlinkError::input(format!(
            "--taskmanagers {} --slots {}: expected 1..=16 TaskManagers and 1..=64 slots each",
            o.taskmanagers, o.slots
        )));
    }
    let dir = absolute(dir)?;
    let live = live_pids(&dir);
    if !live.is_empty() {
        let at = ClusterInfo::read(&dir)
            .map(|i| format!(" at {}", i.rest))
            .unwrap_or_default();
        return Err(FlinkError::execution(format!(
            "a cluster started from {} is already running{at} (pids {}); `lab flink stop` first",
            dir.display(),
            join(&live)
        )));
    }
    let rest_port = match o.rest_port {
        Some(p) if port_free(p) => p,
        Some(p) => {
            return Err(FlinkError::execution(format!(
                "--rest-port {p}: something already listens on port {p}"
            )))
        }
        None => choose_port(8081)?,
    };
    let rpc_port = loop {
        let p = choose_port(6123)?;
        if p != rest_port {
            break p;
        }
    };
    // A fresh start: stale pid files, old logs and the old record go.
    for sub in ["pid", "log", "conf"] {
        let _ = std::fs::remove_dir_all(dir.join(sub));
    }
    let _ = std::fs::remove_file(dir.join("cluster.json"));
    for sub in ["conf", "log", "pid", "tmp", "state"] {
        std::fs::create_dir_all(dir.join(sub)).map_err(|e| {
            FlinkError::execution(format!("cannot create {}: {e}", dir.join(sub).display()))
        })?;
    }
    let conf = dir.join("conf");
    for f in [
        "log4j.properties",
        "log4j-console.properties",
        "log4j-cli.properties",
        "logback.xml",
        "logback-console.xml",
    ] {
        let src = marker.flink_home.join("conf").join(f);
        if src.exists() {
            std::fs::copy(&src, conf.join(f)).map_err(|e| {
                FlinkError::execution(format!("cannot copy {}: {e}", src.display()))
            })?;
        }
    }
    let yaml = config_yaml(
        &dir,
        o,
        rest_port,
        rpc_port,
        &distribution_java_opts(&marker.flink_home),
    );
    write_atomic(&conf.join("config.yaml"), yaml.as_bytes())
        .map_err(|e| FlinkError::execution(format!("cannot write config.yaml: {e}")))?;

    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    bar.set_message("starting the JobManager");
    let started = (|| {
        daemon(&marker, &dir, "jobmanager.sh")?;
        for i in 0..o.taskmanagers {
            bar.set_message(format!("starting TaskManager {}/{}", i + 1, o.taskmanagers));
            daemon(&marker, &dir, "taskmanager.sh")?;
        }
        let rest = Rest::new(&format!("localhost:{rest_port}"));
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            bar.set_message("waiting for the TaskManagers to register");
            if let Ok(ov) = rest.overview() {
                let tms = ov["taskmanagers"].as_u64().unwrap_or(0);
                let slots = ov["slots-total"].as_u64().unwrap_or(0);
                if tms == u64::from(o.taskmanagers) && slots == u64::from(o.taskmanagers * o.slots)
                {
                    return Ok(ov["flink-version"].as_str().unwrap_or("?").to_string());
                }
            }
            if live_pids(&dir).len() < 1 + o.taskmanagers as usize {
                return Err(FlinkError::execution(format!(
                    "a Flink process exited during start-up{}",
                    log_tail(&dir)
                )));
            }
            if Instant::now() > deadline {
                return Err(FlinkError::execution(format!(
                    "the cluster did not come up within 120 s{}",
                    log_tail(&dir)
                )));
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    })();
    bar.finish_and_clear();
    let version = match started {
        Ok(v) => v,
        Err(e) => {
            let _ = stop(&dir);
            return Err(e);
        }
    };
    let info = ClusterInfo {
        rest: format!("localhost:{rest_port}"),
        rpc_port,
        taskmanagers: o.taskmanagers,
        slots: o.slots,
        flink_version: version,
    };
    let json = serde_json::to_string_pretty(&info).expect("serialises");
    write_atomic(&dir.join("cluster.json"), json.as_bytes())
        .map_err(|e| FlinkError::execution(format!("cannot write cluster.json: {e}")))?;
    Ok(info)
}

/// The last lines of the cluster's logs, for a failed start.
fn log_tail(dir: &Path) -> String {
    let mut out = String::new();
    if let Ok(entries) = std::fs::read_dir(dir.join("log")) {
        let mut files: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            let tail = &lines[lines.len().saturating_sub(5)..];
            if !tail.is_empty() {
                out.push_str(&format!("\n--- {}\n{}", f.display(), tail.join("\n")));
            }
        }
    }
    out
}

fn join(pids: &[u32]) -> String {
    pids.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn signal(pid: u32, sig: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .output();
}

/// Ends the processes recorded for the cluster in `dir` (SIGTERM, then
/// SIGKILL after 20 s) and removes the record.
pub fn stop(dir: &Path) -> Result<String, FlinkError> {
    let dir = match dir.canonicalize() {
        Ok(d) => d,
        Err(_) => return Ok(format!("no cluster recorded in {}", dir.display())),
    };
    let recorded = recorded_pids(&dir);
    let live: Vec<u32> = recorded
        .iter()
        .copied()
        .filter(|&p| is_ours(p, &dir))
        .collect();
    for &p in &live {
        signal(p, "TERM");
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut left: Vec<u32> = live.clone();
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
        left.retain(|&p| is_ours(p, &dir));
    }
    for &p in &left {
        signal(p, "KILL");
    }
    let killed = left.clone();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        left.retain(|&p| is_ours(p, &dir));
    }
    if !left.is_empty() {
        return Err(FlinkError::execution(format!(
            "processes {} of the cluster in {} did not end",
            join(&left),
            dir.display()
        )));
    }
    let _ = std::fs::remove_dir_all(dir.join("pid"));
    let _ = std::fs::remove_file(dir.join("cluster.json"));
    if live.is_empty() {
        return Ok(format!(
            "no process of the cluster in {} is running",
            dir.display()
        ));
    }
    let mut msg = format!(
        "stopped {} process(es) of the cluster in {}: pids {}",
        live.len(),
        dir.display(),
        join(&live)
    );
    if !killed.is_empty() {
        msg.push_str(&format!(" ({} needed SIGKILL)", join(&killed)));
    }
    Ok(msg)
}

/// The cluster's overview, TaskManagers and jobs, from its REST API.
pub fn status(dir: &Path, rest_address: Option<&str>) -> Result<String, FlinkError> {
    let info = ClusterInfo::read(dir);
    let address = match (rest_address, &info) {
        (Some(a), _) => {
            super::rest::check_address(a)?;
            a.to_string()
        }
        (None, Some(i)) => i.rest.clone(),
        (None, None) => {
            return Err(FlinkError::execution(format!(
            "no local cluster is recorded in {}: `lab flink start`, or give --flink-rest HOST:PORT",
            dir.display()
        )))
        }
    };
    let rest = Rest::new(&address);
    let ov = rest.overview()?;
    let mut out = format!(
        "Flink {} at {}: {} TaskManager(s), {} slot(s) ({} free); jobs: {} running, {} finished, {} failed, {} cancelled\n",
        ov["flink-version"].as_str().unwrap_or("?"),
        address,
        ov["taskmanagers"],
        ov["slots-total"],
        ov["slots-available"],
        ov["jobs-running"],
        ov["jobs-finished"],
        ov["jobs-failed"],
        ov["jobs-cancelled"],
    );
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    // The local cluster's own processes, to name each TaskManager's.
    let live = match (&info, rest_address) {
        (Some(i), given) if given.is_none_or(|a| a == i.rest) => live_pids(&dir),
        _ => Vec::new(),
    };
    let tms = rest.get("/taskmanagers")?;
    for tm in tms["taskmanagers"].as_array().into_iter().flatten() {
        let id = tm["id"].as_str().unwrap_or("?");
        let pid = super::process::port_of_taskmanager_id(id)
            .and_then(|port| super::process::listening_on(port, &live))
            .map(|pid| format!(" (pid {pid})"))
            .unwrap_or_default();
        out.push_str(&format!(
            "  TaskManager {id}{pid}: {} slot(s), {} free\n",
            tm["slotsNumber"], tm["freeSlots"],
        ));
    }
    if rest_address.is_none() {
        out.push_str(&format!(
            "  processes started by `lab flink start` (pid files in {}): {}\n",
            dir.join("pid").display(),
            if live.is_empty() {
                "none running".to_string()
            } else {
                join(&live)
            }
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_sizes_memory_and_names_the_folders() {
        let o = StartOptions {
            taskmanagers: 2,
            slots: 2,
            rest_port: None,
            taskmanager_memory_mb: None,
        };
        let y = config_yaml(Path::new("/c"), &o, 8081, 6123, "-X");
        assert!(y.contains("taskmanager.numberOfTaskSlots: 2\n"));
        assert!(y.contains("taskmanager.memory.process.size: 2048m\n"));
        let bigger = StartOptions {
            taskmanager_memory_mb: Some(6144),
            ..o
        };
        let y = config_yaml(Path::new("/c"), &bigger, 8081, 6123, "-X");
        assert!(y.contains("taskmanager.memory.process.size: 6144m\n"));
        assert!(y.contains("env.pid.dir: \"/c/pid\"\n"));
        assert!(y.contains("rest.port: 8081\n"));
        assert!(y.contains("jobmanager.rpc.port: 6123\n"));
    }

    #[test]
    fn a_taken_port_is_not_free() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        assert!(!port_free(port));
        assert_ne!(choose_port(port).unwrap(), port);
    }

    #[test]
    fn pid_files_are_read_and_foreign_pids_are_not_ours() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("pid")).unwrap();
        std::fs::write(
            dir.path().join("pid/flink-joinlab-taskexecutor.pid"),
            "12\n34\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("pid/flink-joinlab-standalonesession.pid"),
            "5\n",
        )
        .unwrap();
        assert_eq!(recorded_pids(dir.path()), vec![5, 12, 34]);
        // This test process is alive but not started for that folder.
        assert!(!is_ours(std::process::id(), dir.path()));
        assert!(live_pids(dir.path()).is_empty());
        // Stopping leaves foreign processes alone and clears the record.
        let msg = stop(dir.path()).unwrap();
        assert!(msg.contains("no process"), "{msg}");
        assert!(!dir.path().join("pid").exists());
    }

    #[test]
    fn java_opts_come_from_the_distribution() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("conf")).unwrap();
        std::fs::write(
            dir.path().join("conf/config.yaml"),
            "env:\n  java:\n    opts:\n      all: --add-opens=a=b\n",
        )
        .unwrap();
        assert_eq!(distribution_java_opts(dir.path()), "--add-opens=a=b");
        assert_eq!(distribution_java_opts(Path::new("/nonexistent")), JAVA_OPTS);
    }
}
