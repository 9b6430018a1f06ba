//! Flink's statements in a script: `EXPLAIN` prints and runs nothing, a
//! statement set (`EXECUTE STATEMENT SET BEGIN ... END`, `BEGIN STATEMENT
//! SET; ... END;`) runs its INSERTs as one job that reads a shared source
//! once, and whatever the lab cannot run is refused where it is written.

mod common;

use common::MemSources;
use operators::changelog::Change;
use operators::exec::ChangeSource;
use operators::value::{Row, Value};
use optimizer::error::{ErrorKind, PlanError};
use optimizer::logical::{ExplainTarget, Statement, TableDef};
use optimizer::physical::job::SourceProvider;
use optimizer::session::{
    explain_script, run_parsed_explaining, InsertOutcome, RunError, RunOptions,
};
use optimizer::sql::parse_script;
use std::cell::Cell;
use std::path::Path;

const DDL: &str = "CREATE TABLE clicks (user_id STRING, url STRING) WITH ('connector' = 'datagen');
CREATE TABLE per_user (user_id STRING, cnt BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE per_url (url STRING, cnt BIGINT) WITH ('connector' = 'blackhole');
";

/// Script line of the first statement after `DDL`.
const L: u64 = 4;

const PER_USER: &str =
    "INSERT INTO per_user SELECT user_id, COUNT(*) FROM clicks GROUP BY user_id;";
const PER_URL: &str = "INSERT INTO per_url SELECT url, COUNT(*) FROM clicks GROUP BY url;";

fn clicks() -> Vec<Change> {
    [
        ("a", "/x"),
        ("b", "/x"),
        ("a", "/y"),
        ("c", "/x"),
        ("a", "/x"),
    ]
    .iter()
    .map(|(u, p)| Change::insert(vec![Value::str(u), Value::str(p)]))
    .collect()
}

/// In-memory tables that count how often each is opened.
struct Counting {
    tables: MemSources,
    opened: Cell<usize>,
}

impl SourceProvider for Counting {
    fn open(&self, table: &TableDef) -> Result<Box<dyn ChangeSource>, PlanError> {
        self.opened.set(self.opened.get() + 1);
        self.tables.open(table)
    }
}

/// Runs `sql`: the outcomes, what EXPLAIN printed, and how many sources
/// were opened.
fn run(
    sql: &str,
    overrides: &[(&str, &str)],
) -> Result<(Vec<InsertOutcome>, String, usize), RunError> {
    let script = parse_script(sql)?;
    let mut tables = MemSources::default();
    tables.0.insert("clicks".into(), clicks());
    let sources = Counting {
        tables,
        opened: Cell::new(0),
    };
    let overrides: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let mut printed = String::new();
    let out = run_parsed_explaining(
        &script,
        &script.catalog,
        &sources,
        Path::new("."),
        &overrides,
        RunOptions::keep_all(),
        &mut |_, _| {},
        &mut |text| printed.push_str(text),
    )?;
    Ok((out, printed, sources.opened.get()))
}

fn rows(o: &InsertOutcome) -> Vec<Row> {
    o.sink_report().result.clone().expect("materialised")
}

fn row(u: &str, n: i64) -> Row {
    vec![Value::str(u), Value::Int(n)]
}

fn err(sql: &str) -> PlanError {
    match run(sql, &[]) {
        Err(RunError::Input(e)) => e,
        Err(e) => panic!("expected a refusal, got {e}"),
        Ok(_) => panic!("expected a refusal of {sql}"),
    }
}

fn at(e: &PlanError) -> (u64, u64) {
    let l = e.location.clone().expect("a location");
    (l.line, l.column)
}

#[test]
fn explain_in_a_script_prints_the_plan_and_runs_nothing() {
    for head in ["EXPLAIN PLAN FOR", "EXPLAIN", "EXPLAIN CHANGELOG_MODE,"] {
        let head = if head.ends_with(',') {
            "EXPLAIN CHANGELOG_MODE, PLAN_ADVICE"
        } else {
            head
        };
        let (out, printed, opened) = run(&format!("{DDL}{head} {PER_USER}"), &[]).unwrap();
        assert!(out.is_empty() && opened == 0, "{head}: nothing runs");
        for section in [
            "== Abstract Syntax Tree ==\nLogicalSink(table=[default_catalog.default_database.per_user]",
            "== Optimized Physical Plan",
            "== Optimized Execution Plan ==\nSink(table=[default_catalog.default_database.per_user], fields=[user_id, EXPR$1])",
        ] {
            assert!(printed.contains(section), "{head}: {section}\n{printed}");
        }
        assert_eq!(
            printed.contains("changelogMode="),
            head.contains("CHANGELOG_MODE"),
            "{printed}"
        );
    }
}

#[test]
fn explain_select_and_json_plan() {
    let (_, printed, _) = run(
        &format!("{DDL}EXPLAIN JSON_EXECUTION_PLAN SELECT url, COUNT(*) FROM clicks GROUP BY url;"),
        &[],
    )
    .unwrap();
    assert!(
        printed.contains(
            "== Abstract Syntax Tree ==\nLogicalAggregate(group=[{0}], EXPR$1=[COUNT()])"
        ),
        "{printed}"
    );
    assert!(!printed.contains("Sink("), "no sink: {printed}");
    assert!(
        printed.contains("== Physical Execution Plan ==\n{\n  \"nodes\" : [ {"),
        "{printed}"
    );
    assert!(
        printed.contains("\"ship_strategy\" : \"HASH\""),
        "{printed}"
    );
}

#[test]
fn a_statement_set_reads_its_shared_source_once() {
    let alone = run(&format!("{DDL}{PER_USER}\n{PER_URL}"), &[]).unwrap();
    assert_eq!(alone.0.len(), 2);
    assert_eq!(alone.2, 2, "two jobs open the table twice");
    for set in [
        format!("{DDL}EXECUTE STATEMENT SET BEGIN\n{PER_USER}\n{PER_URL}\nEND;"),
        format!("{DDL}BEGIN STATEMENT SET;\n{PER_USER}\n{PER_URL}\nEND;"),
    ] {
        let (out, printed, opened) = run(&set, &[]).unwrap();
        assert!(printed.is_empty());
        assert_eq!(out.len(), 2, "one outcome per INSERT");
        assert_eq!(opened, 1, "the table is opened once");
        assert!(
            std::sync::Arc::ptr_eq(&out[0].report, &out[1].report),
            "one job"
        );
        assert_eq!(out[0].report.input_rows, 5, "input rows counted once");
        assert_eq!(out[0].job_sinks(), ["per_user", "per_url"]);
        assert_eq!((out[0].sink_index, out[1].sink_index), (0, 1));
        assert_eq!(rows(&out[0]), rows(&alone.0[0]));
        assert_eq!(rows(&out[1]), rows(&alone.0[1]));
        assert_eq!(rows(&out[0]), [row("a", 3), row("b", 1), row("c", 1)]);
        assert_eq!(out[0].changelog, alone.0[0].changelog);
        assert_eq!(out[1].changelog, alone.0[1].changelog);
        // Each INSERT's own operators, in its plan's order.
        assert_eq!(out[0].stages.len(), 1);
        assert_eq!(out[0].plan_stages().next().unwrap().records_in(), 5);
        assert_eq!(out[1].plan_stages().next().unwrap().records_in(), 5);
    }
    // Without source reuse each INSERT reads the table itself.
    let set = format!("{DDL}EXECUTE STATEMENT SET BEGIN\n{PER_USER}\n{PER_URL}\nEND;");
    let (out, _, opened) = run(&set, &[("table.optimizer.reuse-source-enabled", "false")]).unwrap();
    assert_eq!((opened, out[0].report.input_rows), (2, 10));
}

#[test]
fn identical_inserts_of_a_set_share_the_whole_plan() {
    let again = PER_USER.replace("per_user", "per_user2");
    let sql = format!(
        "{DDL}CREATE TABLE per_user2 (user_id STRING, cnt BIGINT) WITH ('connector' = 'blackhole');
EXECUTE STATEMENT SET BEGIN {PER_USER} {again} END;"
    );
    let (out, _, opened) = run(&sql, &[]).unwrap();
    assert_eq!(opened, 1);
    assert_eq!(
        out[0].report.stages.len(),
        1,
        "one aggregate feeds both sinks"
    );
    assert_eq!(out[0].stages, out[1].stages);
    assert_eq!(rows(&out[0]), rows(&out[1]));
}

#[test]
fn explain_statement_set_is_one_plan_with_a_sink_per_insert() {
    let sql = format!("{DDL}EXPLAIN STATEMENT SET BEGIN\n{PER_USER}\n{PER_URL}\nEND;");
    let (out, printed, _) = run(&sql, &[]).unwrap();
    assert!(out.is_empty());
    let exec = printed
        .split("== Optimized Execution Plan ==\n")
        .nth(1)
        .expect("execution plan");
    assert!(
        exec.starts_with(
            "TableSourceScan(table=[[default_catalog, default_database, clicks]], fields=[user_id, url])(reuse_id=[1])\n\nSink(table=[default_catalog.default_database.per_user]"
        ),
        "{exec}"
    );
    assert_eq!(
        exec.matches("Reused(reference_id=[1])").count(),
        2,
        "{exec}"
    );
    assert_eq!(printed.matches("== Abstract Syntax Tree ==").count(), 1);
    assert_eq!(printed.matches("LogicalSink(").count(), 2);
    // `lab explain` prints the set as one block too.
    let text = explain_script(
        &format!("{DDL}EXECUTE STATEMENT SET BEGIN {PER_USER} {PER_URL} END;"),
        &[],
    )
    .unwrap();
    assert_eq!(text.matches("== Optimized Execution Plan ==").count(), 1);
    assert!(text.contains("changelogMode=[I,UB,UA]"), "{text}");
}

#[test]
fn script_statements_are_kept_in_order() {
    let s = parse_script(&format!(
        "{DDL}EXPLAIN STATEMENT SET BEGIN {PER_USER} END;
         EXECUTE STATEMENT SET BEGIN {PER_USER} {PER_URL} END;
         EXECUTE {PER_URL}"
    ))
    .unwrap();
    let kinds: Vec<&str> = s.statements[3..]
        .iter()
        .map(|s| match s {
            Statement::Explain {
                target: ExplainTarget::StatementSet(set),
                ..
            } if set.len() == 1 => "explain set",
            Statement::StatementSet(set) if set.len() == 2 => "set",
            Statement::Insert(_) => "insert",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["explain set", "set", "insert"]);
    assert_eq!(s.inserts().count(), 4);
}

#[test]
fn what_the_lab_cannot_run_is_refused_where_it_is_written() {
    let cases: Vec<(String, ErrorKind, (u64, u64), &str)> = vec![
        (
            "DROP TABLE clicks;".into(),
            ErrorKind::Unsupported,
            (L, 1),
            "DROP TABLE is not supported",
        ),
        (
            "SELECT url FROM clicks;".into(),
            ErrorKind::Unsupported,
            (L, 1),
            "bare SELECT",
        ),
        (
            format!("EXPLAIN ESTIMATED_COST {PER_USER}"),
            ErrorKind::Unsupported,
            (L, 9),
            "no cost model",
        ),
        (
            format!("EXPLAIN CHANGELOG_MODE, CHANGELOG_MODE {PER_USER}"),
            ErrorKind::Parse,
            (L, 25),
            "duplicate EXPLAIN detail",
        ),
        (
            format!("EXPLAIN ANALYZE {PER_USER}"),
            ErrorKind::Unsupported,
            (L, 9),
            "EXPLAIN ANALYZE is not supported",
        ),
        (
            format!(
                "EXECUTE STATEMENT SET BEGIN\n{}\nEND;",
                PER_USER.trim_end_matches(';')
            ),
            ErrorKind::Parse,
            (L + 2, 1),
            "expected ';' before END",
        ),
        (
            "EXPLAIN CREATE TABLE t (a INT);".into(),
            ErrorKind::Unsupported,
            (L, 1),
            "EXPLAIN of CREATE TABLE",
        ),
        (
            format!(
                "EXECUTE STATEMENT SET BEGIN\n{PER_USER}\nSET 'parallelism.default' = '2';\nEND;"
            ),
            ErrorKind::Unsupported,
            (L + 2, 1),
            "INSERT statements only, found SET",
        ),
        (
            format!("BEGIN STATEMENT SET;\n{PER_USER}\nDROP TABLE clicks;\nEND;"),
            ErrorKind::Unsupported,
            (L + 2, 1),
            "INSERT statements only, found DROP TABLE",
        ),
        (
            format!("EXECUTE STATEMENT SET BEGIN\n{PER_USER}"),
            ErrorKind::Parse,
            (L, 1),
            "has no END",
        ),
        (
            "END;".into(),
            ErrorKind::Parse,
            (L, 1),
            "END without a statement set",
        ),
        (
            "BEGIN STATEMENT SET;\nEND;".into(),
            ErrorKind::Parse,
            (L + 1, 1),
            "at least one INSERT",
        ),
        (
            format!("BEGIN STATEMENT SET;\nBEGIN STATEMENT SET;\n{PER_USER}\nEND;"),
            ErrorKind::Parse,
            (L + 1, 1),
            "cannot begin inside another",
        ),
        (
            format!("STATEMENT SET BEGIN {PER_USER} END;"),
            ErrorKind::Parse,
            (L, 1),
            "expected EXECUTE STATEMENT SET",
        ),
    ];
    for (sql, kind, loc, msg) in cases {
        let e = err(&format!("{DDL}{sql}"));
        assert_eq!(e.kind, kind, "{sql}: {e}");
        assert_eq!(at(&e), loc, "{sql}: {e}");
        assert!(e.message.contains(msg), "{sql}: {e}");
    }
}

#[test]
fn a_planning_error_points_at_its_insert() {
    let sql = format!(
        "{DDL}SET 'table.exec.mini-batch.enabled' = 'true';\nEXECUTE STATEMENT SET BEGIN\n{PER_USER}\nEND;"
    );
    let e = err(&sql);
    assert_eq!(e.kind, ErrorKind::Config, "{e}");
    assert_eq!(at(&e), (L + 2, 1), "{e}");
}
