//! Checkpoints in process: a run that takes a checkpoint every few hundred
//! rows, resumed from each of its checkpoints, emits exactly the rest of
//! the uninterrupted run's changelog (no change lost, none repeated) and
//! ends with its result, for aggregates (one at a time, mini-batch,
//! local-global, with the value maps of DISTINCT and retractable MIN/MAX)
//! Top-N (each strategy) and joins (regular, mini-batch, MultiJoin), with and
//! without a state TTL (entries expire after a resume as they would have),
//! on both backends, at parallelism 1 and 4. The checkpoints themselves are the same bytes on
//! every backend and parallelism (the format is canonical), incremental
//! RocksDB checkpoints too once read back from their files. A checkpoint
//! that is missing, cut short or corrupt is refused as bad input.

mod common;

use operators::checkpoint::{store, CheckpointStore};
use optimizer::session::{run_script, FromCheckpoint, InsertOutcome, RunError, RunOptions};
use std::path::Path;

const AGG: &str = "
CREATE TABLE src (k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '3000',
  'fields.k.kind' = 'random', 'fields.k.min' = '1', 'fields.k.max' = '200',
  'fields.v.min' = '1', 'fields.v.max' = '100', 'seed' = '7');
CREATE TABLE per_key (k BIGINT, cnt BIGINT, total BIGINT, mx BIGINT)
  WITH ('connector' = 'blackhole');
INSERT INTO per_key SELECT k, COUNT(*), SUM(v), MAX(v) FROM src GROUP BY k;
";

/// Keys by their count so far: the outer aggregate's input retracts, so
/// its MIN and MAX keep value maps, and so does its COUNT(DISTINCT).
const VALUE_MAPS: &str = "
CREATE TABLE src (k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '3000',
  'fields.k.kind' = 'random', 'fields.k.min' = '1', 'fields.k.max' = '200',
  'fields.v.min' = '1', 'fields.v.max' = '100', 'seed' = '7');
CREATE TABLE per_count (cnt BIGINT, keys BIGINT, lo BIGINT, hi BIGINT, totals BIGINT)
  WITH ('connector' = 'blackhole');
INSERT INTO per_count
SELECT cnt, COUNT(*), MIN(k), MAX(k), COUNT(DISTINCT total) FROM (
  SELECT k, COUNT(*) AS cnt, SUM(v) AS total FROM src GROUP BY k
) GROUP BY cnt;
";

/// The source of the Top-N scripts: 3000 rows over 200 keys.
macro_rules! ranked_source {
    () => {
        "
CREATE TABLE src (k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '3000',
  'fields.k.kind' = 'random', 'fields.k.min' = '1', 'fields.k.max' = '200',
  'fields.v.min' = '1', 'fields.v.max' = '100', 'seed' = '7');
"
    };
}

/// An insert-only input's top 3 per key with their rank (AppendFastStrategy).
const TOP3: &str = concat!(
    ranked_source!(),
    "CREATE TABLE top3 (k BIGINT, v BIGINT, rn BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO top3 SELECT k, v, rn FROM (
  SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM src
) WHERE rn <= 3;"
);

/// An insert-only input's best row per key (the Top-1 of AppendFastStrategy).
const TOP1: &str = concat!(
    ranked_source!(),
    "CREATE TABLE top1 (k BIGINT, v BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO top1 SELECT k, v FROM (
  SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM src
) WHERE rn = 1;"
);

/// The top 3 keys of each group by a SUM, which the planner does not
/// prove monotonic (RetractStrategy). `k` breaks ties: a group's rows come
/// from several aggregate subtasks, in another order at another
/// parallelism, and the checkpoints must be the same at every one.
const TOP_BY_SUM: &str = concat!(
    ranked_source!(),
    "CREATE TABLE by_sum (g BIGINT, k BIGINT, total BIGINT, rn BIGINT)
  WITH ('connector' = 'blackhole');
INSERT INTO by_sum SELECT g, k, total, rn FROM (
  SELECT g, k, total, ROW_NUMBER() OVER (PARTITION BY g ORDER BY total DESC, k) AS rn
  FROM (SELECT MOD(k, 10) AS g, k, SUM(v) AS total FROM src GROUP BY MOD(k, 10), k)
) WHERE rn <= 3;"
);

