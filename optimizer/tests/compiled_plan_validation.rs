//! A compiled plan is untrusted input: each way a plan can be wrong that
//! once crashed an operator (a column position or key beyond its input, a
//! DISTINCT call without argument, a missing input, a state layout keyed
//! outside its row, ...) is refused on load with its JSON path, and
//! randomly edited plans either load and run without a panic or are
//! refused.

mod common;

use common::MemSources;
use operators::changelog::Change;
use operators::value::Value;
use optimizer::logical::Statement;
use optimizer::physical::compiled_plan;
use optimizer::session::{compile_script, explain_script_in, run_parsed, RunOptions};
use optimizer::sql::{parse_script, Script};
use proptest::prelude::*;
use serde_json::{json, Value as Json};
use std::collections::HashMap;
use std::path::Path;

const DDL: &str = "
CREATE TABLE a (k INT, v INT, s STRING) WITH ('connector' = 'filesystem', 'path' = 'a.csv', 'format' = 'changelog-csv');
CREATE TABLE b (id INT, k INT, w INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'filesystem', 'path' = 'b.csv', 'format' = 'changelog-csv');
CREATE TABLE c (k INT, x INT) WITH ('connector' = 'filesystem', 'path' = 'c.csv', 'format' = 'csv');
CREATE TABLE agg (k INT, n BIGINT, sx BIGINT, mx INT) WITH ('connector' = 'blackhole');
CREATE TABLE dist (k INT, d BIGINT, sv BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE joined (k INT, v INT, w INT) WITH ('connector' = 'blackhole');
CREATE TABLE three (k INT, w INT, x INT) WITH ('connector' = 'blackhole');
CREATE TABLE keyed (id INT, n BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'blackhole');
";

const MINI_BATCH: &str = "
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '1 s';
SET 'table.exec.mini-batch.size' = '3';
";

/// Local-global over an insert-only input (packed accumulators).
const TWO_PHASE: &str = "INSERT INTO agg SELECT k, COUNT(*), SUM(x), MIN(x) FROM c GROUP BY k";
/// One phase, a distinct call (distinct maps).
const DISTINCT: &str = "INSERT INTO dist SELECT k, COUNT(DISTINCT v), SUM(v) FROM a GROUP BY k";
/// A join whose right side has a unique key (HasUniqueKey layout).
/// (The residual reads `a.s` and `b.id`, so the join keeps every column:
/// a STRING column, and `b`'s primary key.)
const JOIN: &str = "INSERT INTO joined SELECT a.k, a.v, b.w FROM a JOIN b \
                    ON a.k = b.k AND (a.s = 'x' OR a.v <> b.id) WHERE a.v > 0";
const MULTI: &str = "INSERT INTO three SELECT /*+ MULTI_JOIN(a, b, c) */ a.k, b.w, c.x \
                     FROM a JOIN b ON a.k = b.k JOIN c ON b.k = c.k";
/// A sink keyed otherwise than the query (SinkMaterializer).
const MATERIALIZED: &str = "INSERT INTO keyed SELECT k, COUNT(*) FROM a GROUP BY k";

fn plan(settings: &str, insert: &str) -> Json {
    let plan = compile_script(&format!("{DDL}{settings}{insert};"), &[]).unwrap();
    serde_json::from_str(&compiled_plan::compile(&plan)).unwrap()
}

/// The position in `nodes` of the first node of `node_type`.
fn node_of(plan: &Json, node_type: &str) -> usize {
    plan["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .position(|n| n["type"] == node_type)
        .unwrap_or_else(|| panic!("no {node_type} in {plan}"))
}

/// `plan` with the value at `pointer` under the first `node_type` node set
/// to `value`; loading it must fail naming `path` and saying `says`.
fn refused(mut plan: Json, node_type: &str, pointer: &str, value: Json, path: &str, says: &str) {
    let n = node_of(&plan, node_type);
    let shown = plan["nodes"][n].to_string();
    let slot = plan["nodes"][n]
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("no {pointer} in {shown}"));
    *slot = value;
    let err = load(&plan).unwrap_err();
    let want = path.replace("{n}", &n.to_string());
    assert!(
        err.contains(&want) && err.contains(says),
        "wanted '{want}' ... '{says}', got: {err}"
    );
}

fn load(plan: &Json) -> Result<(), String> {
    compiled_plan::load(&serde_json::to_string_pretty(plan).unwrap(), "p.json")
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn a_column_beyond_the_input_is_refused_where_it_is_written() {
    // operators/src/expr.rs: a projection reading past the row.
    refused(
        plan("", JOIN),
        "stream-exec-calc_1",
        "/spec/kind/Calc/projection/0",
        json!({"Column": 9}),
        "p.json: nodes[{n}].spec.kind.Calc.projection[0]",
        "column 9 does not exist: the input has 6 column(s)",
    );
    refused(
        plan("", JOIN),
        "stream-exec-calc_1",
        "/spec/kind/Calc/predicate",
        json!({"Binary": ["Gt", {"Column": 6}, {"Literal": {"Int": 0}}]}),
        "nodes[{n}].spec.kind.Calc.predicate",
        "column 6 does not exist",
    );
}

#[test]
fn group_keys_and_aggregate_arguments_beyond_the_input_are_refused() {
    // group_agg.rs (extract_key, the single-column key) and the hash
    // exchange before it.
    refused(
        plan("", DISTINCT),
        "stream-exec-group-aggregate_1",
        "/spec/kind/GroupAggregate/group_by/0",
        json!(7),
        "nodes[{n}].spec.kind.GroupAggregate.group_by[0]",
        "column 7 does not exist",
    );
    // agg/core.rs: an argument read past the row, and a DISTINCT call
    // without an argument.
    refused(
        plan("", DISTINCT),
        "stream-exec-group-aggregate_1",
        "/spec/kind/GroupAggregate/aggs/1/arg",
        json!(5),
        "nodes[{n}].spec.kind.GroupAggregate.aggs[1].arg",
        "column 5 does not exist",
    );
    refused(
        plan("", DISTINCT),
        "stream-exec-group-aggregate_1",
        "/spec/kind/GroupAggregate/aggs/0/arg",
        Json::Null,
        "nodes[{n}].spec.kind.GroupAggregate.aggs[0].distinct",
        "a DISTINCT call needs an argument column",
    );
    refused(
        plan("", DISTINCT),
        "stream-exec-group-aggregate_1",
        "/spec/kind/GroupAggregate/aggs/1/filter",
        json!(0),
        "nodes[{n}].spec.kind.GroupAggregate.aggs[1].filter",
        "a FILTER column must be BOOLEAN",
    );
    // agg/local_agg.rs and agg/packed_acc.rs: the local aggregate's key
    // and arguments.
    refused(
        plan(MINI_BATCH, TWO_PHASE),
        "stream-exec-local-group-aggregate_1",
        "/spec/kind/LocalGroupAggregate/group_by/0",
        json!(2),
        "nodes[{n}].spec.kind.LocalGroupAggregate.group_by[0]",
        "column 2 does not exist",
    );
    refused(
        plan(MINI_BATCH, TWO_PHASE),
        "stream-exec-local-group-aggregate_1",
        "/spec/kind/LocalGroupAggregate/aggs/1/arg",
        json!(4),
        "nodes[{n}].spec.kind.LocalGroupAggregate.aggs[1].arg",
        "column 4 does not exist",
    );
    // A global aggregate over partials of other calls.
    refused(
        plan(MINI_BATCH, TWO_PHASE),
        "stream-exec-global-group-aggregate_1",
        "/spec/kind/GroupAggregate/aggs/1/kind",
        json!("Max"),
        "nodes[{n}].spec.kind.GroupAggregate.aggs",
        "merges the calls of the local aggregate below it",
    );
}

#[test]
fn join_keys_and_state_layouts_beyond_the_input_are_refused() {
    // join/regular_join.rs and, in mini-batch mode, join/join_bundle.rs.
    refused(
        plan("", JOIN),
        "stream-exec-join_1",
        "/spec/kind/Join/left_keys/0",
        json!(3),
        "nodes[{n}].spec.kind.Join.left_keys[0]",
        "column 3 does not exist: the left input has 3 column(s)",
    );
    refused(
        plan(MINI_BATCH, JOIN),
        "stream-exec-join_1",
        "/spec/kind/Join/right_keys/0",
        json!(8),
        "nodes[{n}].spec.kind.Join.right_keys[0]",
        "column 8 does not exist: the right input has 3 column(s)",
    );
    refused(
        plan("", JOIN),
        "stream-exec-join_1",
        "/spec/kind/Join/right_keys",
        json!([1, 2]),
        "nodes[{n}].spec.kind.Join.right_keys",
        "has 2 entries, but left_keys needs 1",
    );
    // join/join_state.rs: a unique key outside the row.
    refused(
        plan("", JOIN),
        "stream-exec-join_1",
        "/spec/kind/Join/right_layout",
        json!({"HasUniqueKey": [9]}),
        "nodes[{n}].spec.kind.Join.right_layout",
        "but the input's unique key (Some([0])) makes it HasUniqueKey([0])",
    );
    refused(
        plan("", MULTI),
        "stream-exec-multi-join_1",
        "/spec/kind/MultiJoin/keys/2/0",
        json!(5),
        "nodes[{n}].spec.kind.MultiJoin.keys[2][0]",
        "column 5 does not exist: input 2 has 2 column(s)",
    );
    refused(
        plan(
            "SET 'table.exec.sink.upsert-materialize' = 'FORCE';",
            MATERIALIZED,
        ),
        "stream-exec-sink-upsert-materializer_1",
        "/spec/kind/SinkMaterializer/primary_key/0",
        json!(2),
        "nodes[{n}].spec.kind.SinkMaterializer.primary_key[0]",
        "column 2 does not exist",
    );
}

#[test]
fn a_missing_or_extra_input_is_refused() {
    // physical/job.rs and EXPLAIN read a node's inputs: a join fed once.
    let mut p = plan("", JOIN);
    p["edges"].as_array_mut().unwrap().remove(0);
    let err = load(&p).unwrap_err();
    assert!(
        err.contains("nodes[2]: no edge feeds input 0 of node 3 (stream-exec-join_1 takes 2)"),
        "{err}"
    );
    let mut p = plan("", JOIN);
    p["edges"][1]["inputIndex"] = json!(2);
    let err = load(&p).unwrap_err();
    assert!(
        err.contains("edges[1].inputIndex: 2 is not an input of node 3"),
        "{err}"
    );
    let mut p = plan("", JOIN);
    p["edges"][1]["source"] = json!(1);
    let err = load(&p).unwrap_err();
    assert!(
        err.contains("edges[1].source: node 1 already feeds node 3"),
        "{err}"
    );
    let mut p = plan("", JOIN);
    p["edges"][0]["target"] = json!(1);
    let err = load(&p).unwrap_err();
    assert!(
        err.contains("edges[0]: node 1 must come before its consumer 1"),
        "{err}"
    );
    let mut p = plan("", JOIN);
    p["nodes"][1]["id"] = json!(1);
    let err = load(&p).unwrap_err();
    assert!(
        err.contains("nodes[1].id: 1 is the id of nodes[0] too"),
        "{err}"
    );
    // EXPLAIN of such a plan says so too.
    let dir = tempfile::tempdir().unwrap();
    let mut p = plan("", JOIN);
    p["edges"].as_array_mut().unwrap().remove(0);
    std::fs::write(dir.path().join("p.json"), p.to_string()).unwrap();
    let err = explain_script_in(&format!("{DDL}EXECUTE PLAN 'p.json';"), dir.path(), &[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("no edge feeds input 0"), "{err}");
}

#[test]
fn node_properties_state_entries_and_settings_are_checked() {
    refused(
        plan("", JOIN),
        "stream-exec-join_1",
        "/spec/parallelism",
        json!(0),
        "nodes[{n}].spec.parallelism",
        "0 is not between 1 and 32768",
    );
    refused(
        plan("", JOIN),
        "stream-exec-join_1",
        "/spec/parallelism",
        json!(1_000_000),
        "nodes[{n}].spec.parallelism",
        "1000000 is not between 1 and 32768",
    );
    refused(
        plan("", DISTINCT),
        "stream-exec-group-aggregate_1",
        "/spec/unique_key/0",
        json!(3),
        "nodes[{n}].spec.unique_key[0]",
        "column 3 does not exist: the node has 3 column(s)",
    );
    refused(
        plan("", DISTINCT),
        "stream-exec-group-aggregate_1",
        "/spec/changelog/delete",
        json!(false),
        "nodes[{n}].spec.changelog",
        "is not what the node emits over its inputs: [I,UB,UA,D]",
    );
    refused(
        plan("", JOIN),
        "stream-exec-calc_1",
        "/spec/kind/Calc/predicate",
        json!({"Column": 2}),
        "nodes[{n}].spec.kind.Calc.predicate",
        "a condition must be BOOLEAN, not STRING",
    );
    refused(
        plan("", JOIN),
        "stream-exec-calc_1",
        "/spec/kind/Calc/projection/1",
        json!({"Binary": ["Add", {"Column": 2}, {"Literal": {"Int": 1}}]}),
        "nodes[{n}].spec.kind.Calc.projection[1]",
        "+ needs numbers, got STRING",
    );
    refused(
        plan("", JOIN),
        "stream-exec-calc_1",
        "/spec/kind/Calc/projection/1",
        json!({"Column": 2}),
        "nodes[{n}].spec.kind.Calc.projection[1]",
        "computes STRING but column 'v' of the schema is integer",
    );
    let mut p = plan("", JOIN);
    let n = node_of(&p, "stream-exec-join_1");
    p["nodes"][n]["state"].as_array_mut().unwrap().pop();
    let err = load(&p).unwrap_err();
    assert!(
        err.contains("nodes[2].state: expected 2 state entries for stream-exec-join_1, found 1"),
        "{err}"
    );
    refused(
        plan("", JOIN),
        "stream-exec-join_1",
        "/state/1/name",
        json!("leftState"),
        "nodes[{n}].state[1].name",
        "'leftState' is not this node's state 'rightState'",
    );
    refused(
        plan("", JOIN),
        "stream-exec-join_1",
        "/state/0/ttl",
        json!("99999999999999999999 d"),
        "nodes[{n}].state[0].ttl",
        "too large",
    );
    let mut p = plan("", JOIN);
    p["settings"]["sourceBatchSize"] = json!(4_000_000_000u64);
    let err = load(&p).unwrap_err();
    assert!(
        err.contains("settings.sourceBatchSize: 4000000000 is not between 1 and 1048576"),
        "{err}"
    );
    let mut p = plan(MINI_BATCH, JOIN);
    p["settings"]["miniBatchAllowLatency"] = json!("1000");
    let err = load(&p).unwrap_err();
    assert!(
        err.contains("settings.miniBatchAllowLatency: '1000' has no unit"),
        "{err}"
    );
    let mut p = plan("", JOIN);
    p["sink"]["table"]["schema"]["fields"]
        .as_array_mut()
        .unwrap()
        .pop();
    let err = load(&p).unwrap_err();
    assert!(
        err.contains("sink.table.schema: 2 column(s), but the plan's root makes 3"),
        "{err}"
    );
}

/// Tables `a`, `b` and `c` with a few rows each.
fn sources() -> MemSources {
    let int = Value::Int;
    MemSources(HashMap::from([
        (
            "a".to_string(),
            vec![
                Change::insert(vec![int(1), int(2), Value::str("x")]),
                Change::insert(vec![int(2), int(-1), Value::Null]),
                Change::update_before(vec![int(1), int(2), Value::str("x")]),
                Change::update_after(vec![int(1), int(5), Value::str("y")]),
                Change::insert(vec![int(1), int(7), Value::str("x")]),
            ],
        ),
        (
            "b".to_string(),
            vec![
                Change::insert(vec![int(10), int(1), int(3)]),
                Change::insert(vec![int(11), int(2), int(4)]),
                Change::delete(vec![int(11), int(2), int(4)]),
            ],
        ),
        (
            "c".to_string(),
            (0..9)
                .map(|i| Change::insert(vec![int(i % 3), int(i)]))
                .collect(),
        ),
    ]))
}

/// Loads and runs `plan` (a panic propagates).
fn execute(plan: &Json, dir: &Path) -> Result<usize, String> {
    let path = dir.join("p.json");
    std::fs::write(&path, serde_json::to_string(plan).unwrap()).unwrap();
    let script = parse_script(DDL).unwrap();
    let one = Script {
        statements: vec![Statement::ExecutePlan {
            path: path.to_string_lossy().into_owned(),
            if_exists: false,
        }],
        catalog: script.catalog.clone(),
        positions: vec![(1, 1)],
    };
    run_parsed(
        &one,
        &one.catalog,
        &sources(),
        dir,
        &[],
        RunOptions::keep_all(),
        &mut |_, _| {},
    )
    .map(|o| o[0].changelog.len())
    .map_err(|e| e.to_string())
}

/// Every number and boolean in `v`, by JSON pointer.
fn leaves(v: &Json, at: String, out: &mut Vec<String>) {
    match v {
        Json::Number(_) | Json::Bool(_) => out.push(at),
        Json::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, x)| leaves(x, format!("{at}/{i}"), out)),
        Json::Object(o) => o.iter().for_each(|(k, x)| {
            leaves(
                x,
                format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                out,
            )
        }),
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// A plan with one to three numbers or flags edited at random either
    /// is refused or runs to the end without a panic.
    #[test]
    fn an_edited_plan_is_refused_or_runs_without_a_panic(
        which in 0usize..5,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 0usize..8), 1..4),
    ) {
        let base = [
            plan(MINI_BATCH, TWO_PHASE),
            plan("", DISTINCT),
            plan(MINI_BATCH, JOIN),
            plan("", MULTI),
            plan("SET 'table.exec.sink.upsert-materialize' = 'FORCE';", MATERIALIZED),
        ];
        let mut p = base[which].clone();
        let mut spots = Vec::new();
        leaves(&p, String::new(), &mut spots);
        for (spot, value) in edits {
            let at = spot.get(&spots).clone();
            let slot = p.pointer_mut(&at).unwrap();
            *slot = match (&*slot, value) {
                (Json::Bool(b), _) => json!(!b),
                (_, 0) => json!(0),
                (_, 1) => json!(1),
                (_, 2) => json!(2),
                (_, 3) => json!(3),
                (_, 4) => json!(7),
                (_, 5) => json!(64),
                (_, 6) => json!(100_000),
                _ => json!(u64::MAX),
            };
        }
        let dir = tempfile::tempdir().unwrap();
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| execute(&p, dir.path())));
        prop_assert!(ran.is_ok(), "a panic running {}", serde_json::to_string_pretty(&p).unwrap());
    }
}

