//! `lab.source.delivery`: the executor reads one batch per source per
//! round; depth-first (the default) each batch goes through the whole plan
//! before the next source's batch is read, breadth-first all of the round's
//! batches move through the plan one operator per step. Both are schedules
//! of the same dataflow: the results are the same, the changelog is not.
//!
//! The golden sequences pin what each does to a chain of LEFT joins over
//! tables read side by side; the property test holds breadth-first
//! delivery to the oracle on every query of the equivalence tests (whose
//! join and union strategies, and the window joins of
//! `window_equivalence.rs`, run it too).

mod common;

use common::queries::{inputs, script};
use common::{run_mem, run_mem_with_oracle, MemSources};
use operators::changelog::{Change, RowKind};
use operators::value::Value;
use optimizer::session::RunOptions;
use proptest::prelude::*;
use std::collections::HashMap;

const CHAIN: &str = "
CREATE TABLE a (k INT, v INT) WITH ('connector' = 'filesystem', 'path' = 'a.csv', 'format' = 'csv');
CREATE TABLE b (k INT, v INT) WITH ('connector' = 'filesystem', 'path' = 'b.csv', 'format' = 'csv');
CREATE TABLE c (k INT, v INT) WITH ('connector' = 'filesystem', 'path' = 'c.csv', 'format' = 'csv');
CREATE TABLE out (k INT, a INT, b INT, c INT) WITH ('connector' = 'blackhole');
INSERT INTO out
SELECT a.k, a.v, b.v, c.v FROM a LEFT JOIN b ON a.k = b.k LEFT JOIN c ON a.k = c.k;
";

/// Two keys, one row each per table, in the same order in every table.
fn chain_sources() -> MemSources {
    let rows = |base: i64| {
        (1..=2)
            .map(|k| Change::insert(vec![Value::Int(k), Value::Int(base + k)]))
            .collect()
    };
    MemSources(HashMap::from([
        ("a".to_string(), rows(10)),
        ("b".to_string(), rows(20)),
        ("c".to_string(), rows(30)),
    ]))
}

/// The chain's changelog, one record per batch, one subtask, on `backend`.
fn chain_changelog(delivery: &str, backend: &str) -> Vec<String> {
    let overrides = [
        ("lab.source.batch-size", "1".to_string()),
        ("lab.source.delivery", delivery.to_string()),
        ("state.backend.type", backend.to_string()),
    ];
    let (_, out) = run_mem(CHAIN, &chain_sources(), &overrides, RunOptions::keep_all()).unwrap();
    out[0]
        .changelog
        .iter()
        .map(|c| {
            let row: Vec<String> = c
                .row
                .iter()
                .map(|v| match v {
                    Value::Null => "NULL".to_string(),
                    v => v.to_string(),
                })
                .collect();
            format!("{}[{}]", c.kind.short(), row.join(", "))
        })
        .collect()
}

/// Depth-first: key 1's `a` row reaches the sink NULL-padded, then `b`'s
/// row retracts it through the second join and `c`'s row retracts that
/// (five changes per key, the worst order for a left-deep chain).
#[test]
fn depth_first_retracts_a_left_chain_once_per_table() {
    let want = [
        "+I[1, 11, NULL, NULL]",
        "-D[1, 11, NULL, NULL]",
        "+I[1, 11, 21, NULL]",
        "-D[1, 11, 21, NULL]",
        "+I[1, 11, 21, 31]",
        "+I[2, 12, NULL, NULL]",
        "-D[2, 12, NULL, NULL]",
        "+I[2, 12, 22, NULL]",
        "-D[2, 12, 22, NULL]",
        "+I[2, 12, 22, 32]",
    ];
    for backend in ["hashmap", "rocksdb"] {
        assert_eq!(chain_changelog("depth-first", backend), want, "{backend}");
    }
}

/// Breadth-first: `c`'s row is in the second join's state before the first
/// join's output gets there (it crossed one operator less), so only the
/// first join's retraction reaches the sink (three changes per key).
#[test]
fn breadth_first_lets_the_later_tables_arrive_first() {
    let want = [
        "+I[1, 11, NULL, 31]",
        "-D[1, 11, NULL, 31]",
        "+I[1, 11, 21, 31]",
        "+I[2, 12, NULL, 32]",
        "-D[2, 12, NULL, 32]",
        "+I[2, 12, 22, 32]",
    ];
    for backend in ["hashmap", "rocksdb"] {
        assert_eq!(chain_changelog("breadth-first", backend), want, "{backend}");
    }
}

/// The sink's counts say the same: fewer changes, the same final rows.
#[test]
fn both_deliveries_end_with_the_same_rows() {
    let run = |delivery: &str| {
        let o = [("lab.source.delivery", delivery.to_string())];
        let (out, want) = run_mem_with_oracle(CHAIN, &chain_sources(), &o).unwrap();
        let report = out[0].sink_report();
        assert_eq!(report.result.as_ref().unwrap(), &want[0], "{delivery}");
        (report.counts.total(), report.counts.get(RowKind::Delete))
    };
    assert_eq!(run("depth-first"), (10, 4));
    assert_eq!(run("breadth-first"), (6, 2));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Every query of the equivalence tests (aggregates, filters, joins of
    /// two and three tables, a join over an aggregate), breadth-first, on
    /// both backends at parallelism 1 and 4, holds the oracle's rows.
    #[test]
    fn breadth_first_delivery_matches_the_oracle(
        sources in inputs(),
        batch in prop_oneof![Just(1usize), Just(3), Just(1024)],
    ) {
        let sql = script();
        for backend in ["hashmap", "rocksdb"] {
            for p in [1usize, 4] {
                let overrides = [
                    ("lab.source.delivery", "breadth-first".to_string()),
                    ("state.backend.type", backend.to_string()),
                    ("parallelism.default", p.to_string()),
                    ("lab.source.batch-size", batch.to_string()),
                ];
                let (out, want) = run_mem_with_oracle(&sql, &sources, &overrides)
                    .map_err(TestCaseError::fail)?;
                for (o, w) in out.iter().zip(&want) {
                    prop_assert_eq!(
                        o.sink_report().result.as_ref().unwrap(),
                        w,
                        "{} ({}, p {}, batch {})",
                        o.sink,
                        backend,
                        p,
                        batch
                    );
                }
            }
        }
    }
}
