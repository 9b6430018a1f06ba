//! `lab` from the outside: summaries, output files, every kind of bad
//! input answered with a message and exit code 2 (never a panic), and
//! failures of execution (RocksDB, files it cannot write) with "execution
//! failed" and exit code 3.

use std::path::{Path, PathBuf};
use std::process::Command;

fn lab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lab"))
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(cmd: &mut Command) -> Out {
    let o = cmd.output().expect("lab runs");
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Writes a script (and optional CSV) into a temp dir and runs `lab run` on it.
fn run_sql(sql: &str, csv: Option<&str>, extra: &[&str]) -> Out {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.sql"), sql).unwrap();
    if let Some(c) = csv {
        std::fs::write(dir.path().join("data.csv"), c).unwrap();
    }
    let mut cmd = lab();
    cmd.arg("run")
        .arg(dir.path().join("t.sql"))
        .arg("--quiet")
        .args(extra);
    run(&mut cmd)
}

fn assert_input_error(o: &Out, needle: &str) {
    assert_eq!(o.code, 2, "exit code; stderr: {}", o.stderr);
    assert!(
        o.stderr.contains(needle),
        "stderr should mention {needle:?}: {}",
        o.stderr
    );
    assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
}

const SRC: &str = "CREATE TABLE t (k INT, v INT) WITH ('connector' = 'filesystem', 'path' = 'data.csv', 'format' = 'csv');
CREATE TABLE out (k INT, n BIGINT) WITH ('connector' = 'blackhole');
";

#[test]
fn run_prints_the_summary_and_writes_files() {
    let dir = tempfile::tempdir().unwrap();
    let changelog = dir.path().join("changes.csv");
    let result = dir.path().join("result.csv");
    let o = run(lab()
        .arg("run")
        .arg(examples().join("clicks_per_user.sql"))
        .arg("--quiet")
        .arg("--changelog")
        .arg(&changelog)
        .arg("--result")
        .arg(&result));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout
            .contains("changelog rows    229 (+I 11, -U 109, +U 109, -D 0)"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout
            .contains("changelog rows    120 (+I 11, -U 0, +U 109, -D 0)"),
        "{}",
        o.stdout
    );
    let per_user = std::fs::read_to_string(dir.path().join("changes-clicks_per_user.csv")).unwrap();
    assert_eq!(per_user.lines().count(), 1 + 229);
    assert!(per_user.starts_with("op,user_id,cnt\n"));
    let final_rows =
        std::fs::read_to_string(dir.path().join("result-clicks_per_user.csv")).unwrap();
    assert_eq!(final_rows.lines().count(), 1 + 11);
}

#[test]
fn explain_prints_changelog_modes() {
    let o = run(lab()
        .arg("explain")
        .arg(examples().join("clicks_per_user.sql")));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("changelogMode=[I,UB,UA]"), "{}", o.stdout);
    assert!(
        o.stdout.contains("changelogMode=[I,UA]"),
        "upsert sink drops UB: {}",
        o.stdout
    );
}

#[test]
fn malformed_sql() {
    let o = run_sql(
        &format!("{SRC}INSERT INTO out SELECT k, COUNT(* FROM t GROUP BY k;"),
        Some("1,2\n"),
        &[],
    );
    assert_input_error(&o, "line 3");
}

#[test]
fn unsupported_construct() {
    let o = run_sql(
        &format!("{SRC}INSERT INTO out SELECT k, COUNT(*) FROM t GROUP BY k ORDER BY k;"),
        Some("1,2\n"),
        &[],
    );
    assert_input_error(&o, "ORDER BY");
}

#[test]
fn unknown_table() {
    let o = run_sql(
        &format!("{SRC}INSERT INTO out SELECT k, COUNT(*) FROM nope GROUP BY k;"),
        Some("1,2\n"),
        &[],
    );
    assert_input_error(&o, "nope");
}

#[test]
fn unknown_column() {
    let o = run_sql(
        &format!("{SRC}INSERT INTO out SELECT kk, COUNT(*) FROM t GROUP BY kk;"),
        Some("1,2\n"),
        &[],
    );
    assert_input_error(&o, "kk");
}

