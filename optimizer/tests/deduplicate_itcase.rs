//! Flink's `DeduplicateITCase` with its inputs and expected rows: keep-first
//! and keep-last on processing time (`tupleData3`) and on a rowtime column
//! (`rowtimeTestData`), and a deduplication followed by an aggregate. The
//! final rows in every variant (mini-batch off and on, both backends,
//! parallelism 1 and 4); the raw changelogs one record at a time (Flink's
//! expected lists, in its notation).
//!
//! Flink's mini-batch rowtime deduplication emits every change unless
//! `table.exec.deduplicate.mini-batch.compact-changes-enabled` is set; the
//! lab's folds a bundle (that key's behaviour), so under mini-batch only
//! the final rows are compared.

mod common;

use common::{run_mem, MemSources};
use operators::changelog::Change;
use operators::value::{Row, Value};
use optimizer::session::RunOptions;

fn variants() -> Vec<Vec<(&'static str, String)>> {
    let mut out = Vec::new();
    for mb in [false, true] {
        for backend in ["hashmap", "rocksdb"] {
            for p in [1usize, 4] {
                let mut o = vec![
                    ("state.backend.type", backend.to_string()),
                    ("parallelism.default", p.to_string()),
                    ("lab.source.batch-size", "1".to_string()),
                ];
                if mb {
                    o.push(("table.exec.mini-batch.enabled", "true".to_string()));
                    o.push(("table.exec.mini-batch.allow-latency", "1 s".to_string()));
                    o.push(("table.exec.mini-batch.size", "3".to_string()));
                }
                out.push(o);
            }
        }
    }
    out
}

/// Flink's `TestData.tupleData3`.
fn tuple_data3() -> MemSources {
    let c = [
        "Hi",
        "Hello",
        "Hello world",
        "Hello world, how are you?",
        "I am fine.",
        "Luke Skywalker",
        "Comment#1",
        "Comment#2",
        "Comment#3",
        "Comment#4",
        "Comment#5",
        "Comment#6",
        "Comment#7",
        "Comment#8",
        "Comment#9",
        "Comment#10",
        "Comment#11",
        "Comment#12",
        "Comment#13",
        "Comment#14",
        "Comment#15",
    ];
    let b = [
        1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6,
    ];
    let mut s = MemSources::default();
    s.0.insert(
        "T".into(),
        (0..21)
            .map(|i| {
                Change::insert(vec![
                    Value::Int(i as i64 + 1),
                    Value::Int(b[i]),
                    Value::str(c[i]),
                ])
            })
            .collect(),
    );
    s
}

/// `DeduplicateITCase`'s `rowtimeTestData` (a, b = rowtime in ms, c).
fn rowtime_data() -> MemSources {
    let rows = [
        (1, 1, "Hi"),
        (1, 3, "Hello"),
        (1, 2, "Hello world"),
        (2, 3, "I am fine."),
        (2, 6, "Comment#1"),
        (3, 5, "Comment#2"),
        (3, 4, "Comment#2"),
        (4, 4, "Comment#3"),
    ];
    let mut s = MemSources::default();
    s.0.insert(
        "R".into(),
        rows.iter()
            .map(|&(a, b, c)| Change::insert(vec![Value::Int(a), Value::Int(b), Value::str(c)]))
            .collect(),
    );
    s
}

const PROCTIME_DDL: &str = "CREATE TABLE T (a INT, b BIGINT, c STRING, proctime AS PROCTIME()) WITH ('connector' = 'datagen');
CREATE TABLE s (a INT, b BIGINT, c STRING) WITH ('connector' = 'blackhole');
";

/// `rowtime` is computed from `b` (Flink's timestamp assigner).
const ROWTIME_DDL: &str = "CREATE TABLE R (a INT, b BIGINT, c STRING, rowtime AS TO_TIMESTAMP_LTZ(b, 3), WATERMARK FOR rowtime AS rowtime) WITH ('connector' = 'datagen');
CREATE TABLE s (a INT, b BIGINT, c STRING, rowtime TIMESTAMP_LTZ(3)) WITH ('connector' = 'blackhole');
";

fn flink_value(v: &Value) -> String {
    match v {
        Value::Ts(_) => v.to_string().replace(' ', "T"),
        _ => v.to_string(),
    }
}

fn flink_rows(rows: &[Row]) -> Vec<String> {
    let mut out: Vec<String> = rows
        .iter()
        .map(|r| r.iter().map(flink_value).collect::<Vec<_>>().join(","))
        .collect();
    out.sort();
    out
}

