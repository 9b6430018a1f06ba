//! A `lab run` on RocksDB killed with SIGKILL mid-run leaves its state
//! directory and its sink's temporary file; the next run removes both
//! (they carry the killed process's id, see `operators/src/debris.rs`),
//! and its own as it ends.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SCRIPT: &str = "SET 'state.backend.type' = 'rocksdb';
CREATE TABLE src (k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '${rows}',
  'fields.k.min' = '1', 'fields.k.max' = '100000', 'fields.v.min' = '1', 'fields.v.max' = '9',
  'seed' = '1');
CREATE TABLE per_key (k BIGINT, n BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE copy (k BIGINT, v BIGINT) WITH ('connector' = 'filesystem', 'path' = 'copy.csv', 'format' = 'csv');
EXECUTE STATEMENT SET BEGIN
INSERT INTO per_key SELECT k, COUNT(*) FROM src GROUP BY k;
INSERT INTO copy SELECT k, v FROM src;
END;
";

fn lab(dir: &Path, rows: u64) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lab"));
    cmd.arg("run")
        .arg(dir.join("s.sql"))
        .arg("--param")
        .arg(format!("rows={rows}"))
        .arg("--set")
        .arg(format!("lab.state.dir={}", dir.join("state").display()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

/// Names in `dir` that carry process id `pid`: state directories
/// `joinlab-rocksdb-<pid>-*` and temporary files `.<name>.<pid>-<n>.tmp`.
fn of_process(dir: &Path, pid: u32) -> Vec<PathBuf> {
    let dir_prefix = format!("joinlab-rocksdb-{pid}-");
    let file_mark = format!(".{pid}-");
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with(&dir_prefix)
                || (name.starts_with('.') && name.ends_with(".tmp") && name.contains(&file_mark))
        })
        .collect()
}

/// Everything in `dir`, by name.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn the_next_run_removes_what_a_killed_run_left() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("s.sql"), SCRIPT).unwrap();
    let state = dir.join("state");

    // A run long enough to be killed in the middle: killed once both its
    // state directory and its sink's temporary file exist.
    let mut killed = lab(dir, 200_000_000).spawn().unwrap();
    let pid = killed.id();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let has_state = !of_process(&state, pid).is_empty();
        let has_tmp = !of_process(dir, pid).is_empty();
        if has_state && has_tmp {
            break;
        }
        assert!(
            killed.try_wait().unwrap().is_none(),
            "the run ended before it could be killed"
        );
        assert!(
            Instant::now() < deadline,
            "no state directory and temporary file after 120 s: {:?} {:?}",
            names(dir),
            names(&state)
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // Let it write some state, then SIGKILL (what `Child::kill` sends).
    std::thread::sleep(Duration::from_millis(300));
    killed.kill().unwrap();
    let status = killed.wait().unwrap();
    assert!(!status.success());
    let debris: Vec<PathBuf> = of_process(&state, pid)
        .into_iter()
        .chain(of_process(dir, pid))
        .collect();
    assert_eq!(debris.len(), 2, "what the killed run left: {debris:?}");
    assert!(
        !dir.join("copy.csv").exists(),
        "a partial sink file looks complete"
    );

    let next = lab(dir, 1000).output().unwrap();
    assert!(
        next.status.success(),
        "{}",
        String::from_utf8_lossy(&next.stderr)
    );
    for d in &debris {
        assert!(!d.exists(), "{} of the killed run remains", d.display());
    }
    // Nothing of either run is left beside the complete outputs.
    assert_eq!(names(&state), Vec::<String>::new());
    assert_eq!(names(dir), ["copy.csv", "s.sql", "state"]);
    let copy = std::fs::read_to_string(dir.join("copy.csv")).unwrap();
    assert_eq!(copy.lines().count(), 1000);
}