#[test]
fn unknown_config_key_suggests_the_nearest() {
    let o = run_sql(
        &format!("{SRC}INSERT INTO out SELECT k, COUNT(*) FROM t GROUP BY k;"),
        Some("1,2\n"),
        &["--set", "table.exec.mini-batch.enable=true"],
    );
    assert_input_error(&o, "table.exec.mini-batch.enabled");
}

#[test]
fn bad_config_value() {
    let o = run_sql(
        &format!("{SRC}SET 'parallelism.default' = 'many';\nINSERT INTO out SELECT k, COUNT(*) FROM t GROUP BY k;"),
        Some("1,2\n"),
        &[],
    );
    assert_input_error(&o, "parallelism.default");
}

#[test]
fn set_without_equals() {
    let o = run_sql(SRC, None, &["--set", "parallelism.default"]);
    assert_input_error(&o, "KEY=VALUE");
}

#[test]
fn missing_script() {
    let o = run(lab().arg("run").arg("/nonexistent/x.sql"));
    assert_input_error(&o, "/nonexistent/x.sql");
}

#[test]
fn missing_csv_file() {
    let o = run_sql(
        &format!("{SRC}INSERT INTO out SELECT k, COUNT(*) FROM t GROUP BY k;"),
        None,
        &[],
    );
    assert_input_error(&o, "data.csv");
}

#[test]
fn malformed_csv_row_names_its_line() {
    let o = run_sql(
        &format!("{SRC}INSERT INTO out SELECT k, COUNT(*) FROM t GROUP BY k;"),
        Some("1,2\n3,4\n5,abc\n"),
        &[],
    );
    assert_input_error(&o, "line 3");
}

#[test]
fn bad_input_leaves_no_result_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.sql"),
        format!("{SRC}INSERT INTO out SELECT k, COUNT(*) FROM t GROUP BY k;"),
    )
    .unwrap();
    std::fs::write(dir.path().join("data.csv"), "1,2\nx,y\n").unwrap();
    let result = dir.path().join("result.csv");
    let o = run(lab()
        .arg("run")
        .arg(dir.path().join("t.sql"))
        .arg("--result")
        .arg(&result));
    assert_eq!(o.code, 2);
    assert!(!result.exists());
}

#[test]
fn mini_batch_without_size_or_latency_is_refused() {
    let o = run_sql(
        &format!("{SRC}INSERT INTO out SELECT k, COUNT(*) FROM t GROUP BY k;"),
        Some("1,2\n"),
        &[
            "--set",
            "table.exec.mini-batch.enabled=true",
            "--set",
            "table.exec.mini-batch.size=-1",
        ],
    );
    assert_input_error(&o, "'table.exec.mini-batch.size' must be > 0");
    assert_input_error(&o, "table.exec.mini-batch.allow-latency");
}

#[test]
fn unknown_phase_strategy_lists_the_allowed_ones() {
    let o = run_sql(
        &format!("{SRC}INSERT INTO out SELECT k, COUNT(*) FROM t GROUP BY k;"),
        Some("1,2\n"),
        &["--set", "table.optimizer.agg-phase-strategy=THREE_PHASE"],
    );
    assert_input_error(&o, "expected one of AUTO, ONE_PHASE, TWO_PHASE");
}

#[test]
fn bucket_number_zero_is_refused() {
    let o = run_sql(
        &format!("{SRC}INSERT INTO out SELECT k, COUNT(*) FROM t GROUP BY k;"),
        Some("1,2\n"),
        &["--set", "table.optimizer.distinct-agg.split.bucket-num=0"],
    );
    assert_input_error(&o, "table.optimizer.distinct-agg.split.bucket-num");
    assert_input_error(&o, ">= 1");
}

