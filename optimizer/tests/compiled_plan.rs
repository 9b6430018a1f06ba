//! COMPILE PLAN / EXECUTE PLAN: the JSON plan, TTLs edited in it (the
//! seed's orders / line-orders example), precedence config < hint < plan,
//! round trips, and errors that point at the field.

mod common;

use common::MemSources;
use operators::changelog::Change;
use operators::value::Value;
use optimizer::physical::compiled_plan;
use optimizer::session::{
    compile_script, explain_script_in, run_parsed, InsertOutcome, RunOptions,
};
use optimizer::sql::parse_script;
use std::collections::HashMap;
use std::path::Path;

const DDL: &str = "
CREATE TABLE orders (oid BIGINT, k INT) WITH ('connector' = 'filesystem', 'path' = 'o.csv', 'format' = 'csv');
CREATE TABLE lineitem (lid BIGINT, k INT) WITH ('connector' = 'filesystem', 'path' = 'l.csv', 'format' = 'csv');
CREATE TABLE out (oid BIGINT, lid BIGINT) WITH ('connector' = 'blackhole');
SET 'table.exec.state.ttl' = '1 h';
";
const QUERY: &str = "INSERT INTO out SELECT /*+ STATE_TTL('o' = '2 s') */ o.oid, l.lid FROM orders o JOIN lineitem l ON o.k = l.k";

fn run_in(dir: &Path, sql: &str, sources: &MemSources) -> Vec<InsertOutcome> {
    let script = parse_script(sql).unwrap();
    let o = vec![
        ("lab.clock".to_string(), "deterministic".to_string()),
        ("lab.source.batch-size".to_string(), "1".to_string()),
    ];
    run_parsed(
        &script,
        &script.catalog,
        sources,
        dir,
        &o,
        RunOptions::keep_all(),
        &mut |_, _| {},
    )
    .unwrap()
}

fn edit_ttls(path: &Path, left: &str, right: &str) {
    let mut plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    for node in plan["nodes"].as_array_mut().unwrap() {
        if node["type"] == "stream-exec-join_1" {
            node["state"][0]["ttl"] = left.into();
            node["state"][1]["ttl"] = right.into();
        }
    }
    std::fs::write(path, serde_json::to_string_pretty(&plan).unwrap()).unwrap();
}

fn pairs(out: &[InsertOutcome]) -> Vec<(i64, i64)> {
    out[0]
        .changelog
        .iter()
        .map(|c| (c.row[0].as_int().unwrap(), c.row[1].as_int().unwrap()))
        .collect()
}

#[test]
fn ttls_edited_in_the_plan_expire_each_side_on_its_own_schedule() {
    let dir = tempfile::tempdir().unwrap();
    // One record per millisecond, sources round-robin: o1(k7) t1, l100(k7)
    // t2, o2(k8) t3, l101(k8) t4, o3(k7) t5, then lines only: l102(k7) t6,
    // l103(k8) t7, l104(k7) t8, l105(k8) t9, l106(k7) t10, ...
    let orders = vec![
        Change::insert(vec![Value::Int(1), Value::Int(7)]),
        Change::insert(vec![Value::Int(2), Value::Int(8)]),
        Change::insert(vec![Value::Int(3), Value::Int(7)]),
    ];
    let lines: Vec<Change> = (0..10)
        .map(|i| Change::insert(vec![Value::Int(100 + i), Value::Int(7 + (i % 2))]))
        .collect();
    let sources = MemSources(HashMap::from([
        ("orders".to_string(), orders),
        ("lineitem".to_string(), lines),
    ]));
    let compile = format!("{DDL}COMPILE PLAN 'plan.json' FOR {QUERY};");
    assert!(
        run_in(dir.path(), &compile, &sources).is_empty(),
        "COMPILE PLAN only compiles"
    );
    let plan = dir.path().join("plan.json");
    // The seed's edit (left 3000 ms, right 9000 ms), scaled to this input.
    edit_ttls(&plan, "5 ms", "9 ms");
    let execute = format!("{DDL}EXECUTE PLAN 'plan.json';");
    // Orders live 5 ms: o1 joins until t6, o2 until t8, o3 until t10;
    // lines live 9 ms, so o3 still finds l100.
    assert_eq!(
        pairs(&run_in(dir.path(), &execute, &sources)),
        vec![(1, 100), (2, 101), (3, 100), (3, 102), (2, 103), (3, 104)]
    );
    let text = explain_script_in(&execute, dir.path(), &[]).unwrap();
    assert!(
        text.contains("stateTtl=[left=5 ms (plan), right=9 ms (plan)]"),
        "{text}"
    );
    // Lines that live 2 ms are gone when o3 arrives at t5.
    edit_ttls(&plan, "5 ms", "2 ms");
    assert_eq!(
        pairs(&run_in(dir.path(), &execute, &sources)),
        vec![(1, 100), (2, 101), (3, 102), (2, 103), (3, 104)]
    );
}

