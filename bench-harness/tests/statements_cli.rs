//! Flink's statements through `lab run`: EXPLAIN prints its plan, a
//! statement set runs as one job with a summary block per sink, and a
//! statement the lab cannot run stops the script with exit code 2 and its
//! location (nothing is skipped).

use std::process::Command;

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Writes `sql` and a small CSV beside it, and runs `lab run` on it.
fn run_sql(sql: &str) -> Out {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.sql"), sql).unwrap();
    std::fs::write(dir.path().join("data.csv"), "1,10\n2,20\n1,30\n3,40\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_lab"))
        .arg("run")
        .arg(dir.path().join("t.sql"))
        .arg("--quiet")
        .output()
        .expect("lab runs");
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

const DDL: &str = "CREATE TABLE t (k INT, v INT) WITH ('connector' = 'filesystem', 'path' = 'data.csv', 'format' = 'csv');
CREATE TABLE per_k (k INT, n BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE per_v (v INT, n BIGINT) WITH ('connector' = 'blackhole');
";
const PER_K: &str = "INSERT INTO per_k SELECT k, SUM(v) FROM t GROUP BY k;";
const PER_V: &str = "INSERT INTO per_v SELECT v, COUNT(k) FROM t GROUP BY v;";

#[test]
fn explain_plan_for_prints_the_plan_and_runs_nothing() {
    let o = run_sql(&format!("{DDL}EXPLAIN PLAN FOR {PER_K}"));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.starts_with(
            "== Abstract Syntax Tree ==\nLogicalSink(table=[default_catalog.default_database.per_k], fields=[k, EXPR$1])\n"
        ),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains(
            "== Optimized Execution Plan ==\n\
             Sink(table=[default_catalog.default_database.per_k], fields=[k, EXPR$1])\n\
             +- GroupAggregate(groupBy=[k], select=[k, SUM(v) AS EXPR$1])\n\
             \x20  +- Exchange(distribution=[hash[k]])\n\
             \x20     +- TableSourceScan(table=[[default_catalog, default_database, t]], fields=[k, v])\n"
        ),
        "{}",
        o.stdout
    );
    assert!(
        !o.stdout.contains("input rows"),
        "nothing ran: {}",
        o.stdout
    );
}

#[test]
fn a_statement_set_is_one_job_with_a_block_per_sink() {
    for set in [
        format!("{DDL}EXECUTE STATEMENT SET BEGIN\n{PER_K}\n{PER_V}\nEND;"),
        format!("{DDL}BEGIN STATEMENT SET;\n{PER_K}\n{PER_V}\nEND;"),
    ] {
        let o = run_sql(&set);
        assert_eq!(o.code, 0, "{}", o.stderr);
        assert!(o.stdout.contains("INSERT INTO per_k ("), "{}", o.stdout);
        assert!(o.stdout.contains("INSERT INTO per_v ("), "{}", o.stdout);
        // The input is read, and counted, once.
        assert_eq!(
            o.stdout.matches("input rows        4\n").count(),
            1,
            "{}",
            o.stdout
        );
        assert_eq!(
            o.stdout
                .matches("statement set     one job for INSERT INTO per_k, per_v")
                .count(),
            2,
            "{}",
            o.stdout
        );
        assert!(
            o.stdout
                .contains("changelog rows    5 (+I 3, -U 1, +U 1, -D 0)"),
            "per_k: {}",
            o.stdout
        );
        assert!(
            o.stdout
                .contains("changelog rows    4 (+I 4, -U 0, +U 0, -D 0)"),
            "per_v: {}",
            o.stdout
        );
    }
}

#[test]
fn what_the_lab_cannot_run_exits_2_with_its_location() {
    for (sql, needle) in [
        (
            format!("{DDL}DROP TABLE t;"),
            "line 4, column 1: DROP TABLE is not supported",
        ),
        (
            format!("{DDL}EXPLAIN ESTIMATED_COST {PER_K}"),
            "line 4, column 9: EXPLAIN ESTIMATED_COST is not supported",
        ),
        (
            format!("{DDL}EXECUTE STATEMENT SET BEGIN\n{PER_K}\nSELECT k FROM t;\nEND;"),
            "line 6, column 1: a statement set holds INSERT statements only",
        ),
        (
            format!("{DDL}BEGIN STATEMENT SET;\n{PER_K}\n"),
            "line 4, column 1: this statement set has no END",
        ),
    ] {
        let o = run_sql(&sql);
        assert_eq!(o.code, 2, "{sql}: {}", o.stderr);
        assert!(o.stderr.contains(needle), "{sql}: {}", o.stderr);
        assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
        assert!(o.stdout.is_empty(), "nothing ran: {}", o.stdout);
    }
}
