//! Windows over `datagen`'s event times (`kind = 'event-time'`): times
//! rising 100 ms a row, a tenth of the rows up to 3 s out of order against
//! a watermark 1 s behind (so some are late), and a 20 s pause every 50
//! rows (so sessions end). TUMBLE and SESSION aggregations equal the batch
//! oracle over the same generated rows, after its late rule, and the
//! tumbling windows drop some rows as late.

mod common;

use common::events::sorted;
use datasets::DatagenSource;
use operators::exec::ChangeSource;
use operators::value::{DataType, Row, Value};
use optimizer::logical::Statement;
use optimizer::oracle::{self, Arrival};
use optimizer::session::{run_script, RunOptions};
use optimizer::sql::parse_script;
use std::collections::BTreeMap;

const OPTIONS: [(&str, &str); 13] = [
    ("connector", "datagen"),
    ("number-of-rows", "3000"),
    ("seed", "11"),
    ("fields.k.min", "0"),
    ("fields.k.max", "3"),
    ("fields.v.min", "1"),
    ("fields.v.max", "100"),
    ("fields.ts_ms.kind", "event-time"),
    ("fields.ts_ms.start", "1700000000000"),
    ("fields.ts_ms.step", "100"),
    ("fields.ts_ms.out-of-order-rate", "0.1"),
    ("fields.ts_ms.max-out-of-orderness", "3000"),
    ("fields.ts_ms.gap-every", "50"),
];

fn script() -> String {
    let with: Vec<String> = OPTIONS
        .iter()
        .chain([("fields.ts_ms.gap", "20000")].iter())
        .map(|(k, v)| format!("'{k}' = '{v}'"))
        .collect();
    format!(
        "CREATE TABLE ev (
  k INT, v BIGINT, ts_ms BIGINT,
  ts AS TO_TIMESTAMP_LTZ(ts_ms, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ({});
CREATE TABLE tumble_out (k INT, ws TIMESTAMP(3), c BIGINT, s BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE session_out (k INT, ws TIMESTAMP(3), we TIMESTAMP(3), c BIGINT, s BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO tumble_out
SELECT k, window_start, COUNT(*), SUM(v)
FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND))
GROUP BY k, window_start, window_end;
INSERT INTO session_out
SELECT k, window_start, window_end, COUNT(*), SUM(v)
FROM TABLE(SESSION(TABLE ev PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY k, window_start, window_end;
",
        with.join(", ")
    )
}

/// The table's rows as the connector generates them, with the computed
/// `ts` (the milliseconds as a timestamp).
fn generated_rows() -> Vec<Row> {
    let mut options: BTreeMap<String, String> = OPTIONS
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    options.insert("fields.ts_ms.gap".into(), "20000".into());
    let names = ["k".to_string(), "v".to_string(), "ts_ms".to_string()];
    let types = [DataType::Int, DataType::BigInt, DataType::BigInt];
    let mut src = DatagenSource::new(&options, &names, &types).unwrap();
    let mut out = Vec::new();
    while src.next_batch(1024, &mut out).unwrap() > 0 {}
    out.into_iter()
        .map(|c| {
            let mut row = c.row;
            let Value::Int(ms) = row[2] else {
                panic!("no time in {row:?}")
            };
            row.push(Value::Ts(ms));
            row
        })
        .collect()
}

#[test]
fn windows_over_generated_event_times_match_the_oracle() {
    let sql = script();
    let parsed = parse_script(&sql).unwrap();
    let watermark = parsed.catalog.get("ev").unwrap().watermark.clone().unwrap();
    let rows = generated_rows();
    let dir = tempfile::tempdir().unwrap();
    for (batch, interval) in [(1usize, 0u64), (64, 200)] {
        for p in [1, 4] {
            let overrides: Vec<(String, String)> = [
                ("lab.source.batch-size", batch.to_string()),
                ("lab.clock", "deterministic".to_string()),
                ("pipeline.auto-watermark-interval", format!("{interval} ms")),
                ("parallelism.default", p.to_string()),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
            let outcomes = run_script(
                &sql,
                dir.path(),
                &overrides,
                RunOptions::keep_all(),
                &mut |_, _| {},
            )
            .unwrap();
            let arrival = Arrival {
                watermark: &|t| (t == "ev").then(|| watermark.expr.clone()),
                batch_size: batch,
                interval_ms: interval,
                allow_lateness_ms: 0,
                breadth_first: false,
            };
            let inserts = parsed.statements.iter().filter_map(|s| match s {
                Statement::Insert(i) => Some(i),
                _ => None,
            });
            for (insert, outcome) in inserts.zip(&outcomes) {
                let expected = sorted(oracle::evaluate_event_time(
                    &insert.query,
                    &|_| rows.clone(),
                    &arrival,
                ));
                let report = outcome.sink_report();
                assert_eq!(
                    report.result.as_ref().unwrap(),
                    &expected,
                    "{} with {overrides:?}",
                    insert.sink
                );
                let dropped: u64 = outcome
                    .report
                    .stages
                    .iter()
                    .flat_map(|s| &s.counters)
                    .filter(|(n, _)| n == "numLateRecordsDropped")
                    .map(|(_, v)| v)
                    .sum();
                // A row up to 3 s back against a watermark 1 s behind
                // misses its 2 s tumbling window; a session 5 s wide still
                // takes it.
                if insert.sink == "tumble_out" {
                    assert!(dropped > 0, "no late rows with {overrides:?}");
                }
            }
        }
    }
}

#[test]
fn a_bad_event_time_option_is_bad_input_naming_the_table_and_option() {
    let sql = script().replace(
        "'fields.ts_ms.out-of-order-rate' = '0.1'",
        "'fields.ts_ms.out-of-order-rate' = 'often'",
    );
    let dir = tempfile::tempdir().unwrap();
    let err = run_script(
        &sql,
        dir.path(),
        &[],
        RunOptions::keep_all(),
        &mut |_, _| {},
    )
    .err()
    .expect("refused");
    assert_eq!(err.exit_code(), 2);
    assert!(
        err.to_string().contains(
            "table 'ev': option 'fields.ts_ms.out-of-order-rate' = 'often': \
             expected a probability between 0.0 and 1.0"
        ),
        "{err}"
    );
}
