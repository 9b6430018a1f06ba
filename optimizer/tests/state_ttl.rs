//! Idle state retention: with a TTL, a key idle longer than the TTL is
//! forgotten (its next record counts as the first), expired entries leave
//! the state counters, and the precedence is config < hint. Time is the
//! deterministic clock: one millisecond per input record.

mod common;

use common::{run_mem, MemSources};
use operators::changelog::Change;
use operators::value::Value;
use optimizer::session::{explain_script, InsertOutcome, RunOptions};
use std::collections::HashMap;

const COUNT: &str = "
CREATE TABLE t (k STRING) WITH ('connector' = 'filesystem', 'path' = 't.csv', 'format' = 'csv');
CREATE TABLE out (k STRING, n BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT k, COUNT(*) FROM t GROUP BY k;
";

fn keys(ks: &[&str]) -> MemSources {
    let rows = ks
        .iter()
        .map(|k| Change::insert(vec![Value::str(k)]))
        .collect();
    MemSources(HashMap::from([("t".to_string(), rows)]))
}

fn run(sql: &str, sources: &MemSources, overrides: &[(&str, &str)]) -> InsertOutcome {
    let mut o: Vec<(&str, String)> = vec![
        ("lab.clock", "deterministic".into()),
        ("lab.source.batch-size", "1".into()),
    ];
    o.extend(overrides.iter().map(|(k, v)| (*k, v.to_string())));
    run_mem(sql, sources, &o, RunOptions::keep_all())
        .unwrap()
        .1
        .remove(0)
}

fn changelog(o: &InsertOutcome) -> Vec<String> {
    o.changelog.iter().map(|c| c.to_string()).collect()
}

#[test]
fn a_key_idle_longer_than_the_ttl_counts_from_zero_again() {
    // Record i is read at time i (ms). Key a at 1, 2, then idle until 9.
    let input = keys(&["a", "a", "b", "b", "b", "b", "b", "b", "a"]);
    for backend in ["hashmap", "rocksdb"] {
        let o = run(
            COUNT,
            &input,
            &[
                ("table.exec.state.ttl", "5 ms"),
                ("state.backend.type", backend),
            ],
        );
        assert_eq!(
            changelog(&o),
            vec![
                "+I[a, 1]", "-U[a, 1]", "+U[a, 2]", "+I[b, 1]", "-U[b, 1]", "+U[b, 2]", "-U[b, 2]",
                "+U[b, 3]", "-U[b, 3]", "+U[b, 4]", "-U[b, 4]", "+U[b, 5]", "-U[b, 5]", "+U[b, 6]",
                // a was last written at 2 and expired at 7: it starts over.
                "+I[a, 1]",
            ],
            "{backend}"
        );
        // Without a TTL the count goes on.
        let o = run(COUNT, &input, &[("state.backend.type", backend)]);
        assert_eq!(changelog(&o).last().unwrap(), "+U[a, 3]");
    }
}

#[test]
fn expired_keys_leave_the_state_counters() {
    // 50 keys once each, then 50 records of one key: the 50 go idle.
    let mut ks: Vec<String> = (0..50).map(|i| format!("k{i}")).collect();
    ks.extend((0..50).map(|_| "hot".to_string()));
    let refs: Vec<&str> = ks.iter().map(String::as_str).collect();
    for backend in ["hashmap", "rocksdb"] {
        let with = run(
            COUNT,
            &keys(&refs),
            &[
                ("table.exec.state.ttl", "10 ms"),
                ("state.backend.type", backend),
            ],
        );
        let without = run(COUNT, &keys(&refs), &[("state.backend.type", backend)]);
        let entries = |o: &InsertOutcome| o.report.stages[0].states[0].metrics.entries;
        let bytes = |o: &InsertOutcome| o.report.stages[0].states[0].metrics.logical_bytes;
        assert_eq!(entries(&without), 51, "{backend}");
        assert!(
            entries(&with) <= 2,
            "{backend}: {} entries left",
            entries(&with)
        );
        assert!(bytes(&with) < bytes(&without) / 10, "{backend}");
    }
}

const JOIN: &str = "
CREATE TABLE orders (oid BIGINT, k INT) WITH ('connector' = 'filesystem', 'path' = 'o.csv', 'format' = 'csv');
CREATE TABLE lines (lid BIGINT, k INT) WITH ('connector' = 'filesystem', 'path' = 'l.csv', 'format' = 'csv');
CREATE TABLE out (oid BIGINT, lid BIGINT) WITH ('connector' = 'blackhole');
";

#[test]
fn each_join_side_expires_on_its_own_schedule() {
    // orders at times 1 (and 3 for the second source batch round), lines later.
    let orders = vec![Change::insert(vec![Value::Int(1), Value::Int(7)])];
    let lines: Vec<Change> = (0..12)
        .map(|i| Change::insert(vec![Value::Int(100 + i), Value::Int(7)]))
        .collect();
    let sources = MemSources(HashMap::from([
        ("orders".to_string(), orders),
        ("lines".to_string(), lines),
    ]));
    let sql = format!(
        "{JOIN}INSERT INTO out SELECT /*+ STATE_TTL('o' = '4 ms', 'l' = '100 ms') */ o.oid, l.lid FROM orders o JOIN lines l ON o.k = l.k;"
    );
    let o = run(&sql, &sources, &[]);
    // The order (written at time 1) joins lines until it expires at 5.
    let joined: Vec<i64> = o
        .changelog
        .iter()
        .map(|c| c.row[1].as_int().unwrap())
        .collect();
    assert_eq!(joined, vec![100, 101, 102], "{:?}", changelog(&o));
}

#[test]
fn precedence_is_config_then_hint() {
    let base = format!("{JOIN}SET 'table.exec.state.ttl' = '1 h';\n");
    let plain = format!(
        "{base}INSERT INTO out SELECT o.oid, l.lid FROM orders o JOIN lines l ON o.k = l.k;"
    );
    let plan = explain_script(&plain, &[]).unwrap();
    assert!(
        plan.contains("stateTtl=[left=3600000 ms (config), right=3600000 ms (config)]"),
        "{plan}"
    );
    let hinted = format!(
        "{base}INSERT INTO out SELECT /*+ STATE_TTL('o' = '1 d', 'o' = '3 s'), STATE_TTL('o' = '7 s', 'l' = '9 s') */ \
         o.oid, l.lid FROM orders o JOIN lines l ON o.k = l.k;"
    );
    let plan = explain_script(&hinted, &[]).unwrap();
    // Within a hint the last value of a key wins; across hints the first.
    assert!(
        plan.contains("stateTtl=[left=3000 ms (hint), right=9000 ms (hint)]"),
        "{plan}"
    );
    let bad = format!("{base}INSERT INTO out SELECT /*+ STATE_TTL('o' = 'soon') */ o.oid, l.lid FROM orders o JOIN lines l ON o.k = l.k;");
    let err = explain_script(&bad, &[]).unwrap_err().to_string();
    assert!(err.contains("STATE_TTL('o' = 'soon')"), "{err}");
}

/// Orders keep arriving and go idle after a few lines (the `orders`
/// workload): with a TTL the aggregate's state stays bounded, without it
/// the state grows with every order.
#[test]
fn state_stays_bounded_with_ttl_and_grows_without_it() {
    let sql = |rows: usize| {
        format!(
            "CREATE TABLE orders (order_id BIGINT, customer_id BIGINT, amount BIGINT) WITH (
               'connector' = 'orders', 'number-of-rows' = '{rows}', 'lines-per-order' = '4', 'max-lag' = '50', 'seed' = '1');
             CREATE TABLE revenue (order_id BIGINT, revenue BIGINT, PRIMARY KEY (order_id) NOT ENFORCED) WITH ('connector' = 'blackhole');
             INSERT INTO revenue SELECT order_id, SUM(amount) FROM orders GROUP BY order_id;"
        )
    };
    let entries = |rows: usize, ttl: &str| -> i64 {
        let o: Vec<(String, String)> = vec![
            ("lab.clock".into(), "deterministic".into()),
            ("table.exec.state.ttl".into(), ttl.into()),
        ];
        let out = optimizer::session::run_script(
            &sql(rows),
            std::path::Path::new("."),
            &o,
            RunOptions::default(),
            &mut |_, _| {},
        )
        .unwrap();
        out[0].report.state_entries()
    };
    let (small, large) = (10_000, 40_000);
    let (without_s, without_l) = (entries(small, "0 ms"), entries(large, "0 ms"));
    let (with_s, with_l) = (entries(small, "200 ms"), entries(large, "200 ms"));
    assert!(
        without_l > 3 * without_s,
        "grows without TTL: {without_s} -> {without_l}"
    );
    // With a TTL only the orders of the last ~200 records are live, however
    // long the run.
    assert!(
        with_s < 500 && with_l < 500,
        "bounded with TTL: {with_s} -> {with_l}"
    );
    assert!(with_l < without_l / 20);
}
