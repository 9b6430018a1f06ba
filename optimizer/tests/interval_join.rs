//! The interval join (`IntervalJoin`): Flink's `IntervalJoinITCase` rowtime
//! inner joins (`examples/interval_join.sql` and the case with other
//! conditions and strict bounds), and the join against the batch oracle
//! over out-of-order input on both state backends at parallelism 1 and 4.
//! The oracle computes the plain join with the time condition; the inputs
//! are out of order by less than the watermark delay, so no row reaches
//! the join behind its watermark and none can miss a pair. State is empty
//! after the final watermark.

mod common;

use common::{run_mem, MemSources};
use operators::changelog::{Change, RowKind};
use operators::value::{cmp_rows, Row, Value};
use optimizer::logical::Statement;
use optimizer::oracle;
use optimizer::session::{explain_script, run_script, InsertOutcome, RunOptions};
use proptest::prelude::*;
use std::path::Path;

fn examples() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples"))
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

fn sorted(mut rows: Vec<Row>) -> Vec<Row> {
    rows.sort_by(|x, y| cmp_rows(x, y));
    rows
}

fn strings(rows: &[Row]) -> Vec<String> {
    let mut v: Vec<String> = rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    v.sort();
    v
}

#[test]
fn rowtime_inner_join_of_flinks_itcase() {
    let sql = std::fs::read_to_string(examples().join("interval_join.sql")).unwrap();
    for p in ["1", "4"] {
        for backend in ["hashmap", "rocksdb"] {
            let overrides = [
                ("parallelism.default".to_string(), p.to_string()),
                ("state.backend.type".to_string(), backend.to_string()),
            ];
            let out = run_script(
                &sql,
                examples(),
                &overrides,
                RunOptions::keep_all(),
                &mut |_, _| {},
            )
            .unwrap();
            let report = out[0].sink_report();
            assert_eq!(report.counts.total(), report.counts.get(RowKind::Insert));
            assert_eq!(
                strings(report.result.as_ref().unwrap()),
                [
                    "A,RIGHT6,LEFT1",
                    "A,RIGHT6,LEFT2",
                    "A,RIGHT6,LEFT3",
                    "A,RIGHT6,LEFT5",
                    "A,RIGHT6,LEFT6",
                    "B,RIGHT7,LEFT4",
                ],
                "{backend} p{p}"
            );
            assert_state_empty(&out);
        }
    }
}

#[test]
fn explain_names_flinks_interval_join() {
    let sql = std::fs::read_to_string(examples().join("interval_join.sql")).unwrap();
    let plan = explain_script(&sql, &[]).unwrap();
    assert!(
        plan.contains(
            "IntervalJoin(joinType=[InnerJoin], windowBounds=[isRowTime=true, leftLowerBound=-5000, \
             leftUpperBound=6000, leftTimeIndex=2, rightTimeIndex=2]"
        ),
        "{plan}"
    );
}

/// `testRowTimeInnerJoinWithOtherConditions`: strict bounds (one
/// millisecond tighter) and conditions on other columns.
const OTHER_CONDITIONS: &str = "
CREATE TABLE T1 (a INT, b BIGINT, c STRING, rowtime TIMESTAMP(3),
  WATERMARK FOR rowtime AS rowtime - INTERVAL '0.5' SECOND) WITH ('connector' = 'datagen');
CREATE TABLE T2 (a INT, b BIGINT, c STRING, rowtime TIMESTAMP(3),
  WATERMARK FOR rowtime AS rowtime - INTERVAL '0.5' SECOND) WITH ('connector' = 'datagen');
CREATE TABLE out1 (a INT, c1 STRING, c2 STRING) WITH ('connector' = 'blackhole');
INSERT INTO out1
SELECT t2.a, t1.c, t2.c
FROM T1 AS t1 JOIN T2 AS t2 ON
  t1.a = t2.a AND
  t1.rowtime > t2.rowtime - INTERVAL '5' SECOND AND
    t1.rowtime < t2.rowtime - INTERVAL '1' SECOND AND
  t1.b < t2.b AND
  t1.b > 2;
";

fn rows4(data: &[(i64, i64, &str, i64)]) -> Vec<Change> {
    data.iter()
        .map(|&(a, b, c, t)| {
            Change::insert(vec![
                Value::Int(a),
                Value::Int(b),
                Value::str(c),
                Value::Ts(t),
            ])
        })
        .collect()
}

#[test]
fn rowtime_inner_join_with_other_conditions() {
    let plan = explain_script(OTHER_CONDITIONS, &[]).unwrap();
    assert!(
        plan.contains("leftLowerBound=-4999, leftUpperBound=-1001"),
        "{plan}"
    );
    let mut sources = MemSources::default();
    sources.0.insert(
        "T1".into(),
        rows4(&[
            (1, 4, "LEFT1", 1000),
            (1, 8, "LEFT1.1", 1001),
            (1, 2, "LEFT2", 2000),
            (1, 7, "LEFT3", 3000),
            (2, 5, "LEFT4", 4000),
            (1, 4, "LEFT4.9", 4999),
            (1, 4, "LEFT5", 5000),
            (1, 10, "LEFT6", 6000),
        ]),
    );
    sources.0.insert(
        "T2".into(),
        rows4(&[
            (1, 1, "RIGHT1", 1000),
            (1, 9, "RIGHT6", 6000),
            (2, 14, "RIGHT7", 7000),
            (1, 4, "RIGHT8", 8000),
        ]),
    );
    for p in ["1", "4"] {
        for backend in ["hashmap", "rocksdb"] {
            let (_, out) = run_mem(
                OTHER_CONDITIONS,
                &sources,
                &[
                    ("parallelism.default", p.to_string()),
                    ("state.backend.type", backend.to_string()),
                    ("lab.source.batch-size", "1".to_string()),
                ],
                RunOptions::keep_all(),
            )
            .unwrap();
            assert_eq!(
                strings(out[0].sink_report().result.as_ref().unwrap()),
                [
                    "1,LEFT1.1,RIGHT6",
                    "1,LEFT3,RIGHT6",
                    "1,LEFT4.9,RIGHT6",
                    "2,LEFT4,RIGHT7"
                ],
                "{backend} p{p}"
            );
            assert_state_empty(&out);
        }
    }
}

