//! Pinned counters and skew numbers of the aggregation strategies, on small
//! fixed inputs: what mini-batch, local-global, split distinct and shared
//! distinct state save, exactly.

mod common;

use common::{run_mem, MemSources};
use operators::changelog::Change;
use operators::exec::StageReport;
use operators::value::Value;
use optimizer::session::{InsertOutcome, RunOptions};
use std::collections::HashMap;

const DDL: &str = "
CREATE TABLE t (k STRING, v INT, flag STRING) WITH ('connector' = 'filesystem', 'path' = 't.csv', 'format' = 'csv');
CREATE TABLE out (k STRING, n BIGINT, s BIGINT) WITH ('connector' = 'blackhole');
";
const QUERY: &str = "INSERT INTO out SELECT k, COUNT(*), SUM(v) FROM t GROUP BY k;";

/// Keys a,b,a,c,a,b | a,a,b,c,c,c: two bundles of six, three keys each.
fn twelve() -> MemSources {
    let keys = ["a", "b", "a", "c", "a", "b", "a", "a", "b", "c", "c", "c"];
    let rows = keys
        .iter()
        .enumerate()
        .map(|(i, k)| Change::insert(vec![Value::str(k), Value::Int(i as i64), Value::str("x")]))
        .collect();
    MemSources(HashMap::from([("t".to_string(), rows)]))
}

fn run(sources: &MemSources, sql: &str, overrides: &[(&str, &str)]) -> InsertOutcome {
    let o: Vec<(&str, String)> = overrides.iter().map(|(k, v)| (*k, v.to_string())).collect();
    let (_, mut out) = run_mem(sql, sources, &o, RunOptions::keep_all()).unwrap();
    out.remove(0)
}

fn stage<'a>(o: &'a InsertOutcome, prefix: &str) -> &'a StageReport {
    o.report
        .stages
        .iter()
        .find(|s| s.name.starts_with(prefix))
        .unwrap_or_else(|| {
            panic!(
                "no stage {prefix}: {:?}",
                o.report.stages.iter().map(|s| &s.name).collect::<Vec<_>>()
            )
        })
}

fn mini_batch(size: &str) -> Vec<(&'static str, &str)> {
    vec![
        ("table.exec.mini-batch.enabled", "true"),
        ("table.exec.mini-batch.allow-latency", "1 h"),
        ("table.exec.mini-batch.size", size),
    ]
}

#[test]
fn mini_batch_reads_and_writes_each_key_once_per_bundle() {
    let sql = format!("{DDL}{QUERY}");
    for backend in ["hashmap", "rocksdb"] {
        let one = run(&twelve(), &sql, &[("state.backend.type", backend)]);
        let acc = &stage(&one, "GroupAggregate").states[0].metrics;
        assert_eq!(
            (acc.reads, acc.writes),
            (12, 12),
            "one record at a time on {backend}"
        );

        let mut o = mini_batch("6");
        o.push(("state.backend.type", backend));
        o.push(("table.optimizer.agg-phase-strategy", "ONE_PHASE"));
        let mb = run(&twelve(), &sql, &o);
        let acc = &stage(&mb, "GroupAggregate").states[0].metrics;
        assert_eq!(
            (acc.reads, acc.writes),
            (6, 6),
            "two bundles x three keys on {backend}"
        );
        assert_eq!(mb.sink_report().result, one.sink_report().result);
        // One emission per key per bundle: 3 +I, then 3 -U/+U pairs.
        assert_eq!(mb.sink_report().counts.total(), 9);
    }
}

#[test]
fn local_global_ships_one_partial_per_subtask_and_key_per_bundle() {
    let sql = format!("{DDL}{QUERY}");
    let one = run(
        &twelve(),
        &sql,
        &[
            ("parallelism.default", "2"),
            ("lab.source.batch-size", "12"),
        ],
    );
    assert_eq!(one.report.records_shuffled(), 12);
    let mut o = mini_batch("100");
    o.push(("parallelism.default", "2"));
    o.push(("lab.source.batch-size", "12"));
    o.push(("table.optimizer.agg-phase-strategy", "TWO_PHASE"));
    let two = run(&twelve(), &sql, &o);
    // Subtask 0 reads a,b,a,c,a,b and subtask 1 a,a,b,c,c,c: 3 + 3 partials.
    let global = stage(&two, "GlobalGroupAggregate");
    assert_eq!(global.records_shuffled, 6);
    assert_eq!(two.report.records_shuffled(), 6);
    assert_eq!(two.sink_report().result, one.sink_report().result);
    assert!(
        stage(&two, "LocalGroupAggregate").states.is_empty(),
        "the local half keeps no state"
    );
}

fn uv(rows: &[(&str, i64, &str)]) -> MemSources {
    let rows = rows
        .iter()
        .map(|(k, v, f)| Change::insert(vec![Value::str(k), Value::Int(*v), Value::str(f)]))
        .collect();
    MemSources(HashMap::from([("t".to_string(), rows)]))
}

