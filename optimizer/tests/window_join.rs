//! Window join (`WindowJoin`): Flink's `WindowJoinITCase` on its
//! `windowDataWithTimestamp` and `windowData2WithTimestamp` rows (a late
//! row and an out-of-order one on each side), joined after window
//! aggregates and on the window TVFs directly, INNER and outer, on both
//! backends at parallelism 1 and 4, each equal to the batch oracle; the
//! plan Flink prints, and the joins it refuses.

use optimizer::logical::Statement;
use optimizer::oracle::{self, Arrival};
use optimizer::session::{explain_script, run_script, InsertOutcome, RunOptions};
use optimizer::sql::parse_script;
use std::path::Path;

/// Flink's `TestData.windowDataWithTimestamp` (FLOAT left out, DECIMAL as
/// DOUBLE); `windowData2WithTimestamp` is the same with `a` renamed `a1`.
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

const TABLES: &str = "
CREATE TABLE T1 (
  ts TIMESTAMP(3), i INT, d DOUBLE, bigdec DOUBLE, s STRING, name STRING,
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'window_data.csv', 'format' = 'csv');
CREATE TABLE T2 (
  ts TIMESTAMP(3), i INT, d DOUBLE, bigdec DOUBLE, s STRING, name STRING,
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'window_data2.csv', 'format' = 'csv');
";

const BACKENDS: [&str; 2] = ["hashmap", "rocksdb"];

