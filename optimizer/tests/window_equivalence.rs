//! Window TVFs against the batch oracle: TUMBLE, HOP, CUMULATE and SESSION
//! aggregations (grouped and global, with FILTER, every aggregate
//! function, DISTINCT with and without FILTER; SESSION with and without
//! PARTITION BY, one phase whatever the strategy), aggregates over a
//! window aggregate's windows (window-attached), window deduplication
//! (keep first and last, per key and global, with a filter) and a plain
//! TVF, one phase and two (local-global), with and without split distinct
//! (distinct calls spread over buckets in a window aggregate below a
//! window-attached one), sliced and with the lab's
//! per-window state (`lab.window.slicing` = false), on both
//! state backends, at parallelism 1 and 4, over input whose event times arrive out of order, so that some
//! records are late and dropped. The oracle evaluates the windows from
//! scratch and drops the records its own late rule calls late
//! (`oracle::Arrival`); the streaming result must equal it, and the
//! window state must be empty after the final watermark. Window joins
//! (INNER, LEFT, RIGHT, FULL; on TVFs and after window aggregates) are
//! held to it the same way over two out-of-order tables.

mod common;

use common::events::{self, sorted};
use common::{run_mem, MemSources};
use operators::changelog::Change;
use operators::value::{Row, Value};
use optimizer::logical::Statement;
use optimizer::oracle::{self, Arrival};
use optimizer::session::RunOptions;
use proptest::prelude::*;

const SCRIPT: &str = "
CREATE TABLE ev (
  k  INT,
  v  BIGINT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'datagen');
CREATE TABLE tumble_out (k INT, ws TIMESTAMP(3), we TIMESTAMP(3), c BIGINT, s BIGINT, mn BIGINT, mx BIGINT, a BIGINT, cv BIGINT)
  WITH ('connector' = 'blackhole');
CREATE TABLE hop_out (ws TIMESTAMP(3), we TIMESTAMP(3), k INT, c BIGINT, s BIGINT)
  WITH ('connector' = 'blackhole');
CREATE TABLE cumulate_out (k INT, ws TIMESTAMP(3), we TIMESTAMP(3), c BIGINT, mx BIGINT)
  WITH ('connector' = 'blackhole');
CREATE TABLE global_out (ws TIMESTAMP(3), we TIMESTAMP(3), c BIGINT, big BIGINT)
  WITH ('connector' = 'blackhole');
CREATE TABLE tvf_out (k INT, v BIGINT, ws TIMESTAMP(3), we TIMESTAMP(3), wt TIMESTAMP(3))
  WITH ('connector' = 'blackhole');
CREATE TABLE session_out (k INT, ws TIMESTAMP(3), we TIMESTAMP(3), c BIGINT, s BIGINT, mn BIGINT)
  WITH ('connector' = 'blackhole');
CREATE TABLE session_all_out (ws TIMESTAMP(3), we TIMESTAMP(3), c BIGINT, big BIGINT)
  WITH ('connector' = 'blackhole');
CREATE TABLE distinct_out (k INT, ws TIMESTAMP(3), we TIMESTAMP(3), dv BIGINT, dbig BIGINT, sd BIGINT, c BIGINT)
  WITH ('connector' = 'blackhole');
CREATE TABLE session_distinct_out (k INT, ws TIMESTAMP(3), we TIMESTAMP(3), dv BIGINT, dbig BIGINT, mx BIGINT)
  WITH ('connector' = 'blackhole');
CREATE TABLE split_avg_out (ws TIMESTAMP(3), we TIMESTAMP(3), dk BIGINT, a BIGINT, mn BIGINT, mx BIGINT)
  WITH ('connector' = 'blackhole');
CREATE TABLE attached_out (ws TIMESTAMP(3), we TIMESTAMP(3), mx BIGINT, total BIGINT, keys BIGINT)
  WITH ('connector' = 'blackhole');
