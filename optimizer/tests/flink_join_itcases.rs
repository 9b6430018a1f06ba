//! Flink's own streaming join and union tests, ported: the FULL and RIGHT
//! join cases and the comma joins of `JoinITCase` (flink-table-planner,
//! runtime/stream/sql) that the lab's SQL can express, and the UNION ALL
//! cases of `SetOperatorsITCase` (runtime/stream/table; Flink 2.x has no
//! stream `UnionITCase`, and writes these in the Table API, here in SQL), with Flink's inputs (`TestData.smallTupleData3` as `A`,
//! `TestData.tupleData5` as `B`) and Flink's expected rows. Each runs in
//! every variant Flink runs it in and more: mini-batch off and on, both
//! state backends, parallelism 1 and 4.
//!
//! Flink writes `if(a = 3, cast(null as int), a)`; the lab has no `IF`, so
//! the NULL-key cases write the same value as `CASE WHEN a <> 3 THEN a END`.

mod common;

use common::{run_mem, MemSources};
use operators::changelog::Change;
use operators::value::{Row, Value};
use optimizer::session::RunOptions;
use std::collections::HashMap;

const DDL: &str = "
CREATE TABLE A (a1 INT, a2 BIGINT, a3 STRING) WITH ('connector' = 'datagen');
CREATE TABLE B (b1 INT, b2 BIGINT, b3 INT, b4 STRING, b5 BIGINT) WITH ('connector' = 'datagen');
CREATE TABLE T1 (a INT, b BIGINT) WITH ('connector' = 'datagen');
CREATE TABLE T2 (a INT, b BIGINT) WITH ('connector' = 'datagen');
";

fn int(i: i64) -> Value {
    Value::Int(i)
}

fn s(x: &str) -> Value {
    Value::str(x)
}

/// Flink's `TestData.smallTupleData3`, `TestData.tupleData5`, and the two
/// tables of the `testNull*OuterJoin` cases.
fn sources() -> MemSources {
    let a = [(1, 1, "Hi"), (2, 2, "Hello"), (3, 2, "Hello world")]
        .map(|(x, y, z)| vec![int(x), int(y), s(z)]);
    let b = [
        (1, 1, 0, "Hallo", 1),
        (2, 2, 1, "Hallo Welt", 2),
        (2, 3, 2, "Hallo Welt wie", 1),
        (3, 4, 3, "Hallo Welt wie gehts?", 2),
        (3, 5, 4, "ABC", 2),
        (3, 6, 5, "BCD", 3),
        (4, 7, 6, "CDE", 2),
        (4, 8, 7, "DEF", 1),
        (4, 9, 8, "EFG", 1),
        (4, 10, 9, "FGH", 2),
        (5, 11, 10, "GHI", 1),
        (5, 12, 11, "HIJ", 3),
        (5, 13, 12, "IJK", 3),
        (5, 14, 13, "JKL", 2),
        (5, 15, 14, "KLM", 2),
    ]
    .map(|(v, w, x, y, z)| vec![int(v), int(w), int(x), s(y), int(z)]);
    let t1 = [(1, 1), (3, 8), (4, 2)].map(|(x, y)| vec![int(x), int(y)]);
    let t2 = [(1, 1), (2, 2), (3, 2)].map(|(x, y)| vec![int(x), int(y)]);
    let inserts = |rows: &[Row]| rows.iter().cloned().map(Change::insert).collect::<Vec<_>>();
    let mut m = HashMap::new();
    m.insert("A".to_string(), inserts(&a));
    m.insert("B".to_string(), inserts(&b));
    m.insert("T1".to_string(), inserts(&t1));
    m.insert("T2".to_string(), inserts(&t2));
    MemSources(m)
}

/// The variants: mini-batch off and on (bundles of 1, 3 and 1000 records),
/// both state backends, parallelism 1 and 4.
fn variants() -> Vec<Vec<(&'static str, String)>> {
    let mut out = Vec::new();
    for mini_batch in [None, Some("1"), Some("3"), Some("1000")] {
        for backend in ["hashmap", "rocksdb"] {
            for p in ["1", "4"] {
                let mut v = vec![
                    ("state.backend.type", backend.to_string()),
                    ("parallelism.default", p.to_string()),
                ];
                if let Some(size) = mini_batch {
                    v.push(("table.exec.mini-batch.enabled", "true".to_string()));
                    v.push(("table.exec.mini-batch.allow-latency", "1 h".to_string()));
                    v.push(("table.exec.mini-batch.size", size.to_string()));
                }
                out.push(v);
            }
        }
    }
    out
}

