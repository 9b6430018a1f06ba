//! Cascaded delta joins (Flink 2.2): a three-way join over indexed tables
//! into an upsert sink runs as two delta joins, the upper one looking the
//! lower one's tables up in a chain. Neither keeps join state, the result
//! is the regular join's and the batch oracle's, and a three-way join that
//! cannot cascade is refused by `FORCE` with the reason, or left regular by
//! `AUTO` with a note.

mod common;

use common::{run_mem, MemSources};
use operators::changelog::Change;
use operators::value::{cmp_rows, Row, Value};
use optimizer::logical::Statement;
use optimizer::oracle;
use optimizer::session::{explain_script, run_script, InsertOutcome, RunOptions};
use proptest::prelude::*;
use std::collections::HashMap;
use std::path::Path;

fn examples() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples"))
}

/// `examples/delta_join_cascaded.sql` without its `SET`, so that each test
/// chooses the strategy.
fn example() -> String {
    std::fs::read_to_string(examples().join("delta_join_cascaded.sql"))
        .unwrap()
        .replace("SET 'table.optimizer.delta-join.strategy' = 'FORCE';", "")
}

fn run(sql: &str, overrides: &[(&str, &str)]) -> Result<Vec<InsertOutcome>, String> {
    let o: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    run_script(sql, examples(), &o, RunOptions::keep_all(), &mut |_, _| {})
        .map_err(|e| e.to_string())
}

fn force() -> Vec<(String, String)> {
    vec![(
        "table.optimizer.delta-join.strategy".to_string(),
        "FORCE".to_string(),
    )]
}

#[test]
fn three_way_join_runs_as_two_delta_joins_without_join_state() {
    let sql = example();
    let plan = explain_script(&sql, &force()).unwrap();
    assert_eq!(plan.matches("DeltaJoin(").count(), 4, "{plan}");
    assert!(!plan.contains("+- Join("), "{plan}");
    assert!(plan.contains("leftToRight=[Binary]"), "{plan}");
    assert!(
        plan.contains(
            "rightToLeft=[[{round=[1], sourceTables=[default_catalog.default_database.nations], \
             lookupTable=[default_catalog.default_database.customers], lookupKeys=[nation_id=nation_id]}"
        ),
        "{plan}"
    );
    for backend in ["hashmap", "rocksdb"] {
        for p in ["1", "4"] {
            let o = |s| {
                [
                    ("table.optimizer.delta-join.strategy", s),
                    ("state.backend.type", backend),
                    ("parallelism.default", p),
                ]
            };
            let delta = run(&sql, &o("FORCE")).unwrap();
            let regular = run(&sql, &o("NONE")).unwrap();
            let result = delta[0].sink_report().result.clone().unwrap();
            assert!(result.len() > 100, "{backend} x{p}: {}", result.len());
            assert_eq!(
                Some(result),
                regular[0].sink_report().result,
                "{backend} x{p}"
            );
            let stages: Vec<_> = delta[0]
                .report
                .stages
                .iter()
                .filter(|s| s.name.starts_with("DeltaJoin"))
                .collect();
            assert_eq!(stages.len(), 2, "{backend} x{p}");
            for stage in stages {
                assert_eq!(stage.state_entries(), 0, "{}", stage.name);
                assert!(stage.states.is_empty(), "{}", stage.name);
                assert!(stage.counter("lookups") > 0, "{}", stage.name);
            }
            assert_eq!(delta[0].report.state_entries(), 0, "{backend} x{p}");
            assert!(regular[0].report.state_entries() > 0);
        }
    }
}