fn overrides(parallelism: &str, backend: &str) -> Vec<(String, String)> {
    [
        ("lab.source.batch-size", "1"),
        ("lab.clock", "deterministic"),
        ("pipeline.auto-watermark-interval", "0 ms"),
        ("parallelism.default", parallelism),
        ("state.backend.type", backend),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

fn data_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("window_data.csv"), WINDOW_DATA).unwrap();
    std::fs::write(
        dir.path().join("window_data2.csv"),
        WINDOW_DATA.replace(",a\n", ",a1\n"),
    )
    .unwrap();
    dir
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

/// The rows of the CSV files as the tables read them, for the oracle.
fn table_rows(
    dir: &Path,
    sql: &str,
) -> std::collections::HashMap<String, Vec<operators::value::Row>> {
    let out = run_script(
        &format!(
            "{sql}
CREATE TABLE copy1 (ts TIMESTAMP(3), i INT, d DOUBLE, bigdec DOUBLE, s STRING, name STRING) WITH ('connector' = 'blackhole');
CREATE TABLE copy2 (ts TIMESTAMP(3), i INT, d DOUBLE, bigdec DOUBLE, s STRING, name STRING) WITH ('connector' = 'blackhole');
INSERT INTO copy1 SELECT * FROM T1;
INSERT INTO copy2 SELECT * FROM T2;"
        ),
        dir,
        &overrides("1", "hashmap"),
        RunOptions::keep_all(),
        &mut |_, _| {},
    )
    .unwrap();
    let n = out.len();
    [("t1", &out[n - 2]), ("t2", &out[n - 1])]
        .into_iter()
        .map(|(t, o)| {
            (
                t.to_string(),
                o.changelog.iter().map(|c| c.row.clone()).collect(),
            )
        })
        .collect()
}

/// Runs `INSERT INTO out_rows <query>` on every backend and parallelism:
/// the sorted rows (the same on every run, and equal to the oracle's) and
/// the late rows dropped at the join.
fn run_itcase(out_table: &str, query: &str) -> (Vec<String>, u64) {
    let dir = data_dir();
    let sql = format!("{TABLES}{out_table}\nINSERT INTO out_rows {query};");
    let mut seen: Option<(Vec<String>, u64)> = None;
    for parallelism in ["1", "4"] {
        for backend in BACKENDS {
            let out = run_script(
                &sql,
                dir.path(),
                &overrides(parallelism, backend),
                RunOptions::keep_all(),
                &mut |_, _| {},
            )
            .unwrap();
            for stage in &out[0].report.stages {
                for s in &stage.states {
                    assert_eq!(s.metrics.entries, 0, "{} {}", stage.name, s.name);
                }
            }
            assert!(out[0]
                .changelog
                .iter()
                .all(|c| c.kind == operators::changelog::RowKind::Insert));
            let mut rows: Vec<String> = out[0].changelog.iter().map(|c| c.to_string()).collect();
            rows.sort();
            let late = counter(&out[0], "leftNumLateRecordsDropped")
                + counter(&out[0], "rightNumLateRecordsDropped");
            let got = (rows, late);
            if let Some(s) = &seen {
                assert_eq!(&got, s, "p{parallelism} {backend}");
            }
            seen = Some(got);
        }
    }
    // The oracle, with the same late rule.
    let script = parse_script(&sql).unwrap();
    let insert = script
        .statements
        .iter()
        .find_map(|s| match s {
            Statement::Insert(i) => Some(i),
            _ => None,
        })
        .unwrap();
    let rows = table_rows(dir.path(), TABLES);
    let wm = |t: &str| {
        script
            .catalog
            .get(t)
            .and_then(|d| d.watermark.as_ref().map(|w| w.expr.clone()))
    };
    let arrival = Arrival {
        watermark: &wm,
        batch_size: 1,
        interval_ms: 0,
        allow_lateness_ms: 0,
        breadth_first: false,
    };
    let expected = oracle::sorted(oracle::evaluate_event_time(
        &insert.query,
        &|t| rows[&t.to_lowercase()].clone(),
        &arrival,
    ));
    let dir2 = data_dir();
    let out = run_script(
        &sql,
        dir2.path(),
        &overrides("1", "hashmap"),
        RunOptions::keep_all(),
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!(
        out[0].sink_report().result.clone().unwrap(),
        expected,
        "oracle"
    );
    seen.unwrap()
}

const AGG_OUT: &str = "CREATE TABLE out_rows (name STRING, ws TIMESTAMP(3), we TIMESTAMP(3), uv1 BIGINT, uv2 BIGINT) WITH ('connector' = 'blackhole');";

fn agg_query(join: &str) -> String {
    format!(
        "SELECT L.name, L.window_start, L.window_end, uv1, uv2
FROM (
  SELECT name, window_start, window_end, COUNT(DISTINCT s) AS uv1
  FROM TABLE(TUMBLE(TABLE T1, DESCRIPTOR(ts), INTERVAL '5' SECOND))
  GROUP BY name, window_start, window_end
) L
{join} (
  SELECT name, window_start, window_end, COUNT(DISTINCT s) AS uv2
  FROM TABLE(TUMBLE(TABLE T2, DESCRIPTOR(ts), INTERVAL '5' SECOND))
  GROUP BY name, window_start, window_end
) R
ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.name = R.name"
    )
}

#[test]
fn inner_join_of_window_aggregates() {
    let (rows, late) = run_itcase(AGG_OUT, &agg_query("JOIN"));
    assert_eq!(
        rows,
        [
            "+I[b, 2020-10-10 00:00:05.000, 2020-10-10 00:00:10.000, 2, 2]",
            "+I[b, 2020-10-10 00:00:15.000, 2020-10-10 00:00:20.000, 1, 1]",
            "+I[b, 2020-10-10 00:00:30.000, 2020-10-10 00:00:35.000, 1, 1]",
        ]
    );
    // The aggregates drop the late rows; nothing reaches the join late.
    assert_eq!(late, 0);
}

#[test]
fn left_join_of_window_aggregates() {
    let (rows, _) = run_itcase(AGG_OUT, &agg_query("LEFT JOIN"));
    assert_eq!(
        rows,
        [
            "+I[NULL, 2020-10-10 00:00:30.000, 2020-10-10 00:00:35.000, 0, NULL]",
            "+I[a, 2020-10-10 00:00:00.000, 2020-10-10 00:00:05.000, 2, NULL]",
            "+I[a, 2020-10-10 00:00:05.000, 2020-10-10 00:00:10.000, 1, NULL]",
            "+I[b, 2020-10-10 00:00:05.000, 2020-10-10 00:00:10.000, 2, 2]",
            "+I[b, 2020-10-10 00:00:15.000, 2020-10-10 00:00:20.000, 1, 1]",
            "+I[b, 2020-10-10 00:00:30.000, 2020-10-10 00:00:35.000, 1, 1]",
        ]
    );
}

const TVF_OUT: &str = "CREATE TABLE out_rows (ts TIMESTAMP(3), i INT, s STRING, name STRING, ws TIMESTAMP(3), we TIMESTAMP(3), wt TIMESTAMP(3), ri INT, rs STRING, rname STRING) WITH ('connector' = 'blackhole');";

fn tvf_query(join: &str) -> String {
    format!(
        "SELECT L.ts, L.i, L.s, L.name, L.window_start, L.window_end, L.window_time, R.i, R.s, R.name
FROM (SELECT * FROM TABLE(TUMBLE(TABLE T1, DESCRIPTOR(ts), INTERVAL '5' SECOND))) L
{join} (SELECT * FROM TABLE(TUMBLE(TABLE T2, DESCRIPTOR(ts), INTERVAL '5' SECOND))) R
ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.name = R.name"
    )
}

#[test]
fn inner_join_on_window_tvfs() {
    let (rows, late) = run_itcase(TVF_OUT, &tvf_query("JOIN"));
    let w = |a: &str, b: &str, c: &str| {
        format!("2020-10-10 00:00:{a}.000, 2020-10-10 00:00:{b}.000, 2020-10-10 00:00:{c}")
    };
    assert_eq!(
        rows,
        [
            format!(
                "+I[2020-10-10 00:00:06.000, 6, Hi, b, {}, 3, Hello, b]",
                w("05", "10", "09.999")
            ),
            format!(
                "+I[2020-10-10 00:00:06.000, 6, Hi, b, {}, 6, Hi, b]",
                w("05", "10", "09.999")
            ),
            format!(
                "+I[2020-10-10 00:00:07.000, 3, Hello, b, {}, 3, Hello, b]",
                w("05", "10", "09.999")
            ),
            format!(
                "+I[2020-10-10 00:00:07.000, 3, Hello, b, {}, 6, Hi, b]",
                w("05", "10", "09.999")
            ),
            format!(
                "+I[2020-10-10 00:00:16.000, 4, Hi, b, {}, 4, Hi, b]",
                w("15", "20", "19.999")
            ),
            format!(
                "+I[2020-10-10 00:00:34.000, 1, Comment#3, b, {}, 1, Comment#3, b]",
                w("30", "35", "34.999")
            ),
        ]
    );
    // The 00:00:04 row of each side comes after the watermark passed 00:00:07.
    assert_eq!(late, 2);
}

#[test]
fn outer_joins_on_window_tvfs_match_the_oracle() {
    for join in ["LEFT JOIN", "RIGHT JOIN", "FULL OUTER JOIN"] {
        let (rows, late) = run_itcase(TVF_OUT, &tvf_query(join));
        assert_eq!(late, 2, "{join}");
        // Unmatched rows padded: `a` (or `a1`) rows, and the NULL name.
        let padded = rows.iter().filter(|r| r.contains("NULL, NULL")).count();
        assert!(padded > 0, "{join}: {rows:?}");
    }
}

#[test]
fn explain_prints_flinks_window_join() {
    let sql = format!(
        "{TABLES}{AGG_OUT}\nEXPLAIN INSERT INTO out_rows {};",
        agg_query("JOIN")
    );
    let plan = explain_script(&sql, &[]).unwrap();
    assert!(
        plan.contains(
            "WindowJoin(leftWindow=[TUMBLE(win_start=[window_start], win_end=[window_end], size=[5 s])], \
             rightWindow=[TUMBLE(win_start=[window_start], win_end=[window_end], size=[5 s])], \
             joinType=[InnerJoin], where=[=(name, name0)], "
        ),
        "{plan}"
    );
}

#[test]
fn refuses_one_window_equality_and_different_windows() {
    let one = format!(
        "{TABLES}{TVF_OUT}\nEXPLAIN INSERT INTO out_rows {};",
        tvf_query("JOIN").replace("AND L.window_end = R.window_end ", "")
    );
    let err = explain_script(&one, &[]).unwrap_err().to_string();
    assert!(
        err.contains("window join requires JOIN ON condition must contain both window starts"),
        "{err}"
    );
    let hop = format!(
        "{TABLES}{TVF_OUT}\nEXPLAIN INSERT INTO out_rows {};",
        tvf_query("JOIN").replacen(
            "TUMBLE(TABLE T2, DESCRIPTOR(ts), INTERVAL '5' SECOND)",
            "HOP(TABLE T2, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)",
            1
        )
    );
    let err = explain_script(&hop, &[]).unwrap_err().to_string();
    assert!(
        err.contains("The left window table function is TUMBLE(size=[5 s]).\nThe right window table function is HOP(size=[10 s], slide=[5 s])."),
        "{err}"
    );
}

/// `examples/window_join.sql`: the FULL OUTER JOIN of Flink's window join
/// page, its exact changelog at parallelism 1 (windows by end, keys in the
/// order they first reached the window) and the same rows on every run.
#[test]
fn example_full_outer_window_join() {
    let examples = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples"));
    let sql = std::fs::read_to_string(examples.join("window_join.sql")).unwrap();
    let expected = [
        "+I[1, L1, NULL, NULL, 2020-04-15 12:00:00.000, NULL]",
        "+I[3, L3, 3, R3, 2020-04-15 12:00:00.000, 2020-04-15 12:00:00.000]",
        "+I[NULL, NULL, 2, R2, NULL, 2020-04-15 12:00:00.000]",
        "+I[2, L2, NULL, NULL, 2020-04-15 12:05:00.000, NULL]",
        "+I[NULL, NULL, 4, R4, NULL, 2020-04-15 12:05:00.000]",
    ];
    for parallelism in ["1", "4"] {
        for backend in BACKENDS {
            let overrides: Vec<(String, String)> = [
                ("parallelism.default", parallelism),
                ("state.backend.type", backend),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
            let out = run_script(
                &sql,
                examples,
                &overrides,
                RunOptions::keep_all(),
                &mut |_, _| {},
            )
            .unwrap();
            let mut rows: Vec<String> = out[0].changelog.iter().map(|c| c.to_string()).collect();
            if parallelism == "1" {
                assert_eq!(rows, expected, "{backend}");
            }
            rows.sort();
            let mut sorted = expected.map(String::from).to_vec();
            sorted.sort();
            assert_eq!(rows, sorted, "p{parallelism} {backend}");
        }
    }
}
