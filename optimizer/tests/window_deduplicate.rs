//! Window deduplication (`WindowDeduplicate`): the example on Flink's Bid
//! table (`examples/window_dedup.sql`), Flink's `WindowDeduplicateITCase`
//! on its `windowDataWithTimestamp` rows (a late row and an out-of-order
//! one), the late rule, and what the emit keys do to window operators.

use optimizer::error::ErrorKind;
use optimizer::session::{explain_script, run_script, InsertOutcome, RunOptions};
use std::path::Path;

fn examples() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples"))
}

fn owned(overrides: &[(&str, &str)]) -> Vec<(String, String)> {
    overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn run_in(dir: &Path, sql: &str, overrides: &[(&str, &str)]) -> Vec<InsertOutcome> {
    run_script(
        sql,
        dir,
        &owned(overrides),
        RunOptions::keep_all(),
        &mut |_, _| {},
    )
    .unwrap()
}

fn run_example(script: &str, overrides: &[(&str, &str)]) -> Vec<InsertOutcome> {
    let sql = std::fs::read_to_string(examples().join(script)).unwrap();
    run_in(examples(), &sql, overrides)
}

fn changelog(outcome: &InsertOutcome) -> Vec<String> {
    outcome.changelog.iter().map(|c| c.to_string()).collect()
}

fn counter(outcome: &InsertOutcome, name: &str) -> u64 {
    outcome
        .report
        .stages
        .iter()
        .flat_map(|s| &s.counters)
        .filter(|(n, _)| n == name)
        .map(|(_, v)| v)
        .sum()
}

fn assert_state_empty(outcomes: &[InsertOutcome]) {
    for o in outcomes {
        for stage in &o.report.stages {
            for s in &stage.states {
                assert_eq!(s.metrics.entries, 0, "{} {}", stage.name, s.name);
            }
        }
    }
}

const BACKENDS: [&str; 2] = ["hashmap", "rocksdb"];

#[test]
fn last_and_first_bid_of_each_window() {
    for parallelism in ["1", "4"] {
        for backend in BACKENDS {
            let out = run_example(
                "window_dedup.sql",
                &[
                    ("parallelism.default", parallelism),
                    ("state.backend.type", backend),
                ],
            );
            assert_eq!(
                changelog(&out[0]),
                [
                    "+I[2020-04-15 08:09:00.000, 5.0, D, 2020-04-15 08:00:00.000, 2020-04-15 08:10:00.000]",
                    "+I[2020-04-15 08:17:00.000, 6.0, F, 2020-04-15 08:10:00.000, 2020-04-15 08:20:00.000]",
                ]
            );
            assert_eq!(
                changelog(&out[1]),
                [
                    "+I[2020-04-15 08:05:00.000, 4.0, C, 2020-04-15 08:00:00.000, 2020-04-15 08:10:00.000]",
                    "+I[2020-04-15 08:05:00.000, 4.0, C, 2020-04-15 08:05:00.000, 2020-04-15 08:15:00.000]",
                    "+I[2020-04-15 08:11:00.000, 3.0, B, 2020-04-15 08:10:00.000, 2020-04-15 08:20:00.000]",
                    "+I[2020-04-15 08:17:00.000, 6.0, F, 2020-04-15 08:15:00.000, 2020-04-15 08:25:00.000]",
                ]
            );
            // Window state is freed as windows fire.
            assert_state_empty(&out);
        }
    }
}

#[test]
fn explain_names_flinks_window_deduplicate() {
    let sql = std::fs::read_to_string(examples().join("window_dedup.sql")).unwrap();
    let plan = explain_script(&sql, &[]).unwrap();
    assert!(
        plan.contains(
            "WindowDeduplicate(window=[TUMBLE(win_start=[window_start], win_end=[window_end], size=[10 min])], \
             keep=[LastRow], partitionKeys=[], orderKey=[bidtime], order=[ROWTIME])"
        ),
        "{plan}"
    );
    assert!(
        plan.contains(
            "WindowDeduplicate(window=[HOP(win_start=[window_start], win_end=[window_end], size=[10 min], slide=[5 min])], \
             keep=[FirstRow], partitionKeys=[], orderKey=[bidtime], order=[ROWTIME])"
        ),
        "{plan}"
    );
    assert!(
        plan.contains("WindowTableFunction(window=[TUMBLE(time_col=[bidtime], size=[10 min])])"),
        "{plan}"
    );
}

/// Flink's `TestData.windowDataWithTimestamp` (FLOAT left out, DECIMAL as
/// DOUBLE): the 00:00:06 row of `b` comes after its 00:00:07 row, and the
/// second 00:00:04 row of `a` comes after the watermark passed 00:00:07.
const WINDOW_DATA: &str = "\
2020-10-10 00:00:01,1,1.0,1.11,Hi,a
2020-10-10 00:00:02,2,2.0,2.22,Comment#1,a
2020-10-10 00:00:03,2,2.0,2.22,Comment#1,a
2020-10-10 00:00:04,5,5.0,5.55,,a
2020-10-10 00:00:07,3,3.0,,Hello,b
2020-10-10 00:00:06,6,6.0,6.66,Hi,b
2020-10-10 00:00:08,3,,3.33,Comment#2,a
2020-10-10 00:00:04,5,5.0,5.55,Hi,a
2020-10-10 00:00:16,4,4.0,4.44,Hi,b
2020-10-10 00:00:32,7,7.0,7.77,,
2020-10-10 00:00:34,1,3.0,3.33,Comment#3,b
";

const T1: &str = "
CREATE TABLE T1 (
  ts     TIMESTAMP(3),
  i      INT,
  d      DOUBLE,
  bigdec DOUBLE,
  s      STRING,
  name   STRING,
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'window_data.csv', 'format' = 'csv');
CREATE TABLE out_rows (
  ts TIMESTAMP(3), i INT, s STRING, name STRING,
  window_start TIMESTAMP(3), window_end TIMESTAMP(3), window_time TIMESTAMP(3)
) WITH ('connector' = 'blackhole');
";

/// The ITCase's query: `order` is `DESC` (keep last) or `ASC` (keep first).
fn itcase_query(window: &str, order: &str) -> String {
    format!(
        "{T1}
INSERT INTO out_rows
SELECT ts, i, s, name, window_start, window_end, window_time
FROM (
  SELECT *,
    ROW_NUMBER() OVER (PARTITION BY window_start, window_end, name ORDER BY ts {order}) AS rownum
  FROM TABLE({window})
) WHERE rownum <= 1;"
    )
}

/// Runs an ITCase query with a watermark after every row (as Flink's test
/// source emits one per record), every backend and parallelism; returns the
/// sorted rows (the same on every run) and the late rows dropped.
fn run_itcase(sql: &str) -> (Vec<String>, u64) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("window_data.csv"), WINDOW_DATA).unwrap();
    let mut seen: Option<(Vec<String>, u64)> = None;
    for parallelism in ["1", "4"] {
        for backend in BACKENDS {
            let out = run_in(
                dir.path(),
                sql,
                &[
                    ("lab.source.batch-size", "1"),
                    ("lab.clock", "deterministic"),
                    ("pipeline.auto-watermark-interval", "0 ms"),
                    ("parallelism.default", parallelism),
                    ("state.backend.type", backend),
                ],
            );
            assert_state_empty(&out);
            let mut rows = changelog(&out[0]);
            rows.sort();
            let got = (rows, counter(&out[0], "numLateRecordsDropped"));
            if let Some(s) = &seen {
                assert_eq!(&got, s, "p{parallelism} {backend}");
            }
            seen = Some(got);
        }
    }
    seen.unwrap()
}

