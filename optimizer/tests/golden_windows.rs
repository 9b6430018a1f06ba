//! The window examples of Flink's window TVF page, run on the Bid table of
//! that page (`examples/bids.csv`): the exact changelog of each window
//! aggregation, as the page lists its rows (in the order the windows fire:
//! by window end, those the watermark passes after the input's one batch
//! first, the rest at the end of input).

use optimizer::session::{run_script, InsertOutcome, RunOptions};
use std::path::Path;

fn examples() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples"))
}

fn run(script: &str, overrides: &[(&str, &str)]) -> Vec<InsertOutcome> {
    let sql = std::fs::read_to_string(examples().join(script)).unwrap();
    let overrides: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    run_script(
        &sql,
        examples(),
        &overrides,
        RunOptions::keep_all(),
        &mut |_, _| {},
    )
    .unwrap()
}

fn changelog(outcome: &InsertOutcome) -> Vec<String> {
    outcome.changelog.iter().map(|c| c.to_string()).collect()
}

#[test]
fn tumbling_window_totals() {
    let out = run("window_tumble.sql", &[]);
    assert_eq!(
        changelog(&out[0]),
        [
            "+I[2020-04-15 08:00:00.000, 2020-04-15 08:10:00.000, 11.0]",
            "+I[2020-04-15 08:10:00.000, 2020-04-15 08:20:00.000, 10.0]",
        ]
    );
}

#[test]
fn hopping_and_cumulating_window_totals() {
    for parallelism in ["1", "4"] {
        for backend in ["hashmap", "rocksdb"] {
            let out = run(
                "window_hop.sql",
                &[
                    ("parallelism.default", parallelism),
                    ("state.backend.type", backend),
                ],
            );
            assert_eq!(
                changelog(&out[0]),
                [
                    "+I[2020-04-15 08:00:00.000, 2020-04-15 08:10:00.000, 11.0]",
                    "+I[2020-04-15 08:05:00.000, 2020-04-15 08:15:00.000, 15.0]",
                    "+I[2020-04-15 08:10:00.000, 2020-04-15 08:20:00.000, 10.0]",
                    "+I[2020-04-15 08:15:00.000, 2020-04-15 08:25:00.000, 6.0]",
                ]
            );
            assert_eq!(
                changelog(&out[1]),
                [
                    "+I[2020-04-15 08:00:00.000, 2020-04-15 08:06:00.000, 4.0]",
                    "+I[2020-04-15 08:00:00.000, 2020-04-15 08:08:00.000, 6.0]",
                    "+I[2020-04-15 08:00:00.000, 2020-04-15 08:10:00.000, 11.0]",
                    "+I[2020-04-15 08:10:00.000, 2020-04-15 08:12:00.000, 3.0]",
                    "+I[2020-04-15 08:10:00.000, 2020-04-15 08:14:00.000, 4.0]",
                    "+I[2020-04-15 08:10:00.000, 2020-04-15 08:16:00.000, 4.0]",
                    "+I[2020-04-15 08:10:00.000, 2020-04-15 08:18:00.000, 10.0]",
                    "+I[2020-04-15 08:10:00.000, 2020-04-15 08:20:00.000, 10.0]",
                ]
            );
            // Window state is freed as windows fire: nothing is left.
            for o in &out {
                for stage in &o.report.stages {
                    for s in &stage.states {
                        assert_eq!(s.metrics.entries, 0, "{} {}", stage.name, s.name);
                    }
                }
            }
        }
    }
}

/// A bid that arrives after the watermark passed the end of its only
/// window is dropped and counted: with one row per batch, the 08:01 bid
/// after the 08:17 one (watermark 08:16:59) misses the 08:00-08:10 window.
#[test]
fn a_late_bid_is_dropped_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = std::fs::read_to_string(examples().join("bids.csv")).unwrap();
    csv.push_str("2020-04-15 08:01:00,100.0,G\n");
    std::fs::write(dir.path().join("bids.csv"), csv).unwrap();
    let sql = std::fs::read_to_string(examples().join("window_tumble.sql")).unwrap();
    let overrides = vec![
        ("lab.source.batch-size".to_string(), "1".to_string()),
        ("lab.clock".to_string(), "deterministic".to_string()),
        (
            "pipeline.auto-watermark-interval".to_string(),
            "0 ms".to_string(),
        ),
    ];
    let out = run_script(
        &sql,
        dir.path(),
        &overrides,
        RunOptions::keep_all(),
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!(
        changelog(&out[0]),
        [
            "+I[2020-04-15 08:00:00.000, 2020-04-15 08:10:00.000, 11.0]",
            "+I[2020-04-15 08:10:00.000, 2020-04-15 08:20:00.000, 10.0]",
        ]
    );
    let dropped: u64 = out[0]
        .report
        .stages
        .iter()
        .flat_map(|s| &s.counters)
        .filter(|(n, _)| n == "numLateRecordsDropped")
        .map(|(_, v)| v)
        .sum();
    assert_eq!(dropped, 1);
}