CREATE TABLE attached_keyed_out (g INT, ws TIMESTAMP(3), we TIMESTAMP(3), c BIGINT, mx BIGINT)
  WITH ('connector' = 'blackhole');
CREATE TABLE dedup_last_out (k INT, v BIGINT, ts TIMESTAMP(3), ws TIMESTAMP(3), we TIMESTAMP(3))
  WITH ('connector' = 'blackhole');
CREATE TABLE dedup_first_out (ws TIMESTAMP(3), we TIMESTAMP(3), k INT, v BIGINT, ts TIMESTAMP(3))
  WITH ('connector' = 'blackhole');
CREATE TABLE dedup_global_out (ws TIMESTAMP(3), we TIMESTAMP(3), k INT, v BIGINT, ts TIMESTAMP(3))
  WITH ('connector' = 'blackhole');
INSERT INTO tumble_out
SELECT k, window_start, window_end, COUNT(*), SUM(v), MIN(v), MAX(v), AVG(v), COUNT(v)
FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY k, window_start, window_end;
INSERT INTO hop_out
SELECT window_start, window_end, k, COUNT(*), SUM(v)
FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
WHERE v IS NOT NULL
GROUP BY window_start, window_end, k;
INSERT INTO cumulate_out
SELECT k, window_start, window_end, COUNT(*), MAX(v)
FROM TABLE(CUMULATE(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '20' SECOND))
GROUP BY k, window_start, window_end;
INSERT INTO global_out
SELECT window_start, window_end, COUNT(*), COUNT(*) FILTER (WHERE v > 50)
FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '7' SECOND))
GROUP BY window_start, window_end;
INSERT INTO tvf_out
SELECT k, v, window_start, window_end, window_time
FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND));
INSERT INTO session_out
SELECT k, window_start, window_end, COUNT(*), SUM(v), MIN(v)
FROM TABLE(SESSION(TABLE ev PARTITION BY k, DESCRIPTOR(ts), INTERVAL '3' SECOND))
GROUP BY k, window_start, window_end;
INSERT INTO session_all_out
SELECT window_start, window_end, COUNT(*), COUNT(*) FILTER (WHERE v > 50)
FROM TABLE(SESSION(TABLE ev, DESCRIPTOR(ts), INTERVAL '1.5' SECOND))
WHERE v IS NOT NULL
GROUP BY window_start, window_end;
INSERT INTO distinct_out
SELECT k, window_start, window_end, COUNT(DISTINCT v % 7), COUNT(DISTINCT v % 7) FILTER (WHERE v > 50),
  SUM(DISTINCT v % 5), COUNT(*)
FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
GROUP BY k, window_start, window_end;
INSERT INTO session_distinct_out
SELECT k, window_start, window_end, COUNT(DISTINCT v % 7), COUNT(DISTINCT v % 7) FILTER (WHERE v > 50),
  MAX(DISTINCT v)
FROM TABLE(SESSION(TABLE ev PARTITION BY k, DESCRIPTOR(ts), INTERVAL '3' SECOND))
GROUP BY k, window_start, window_end;
INSERT INTO split_avg_out
SELECT window_start, window_end, COUNT(DISTINCT k), AVG(v), MIN(v), MAX(v)
FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
GROUP BY window_start, window_end;
INSERT INTO attached_out
SELECT ws, we, MAX(c), SUM(c), COUNT(*)
FROM (
  SELECT window_start AS ws, window_end AS we, k, COUNT(*) AS c
  FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
  GROUP BY window_start, window_end, k
)
GROUP BY ws, we;
INSERT INTO attached_keyed_out
SELECT g, window_start, window_end, COUNT(*), MAX(s)
FROM (
  SELECT k % 3 AS g, window_start, window_end, SUM(v) AS s
  FROM TABLE(CUMULATE(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '20' SECOND))
  GROUP BY k, window_start, window_end
)
GROUP BY g, window_start, window_end;
INSERT INTO dedup_last_out
SELECT k, v, ts, window_start, window_end FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k, window_start, window_end ORDER BY ts DESC) AS rn
  FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))
) WHERE rn = 1;
INSERT INTO dedup_first_out
SELECT window_start, window_end, k, v, ts FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k ORDER BY ts ASC) AS rn
  FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
) WHERE rn <= 1;
INSERT INTO dedup_global_out
SELECT window_start, window_end, k, v, ts FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY ts DESC) AS rn
  FROM TABLE(CUMULATE(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '20' SECOND))
  WHERE v IS NOT NULL
) WHERE rn < 2;
";

