//! Deduplication planned from `ROW_NUMBER() ... WHERE rn = 1`: keep-first
//! and keep-last on a `PROCTIME()` column and on a rowtime column. Their
//! changelogs pinned (golden), one record at a time and mini-batch, their
//! EXPLAIN, what is refused, and results equal to the oracle (ROW_NUMBER
//! from scratch) with mini-batch off and on, on both backends at
//! parallelism 1 and 4.

mod common;

use common::{run_mem, MemSources};
use operators::changelog::Change;
use operators::value::{cmp_rows, Row, Value};
use optimizer::logical::Statement;
use optimizer::oracle;
use optimizer::session::{explain_script, RunOptions};

fn mini_batch(size: usize) -> Vec<(&'static str, String)> {
    vec![
        ("table.exec.mini-batch.enabled", "true".to_string()),
        ("table.exec.mini-batch.allow-latency", "1 h".to_string()),
        ("table.exec.mini-batch.size", size.to_string()),
    ]
}
use proptest::prelude::*;

const DDL: &str = "CREATE TABLE ev (
  k  BIGINT,
  v  BIGINT,
  ts TIMESTAMP(3),
  pt AS PROCTIME(),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'datagen');
CREATE TABLE first_pt (k BIGINT, v BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'blackhole');
CREATE TABLE last_pt (k BIGINT, v BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'blackhole');
CREATE TABLE last_pt_upsert (k BIGINT, v BIGINT, ts TIMESTAMP(3), PRIMARY KEY (k) NOT ENFORCED)
  WITH ('connector' = 'blackhole');
CREATE TABLE first_ts (k BIGINT, v BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'blackhole');
CREATE TABLE last_ts (k BIGINT, v BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'blackhole');
";

fn dedup(sink: &str, order: &str) -> String {
    format!(
        "INSERT INTO {sink} SELECT k, v, ts FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY {order}) AS rn FROM ev
) WHERE rn = 1;\n"
    )
}

fn script() -> String {
    let mut s = DDL.to_string();
    s += &dedup("first_pt", "pt ASC");
    s += &dedup("last_pt", "pt DESC");
    s += &dedup("last_pt_upsert", "pt DESC");
    s += &dedup("first_ts", "ts");
    s += &dedup("last_ts", "ts DESC");
    s
}

fn sources(rows: &[(i64, i64, i64)]) -> MemSources {
    let mut s = MemSources::default();
    s.0.insert(
        "ev".into(),
        rows.iter()
            .map(|&(k, v, t)| Change::insert(vec![Value::Int(k), Value::Int(v), Value::Ts(t)]))
            .collect(),
    );
    s
}

/// (k, v, ts in ms): key 1 three times (its second row the earliest), key 2
/// once, key 1's last row equal in time to its first.
const ROWS: [(i64, i64, i64); 5] = [
    (1, 10, 1000),
    (2, 20, 1500),
    (1, 11, 500),
    (1, 12, 2000),
    (1, 13, 2000),
];

