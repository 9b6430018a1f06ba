//! The queries and random inputs of the property tests
//! (`equivalence.rs`, `compiled_plan_roundtrip.rs`): tables `a` (a
//! changelog), `b` (upserts keyed by `id`) and `c` (insert-only), queries
//! over them grouped by what the configuration changes, and the
//! configurations that change it.

use super::MemSources;
use operators::changelog::Change;
use operators::value::{Row, Value};
use proptest::prelude::*;
use std::collections::HashMap;

pub const DDL: &str = "
CREATE TABLE a (k INT, v INT, s STRING) WITH ('connector' = 'filesystem', 'path' = 'a.csv', 'format' = 'changelog-csv');
CREATE TABLE b (id INT, k INT, w INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'filesystem', 'path' = 'b.csv', 'format' = 'changelog-csv');
CREATE TABLE c (k INT, x INT) WITH ('connector' = 'filesystem', 'path' = 'c.csv', 'format' = 'csv');
";

/// (sink DDL columns, query). Each becomes `CREATE TABLE sN` + `INSERT INTO sN`.
pub const QUERIES: &[(&str, &str)] = &[
    (
        "k INT, c1 BIGINT, c2 BIGINT, s1 BIGINT, mn INT, mx INT, av INT",
        "SELECT k, COUNT(*), COUNT(v), SUM(v), MIN(v), MAX(v), AVG(v) FROM a GROUP BY k",
    ),
    (
        "k INT, d1 BIGINT, d2 BIGINT, f1 BIGINT, mx STRING",
        "SELECT k, COUNT(DISTINCT v), SUM(DISTINCT v), COUNT(DISTINCT v) FILTER (WHERE s = 'x'), MAX(s) FROM a GROUP BY k",
    ),
    ("k INT, v2 INT", "SELECT k, v * 2 FROM a WHERE v > 0 OR s IS NULL"),
    ("k INT, v INT, w INT", "SELECT a.k, a.v, b.w FROM a JOIN b ON a.k = b.k"),
    (
        "k INT, v INT, w INT",
        "SELECT a.k, a.v, b.w FROM a LEFT JOIN b ON a.k = b.k AND a.v < b.w",
    ),
    (
        "v INT, w INT, x INT",
        "SELECT a.v, b.w, c.x FROM a JOIN b ON a.k = b.k LEFT JOIN c ON b.k = c.k",
    ),
    (
        "k INT, n BIGINT, sv BIGINT",
        "SELECT b.k, COUNT(*), SUM(a.v) FROM a LEFT JOIN b ON a.k = b.k GROUP BY b.k",
    ),
    (
        "cnt BIGINT, users BIGINT",
        "SELECT cnt, COUNT(*) FROM (SELECT k, COUNT(*) AS cnt FROM a GROUP BY k) AS t GROUP BY cnt",
    ),
    (
        "k INT, n BIGINT, w INT",
        "SELECT t.k, t.n, b.w FROM (SELECT k, COUNT(*) AS n FROM a GROUP BY k) AS t JOIN b ON t.k = b.k",
    ),
    (
        "k INT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED",
        "SELECT k, COUNT(*) AS n FROM c GROUP BY k",
    ),
];