/// The top 3 keys of each group by a COUNT, which only grows
/// (UpdateFastStrategy); `k` breaks ties as above.
const TOP_BY_COUNT: &str = concat!(
    ranked_source!(),
    "CREATE TABLE by_count (g BIGINT, k BIGINT, cnt BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO by_count SELECT g, k, cnt FROM (
  SELECT g, k, cnt, ROW_NUMBER() OVER (PARTITION BY g ORDER BY cnt DESC, k) AS rn
  FROM (SELECT MOD(k, 10) AS g, k, COUNT(*) AS cnt FROM src GROUP BY MOD(k, 10), k)
) WHERE rn <= 3;"
);

/// Two upsert streams LEFT JOINed (`common/checkpoint_jobs.rs`).
const JOIN: &str = common::checkpoint_jobs::TENANT_LEFT_JOIN;

/// Three upsert streams LEFT JOINed on one key: a MultiJoin when
/// `table.optimizer.multi-join.enabled`. One row per key and input: on
/// the heap the rows of one key come out in the order of its map, which
/// depends on the map's history and is not checkpointed (docs/checkpoints.md).
const JOIN3: &str = "
CREATE TABLE t0 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '300', 'number-of-changes' = '600',
  'update-ratio' = '0.5', 'payload-length' = '4', 'table-index' = '0', 'seed' = '1');
CREATE TABLE t1 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '300', 'number-of-changes' = '600',
  'insert-order' = 'random', 'update-ratio' = '0.5', 'payload-length' = '4', 'table-index' = '1', 'seed' = '1');
CREATE TABLE t2 (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '300', 'number-of-changes' = '600',
  'update-ratio' = '0.5', 'payload-length' = '4', 'table-index' = '2', 'seed' = '1');
CREATE TABLE joined (tenant_id BIGINT, p0 STRING, p1 STRING, p2 STRING)
  WITH ('connector' = 'blackhole');
INSERT INTO joined
SELECT t0.tenant_id, t0.payload, t1.payload, t2.payload FROM t0
LEFT JOIN t1 ON t0.tenant_id = t1.tenant_id
LEFT JOIN t2 ON t0.tenant_id = t2.tenant_id;
";

const TTL: &str = "table.exec.state.ttl";

const MINI_BATCH: &[(&str, &str)] = &[
    ("table.exec.mini-batch.enabled", "true"),
    ("table.exec.mini-batch.allow-latency", "1 h"),
    ("table.exec.mini-batch.size", "50"),
];

/// A strategy: its name, script and settings.
type Strategy = (
    &'static str,
    &'static str,
    Vec<(&'static str, &'static str)>,
);

fn strategies() -> Vec<Strategy> {
    let two_phase = [
        MINI_BATCH,
        &[("table.optimizer.agg-phase-strategy", "TWO_PHASE")],
    ]
    .concat();
    vec![
        ("aggregate", AGG, vec![]),
        ("mini-batch aggregate", AGG, MINI_BATCH.to_vec()),
        ("local-global aggregate", AGG, two_phase),
        ("join", JOIN, vec![]),
        ("mini-batch join", JOIN, MINI_BATCH.to_vec()),
        (
            "multi-join",
            JOIN3,
            vec![("table.optimizer.multi-join.enabled", "true")],
        ),
        ("aggregate with value maps", VALUE_MAPS, vec![]),
        ("append-only Top-N", TOP3, vec![]),
        ("Top-1", TOP1, vec![]),
        ("retracting Top-N", TOP_BY_SUM, vec![]),
        ("updating Top-N", TOP_BY_COUNT, vec![]),
        // A key idle for 30 input rows is forgotten: its next record
        // counts from zero, after a resume as in the uninterrupted run.
        ("aggregate with a TTL", AGG, vec![(TTL, "30 ms")]),
        ("join with a TTL", JOIN, vec![(TTL, "1000 ms")]),
    ]
}