/// A chain of `n` nodes: a scan of `c` under `n - 1` Calcs (the last
/// makes the sink's three columns).
fn chain(n: usize) -> Json {
    let mut p = plan("", "INSERT INTO joined SELECT k, x, x FROM c WHERE x > 1");
    let scan = p["nodes"][0].clone();
    let field =
        |name: &str| json!({"name": name, "qualifier": null, "data_type": "Int", "nullable": true});
    let calc = |id: usize, last: bool| {
        let (projection, fields) = if last {
            (
                json!([{"Column": 0}, {"Column": 1}, {"Column": 1}]),
                json!([field("k"), field("x"), field("x2")]),
            )
        } else {
            (
                json!([{"Column": 0}, {"Column": 1}]),
                json!([field("k"), field("x")]),
            )
        };
        json!({
            "id": id,
            "type": "stream-exec-calc_1",
            "description": "",
            "outputType": "",
            "spec": {
                "kind": {"Calc": {"predicate": null, "projection": projection}},
                "schema": {"fields": fields},
                "changelog": {"insert": true, "update_before": false, "update_after": false, "delete": false},
                "unique_key": null,
                "parallelism": 1
            }
        })
    };
    let mut scan = scan;
    scan["spec"]["kind"]["Source"]["predicate"] = Json::Null;
    scan["spec"]["kind"]["Source"]["projection"] = Json::Null;
    scan["spec"]["schema"]["fields"] = json!([field("k"), field("x")]);
    let mut nodes = vec![scan];
    let mut edges = Vec::new();
    for i in 1..n {
        nodes.push(calc(i + 1, i + 1 == n));
        edges.push(json!({"source": i, "target": i + 1, "inputIndex": 0}));
    }
    p["nodes"] = json!(nodes);
    p["edges"] = json!(edges);
    p
}