/// Aggregations whose strategy the configuration changes.
pub const AGG_QUERIES: &[(&str, &str)] = &[
    (
        "k INT, c1 BIGINT, c2 BIGINT, s1 BIGINT, mn INT, mx INT, av INT",
        "SELECT k, COUNT(*), COUNT(v), SUM(v), MIN(v), MAX(v), AVG(v) FROM a GROUP BY k",
    ),
    (
        "k INT, d1 BIGINT, d2 BIGINT, fx BIGINT, fy BIGINT, mx STRING",
        "SELECT k, COUNT(DISTINCT v), SUM(DISTINCT v), COUNT(DISTINCT v) FILTER (WHERE s = 'x'), \
         COUNT(DISTINCT v) FILTER (WHERE s = 'y'), MAX(s) FROM a GROUP BY k",
    ),
    (
        "k INT, cx BIGINT, cy BIGINT, n BIGINT",
        "SELECT k, COUNT(DISTINCT CASE WHEN s = 'x' THEN v END), COUNT(DISTINCT CASE WHEN s = 'y' THEN v END), \
         COUNT(*) FROM a GROUP BY k",
    ),
    (
        "s STRING, dk BIGINT, dv BIGINT, sv BIGINT, av INT, mn INT",
        "SELECT s, COUNT(DISTINCT k), COUNT(DISTINCT v), SUM(v), AVG(DISTINCT v), MIN(v) FROM a GROUP BY s",
    ),
    (
        "n BIGINT, sx BIGINT, dx BIGINT",
        "SELECT COUNT(*), SUM(x), COUNT(DISTINCT x) FROM c",
    ),
    (
        "cnt BIGINT, users BIGINT, sk BIGINT",
        "SELECT cnt, COUNT(*), SUM(k) FROM (SELECT k, COUNT(*) AS cnt FROM a GROUP BY k) AS t GROUP BY cnt",
    ),
    (
        "k INT, n BIGINT, sv BIGINT, mw INT",
        "SELECT b.k, COUNT(*), SUM(a.v), MAX(b.w) FROM a JOIN b ON a.k = b.k GROUP BY b.k",
    ),
    (
        "k INT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED",
        "SELECT k, COUNT(*) AS n FROM c GROUP BY k",
    ),
    (
        "k INT, mn INT, mx INT, n BIGINT, av INT",
        "SELECT k, MIN(x), MAX(x), COUNT(*), AVG(x) FROM c GROUP BY k",
    ),
];

pub fn script() -> String {
    script_for(QUERIES)
}

pub fn script_for(queries: &[(&str, &str)]) -> String {
    let mut s = DDL.to_string();
    for (i, (cols, _)) in queries.iter().enumerate() {
        s.push_str(&format!(
            "CREATE TABLE s{i} ({cols}) WITH ('connector' = 'blackhole');\n"
        ));
    }
    for (i, (_, q)) in queries.iter().enumerate() {
        s.push_str(&format!("INSERT INTO s{i} {q};\n"));
    }
    s
}

#[derive(Clone, Debug)]
enum Action {
    Insert(Row),
    Delete(usize),
    Update(usize, Row),
}

fn small_int(lo: i64, hi: i64, null_weight: u32) -> impl Strategy<Value = Value> + Clone {
    prop_oneof![null_weight => Just(Value::Null), 10 => (lo..hi).prop_map(Value::Int)]
}

fn a_row() -> impl Strategy<Value = Row> + Clone {
    (
        small_int(0, 4, 1),
        small_int(-3, 5, 1),
        prop_oneof![
            Just(Value::Null),
            Just(Value::str("x")),
            Just(Value::str("y"))
        ],
    )
        .prop_map(|(k, v, s)| vec![k, v, s])
}

fn actions(row: impl Strategy<Value = Row> + Clone) -> impl Strategy<Value = Vec<Action>> {
    proptest::collection::vec(
        prop_oneof![
            5 => row.clone().prop_map(Action::Insert),
            1 => any::<usize>().prop_map(Action::Delete),
            2 => (any::<usize>(), row).prop_map(|(i, r)| Action::Update(i, r)),
        ],
        0..30,
    )
}

/// A consistent changelog: only live rows are retracted.
fn changelog(actions: &[Action], insert_only: bool) -> Vec<Change> {
    let mut live: Vec<Row> = Vec::new();
    let mut out = Vec::new();
    for a in actions {
        match a {
            Action::Insert(r) => {
                live.push(r.clone());
                out.push(Change::insert(r.clone()));
            }
            Action::Delete(i) if !live.is_empty() && !insert_only => {
                let r = live.remove(i % live.len());
                out.push(Change::delete(r));
            }
            Action::Update(i, r) if !live.is_empty() && !insert_only => {
                let j = i % live.len();
                let old = std::mem::replace(&mut live[j], r.clone());
                out.push(Change::update_before(old));
                out.push(Change::update_after(r.clone()));
            }
            _ => {}
        }
    }
    out
}