#[test]
fn precedence_is_config_then_hint_then_plan() {
    let dir = tempfile::tempdir().unwrap();
    let compiled = compile_script(&format!("{DDL}{QUERY};"), &[]).unwrap();
    let path = dir.path().join("p.json");
    std::fs::write(&path, compiled_plan::compile(&compiled)).unwrap();
    let text = explain_script_in(&format!("{DDL}EXECUTE PLAN 'p.json';"), dir.path(), &[]).unwrap();
    // Hint for o, config for l; a loaded plan names the plan as origin.
    assert!(
        text.contains("stateTtl=[left=2000 ms (plan), right=3600000 ms (plan)]"),
        "{text}"
    );
    let direct = explain_script_in(&format!("{DDL}{QUERY};"), dir.path(), &[]).unwrap();
    assert!(
        direct.contains("stateTtl=[left=2000 ms (hint), right=3600000 ms (config)]"),
        "{direct}"
    );
    edit_ttls(&path, "7 s", "8 s");
    let text = explain_script_in(&format!("{DDL}EXECUTE PLAN 'p.json';"), dir.path(), &[]).unwrap();
    assert!(
        text.contains("stateTtl=[left=7000 ms (plan), right=8000 ms (plan)]"),
        "{text}"
    );
}

#[test]
fn compile_execute_compile_round_trips() {
    let sql = format!(
        "{DDL}SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '1 s';
SET 'table.exec.mini-batch.size' = '100';
SET 'parallelism.default' = '2';
INSERT INTO out SELECT o.oid, COUNT(*) FROM orders o JOIN lineitem l ON o.k = l.k GROUP BY o.oid;"
    );
    let first = compiled_plan::compile(&compile_script(&sql, &[]).unwrap());
    let again = compiled_plan::compile(&compiled_plan::load(&first, "p.json").unwrap());
    assert_eq!(first, again);
}

#[test]
fn if_not_exists_keeps_the_file_and_a_second_compile_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let sources = MemSources(HashMap::from([
        ("orders".to_string(), vec![]),
        ("lineitem".to_string(), vec![]),
    ]));
    run_in(
        dir.path(),
        &format!("{DDL}COMPILE PLAN 'p.json' FOR {QUERY};"),
        &sources,
    );
    let before = std::fs::read_to_string(dir.path().join("p.json")).unwrap();
    run_in(dir.path(), &format!("{DDL}COMPILE PLAN 'p.json' IF NOT EXISTS FOR INSERT INTO out SELECT o.oid, o.oid FROM orders o;"), &sources);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("p.json")).unwrap(),
        before
    );
    let script = parse_script(&format!("{DDL}COMPILE PLAN 'p.json' FOR {QUERY};")).unwrap();
    let err = run_parsed(
        &script,
        &script.catalog,
        &sources,
        dir.path(),
        &[],
        RunOptions::default(),
        &mut |_, _| {},
    )
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains("already exists"), "{err}");
}

#[test]
fn bad_plans_point_at_the_field() {
    let good = compiled_plan::compile(&compile_script(&format!("{DDL}{QUERY};"), &[]).unwrap());
    let err = compiled_plan::load("{\n  \"nodes\": [,]\n}", "p.json")
        .unwrap_err()
        .to_string();
    assert!(err.contains("p.json: line 2"), "{err}");
    let unknown = good.replacen(
        "stream-exec-join_1",
        "stream-exec-python-group-aggregate_1",
        1,
    );
    let err = compiled_plan::load(&unknown, "p.json")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("nodes[2].type: unknown node type 'stream-exec-python-group-aggregate_1'"),
        "{err}"
    );
    let no_unit = good.replacen("\"ttl\": \"2000 ms\"", "\"ttl\": \"2000\"", 1);
    let err = compiled_plan::load(&no_unit, "p.json")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("nodes[2].state[0].ttl: '2000' has no unit"),
        "{err}"
    );
}

