//! Asynchronous state execution (`table.exec.async-state.enabled`) for the
//! binary regular join (Flink's `AsyncStateStreamingJoinOperator`): INNER,
//! LEFT, RIGHT and FULL, over each state layout (value state for a join
//! key holding the unique key, map state by unique key or by row), on both
//! backends and at parallelism 1 and 4, it materialises what the oracle
//! computes AND emits exactly the changelog of one record at a time (same
//! changes, same order), where only its state accesses are batched (each
//! batch's keys loaded for both sides at once, the changes written in one
//! `WriteBatch`); EXPLAIN names it where Flink plans it, and the state
//! counters say what it read and wrote.

mod common;

use common::queries::{inputs, script_for};
use common::{async_state_is_exact, run_mem, MemSources};
use operators::changelog::Change;
use operators::value::{Row, Value};
use optimizer::session::{InsertOutcome, RunOptions};
use proptest::prelude::*;
use std::collections::HashMap;

const ASYNC: (&str, &str) = ("table.exec.async-state.enabled", "true");

/// Joins of every type over every layout. Table `a` (a changelog without a
/// key) keeps `NoUniqueKey`, `b` (upserts keyed by `id`) `HasUniqueKey`
/// joined on `k` and `JoinKeyContainsUniqueKey` joined on `id`, an
/// aggregate grouped by the join key `JoinKeyContainsUniqueKey`, `c`
/// (insert-only) `NoUniqueKey`.
const JOIN_ASYNC_QUERIES: &[(&str, &str)] = &[
    (
        "k INT, v INT, w INT",
        "SELECT a.k, a.v, b.w FROM a JOIN b ON a.k = b.k",
    ),
    (
        "k INT, v INT, w INT",
        "SELECT a.k, a.v, b.w FROM a LEFT JOIN b ON a.k = b.k AND a.v < b.w",
    ),
    (
        "v INT, k INT, w INT",
        "SELECT a.v, b.k, b.w FROM a RIGHT JOIN b ON a.k = b.k AND a.v < b.w",
    ),
    (
        "k INT, v INT, k2 INT, w INT",
        "SELECT a.k, a.v, b.k, b.w FROM a FULL OUTER JOIN b ON a.k = b.k",
    ),
    (
        "v INT, id INT, w INT",
        "SELECT a.v, b.id, b.w FROM a FULL JOIN b ON a.k = b.id",
    ),
    (
        "k INT, n BIGINT, w INT",
        "SELECT t.k, t.n, b.w FROM (SELECT k, COUNT(*) AS n FROM a GROUP BY k) AS t \
         LEFT JOIN b ON t.k = b.id",
    ),
    (
        "k INT, x INT, w INT",
        "SELECT c.k, c.x, b.w FROM c RIGHT JOIN b ON c.k = b.k AND c.x > b.w",
    ),
    (
        "k INT, n BIGINT, x INT",
        "SELECT t.k, t.n, c.x FROM (SELECT k, COUNT(*) AS n FROM a GROUP BY k) AS t \
         FULL JOIN c ON t.k = c.k",
    ),
    (
        "v INT, w INT, x INT",
        "SELECT a.v, b.w, c.x FROM a JOIN b ON a.k = b.k LEFT JOIN c ON b.k = c.k",
    ),
];

/// Async state on and off, on both backends at parallelism 1 and 4, in
/// source batches of `batch`: each sink holds the oracle's rows and the
/// two changelogs are identical.
fn check_identical(sources: &MemSources, batch: usize) -> Result<(), TestCaseError> {
    async_state_is_exact(&script_for(JOIN_ASYNC_QUERIES), sources, batch)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn async_join_matches_the_oracle_and_the_one_at_a_time_changelog(
        sources in inputs(),
        batch in prop_oneof![Just(1usize), Just(3), Just(1024)],
    ) {
        check_identical(&sources, batch)?;
    }
}

fn ins(row: Row) -> Change {
    Change::insert(row)
}

fn int(i: i64) -> Value {
    Value::Int(i)
}

/// Keys repeating inside one batch, with updates and retractions on both
/// sides: a row that gains and loses its match within a batch, an update
/// of b that moves a row from one key to another and back, deletes of
/// rows inserted in the same batch, NULL keys.
fn repeating_sources() -> MemSources {
    let a = |k: i64, v: i64| vec![int(k), int(v), Value::str("x")];
    let b = |id: i64, k: i64, w: i64| vec![int(id), int(k), int(w)];
    let c = |k: i64, x: i64| vec![int(k), int(x)];
    let mut m = HashMap::new();
    m.insert(
        "a".to_string(),
        vec![
            ins(a(1, 1)),
            ins(a(1, 1)),
            ins(a(2, 3)),
            Change::delete(a(1, 1)),
            ins(vec![Value::Null, int(0), Value::Null]),
            Change::update_before(a(2, 3)),
            Change::update_after(a(1, 4)),
            ins(a(1, 0)),
            Change::delete(a(1, 0)),
            ins(a(3, 2)),
            Change::update_before(a(1, 4)),
            Change::update_after(a(1, 2)),
            ins(a(2, 9)),
        ],
    );
    m.insert(
        "b".to_string(),
        vec![
            ins(b(1, 1, 5)),
            ins(b(2, 1, 0)),
            Change::update_before(b(1, 1, 5)),
            Change::update_after(b(1, 2, 5)),
            ins(b(3, 2, 7)),
            Change::update_before(b(1, 2, 5)),
            Change::update_after(b(1, 1, 6)),
            Change::delete(b(2, 1, 0)),
            ins(b(2, 3, 1)),
            ins(b(4, 1, 9)),
            Change::delete(b(4, 1, 9)),
        ],
    );
    m.insert(
        "c".to_string(),
        vec![
            ins(c(1, 7)),
            ins(c(1, 7)),
            ins(c(2, 0)),
            ins(c(1, 8)),
            ins(vec![Value::Null, int(1)]),
            ins(c(3, 9)),
        ],
    );
    MemSources(m)
}

