//! Restart strategies and injected faults (`restart-strategy.*`,
//! `lab.fault.*`): an operator made to fail mid-run, with fixed-delay
//! restarts, ends as the uninterrupted run (changelog and result), for an
//! aggregate and a join, on both backends (RocksDB with full and
//! incremental checkpoints), at parallelism 1 and 4, and without
//! checkpoints (restarted from the start). Without a restart, or with no
//! attempts left, the run fails as an execution failure (exit code 3); a
//! fault naming no operator is bad input (exit code 2).

mod common;

use optimizer::session::{run_script, InsertOutcome, RunError, RunOptions};
use std::path::Path;

const AGG: &str = "
CREATE TABLE src (k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '3000',
  'fields.k.kind' = 'random', 'fields.k.min' = '1', 'fields.k.max' = '200',
  'fields.v.min' = '1', 'fields.v.max' = '100', 'seed' = '7');
CREATE TABLE per_key (k BIGINT, cnt BIGINT, total BIGINT)
  WITH ('connector' = 'blackhole');
INSERT INTO per_key SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k;
";

const JOIN: &str = common::checkpoint_jobs::TENANT_LEFT_JOIN;

fn run(sql: &str, set: &[(&str, String)]) -> Result<InsertOutcome, RunError> {
    let set: Vec<(String, String)> = set
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let mut out = run_script(
        sql,
        Path::new("."),
        &set,
        RunOptions::keep_all(),
        &mut |_, _| {},
    )?;
    Ok(out.remove(0))
}

/// Settings of a run on `backend` (`rocksdb-incremental`: RocksDB with
/// incremental checkpoints) at parallelism `p`, with checkpoints into
/// `dir` when given.
fn base(backend: &str, p: usize, dir: Option<&Path>) -> Vec<(&'static str, String)> {
    let incremental = backend == "rocksdb-incremental";
    let backend = if incremental { "rocksdb" } else { backend };
    let mut s = vec![
        ("state.backend.type", backend.to_string()),
        ("parallelism.default", p.to_string()),
        ("lab.clock", "deterministic".to_string()),
        ("lab.source.batch-size", "64".to_string()),
    ];
    if let Some(dir) = dir {
        s.extend([
            ("execution.checkpointing.interval", "400 ms".to_string()),
            ("execution.checkpointing.dir", dir.display().to_string()),
            (
                "execution.checkpointing.incremental",
                incremental.to_string(),
            ),
        ]);
    }
    s
}

fn fault(operator: &str, after: u64) -> Vec<(&'static str, String)> {
    vec![
        ("lab.fault.operator", operator.to_string()),
        ("lab.fault.after-records", after.to_string()),
    ]
}

fn fixed_delay(attempts: u32) -> Vec<(&'static str, String)> {
    vec![
        ("restart-strategy.type", "fixed-delay".to_string()),
        (
            "restart-strategy.fixed-delay.attempts",
            attempts.to_string(),
        ),
        ("restart-strategy.fixed-delay.delay", "0 ms".to_string()),
    ]
}

#[test]
fn a_run_restarted_after_a_fault_ends_as_the_uninterrupted_run() {
    for (sql, operator, after) in [(AGG, "GroupAggregate", 1700), (JOIN, "Join", 1900)] {
        for backend in ["hashmap", "rocksdb", "rocksdb-incremental"] {
            for p in [1, 4] {
                let at = format!("{operator} on {backend} x{p}");
                let whole = run(sql, &base(backend, p, None)).unwrap();
                for checkpoints in [true, false] {
                    let dir = tempfile::tempdir().unwrap();
                    let mut set = base(backend, p, checkpoints.then_some(dir.path()));
                    set.extend(fault(operator, after));
                    set.extend(fixed_delay(1));
                    let again = run(sql, &set).unwrap_or_else(|e| panic!("{at}: {e}"));
                    assert_eq!(again.report.restarts, 1, "{at}");
                    assert_eq!(
                        again.changelog, whole.changelog,
                        "{at}, checkpoints {checkpoints}"
                    );
                    assert_eq!(
                        again.sink_report().result,
                        whole.sink_report().result,
                        "{at}, checkpoints {checkpoints}"
                    );
                }
            }
        }
    }
}

#[test]
fn without_a_restart_left_the_fault_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    for restart in [vec![], fixed_delay(0)] {
        let mut set = base("hashmap", 1, Some(dir.path()));
        set.extend(fault("GroupAggregate", 100));
        set.extend(restart);
        let e = run(AGG, &set).err().expect("the run fails");
        assert_eq!(e.exit_code(), 3, "{e}");
        let m = e.to_string();
        assert!(
            m.contains("injected fault")
                && m.contains("GroupAggregate")
                && m.contains("record 100"),
            "{m}"
        );
    }
}

#[test]
fn a_fault_naming_no_operator_is_bad_input() {
    let mut set = base("hashmap", 1, None);
    set.extend(fault("NoSuchOperator", 10));
    let e = run(AGG, &set).err().expect("refused");
    assert_eq!(e.exit_code(), 2, "{e}");
    let m = e.to_string();
    assert!(
        m.contains("lab.fault.operator") && m.contains("GroupAggregate("),
        "{m}"
    );
}
