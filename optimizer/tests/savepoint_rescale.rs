//! Rescaling: a savepoint taken at parallelism 4 restores at 1, 2 and 8,
//! and from the heap backend into RocksDB and back, to the final result of
//! a run never interrupted, for random inputs and cut points, over an
//! aggregate and a join, one record at a time, in mini-batch bundles or local-global,
//! a MultiJoin, a Top-N, and an aggregate whose keys expire (a state TTL). Each entry of the savepoint goes to the subtask
//! its key is routed to at the new parallelism.

use optimizer::session::{run_script, InsertOutcome, RunOptions, TakeSavepoint};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

fn agg(rows: u64, seed: u64) -> String {
    format!(
        "CREATE TABLE src (k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '{rows}',
  'fields.k.kind' = 'random', 'fields.k.min' = '1', 'fields.k.max' = '40',
  'fields.v.min' = '1', 'fields.v.max' = '100', 'seed' = '{seed}');
CREATE TABLE per_key (k BIGINT, cnt BIGINT, total BIGINT, mx BIGINT)
  WITH ('connector' = 'blackhole');
INSERT INTO per_key SELECT k, COUNT(*), SUM(v), MAX(v) FROM src GROUP BY k;"
    )
}

fn join(rows: u64, seed: u64) -> String {
    format!(
        "{}{}CREATE TABLE joined (tenant_id BIGINT, p0 STRING, p1 STRING)
  WITH ('connector' = 'blackhole');
INSERT INTO joined
SELECT t0.tenant_id, t0.payload, t1.payload FROM t0
LEFT JOIN t1 ON t0.tenant_id = t1.tenant_id;",
        tenant_table(0, rows, seed),
        tenant_table(1, rows, seed)
    )
}

/// The top 3 values per key, with their rank (an append-only Top-N).
fn top_n(rows: u64, seed: u64) -> String {
    format!(
        "CREATE TABLE src (k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '{rows}',
  'fields.k.kind' = 'random', 'fields.k.min' = '1', 'fields.k.max' = '40',
  'fields.v.min' = '1', 'fields.v.max' = '100', 'seed' = '{seed}');
CREATE TABLE top3 (k BIGINT, v BIGINT, rn BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO top3 SELECT k, v, rn FROM (
  SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM src
) WHERE rn <= 3;"
    )
}

/// Three tables LEFT JOINed on tenant_id, two rows per tenant in t1: one
/// MultiJoin with `table.optimizer.multi-join.enabled`.
fn multi_join(rows: u64, seed: u64) -> String {
    format!(
        "{}{}{}CREATE TABLE joined (tenant_id BIGINT, p0 STRING, p1 STRING, p2 STRING)
  WITH ('connector' = 'blackhole');
INSERT INTO joined
SELECT t0.tenant_id, t0.payload, t1.payload, t2.payload FROM t0
LEFT JOIN t1 ON t0.tenant_id = t1.tenant_id
LEFT JOIN t2 ON t0.tenant_id = t2.tenant_id;",
        tenant_table(0, rows, seed),
        tenant_table(1, rows, seed)
            .replace("'tenants' = '", "'rows-per-tenant' = '2', 'tenants' = '"),
        tenant_table(2, rows, seed)
    )
}

fn tenant_table(i: usize, rows: u64, seed: u64) -> String {
    format!(
        "CREATE TABLE t{i} (tenant_id BIGINT, row_id BIGINT, payload STRING,
  PRIMARY KEY (tenant_id, row_id) NOT ENFORCED) WITH (
  'connector' = 'tenant', 'tenants' = '{rows}', 'number-of-changes' = '{rows}',
  'update-ratio' = '0.5', 'payload-length' = '4', 'table-index' = '{i}', 'seed' = '{seed}');\n"
    )
}