/// Session windows on the Bid table (`examples/window_session.sql`): per
/// item with a 5-minute gap, and over all bids with a 2-minute gap, where
/// bids two minutes apart touch and merge. The sessions the watermark
/// passes after the one batch (08:16:59) fire first, by end, then the rest
/// at the end of input. Sessions are one phase whatever the strategy.
#[test]
fn session_window_totals() {
    for parallelism in ["1", "4"] {
        for backend in ["hashmap", "rocksdb"] {
            for phase in ["ONE_PHASE", "TWO_PHASE"] {
                let out = run(
                    "window_session.sql",
                    &[
                        ("parallelism.default", parallelism),
                        ("state.backend.type", backend),
                        ("table.optimizer.agg-phase-strategy", phase),
                    ],
                );
                // At parallelism 4 the items' sessions fire on different
                // subtasks: the order across them is the sink's arrival order.
                let mut items = changelog(&out[0]);
                if parallelism != "1" {
                    items.sort_by_key(|r| r[4..27].to_string());
                }
                assert_eq!(
                    items,
                    [
                        "+I[2020-04-15 08:05:00.000, 2020-04-15 08:10:00.000, C, 4.0]",
                        "+I[2020-04-15 08:07:00.000, 2020-04-15 08:12:00.000, A, 2.0]",
                        "+I[2020-04-15 08:09:00.000, 2020-04-15 08:14:00.000, D, 5.0]",
                        "+I[2020-04-15 08:11:00.000, 2020-04-15 08:16:00.000, B, 3.0]",
                        "+I[2020-04-15 08:13:00.000, 2020-04-15 08:18:00.000, E, 1.0]",
                        "+I[2020-04-15 08:17:00.000, 2020-04-15 08:22:00.000, F, 6.0]",
                    ]
                );
                assert_eq!(
                    changelog(&out[1]),
                    [
                        "+I[2020-04-15 08:05:00.000, 2020-04-15 08:15:00.000, 5, 15.0]",
                        "+I[2020-04-15 08:17:00.000, 2020-04-15 08:19:00.000, 1, 6.0]",
                    ]
                );
                for o in &out {
                    for stage in &o.report.stages {
                        for s in &stage.states {
                            assert_eq!(s.metrics.entries, 0, "{} {}", stage.name, s.name);
                        }
                    }
                }
            }
        }
    }
    let sql = std::fs::read_to_string(examples().join("window_session.sql")).unwrap();
    let overrides = [(
        "table.optimizer.agg-phase-strategy".to_string(),
        "TWO_PHASE".to_string(),
    )];
    let plan = optimizer::session::explain_script(&sql, &overrides).unwrap();
    assert!(
        plan.contains(
            "WindowAggregate(groupBy=[item], window=[SESSION(time_col=[bidtime], gap=[5 min], partition keys=[item])], \
             select=[item, SUM(price) AS total_price, start('w$) AS window_start, end('w$) AS window_end])"
        ),
        "{plan}"
    );
    assert!(
        plan.contains("WindowAggregate(window=[SESSION(time_col=[bidtime], gap=[2 min])]"),
        "{plan}"
    );
    assert!(!plan.contains("LocalWindowAggregate"), "{plan}");
}

