//! What the join strategies keep and cost, on the shipped examples and
//! small fixed scripts: MultiJoin keeps no intermediate state, the binary
//! chain does; MultiJoin's recomputation cost shows in rows visited; the
//! delta join keeps no join state; and bad hints and impossible strategies
//! are refused or explained.

use optimizer::physical::node::JoinRole;
use optimizer::session::{explain_script, run_script, InsertOutcome, RunOptions};
use std::path::Path;

fn examples() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples"))
}

fn run_example(file: &str, overrides: &[(&str, &str)]) -> Vec<InsertOutcome> {
    let sql = std::fs::read_to_string(examples().join(file)).unwrap();
    let o: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let opts = RunOptions {
        keep_changelog: false,
        materialize: true,
        ..Default::default()
    };
    run_script(&sql, examples(), &o, opts, &mut |_, _| {}).unwrap()
}

/// (input state bytes, intermediate state bytes) of the join stages.
fn join_state(o: &InsertOutcome) -> (i64, i64) {
    let (mut inputs, mut intermediate) = (0, 0);
    for (node, stage) in o.plan.root.stage_nodes().iter().zip(&o.report.stages) {
        if node.spec().join_role() == Some(JoinRole::KeepsInputs) {
            for (i, s) in stage.states.iter().enumerate() {
                if node.inputs[i].is_join_result() {
                    intermediate += s.metrics.logical_bytes;
                } else {
                    inputs += s.metrics.logical_bytes;
                }
            }
        }
    }
    (inputs, intermediate)
}

#[test]
fn multi_join_keeps_only_the_inputs_of_the_ten_way_join() {
    let binary = run_example("tenant_multijoin_10way.sql", &[]);
    let multi = run_example(
        "tenant_multijoin_10way.sql",
        &[("table.optimizer.multi-join.enabled", "true")],
    );
    assert_eq!(
        binary[0].sink_report().result,
        multi[0].sink_report().result
    );
    let (b_in, b_mid) = join_state(&binary[0]);
    let (m_in, m_mid) = join_state(&multi[0]);
    assert!(
        b_mid > b_in,
        "most of the chain's state is intermediate: {b_in} vs {b_mid}"
    );
    assert_eq!(m_mid, 0);
    assert!(m_in < b_in + b_mid);
    let stages: Vec<&str> = multi[0]
        .report
        .stages
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert!(
        stages.iter().any(|s| s.starts_with("MultiJoin")),
        "{stages:?}"
    );
    assert!(
        !stages.iter().any(|s| s.starts_with("Join(")),
        "one MultiJoin replaces the chain: {stages:?}"
    );
}

#[test]
fn multi_join_walks_many_rows_when_keys_are_not_selective() {
    let binary = run_example("tenant_multijoin_selective.sql", &[]);
    let multi = run_example(
        "tenant_multijoin_selective.sql",
        &[("table.optimizer.multi-join.enabled", "true")],
    );
    assert_eq!(
        binary[0].sink_report().result,
        multi[0].sink_report().result
    );
    let visited = |o: &InsertOutcome| -> f64 {
        let v: u64 = o
            .report
            .stages
            .iter()
            .map(|s| s.counter("rows_visited"))
            .sum();
        v as f64 / o.report.input_rows as f64
    };
    assert!(
        visited(&multi[0]) > 50.0 * visited(&binary[0]),
        "{} vs {}",
        visited(&multi[0]),
        visited(&binary[0])
    );
}

const DELTA: &str = "
CREATE TABLE l (id BIGINT, k INT, v INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'datagen',
  'number-of-rows' = '400', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '400',
  'fields.k.min' = '1', 'fields.k.max' = '50', 'index.key' = 'k');
CREATE TABLE r (rid BIGINT, k INT, w INT, PRIMARY KEY (rid) NOT ENFORCED) WITH ('connector' = 'datagen',
  'number-of-rows' = '100', 'fields.rid.kind' = 'sequence', 'fields.rid.start' = '1', 'fields.rid.end' = '100',
  'fields.k.min' = '1', 'fields.k.max' = '50', 'index.key' = 'k');