/// A backend as the test names it: `rocksdb-incremental` is RocksDB with
/// `execution.checkpointing.incremental`.
fn settings(extra: &[(&str, &str)], backend: &str, p: usize, dir: &Path) -> Vec<(String, String)> {
    let incremental = backend == "rocksdb-incremental";
    let backend = if incremental { "rocksdb" } else { backend };
    let mut s: Vec<(String, String)> = [
        (
            "execution.checkpointing.incremental",
            incremental.to_string(),
        ),
        ("state.backend.type", backend.to_string()),
        ("parallelism.default", p.to_string()),
        ("lab.clock", "deterministic".into()),
        ("lab.source.batch-size", "64".into()),
        ("execution.checkpointing.interval", "400 ms".into()),
        ("execution.checkpointing.dir", dir.display().to_string()),
        ("execution.checkpointing.num-retained", "100".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    s.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    s
}

fn run(
    sql: &str,
    set: &[(String, String)],
    from: Option<FromCheckpoint>,
) -> Result<InsertOutcome, RunError> {
    let opts = RunOptions {
        from_checkpoint: from,
        ..RunOptions::keep_all()
    };
    let mut out = run_script(sql, Path::new("."), set, opts, &mut |_, _| {})?;
    assert_eq!(out.len(), 1);
    Ok(out.remove(0))
}

#[test]
fn a_run_resumed_from_any_checkpoint_ends_as_the_uninterrupted_run() {
    for (name, sql, extra) in strategies() {
        // The state of checkpoint `id` of the first combination, which
        // every other combination must match byte for byte.
        let mut canonical: Vec<Vec<u8>> = Vec::new();
        for backend in ["hashmap", "rocksdb", "rocksdb-incremental"] {
            for p in [1, 4] {
                let at = format!("{name} on {backend} x{p}");
                let dir = tempfile::tempdir().unwrap();
                let whole = run(sql, &settings(&extra, backend, p, dir.path()), None).unwrap();
                if extra.iter().any(|(k, _)| *k == TTL) && backend == "hashmap" && p == 1 {
                    // The TTL does expire entries in this run.
                    let kept: Vec<_> = extra.iter().filter(|(k, _)| *k != TTL).copied().collect();
                    let ttl_less = tempfile::tempdir().unwrap();
                    let kept =
                        run(sql, &settings(&kept, backend, p, ttl_less.path()), None).unwrap();
                    assert_ne!(kept.changelog, whole.changelog, "{at}: nothing expired");
                }
                let ids = CheckpointStore::new(dir.path(), 1).completed().unwrap();
                assert!(ids.len() >= 3, "{at}: {} checkpoint(s)", ids.len());
                assert_eq!(whole.report.checkpoints.taken as usize, ids.len(), "{at}");
                for (i, &id) in ids.iter().enumerate() {
                    let path = dir.path().join(format!("chk-{id}"));
                    let c = store::read(&path).unwrap();
                    // Operator state and sink results, without the
                    // executor's clock and watermarks and the sink's
                    // counts (a bundle folds differently per subtask).
                    let mut state = c.clone();
                    state.runtime.clear();
                    for s in &mut state.sinks {
                        s.counts = [0; 4];
                    }
                    let bytes = state.encode();
                    match canonical.get(i) {
                        Some(b) => assert!(*b == bytes, "{at}: checkpoint {id} differs"),
                        None => canonical.push(bytes),
                    }
                    let before: u64 = c.sinks[0].counts.iter().sum();
                    let again = tempfile::tempdir().unwrap();
                    let resumed = run(
                        sql,
                        &settings(&extra, backend, p, again.path()),
                        Some(FromCheckpoint::Path(&path)),
                    )
                    .unwrap();
                    assert_eq!(
                        resumed.changelog,
                        whole.changelog[before as usize..],
                        "{at}: resumed from checkpoint {id}"
                    );
                    assert_eq!(
                        resumed.sink_report().result,
                        whole.sink_report().result,
                        "{at}: result resumed from checkpoint {id}"
                    );
                    assert_eq!(
                        resumed.sink_report().counts,
                        whole.sink_report().counts,
                        "{at}: counts resumed from checkpoint {id}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_missing_short_or_corrupt_checkpoint_is_refused_as_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let set = settings(&[], "hashmap", 1, dir.path());
    run(AGG, &set, None).unwrap();
    let ids = CheckpointStore::new(dir.path(), 1).completed().unwrap();
    let file = dir.path().join(format!("chk-{}", ids[0])).join("_metadata");
    let good = std::fs::read(&file).unwrap();

    let refused = |from: FromCheckpoint, what: &str| {
        let e = run(AGG, &set, Some(from))
            .err()
            .unwrap_or_else(|| panic!("{what}: ran"));
        assert_eq!(e.exit_code(), 2, "{what}: {e}");
        e.to_string()
    };
    let missing = dir.path().join("chk-999");
    let m = refused(FromCheckpoint::Path(&missing), "missing");
    assert!(
        m.contains("no checkpoint at") && m.contains("chk-999"),
        "{m}"
    );

    std::fs::write(&file, &good[..good.len() / 2]).unwrap();
    let m = refused(FromCheckpoint::Path(&file), "truncated");
    assert!(m.contains("truncated"), "{m}");

    let mut bad = good.clone();
    let at = bad.len() - 3;
    bad[at] ^= 0x40;
    std::fs::write(&file, &bad).unwrap();
    let m = refused(FromCheckpoint::Path(&file), "corrupt");
    assert!(m.contains("checksum"), "{m}");

    std::fs::write(&file, b"not a checkpoint").unwrap();
    let m = refused(FromCheckpoint::Path(&file), "garbage");
    assert!(m.contains("bad header"), "{m}");

    // `latest` in a directory with no completed checkpoint.
    let empty = tempfile::tempdir().unwrap();
    let set = settings(&[], "hashmap", 1, empty.path());
    let e = run(AGG, &set, Some(FromCheckpoint::Latest)).err().unwrap();
    assert_eq!(e.exit_code(), 2, "{e}");
    assert!(e.to_string().contains("no completed checkpoint"), "{e}");

    // A checkpoint of another job.
    std::fs::write(&file, &good).unwrap();
    let e = run(JOIN, &set, Some(FromCheckpoint::Path(&file)))
        .err()
        .unwrap();
    assert_eq!(e.exit_code(), 2, "{e}");
    assert!(e.to_string().contains("does not fit this job"), "{e}");
}

/// The uids a run's checkpoint files its operators' state under.
fn uids(sql: &str, extra: &[(&str, &str)]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let set = settings(extra, "hashmap", 1, dir.path());
    let sql = sql.replace("${dir}", &dir.path().display().to_string());
    let opts = RunOptions::keep_all();
    run_script(&sql, dir.path(), &set, opts, &mut |_, _| {}).unwrap();
    let ids = CheckpointStore::new(dir.path(), 1).completed().unwrap();
    let c = store::read(&dir.path().join(format!("chk-{}", ids[0]))).unwrap();
    c.operators.keys().cloned().collect()
}

#[test]
fn operators_get_flink_s_uids_from_compiled_plans_or_when_always_asked() {
    // A job planned from SQL: the executor's uid, from the operator's
    // place and description.
    let from_sql = uids(AGG, &[]);
    assert_eq!(from_sql.len(), 1);
    assert!(from_sql[0].starts_with("0_GroupAggregate("), "{from_sql:?}");
    // Asked always: `<id>_<transformation>` with the compiled-plan id.
    assert_eq!(
        uids(AGG, &[("table.exec.uid.generation", "ALWAYS")]),
        ["2_group-aggregate"]
    );
    assert_eq!(
        uids(
            AGG,
            &[
                ("table.exec.uid.generation", "ALWAYS"),
                ("table.exec.uid.format", "<id>_<type>_<version>")
            ]
        ),
        ["2_stream-exec-group-aggregate_1"]
    );
    assert_eq!(
        uids(JOIN, &[("table.exec.uid.generation", "ALWAYS")]),
        ["3_join"]
    );
    // From a compiled plan, by default (PLAN_ONLY).
    let (tables, insert) = AGG.split_at(AGG.find("INSERT").unwrap());
    let compiled = format!("{tables}COMPILE PLAN 'p.json' FOR {insert}EXECUTE PLAN 'p.json';");
    assert_eq!(uids(&compiled, &[]), ["2_group-aggregate"]);
    assert_eq!(
        uids(&compiled, &[("table.exec.uid.generation", "DISABLED")]).len(),
        1
    );
    assert!(
        uids(&compiled, &[("table.exec.uid.generation", "DISABLED")])[0]
            .starts_with("0_GroupAggregate(")
    );
}