/// A legacy group window with allowed lateness and late firings
/// (`examples/group_window_late_fire.sql`, Flink's
/// `GroupWindowITCase.testEventTimeTumblingWindowWithAllowLateness`): each
/// window fires as `+I` when the watermark passes its end; a record within
/// the 10 ms of lateness fires it again as `-U` old, `+U` new; the 3 ms
/// `Hi` at watermark 16 is past the cleanup time of `[0, 5)` (14) and
/// dropped. The final rows are Flink's expected rows, the batch answer
/// over the records not dropped; the window state is empty at the end, on
/// both backends.
#[test]
fn group_window_late_firing() {
    let expected = [
        "+I[Hi, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.005, 1, 1, 1, 1, 1, 1]",
        "+I[Hello, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.005, 2, 2, 2, 2, 2, 4]",
        "-U[Hello, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.005, 2, 2, 2, 2, 2, 4]",
        "+U[Hello, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.005, 2, 3, 2, 2, 3, 7]",
        "+I[Hello world, 1970-01-01 00:00:00.005, 1970-01-01 00:00:00.010, 1, 1, 3, 3, 3, 3]",
        "-U[Hello world, 1970-01-01 00:00:00.005, 1970-01-01 00:00:00.010, 1, 1, 3, 3, 3, 3]",
        "+U[Hello world, 1970-01-01 00:00:00.005, 1970-01-01 00:00:00.010, 2, 2, 3, 3, 4, 7]",
        "+I[Hello world, 1970-01-01 00:00:00.015, 1970-01-01 00:00:00.020, 1, 1, 3, 3, 3, 3]",
    ];
    for backend in ["hashmap", "rocksdb"] {
        let out = run(
            "group_window_late_fire.sql",
            &[("state.backend.type", backend)],
        );
        assert_eq!(changelog(&out[0]), expected, "{backend}");
        let dropped: u64 = out[0]
            .report
            .stages
            .iter()
            .flat_map(|s| &s.counters)
            .filter(|(n, _)| n == "numLateRecordsDropped")
            .map(|(_, v)| v)
            .sum();
        assert_eq!(dropped, 1, "{backend}");
        for stage in &out[0].report.stages {
            for s in &stage.states {
                assert_eq!(s.metrics.entries, 0, "{backend}: {} {}", stage.name, s.name);
            }
        }
        // Flink's expected (upsert) rows are the final table.
        assert_eq!(
            optimizer::oracle::final_table(&out[0].changelog).len(),
            4,
            "{backend}"
        );
    }
    // At parallelism 4 the keys fire on different subtasks: each key's
    // changes keep their order.
    let out = run(
        "group_window_late_fire.sql",
        &[("parallelism.default", "4")],
    );
    let got = changelog(&out[0]);
    for key in ["[Hi,", "[Hello,", "[Hello world,"] {
        let of_key = |rows: &[String]| -> Vec<String> {
            rows.iter().filter(|r| r.contains(key)).cloned().collect()
        };
        let want: Vec<String> = expected.iter().map(|r| r.to_string()).collect();
        assert_eq!(of_key(&got), of_key(&want), "{key}");
    }
    assert_eq!(got.len(), expected.len());
}

/// Into an upsert sink keyed by the string and the window's start, as
/// Flink's test writes it: the aggregate's upsert key is the group key and
/// `w$start`, so no SinkUpsertMaterializer is planned and the sink takes
/// the same `-U`/`+U`; its final rows are Flink's expected rows.
#[test]
fn group_window_late_firing_into_an_upsert_sink() {
    let sql = std::fs::read_to_string(examples().join("group_window_late_fire.sql"))
        .unwrap()
        .replace(
            "  sum_num    BIGINT\n",
            "  sum_num    BIGINT,\n  PRIMARY KEY (str, w_start) NOT ENFORCED\n",
        );
    assert!(sql.contains("PRIMARY KEY"));
    let out = run_script(
        &sql,
        examples(),
        &[],
        RunOptions::keep_all(),
        &mut |_, _| {},
    )
    .unwrap();
    let kinds: Vec<String> = changelog(&out[0])
        .iter()
        .map(|r| r[..2].to_string())
        .collect();
    assert_eq!(kinds, ["+I", "+I", "-U", "+U", "+I", "-U", "+U", "+I"]);
    assert!(
        out[0]
            .report
            .stages
            .iter()
            .all(|s| !s.name.contains("SinkMaterializer")),
        "{:?}",
        out[0]
            .report
            .stages
            .iter()
            .map(|s| &s.name)
            .collect::<Vec<_>>()
    );
    let result: Vec<String> = oracle_rows(out[0].sink_report().result.as_ref().unwrap());
    assert_eq!(
        result,
        [
            "Hello world, 1970-01-01 00:00:00.005, 1970-01-01 00:00:00.010, 2, 2, 3, 3, 4, 7",
            "Hello world, 1970-01-01 00:00:00.015, 1970-01-01 00:00:00.020, 1, 1, 3, 3, 3, 3",
            "Hello, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.005, 2, 3, 2, 2, 3, 7",
            "Hi, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.005, 1, 1, 1, 1, 1, 1",
        ]
    );
}