#[test]
fn repeating_keys_with_updates_give_the_one_at_a_time_changelog() {
    let sources = repeating_sources();
    for batch in [1usize, 2, 3, 4, 1024] {
        check_identical(&sources, batch).unwrap_or_else(|e| panic!("batch {batch}: {e}"));
    }
    // The batches really were batched on RocksDB: fewer reads than one
    // record at a time, and the same live state.
    let sql = script_for(JOIN_ASYNC_QUERIES);
    let stats = |async_state: bool| {
        let mut o = vec![
            ("state.backend.type", "rocksdb".to_string()),
            ("lab.source.batch-size", "1024".to_string()),
        ];
        if async_state {
            o.push((ASYNC.0, ASYNC.1.to_string()));
        }
        let (_, outcomes) = run_mem(&sql, &sources, &o, RunOptions::keep_all()).unwrap();
        outcomes
            .iter()
            .map(|o| {
                join_states(o)
                    .into_iter()
                    .map(|(_, m)| m)
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>()
    };
    let (one, batched) = (stats(false), stats(true));
    for (sink, (o, a)) in one.iter().zip(&batched).enumerate() {
        for (so, sa) in o.iter().zip(a) {
            assert_eq!(
                (so.entries, so.logical_bytes),
                (sa.entries, sa.logical_bytes),
                "s{sink}: live state differs"
            );
        }
        let reads = |m: &[operators::state::StateMetrics]| m.iter().map(|m| m.reads).sum::<u64>();
        assert!(reads(a) < reads(o), "s{sink}: {a:?} vs {o:?}");
    }
}

/// The join stages' states of an INSERT's job, as (name, metrics).
fn join_states(o: &InsertOutcome) -> Vec<(String, operators::state::StateMetrics)> {
    o.stages
        .iter()
        .map(|&s| &o.report.stages[s])
        .filter(|s| s.name.contains("Join"))
        .flat_map(|s| s.states.iter().map(|st| (st.name.clone(), st.metrics)))
        .collect()
}

#[test]
fn async_join_reads_each_distinct_key_once_per_batch_and_side() {
    // c (left, NoUniqueKey: key k -> {row -> count}) joins b (right,
    // JoinKeyContainsUniqueKey: id -> row). Batches of 3, the sources
    // taken in turn: c [1, 1, 2], b [1, 2], c [1, 3, 1].
    let sql = script_for(&[(
        "k INT, x INT, w INT",
        "SELECT c.k, c.x, b.w FROM c JOIN b ON c.k = b.id",
    )]);
    let mut m = HashMap::new();
    m.insert(
        "c".to_string(),
        [(1, 1), (1, 1), (2, 5), (1, 7), (3, 0), (1, 7)]
            .iter()
            .map(|&(k, x)| ins(vec![int(k), int(x)]))
            .collect(),
    );
    m.insert(
        "b".to_string(),
        vec![
            ins(vec![int(1), int(0), int(10)]),
            ins(vec![int(2), int(0), int(20)]),
        ],
    );
    m.insert("a".to_string(), vec![]);
    let sources = MemSources(m);
    let counters = |async_state: bool| {
        let mut o = vec![
            ("state.backend.type", "rocksdb".to_string()),
            ("lab.source.batch-size", "3".to_string()),
        ];
        if async_state {
            o.push((ASYNC.0, ASYNC.1.to_string()));
        }
        let (_, outcomes) = run_mem(&sql, &sources, &o, RunOptions::keep_all()).unwrap();
        assert_eq!(outcomes[0].changelog.len(), 5);
        join_states(&outcomes[0])
            .into_iter()
            .map(|(n, m)| (n, m.reads, m.writes, m.deletes, m.entries))
            .collect::<Vec<_>>()
    };
    // One record at a time: each c record reads b's row (a get) and
    // modifies its count (a read and a write); each b record scans c's
    // key (one entry each) and puts its row (a write).
    assert_eq!(
        counters(false),
        [
            ("left".to_string(), 8, 6, 0, 4),
            ("right".to_string(), 6, 2, 0, 2)
        ]
    );
    // Async: per batch and side one read per distinct key (2 + 2 + 2;
    // the map keys hold at most one entry when loaded), one write per
    // entry changed: c's counts (1,1), (2,5), then (1,7), (3,0); b's rows.
    assert_eq!(
        counters(true),
        [
            ("left".to_string(), 6, 4, 0, 4),
            ("right".to_string(), 6, 2, 0, 2)
        ]
    );
}

fn explain_lines(sql: &str, overrides: &[(&str, &str)]) -> Vec<String> {
    let overrides: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let text = optimizer::session::explain_script(sql, &overrides).unwrap();
    text.lines()
        .filter(|l| l.contains("Join("))
        .map(|l| l.trim_start_matches([' ', '+', '-', ':']).to_string())
        .collect()
}

#[test]
fn explain_names_async_state_on_the_regular_join() {
    let sql = script_for(&[
        (
            "k INT, v INT, w INT",
            "SELECT a.k, a.v, b.w FROM a LEFT JOIN b ON a.k = b.k AND a.v < b.w",
        ),
        (
            "v INT, w INT, x INT",
            "SELECT a.v, b.w, c.x FROM a JOIN b ON a.k = b.k JOIN c ON b.k = c.k",
        ),
    ]);
    let async_joins = |o: &[(&str, &str)]| {
        explain_lines(&sql, o)
            .into_iter()
            .filter(|l| l.contains("asyncState=[true]"))
            .collect::<Vec<_>>()
    };
    assert!(async_joins(&[]).is_empty());
    let on = async_joins(&[ASYNC]);
    let want = "Join(joinType=[LeftOuterJoin], where=[AND(=(k, k0), <(v, w))], \
                select=[k, v, k0, w], leftInputSpec=[NoUniqueKey], \
                rightInputSpec=[NoUniqueKey], asyncState=[true], \
                stateTtl=[left=0 ms (config), right=0 ms (config)], changelogMode=[I,UB,D])";
    assert_eq!(on[0], want, "{on:#?}");
    // Every binary join of the script (three).
    assert_eq!(async_joins(&[ASYNC]).len(), 3, "{on:#?}");
    // Mini-batch comes first, as in Flink's StreamExecJoin.
    assert!(async_joins(&[
        ASYNC,
        ("table.exec.mini-batch.enabled", "true"),
        ("table.exec.mini-batch.allow-latency", "1 s"),
        ("table.exec.mini-batch.size", "10"),
    ])
    .is_empty());
    // A MultiJoin takes the three-way chain: only the binary join keeps it.
    assert_eq!(
        async_joins(&[ASYNC, ("table.optimizer.multi-join.enabled", "true")]).len(),
        1
    );
}

#[test]
fn a_compiled_plan_keeps_async_state() {
    use optimizer::physical::{compiled_plan, plan_insert};
    use optimizer::session::{configs_per_insert, Action};
    let sql = script_for(&JOIN_ASYNC_QUERIES[..1]);
    let script = optimizer::sql::parse_script(&sql).unwrap();
    let json_for = |overrides: &[(String, String)]| {
        let mut out = Vec::new();
        for (action, config) in configs_per_insert(&script, overrides).unwrap() {
            let Action::Run(set) = action else { continue };
            for insert in set {
                let plan = plan_insert(&insert, &script.catalog, &config).unwrap();
                let json = compiled_plan::compile(&plan);
                let loaded = compiled_plan::load(&json, "p.json").unwrap();
                assert_eq!(compiled_plan::compile(&loaded), json);
                out.push(json);
            }
        }
        out
    };
    let on = json_for(&[(ASYNC.0.to_string(), ASYNC.1.to_string())]);
    let off = json_for(&[]);
    assert_eq!((on.len(), off.len()), (1, 1));
    let flag = |json: &str| json.matches("\"async_state\"").count();
    assert_eq!((flag(&on[0]), flag(&off[0])), (1, 0), "{}", on[0]);
}

#[test]
fn on_the_heap_and_with_a_state_ttl_async_state_goes_one_record_at_a_time() {
    let sql = script_for(JOIN_ASYNC_QUERIES);
    let sources = repeating_sources();
    let run_with = |backend: &str, ttl: Option<&str>, async_state: bool| {
        let mut o = vec![
            ("state.backend.type", backend.to_string()),
            ("lab.source.batch-size", "4".to_string()),
        ];
        if let Some(ttl) = ttl {
            o.push(("table.exec.state.ttl", ttl.to_string()));
        }
        if async_state {
            o.push((ASYNC.0, ASYNC.1.to_string()));
        }
        let (_, outcomes) = run_mem(&sql, &sources, &o, RunOptions::keep_all()).unwrap();
        outcomes
            .iter()
            .map(|o| (o.changelog.clone(), join_states(o)))
            .collect::<Vec<_>>()
    };
    // The same changelog and the same state accesses, counted alike.
    for (backend, ttl) in [
        ("hashmap", None),
        ("hashmap", Some("1 h")),
        ("rocksdb", Some("1 h")),
    ] {
        assert_eq!(
            run_with(backend, ttl, true),
            run_with(backend, ttl, false),
            "{backend}, TTL {ttl:?}"
        );
    }
}