#[test]
fn a_three_way_join_that_cannot_cascade_is_refused_or_left_regular() {
    // Customers indexed by their own key: no table of the join below has
    // an index key that nations' rows can look up.
    let sql = example().replace(
        "'seed'                     = '2',\n  'index.key'                = 'nation_id'",
        "'seed'                     = '2',\n  'index.key'                = 'customer_id'",
    );
    assert_ne!(sql, example());
    let err = run(&sql, &[("table.optimizer.delta-join.strategy", "FORCE")])
        .err()
        .expect("FORCE refuses it");
    assert!(
        err.contains("FORCE")
            && err.contains("its rows reach a join that cannot be a delta join")
            && err.contains(
                "neither the index key of 'orders' nor that of 'customers' is covered by the \
                 join's equality condition"
            ),
        "{err}"
    );
    // AUTO leaves both joins regular (the lower one would feed a regular
    // join duplicates) and says why.
    let plan = explain_script(&sql, &[]).unwrap();
    assert!(!plan.contains("DeltaJoin("), "{plan}");
    assert!(
        plan.contains("note=[not a delta join: its rows reach a join that cannot be a delta join"),
        "{plan}"
    );
    let auto = run(&sql, &[]).unwrap();
    let regular = run(&sql, &[("table.optimizer.delta-join.strategy", "NONE")]).unwrap();
    assert_eq!(
        auto[0].sink_report().result,
        regular[0].sink_report().result
    );
}

#[test]
fn a_cascade_into_a_retract_sink_is_refused_by_name() {
    let sql = example().replace(
        ",\n  PRIMARY KEY (order_id, customer_id, nation_id) NOT ENFORCED",
        "",
    );
    assert_ne!(sql, example());
    let err = run(&sql, &[("table.optimizer.delta-join.strategy", "FORCE")])
        .err()
        .expect("FORCE refuses it");
    assert!(
        err.contains(
            "its rows reach a join that cannot be a delta join (the sink has no primary key"
        ),
        "{err}"
    );
}

/// Three tables joined on `k`, two of them upserts without deletes, with a
/// filter and projection on one input and a residual condition on each
/// join (reading only columns that do not change between versions).
const CASCADE_DDL: &str = "
CREATE TABLE ca (id INT, k INT, x INT, PRIMARY KEY (id) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = 'ca.csv', 'format' = 'csv', 'index.key' = 'k');
CREATE TABLE cb (k INT, bid INT, y INT, PRIMARY KEY (k, bid) NOT ENFORCED)
  WITH ('connector' = 'tenant', 'update-ratio' = '0.5', 'index.key' = 'k');
CREATE TABLE cc (k INT, cid INT, z INT, PRIMARY KEY (k, cid) NOT ENFORCED)
  WITH ('connector' = 'tenant', 'update-ratio' = '0.5', 'index.key' = 'k');
CREATE TABLE cout (id INT, k INT, bid INT, k2 INT, cid INT, x INT, y INT, z INT,
  PRIMARY KEY (id, k, bid, k2, cid) NOT ENFORCED) WITH ('connector' = 'blackhole');
INSERT INTO cout SELECT ca.id, cb.k, cb.bid, c.k, c.cid, ca.x, cb.y, c.z
FROM ca JOIN cb ON ca.k = cb.k AND ca.x <> cb.bid
JOIN (SELECT k, cid, z FROM cc WHERE cid < 3) AS c ON cb.k = c.k AND ca.id <> c.cid;
";

/// [`CASCADE_DDL`]'s tables, the lower join's rows passed through a Calc
/// (a computed column) before the upper join, whose residual reads the
/// computed column. The subquery's filter joins the lower join's condition
/// (pushed into the inner join, as Flink does).
const CASCADE_CALC_DDL: &str = "
CREATE TABLE ca (id INT, k INT, x INT, PRIMARY KEY (id) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = 'ca.csv', 'format' = 'csv', 'index.key' = 'k');
CREATE TABLE cb (k INT, bid INT, y INT, PRIMARY KEY (k, bid) NOT ENFORCED)
  WITH ('connector' = 'tenant', 'update-ratio' = '0.5', 'index.key' = 'k');
CREATE TABLE cc (k INT, cid INT, z INT, PRIMARY KEY (k, cid) NOT ENFORCED)
  WITH ('connector' = 'tenant', 'update-ratio' = '0.5', 'index.key' = 'k');
CREATE TABLE cout2 (id INT, k INT, bid INT, k2 INT, cid INT, xb INT, z INT,
  PRIMARY KEY (id, k, bid, k2, cid) NOT ENFORCED) WITH ('connector' = 'blackhole');
