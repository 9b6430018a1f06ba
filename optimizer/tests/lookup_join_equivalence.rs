//! Lookup joins materialise what the oracle computes (the join of the
//! probe with the lookup table as it is): random probe and lookup rows
//! (repeated keys, NULL keys, keys without a row), INNER and LEFT, keys on
//! one and two columns and on constants, conditions on the table and
//! across both sides,
//! every cache setting (none; partial with 1, 2 and 100 rows; without
//! caching missing keys; expiring), both backends, parallelism 1 and 4.
//! The lookup table does not change while the job runs, so a cache may
//! change what is read from it, never the result.

mod common;

use common::{run_mem, MemSources};
use operators::changelog::Change;
use operators::value::{cmp_rows, Row, Value};
use optimizer::logical::Statement;
use optimizer::oracle;
use optimizer::session::RunOptions;
use proptest::prelude::*;

const CACHES: [&str; 6] = [
    "",
    "'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '1',",
    "'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '2',",
    "'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '100',",
    "'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '3', 'lookup.partial-cache.cache-missing-key' = 'false',",
    "'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.expire-after-write' = '2 ms', 'lookup.partial-cache.expire-after-access' = '1 ms',",
];

const QUERIES: [(&str, &str); 7] = [
    (
        "k INT, v INT, name STRING, w INT",
        "SELECT o.k, o.v, d.name, d.w FROM o JOIN dim FOR SYSTEM_TIME AS OF o.pt AS d ON o.k = d.id",
    ),
    (
        "k INT, v INT, name STRING, w INT",
        "SELECT o.k, o.v, d.name, d.w FROM o LEFT JOIN dim FOR SYSTEM_TIME AS OF o.pt AS d ON o.k = d.id",
    ),
    (
        "k INT, v INT, name STRING",
        "SELECT o.k, o.v, d.name FROM o LEFT JOIN dim FOR SYSTEM_TIME AS OF o.pt AS d ON o.k = d.id AND d.w > o.v",
    ),
    (
        "k INT, name STRING, w INT",
        "SELECT o.k, d.name, d.w FROM o JOIN dim FOR SYSTEM_TIME AS OF o.pt AS d ON d.id = o.k AND d.w > 2",
    ),
    (
        "k INT, v INT, name STRING",
        "SELECT o.k, o.v, d.name FROM o LEFT JOIN dim FOR SYSTEM_TIME AS OF o.pt AS d ON o.k = d.id AND o.v = d.w AND o.v < 4",
    ),
    (
        "k INT, name STRING",
        "SELECT o.k, d.name FROM o LEFT JOIN dim FOR SYSTEM_TIME AS OF o.pt AS d ON d.id = 3",
    ),
    (
        "k INT, v INT, name STRING",
        "SELECT o.k, o.v, d.name FROM o JOIN dim FOR SYSTEM_TIME AS OF o.pt AS d ON o.k = d.id AND d.w = 2",
    ),
];

fn script(cache: &str) -> String {
    let mut sql = format!(
        "CREATE TABLE o (k INT, v INT, pt AS PROCTIME()) WITH ('connector' = 'datagen');\n\
         CREATE TABLE dim (id INT, name STRING, w INT) WITH ({cache} 'connector' = 'datagen');\n"
    );
    for (i, (cols, _)) in QUERIES.iter().enumerate() {
        sql.push_str(&format!(
            "CREATE TABLE s{i} ({cols}) WITH ('connector' = 'blackhole');\n"
        ));
    }
    for (i, (_, q)) in QUERIES.iter().enumerate() {
        sql.push_str(&format!("INSERT INTO s{i} {q};\n"));
    }
    sql
}

fn key() -> impl Strategy<Value = Value> {
    prop_oneof![
        1 => Just(Value::Null),
        8 => (0i64..8).prop_map(Value::Int),
    ]
}

/// Probe rows `(k, v)` and lookup rows `(id, name number, w)`.
type Inputs = (Vec<(Value, i64)>, Vec<(Value, u8, i64)>);

fn inputs() -> impl Strategy<Value = Inputs> {
    (
        prop::collection::vec((key(), 0i64..5), 0..40),
        prop::collection::vec((key(), 0u8..4, 0i64..5), 0..12),
    )
}

fn sorted(mut rows: Vec<Row>) -> Vec<Row> {
    rows.sort_by(|x, y| cmp_rows(x, y));
    rows
}

fn check(
    probe: &[(Value, i64)],
    dim: &[(Value, u8, i64)],
    batch: usize,
) -> Result<(), TestCaseError> {
    let probe_rows: Vec<Row> = probe
        .iter()
        .map(|(k, v)| vec![k.clone(), Value::Int(*v)])
        .collect();
    let dim_rows: Vec<Row> = dim
        .iter()
        .map(|(id, n, w)| vec![id.clone(), Value::str(&format!("n{n}")), Value::Int(*w)])
        .collect();
    let mut sources = MemSources::default();
    sources.0.insert(
        "o".into(),
        probe_rows.iter().cloned().map(Change::insert).collect(),
    );
    sources.0.insert(
        "dim".into(),
        dim_rows.iter().cloned().map(Change::insert).collect(),
    );
    // The oracle reads whole rows: the PROCTIME() column is never read.
    let full_probe: Vec<Row> = probe_rows
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.push(Value::Null);
            r
        })
        .collect();
    let tables = |t: &str| match t {
        "o" => full_probe.clone(),
        _ => dim_rows.clone(),
    };
    for cache in CACHES {
        let sql = script(cache);
        for backend in ["hashmap", "rocksdb"] {
            for p in [1usize, 4] {
                let o = [
                    ("state.backend.type", backend.to_string()),
                    ("parallelism.default", p.to_string()),
                    ("lab.source.batch-size", batch.to_string()),
                ];
                let (script, outcomes) = run_mem(&sql, &sources, &o, RunOptions::keep_all())
                    .map_err(|e| TestCaseError::fail(format!("{e}\n{cache} {o:?}")))?;
                let inserts = script.statements.iter().filter_map(|s| match s {
                    Statement::Insert(i) => Some(i),
                    _ => None,
                });
                for (insert, outcome) in inserts.zip(&outcomes) {
                    let want = sorted(oracle::evaluate(&insert.query, &tables));
                    prop_assert_eq!(
                        outcome.sink_report().result.as_ref().unwrap(),
                        &want,
                        "{} differs from the oracle: cache [{}], {:?}",
                        insert.sink,
                        cache,
                        o
                    );
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn lookup_joins_match_the_oracle(
        (probe, dim) in inputs(),
        batch in prop_oneof![Just(1usize), Just(4), Just(1024)],
    ) {
        check(&probe, &dim, batch)?;
    }
}

/// A probe that repeats few keys many times, the case a cache is for.
#[test]
fn repeated_keys_match_the_oracle() {
    let probe: Vec<(Value, i64)> = (0..60).map(|i| (Value::Int(i % 3), i % 5)).collect();
    let dim: Vec<(Value, u8, i64)> = (0..4).map(|i| (Value::Int(i), i as u8, 3)).collect();
    check(&probe, &dim, 7).unwrap();
}
