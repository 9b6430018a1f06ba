//! Savepoints restored into a changed job, by Flink's upgrade rules: state
//! is matched to operators by uid and state name; a new stateless operator
//! is fine, a new stateful one starts empty; state the new job lacks is
//! refused, naming its uid, unless non-restored state is allowed, which
//! reports what was dropped; an operator whose state layout changed is
//! refused, naming its uid, and so is a state whose TTL was turned on or
//! off, naming the state. A missing, cut short or corrupt savepoint is
//! refused as bad input.
//!
//! Uids are Flink 2.x's (`table.exec.uid.generation = ALWAYS`,
//! `<id>_<transformation>`): the id counts the nodes inputs first, as
//! Flink's ExecNode ids count in creation order (an ExecNode is created
//! after its inputs). So a node added after an aggregate leaves the
//! aggregate's uid as it was; one added below it would shift it.

mod common;

use common::checkpoint_jobs::{TENANT_JOIN as JOIN, TENANT_TABLES as TENANTS};
use operators::checkpoint::store;
use optimizer::session::{run_script, InsertOutcome, RunError, RunOptions, TakeSavepoint};
use std::path::{Path, PathBuf};

const SOURCE: &str = "
CREATE TABLE src (k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '3000',
  'fields.k.kind' = 'random', 'fields.k.min' = '1', 'fields.k.max' = '200',
  'fields.v.min' = '1', 'fields.v.max' = '100', 'seed' = '7');
CREATE TABLE per_key (k BIGINT, cnt BIGINT, total BIGINT, mx BIGINT)
  WITH ('connector' = 'blackhole');
";

const AGG: &str = "INSERT INTO per_key SELECT k, COUNT(*), SUM(v), MAX(v) FROM src GROUP BY k;";

/// The same aggregate, then a filter every row passes (`v` is at least 1).
const AGG_FILTERED: &str = "INSERT INTO per_key SELECT * FROM (
  SELECT k, COUNT(*) AS cnt, SUM(v) AS total, MAX(v) AS mx FROM src GROUP BY k)
  WHERE total > 0;";

/// Another aggregate function: MIN in place of MAX.
const AGG_MIN: &str = "INSERT INTO per_key SELECT k, COUNT(*), SUM(v), MIN(v) FROM src GROUP BY k;";

/// The join removed: t0 alone feeds the same sink.
const NO_JOIN: &str = "INSERT INTO joined SELECT tenant_id, payload, payload FROM t0;";