/// 0: one record at a time; 1: mini-batch bundles of 20 records; 2: and
/// local-global aggregation.
fn strategy(which: u8) -> Vec<(String, String)> {
    let keys = [
        ("table.exec.mini-batch.enabled", "true"),
        ("table.exec.mini-batch.allow-latency", "1 h"),
        ("table.exec.mini-batch.size", "20"),
        ("table.optimizer.agg-phase-strategy", "TWO_PHASE"),
    ];
    let n = [0, 3, 4][which as usize];
    keys[..n]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn run(
    (sql, extra): (&str, &[(String, String)]),
    backend: &str,
    p: usize,
    take: Option<TakeSavepoint>,
    from: Option<&Path>,
) -> InsertOutcome {
    let set: Vec<(String, String)> = [
        ("state.backend.type", backend.to_string()),
        ("parallelism.default", p.to_string()),
        ("lab.clock", "deterministic".to_string()),
        ("lab.source.batch-size", "16".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .chain(extra.iter().cloned())
    .collect();
    let opts = RunOptions {
        take_savepoint: take,
        from_savepoint: from,
        ..RunOptions::keep_all()
    };
    let mut out = run_script(sql, Path::new("."), &set, opts, &mut |_, _| {})
        .unwrap_or_else(|e| panic!("{backend} x{p}: {e}"));
    assert_eq!(out.len(), 1);
    out.remove(0)
}

/// The final result, in a canonical order.
fn result(o: &InsertOutcome) -> Vec<String> {
    let mut rows: Vec<String> = o
        .sink_report()
        .result
        .as_ref()
        .expect("materialised")
        .iter()
        .map(|r| format!("{r:?}"))
        .collect();
    rows.sort();
    rows
}

fn savepoint(
    sql: (&str, &[(String, String)]),
    backend: &str,
    p: usize,
    dir: &Path,
    after_rows: u64,
    stop: bool,
    from: Option<&Path>,
) -> PathBuf {
    let take = TakeSavepoint {
        dir,
        after_rows,
        stop,
    };
    let o = run(sql, backend, p, Some(take), from);
    o.report.savepoint.clone().expect("a savepoint")
}

fn check(sql: (&str, &[(String, String)]), total_rows: u64, cut: f64, later: f64) {
    let whole = result(&run(sql, "hashmap", 1, None, None));
    let dir = tempfile::tempdir().unwrap();
    let first = (total_rows as f64 * cut) as u64;
    let at4 = savepoint(sql, "hashmap", 4, dir.path(), first, true, None);
    for (backend, p) in [("hashmap", 1), ("rocksdb", 2), ("hashmap", 8)] {
        let resumed = run(sql, backend, p, None, Some(&at4));
        assert_eq!(
            result(&resumed),
            whole,
            "restored at {backend} x{p} from {}",
            at4.display()
        );
    }
    // Heap into RocksDB, a second savepoint there, and back to the heap.
    let second = first + (total_rows as f64 * later) as u64;
    let again = tempfile::tempdir().unwrap();
    let on_rocksdb = savepoint(sql, "rocksdb", 4, again.path(), second, false, Some(&at4));
    let back = run(sql, "hashmap", 4, None, Some(&on_rocksdb));
    assert_eq!(
        result(&back),
        whole,
        "back on the heap from {}",
        on_rocksdb.display()
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn an_aggregate_s_savepoint_restores_at_any_parallelism_and_backend(
        rows in 100u64..600, seed in 0u64..1000, cut in 0.0f64..1.0, later in 0.0f64..0.5,
        which in 0u8..3,
    ) {
        check((&agg(rows, seed), &strategy(which)), rows, cut, later);
    }

    #[test]
    fn a_join_s_savepoint_restores_at_any_parallelism_and_backend(
        rows in 100u64..600, seed in 0u64..1000, cut in 0.0f64..1.0, later in 0.0f64..0.5,
        which in 0u8..3,
    ) {
        // Two sources of `rows` changes each.
        check((&join(rows, seed), &strategy(which)), 2 * rows, cut, later);
    }

    #[test]
    fn an_aggregate_with_a_ttl_restores_its_expiry_at_any_parallelism_and_backend(
        rows in 100u64..600, seed in 0u64..1000, cut in 0.0f64..1.0, later in 0.0f64..0.5,
    ) {
        // About 40 rows between two records of a key: many keys expire.
        let ttl = [("table.exec.state.ttl".to_string(), "20 ms".to_string())];
        check((&agg(rows, seed), &ttl), rows, cut, later);
    }

    #[test]
    fn a_top_n_s_savepoint_restores_at_any_parallelism_and_backend(
        rows in 100u64..600, seed in 0u64..1000, cut in 0.0f64..1.0, later in 0.0f64..0.5,
    ) {
        check((&top_n(rows, seed), &[]), rows, cut, later);
    }

    #[test]
    fn a_multi_join_s_savepoint_restores_at_any_parallelism_and_backend(
        rows in 100u64..400, seed in 0u64..1000, cut in 0.0f64..1.0, later in 0.0f64..0.5,
    ) {
        let multi_join_on = [(
            "table.optimizer.multi-join.enabled".to_string(),
            "true".to_string(),
        )];
        // Three sources of `rows` changes each.
        check((&multi_join(rows, seed), &multi_join_on), 3 * rows, cut, later);
    }
}