/// A result row as Flink's `TestingRetractSink` prints it.
fn flink_text(row: &Row) -> String {
    row.iter()
        .map(|v| match v {
            Value::Null => "null".to_string(),
            v => v.to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Runs `query` into a retract sink of `columns` in every variant and
/// checks the materialised result against Flink's expected rows.
fn check(columns: &str, query: &str, expected: &[&str]) {
    let sql = format!(
        "{DDL}CREATE TABLE out ({columns}) WITH ('connector' = 'blackhole');\nINSERT INTO out {query};\n"
    );
    let mut want: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
    want.sort();
    for v in variants() {
        let (_, outcomes) = run_mem(&sql, &sources(), &v, RunOptions::keep_all())
            .unwrap_or_else(|e| panic!("{query} ({v:?}): {e}"));
        let report = outcomes[0].sink_report();
        assert!(
            report.negative_rows.is_empty(),
            "{query} ({v:?}): retractions of rows never emitted: {:?}",
            report.negative_rows
        );
        let mut got: Vec<String> = report
            .result
            .as_ref()
            .expect("the result is kept")
            .iter()
            .map(flink_text)
            .collect();
        got.sort();
        assert_eq!(got, want, "{query} ({v:?})");
    }
}

const SUM_A: &str = "(SELECT SUM(a2) AS a2, a1 FROM A GROUP BY a1)";
const SUM_B: &str = "(SELECT SUM(b2) AS b2, b1 FROM B GROUP BY b1)";

#[test]
fn test_full_outer_join() {
    check(
        "a3 STRING, b4 STRING",
        "SELECT a3, b4 FROM A FULL OUTER JOIN B ON a2 = b2",
        &[
            "Hi,Hallo",
            "Hello,Hallo Welt",
            "Hello world,Hallo Welt",
            "null,Hallo Welt wie",
            "null,Hallo Welt wie gehts?",
            "null,ABC",
            "null,BCD",
            "null,CDE",
            "null,DEF",
            "null,EFG",
            "null,FGH",
            "null,GHI",
            "null,HIJ",
            "null,IJK",
            "null,JKL",
            "null,KLM",
        ],
    );
}

#[test]
fn test_right_outer_join() {
    check(
        "a3 STRING, b4 STRING",
        "SELECT a3, b4 FROM A RIGHT OUTER JOIN B ON a2 = b2",
        &[
            "Hi,Hallo",
            "Hello,Hallo Welt",
            "Hello world,Hallo Welt",
            "null,Hallo Welt wie",
            "null,Hallo Welt wie gehts?",
            "null,ABC",
            "null,BCD",
            "null,CDE",
            "null,DEF",
            "null,EFG",
            "null,FGH",
            "null,GHI",
            "null,HIJ",
            "null,IJK",
            "null,JKL",
            "null,KLM",
        ],
    );
}

#[test]
fn test_right_join_non_equi() {
    check(
        "a1 INT, b1 INT",
        "SELECT a1, b1 FROM A RIGHT JOIN B ON a1 = b1 AND a2 > b2",
        &[
            "null,2", "null,1", "null,3", "null,3", "null,2", "null,5", "null,3", "null,5",
            "null,4", "null,5", "null,4", "null,5", "null,4", "null,5", "null,4",
        ],
    );
}

#[test]
fn test_right_join_with_equal_pk_non_equi() {
    check(
        "a1 INT, b1 INT",
        &format!("SELECT a1, b1 FROM {SUM_A} RIGHT JOIN {SUM_B} ON a1 = b1 AND a2 > b2"),
        &["null,1", "null,3", "null,2", "null,5", "null,4"],
    );
}

#[test]
fn test_right_join_with_right_not_pk_non_equi() {
    check(
        "a1 INT, b1 INT",
        &format!("SELECT a1, b1 FROM {SUM_A} RIGHT JOIN B ON a1 = b1 AND a2 > b2"),
        &[
            "null,2", "null,1", "null,3", "null,2", "null,3", "null,5", "null,5", "null,3",
            "null,5", "null,5", "null,4", "null,5", "null,4", "null,4", "null,4",
        ],
    );
}

#[test]
fn test_right_join_with_pk_non_equi() {
    check(
        "a1 INT, a2 BIGINT, b1 INT, b2 BIGINT",
        &format!("SELECT a1, a2, b1, b2 FROM {SUM_A} RIGHT JOIN {SUM_B} ON a2 = b2 AND a1 > b1"),
        &[
            "null,null,3,15",
            "null,null,4,34",
            "null,null,2,5",
            "null,null,5,65",
            "null,null,1,1",
        ],
    );
}

#[test]
fn test_right_join() {
    check(
        "a1 INT, b1 INT",
        "SELECT a1, b1 FROM A RIGHT JOIN B ON a1 = b1",
        &[
            "2,2", "3,3", "3,3", "2,2", "3,3", "null,5", "null,4", "1,1", "null,5", "null,4",
            "null,5", "null,5", "null,5", "null,4", "null,4",
        ],
    );
}

#[test]
fn test_right_join_with_equal_pk() {
    check(
        "a1 INT, b1 INT",
        &format!("SELECT a1, b1 FROM {SUM_A} RIGHT JOIN {SUM_B} ON a1 = b1"),
        &["1,1", "2,2", "null,5", "3,3", "null,4"],
    );
}

#[test]
fn test_right_join_with_right_not_pk() {
    check(
        "a1 INT, b1 INT",
        &format!("SELECT a1, b1 FROM {SUM_A} RIGHT JOIN B ON a1 = b1"),
        &[
            "null,4", "null,4", "null,4", "null,4", "null,5", "null,5", "null,5", "null,5",
            "null,5", "1,1", "2,2", "3,3", "3,3", "3,3", "2,2",
        ],
    );
}

#[test]
fn test_right_join_with_pk() {
    check(
        "a1 INT, a2 BIGINT, b1 INT, b2 BIGINT",
        &format!("SELECT a1, a2, b1, b2 FROM {SUM_A} RIGHT JOIN {SUM_B} ON a2 = b2"),
        &[
            "null,null,3,15",
            "null,null,4,34",
            "null,null,5,65",
            "1,1,1,1",
            "null,null,2,5",
        ],
    );
}

#[test]
fn test_full_join_non_equi() {
    check(
        "a1 INT, b1 INT",
        "SELECT a1, b1 FROM A FULL JOIN B ON a1 = b1 AND a2 > b2",
        &[
            "1,null", "3,null", "2,null", "null,3", "null,2", "null,2", "null,3", "null,5",
            "null,3", "null,5", "null,4", "null,5", "null,4", "null,1", "null,5", "null,4",
            "null,5", "null,4",
        ],
    );
}

#[test]
fn test_full_join_with_equal_pk_non_equi() {
    check(
        "a1 INT, b1 INT",
        &format!("SELECT a1, b1 FROM {SUM_A} FULL JOIN {SUM_B} ON a1 = b1 AND a2 > b2"),
        &[
            "null,2", "null,5", "null,3", "null,4", "3,null", "1,null", "null,1", "2,null",
        ],
    );
}

#[test]
fn test_full_join_with_full_not_pk_non_equi() {
    check(
        "a1 INT, b1 INT",
        &format!("SELECT a1, b1 FROM {SUM_A} FULL JOIN B ON a1 = b1 AND a2 > b2"),
        &[
            "null,2", "null,1", "null,2", "null,5", "null,5", "null,5", "null,5", "null,5",
            "null,3", "null,3", "null,3", "null,4", "null,4", "null,4", "null,4", "3,null",
            "1,null", "2,null",
        ],
    );
}

#[test]
fn test_full_join_with_pk_non_equi() {
    check(
        "a1 INT, a2 BIGINT, b1 INT, b2 BIGINT",
        &format!("SELECT a1, a2, b1, b2 FROM {SUM_A} FULL JOIN {SUM_B} ON a2 = b2 AND a1 > b1"),
        &[
            "1,1,null,null",
            "null,null,5,65",
            "null,null,2,5",
            "2,2,null,null",
            "3,2,null,null",
            "null,null,3,15",
            "null,null,4,34",
            "null,null,1,1",
        ],
    );
}

#[test]
fn test_full_join() {
    check(
        "a1 INT, b1 INT",
        "SELECT a1, b1 FROM A FULL JOIN B ON a1 = b1",
        &[
            "1,1", "null,5", "null,5", "null,5", "null,4", "null,5", "null,4", "null,5", "null,4",
            "null,4", "2,2", "2,2", "3,3", "3,3", "3,3",
        ],
    );
}

#[test]
fn test_full_join_with_equal_pk() {
    check(
        "a1 INT, b1 INT",
        &format!("SELECT a1, b1 FROM {SUM_A} FULL JOIN {SUM_B} ON a1 = b1"),
        &["null,4", "1,1", "3,3", "2,2", "null,5"],
    );
}

#[test]
fn test_full_join_with_full_not_pk() {
    check(
        "a1 INT, b1 INT",
        &format!("SELECT a1, b1 FROM {SUM_A} FULL JOIN B ON a1 = b1"),
        &[
            "null,4", "null,4", "null,4", "null,4", "null,5", "null,5", "null,5", "null,5",
            "null,5", "3,3", "3,3", "3,3", "1,1", "2,2", "2,2",
        ],
    );
}

#[test]
fn full_join_with_pk() {
    check(
        "a1 INT, a2 BIGINT, b1 INT, b2 BIGINT",
        &format!("SELECT a1, a2, b1, b2 FROM {SUM_A} FULL JOIN {SUM_B} ON a2 = b2"),
        &[
            "null,null,3,15",
            "null,null,4,34",
            "null,null,5,65",
            "3,2,null,null",
            "2,2,null,null",
            "null,null,2,5",
            "1,1,1,1",
        ],
    );
}

const NULL_T1: &str = "(SELECT CASE WHEN a <> 3 THEN a END AS a, b FROM T1) AS t1";
const NULL_T2: &str = "(SELECT CASE WHEN a <> 3 THEN a END AS a, b FROM T2) AS t2";

#[test]
fn test_null_right_outer_join() {
    check(
        "a1 INT, b1 BIGINT, a2 INT, b2 BIGINT",
        &format!("SELECT t1.a, t1.b, t2.a, t2.b FROM {NULL_T1} RIGHT OUTER JOIN {NULL_T2} ON t1.a = t2.a"),
        &["1,1,1,1", "null,null,2,2", "null,null,null,2"],
    );
}

#[test]
fn test_null_full_outer_join() {
    check(
        "a1 INT, b1 BIGINT, a2 INT, b2 BIGINT",
        &format!(
            "SELECT t1.a, t1.b, t2.a, t2.b FROM {NULL_T1} FULL OUTER JOIN {NULL_T2} ON t1.a = t2.a"
        ),
        &[
            "1,1,1,1",
            "null,null,2,2",
            "4,2,null,null",
            "null,8,null,null",
            "null,null,null,2",
        ],
    );
}

#[test]
fn test_join() {
    check(
        "a3 STRING, b4 STRING",
        "SELECT a3, b4 FROM A, B WHERE a2 = b2",
        &["Hi,Hallo", "Hello,Hallo Welt", "Hello world,Hallo Welt"],
    );
}

#[test]
fn test_join_with_filter() {
    check(
        "a3 STRING, b4 STRING",
        "SELECT a3, b4 FROM A, B WHERE a2 = b2 AND a2 < 2",
        &["Hi,Hallo"],
    );
}

#[test]
fn test_data_stream_join_with_aggregation() {
    check(
        "n1 BIGINT, n2 BIGINT",
        "SELECT COUNT(b4), COUNT(a2) FROM A, B WHERE a1 = b1",
        &["6,6"],
    );
}

#[test]
fn test_union() {
    check(
        "c STRING",
        "SELECT c FROM (SELECT a1 AS a, a2 AS b, a3 AS c FROM A UNION ALL SELECT a1, a2, a3 FROM A) AS u",
        &["Hi", "Hello", "Hello world", "Hi", "Hello", "Hello world"],
    );
}

#[test]
fn test_union_with_filter() {
    check(
        "c STRING",
        "SELECT c FROM (SELECT a1 AS a, a2 AS b, a3 AS c FROM A UNION ALL SELECT b1, b2, b4 FROM B) AS u WHERE b < 2",
        &["Hi", "Hallo"],
    );
}