#[test]
fn compile_plan_then_execute_plan() {
    let dir = tempfile::tempdir().unwrap();
    let sql = format!("{SRC}INSERT INTO out SELECT k, COUNT(*) FROM t GROUP BY k;");
    std::fs::write(dir.path().join("t.sql"), sql).unwrap();
    std::fs::write(dir.path().join("data.csv"), "1,2\n1,3\n2,4\n").unwrap();
    let plan = dir.path().join("plan.json");
    let o = run(lab()
        .arg("compile-plan")
        .arg(dir.path().join("t.sql"))
        .arg("-o")
        .arg(&plan));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let json = std::fs::read_to_string(&plan).unwrap();
    assert!(
        json.contains("\"type\": \"stream-exec-group-aggregate_1\"")
            && json.contains("\"ttl\": \"0 ms\"")
    );
    // The plan reads data.csv relative to the script's folder, recorded in
    // the table options; execute it from the same folder.
    let o = run(lab()
        .current_dir(dir.path())
        .arg("execute-plan")
        .arg("plan.json")
        .arg("--quiet"));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout
            .contains("changelog rows    4 (+I 2, -U 1, +U 1, -D 0)"),
        "{}",
        o.stdout
    );
    std::fs::write(&plan, json.replace("\"ttl\": \"0 ms\"", "\"ttl\": \"0\"")).unwrap();
    let o = run(lab()
        .current_dir(dir.path())
        .arg("execute-plan")
        .arg("plan.json"));
    assert_input_error(&o, "state[0].ttl: '0' has no unit");
}

#[test]
fn a_filesystem_sink_writes_its_file_and_it_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data.csv"), "1,10\n2,\n3,30\n").unwrap();
    let sql = "CREATE TABLE t (k INT, v INT) WITH ('connector' = 'filesystem', 'path' = 'data.csv', 'format' = 'csv');
CREATE TABLE copy (k INT, v INT) WITH ('connector' = 'filesystem', 'path' = 'out/copy.csv', 'format' = 'csv');
INSERT INTO copy SELECT k, v FROM t WHERE k <> 2 OR v IS NULL;
";
    std::fs::write(dir.path().join("t.sql"), sql).unwrap();
    let o = run(lab()
        .arg("run")
        .arg(dir.path().join("t.sql"))
        .arg("--quiet"));
    assert_eq!(o.code, 0, "{}", o.stderr);
    // Arrival order, no header, NULL as an empty field: a `csv` source
    // reads it back as it was.
    let written = std::fs::read_to_string(dir.path().join("out/copy.csv")).unwrap();
    assert_eq!(written, "1,10\n2,\n3,30\n");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "no temporary file left: {leftovers:?}");
}

#[test]
fn a_run_that_fails_leaves_no_sink_file() {
    let dir = tempfile::tempdir().unwrap();
    // Rows reach the sink's file batch by batch; a bad row after several
    // batches fails the run, and neither the file nor its temporary stays.
    let mut data: String = (0..5000).map(|i| format!("{i},{i}\n")).collect();
    data.push_str("5000,oops\n");
    std::fs::write(dir.path().join("data.csv"), data).unwrap();
    let sql = "CREATE TABLE t (k INT, v INT) WITH ('connector' = 'filesystem', 'path' = 'data.csv', 'format' = 'csv');
CREATE TABLE copy (k INT, v INT) WITH ('connector' = 'filesystem', 'path' = 'out/copy.csv', 'format' = 'csv');
INSERT INTO copy SELECT k, v FROM t;
";
    std::fs::write(dir.path().join("t.sql"), sql).unwrap();
    let o = run(lab()
        .arg("run")
        .arg(dir.path().join("t.sql"))
        .arg("--quiet"));
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("line 5001"), "{}", o.stderr);
    let left: Vec<_> = std::fs::read_dir(dir.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "nothing left in out/: {left:?}");
}

#[test]
fn an_unwritable_filesystem_sink_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data.csv"), "1,10\n").unwrap();
    // The sink's path is a directory.
    std::fs::create_dir(dir.path().join("taken")).unwrap();
    let sql = "CREATE TABLE t (k INT, v INT) WITH ('connector' = 'filesystem', 'path' = 'data.csv', 'format' = 'csv');
CREATE TABLE copy (k INT, v INT) WITH ('connector' = 'filesystem', 'path' = 'taken', 'format' = 'csv');
INSERT INTO copy SELECT k, v FROM t;
";
    std::fs::write(dir.path().join("t.sql"), sql).unwrap();
    let o = run(lab()
        .arg("run")
        .arg(dir.path().join("t.sql"))
        .arg("--quiet"));
    assert_ne!(o.code, 0);
    assert!(o.stderr.contains("copy"), "{}", o.stderr);
    assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
}