#[test]
fn execute_plan_if_exists_skips_a_missing_plan() {
    let dir = tempfile::tempdir().unwrap();
    let sources = MemSources(HashMap::new());
    assert!(run_in(
        dir.path(),
        &format!("{DDL}EXECUTE PLAN IF EXISTS 'missing.json';"),
        &sources
    )
    .is_empty());
    let script = parse_script(&format!("{DDL}EXECUTE PLAN 'missing.json';")).unwrap();
    let err = run_parsed(
        &script,
        &script.catalog,
        &sources,
        dir.path(),
        &[],
        RunOptions::default(),
        &mut |_, _| {},
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        err.contains("cannot read plan") && err.contains("missing.json"),
        "{err}"
    );
}

/// Runs `sql` with no overrides, recording the input rows read after each
/// source batch.
fn run_counting(dir: &Path, sql: &str, sources: &MemSources) -> (Vec<InsertOutcome>, Vec<u64>) {
    let script = parse_script(sql).unwrap();
    let mut progress = Vec::new();
    let out = run_parsed(
        &script,
        &script.catalog,
        sources,
        dir,
        &[],
        RunOptions::keep_all(),
        &mut |_, n| progress.push(n),
    )
    .unwrap();
    (out, progress)
}

#[test]
fn a_compiled_plan_runs_with_the_settings_it_was_planned_with() {
    let dir = tempfile::tempdir().unwrap();
    let orders: Vec<Change> = (0..7)
        .map(|i| Change::insert(vec![Value::Int(i), Value::Int(i % 3)]))
        .collect();
    let lines: Vec<Change> = (0..11)
        .map(|i| Change::insert(vec![Value::Int(100 + i), Value::Int(i % 4)]))
        .collect();
    let sources = MemSources(HashMap::from([
        ("orders".to_string(), orders),
        ("lineitem".to_string(), lines),
    ]));
    let settings = "SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '1 s';
SET 'table.exec.mini-batch.size' = '100';
SET 'lab.source.batch-size' = '3';
SET 'lab.clock' = 'deterministic';
SET 'parallelism.default' = '2';
";
    let query = "INSERT INTO out SELECT o.oid, COUNT(*) FROM orders o JOIN lineitem l ON o.k = l.k GROUP BY o.oid";
    // Compile, with the settings set in the script.
    let compile = format!("{DDL}{settings}COMPILE PLAN 'p.json' FOR {query};");
    run_counting(dir.path(), &compile, &sources);
    let json = std::fs::read_to_string(dir.path().join("p.json")).unwrap();
    // The plan carries the bundle size on each mini-batch operator, the
    // allow-latency and the batch size for the job, and every state's TTL.
    assert!(json.contains("\"mini_batch_size\": 100"), "{json}");
    assert!(
        json.contains("\"miniBatchAllowLatency\": \"1000 ms\""),
        "{json}"
    );
    assert!(json.contains("\"sourceBatchSize\": 3"), "{json}");
    assert!(json.contains("\"clock\": \"deterministic\""), "{json}");
    assert!(json.contains("\"ttl\": \"3600000 ms\""), "{json}");

    // Execute it, edited in nothing, in a session that sets none of them.
    let (executed, progress) = run_counting(
        dir.path(),
        &format!("{DDL}EXECUTE PLAN 'p.json';"),
        &sources,
    );
    // The job read batches of 3 rows (the session's default is 1024).
    assert_eq!(progress.last(), Some(&18));
    assert!(
        progress.windows(2).all(|w| w[1] - w[0] <= 3) && progress[0] <= 3,
        "{progress:?}"
    );
    // As the script planned and run directly.
    let (direct, _) = run_counting(dir.path(), &format!("{DDL}{settings}{query};"), &sources);
    assert_eq!(
        executed[0].sink_report().result,
        direct[0].sink_report().result
    );
    assert_eq!(executed[0].plan.settings, direct[0].plan.settings);
    // Compiling what was executed gives the same file.
    assert_eq!(compiled_plan::compile(&executed[0].plan), json);
}

