//! Exactly-once recovery after `kill -9`: a `lab run` that takes
//! checkpoints is killed at pseudo-random moments, then started again
//! with `--from-checkpoint latest` (or afresh when it was killed before
//! its first checkpoint). Its `--changelog` and `--result` files and its
//! filesystem sink's file must equal, byte for byte, those of a run never
//! killed: no change lost, none written twice. Aggregates (one at a time,
//! mini-batch, local-global) and joins, on both backends (RocksDB with
//! full and incremental checkpoints), at parallelism 1 and 2. And a missing, cut-short or corrupt checkpoint is refused with
//! exit code 2, overwriting nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

/// An aggregate and a filesystem copy of the same source, one job.
const AGG: &str = "
CREATE TABLE src (k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '${rows}',
  'fields.k.kind' = 'random', 'fields.k.min' = '1', 'fields.k.max' = '5000',
  'fields.v.min' = '1', 'fields.v.max' = '100', 'seed' = '3');
CREATE TABLE per_key (k BIGINT, cnt BIGINT, total BIGINT)
  WITH ('connector' = 'blackhole');
CREATE TABLE copy (k BIGINT, v BIGINT)
  WITH ('connector' = 'filesystem', 'path' = 'copy.csv', 'format' = 'csv');
EXECUTE STATEMENT SET BEGIN
INSERT INTO per_key SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k;
INSERT INTO copy SELECT k, v FROM src WHERE v > 90;
END;
";

/// Two upsert streams LEFT JOINed on their tenant.
const JOIN: &str = "
CREATE TABLE t0 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${rows}', 'number-of-changes' = '${rows}',
  'update-ratio' = '0.5', 'payload-length' = '8', 'table-index' = '0', 'seed' = '1');
CREATE TABLE t1 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '${rows}', 'number-of-changes' = '${rows}',
  'update-ratio' = '0.5', 'payload-length' = '8', 'table-index' = '1', 'seed' = '1');
CREATE TABLE joined (tenant_id BIGINT, p0 STRING, p1 STRING)
  WITH ('connector' = 'blackhole');
INSERT INTO joined
SELECT t0.tenant_id, t0.payload, t1.payload FROM t0
LEFT JOIN t1 ON t0.tenant_id = t1.tenant_id;
";

struct Case {
    name: &'static str,
    script: &'static str,
    rows: u64,
    sets: Vec<&'static str>,
}

const MINI_BATCH: [&str; 3] = [
    "table.exec.mini-batch.enabled=true",
    "table.exec.mini-batch.allow-latency=1 h",
    "table.exec.mini-batch.size=500",
];

fn cases() -> Vec<Case> {
    let with = |base: &[&'static str], more: &[&'static str]| {
        base.iter().chain(more).copied().collect::<Vec<_>>()
    };
    vec![
        Case {
            name: "aggregate, heap",
            script: AGG,
            rows: 200_000,
            sets: vec!["state.backend.type=hashmap"],
        },
        Case {
            name: "mini-batch aggregate, rocksdb, x2",
            script: AGG,
            rows: 100_000,
            sets: with(
                &MINI_BATCH,
                &["state.backend.type=rocksdb", "parallelism.default=2"],
            ),
        },
        Case {
            name: "local-global aggregate, heap, x2",
            script: AGG,
            rows: 200_000,
            sets: with(
                &MINI_BATCH,
                &[
                    "state.backend.type=hashmap",
                    "parallelism.default=2",
                    "table.optimizer.agg-phase-strategy=TWO_PHASE",
                ],
            ),
        },
        Case {
            name: "aggregate, rocksdb, incremental",
            script: AGG,
            rows: 60_000,
            sets: vec![
                "state.backend.type=rocksdb",
                "execution.checkpointing.incremental=true",
            ],
        },
        Case {
            name: "join, heap, x2",
            script: JOIN,
            rows: 100_000,
            sets: vec!["state.backend.type=hashmap", "parallelism.default=2"],
        },
        Case {
            name: "mini-batch join, rocksdb, incremental",
            script: JOIN,
            rows: 20_000,
            sets: with(
                &MINI_BATCH,
                &[
                    "state.backend.type=rocksdb",
                    "execution.checkpointing.incremental=true",
                ],
            ),
        },
    ]
}

/// `lab run` of `case` in `dir`, checkpointing into `dir/chk`.
fn lab(dir: &Path, case: &Case, from_latest: bool) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lab"));
    cmd.current_dir(dir)
        .arg("run")
        .arg("s.sql")
        .arg("--quiet")
        .arg("--param")
        .arg(format!("rows={}", case.rows))
        .args(["--changelog", "changelog.csv", "--result", "result.csv"]);
    let chk = dir.join("chk");
    let state = dir.join("state");
    let sets = [
        "lab.clock=deterministic".to_string(),
        "lab.source.batch-size=500".to_string(),
        // About eight checkpoints a run.
        format!("execution.checkpointing.interval={} ms", case.rows / 8),
        format!("execution.checkpointing.dir={}", chk.display()),
        "execution.checkpointing.num-retained=2".to_string(),
        format!("lab.state.dir={}", state.display()),
    ];
    for s in sets
        .iter()
        .map(String::as_str)
        .chain(case.sets.iter().copied())
    {
        cmd.arg("--set").arg(s);
    }
    if from_latest {
        cmd.args(["--from-checkpoint", "latest"]);
    }
    cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    cmd
}