CREATE TABLE out (id BIGINT, rid BIGINT, v INT, w INT, PRIMARY KEY (id, rid) NOT ENFORCED) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT l.id, r.rid, l.v, r.w FROM l JOIN r ON l.k = r.k;
";

fn run_err(sql: &str, overrides: &[(&str, &str)]) -> String {
    match run_sql(sql, overrides) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

fn run_sql(sql: &str, overrides: &[(&str, &str)]) -> Result<Vec<InsertOutcome>, String> {
    let o: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    run_script(
        sql,
        Path::new("."),
        &o,
        RunOptions::keep_all(),
        &mut |_, _| {},
    )
    .map_err(|e| e.to_string())
}

#[test]
fn delta_join_keeps_no_join_state_and_reports_lookups() {
    let delta = run_sql(DELTA, &[("table.optimizer.delta-join.strategy", "FORCE")]).unwrap();
    let regular = run_sql(DELTA, &[("table.optimizer.delta-join.strategy", "NONE")]).unwrap();
    assert_eq!(
        delta[0].sink_report().result,
        regular[0].sink_report().result
    );
    let stage = delta[0]
        .report
        .stages
        .iter()
        .find(|s| s.name.starts_with("DeltaJoin"))
        .unwrap();
    assert_eq!(stage.state_entries(), 0);
    assert!(stage.states.is_empty());
    assert!(stage.counter("lookups") > 0);
    assert!(stage.counter("left_cache_hits") + stage.counter("right_cache_hits") > 0);
    assert!(regular[0].report.state_entries() > 0);
}

/// Flink 2.2's delta join over a filter and projection between each source
/// and the join: the stream side reads through them, and the lookups apply
/// them to the rows they find.
const DELTA_CALC: &str = "
CREATE TABLE l (id BIGINT, k INT, v INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'datagen',
  'number-of-rows' = '400', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '400',
  'fields.k.min' = '1', 'fields.k.max' = '50', 'fields.v.min' = '0', 'fields.v.max' = '9', 'index.key' = 'k');
CREATE TABLE r (rid BIGINT, k INT, w INT, PRIMARY KEY (rid) NOT ENFORCED) WITH ('connector' = 'datagen',
  'number-of-rows' = '100', 'fields.rid.kind' = 'sequence', 'fields.rid.start' = '1', 'fields.rid.end' = '100',
  'fields.k.min' = '1', 'fields.k.max' = '50', 'fields.w.min' = '0', 'fields.w.max' = '9', 'index.key' = 'k');
CREATE TABLE out (id BIGINT, rid BIGINT, v2 INT, w INT, PRIMARY KEY (id, rid) NOT ENFORCED) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT l.id, r.rid, l.v2, r.w
FROM (SELECT k, id, v * 2 AS v2 FROM l WHERE v > 2) AS l
JOIN (SELECT rid, w, k FROM r WHERE w < 7) AS r ON l.k = r.k;
";

#[test]
fn delta_join_over_filtered_projected_inputs_keeps_no_join_state() {
    let plan = explain_script(
        DELTA_CALC,
        &[(
            "table.optimizer.delta-join.strategy".to_string(),
            "FORCE".to_string(),
        )],
    )
    .unwrap();
    assert!(plan.contains("DeltaJoin(joinType=[InnerJoin]"), "{plan}");
    assert!(plan.contains("where=[>(v, 2)]"), "{plan}");
    for backend in ["hashmap", "rocksdb"] {
        for p in ["1", "4"] {
            let o = |s| {
                [
                    ("table.optimizer.delta-join.strategy", s),
                    ("state.backend.type", backend),
                    ("parallelism.default", p),
                ]
            };
            let delta = run_sql(DELTA_CALC, &o("FORCE")).unwrap();
            let regular = run_sql(DELTA_CALC, &o("NONE")).unwrap();
            let result = delta[0].sink_report().result.clone().unwrap();
            assert!(!result.is_empty());
            assert_eq!(
                Some(result),
                regular[0].sink_report().result,
                "{backend} x{p}"
            );
            let stage = delta[0]
                .report
                .stages
                .iter()
                .find(|s| s.name.starts_with("DeltaJoin"))
                .unwrap();
            assert_eq!(stage.state_entries(), 0);
            assert!(stage.states.is_empty());
            assert!(stage.counter("lookups") > 0);
            assert!(regular[0].report.state_entries() > 0);
        }
    }
}

#[test]
fn force_names_the_failed_precondition() {
    let retract_sink = DELTA.replace(", PRIMARY KEY (id, rid) NOT ENFORCED", "");
    let err = run_err(
        &retract_sink,
        &[("table.optimizer.delta-join.strategy", "FORCE")],
    );
    assert!(
        err.contains("FORCE") && err.contains("upsert sink"),
        "{err}"
    );
    let left = DELTA.replace("FROM l JOIN r", "FROM l LEFT JOIN r");
    let err = run_err(&left, &[("table.optimizer.delta-join.strategy", "FORCE")]);
    assert!(err.contains("INNER"), "{err}");
    let unindexed = DELTA.replace(
        ", 'index.key' = 'k');\nCREATE TABLE r",
        ");\nCREATE TABLE r",
    );
    let err = run_err(
        &unindexed,
        &[("table.optimizer.delta-join.strategy", "FORCE")],
    );
    assert!(err.contains("index.key"), "{err}");
    // AUTO falls back to a regular join and says why.
    let plan = explain_script(&retract_sink, &[]).unwrap();
    assert!(
        plan.contains("not a delta join: the sink has no primary key"),
        "{plan}"
    );
}

const THREE: &str = "
CREATE TABLE a (k INT, x INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE b (k INT, y INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE c (k INT, z INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE out (x INT, y INT, z INT) WITH ('connector' = 'blackhole');
";

#[test]
fn multi_join_hints_fuse_named_inputs_or_explain_why_not() {
    let hinted = format!("{THREE}INSERT INTO out SELECT /*+ MULTI_JOIN(a, b, c) */ a.x, b.y, c.z FROM a JOIN b ON a.k = b.k JOIN c ON b.k = c.k;");
    let plan = explain_script(&hinted, &[]).unwrap();
    assert!(
        plan.contains("MultiJoin(commonJoinKey=[k]") && plan.contains("MULTI_JOIN(a, b, c) hint"),
        "{plan}"
    );

    let no_common_key = format!("{THREE}INSERT INTO out SELECT /*+ MULTI_JOIN(a, b, c) */ a.x, b.y, c.z FROM a JOIN b ON a.k = b.k JOIN c ON b.y = c.z;");
    let plan = explain_script(&no_common_key, &[]).unwrap();
    assert!(!plan.contains("MultiJoin("), "{plan}");
    assert!(
        plan.contains("note=[MultiJoin needs at least three inputs linked by one common key"),
        "{plan}"
    );

    let unknown = format!("{THREE}INSERT INTO out SELECT /*+ MULTI_JOIN(a, b, nope) */ a.x, b.y, c.z FROM a JOIN b ON a.k = b.k JOIN c ON b.k = c.k;");
    let err = explain_script(&unknown, &[]).unwrap_err().to_string();
    assert!(err.contains("nope"), "{err}");
}

#[test]
fn full_and_right_joins_explain_flinks_join_type_and_stay_out_of_multi_join() {
    let full = format!("{THREE}INSERT INTO out SELECT a.x, b.y, c.z FROM a JOIN b ON a.k = b.k FULL OUTER JOIN c ON b.k = c.k;");
    let plan = explain_script(&full, &[]).unwrap();
    assert!(plan.contains("joinType=[FullOuterJoin]"), "{plan}");
    assert!(plan.contains("joinType=[full]"), "{plan}");
    // MultiJoin (by config or hint) takes INNER and LEFT joins only, as Flink's.
    for overrides in [&[("table.optimizer.multi-join.enabled", "true")][..], &[]] {
        let sql = if overrides.is_empty() {
            full.replace("SELECT a.x", "SELECT /*+ MULTI_JOIN(a, b, c) */ a.x")
        } else {
            full.clone()
        };
        let o: Vec<(String, String)> = overrides
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let plan = explain_script(&sql, &o).unwrap();
        assert!(!plan.contains("MultiJoin("), "{plan}");
        assert!(
            plan.contains(
                "note=[MultiJoin supports INNER and LEFT joins only; this FULL OUTER JOIN stays binary]"
            ),
            "{plan}"
        );
    }
    let right = format!("{THREE}INSERT INTO out SELECT a.x, b.y, c.z FROM a JOIN b ON a.k = b.k RIGHT JOIN c ON b.k = c.k;");
    let plan = explain_script(&right, &[]).unwrap();
    assert!(plan.contains("joinType=[RightOuterJoin]"), "{plan}");
    // A RIGHT join after an INNER one: the INNER pair stays binary too.
    let four = format!("{THREE}CREATE TABLE d (k INT, w INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');\nCREATE TABLE out4 (x INT, y INT, z INT, w INT) WITH ('connector' = 'blackhole');\nINSERT INTO out4 SELECT a.x, b.y, c.z, d.w FROM a JOIN b ON a.k = b.k JOIN c ON b.k = c.k RIGHT JOIN d ON c.k = d.k;");
    let plan = explain_script(
        &four,
        &[(
            "table.optimizer.multi-join.enabled".to_string(),
            "true".to_string(),
        )],
    )
    .unwrap();
    assert!(plan.contains("MultiJoin(commonJoinKey=[k]"), "{plan}");
    assert!(plan.contains("this RIGHT JOIN stays binary"), "{plan}");
}

#[test]
fn delta_join_refuses_full_and_right_joins_by_name() {
    for (sql_type, name) in [("FULL OUTER JOIN", "FULL OUTER"), ("RIGHT JOIN", "RIGHT")] {
        let sql = DELTA.replace("FROM l JOIN r", &format!("FROM l {sql_type} r"));
        let err = run_err(&sql, &[("table.optimizer.delta-join.strategy", "FORCE")]);
        assert!(
            err.contains(&format!(
                "delta join supports INNER joins only, and this is a {name} join"
            )),
            "{err}"
        );
    }
}

#[test]
fn a_comma_join_is_planned_as_the_equivalent_inner_join() {
    let plan_of = |query: &str| {
        let plan = explain_script(&format!("{THREE}INSERT INTO out {query};"), &[]).unwrap();
        // The physical sections; the AST section shows the query as written.
        let at = plan
            .find("== Optimized Physical Plan ==")
            .expect("a physical section");
        plan[at..].to_string()
    };
    let comma = plan_of(
        "SELECT a.x, b.y, c.z FROM a, b, c WHERE a.k = b.k AND c.k = b.k AND a.x < c.z AND b.y > 0",
    );
    let joins = plan_of(
        "SELECT a.x, b.y, c.z FROM a JOIN b ON a.k = b.k JOIN c ON c.k = b.k AND a.x < c.z WHERE b.y > 0",
    );
    assert_eq!(comma, joins);
    assert!(comma.contains("joinType=[InnerJoin]"), "{comma}");
}

#[test]
fn union_all_and_union_explain_as_flink_plans_them() {
    let sql = format!("{THREE}CREATE TABLE u (k INT, v INT) WITH ('connector' = 'blackhole');\nINSERT INTO u SELECT k, x FROM a UNION ALL SELECT k, y FROM b;");
    let plan = explain_script(&sql, &[]).unwrap();
    assert!(plan.contains("LogicalUnion(all=[true])"), "{plan}");
    assert!(plan.contains("Union(all=[true], union=[k, x])"), "{plan}");
    // UNION: a group aggregate on every column over the UNION ALL.
    let plan = explain_script(&sql.replace("UNION ALL", "UNION"), &[]).unwrap();
    assert!(
        plan.contains("GroupAggregate(groupBy=[k, x], select=[k, x])"),
        "{plan}"
    );
    assert!(plan.contains("Union(all=[true], union=[k, x])"), "{plan}");
}