#[test]
fn a_compiled_delta_join_carries_its_read_ahead() {
    let sql = "
CREATE TABLE l (id INT, k INT, x INT, PRIMARY KEY (id) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = 'l.csv', 'format' = 'csv', 'index.key' = 'k');
CREATE TABLE r (k INT, rid INT, y INT, PRIMARY KEY (k, rid) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = 'r.csv', 'format' = 'csv', 'index.key' = 'k');
CREATE TABLE o (id INT, k INT, rid INT, PRIMARY KEY (id, k, rid) NOT ENFORCED)
  WITH ('connector' = 'blackhole');
SET 'lab.delta-join.source-read-ahead' = '3';
INSERT INTO o SELECT l.id, r.k, r.rid FROM l JOIN r ON l.k = r.k;";
    let json = compiled_plan::compile(&compile_script(sql, &[]).unwrap());
    assert!(json.contains("stream-exec-delta-join_1"), "{json}");
    assert!(json.contains("\"source_read_ahead\": 3"), "{json}");
    let again = compiled_plan::compile(&compiled_plan::load(&json, "p.json").unwrap());
    assert_eq!(again, json);
}

/// The seed's per-operator TTL example: a ROW_NUMBER deduplication, then a
/// GROUP BY, each state given its own TTL in the compiled plan.
#[test]
fn deduplication_and_aggregate_take_their_own_ttls_from_the_plan() {
    let dir = tempfile::tempdir().unwrap();
    let ddl = "
CREATE TABLE clicks (u STRING, page STRING, pt AS PROCTIME()) WITH ('connector' = 'filesystem', 'path' = 'c.csv', 'format' = 'csv');
CREATE TABLE pages (u STRING, n BIGINT, PRIMARY KEY (u) NOT ENFORCED) WITH ('connector' = 'blackhole');
";
    let query = "INSERT INTO pages SELECT u, COUNT(*) AS n FROM (
  SELECT u, page FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY u, page ORDER BY pt) AS rn FROM clicks
  ) WHERE rn = 1
) GROUP BY u";
    // One row per millisecond: u1 sees page a at t1, t2 and t6.
    let clicks = [
        ("u1", "a"),
        ("u1", "a"),
        ("u1", "b"),
        ("u2", "a"),
        ("u2", "c"),
        ("u1", "a"),
    ]
    .iter()
    .map(|&(u, p)| Change::insert(vec![Value::str(u), Value::str(p)]))
    .collect();
    let sources = MemSources(HashMap::from([("clicks".to_string(), clicks)]));
    run_in(
        dir.path(),
        &format!("{ddl}COMPILE PLAN 'plan.json' FOR {query};"),
        &sources,
    );
    let path = dir.path().join("plan.json");
    let edit = |dedup: &str, agg: &str| {
        let mut plan: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for node in plan["nodes"].as_array_mut().unwrap() {
            match node["type"].as_str() {
                Some("stream-exec-deduplicate_1") => {
                    assert_eq!(node["state"][0]["name"], "deduplicateState");
                    node["state"][0]["ttl"] = dedup.into();
                }
                Some("stream-exec-group-aggregate_1") => node["state"][0]["ttl"] = agg.into(),
                _ => {}
            }
        }
        std::fs::write(&path, serde_json::to_string_pretty(&plan).unwrap()).unwrap();
    };
    let execute = format!("{ddl}EXECUTE PLAN 'plan.json';");
    let result = |out: Vec<InsertOutcome>| -> Vec<String> {
        let rows = out[0].sink_report().result.clone().unwrap();
        rows.iter().map(|r| format!("{}={}", r[0], r[1])).collect()
    };
    // Kept forever: u1 has 2 pages, u2 2.
    assert_eq!(
        result(run_in(dir.path(), &execute, &sources)),
        ["u1=2", "u2=2"]
    );
    // The deduplication forgets after 3 ms: u1's page a at t6 counts again.
    edit("3 ms", "1 h");
    assert_eq!(
        result(run_in(dir.path(), &execute, &sources)),
        ["u1=3", "u2=2"]
    );
    let text = explain_script_in(&execute, dir.path(), &[]).unwrap();
    assert!(
        text.contains("order=[PROCTIME], stateTtl=[3 ms (plan)]"),
        "{text}"
    );
    assert!(text.contains("stateTtl=[3600000 ms (plan)]"), "{text}");
}