fn settings() -> Vec<(String, String)> {
    [
        ("lab.clock", "deterministic"),
        ("lab.source.batch-size", "64"),
        ("table.exec.uid.generation", "ALWAYS"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

fn run(
    sql: &str,
    take: Option<TakeSavepoint>,
    from: Option<&Path>,
    allow: bool,
) -> Result<Vec<InsertOutcome>, RunError> {
    let opts = RunOptions {
        take_savepoint: take,
        from_savepoint: from,
        allow_non_restored_state: allow,
        ..RunOptions::keep_all()
    };
    run_script(sql, Path::new("."), &settings(), opts, &mut |_, _| {})
}

fn one(r: Result<Vec<InsertOutcome>, RunError>) -> InsertOutcome {
    let mut out = r.unwrap();
    assert_eq!(out.len(), 1);
    out.remove(0)
}

/// Stops `sql` with a savepoint after `rows` input rows: the stopped
/// run and the savepoint's directory.
fn stop_with_savepoint(sql: &str, dir: &Path, rows: u64) -> (InsertOutcome, PathBuf) {
    let take = TakeSavepoint {
        dir,
        after_rows: rows,
        stop: true,
    };
    let stopped = one(run(sql, Some(take), None, false));
    let path = stopped.report.savepoint.clone().expect("a savepoint");
    assert!(path.starts_with(dir), "{}", path.display());
    (stopped, path)
}

#[test]
fn a_filter_added_after_an_aggregate_restores_all_its_state() {
    let dir = tempfile::tempdir().unwrap();
    let old = format!("{SOURCE}{AGG}");
    let new = format!("{SOURCE}{AGG_FILTERED}");
    let (stopped, path) = stop_with_savepoint(&old, dir.path(), 1000);
    let held = store::read(&path).unwrap();
    assert_eq!(
        held.operators.keys().collect::<Vec<_>>(),
        ["2_group-aggregate"]
    );
    assert!(held.sources[0] >= 1000 && held.sources[0] < 3000);
    // The aggregate keeps uid 2: the filter's node comes after it.
    let resumed = one(run(&new, None, Some(&path), false));
    assert!(resumed.report.non_restored.is_empty());
    let whole = one(run(&new, None, None, false));
    let before = stopped.changelog.len();
    assert_eq!(stopped.changelog, whole.changelog[..before]);
    assert_eq!(resumed.changelog, whole.changelog[before..]);
    assert_eq!(resumed.sink_report().result, whole.sink_report().result);
    assert_eq!(resumed.sink_report().counts, whole.sink_report().counts);
}

#[test]
fn a_new_stateful_operator_starts_empty() {
    let dir = tempfile::tempdir().unwrap();
    let (_, path) = stop_with_savepoint(&format!("{SOURCE}{AGG}"), dir.path(), 1000);
    let cut: u64 = store::read(&path).unwrap().sources.iter().sum();
    // A statement set: the same aggregate (uid 2), and a new one.
    let new = format!(
        "{SOURCE}CREATE TABLE per_v (v BIGINT, cnt BIGINT) WITH ('connector' = 'blackhole');
EXECUTE STATEMENT SET BEGIN
{AGG}
INSERT INTO per_v SELECT v, COUNT(*) FROM src GROUP BY v;
END;"
    );
    let out = run(&new, None, Some(&path), false).unwrap();
    assert!(out[0].report.non_restored.is_empty());
    let whole = one(run(&format!("{SOURCE}{AGG}"), None, None, false));
    assert_eq!(out[0].sink_report().result, whole.sink_report().result);
    // The new aggregate counted only the rows read after the savepoint.
    let counted: i64 = out[1]
        .sink_report()
        .result
        .as_ref()
        .unwrap()
        .iter()
        .map(|r| r[1].as_int().unwrap())
        .sum();
    assert_eq!(counted as u64, 3000 - cut);
}

#[test]
fn an_aggregate_with_other_functions_is_refused_naming_its_uid() {
    let dir = tempfile::tempdir().unwrap();
    let (_, path) = stop_with_savepoint(&format!("{SOURCE}{AGG}"), dir.path(), 1000);
    for allow in [false, true] {
        let e = run(&format!("{SOURCE}{AGG_MIN}"), None, Some(&path), allow)
            .err()
            .expect("refused");
        assert_eq!(e.exit_code(), 2, "{e}");
        let m = e.to_string();
        assert!(
            m.contains("operator '2_group-aggregate' changed its state layout"),
            "{m}"
        );
        assert!(m.contains("MAX(v)") && m.contains("MIN(v)"), "{m}");
    }
}

#[test]
fn removing_a_join_needs_allow_non_restored_state_and_reports_what_it_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let (_, path) = stop_with_savepoint(&format!("{TENANTS}{JOIN}"), dir.path(), 1200);
    let held = store::read(&path).unwrap();
    assert_eq!(held.operators.keys().collect::<Vec<_>>(), ["3_join"]);
    let new = format!("{TENANTS}{NO_JOIN}");
    let e = run(&new, None, Some(&path), false).err().expect("refused");
    assert_eq!(e.exit_code(), 2, "{e}");
    let m = e.to_string();
    assert!(m.contains("operator '3_join'"), "{m}");
    assert!(m.contains("--allow-non-restored-state"), "{m}");
    let out = one(run(&new, None, Some(&path), true));
    let dropped = &out.report.non_restored;
    assert!(
        dropped
            .iter()
            .any(|d| d.starts_with("operator '3_join': state ")),
        "{dropped:?}"
    );
    assert!(
        dropped.iter().any(|d| d.starts_with("source 't1'")),
        "{dropped:?}"
    );
}

#[test]
fn a_missing_short_or_corrupt_savepoint_is_refused_as_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let sql = format!("{SOURCE}{AGG}");
    let (_, path) = stop_with_savepoint(&sql, dir.path(), 1000);
    let file = path.join("_metadata");
    let good = std::fs::read(&file).unwrap();
    let refused = |from: &Path, what: &str| {
        let e = run(&sql, None, Some(from), true)
            .err()
            .unwrap_or_else(|| panic!("{what}: ran"));
        assert_eq!(e.exit_code(), 2, "{what}: {e}");
        e.to_string()
    };
    let m = refused(&dir.path().join("savepoint-9"), "missing");
    assert!(
        m.contains("no checkpoint at") && m.contains("savepoint-9"),
        "{m}"
    );
    std::fs::write(&file, &good[..good.len() / 2]).unwrap();
    assert!(refused(&path, "truncated").contains("truncated"));
    let mut bad = good.clone();
    let at = bad.len() - 3;
    bad[at] ^= 0x40;
    std::fs::write(&file, &bad).unwrap();
    assert!(refused(&path, "corrupt").contains("checksum"));
    std::fs::write(&file, b"no").unwrap();
    assert!(refused(&path, "garbage").contains("bad header"));
    // A second savepoint at the same place is not written over the first.
    std::fs::write(&file, &good).unwrap();
    let take = TakeSavepoint {
        dir: dir.path(),
        after_rows: 1000,
        stop: true,
    };
    let e = run(&sql, Some(take), None, false).err().expect("refused");
    assert!(e.to_string().contains("exists already"), "{e}");
    assert_eq!(std::fs::read(&file).unwrap(), good);
}

#[test]
fn turning_a_state_ttl_on_or_off_is_refused_naming_the_state() {
    let dir = tempfile::tempdir().unwrap();
    let with_ttl = format!("SET 'table.exec.state.ttl' = '100 ms';\n{SOURCE}{AGG}");
    let without = format!("{SOURCE}{AGG}");
    for (old, new) in [(&without, &with_ttl), (&with_ttl, &without)] {
        let (_, path) = stop_with_savepoint(old, dir.path(), 1000);
        let e = run(new, None, Some(&path), true).err().expect("refused");
        assert_eq!(e.exit_code(), 2, "{e}");
        let m = e.to_string();
        assert!(m.contains("state 'acc' was checkpointed with"), "{m}");
        std::fs::remove_dir_all(&path).unwrap();
    }
}
