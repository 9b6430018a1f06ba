//! Window Top-N (`WindowRank`): the example on Flink's Bid table with
//! suppliers (`examples/window_topn.sql`), Flink's `WindowRankITCase` on
//! its `windowDataWithTimestamp` rows (a late row and an out-of-order
//! one), over a window aggregate and over a window TVF, and EXPLAIN.

use optimizer::session::{explain_script, run_script, InsertOutcome, RunOptions};
use std::path::Path;

fn examples() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples"))
}

fn run_in(dir: &Path, sql: &str, overrides: &[(&str, &str)]) -> Vec<InsertOutcome> {
    let overrides: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    run_script(sql, dir, &overrides, RunOptions::keep_all(), &mut |_, _| {}).unwrap()
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
fn top_suppliers_and_top_bids_of_each_window() {
    let sql = std::fs::read_to_string(examples().join("window_topn.sql")).unwrap();
    for parallelism in ["1", "4"] {
        for backend in BACKENDS {
            let out = run_in(
                examples(),
                &sql,
                &[
                    ("parallelism.default", parallelism),
                    ("state.backend.type", backend),
                ],
            );
            let w1 = "2020-04-15 08:00:00.000, 2020-04-15 08:10:00.000";
            let w2 = "2020-04-15 08:10:00.000, 2020-04-15 08:20:00.000";
            assert_eq!(
                changelog(&out[0]),
                [
                    format!("+I[{w1}, supplier1, 6.0, 2, 1]"),
                    format!("+I[{w1}, supplier4, 5.0, 1, 2]"),
                    format!("+I[{w1}, supplier2, 4.0, 1, 3]"),
                    format!("+I[{w2}, supplier5, 6.0, 1, 1]"),
                    format!("+I[{w2}, supplier2, 3.0, 1, 2]"),
                    format!("+I[{w2}, supplier3, 2.0, 1, 3]"),
                ],
                "p{parallelism} {backend}"
            );
            assert_eq!(
                changelog(&out[1]),
                [
                    format!("+I[2020-04-15 08:09:00.000, 5.0, D, supplier4, {w1}, 1]"),
                    format!("+I[2020-04-15 08:05:00.000, 4.0, A, supplier1, {w1}, 2]"),
                    format!("+I[2020-04-15 08:06:00.000, 4.0, C, supplier2, {w1}, 3]"),
                    format!("+I[2020-04-15 08:17:00.000, 6.0, F, supplier5, {w2}, 1]"),
                    format!("+I[2020-04-15 08:15:00.000, 3.0, H, supplier2, {w2}, 2]"),
                    format!("+I[2020-04-15 08:11:00.000, 2.0, B, supplier3, {w2}, 3]"),
                ],
                "p{parallelism} {backend}"
            );
            // Window state is freed as windows fire.
            assert_state_empty(&out);
        }
    }
}

#[test]
fn explain_names_flinks_window_rank() {
    let sql = std::fs::read_to_string(examples().join("window_topn.sql")).unwrap();
    let plan = explain_script(&sql, &[]).unwrap();
    for select in [
        "window_start, window_end, supplier_id, price, cnt, w0$o0",
        "bidtime, price, item, supplier_id, window_start, window_end, w0$o0",
    ] {
        let rank = format!(
            "WindowRank(window=[TUMBLE(win_start=[window_start], win_end=[window_end], size=[10 min])], \
             rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd=3], partitionBy=[], \
             orderBy=[price DESC], select=[{select}])"
        );
        assert!(plan.contains(&rank), "{plan}");
    }
    assert!(
        plan.contains("GlobalWindowAggregate(groupBy=[supplier_id]"),
        "{plan}"
    );
    assert!(plan.contains("Exchange(distribution=[single])"), "{plan}");
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
CREATE TABLE agg_rows (
  name STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3),
  cnt BIGINT, sum_b DOUBLE, max_d DOUBLE, uv BIGINT, rownum BIGINT
) WITH ('connector' = 'blackhole');
CREATE TABLE tvf_rows (
  ts TIMESTAMP(3), i INT, d DOUBLE, bigdec DOUBLE, s STRING, name STRING,
  window_start TIMESTAMP(3), window_end TIMESTAMP(3), window_time TIMESTAMP(3)
) WITH ('connector' = 'blackhole');
";

/// `testTumbleWindow`'s query (the FLOAT minimum and the user-defined
/// aggregate left out), kept where `range` says.
fn on_window_aggregate(range: &str) -> String {
    format!(
        "{T1}
INSERT INTO agg_rows
SELECT * FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY sum_b DESC) AS rownum
  FROM (
    SELECT name, window_start, window_end, COUNT(*) AS cnt, SUM(bigdec) AS sum_b,
      MAX(d) AS max_d, COUNT(DISTINCT s) AS uv
    FROM TABLE(TUMBLE(TABLE T1, DESCRIPTOR(ts), INTERVAL '5' SECOND))
    GROUP BY name, window_start, window_end
  )
) WHERE {range};"
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

fn sorted(rows: &[&str]) -> Vec<String> {
    let mut rows: Vec<String> = rows.iter().map(|r| format!("+I[{r}]")).collect();
    rows.sort();
    rows
}

const W0: &str = "2020-10-10 00:00:00.000, 2020-10-10 00:00:05.000";
const W5: &str = "2020-10-10 00:00:05.000, 2020-10-10 00:00:10.000";
const W15: &str = "2020-10-10 00:00:15.000, 2020-10-10 00:00:20.000";
const W30: &str = "2020-10-10 00:00:30.000, 2020-10-10 00:00:35.000";

#[test]
fn tumble_window() {
    let (rows, late) = run_itcase(&on_window_aggregate("rownum <= 2"));
    let expected = [
        format!("a, {W0}, 4, SUM_A, 5.0, 2, 1"),
        format!("a, {W5}, 1, 3.33, NULL, 1, 2"),
        format!("b, {W5}, 2, 6.66, 6.0, 2, 1"),
        format!("b, {W15}, 1, 4.44, 4.0, 1, 1"),
        format!("b, {W30}, 1, 3.33, 3.0, 1, 2"),
        format!("NULL, {W30}, 1, 7.77, 7.0, 0, 1"),
    ];
    let sum_a = rows
        .iter()
        .find(|r| r.starts_with(&format!("+I[a, {W0}")))
        .and_then(|r| r.split(", ").nth(4))
        .unwrap()
        .to_string();
    // 1.11 + 2.22 + 2.22 + 5.55 in DOUBLE (Flink's DECIMAL prints 11.10).
    assert!(
        (sum_a.parse::<f64>().unwrap() - 11.10).abs() < 1e-9,
        "{sum_a}"
    );
    let expected: Vec<String> = expected
        .iter()
        .map(|r| r.replace("SUM_A", &sum_a))
        .collect();
    let expected: Vec<&str> = expected.iter().map(String::as_str).collect();
    assert_eq!(rows, sorted(&expected));
    // The aggregate drops the second 00:00:04 row of `a`; the rank over its
    // rows drops nothing.
    assert_eq!(late, 1);
}

#[test]
fn tumble_window_with_rank_offset() {
    let (rows, _) = run_itcase(&on_window_aggregate("rownum > 1 AND rownum <= 2"));
    assert_eq!(
        rows,
        sorted(&[
            &format!("a, {W5}, 1, 3.33, NULL, 1, 2"),
            &format!("b, {W30}, 1, 3.33, 3.0, 1, 2"),
        ])
    );
}

#[test]
fn tumble_window_tvf() {
    let sql = format!(
        "{T1}
INSERT INTO tvf_rows
SELECT ts, i, d, bigdec, s, name, window_start, window_end, window_time
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, name ORDER BY i DESC) AS rownum
  FROM TABLE(TUMBLE(TABLE T1, DESCRIPTOR(ts), INTERVAL '5' SECOND))
) WHERE rownum <= 2;"
    );
    let (rows, late) = run_itcase(&sql);
    let t = |s: &str| format!("2020-10-10 00:00:{s}.000");
    assert_eq!(
        rows,
        sorted(&[
            &format!(
                "{}, 5, 5.0, 5.55, NULL, a, {W0}, 2020-10-10 00:00:04.999",
                t("04")
            ),
            // Two rows of `a` have i = 2: the first to come ranks first.
            &format!(
                "{}, 2, 2.0, 2.22, Comment#1, a, {W0}, 2020-10-10 00:00:04.999",
                t("02")
            ),
            &format!(
                "{}, 3, NULL, 3.33, Comment#2, a, {W5}, 2020-10-10 00:00:09.999",
                t("08")
            ),
            &format!(
                "{}, 6, 6.0, 6.66, Hi, b, {W5}, 2020-10-10 00:00:09.999",
                t("06")
            ),
            &format!(
                "{}, 3, 3.0, NULL, Hello, b, {W5}, 2020-10-10 00:00:09.999",
                t("07")
            ),
            &format!(
                "{}, 4, 4.0, 4.44, Hi, b, {W15}, 2020-10-10 00:00:19.999",
                t("16")
            ),
            &format!(
                "{}, 7, 7.0, 7.77, NULL, NULL, {W30}, 2020-10-10 00:00:34.999",
                t("32")
            ),
            &format!(
                "{}, 1, 3.0, 3.33, Comment#3, b, {W30}, 2020-10-10 00:00:34.999",
                t("34")
            ),
        ])
    );
    // The second 00:00:04 row of `a` came after its window fired.
    assert_eq!(late, 1);
}