/// Table `b` is keyed by `id`: updates keep the id, inserts of a live id update it.
fn keyed_changelog(rows: &[(i64, Value, Value, bool)]) -> Vec<Change> {
    let mut live: HashMap<i64, Row> = HashMap::new();
    let mut out = Vec::new();
    for (id, k, w, delete) in rows {
        let new = vec![Value::Int(*id), k.clone(), w.clone()];
        match (live.get(id).cloned(), delete) {
            (Some(old), true) => {
                live.remove(id);
                out.push(Change::delete(old));
            }
            (Some(old), false) => {
                live.insert(*id, new.clone());
                out.push(Change::update_before(old));
                out.push(Change::update_after(new));
            }
            (None, false) => {
                live.insert(*id, new.clone());
                out.push(Change::insert(new));
            }
            (None, true) => {}
        }
    }
    out
}

pub fn inputs() -> impl Strategy<Value = MemSources> {
    (
        actions(a_row()),
        proptest::collection::vec(
            (
                0..6i64,
                small_int(0, 4, 1),
                small_int(-3, 5, 1),
                proptest::bool::weighted(0.2),
            ),
            0..20,
        ),
        actions((small_int(0, 4, 1), small_int(0, 9, 1)).prop_map(|(k, x)| vec![k, x])),
    )
        .prop_map(|(a, b, c)| {
            let mut m = HashMap::new();
            m.insert("a".to_string(), changelog(&a, false));
            m.insert("b".to_string(), keyed_changelog(&b));
            m.insert("c".to_string(), changelog(&c, true));
            MemSources(m)
        })
}

/// The configurations of the aggregation strategies: mini-batch off and on
/// with several bundle sizes, each phase strategy, split distinct on and
/// off with 1, 4 and 1024 buckets.
pub fn agg_variants() -> Vec<Vec<(&'static str, String)>> {
    let mut v = vec![vec![]];
    for size in ["1", "3", "1000"] {
        for phase in ["AUTO", "ONE_PHASE", "TWO_PHASE"] {
            v.push(vec![
                ("table.exec.mini-batch.enabled", "true".to_string()),
                ("table.exec.mini-batch.allow-latency", "1 h".to_string()),
                ("table.exec.mini-batch.size", size.to_string()),
                ("table.optimizer.agg-phase-strategy", phase.to_string()),
            ]);
        }
    }
    for buckets in ["1", "4", "1024"] {
        for mini_batch in [false, true] {
            let mut c = vec![
                (
                    "table.optimizer.distinct-agg.split.enabled",
                    "true".to_string(),
                ),
                (
                    "table.optimizer.distinct-agg.split.bucket-num",
                    buckets.to_string(),
                ),
            ];
            if mini_batch {
                c.push(("table.exec.mini-batch.enabled", "true".to_string()));
                c.push(("table.exec.mini-batch.allow-latency", "1 h".to_string()));
                c.push(("table.exec.mini-batch.size", "3".to_string()));
            }
            v.push(c);
        }
    }
    v
}

/// Joins whose strategy the configuration or hints change.
pub const JOIN_QUERIES: &[(&str, &str)] = &[
    (
        "k INT, v INT, w INT, x INT",
        "SELECT a.k, a.v, b.w, c.x FROM a JOIN b ON a.k = b.k LEFT JOIN c ON b.k = c.k",
    ),
    (
        "v INT, w INT, x INT",
        "SELECT a.v, b.w, c.x FROM a LEFT JOIN b ON a.k = b.k AND a.v < b.w LEFT JOIN c ON a.k = c.k",
    ),
    (
        "v INT, w INT, x INT, x2 INT",
        "SELECT /*+ MULTI_JOIN(a, b, c) */ a.v, b.w, c.x, c2.x FROM a JOIN b ON a.k = b.k \
         JOIN c ON b.k = c.k LEFT JOIN c AS c2 ON c.x = c2.x",
    ),
    (
        "v INT, k2 INT, id2 INT",
        "SELECT a.v, c2.k, b2.id FROM a JOIN b ON a.k = b.k JOIN c ON a.k = c.k \
         JOIN c AS c2 ON c.x = c2.x JOIN b AS b2 ON c2.x = b2.w",
    ),
    (
        "k INT, n BIGINT, sw BIGINT",
        "SELECT a.k, COUNT(*), SUM(b.w) FROM a JOIN b ON a.k = b.k LEFT JOIN c ON a.k = c.k GROUP BY a.k",
    ),
];