fn inputs() -> impl Strategy<Value = MemSources> {
    events::out_of_order(0..100, false)
}

fn check(sources: &MemSources, overrides: &[(&str, String)]) -> Result<u64, TestCaseError> {
    let (script, outcomes) = run_mem(SCRIPT, sources, overrides, RunOptions::keep_all())
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
        interval_ms: setting("pipeline.auto-watermark-interval")
            .trim_end_matches(" ms")
            .parse()
            .unwrap(),
        allow_lateness_ms: 0,
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
    let mut dropped = 0;
    for (insert, outcome) in inserts.iter().zip(&outcomes) {
        let expected = sorted(oracle::evaluate_event_time(
            &insert.query,
            &|_| rows.clone(),
            &arrival,
        ));
        let report = outcome.sink_report();
        prop_assert_eq!(
            report.counts.total(),
            report.counts.get(operators::changelog::RowKind::Insert),
            "{} emits inserts only",
            insert.sink
        );
        prop_assert_eq!(
            report.result.as_ref().unwrap(),
            &expected,
            "{} differs from the oracle with {:?}",
            insert.sink,
            overrides
        );
        dropped += events::drained_and_dropped(&insert.sink, outcome, |_| true)?;
    }
    Ok(dropped)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn window_tvfs_match_the_oracle(
        sources in inputs(),
        batch in prop_oneof![Just(1usize), Just(3), Just(1024)],
        interval in prop_oneof![Just(0u64), Just(4)],
    ) {
        for slicing in [true, false] {
            for phase in ["ONE_PHASE", "TWO_PHASE"] {
                for backend in ["hashmap", "rocksdb"] {
                    // Split distinct on for half of the combinations, so
                    // both phases and backends run with and without it.
                    let split = (phase == "TWO_PHASE") != (backend == "rocksdb");
                    for p in [1usize, 4] {
                        check(&sources, &[
                            ("table.optimizer.distinct-agg.split.enabled", split.to_string()),
                            ("lab.window.slicing", slicing.to_string()),
                            ("table.optimizer.agg-phase-strategy", phase.to_string()),
                            ("state.backend.type", backend.to_string()),
                            ("parallelism.default", p.to_string()),
                            ("lab.source.batch-size", batch.to_string()),
                            ("lab.clock", "deterministic".to_string()),
                            ("pipeline.auto-watermark-interval", format!("{interval} ms")),
                        ])?;
                    }
                }
            }
        }
    }
}

