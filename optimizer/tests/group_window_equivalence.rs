//! Legacy group windows (`GROUP BY k, TUMBLE(ts, size)`, HOP, SESSION)
//! against the batch oracle: with and without an allowed lateness and late
//! firings, on both state backends, at parallelism 1 and 4, over input
//! whose event times arrive out of order. The changelog (`-U`/`+U` with
//! lateness, inserts only without) materialised at the end must equal the
//! oracle's answer over the records not dropped (a row counts in a window
//! when the watermark at its arrival was below the window's end - 1 +
//! lateness), and the window state must be empty after the final
//! watermark.

mod common;

use common::events::{self, sorted};
use common::{run_mem, MemSources};
use operators::changelog::{Change, RowKind};
use operators::value::{Row, Value};
use optimizer::logical::Statement;
use optimizer::oracle::{self, Arrival};
use optimizer::session::RunOptions;
use proptest::prelude::*;

const TABLE: &str = "
CREATE TABLE ev (
  k  INT,
  v  BIGINT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'datagen');
";

/// TUMBLE and HOP: they take the emit strategy.
const ALIGNED: &str = "
CREATE TABLE tumble_out (k INT, ws TIMESTAMP(3), we TIMESTAMP(3), rt TIMESTAMP(3), c BIGINT, s BIGINT, mn BIGINT, a BIGINT, d BIGINT)
  WITH ('connector' = 'blackhole');
CREATE TABLE hop_out (k INT, we TIMESTAMP(3), c BIGINT, mx BIGINT)
  WITH ('connector' = 'blackhole');
CREATE TABLE global_out (ws TIMESTAMP(3), c BIGINT, big BIGINT)
  WITH ('connector' = 'blackhole');
INSERT INTO tumble_out
SELECT k, TUMBLE_START(ts, INTERVAL '10' SECOND), TUMBLE_END(ts, INTERVAL '10' SECOND),
  TUMBLE_ROWTIME(ts, INTERVAL '10' SECOND), COUNT(*), SUM(v), MIN(v), AVG(v), COUNT(DISTINCT v % 7)
FROM ev
GROUP BY k, TUMBLE(ts, INTERVAL '10' SECOND);
INSERT INTO hop_out
SELECT k, HOP_END(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND), COUNT(*), MAX(v)
FROM ev
WHERE v IS NOT NULL
GROUP BY HOP(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND), k
HAVING COUNT(*) > 1;
INSERT INTO global_out
SELECT TUMBLE_START(ts, INTERVAL '7' SECOND), COUNT(*), COUNT(*) FILTER (WHERE v > 50)
FROM ev
GROUP BY TUMBLE(ts, INTERVAL '7' SECOND);
";

/// SESSION: no lateness, no late firings (Flink refuses them).
const SESSION: &str = "
CREATE TABLE session_out (k INT, ws TIMESTAMP(3), we TIMESTAMP(3), c BIGINT, s BIGINT)
  WITH ('connector' = 'blackhole');
INSERT INTO session_out
SELECT k, SESSION_START(ts, INTERVAL '3' SECOND), SESSION_END(ts, INTERVAL '3' SECOND), COUNT(*), SUM(v)
FROM ev
GROUP BY k, SESSION(ts, INTERVAL '3' SECOND);
";

fn inputs() -> impl Strategy<Value = MemSources> {
    events::out_of_order(0..100, false)
}

