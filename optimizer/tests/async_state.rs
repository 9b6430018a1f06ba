//! Asynchronous state execution (`table.exec.async-state.enabled`) for the
//! group aggregate: on both backends and at parallelism 1 and 4 it
//! materialises what the oracle computes AND emits exactly the changelog of
//! one record at a time (same changes, same order), where only its state
//! accesses are batched; EXPLAIN names it where Flink plans it, and the
//! state counters say how many reads it saved.

mod common;

use common::queries::{inputs, script_for, QUERIES};
use common::{async_state_is_exact, run_mem, MemSources};
use operators::value::Row;
use optimizer::session::RunOptions;
use proptest::prelude::*;
use std::collections::HashMap;

/// Aggregates Flink plans with asynchronous state (no data views: no
/// DISTINCT, no MIN/MAX over a retracting input), plus the shared queries
/// (whose other aggregates stay one record at a time).
const ASYNC_QUERIES: &[(&str, &str)] = &[
    (
        "k INT, c1 BIGINT, c2 BIGINT, s1 BIGINT, av INT",
        "SELECT k, COUNT(*), COUNT(v), SUM(v), AVG(v) FROM a GROUP BY k",
    ),
    (
        "s STRING, k INT, n BIGINT, sv BIGINT",
        "SELECT s, k, COUNT(*), SUM(v) FROM a GROUP BY s, k",
    ),
    (
        "cnt BIGINT, users BIGINT, sk BIGINT",
        "SELECT cnt, COUNT(*), SUM(k) FROM (SELECT k, COUNT(*) AS cnt FROM a GROUP BY k) AS t GROUP BY cnt",
    ),
    (
        "k INT, mn INT, mx INT, n BIGINT",
        "SELECT k, MIN(x), MAX(x), COUNT(*) FROM c GROUP BY k",
    ),
];

fn sql() -> String {
    let all: Vec<(&str, &str)> = ASYNC_QUERIES.iter().chain(QUERIES).copied().collect();
    script_for(&all)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn async_state_matches_the_oracle_and_the_one_at_a_time_changelog(
        sources in inputs(),
        batch in prop_oneof![Just(1usize), Just(3), Just(1024)],
    ) {
        async_state_is_exact(&sql(), &sources, batch)?;
    }
}

fn async_sources() -> MemSources {
    // Table a: 6 inserts over keys 1, 2, 1, 1, 3, 2.
    let mut sources = MemSources(HashMap::new());
    let rows = [(1, 10), (2, 20), (1, 11), (1, 12), (3, 30), (2, 21)];
    sources.0.insert(
        "a".to_string(),
        rows.iter()
            .map(|&(k, v)| {
                operators::changelog::Change::insert(vec![
                    operators::value::Value::Int(k),
                    operators::value::Value::Int(v),
                    operators::value::Value::Null,
                ])
            })
            .collect(),
    );
    sources
}

#[test]
fn explain_names_async_state_where_flink_plans_it() {
    let explain = |overrides: &[(&str, &str)]| {
        let overrides: Vec<(String, String)> = overrides
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let text = optimizer::session::explain_script(&sql(), &overrides).unwrap();
        text.lines()
            // The aggregates (the shared queries' joins have it too, see
            // tests/join_async_state.rs).
            .filter(|l| l.contains("asyncState=[true]") && l.contains("GroupAggregate("))
            .map(|l| l.trim_start_matches([' ', '+', '-', ':']).to_string())
            .collect::<Vec<_>>()
    };
    assert!(explain(&[]).is_empty());
    let on = explain(&[("table.exec.async-state.enabled", "true")]);
    // Every aggregate of ASYNC_QUERIES (the nested one twice), and of the
    // shared queries those without DISTINCT or MIN/MAX over table a.
    pinned_selects(&on);
    // Mini-batch comes first, as in Flink's StreamExecGroupAggregate.
    assert!(explain(&[
        ("table.exec.async-state.enabled", "true"),
        ("table.exec.mini-batch.enabled", "true"),
        ("table.exec.mini-batch.allow-latency", "1 s"),
        ("table.exec.mini-batch.size", "10"),
    ])
    .is_empty());
}