/// Rows as the changelog prints them, without the kind, sorted.
fn oracle_rows(rows: &[operators::value::Row]) -> Vec<String> {
    let mut out: Vec<String> = rows
        .iter()
        .map(|r| {
            let s = operators::changelog::Change::insert(r.clone()).to_string();
            s[3..s.len() - 1].to_string()
        })
        .collect();
    out.sort();
    out
}

/// Without late firings and lateness the same query is insert-only: each
/// window fires once and every record behind a fired window is dropped
/// (the out-of-order 4 ms `Hello` and 9 ms `Hello world` too).
#[test]
fn group_window_without_lateness_fires_once() {
    let out = run(
        "group_window_late_fire.sql",
        &[
            ("table.exec.emit.allow-lateness", "0 ms"),
            ("table.exec.emit.late-fire.enabled", "false"),
        ],
    );
    assert_eq!(
        changelog(&out[0]),
        [
            "+I[Hi, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.005, 1, 1, 1, 1, 1, 1]",
            "+I[Hello, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.005, 2, 2, 2, 2, 2, 4]",
            "+I[Hello world, 1970-01-01 00:00:00.005, 1970-01-01 00:00:00.010, 1, 1, 3, 3, 3, 3]",
            "+I[Hello world, 1970-01-01 00:00:00.015, 1970-01-01 00:00:00.020, 1, 1, 3, 3, 3, 3]",
        ]
    );
}

/// EXPLAIN of the other group windows, in Flink's text: a HOP is a
/// `SlidingGroupWindow` (size, then slide), a SESSION a
/// `SessionGroupWindow`, both insert-only without lateness; without group
/// keys the aggregate reads one subtask (`single`).
#[test]
fn group_window_explain() {
    let sql = std::fs::read_to_string(examples().join("group_window_late_fire.sql"))
        .unwrap()
        .split("INSERT INTO")
        .next()
        .unwrap()
        .to_string()
        + "CREATE TABLE o (str STRING, we TIMESTAMP(3), rt TIMESTAMP_LTZ(3), c BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO o SELECT str, HOP_END(rowtime, INTERVAL '0.005' SECOND, INTERVAL '0.01' SECOND),
  HOP_ROWTIME(rowtime, INTERVAL '0.005' SECOND, INTERVAL '0.01' SECOND), COUNT(*)
FROM T1 GROUP BY HOP(rowtime, INTERVAL '0.005' SECOND, INTERVAL '0.01' SECOND), str;
INSERT INTO o SELECT 'all', SESSION_END(rowtime, INTERVAL '0.003' SECOND),
  SESSION_ROWTIME(rowtime, INTERVAL '0.003' SECOND), COUNT(*)
FROM T1 WHERE num > 1 GROUP BY SESSION(rowtime, INTERVAL '0.003' SECOND);
";
    let overrides = [
        (
            "table.exec.emit.allow-lateness".to_string(),
            "0 ms".to_string(),
        ),
        (
            "table.exec.emit.late-fire.enabled".to_string(),
            "false".to_string(),
        ),
    ];
    let plan = optimizer::session::explain_script(&sql, &overrides).unwrap();
    for want in [
        "GroupWindowAggregate(groupBy=[str], window=[SlidingGroupWindow('w$, rowtime, 10, 5)], \
         properties=[w$start, w$end, w$rowtime, w$proctime], select=[str, COUNT(*) AS EXPR$3, \
         start('w$) AS w$start, end('w$) AS w$end, rowtime('w$) AS w$rowtime, proctime('w$) AS w$proctime], \
         changelogMode=[I])",
        "GroupWindowAggregate(window=[SessionGroupWindow('w$, rowtime, 3)], \
         properties=[w$start, w$end, w$rowtime, w$proctime], select=[COUNT(*) AS EXPR$3, \
         start('w$) AS w$start, end('w$) AS w$end, rowtime('w$) AS w$rowtime, proctime('w$) AS w$proctime], \
         changelogMode=[I])",
        "Exchange(distribution=[single]",
    ] {
        assert!(plan.contains(want), "want {want}\n{plan}");
    }
    assert!(!plan.contains("emit=["), "{plan}");
}