/// FULL and RIGHT joins: over a changelog, upserts and an insert-only
/// table, with a residual condition, in a chain a MultiJoin may not take,
/// and under an aggregate.
pub const OUTER_JOIN_QUERIES: &[(&str, &str)] = &[
    (
        "k INT, v INT, k2 INT, w INT",
        "SELECT a.k, a.v, b.k, b.w FROM a FULL OUTER JOIN b ON a.k = b.k",
    ),
    (
        "v INT, k INT, w INT",
        "SELECT a.v, b.k, b.w FROM a RIGHT JOIN b ON a.k = b.k AND a.v < b.w",
    ),
    (
        "k INT, x INT, w INT",
        "SELECT c.k, c.x, b.w FROM c FULL JOIN b ON c.k = b.k AND c.x > b.w",
    ),
    (
        "v INT, w INT, x INT",
        "SELECT a.v, b.w, c.x FROM a JOIN b ON a.k = b.k RIGHT JOIN c ON b.k = c.k",
    ),
    (
        "v INT, w INT, x INT",
        "SELECT a.v, b.w, c.x FROM a LEFT JOIN b ON a.k = b.k FULL OUTER JOIN c ON a.k = c.k",
    ),
    (
        "k INT, n BIGINT, sv BIGINT",
        "SELECT b.k, COUNT(*), SUM(a.v) FROM a FULL JOIN b ON a.k = b.k GROUP BY b.k",
    ),
];

/// Comma joins with the equality in WHERE, planned as INNER joins.
pub const COMMA_JOIN_QUERIES: &[(&str, &str)] = &[
    (
        "k INT, v INT, w INT",
        "SELECT a.k, a.v, b.w FROM a, b WHERE a.k = b.k AND a.v < b.w",
    ),
    (
        "v INT, w INT, x INT",
        "SELECT a.v, b.w, c.x FROM a, b, c WHERE b.k = c.k AND a.k = b.k AND (c.x > 2 OR a.v IS NULL)",
    ),
    (
        "k INT, n BIGINT",
        "SELECT c.k, COUNT(*) FROM c, b AS b2 WHERE c.k = b2.k AND b2.w > 0 GROUP BY c.k",
    ),
];

/// UNION ALL: of scans, of aggregates (updating inputs), of an aggregate
/// and a filtered scan, under an aggregate and under a join; UNION.
pub const UNION_QUERIES: &[(&str, &str)] = &[
    (
        "k INT, v INT",
        "SELECT k, v FROM a UNION ALL SELECT k, w FROM b",
    ),
    (
        "k INT, n BIGINT",
        "SELECT k, COUNT(*) FROM a GROUP BY k UNION ALL SELECT k, COUNT(*) FROM c GROUP BY k",
    ),
    (
        "k INT, n BIGINT",
        "SELECT k, COUNT(*) FROM b GROUP BY k UNION ALL SELECT k, CAST(x AS BIGINT) FROM c WHERE x > 3",
    ),
    (
        "k INT, s BIGINT, n BIGINT",
        "SELECT u.k, SUM(u.v), COUNT(*) FROM (SELECT k, v FROM a UNION ALL SELECT k, x FROM c \
         UNION ALL SELECT k, w FROM b) AS u GROUP BY u.k",
    ),
    (
        "k INT, v INT, w INT",
        "SELECT u.k, u.v, b.w FROM (SELECT k, v FROM a UNION ALL SELECT k, x FROM c) AS u \
         LEFT JOIN b ON u.k = b.k",
    ),
    // UNION as Flink plans it: UNION ALL, then a group aggregate on every column.
    ("k INT, v INT", "SELECT k, v FROM a UNION SELECT k, w FROM b UNION SELECT k, x FROM c"),
];