/// The generator does produce late records (the test would prove little
/// otherwise): a fixed input where the third row is 20 s behind.
#[test]
fn late_records_are_dropped_and_counted() {
    let t0 = 1_700_000_000_000i64;
    let rows = [
        (0, 10, t0),
        (1, 20, t0 + 30_000),
        (0, 30, t0 + 10_000),
        (1, 40, t0 + 31_000),
    ];
    let mut sources = MemSources::default();
    sources.0.insert(
        "ev".into(),
        rows.iter()
            .map(|&(k, v, ts)| Change::insert(vec![Value::Int(k), Value::Int(v), Value::Ts(ts)]))
            .collect(),
    );
    let overrides = [
        (
            "table.optimizer.agg-phase-strategy",
            "ONE_PHASE".to_string(),
        ),
        ("state.backend.type", "hashmap".to_string()),
        ("parallelism.default", "1".to_string()),
        ("lab.source.batch-size", "1".to_string()),
        ("lab.clock", "deterministic".to_string()),
        ("pipeline.auto-watermark-interval", "0 ms".to_string()),
    ];
    // One phase: each of the eleven window aggregates over the TVFs drops the
    // row at t0 + 10 s: the watermark is t0 + 28 s when it arrives (the two
    // aggregates over their windows drop nothing: their rows come before
    // the watermark that fires them). (The HOP's window [t0 + 5 s,
    // t0 + 15 s) has fired too; the sessions' own windows have fired and it
    // touches no open session.) The three deduplications read the TVF's
    // rows, one per window: they drop the row's one TUMBLE window, its two
    // HOP windows and its two CUMULATE windows, all fired.
    assert_eq!(check(&sources, &overrides).unwrap(), 11 + 5);
    // Per-window state drops the same records.
    let mut unsliced = overrides.to_vec();
    unsliced.push(("lab.window.slicing", "false".to_string()));
    assert_eq!(check(&sources, &unsliced).unwrap(), 11 + 5);
}

/// A record behind the watermark that touches an open session is not late:
/// it joins the session (which may grow backward), as Flink's merging
/// window set has it. Key 0's session [t0 + 20 s, t0 + 23 s) is open at
/// watermark t0 + 19.5 s when a row at t0 + 18 s arrives: its window
/// [t0 + 18 s, t0 + 21 s) touches it, so it counts; a row at t0 + 10 s
/// touches nothing open and is dropped.
#[test]
fn a_record_behind_the_watermark_joins_an_open_session() {
    let t0 = 1_700_000_000_000i64;
    let rows = [
        (0, 10, t0 + 20_000),
        (1, 20, t0 + 21_500),
        (0, 30, t0 + 18_000),
        (0, 40, t0 + 10_000),
    ];
    let mut sources = MemSources::default();
    sources.0.insert(
        "ev".into(),
        rows.iter()
            .map(|&(k, v, ts)| Change::insert(vec![Value::Int(k), Value::Int(v), Value::Ts(ts)]))
            .collect(),
    );
    for backend in ["hashmap", "rocksdb"] {
        let overrides = [
            (
                "table.optimizer.agg-phase-strategy",
                "TWO_PHASE".to_string(),
            ),
            ("state.backend.type", backend.to_string()),
            ("parallelism.default", "1".to_string()),
            ("lab.source.batch-size", "1".to_string()),
            ("lab.clock", "deterministic".to_string()),
            ("pipeline.auto-watermark-interval", "0 ms".to_string()),
        ];
        check(&sources, &overrides).unwrap();
        let (_, outcomes) = run_mem(SCRIPT, &sources, &overrides, RunOptions::keep_all()).unwrap();
        let ts = |ms: i64| Value::Ts(t0 + ms);
        // session_out: k, window_start, window_end, COUNT(*), SUM(v), MIN(v).
        assert_eq!(
            outcomes[5].sink_report().result.clone().unwrap(),
            sorted(vec![
                vec![
                    Value::Int(0),
                    ts(18_000),
                    ts(23_000),
                    Value::Int(2),
                    Value::Int(40),
                    Value::Int(10)
                ],
                vec![
                    Value::Int(1),
                    ts(21_500),
                    ts(24_500),
                    Value::Int(1),
                    Value::Int(20),
                    Value::Int(20)
                ],
            ])
        );
    }
}

