//! `lab run` with an injected fault and a fixed-delay restart: the run
//! recovers from its latest checkpoint and its `--changelog` and
//! `--result` files equal, byte for byte, those of a run that never
//! failed; the summary counts the restart. Without a restart the run
//! fails with exit code 3 and no output file looks complete.

use std::path::Path;
use std::process::{Command, Output};

const SCRIPT: &str = "
CREATE TABLE src (k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '50000',
  'fields.k.kind' = 'random', 'fields.k.min' = '1', 'fields.k.max' = '5000',
  'fields.v.min' = '1', 'fields.v.max' = '100', 'seed' = '3');
CREATE TABLE per_key (k BIGINT, cnt BIGINT, total BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO per_key SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k;
";

fn lab(dir: &Path, out: &str, extra: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lab"));
    cmd.current_dir(dir)
        .args(["run", "s.sql", "--changelog"])
        .arg(format!("{out}.csv"))
        .arg("--result")
        .arg(format!("{out}-result.csv"));
    for s in [
        "lab.clock=deterministic",
        "execution.checkpointing.interval=5000 ms",
        "execution.checkpointing.dir=ckpt",
    ]
    .iter()
    .chain(extra)
    {
        cmd.arg("--set").arg(s);
    }
    cmd.output().expect("lab runs")
}

#[test]
fn a_restarted_run_writes_the_files_of_a_run_that_never_failed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.sql"), SCRIPT).unwrap();
    let whole = lab(dir.path(), "whole", &[]);
    assert!(whole.status.success(), "{whole:?}");
    std::fs::remove_dir_all(dir.path().join("ckpt")).unwrap();
    let fault = [
        "lab.fault.operator=GroupAggregate",
        "lab.fault.after-records=32000",
    ];
    let failed = lab(dir.path(), "failed", &fault);
    assert_eq!(failed.status.code(), Some(3), "{failed:?}");
    let err = String::from_utf8_lossy(&failed.stderr);
    assert!(err.contains("injected fault"), "{err}");
    assert!(!dir.path().join("failed.csv").exists());
    assert!(!dir.path().join("failed-result.csv").exists());
    std::fs::remove_dir_all(dir.path().join("ckpt")).unwrap();
    let restart = [
        fault[0],
        fault[1],
        "restart-strategy.type=fixed-delay",
        "restart-strategy.fixed-delay.delay=0 ms",
    ];
    let again = lab(dir.path(), "again", &restart);
    assert!(again.status.success(), "{again:?}");
    let summary = String::from_utf8_lossy(&again.stdout);
    assert!(summary.contains("restarts          1"), "{summary}");
    for (a, b) in [
        ("whole.csv", "again.csv"),
        ("whole-result.csv", "again-result.csv"),
    ] {
        let a = std::fs::read(dir.path().join(a)).unwrap();
        let b = std::fs::read(dir.path().join(b)).unwrap();
        assert!(!a.is_empty() && a == b, "{b:?} differs");
    }
}