pub fn join_variants() -> Vec<Vec<(&'static str, String)>> {
    let mini_batch = |size: &str| {
        vec![
            ("table.exec.mini-batch.enabled", "true".to_string()),
            ("table.exec.mini-batch.allow-latency", "1 h".to_string()),
            ("table.exec.mini-batch.size", size.to_string()),
        ]
    };
    let multi = ("table.optimizer.multi-join.enabled", "true".to_string());
    let mut with_both = mini_batch("3");
    with_both.push(multi.clone());
    vec![
        vec![],
        vec![multi],
        mini_batch("1"),
        mini_batch("3"),
        mini_batch("1000"),
        with_both,
        // Asynchronous state: the binary joins one record at a time with
        // each batch's keys loaded together (the MultiJoin stays off).
        vec![("table.exec.async-state.enabled", "true".to_string())],
        // The sources' batches moved through the plan breadth-first
        // (another changelog, the same results).
        vec![("lab.source.delivery", "breadth-first".to_string())],
    ]
}

/// Sinks keyed on another key than the query's unique key: a
/// SinkUpsertMaterializer keys the result by the sink's primary key. Each
/// result is unique on that key, as a user declaring it promises.
pub const MATERIALIZED_QUERIES: &[(&str, &str)] = &[
    (
        // A LEFT join that matches each b row at most once: unique on b.id.
        "id INT, w INT, n BIGINT, PRIMARY KEY (id) NOT ENFORCED",
        "SELECT b.id, b.w, t.n FROM b LEFT JOIN (SELECT k, COUNT(*) AS n FROM a GROUP BY k) AS t \
         ON b.k = t.k",
    ),
    (
        // The primary key holds an updated column: an update moves the row.
        "k INT, n BIGINT, n2 BIGINT, PRIMARY KEY (k, n) NOT ENFORCED",
        "SELECT k, n, n * 2 FROM (SELECT k, COUNT(*) AS n FROM a GROUP BY k) AS t",
    ),
    (
        // The query's own unique key: materialized only when forced.
        "k INT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED",
        "SELECT k, COUNT(*) AS n FROM a GROUP BY k",
    ),
];

/// Upsert sinks over updating joins and filters: Flink's upsert-key rule
/// plans some without `-U` (`physical/rules/update_before.rs`), the rest
/// fall back to `-U` everywhere; all must hold the batch result.
pub const UPSERT_QUERIES: &[(&str, &str)] = &[
    (
        // Both inputs' unique keys hold the join key: no -U.
        "k INT, n BIGINT, mx INT, PRIMARY KEY (k) NOT ENFORCED",
        "SELECT t.k, t.n, u.mx FROM (SELECT k, COUNT(*) AS n FROM a GROUP BY k) AS t \
         JOIN (SELECT k, MAX(w) AS mx FROM b GROUP BY k) AS u ON t.k = u.k",
    ),
    (
        // A residual on non-key columns: -U.
        "k INT, n BIGINT, mx INT, PRIMARY KEY (k) NOT ENFORCED",
        "SELECT t.k, t.n, u.mx FROM (SELECT k, COUNT(*) AS n FROM a GROUP BY k) AS t \
         JOIN (SELECT k, MAX(w) AS mx FROM b GROUP BY k) AS u ON t.k = u.k AND t.n < u.mx",
    ),
    (
        // The updating right side of a LEFT join: -U.
        "k INT, n BIGINT, mx INT, PRIMARY KEY (k) NOT ENFORCED",
        "SELECT t.k, t.n, u.mx FROM (SELECT k, COUNT(*) AS n FROM a GROUP BY k) AS t \
         LEFT JOIN (SELECT k, MAX(w) AS mx FROM b GROUP BY k) AS u ON t.k = u.k",
    ),
    (
        // A CDC table joined on its primary key: no -U needed from it.
        "id INT, w INT, n BIGINT, PRIMARY KEY (id) NOT ENFORCED",
        "SELECT b.id, b.w, t.n FROM b JOIN (SELECT k, COUNT(*) AS n FROM a GROUP BY k) AS t \
         ON b.id = t.k",
    ),
    (
        // A filter on an aggregated value: -U.
        "k INT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED",
        "SELECT k, n FROM (SELECT k, COUNT(*) AS n FROM a GROUP BY k) AS t WHERE n < 3",
    ),
    (
        // A filter on the key: no -U.
        "k INT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED",
        "SELECT k, n FROM (SELECT k, COUNT(*) AS n FROM a GROUP BY k) AS t WHERE k > 0",
    ),
];