/// The final rows in every variant, and the raw changelog one record at a
/// time (`changelog`, when given) in Flink's `+I(1,1,Hi,...)` notation.
fn expect(sql: &str, sources: &MemSources, rows: &[&str], changelog: Option<&[&str]>) {
    let mut want: Vec<String> = rows.iter().map(|s| s.to_string()).collect();
    want.sort();
    for o in variants() {
        let (_, out) = run_mem(sql, sources, &o, RunOptions::keep_all())
            .unwrap_or_else(|e| panic!("{e}\n{o:?}"));
        let result = out[0].sink_report().result.clone().unwrap();
        assert_eq!(flink_rows(&result), want, "{o:?}");
        let one_at_a_time = o.len() == 3 && o[1].1 == "1";
        if let (Some(log), true) = (changelog, one_at_a_time) {
            let mut got: Vec<String> = out[0]
                .changelog
                .iter()
                .map(|c| {
                    let values: Vec<String> = c.row.iter().map(flink_value).collect();
                    format!("{}({})", c.kind.short(), values.join(","))
                })
                .collect();
            got.sort();
            let mut want: Vec<String> = log.iter().map(|s| s.to_string()).collect();
            want.sort();
            assert_eq!(got, want, "{o:?}");
        }
    }
}

fn dedup(order: &str, partition: &str, columns: &str) -> String {
    format!(
        "INSERT INTO s SELECT {columns} FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY {partition} ORDER BY {order}) AS rowNum FROM {}
) WHERE rowNum = 1;",
        if columns.contains("rowtime") {
            "R"
        } else {
            "T"
        }
    )
}

#[test]
fn first_row_on_proctime() {
    let sql = format!("{PROCTIME_DDL}{}", dedup("proctime", "b", "a, b, c"));
    expect(
        &sql,
        &tuple_data3(),
        &[
            "1,1,Hi",
            "2,2,Hello",
            "4,3,Hello world, how are you?",
            "7,4,Comment#1",
            "11,5,Comment#5",
            "16,6,Comment#10",
        ],
        None,
    );
}

#[test]
fn last_row_on_proctime() {
    let sql = format!("{PROCTIME_DDL}{}", dedup("proctime DESC", "b", "a, b, c"));
    expect(
        &sql,
        &tuple_data3(),
        &[
            "1,1,Hi",
            "3,2,Hello world",
            "6,3,Luke Skywalker",
            "10,4,Comment#4",
            "15,5,Comment#9",
            "21,6,Comment#15",
        ],
        None,
    );
}

#[test]
fn first_row_on_rowtime() {
    let sql = format!("{ROWTIME_DDL}{}", dedup("rowtime", "a", "a, b, c, rowtime"));
    expect(
        &sql,
        &rowtime_data(),
        &[
            "1,1,Hi,1970-01-01T00:00:00.001",
            "2,3,I am fine.,1970-01-01T00:00:00.003",
            "3,4,Comment#2,1970-01-01T00:00:00.004",
            "4,4,Comment#3,1970-01-01T00:00:00.004",
        ],
        Some(&[
            "+I(1,1,Hi,1970-01-01T00:00:00.001)",
            "+I(2,3,I am fine.,1970-01-01T00:00:00.003)",
            "+I(3,5,Comment#2,1970-01-01T00:00:00.005)",
            "-U(3,5,Comment#2,1970-01-01T00:00:00.005)",
            "+U(3,4,Comment#2,1970-01-01T00:00:00.004)",
            "+I(4,4,Comment#3,1970-01-01T00:00:00.004)",
        ]),
    );
}

#[test]
fn last_row_on_rowtime() {
    let sql = format!(
        "{ROWTIME_DDL}{}",
        dedup("rowtime DESC", "b", "a, b, c, rowtime")
    );
    expect(
        &sql,
        &rowtime_data(),
        &[
            "1,1,Hi,1970-01-01T00:00:00.001",
            "1,2,Hello world,1970-01-01T00:00:00.002",
            "2,3,I am fine.,1970-01-01T00:00:00.003",
            "2,6,Comment#1,1970-01-01T00:00:00.006",
            "3,5,Comment#2,1970-01-01T00:00:00.005",
            "4,4,Comment#3,1970-01-01T00:00:00.004",
        ],
        Some(&[
            "+I(1,1,Hi,1970-01-01T00:00:00.001)",
            "+I(1,3,Hello,1970-01-01T00:00:00.003)",
            "+I(1,2,Hello world,1970-01-01T00:00:00.002)",
            "-U(1,3,Hello,1970-01-01T00:00:00.003)",
            "+U(2,3,I am fine.,1970-01-01T00:00:00.003)",
            "+I(2,6,Comment#1,1970-01-01T00:00:00.006)",
            "+I(3,5,Comment#2,1970-01-01T00:00:00.005)",
            "+I(3,4,Comment#2,1970-01-01T00:00:00.004)",
            "-U(3,4,Comment#2,1970-01-01T00:00:00.004)",
            "+U(4,4,Comment#3,1970-01-01T00:00:00.004)",
        ]),
    );
}

#[test]
fn first_and_last_row_on_rowtime_followed_by_an_aggregate() {
    for order in ["rowtime", "rowtime DESC"] {
        let sql = format!(
            "CREATE TABLE R (a INT, b BIGINT, c STRING, rowtime AS TO_TIMESTAMP_LTZ(b, 3), WATERMARK FOR rowtime AS rowtime) WITH ('connector' = 'datagen');
CREATE TABLE s (cnt BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO s SELECT COUNT(b) FROM (
  SELECT a, b, c, rowtime FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY b ORDER BY {order}) AS rowNum FROM R
  ) WHERE rowNum = 1
);"
        );
        expect(&sql, &rowtime_data(), &["6"], None);
    }
}