#[test]
fn golden_changelogs_of_keep_first_and_keep_last() {
    let (_, out) = run_mem(
        &script(),
        &sources(&ROWS),
        &[("lab.source.batch-size", "1".to_string())],
        RunOptions::keep_all(),
    )
    .unwrap();
    let log = |i: usize| -> Vec<String> {
        out[i]
            .changelog
            .iter()
            .map(|c| {
                // Times as ms since the epoch: shorter goldens.
                c.to_string().replace("1970-01-01 00:00:0", "")
            })
            .collect()
    };
    // Keep-first on processing time: inserts only.
    assert_eq!(log(0), ["+I[1, 10, 1.000]", "+I[2, 20, 1.500]"]);
    // Keep-last on processing time into a retract sink: -U/+U.
    assert_eq!(
        log(1),
        [
            "+I[1, 10, 1.000]",
            "+I[2, 20, 1.500]",
            "-U[1, 10, 1.000]",
            "+U[1, 11, 0.500]",
            "-U[1, 11, 0.500]",
            "+U[1, 12, 2.000]",
            "-U[1, 12, 2.000]",
            "+U[1, 13, 2.000]"
        ]
    );
    // Into an upsert sink keyed by k: no -U (its consumer needs none).
    assert_eq!(
        log(2),
        [
            "+I[1, 10, 1.000]",
            "+I[2, 20, 1.500]",
            "+U[1, 11, 0.500]",
            "+U[1, 12, 2.000]",
            "+U[1, 13, 2.000]"
        ]
    );
    // Keep-first on rowtime: the earlier row 11 replaces 10; 13 (a tie
    // with 12, later) does not replace 11.
    assert_eq!(
        log(3),
        [
            "+I[1, 10, 1.000]",
            "+I[2, 20, 1.500]",
            "-U[1, 10, 1.000]",
            "+U[1, 11, 0.500]"
        ]
    );
    // Keep-last on rowtime: 11 is earlier (dropped); a tie replaces.
    assert_eq!(
        log(4),
        [
            "+I[1, 10, 1.000]",
            "+I[2, 20, 1.500]",
            "-U[1, 10, 1.000]",
            "+U[1, 12, 2.000]",
            "-U[1, 12, 2.000]",
            "+U[1, 13, 2.000]"
        ]
    );
    // Counters of the keep-first operator: 2 rows kept, 3 dropped.
    let stage = out[0]
        .report
        .stages
        .iter()
        .find(|s| s.name.contains("Deduplicate"))
        .expect("a Deduplicate stage");
    let counter = |name: &str| -> u64 {
        stage
            .counters
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v)
            .sum()
    };
    assert_eq!(counter("rows_kept"), 2);
    assert_eq!(counter("duplicates_dropped"), 3);
}

/// Mini-batch: one bundle of the whole input emits once per key, against
/// the state, the row the bundle keeps.
#[test]
fn golden_changelogs_under_mini_batch() {
    let mut o = mini_batch(100);
    o.push(("lab.source.batch-size", "1".to_string()));
    let (_, out) = run_mem(&script(), &sources(&ROWS), &o, RunOptions::keep_all()).unwrap();
    let log = |i: usize| -> Vec<String> {
        out[i]
            .changelog
            .iter()
            .map(|c| c.to_string().replace("1970-01-01 00:00:0", ""))
            .collect()
    };
    assert_eq!(log(0), ["+I[1, 10, 1.000]", "+I[2, 20, 1.500]"]);
    assert_eq!(log(1), ["+I[1, 13, 2.000]", "+I[2, 20, 1.500]"]);
    assert_eq!(log(3), ["+I[1, 11, 0.500]", "+I[2, 20, 1.500]"]);
    assert_eq!(log(4), ["+I[1, 13, 2.000]", "+I[2, 20, 1.500]"]);
    // Bundles of two: [r1 r2] [r3 r4] [r5] on keep-last by processing time.
    let mut o = mini_batch(2);
    o.push(("lab.source.batch-size", "1".to_string()));
    let (_, out) = run_mem(&script(), &sources(&ROWS), &o, RunOptions::keep_all()).unwrap();
    let rows: Vec<String> = out[1]
        .changelog
        .iter()
        .map(|c| c.to_string().replace("1970-01-01 00:00:0", ""))
        .collect();
    assert_eq!(
        rows,
        [
            "+I[1, 10, 1.000]",
            "+I[2, 20, 1.500]",
            "-U[1, 10, 1.000]",
            "+U[1, 12, 2.000]",
            "-U[1, 12, 2.000]",
            "+U[1, 13, 2.000]"
        ]
    );
}

#[test]
fn explain_shows_flinks_deduplicate() {
    let sql = format!("{DDL}EXPLAIN {}", dedup("first_pt", "pt"));
    let text = explain_script(&sql, &[]).unwrap();
    assert!(
        text.contains(
            "+- Deduplicate(keep=[FirstRow], key=[k], order=[PROCTIME], stateTtl=[0 ms (config)], changelogMode=[I])"
        ),
        "{text}"
    );
    assert!(
        text.contains("rn=[ROW_NUMBER() OVER (PARTITION BY $0 ORDER BY $3)]"),
        "{text}"
    );
    let sql = format!("{DDL}EXPLAIN {}", dedup("last_ts", "ts DESC"));
    let text = explain_script(&sql, &[("table.exec.state.ttl".into(), "1 h".into())]).unwrap();
    assert!(
        text.contains(
            "Deduplicate(keep=[LastRow], key=[k], order=[ROWTIME], stateTtl=[3600000 ms (config)], changelogMode=[I,UB,UA])"
        ),
        "{text}"
    );
}