const SCRIPT: &str = "
CREATE TABLE a (k INT, v BIGINT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '3' SECOND) WITH ('connector' = 'datagen');
CREATE TABLE b (k INT, v BIGINT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '3' SECOND) WITH ('connector' = 'datagen');
CREATE TABLE between_out (k INT, av BIGINT, ats TIMESTAMP(3), bv BIGINT, bts TIMESTAMP(3))
  WITH ('connector' = 'blackhole');
CREATE TABLE strict_out (av BIGINT, bv BIGINT, bts TIMESTAMP(3))
  WITH ('connector' = 'blackhole');
INSERT INTO between_out
SELECT a.k, a.v, a.ts, b.v, b.ts FROM a JOIN b ON
  a.k = b.k AND a.ts BETWEEN b.ts - INTERVAL '2' SECOND AND b.ts + INTERVAL '1' SECOND;
INSERT INTO strict_out
SELECT a.v, b.v, b.ts FROM a JOIN b ON
  b.k = a.k AND b.ts > a.ts - INTERVAL '1.5' SECOND AND a.ts + INTERVAL '0.5' SECOND >= b.ts
  AND a.v <> b.v;
";

/// Times that drift forward and jump back by less than the 3 s watermark
/// delay: out of order, never behind the watermark.
fn side() -> impl Strategy<Value = Vec<Change>> {
    prop::collection::vec(
        (
            0i64..3,
            prop::option::weighted(0.9, 0i64..20),
            0i64..800,
            prop::option::of(0i64..2900),
        ),
        0..40,
    )
    .prop_map(|rows| {
        let mut t = 1_700_000_000_000i64;
        rows.into_iter()
            .map(|(k, v, step, back)| {
                t += step;
                Change::insert(vec![
                    Value::Int(k),
                    v.map_or(Value::Null, Value::Int),
                    Value::Ts(t - back.unwrap_or(0)),
                ])
            })
            .collect()
    })
}

fn check(sources: &MemSources, overrides: &[(&str, String)]) -> Result<(), TestCaseError> {
    let (script, outcomes) = run_mem(SCRIPT, sources, overrides, RunOptions::keep_all())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let inserts: Vec<_> = script
        .statements
        .iter()
        .filter_map(|s| match s {
            Statement::Insert(i) => Some(i),
            _ => None,
        })
        .collect();
    for (insert, outcome) in inserts.iter().zip(&outcomes) {
        let expected = sorted(oracle::evaluate(&insert.query, &|t| {
            sources.0[t].iter().map(|c| c.row.clone()).collect()
        }));
        let report = outcome.sink_report();
        prop_assert_eq!(report.counts.total(), report.counts.get(RowKind::Insert));
        prop_assert_eq!(
            report.result.as_ref().unwrap(),
            &expected,
            "{} differs from the oracle with {:?}",
            insert.sink,
            overrides
        );
        for stage in &outcome.report.stages {
            for s in &stage.states {
                prop_assert_eq!(s.metrics.entries, 0, "{} {}", stage.name, s.name);
            }
        }
    }
    Ok(())
}

#[test]
fn both_queries_plan_as_interval_joins() {
    let plan = explain_script(SCRIPT, &[]).unwrap();
    assert!(
        plan.contains("leftLowerBound=-2000, leftUpperBound=1000"),
        "{plan}"
    );
    assert!(
        plan.contains("leftLowerBound=-500, leftUpperBound=1499"),
        "{plan}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn interval_joins_match_the_oracle(
        left in side(),
        right in side(),
        batch in prop_oneof![Just(1usize), Just(3), Just(1024)],
        interval in prop_oneof![Just(0u64), Just(4)],
    ) {
        let mut sources = MemSources::default();
        sources.0.insert("a".into(), left);
        sources.0.insert("b".into(), right);
        for backend in ["hashmap", "rocksdb"] {
            for p in [1usize, 4] {
                check(&sources, &[
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

/// Without a bound on both sides, over columns that are not rowtime
/// attributes, or as an outer join, the join stays a regular join (which
/// computes the same rows, keeping its inputs).
#[test]
fn other_time_conditions_stay_regular_joins() {
    let tables = "
CREATE TABLE a (k INT, v BIGINT, ts TIMESTAMP(3), t2 TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '3' SECOND) WITH ('connector' = 'datagen');
CREATE TABLE b (k INT, v BIGINT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '3' SECOND) WITH ('connector' = 'datagen');
CREATE TABLE o (k INT, v BIGINT) WITH ('connector' = 'blackhole');
";
    for on in [
        "LEFT JOIN b ON a.k = b.k AND a.ts BETWEEN b.ts - INTERVAL '1' SECOND AND b.ts",
        "JOIN b ON a.k = b.k AND a.ts >= b.ts - INTERVAL '1' SECOND",
        "JOIN b ON a.k = b.k AND a.t2 BETWEEN b.ts - INTERVAL '1' SECOND AND b.ts",
    ] {
        let sql = format!("{tables}INSERT INTO o SELECT a.k, b.v FROM a {on};");
        let plan = explain_script(&sql, &[]).unwrap();
        assert!(!plan.contains("IntervalJoin"), "{on}: {plan}");
        assert!(plan.contains("Join(joinType="), "{on}: {plan}");
    }
}
