//! A delta join may emit a pair twice, which only an upsert sink taking its
//! rows directly absorbs: below an aggregate (which would count the pair
//! twice) a join stays regular, whatever the sink.

mod common;

use common::{run_mem, MemSources};
use operators::changelog::Change;
use operators::value::Value;
use optimizer::session::{explain_script, RunOptions};
use std::collections::HashMap;

const SQL: &str = "
CREATE TABLE l (id INT, k INT, x INT, PRIMARY KEY (id) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = 'l.csv', 'format' = 'csv', 'index.key' = 'k');
CREATE TABLE r (k INT, rid INT, y INT, PRIMARY KEY (k, rid) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = 'r.csv', 'format' = 'csv', 'index.key' = 'k');
CREATE TABLE o (k INT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'blackhole');
INSERT INTO o SELECT r.k, COUNT(*) FROM l JOIN r ON l.k = r.k GROUP BY r.k;
";

fn rows(rows: &[[i64; 3]]) -> Vec<Change> {
    rows.iter()
        .map(|r| Change::insert(r.iter().map(|v| Value::Int(*v)).collect()))
        .collect()
}

#[test]
fn a_join_below_an_aggregate_stays_regular() {
    let sources = MemSources(HashMap::from([
        (
            "l".to_string(),
            rows(&[[1, 7, 0], [2, 7, 0], [3, 7, 0], [4, 8, 1]]),
        ),
        ("r".to_string(), rows(&[[7, 1, 0], [7, 2, 0], [8, 1, 1]])),
    ]));
    let run = |strategy: &str| {
        let o = [
            ("table.optimizer.delta-join.strategy", strategy.to_string()),
            ("lab.source.batch-size", "1".to_string()),
            ("lab.delta-join.source-read-ahead", "2".to_string()),
        ];
        let (_, out) = run_mem(SQL, &sources, &o, RunOptions::keep_all()).unwrap();
        out[0].sink_report().result.clone().unwrap()
    };
    let counts = run("AUTO");
    assert_eq!(
        counts,
        vec![
            vec![Value::Int(7), Value::Int(6)],
            vec![Value::Int(8), Value::Int(1)]
        ]
    );
    assert_eq!(counts, run("NONE"));
    let text = explain_script(SQL, &[]).unwrap();
    assert!(
        text.contains("note=[not a delta join: its rows reach the sink through a GroupAggregate"),
        "{text}"
    );
    let err = explain_script(
        SQL,
        &[(
            "table.optimizer.delta-join.strategy".to_string(),
            "FORCE".to_string(),
        )],
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains(
            "this join cannot be a delta join: its rows reach the sink through a GroupAggregate"
        ),
        "{err}"
    );
}