INSERT INTO cout2 SELECT ab.id, ab.k, ab.bid, c.k, c.cid, ab.xb, c.z
FROM (SELECT ca.id, cb.k, cb.bid, ca.x + cb.bid AS xb FROM ca JOIN cb ON ca.k = cb.k
      WHERE ca.x + cb.bid > 1) AS ab
JOIN cc AS c ON ab.k = c.k AND ab.xb <> c.cid;
";

/// A bushy cascade (Flink's `testBushy1` shape): two two-way delta joins
/// joined by a third, each side's records looking the other side's two
/// tables up in a chain.
const BUSHY_DDL: &str = "
CREATE TABLE ca (id INT, k INT, x INT, PRIMARY KEY (id) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = 'ca.csv', 'format' = 'csv', 'index.key' = 'k');
CREATE TABLE cb (k INT, bid INT, y INT, PRIMARY KEY (k, bid) NOT ENFORCED)
  WITH ('connector' = 'tenant', 'update-ratio' = '0.5', 'index.key' = 'k');
CREATE TABLE cc (k INT, cid INT, z INT, PRIMARY KEY (k, cid) NOT ENFORCED)
  WITH ('connector' = 'tenant', 'update-ratio' = '0.5', 'index.key' = 'k');
CREATE TABLE cd (k INT, did INT, w INT, PRIMARY KEY (k, did) NOT ENFORCED)
  WITH ('connector' = 'tenant', 'update-ratio' = '0.5', 'index.key' = 'k');
CREATE TABLE bout (id INT, k INT, bid INT, ck INT, cid INT, dk INT, did INT, y INT, w INT,
  PRIMARY KEY (id, k, bid, ck, cid, dk, did) NOT ENFORCED) WITH ('connector' = 'blackhole');
INSERT INTO bout SELECT ca.id, cb.k, cb.bid, cdj.ck, cdj.cid, cdj.dk, cdj.did, cb.y, cdj.w
FROM ca JOIN cb ON ca.k = cb.k
JOIN (SELECT cc.k AS ck, cc.cid, cd.k AS dk, cd.did, cd.w FROM cc JOIN cd ON cc.k = cd.k
      WHERE cc.cid <> cd.did) AS cdj
ON cb.k = cdj.ck AND ca.id <> cdj.did;
";

fn small(lo: i64, hi: i64) -> impl Strategy<Value = Value> + Clone {
    prop_oneof![1 => Just(Value::Null), 10 => (lo..hi).prop_map(Value::Int)]
}

/// Upserts without deletes: the first version of a key is an insert,
/// later ones `-U` old / `+U` new.
fn upserts(rows: Vec<(i64, i64, Value)>) -> Vec<Change> {
    let mut live: HashMap<(i64, i64), Row> = HashMap::new();
    let mut out = Vec::new();
    for (k, id, v) in rows {
        let new = vec![Value::Int(k), Value::Int(id), v];
        match live.insert((k, id), new.clone()) {
            Some(old) => {
                out.push(Change::update_before(old));
                out.push(Change::update_after(new));
            }
            None => out.push(Change::insert(new)),
        }
    }
    out
}

fn cascade_inputs() -> impl Strategy<Value = MemSources> {
    (
        prop::collection::vec((small(0, 4), small(0, 4)), 0..16),
        prop::collection::vec((0..4i64, 0..3i64, small(0, 9)), 0..16),
        prop::collection::vec((0..4i64, 0..4i64, small(0, 9)), 0..16),
        prop::collection::vec((0..4i64, 0..4i64, small(0, 9)), 0..12),
    )
        .prop_map(|(a, b, c, d)| {
            let a = a
                .into_iter()
                .enumerate()
                .map(|(i, (k, x))| Change::insert(vec![Value::Int(i as i64), k, x]))
                .collect();
            MemSources(HashMap::from([
                ("ca".to_string(), a),
                ("cb".to_string(), upserts(b)),
                ("cc".to_string(), upserts(c)),
                ("cd".to_string(), upserts(d)),
            ]))
        })
}

fn sorted(mut rows: Vec<Row>) -> Vec<Row> {
    rows.sort_by(|x, y| cmp_rows(x, y));
    rows
}