const TUMBLE_5S: &str = "TUMBLE(TABLE T1, DESCRIPTOR(ts), INTERVAL '5' SECOND)";

#[test]
fn tumble_window_keep_last_row() {
    let (rows, late) = run_itcase(&itcase_query(TUMBLE_5S, "DESC"));
    assert_eq!(
        rows,
        [
            "+I[2020-10-10 00:00:04.000, 5, NULL, a, 2020-10-10 00:00:00.000, 2020-10-10 00:00:05.000, 2020-10-10 00:00:04.999]",
            "+I[2020-10-10 00:00:07.000, 3, Hello, b, 2020-10-10 00:00:05.000, 2020-10-10 00:00:10.000, 2020-10-10 00:00:09.999]",
            "+I[2020-10-10 00:00:08.000, 3, Comment#2, a, 2020-10-10 00:00:05.000, 2020-10-10 00:00:10.000, 2020-10-10 00:00:09.999]",
            "+I[2020-10-10 00:00:16.000, 4, Hi, b, 2020-10-10 00:00:15.000, 2020-10-10 00:00:20.000, 2020-10-10 00:00:19.999]",
            "+I[2020-10-10 00:00:32.000, 7, NULL, NULL, 2020-10-10 00:00:30.000, 2020-10-10 00:00:35.000, 2020-10-10 00:00:34.999]",
            "+I[2020-10-10 00:00:34.000, 1, Comment#3, b, 2020-10-10 00:00:30.000, 2020-10-10 00:00:35.000, 2020-10-10 00:00:34.999]",
        ]
    );
    // The second 00:00:04 row of `a` came after its window fired.
    assert_eq!(late, 1);
}