/// Nexmark q11 as Flink's repository writes it, with the legacy group
/// window (`GROUP BY B.bidder, SESSION(B.dateTime, ...)`, `SESSION_START`,
/// `SESSION_END`): the same rows as the lab's SESSION TVF form
/// (`examples/nexmark/q11.sql`), and the `GroupWindowAggregate` in
/// Flink's EXPLAIN text.
#[test]
fn nexmark_q11_as_a_group_window() {
    let tvf = std::fs::read_to_string(examples().join("nexmark/q11.sql")).unwrap();
    let at = tvf.find("INSERT INTO nexmark_q11").unwrap();
    let group_window = tvf[..at].to_string()
        + "INSERT INTO nexmark_q11
SELECT
    B.bidder,
    count(*) as bid_count,
    SESSION_START(B.`dateTime`, INTERVAL '10' SECOND) as starttime,
    SESSION_END(B.`dateTime`, INTERVAL '10' SECOND) as endtime
FROM bid B
GROUP BY B.bidder, SESSION(B.`dateTime`, INTERVAL '10' SECOND);
";
    let rows = |sql: &str| {
        let out = run_script(
            sql,
            &examples().join("nexmark"),
            &[],
            RunOptions::keep_all(),
            &mut |_, _| {},
        )
        .unwrap();
        optimizer::oracle::sorted(optimizer::oracle::final_table(&out[0].changelog))
    };
    let expected = rows(&tvf);
    assert!(expected.len() > 100);
    assert_eq!(rows(&group_window), expected);
    let plan = optimizer::session::explain_script(&group_window, &[]).unwrap();
    assert!(
        plan.contains(
            "GroupWindowAggregate(groupBy=[bidder], window=[SessionGroupWindow('w$, dateTime, 10000)], \
             properties=[w$start, w$end, w$rowtime, w$proctime], select=[bidder, COUNT(*) AS bid_count, \
             start('w$) AS w$start, end('w$) AS w$end, rowtime('w$) AS w$rowtime, proctime('w$) AS w$proctime])"
        ),
        "{plan}"
    );
}

/// Split distinct in a window aggregate, as Flink plans it: the distinct
/// call bucketed in a window aggregate over the TVF, summed in a
/// window-attached one above it (two-phase), both over TUMBLE's windows.
#[test]
fn window_split_distinct_explain() {
    let sql = "CREATE TABLE ev (k INT, u BIGINT, v BIGINT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH ('connector' = 'datagen');
CREATE TABLE o (k INT, ws TIMESTAMP(3), we TIMESTAMP(3), c BIGINT, du BIGINT, s BIGINT)
  WITH ('connector' = 'blackhole');
INSERT INTO o SELECT k, window_start, window_end, COUNT(*), COUNT(DISTINCT u), SUM(v)
FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY k, window_start, window_end;
";
    let overrides = [(
        "table.optimizer.distinct-agg.split.enabled".to_string(),
        "true".to_string(),
    )];
    let plan = optimizer::session::explain_script(sql, &overrides).unwrap();
    for want in [
        "GlobalWindowAggregate(groupBy=[k], window=[TUMBLE(win_end=[$window_end], size=[10 s])], \
         select=[k, SUM(sum$0) AS EXPR$3, SUM(sum$1) AS EXPR$4, SUM(sum$2) AS EXPR$5, \
         start('w$) AS window_start, end('w$) AS window_end])",
        "LocalWindowAggregate(groupBy=[k], window=[TUMBLE(win_start=[window_start], \
         win_end=[window_end], size=[10 s])], select=[k, SUM($f2) AS sum$0, SUM($f3) AS sum$1, \
         SUM($f4_0) AS sum$2, slice_end('w$) AS $window_end])",
        "WindowAggregate(groupBy=[k, $f4], window=[TUMBLE(time_col=[ts], size=[10 s])], \
         select=[k, $f4, COUNT(*) AS $f2, COUNT(DISTINCT u) AS $f3, SUM(v) AS $f4_0, \
         start('w$) AS window_start, end('w$) AS window_end])",
        "Calc(select=[k, u, v, ts, MOD(HASH_CODE(u), 1024) AS $f4])",
    ] {
        assert!(plan.contains(want), "want {want}\n{plan}");
    }
}