#[test]
fn the_largest_plan_loads_explains_and_runs_on_a_test_thread() {
    let dir = tempfile::tempdir().unwrap();
    let p = chain(compiled_plan::MAX_NODES);
    assert_eq!(execute(&p, dir.path()), Ok(9));
    std::fs::write(dir.path().join("p.json"), p.to_string()).unwrap();
    let text = explain_script_in(&format!("{DDL}EXECUTE PLAN 'p.json';"), dir.path(), &[]).unwrap();
    assert_eq!(
        text.matches("Calc(").count(),
        2 * (compiled_plan::MAX_NODES - 1)
    );
    let err = load(&chain(compiled_plan::MAX_NODES + 1)).unwrap_err();
    assert!(
        err.contains("nodes: 1001 nodes, more than the 1000 a plan may have"),
        "{err}"
    );
}

#[test]
fn a_top_n_outside_its_input_or_strategy_is_refused() {
    let sink = "CREATE TABLE ranked (k INT, x INT, rn BIGINT) WITH ('connector' = 'blackhole');\n";
    let top = |t: &str| {
        format!(
            "INSERT INTO ranked SELECT * FROM (SELECT k, x, ROW_NUMBER() OVER (PARTITION BY k ORDER BY x DESC) AS rn FROM {t}) WHERE rn <= 2"
        )
    };
    let insert_only = top("c");
    refused(
        plan(sink, &insert_only),
        "stream-exec-rank_1",
        "/spec/kind/Rank/partition_key/0",
        json!(7),
        "nodes[{n}].spec.kind.Rank.partition_key",
        "column 7 does not exist",
    );
    refused(
        plan(sink, &insert_only),
        "stream-exec-rank_1",
        "/spec/kind/Rank/order/0/column",
        json!(5),
        "nodes[{n}].spec.kind.Rank.order",
        "column 5 does not exist",
    );
    refused(
        plan(sink, &insert_only),
        "stream-exec-rank_1",
        "/spec/kind/Rank/rank_end",
        json!(0),
        "nodes[{n}].spec.kind.Rank.rank_end",
        "the rank range 1..=0 is empty",
    );
    // Over an updating input (a's changelog) the append-only strategy
    // would drop its retractions.
    let updating = "INSERT INTO ranked SELECT * FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM a) WHERE rn <= 2";
    refused(
        plan(sink, updating),
        "stream-exec-rank_1",
        "/spec/kind/Rank/strategy",
        json!("AppendFast"),
        "nodes[{n}].spec.kind.Rank.strategy",
        "AppendFastStrategy takes an insert-only input",
    );
}