fn ok(out: Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The output files of a finished run, by name, with their bytes.
fn outputs(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".csv"))
        .map(|n| {
            let bytes = std::fs::read(dir.join(&n)).unwrap();
            (n, bytes)
        })
        .collect();
    v.sort();
    v
}

/// The id of the newest completed checkpoint in `dir/chk`.
fn latest_checkpoint(dir: &Path) -> Option<u64> {
    std::fs::read_dir(dir.join("chk"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join("_metadata").is_file())
        .filter_map(|e| e.file_name().to_str()?.strip_prefix("chk-")?.parse().ok())
        .max()
}

/// A fixed pseudo-random sequence in [0, 1).
struct Moments(u64);

impl Moments {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn fresh(dir: &Path, script: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("s.sql"), script).unwrap();
}

#[test]
fn a_run_killed_at_random_moments_resumes_to_the_same_files() {
    let tmp = tempfile::tempdir().unwrap();
    let mut moments = Moments(19);
    let mut resumed = 0;
    let mut trials = 0;
    for case in cases() {
        // The run never killed, and how long it takes.
        let reference = tmp.path().join(format!("ref-{trials}"));
        fresh(&reference, case.script);
        let t = Instant::now();
        ok(lab(&reference, &case, false).output().unwrap(), case.name);
        let wall = t.elapsed();
        let expected = outputs(&reference);
        // The last checkpoint, taken when the input has ended.
        let last = latest_checkpoint(&reference).unwrap();
        assert!(expected.len() >= 2, "{}: {:?}", case.name, expected.len());
        // Kills land by wall time, which a loaded machine stretches: each
        // case is killed until four kills came mid-run after a checkpoint
        // (at most 15 times), so the count below does not hang on timing.
        let (mut case_resumed, mut case_trials) = (0, 0);
        while case_resumed < 4 && case_trials < 15 {
            case_trials += 1;
            trials += 1;
            let dir = tmp.path().join(format!("trial-{trials}"));
            fresh(&dir, case.script);
            let at = wall.mul_f64(0.15 + 0.8 * moments.next());
            let mut child = lab(&dir, &case, false).spawn().unwrap();
            std::thread::sleep(at);
            // SIGKILL (what `Child::kill` sends); a run that ended first
            // is simply done.
            let _ = child.kill();
            let status = child.wait().unwrap();
            let at = format!("{} killed after {at:?} of {wall:?}", case.name);
            if !status.success() {
                let from = latest_checkpoint(&dir);
                // Killed before its input ended, after a checkpoint.
                let mid_run = from.is_some_and(|id| id < last) as usize;
                resumed += mid_run;
                case_resumed += mid_run;
                ok(lab(&dir, &case, from.is_some()).output().unwrap(), &at);
            }
            let got = outputs(&dir);
            let names =
                |v: &[(String, Vec<u8>)]| v.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
            assert_eq!(names(&got), names(&expected), "{at}");
            for ((name, a), (_, b)) in got.iter().zip(&expected) {
                assert!(a == b, "{at}: {name} differs from the uninterrupted run's");
            }
            // Nothing pending is left beside the complete files.
            let pending: Vec<PathBuf> = std::fs::read_dir(&dir)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().ends_with(".inprogress"))
                .collect();
            assert!(pending.is_empty(), "{at}: {pending:?}");
        }
    }
    assert!(
        resumed >= 20,
        "only {resumed} of {trials} kills came mid-run after a checkpoint"
    );
}

#[test]
fn a_bad_checkpoint_is_refused_and_nothing_is_overwritten() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    fresh(dir, AGG);
    let case = Case {
        name: "aggregate",
        script: AGG,
        rows: 30_000,
        sets: vec![],
    };
    ok(lab(dir, &case, false).output().unwrap(), "first run");
    let before = outputs(dir);
    let chk = dir.join("chk");
    let latest = std::fs::read_dir(&chk)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .max()
        .unwrap()
        .join("_metadata");
    let good = std::fs::read(&latest).unwrap();
    // A pending output a resumed run would reopen, to see it untouched.
    std::fs::write(dir.join(".changelog-per_key.csv.inprogress"), b"op,k\n").unwrap();
    let snapshot = |dir: &Path| {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .filter(|e| e.path().is_file())
            .map(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                let b = std::fs::read(e.path()).unwrap();
                (n, b)
            })
            .collect();
        v.sort();
        v
    };
    let mut cut = good.clone();
    cut.truncate(good.len() - 10);
    let mut flipped = good.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 1;
    let bad: [(&str, Option<Vec<u8>>, &str); 4] = [
        ("truncated", Some(cut), "truncated"),
        ("corrupt", Some(flipped), "checksum"),
        ("not a checkpoint", Some(b"hello".to_vec()), "bad header"),
        ("missing", None, "no checkpoint at"),
    ];
    for (what, bytes, says) in bad {
        match &bytes {
            Some(b) => std::fs::write(&latest, b).unwrap(),
            None => std::fs::remove_file(&latest).unwrap(),
        }
        let files = snapshot(dir);
        let chk_files = snapshot(latest.parent().unwrap());
        let out = lab(dir, &case, false)
            .arg("--from-checkpoint")
            .arg(latest.parent().unwrap())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert!(err.contains(says), "{what}: {err}");
        assert!(!err.contains("panicked"), "{what}: {err}");
        assert_eq!(snapshot(dir), files, "{what}: a file changed");
        assert_eq!(snapshot(latest.parent().unwrap()), chk_files, "{what}");
    }
    assert_eq!(outputs(dir), before);
}