/// Delta join inputs: an insert-only table and an upsert table without
/// deletes whose join key is part of its primary key, both indexed by `k`.
pub const DELTA_DDL: &str = "
CREATE TABLE dl (id INT, k INT, x INT, PRIMARY KEY (id) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = 'dl.csv', 'format' = 'csv', 'index.key' = 'k');
CREATE TABLE dr (k INT, rid INT, y INT, PRIMARY KEY (k, rid) NOT ENFORCED)
  WITH ('connector' = 'tenant', 'update-ratio' = '0.5', 'index.key' = 'k');
CREATE TABLE dout (id INT, k INT, rid INT, x INT, y INT, PRIMARY KEY (id, k, rid) NOT ENFORCED)
  WITH ('connector' = 'blackhole');
INSERT INTO dout SELECT dl.id, dr.k, dr.rid, dl.x, dr.y FROM dl JOIN dr ON dl.k = dr.k AND dl.x <> dr.rid;
";

/// [`DELTA_DDL`]'s tables joined through a filter and a projection on each
/// side (the left's reordering its columns), as Flink 2.2's delta join
/// takes them; the updating side is filtered on its primary key only.
pub const DELTA_CALC_DDL: &str = "
CREATE TABLE dl (id INT, k INT, x INT, PRIMARY KEY (id) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = 'dl.csv', 'format' = 'csv', 'index.key' = 'k');
CREATE TABLE dr (k INT, rid INT, y INT, PRIMARY KEY (k, rid) NOT ENFORCED)
  WITH ('connector' = 'tenant', 'update-ratio' = '0.5', 'index.key' = 'k');
CREATE TABLE dout (id INT, k INT, rid INT, x2 INT, y INT, PRIMARY KEY (id, k, rid) NOT ENFORCED)
  WITH ('connector' = 'blackhole');
INSERT INTO dout SELECT l.id, r.k, r.rid, l.x2, r.y
FROM (SELECT k, id, x * 2 AS x2 FROM dl WHERE x > 0) AS l
JOIN (SELECT k, rid, y FROM dr WHERE rid < 2) AS r ON l.k = r.k AND l.x2 <> r.rid;
";

pub fn delta_inputs() -> impl Strategy<Value = MemSources> {
    (
        proptest::collection::vec((small_int(0, 4, 1), small_int(0, 5, 0)), 0..25),
        proptest::collection::vec((0..4i64, 0..3i64, small_int(0, 9, 1)), 0..25),
    )
        .prop_map(|(l, r)| {
            let left = l
                .into_iter()
                .enumerate()
                .map(|(i, (k, x))| Change::insert(vec![Value::Int(i as i64), k, x]))
                .collect();
            // Upserts without deletes: the first version of (k, rid) is an
            // insert, later ones -U old / +U new.
            let mut live: HashMap<(i64, i64), Row> = HashMap::new();
            let mut right = Vec::new();
            for (k, rid, y) in r {
                let new = vec![Value::Int(k), Value::Int(rid), y];
                match live.insert((k, rid), new.clone()) {
                    Some(old) => {
                        right.push(Change::update_before(old));
                        right.push(Change::update_after(new));
                    }
                    None => right.push(Change::insert(new)),
                }
            }
            MemSources(HashMap::from([
                ("dl".to_string(), left),
                ("dr".to_string(), right),
            ]))
        })
}