#[test]
fn a_window_rank_over_a_session_window_tvf_is_refused() {
    let sql = format!(
        "{T1}
INSERT INTO tvf_rows
SELECT ts, i, d, bigdec, s, name, window_start, window_end, window_time
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY i DESC) AS rownum
  FROM TABLE(SESSION(TABLE T1, DESCRIPTOR(ts), INTERVAL '5' SECOND))
) WHERE rownum <= 2;"
    );
    let err = explain_script(&sql, &[]).unwrap_err().to_string();
    assert!(err.contains("SESSION window TVF"), "{err}");
}

/// Sessions of `a` ([00:01, 00:08)) and `b` ([00:03, 00:08)) end together
/// but are different windows: each is ranked first in its own, as the
/// query's `PARTITION BY window_start, window_end` says. (Flink keys a
/// window Top-N by the end alone and would keep only `a`.)
#[test]
fn sessions_that_end_together_are_ranked_apart() {
    let data = "\
2020-10-10 00:00:01,1,1.0,1.0,x,a
2020-10-10 00:00:03,1,1.0,1.0,x,a
2020-10-10 00:00:03,1,1.0,1.0,x,b
2020-10-10 00:00:30,1,1.0,1.0,x,c
";
    let sql = format!(
        "{T1}
INSERT INTO agg_rows
SELECT * FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY cnt DESC) AS rownum
  FROM (
    SELECT name, window_start, window_end, COUNT(*) AS cnt, SUM(bigdec) AS sum_b,
      MAX(d) AS max_d, COUNT(DISTINCT s) AS uv
    FROM TABLE(SESSION(TABLE T1 PARTITION BY name, DESCRIPTOR(ts), INTERVAL '5' SECOND))
    GROUP BY name, window_start, window_end
  )
) WHERE rownum <= 1;"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("window_data.csv"), data).unwrap();
    for parallelism in ["1", "4"] {
        for backend in BACKENDS {
            let out = run_in(
                dir.path(),
                &sql,
                &[
                    ("parallelism.default", parallelism),
                    ("state.backend.type", backend),
                ],
            );
            assert_state_empty(&out);
            let mut rows = changelog(&out[0]);
            rows.sort();
            assert_eq!(
                rows,
                sorted(&[
                    "a, 2020-10-10 00:00:01.000, 2020-10-10 00:00:08.000, 2, 2.0, 1.0, 1, 1",
                    "b, 2020-10-10 00:00:03.000, 2020-10-10 00:00:08.000, 1, 1.0, 1.0, 1, 1",
                    "c, 2020-10-10 00:00:30.000, 2020-10-10 00:00:35.000, 1, 1.0, 1.0, 1, 1",
                ]),
                "p{parallelism} {backend}"
            );
        }
    }
}