/// Runs `queries` with `overrides` and holds each INSERT to the oracle with
/// `lateness` ms of allowed lateness; returns the late records dropped
/// and whether some INSERT emitted updates.
fn check(
    sources: &MemSources,
    queries: &str,
    lateness: i64,
    overrides: &[(&str, String)],
) -> Result<(u64, bool), TestCaseError> {
    let script = format!("{TABLE}{queries}");
    let (script, outcomes) = run_mem(&script, sources, overrides, RunOptions::keep_all())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let watermark = script.catalog.get("ev").unwrap().watermark.clone().unwrap();
    let setting = |k: &str| {
        overrides
            .iter()
            .find(|(key, _)| *key == k)
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    let arrival = Arrival {
        watermark: &|t| (t == "ev").then(|| watermark.expr.clone()),
        batch_size: setting("lab.source.batch-size").parse().unwrap(),
        interval_ms: 0,
        allow_lateness_ms: lateness,
        breadth_first: false,
    };
    let rows: Vec<Row> = sources.0["ev"].iter().map(|c| c.row.clone()).collect();
    let inserts: Vec<_> = script
        .statements
        .iter()
        .filter_map(|s| match s {
            Statement::Insert(i) => Some(i),
            _ => None,
        })
        .collect();
    let (mut dropped, mut updates) = (0, false);
    for (insert, outcome) in inserts.iter().zip(&outcomes) {
        let expected = sorted(oracle::evaluate_event_time(
            &insert.query,
            &|_| rows.clone(),
            &arrival,
        ));
        let report = outcome.sink_report();
        let inserts = report.counts.get(RowKind::Insert);
        if lateness == 0 {
            prop_assert_eq!(
                report.counts.total(),
                inserts,
                "{} inserts only",
                insert.sink
            );
        }
        updates |= report.counts.total() > inserts;
        prop_assert_eq!(
            sorted(oracle::final_table(&outcome.changelog)),
            expected,
            "{} differs from the oracle with {:?}",
            insert.sink,
            overrides
        );
        dropped += events::drained_and_dropped(&insert.sink, outcome, |_| true)?;
    }
    Ok((dropped, updates))
}

fn settings(backend: &str, p: usize, batch: usize) -> Vec<(&'static str, String)> {
    vec![
        ("state.backend.type", backend.to_string()),
        ("parallelism.default", p.to_string()),
        ("lab.source.batch-size", batch.to_string()),
        ("lab.clock", "deterministic".to_string()),
        ("pipeline.auto-watermark-interval", "0 ms".to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn group_windows_match_the_oracle(
        sources in inputs(),
        batch in prop_oneof![Just(1usize), Just(3)],
    ) {
        for backend in ["hashmap", "rocksdb"] {
            for p in [1usize, 4] {
                // No lateness; lateness alone (Flink's trigger fires on a
                // late element: updates too); lateness with late firings.
                for (lateness, late_fire) in [(0i64, false), (3000, false), (3000, true)] {
                    let mut o = settings(backend, p, batch);
                    o.push(("table.exec.emit.allow-lateness", format!("{lateness} ms")));
                    o.push(("table.exec.emit.late-fire.enabled", late_fire.to_string()));
                    check(&sources, ALIGNED, lateness, &o)?;
                }
                check(&sources, SESSION, 0, &settings(backend, p, batch))?;
            }
        }
    }
}

/// The generator's kind of input does bring late firings and late drops
/// (the property would prove little otherwise): a row 4 s behind a fired
/// window within 5 s of lateness updates it; one 20 s behind is dropped.
#[test]
fn a_fixed_input_fires_late_and_drops() {
    let t0 = 1_700_000_000_000i64;
    let rows = [
        (0, 10, t0),
        (0, 20, t0 + 13_000),
        (0, 30, t0 + 1_000),
        (0, 40, t0 + 30_000),
        (0, 50, t0 + 2_000),
    ];
    let mut s = MemSources::default();
    s.0.insert(
        "ev".into(),
        rows.iter()
            .map(|&(k, v, ts)| Change::insert(vec![Value::Int(k), Value::Int(v), Value::Ts(ts)]))
            .collect(),
    );
    let mut o = settings("hashmap", 1, 1);
    o.push(("table.exec.emit.allow-lateness", "5 s".to_string()));
    o.push(("table.exec.emit.late-fire.enabled", "true".to_string()));
    let (dropped, updates) = check(&s, ALIGNED, 5000, &o).unwrap();
    assert!(updates);
    assert!(dropped > 0);
}