#[test]
fn tumble_window_keep_first_row() {
    let (rows, late) = run_itcase(&itcase_query(TUMBLE_5S, "ASC"));
    assert_eq!(
        rows,
        [
            "+I[2020-10-10 00:00:01.000, 1, Hi, a, 2020-10-10 00:00:00.000, 2020-10-10 00:00:05.000, 2020-10-10 00:00:04.999]",
            "+I[2020-10-10 00:00:06.000, 6, Hi, b, 2020-10-10 00:00:05.000, 2020-10-10 00:00:10.000, 2020-10-10 00:00:09.999]",
            "+I[2020-10-10 00:00:08.000, 3, Comment#2, a, 2020-10-10 00:00:05.000, 2020-10-10 00:00:10.000, 2020-10-10 00:00:09.999]",
            "+I[2020-10-10 00:00:16.000, 4, Hi, b, 2020-10-10 00:00:15.000, 2020-10-10 00:00:20.000, 2020-10-10 00:00:19.999]",
            "+I[2020-10-10 00:00:32.000, 7, NULL, NULL, 2020-10-10 00:00:30.000, 2020-10-10 00:00:35.000, 2020-10-10 00:00:34.999]",
            "+I[2020-10-10 00:00:34.000, 1, Comment#3, b, 2020-10-10 00:00:30.000, 2020-10-10 00:00:35.000, 2020-10-10 00:00:34.999]",
        ]
    );
    assert_eq!(late, 1);
}

#[test]
fn cumulate_window_keep_last_row() {
    let window = "CUMULATE(TABLE T1, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND)";
    let (rows, late) = run_itcase(&itcase_query(window, "DESC"));
    let row = |ts: &str, rest: &str, start: &str, end: &str, time: &str| {
        format!(
            "+I[2020-10-10 00:00:{ts}.000, {rest}, 2020-10-10 00:00:{start}.000, 2020-10-10 00:00:{end}.000, 2020-10-10 00:00:{time}]"
        )
    };
    let mut expected = vec![
        row("04", "5, NULL, a", "00", "05", "04.999"),
        row("08", "3, Comment#2, a", "00", "10", "09.999"),
        row("08", "3, Comment#2, a", "00", "15", "14.999"),
        row("07", "3, Hello, b", "00", "10", "09.999"),
        row("07", "3, Hello, b", "00", "15", "14.999"),
        row("16", "4, Hi, b", "15", "20", "19.999"),
        row("16", "4, Hi, b", "15", "25", "24.999"),
        row("16", "4, Hi, b", "15", "30", "29.999"),
        row("32", "7, NULL, NULL", "30", "35", "34.999"),
        row("32", "7, NULL, NULL", "30", "40", "39.999"),
        row("32", "7, NULL, NULL", "30", "45", "44.999"),
        row("34", "1, Comment#3, b", "30", "35", "34.999"),
        row("34", "1, Comment#3, b", "30", "40", "39.999"),
        row("34", "1, Comment#3, b", "30", "45", "44.999"),
    ];
    expected.sort();
    assert_eq!(rows, expected);
    // The late row of `a` misses 00:00-00:05 only: it still reaches the
    // cumulating windows ending at 00:10 and 00:15 (and loses there).
    assert_eq!(late, 1);
}