/// The sink's rows equal the oracle's over the final tables.
fn check(
    sql: &str,
    sources: &MemSources,
    overrides: &[(&str, String)],
) -> Result<(), TestCaseError> {
    let (script, outcomes) = run_mem(sql, sources, overrides, RunOptions::keep_all())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let Some(Statement::Insert(insert)) = script.statements.last() else {
        panic!("the script ends with its INSERT");
    };
    let tables: HashMap<String, Vec<Row>> = sources
        .0
        .iter()
        .map(|(k, v)| (k.clone(), oracle::final_table(v)))
        .collect();
    let expected = sorted(oracle::evaluate(&insert.query, &|t: &str| {
        tables.get(t).cloned().unwrap_or_default()
    }));
    let report = outcomes[0].sink_report();
    prop_assert!(report.negative_rows.is_empty(), "{overrides:?}");
    prop_assert_eq!(
        report.result.clone().map(sorted),
        Some(expected),
        "{:?}",
        overrides
    );
    Ok(())
}

#[test]
fn a_cascade_keyed_on_a_changing_column_is_refused_by_name() {
    let sql = CASCADE_DDL.replace("ON cb.k = c.k AND", "ON cb.y = c.k AND");
    assert_ne!(sql, CASCADE_DDL);
    let err = explain_script(&sql, &force()).unwrap_err().to_string();
    assert!(
        err.contains(
            "the left input is a join, and this join's key on it is not part of the primary \
             keys of its updating tables"
        ),
        "{err}"
    );
}

#[test]
fn the_random_cascades_plan_as_two_delta_joins() {
    let plan = explain_script(CASCADE_DDL, &force()).unwrap();
    assert_eq!(plan.matches("DeltaJoin(").count(), 4, "{plan}");
    let plan = explain_script(BUSHY_DDL, &force()).unwrap();
    assert_eq!(plan.matches("DeltaJoin(").count(), 6, "{plan}");
    assert!(
        plan.contains(
            "leftToRight=[[{round=[1], sourceTables=[default_catalog.default_database.cb], \
             lookupTable=[default_catalog.default_database.cc], lookupKeys=[k=k0]}, {round=[2], \
             sourceTables=[default_catalog.default_database.cc], \
             lookupTable=[default_catalog.default_database.cd], lookupKeys=[k=k], \
             remaining=[(cid <> did)]}]]"
        ),
        "{plan}"
    );
    let plan = explain_script(CASCADE_CALC_DDL, &force()).unwrap();
    assert_eq!(plan.matches("DeltaJoin(").count(), 4, "{plan}");
    assert!(
        plan.contains("+- Calc(select=[id, k0 AS k, bid, (x + bid) AS xb])"),
        "{plan}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn cascaded_delta_join_matches_the_oracle(
        sources in cascade_inputs(),
        batch in prop_oneof![Just(1usize), Just(3), Just(1024)],
    ) {
        for strategy in ["FORCE", "NONE"] {
            for (cache, read_ahead) in [("false", "0"), ("true", "2"), ("true", "0")] {
                for backend in ["hashmap", "rocksdb"] {
                    for p in ["1", "4"] {
                        let o: Vec<(&str, String)> = vec![
                            ("table.optimizer.delta-join.strategy", strategy.to_string()),
                            ("table.exec.delta-join.cache-enabled", cache.to_string()),
                            ("table.exec.delta-join.left.cache-size", "2".to_string()),
                            ("lab.delta-join.source-read-ahead", read_ahead.to_string()),
                            ("state.backend.type", backend.to_string()),
                            ("parallelism.default", p.to_string()),
                            ("lab.source.batch-size", batch.to_string()),
                        ];
                        check(CASCADE_DDL, &sources, &o)?;
                    }
                }
            }
        }
    }

    #[test]
    fn cascades_through_a_calc_and_bushy_ones_match_the_oracle(
        sources in cascade_inputs(),
        batch in prop_oneof![Just(1usize), Just(1024)],
    ) {
        for strategy in ["FORCE", "NONE"] {
            for backend in ["hashmap", "rocksdb"] {
                for p in ["1", "4"] {
                    let o: Vec<(&str, String)> = vec![
                        ("table.optimizer.delta-join.strategy", strategy.to_string()),
                        ("table.exec.delta-join.right.cache-size", "1".to_string()),
                        ("lab.delta-join.source-read-ahead", "2".to_string()),
                        ("state.backend.type", backend.to_string()),
                        ("parallelism.default", p.to_string()),
                        ("lab.source.batch-size", batch.to_string()),
                    ];
                    check(CASCADE_CALC_DDL, &sources, &o)?;
                    check(BUSHY_DDL, &sources, &o)?;
                }
            }
        }
    }
}