/// Window joins: two tables, out of order (some rows late at the join),
/// joined on TUMBLE, HOP and CUMULATE windows directly and after window aggregates,
/// INNER, LEFT, RIGHT and FULL; and a self-join (one source).
const JOIN_SCRIPT: &str = "
CREATE TABLE l (k INT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
  WITH ('connector' = 'datagen');
CREATE TABLE r (k INT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'datagen');
CREATE TABLE inner_out (k INT, lv BIGINT, ws TIMESTAMP(3), we TIMESTAMP(3), rv BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE left_out (k INT, lv BIGINT, ws TIMESTAMP(3), rk INT, rv BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE right_out (k INT, lv BIGINT, rk INT, rv BIGINT, we TIMESTAMP(3)) WITH ('connector' = 'blackhole');
CREATE TABLE full_out (k INT, lv BIGINT, rk INT, rv BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE agg_out (k INT, ws TIMESTAMP(3), lc BIGINT, rs BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE self_out (k INT, lv BIGINT, rv BIGINT, we TIMESTAMP(3)) WITH ('connector' = 'blackhole');
CREATE TABLE cumulate_join_out (k INT, lv BIGINT, rv BIGINT, we TIMESTAMP(3)) WITH ('connector' = 'blackhole');
INSERT INTO inner_out
SELECT L.k, L.v, L.window_start, L.window_end, R.v
FROM (SELECT * FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '5' SECOND))) L
JOIN (SELECT * FROM TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '5' SECOND))) R
ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.k = R.k;
INSERT INTO left_out
SELECT L.k, L.v, L.window_start, R.k, R.v
FROM (SELECT * FROM TABLE(HOP(TABLE l, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))) L
LEFT JOIN (SELECT * FROM TABLE(HOP(TABLE r, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))) R
ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.k = R.k AND L.v < R.v;
INSERT INTO right_out
SELECT L.k, L.v, R.k, R.v, R.window_end
FROM (SELECT * FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '5' SECOND))) L
RIGHT JOIN (SELECT * FROM TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '5' SECOND))) R
ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.k = R.k;
INSERT INTO full_out
SELECT L.k, L.v, R.k, R.v
FROM (SELECT * FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '5' SECOND))) L
FULL JOIN (SELECT * FROM TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '5' SECOND))) R
ON L.window_start = R.window_start AND L.window_end = R.window_end;
INSERT INTO agg_out
SELECT L.k, L.window_start, lc, rs
FROM (SELECT k, window_start, window_end, COUNT(*) AS lc
      FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY k, window_start, window_end) L
LEFT JOIN (SELECT k, window_start, window_end, SUM(v) AS rs
      FROM TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY k, window_start, window_end) R
ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.k = R.k;
INSERT INTO self_out
SELECT L.k, L.v, R.v, L.window_end
FROM (SELECT * FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '5' SECOND))) L
JOIN (SELECT * FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '5' SECOND)) WHERE v > 30) R
ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.k = R.k;
INSERT INTO cumulate_join_out
SELECT L.k, L.v, R.v, L.window_end
FROM (SELECT * FROM TABLE(CUMULATE(TABLE l, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND))) L
JOIN (SELECT * FROM TABLE(CUMULATE(TABLE r, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND))) R
ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.k = R.k AND L.v <> R.v;
";

fn join_inputs() -> impl Strategy<Value = MemSources> {
    (inputs(), inputs()).prop_map(|(a, b)| {
        let mut s = MemSources::default();
        s.0.insert("l".into(), a.0["ev"].clone());
        s.0.insert("r".into(), b.0["ev"].clone());
        s
    })
}