#[test]
fn keep_last_row_with_calc() {
    let sql = format!(
        "{T1}
CREATE TABLE calc_rows (
  i INT, s STRING, name STRING,
  window_start TIMESTAMP(3), window_end TIMESTAMP(3), window_time TIMESTAMP(3)
) WITH ('connector' = 'blackhole');
INSERT INTO calc_rows
SELECT i, s, name, window_start, window_end, window_time
FROM (
  SELECT *,
    ROW_NUMBER() OVER (PARTITION BY window_start, window_end, name ORDER BY ts DESC) AS rownum
  FROM TABLE({TUMBLE_5S})
) WHERE rownum <= 1;"
    );
    let (rows, _) = run_itcase(&sql);
    assert_eq!(
        rows,
        [
            "+I[1, Comment#3, b, 2020-10-10 00:00:30.000, 2020-10-10 00:00:35.000, 2020-10-10 00:00:34.999]",
            "+I[3, Comment#2, a, 2020-10-10 00:00:05.000, 2020-10-10 00:00:10.000, 2020-10-10 00:00:09.999]",
            "+I[3, Hello, b, 2020-10-10 00:00:05.000, 2020-10-10 00:00:10.000, 2020-10-10 00:00:09.999]",
            "+I[4, Hi, b, 2020-10-10 00:00:15.000, 2020-10-10 00:00:20.000, 2020-10-10 00:00:19.999]",
            "+I[5, NULL, a, 2020-10-10 00:00:00.000, 2020-10-10 00:00:05.000, 2020-10-10 00:00:04.999]",
            "+I[7, NULL, NULL, 2020-10-10 00:00:30.000, 2020-10-10 00:00:35.000, 2020-10-10 00:00:34.999]",
        ]
    );
}

#[test]
fn a_window_deduplication_keyed_on_the_other_columns_is_hashed_on_them() {
    let plan = explain_script(
        &itcase_query(TUMBLE_5S, "DESC"),
        &owned(&[("parallelism.default", "4")]),
    )
    .unwrap();
    assert!(
        plan.contains(
            "WindowDeduplicate(window=[TUMBLE(win_start=[window_start], win_end=[window_end], size=[5 s])], \
             keep=[LastRow], partitionKeys=[name], orderKey=[ts], order=[ROWTIME])"
        ),
        "{plan}"
    );
    assert!(
        plan.contains("Exchange(distribution=[hash[name]])"),
        "{plan}"
    );
}

#[test]
fn what_window_deduplication_refuses() {
    // Ordered by processing time.
    let sql = "
CREATE TABLE B (
  bidtime TIMESTAMP(3), price DOUBLE, item STRING, pt AS PROCTIME(),
  WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.csv', 'format' = 'csv');
CREATE TABLE o (item STRING) WITH ('connector' = 'blackhole');
INSERT INTO o SELECT item FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY pt DESC) AS rn
  FROM TABLE(TUMBLE(TABLE B, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
) WHERE rn = 1;";
    let err = explain_script(sql, &[]).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Unsupported, "{err}");
    assert!(err.message.contains("processing-time"), "{err}");
}