#[test]
fn filter_clauses_share_one_distinct_map_where_case_when_keeps_three() {
    let ddl = "
CREATE TABLE t (k STRING, v INT, flag STRING) WITH ('connector' = 'filesystem', 'path' = 't.csv', 'format' = 'csv');
CREATE TABLE out (k STRING, a BIGINT, b BIGINT, c BIGINT) WITH ('connector' = 'blackhole');
";
    let filter = format!(
        "{ddl}INSERT INTO out SELECT k, COUNT(DISTINCT v) FILTER (WHERE flag = 'android'), \
         COUNT(DISTINCT v) FILTER (WHERE flag = 'iphone'), COUNT(DISTINCT v) FROM t GROUP BY k;"
    );
    let case_when = format!(
        "{ddl}INSERT INTO out SELECT k, COUNT(DISTINCT CASE WHEN flag = 'android' THEN v END), \
         COUNT(DISTINCT CASE WHEN flag = 'iphone' THEN v END), COUNT(DISTINCT v) FROM t GROUP BY k;"
    );
    let input = uv(&[
        ("d1", 1, "android"),
        ("d1", 2, "iphone"),
        ("d1", 1, "iphone"),
        ("d1", 3, "web"),
        ("d1", 2, "iphone"),
    ]);
    for backend in ["hashmap", "rocksdb"] {
        let f = run(&input, &filter, &[("state.backend.type", backend)]);
        let c = run(&input, &case_when, &[("state.backend.type", backend)]);
        assert_eq!(f.sink_report().result, c.sink_report().result);
        assert_eq!(
            f.sink_report().result.as_ref().unwrap()[0],
            vec![
                Value::str("d1"),
                Value::Int(1),
                Value::Int(2),
                Value::Int(3)
            ]
        );
        let maps = |o: &InsertOutcome| {
            stage(o, "GroupAggregate")
                .states
                .iter()
                .filter(|s| s.name.starts_with("distinct_"))
                .map(|s| s.metrics)
                .collect::<Vec<_>>()
        };
        let (fm, cm) = (maps(&f), maps(&c));
        assert_eq!(fm.len(), 1, "FILTER variants share one map");
        assert_eq!(cm.len(), 3, "each CASE WHEN column has its own map");
        // One entry per distinct value: 3 shared, vs 1 + 2 + 3 separate.
        assert_eq!(fm[0].entries, 3);
        assert_eq!(cm.iter().map(|m| m.entries).sum::<i64>(), 6);
    }
}

/// 8000 rows: 90% of them in group "hot", the rest spread over 100 groups.
fn skewed() -> MemSources {
    let rows = (0..8000i64)
        .map(|i| {
            let k = if i % 10 != 0 {
                "hot".to_string()
            } else {
                format!("g{}", i % 1000)
            };
            Change::insert(vec![Value::str(&k), Value::Int(i % 977), Value::str("x")])
        })
        .collect();
    MemSources(HashMap::from([("t".to_string(), rows)]))
}

#[test]
fn local_global_and_split_distinct_even_out_a_hot_key() {
    let sql = format!("{DDL}{QUERY}");
    let p8 = ("parallelism.default", "8");
    let one = run(&skewed(), &sql, &[p8]);
    assert!(
        one.report.hotspot_factor() > 6.0,
        "one phase: {}",
        one.report.hotspot_factor()
    );

    let mut o = mini_batch("500");
    o.push(p8);
    let two = run(&skewed(), &sql, &o);
    assert!(
        two.report.hotspot_factor() < 2.0,
        "local-global: {}",
        two.report.hotspot_factor()
    );
    assert!(two.report.records_shuffled() < one.report.records_shuffled() / 10);
    assert_eq!(two.sink_report().result, one.sink_report().result);

    let distinct = "
CREATE TABLE t (k STRING, v INT, flag STRING) WITH ('connector' = 'filesystem', 'path' = 't.csv', 'format' = 'csv');
CREATE TABLE out (k STRING, uv BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT k, COUNT(DISTINCT v) FROM t GROUP BY k;";
    let plain = run(&skewed(), distinct, &[p8]);
    assert!(
        plain.report.hotspot_factor() > 6.0,
        "distinct, one phase: {}",
        plain.report.hotspot_factor()
    );
    let mut o = mini_batch("500");
    o.push(p8);
    o.push(("table.optimizer.distinct-agg.split.enabled", "true"));
    o.push(("table.optimizer.distinct-agg.split.bucket-num", "64"));
    let split = run(&skewed(), distinct, &o);
    assert!(
        split.report.hotspot_factor() < 2.0,
        "split distinct: {}",
        split.report.hotspot_factor()
    );
    assert_eq!(split.sink_report().result, plain.sink_report().result);
}