fn pinned_selects(lines: &[String]) {
    let selects: Vec<&str> = lines
        .iter()
        .map(|l| {
            let from = l.find("select=[").map_or(0, |i| i + 8);
            let to = l[from..].find(']').map_or(l.len(), |i| from + i);
            &l[from..to]
        })
        .collect();
    assert_eq!(
        selects,
        [
            "k, COUNT_RETRACT(*) AS EXPR$1, COUNT_RETRACT(v) AS EXPR$2, SUM_RETRACT(v) AS EXPR$3, AVG_RETRACT(v) AS EXPR$4",
            "s, k, COUNT_RETRACT(*) AS EXPR$2, SUM_RETRACT(v) AS EXPR$3",
            "cnt, COUNT_RETRACT(*) AS EXPR$1, SUM_RETRACT(k) AS EXPR$2",
            "k, COUNT_RETRACT(*) AS cnt",
            "k, MIN(x) AS EXPR$1, MAX(x) AS EXPR$2, COUNT(*) AS EXPR$3",
            "k, COUNT_RETRACT(*) AS EXPR$1, SUM_RETRACT(v) AS EXPR$2",
            "cnt, COUNT_RETRACT(*) AS EXPR$1",
            "k, COUNT_RETRACT(*) AS cnt",
            "k, COUNT_RETRACT(*) AS n",
            "k, COUNT(*) AS n",
        ],
        "{lines:#?}"
    );
}

#[test]
fn async_state_reads_each_distinct_key_once_per_batch() {
    let sql = script_for(&ASYNC_QUERIES[..1]);
    let sources = async_sources();
    let reads = |async_state: bool| {
        let mut o = vec![
            ("state.backend.type", "rocksdb".to_string()),
            ("lab.source.batch-size", "3".to_string()),
        ];
        if async_state {
            o.push(("table.exec.async-state.enabled", "true".to_string()));
        }
        let (_, outcomes) = run_mem(&sql, &sources, &o, RunOptions::keep_all()).unwrap();
        let r = &outcomes[0].report;
        (r.state_reads(), r.state_writes())
    };
    // One record at a time: a read and a write per record.
    assert_eq!(reads(false), (6, 6));
    // Batches [1, 2, 1] and [1, 3, 2]: two and three distinct keys.
    assert_eq!(reads(true), (5, 5));
}

/// A changelog of `width`-column rows over `keys` keys in column 0: inserts,
/// and (unless `insert_only`) retractions and updates of live rows.
fn big_changelog(
    keys: i64,
    width: usize,
    insert_only: bool,
) -> impl Strategy<Value = Vec<operators::changelog::Change>> {
    use operators::changelog::Change;
    use operators::value::Value;
    proptest::collection::vec((0..keys, -3i64..6, 0u8..8, any::<usize>()), 0..1500).prop_map(
        move |actions| {
            let mut live: Vec<Row> = Vec::new();
            let mut out = Vec::new();
            for (k, v, what, pick) in actions {
                let mut row = vec![Value::Int(k), Value::Int(v)];
                if width == 3 {
                    row.push(if v % 2 == 0 {
                        Value::Null
                    } else {
                        Value::str("x")
                    });
                }
                match what {
                    0 if !live.is_empty() && !insert_only => {
                        out.push(Change::delete(live.remove(pick % live.len())));
                    }
                    1 if !live.is_empty() && !insert_only => {
                        let j = pick % live.len();
                        let old = std::mem::replace(&mut live[j], row.clone());
                        out.push(Change::update_before(old));
                        out.push(Change::update_after(row));
                    }
                    _ => {
                        live.push(row.clone());
                        out.push(Change::insert(row));
                    }
                }
            }
            out
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    /// Batches of many distinct keys (up to 1024 records over 40 to 5,000
    /// keys), keys repeating within and across batches, with retractions
    /// and updates: still the oracle's result and the one-record-at-a-time
    /// changelog.
    #[test]
    fn async_state_with_many_keys_per_batch_matches_one_at_a_time(
        (a, c) in prop_oneof![Just(40i64), Just(300), Just(5000)]
            .prop_flat_map(|keys| (big_changelog(keys, 3, false), big_changelog(keys, 2, true))),
        batch in prop_oneof![Just(100usize), Just(1024)],
    ) {
        let sql = script_for(ASYNC_QUERIES);
        let mut sources = MemSources(HashMap::new());
        sources.0.insert("a".to_string(), a);
        sources.0.insert("c".to_string(), c);
        async_state_is_exact(&sql, &sources, batch)?;
    }
}