/// A failure of execution (a file that cannot be written, a state
/// directory that cannot be created) exits with code 3 and says what.
#[test]
fn failed_execution_exits_with_3() {
    let o = run(lab()
        .arg("run")
        .arg(examples().join("clicks_per_user.sql"))
        .args(["--quiet", "--changelog", "/dev/null/changes.csv"]));
    assert_eq!(o.code, 3, "stderr: {}", o.stderr);
    assert!(o.stderr.contains("/dev/null"), "{}", o.stderr);
    let o = run(lab()
        .arg("run")
        .arg(examples().join("clicks_per_user.sql"))
        .args([
            "--quiet",
            "--set",
            "state.backend.type=rocksdb",
            "--set",
            "lab.state.dir=/dev/null/state",
        ]));
    assert_eq!(o.code, 3, "stderr: {}", o.stderr);
    assert!(
        o.stderr
            .contains("cannot create the RocksDB state directory"),
        "{}",
        o.stderr
    );
    assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
}

/// Runs `lab run t.sql --quiet` with `extra` from a folder that holds the
/// script, a `data.csv`, and `blocker`: a file where a folder would have to
/// be, so nothing can be created under it.
fn run_beside_a_blocker(sql: &str, extra: &[&str]) -> Out {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.sql"), sql).unwrap();
    std::fs::write(dir.path().join("data.csv"), "1,2\n1,3\n2,4\n").unwrap();
    std::fs::write(dir.path().join("blocker"), "").unwrap();
    run(lab()
        .current_dir(dir.path())
        .args(["run", "t.sql", "--quiet"])
        .args(extra))
}

fn assert_execution_failure(o: &Out, needle: &str) {
    assert_eq!(o.code, 3, "exit code; stderr: {}", o.stderr);
    assert!(o.stderr.contains("execution failed"), "{}", o.stderr);
    assert!(!o.stderr.contains("planning error"), "{}", o.stderr);
    assert!(
        o.stderr.contains(needle),
        "stderr should mention {needle:?}: {}",
        o.stderr
    );
    assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
}

#[test]
fn rocksdb_that_cannot_open_is_an_execution_failure() {
    let o = run_beside_a_blocker(
        &format!("{SRC}INSERT INTO out SELECT k, COUNT(*) FROM t GROUP BY k;"),
        &[
            "--set",
            "state.backend.type=rocksdb",
            "--set",
            "lab.state.dir=blocker",
        ],
    );
    assert_execution_failure(&o, "RocksDB state directory under blocker");
}

#[test]
fn output_files_that_cannot_be_written_are_execution_failures() {
    let count = format!("{SRC}INSERT INTO out SELECT k, COUNT(*) FROM t GROUP BY k;");
    for flag in ["--changelog", "--result"] {
        let o = run_beside_a_blocker(&count, &[flag, "blocker/x.csv"]);
        assert_execution_failure(&o, "'blocker'");
    }
    let copy = "CREATE TABLE t (k INT, v INT) WITH ('connector' = 'filesystem', 'path' = 'data.csv', 'format' = 'csv');
CREATE TABLE copy (k INT, v INT) WITH ('connector' = 'filesystem', 'path' = 'blocker/copy.csv', 'format' = 'csv');
INSERT INTO copy SELECT k, v FROM t;
";
    let o = run_beside_a_blocker(copy, &[]);
    assert_execution_failure(&o, "sink 'copy'");
    // Bad input is still bad input.
    let o = run_sql(&count, Some("1,2\nx,3\n"), &[]);
    assert_input_error(&o, "line 2");
}

#[test]
fn lookup_store_that_cannot_open_is_an_execution_failure() {
    // A delta join's index-lookup store (RocksDB) under a path it cannot create.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/campaign_delta_join.sql");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("blocker"), "").unwrap();
    let o = run(lab()
        .current_dir(dir.path())
        .args(["run", script.to_str().unwrap(), "--quiet"])
        .args(["--set", "table.optimizer.delta-join.strategy=FORCE"])
        .args(["--set", "lab.state.dir=blocker"])
        .args(["--param", "rows=100", "--param", "customers=10"])
        .args(["--param", "skew=1.1"]));
    assert_execution_failure(&o, "lookup store directory under blocker");
}