/// Flink 2.x refuses early and late firings on a window TVF aggregate, in
/// EXPLAIN as when it runs (`WindowUtil.checkEmitConfiguration`).
#[test]
fn window_aggregates_refuse_early_and_late_firings() {
    let sql = std::fs::read_to_string(examples().join("window_tumble.sql")).unwrap();
    for key in [
        "table.exec.emit.early-fire.enabled",
        "table.exec.emit.late-fire.enabled",
    ] {
        for phase in ["ONE_PHASE", "TWO_PHASE"] {
            let overrides = owned(&[
                (key, "true"),
                ("table.exec.emit.allow-lateness", "1 h"),
                ("table.optimizer.agg-phase-strategy", phase),
            ]);
            let err = explain_script(&sql, &overrides).unwrap_err();
            assert_eq!(err.kind, ErrorKind::Unsupported, "{err}");
            assert_eq!(
                err.message,
                "Currently, window table function based aggregate doesn't support early-fire and \
                 late-fire configuration 'table.exec.emit.early-fire.enabled' and \
                 'table.exec.emit.late-fire.enabled'."
            );
        }
    }
    let session = std::fs::read_to_string(examples().join("window_session.sql")).unwrap();
    let overrides = owned(&[("table.exec.emit.early-fire.enabled", "true")]);
    assert!(explain_script(&session, &overrides).is_err());
}

/// `table.exec.emit.allow-lateness` alone is ignored by window TVF
/// operators, as in Flink: the same windows, the same late drops, and no
/// state left after the final watermark on either backend.
#[test]
fn allowed_lateness_leaves_window_tvf_operators_as_they_are() {
    for backend in BACKENDS {
        let lateness = [
            ("table.exec.emit.allow-lateness", "1 h"),
            ("state.backend.type", backend),
        ];
        let out = run_example("window_hop.sql", &lateness);
        assert_eq!(
            changelog(&out[0]),
            [
                "+I[2020-04-15 08:00:00.000, 2020-04-15 08:10:00.000, 11.0]",
                "+I[2020-04-15 08:05:00.000, 2020-04-15 08:15:00.000, 15.0]",
                "+I[2020-04-15 08:10:00.000, 2020-04-15 08:20:00.000, 10.0]",
                "+I[2020-04-15 08:15:00.000, 2020-04-15 08:25:00.000, 6.0]",
            ]
        );
        assert_state_empty(&out);
        let dedup = run_example("window_dedup.sql", &lateness);
        assert_eq!(dedup[0].changelog.len(), 2);
        assert_state_empty(&dedup);
        // A window deduplication takes the emit keys without complaint, as
        // Flink's does (it does not check them).
        let fire = run_example(
            "window_dedup.sql",
            &[
                ("table.exec.emit.late-fire.enabled", "true"),
                ("table.exec.emit.allow-lateness", "1 h"),
                ("state.backend.type", backend),
            ],
        );
        assert_eq!(changelog(&fire[0]), changelog(&dedup[0]));
    }
    // Nor does table.exec.state.ttl touch it: rows wait for their window
    // however long the clock runs.
    let ttl = run_example(
        "window_dedup.sql",
        &[
            ("table.exec.state.ttl", "1 ms"),
            ("lab.clock", "deterministic"),
            ("lab.source.batch-size", "1"),
        ],
    );
    let plain = run_example("window_dedup.sql", &[("lab.source.batch-size", "1")]);
    assert_eq!(changelog(&ttl[0]), changelog(&plain[0]));
    assert_eq!(changelog(&ttl[1]), changelog(&plain[1]));
    assert_eq!(ttl[1].changelog.len(), 4);
    // The late rule is unchanged: the ITCase's late row is dropped.
    let (_, late) = run_itcase(&format!(
        "SET 'table.exec.emit.allow-lateness' = '1 h';\n{}",
        itcase_query(TUMBLE_5S, "DESC")
    ));
    assert_eq!(late, 1);
}