#[test]
fn what_is_not_a_deduplication_is_refused_where_it_is() {
    let q = |body: &str| format!("{DDL}{body}");
    let cases = [
        (
            q("INSERT INTO first_pt SELECT k, v, ts FROM (\n  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY pt) AS rn FROM ev\n) WHERE rn <= 3;"),
            "a Top-N ordered by the PROCTIME() column 'pt' is not supported",
        ),
        (
            q("INSERT INTO first_pt SELECT k, v, rn FROM (\n  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY pt) AS rn FROM ev\n) WHERE rn = 1;"),
            "a Top-N ordered by the PROCTIME() column 'pt' is not supported",
        ),
        (
            q("INSERT INTO first_pt SELECT k, v, ts FROM (\n  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY pt) AS rn FROM ev\n) WHERE v > 1;"),
            "ROW_NUMBER() needs an upper bound on 'rn' in the outer WHERE",
        ),
    ];
    for (sql, want) in cases {
        let err = optimizer::sql::parse_script(&sql).unwrap_err().to_string();
        assert!(err.contains(want), "{err}\nwanted: {want}");
        assert!(err.contains("line "), "{err}");
    }
    // Ordered by a plain column, `rn = 1` is a Top-1 (a Rank), as in Flink.
    let sql = format!(
        "{DDL}EXPLAIN INSERT INTO first_pt SELECT k, v, ts FROM (\n  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) AS rn FROM ev\n) WHERE rn = 1;"
    );
    let text = explain_script(&sql, &[]).unwrap();
    assert!(
        text.contains("Rank(strategy=[AppendFastStrategy], rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd=1], partitionBy=[k], orderBy=[v ASC]"),
        "{text}"
    );
}

fn sorted(mut rows: Vec<Row>) -> Vec<Row> {
    rows.sort_by(|x, y| cmp_rows(x, y));
    rows
}

fn check(rows: &[(i64, i64, i64)], overrides: &[(&str, String)]) -> Result<(), TestCaseError> {
    let sql = script();
    let srcs = sources(rows);
    let (script, outcomes) = run_mem(&sql, &srcs, overrides, RunOptions::keep_all())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    // The oracle reads whole rows: the PROCTIME() column's value is never
    // read by the queries (order is arrival).
    let full: Vec<Row> = srcs.0["ev"]
        .iter()
        .map(|c| {
            let mut r = c.row.clone();
            r.push(Value::Null);
            r
        })
        .collect();
    let inserts = script.statements.iter().filter_map(|s| match s {
        Statement::Insert(i) => Some(i),
        _ => None,
    });
    for (insert, outcome) in inserts.zip(&outcomes) {
        let expected = sorted(oracle::evaluate(&insert.query, &|_| full.clone()));
        prop_assert_eq!(
            outcome.sink_report().result.as_ref().unwrap(),
            &expected,
            "{} differs from the oracle with {:?}",
            insert.sink,
            overrides
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn deduplication_matches_the_oracle(
        rows in prop::collection::vec((0i64..5, 0i64..4, 0i64..6), 0..40),
        batch in prop_oneof![Just(1usize), Just(3), Just(1024)],
    ) {
        // Few distinct values: equal rows and equal times are common.
        let rows: Vec<(i64, i64, i64)> = rows.into_iter().map(|(k, v, t)| (k, v, t * 100)).collect();
        for bundle in [None, Some(1usize), Some(7)] {
            for backend in ["hashmap", "rocksdb"] {
                for p in [1usize, 4] {
                    let mut o = vec![
                        ("state.backend.type", backend.to_string()),
                        ("parallelism.default", p.to_string()),
                        ("lab.source.batch-size", batch.to_string()),
                        ("lab.clock", "deterministic".to_string()),
                    ];
                    o.extend(bundle.map(mini_batch).unwrap_or_default());
                    check(&rows, &o)?;
                }
            }
        }
    }
}