/// Flink's `CascadedDeltaJoinITCase.testConsecutiveOneToManyJoins`: each
/// row of A matches two of B, each of those two of C; the rows of C look
/// B up, then A.
const FLINK_ONE_TO_MANY: &str = "
CREATE TABLE A (a0 DOUBLE, a1 INT, a2 STRING, PRIMARY KEY (a0) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = 'A.csv', 'format' = 'csv', 'index.key' = 'a1');
CREATE TABLE B (b0 DOUBLE, b1 INT, b2 STRING, PRIMARY KEY (b0) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = 'B.csv', 'format' = 'csv', 'index.key' = 'b1');
CREATE TABLE C (c0 DOUBLE, c1 INT, c2 STRING, PRIMARY KEY (c0) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = 'C.csv', 'format' = 'csv', 'index.key' = 'c1');
CREATE TABLE tmp_sink (a0 DOUBLE, b0 DOUBLE, c0 DOUBLE, abc2 STRING,
  PRIMARY KEY (a0, b0, c0) NOT ENFORCED) WITH ('connector' = 'blackhole');
INSERT INTO tmp_sink
SELECT a0, b0, c0, a2 || '~' || b2 || '~' || c2 AS abc2
FROM A JOIN B ON a1 = b1 JOIN C ON c1 = b1;
";

#[test]
fn flink_consecutive_one_to_many_joins() {
    let table = |p: &str, rows: &[(f64, i64)]| -> Vec<Change> {
        rows.iter()
            .map(|&(id, k)| {
                let name = format!("{p}-{}", id as i64);
                Change::insert(vec![Value::Double(id), Value::Int(k), Value::str(&name)])
            })
            .collect()
    };
    let sources = MemSources(HashMap::from([
        ("A".to_string(), table("a", &[(1.0, 1), (2.0, 2)])),
        (
            "B".to_string(),
            table("b", &[(1.0, 1), (11.0, 1), (2.0, 2), (22.0, 2)]),
        ),
        (
            "C".to_string(),
            table("c", &[(1.0, 1), (11.0, 1), (2.0, 2), (22.0, 2)]),
        ),
    ]));
    let plan = explain_script(FLINK_ONE_TO_MANY, &force()).unwrap();
    assert_eq!(plan.matches("DeltaJoin(").count(), 4, "{plan}");
    let mut expected = Vec::new();
    for (a, b, c) in [
        (1.0, 1.0, 1.0),
        (1.0, 1.0, 11.0),
        (1.0, 11.0, 1.0),
        (1.0, 11.0, 11.0),
        (2.0, 2.0, 2.0),
        (2.0, 2.0, 22.0),
        (2.0, 22.0, 2.0),
        (2.0, 22.0, 22.0),
    ] {
        let abc = format!("a-{}~b-{}~c-{}", a as i64, b as i64, c as i64);
        expected.push(vec![
            Value::Double(a),
            Value::Double(b),
            Value::Double(c),
            Value::str(&abc),
        ]);
    }
    for p in ["1", "4"] {
        for cache in ["true", "false"] {
            let o = [
                ("table.optimizer.delta-join.strategy", "FORCE".to_string()),
                ("table.exec.delta-join.cache-enabled", cache.to_string()),
                ("parallelism.default", p.to_string()),
                ("lab.source.batch-size", "1".to_string()),
            ];
            let (_, out) =
                run_mem(FLINK_ONE_TO_MANY, &sources, &o, RunOptions::keep_all()).unwrap();
            let result = out[0].sink_report().result.clone().unwrap();
            assert_eq!(
                sorted(result),
                sorted(expected.clone()),
                "x{p} cache {cache}"
            );
        }
    }
}