fn check_joins(sources: &MemSources, overrides: &[(&str, String)]) -> Result<u64, TestCaseError> {
    let (script, outcomes) = run_mem(JOIN_SCRIPT, sources, overrides, RunOptions::keep_all())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let setting = |k: &str| {
        overrides
            .iter()
            .find(|(key, _)| *key == k)
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    let wm = |t: &str| {
        script
            .catalog
            .get(t)
            .and_then(|d| d.watermark.as_ref().map(|w| w.expr.clone()))
    };
    let arrival = Arrival {
        watermark: &wm,
        batch_size: setting("lab.source.batch-size").parse().unwrap(),
        interval_ms: setting("pipeline.auto-watermark-interval")
            .trim_end_matches(" ms")
            .parse()
            .unwrap(),
        allow_lateness_ms: 0,
        breadth_first: overrides
            .iter()
            .any(|(k, v)| *k == "lab.source.delivery" && v == "breadth-first"),
    };
    let rows = |t: &str| -> Vec<Row> { sources.0[t].iter().map(|c| c.row.clone()).collect() };
    let inserts: Vec<_> = script
        .statements
        .iter()
        .filter_map(|s| match s {
            Statement::Insert(i) => Some(i),
            _ => None,
        })
        .collect();
    let mut late = 0;
    for (insert, outcome) in inserts.iter().zip(&outcomes) {
        let expected = sorted(oracle::evaluate_event_time(&insert.query, &rows, &arrival));
        let report = outcome.sink_report();
        prop_assert_eq!(
            report.counts.total(),
            report.counts.get(operators::changelog::RowKind::Insert)
        );
        prop_assert_eq!(
            report.result.as_ref().unwrap(),
            &expected,
            "{} differs from the oracle with {:?}",
            insert.sink,
            overrides
        );
        for stage in &outcome.report.stages {
            for s in &stage.states {
                prop_assert_eq!(s.metrics.entries, 0, "{} {}", insert.sink, s.name);
            }
            late += stage
                .counters
                .iter()
                .filter(|(n, _)| n.to_lowercase().ends_with("numlaterecordsdropped"))
                .map(|(_, v)| v)
                .sum::<u64>();
        }
    }
    Ok(late)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn window_joins_match_the_oracle(
        sources in join_inputs(),
        batch in prop_oneof![Just(1usize), Just(3), Just(1024)],
        interval in prop_oneof![Just(0u64), Just(4)],
        delivery in prop_oneof![Just("depth-first"), Just("breadth-first")],
    ) {
        for backend in ["hashmap", "rocksdb"] {
            for p in [1usize, 4] {
                check_joins(&sources, &[
                    ("state.backend.type", backend.to_string()),
                    ("parallelism.default", p.to_string()),
                    ("lab.source.batch-size", batch.to_string()),
                    ("lab.clock", "deterministic".to_string()),
                    ("pipeline.auto-watermark-interval", format!("{interval} ms")),
                    ("lab.source.delivery", delivery.to_string()),
                ])?;
            }
        }
    }
}

/// The join input generator does make rows late at the join.
#[test]
fn window_join_drops_late_rows() {
    let t0 = 1_700_000_000_000i64;
    let row =
        |k: i64, v: i64, ts: i64| Change::insert(vec![Value::Int(k), Value::Int(v), Value::Ts(ts)]);
    let mut sources = MemSources::default();
    sources.0.insert(
        "l".into(),
        vec![row(0, 1, t0), row(0, 2, t0 + 30_000), row(0, 3, t0 + 1_000)],
    );
    sources.0.insert(
        "r".into(),
        vec![
            row(0, 5, t0 + 500),
            row(0, 6, t0 + 31_000),
            row(0, 7, t0 + 2_000),
        ],
    );
    let overrides = [
        ("state.backend.type", "hashmap".to_string()),
        ("parallelism.default", "1".to_string()),
        ("lab.source.batch-size", "1".to_string()),
        ("lab.clock", "deterministic".to_string()),
        ("pipeline.auto-watermark-interval", "0 ms".to_string()),
    ];
    // The third rows of both sides reach the joins after the watermark
    // passed t0 + 28 s: dropped by the four TVF joins (the LEFT HOP join
    // twice per row), and by the two window aggregates; the self-join
    // drops the left's third row on its left side (its v 3 is not above
    // 30, so the right side never sees it); the CUMULATE join drops each
    // third row in both its windows ([t0 - 5 s, t0 + 5 s)
    // and [t0 - 5 s, t0 + 10 s): cumulating windows start at multiples of
    // 15 s, and t0 is 5 s past one).
    assert_eq!(
        check_joins(&sources, &overrides).unwrap(),
        2 + 4 + 2 + 2 + 2 + 1 + 4
    );
}
