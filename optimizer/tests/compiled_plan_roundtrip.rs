//! Every plan the lab can compile round-trips: compiled to JSON, read back
//! (and compiled again to the same JSON), run with `EXECUTE PLAN`, it gives
//! exactly the changelog and result of running its INSERT directly. Over
//! every shipped example (templates filled, inputs cut small) and over the
//! property tests' random inputs and queries (`common/queries.rs`) under
//! the configurations that change their plans, MultiJoin and delta join
//! included.

mod common;

use common::queries::{
    agg_variants, delta_inputs, inputs, join_variants, script_for, AGG_QUERIES, DELTA_DDL,
    JOIN_QUERIES, MATERIALIZED_QUERIES, OUTER_JOIN_QUERIES, QUERIES, UNION_QUERIES,
};
use optimizer::logical::Statement;
use optimizer::physical::compiled_plan;
use optimizer::physical::job::{ConnectorSources, SourceProvider};
use optimizer::physical::plan_insert;
use optimizer::session::{configs_per_insert, run_parsed, Action, RunOptions};
use optimizer::sql::{parse_script, Script};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

/// Compiles every INSERT of `sql` under `overrides` into `dir`, and checks
/// each plan: it reads back into the same JSON, and `EXECUTE PLAN` of it
/// emits what the INSERT emits run directly. Returns the plans checked.
fn round_trip(
    sql: &str,
    base: &Path,
    dir: &Path,
    sources: &dyn SourceProvider,
    overrides: &[(String, String)],
) -> Result<usize, String> {
    let script = parse_script(sql).map_err(|e| e.to_string())?;
    let mut checked = 0;
    for (action, config) in configs_per_insert(&script, overrides).map_err(|e| e.to_string())? {
        let Action::Run(set) = action else {
            continue;
        };
        for insert in set {
            let plan = plan_insert(&insert, &script.catalog, &config).map_err(|e| e.to_string())?;
            let json = compiled_plan::compile(&plan);
            let loaded = compiled_plan::load(&json, "p.json")
                .map_err(|e| format!("INSERT INTO {}: {e}\n{json}", insert.sink))?;
            if compiled_plan::compile(&loaded) != json {
                return Err(format!(
                    "INSERT INTO {}: compiles back otherwise",
                    insert.sink
                ));
            }
            let path = dir.join(format!("plan{checked}.json"));
            std::fs::write(&path, &json).unwrap();
            let run = |statement: Statement, overrides: &[(String, String)]| {
                let one = Script {
                    statements: vec![statement],
                    catalog: script.catalog.clone(),
                    positions: vec![(1, 1)],
                };
                run_parsed(
                    &one,
                    &one.catalog,
                    sources,
                    base,
                    overrides,
                    RunOptions::keep_all(),
                    &mut |_, _| {},
                )
                .map_err(|e| format!("INSERT INTO {}: {e}", insert.sink))
            };
            let direct = run(Statement::Insert(insert.clone()), &config.explicitly_set())?;
            // The plan carries its settings; the session only says where
            // state lives.
            let session: Vec<(String, String)> = config
                .explicitly_set()
                .into_iter()
                .filter(|(k, _)| k == "state.backend.type" || k == "lab.state.dir")
                .collect();
            let executed = run(
                Statement::ExecutePlan {
                    path: path.to_string_lossy().into_owned(),
                    if_exists: false,
                },
                &session,
            )?;
            let (d, e) = (&direct[0], &executed[0]);
            if d.changelog != e.changelog || d.sink_report().result != e.sink_report().result {
                return Err(format!(
                    "INSERT INTO {}: EXECUTE PLAN emits otherwise ({} rows, not {}) under {overrides:?}",
                    insert.sink,
                    e.changelog.len(),
                    d.changelog.len()
                ));
            }
            checked += 1;
        }
    }
    Ok(checked)
}

/// Deterministic runs (no wall-clock bundle closes), state in memory
/// where the machine allows.
fn settings(extra: &[(&str, String)]) -> Vec<(String, String)> {
    let mut o = vec![("lab.clock".to_string(), "deterministic".to_string())];
    if Path::new("/dev/shm").is_dir() {
        o.push(("lab.state.dir".to_string(), "/dev/shm".to_string()));
    }
    o.extend(extra.iter().map(|(k, v)| (k.to_string(), v.clone())));
    o
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

/// Values for the `${name}` parameters of the campaign scripts (small).
const PARAMS: &[(&str, &str)] = &[
    ("rows", "300"),
    ("keys", "20"),
    ("skew", "1.1"),
    ("customers", "30"),
    ("users", "50"),
    ("hot_share", "0.5"),
    ("changes", "20"),
    ("update_ratio", "0.2"),
    ("tenants", "20"),
    ("rows_per_tenant", "2"),
    ("selective_tenants", "5"),
    ("events", "3000"),
    ("n", "3"),
    ("partitions", "4"),
    ("disorder", "2000"),
    ("windows", "10"),
    ("active", "10"),
    ("cache", "PARTIAL"),
    ("cache_rows", "100"),
];

/// Generator options cut small, with their largest value.
const CUTS: &[(&str, u64)] = &[("number-of-rows", 300), ("tenants", 20)];

/// The script with its parameters filled and every generated table cut
/// small.
fn small(sql: &str) -> String {
    let mut sql = sql.to_string();
    for (k, v) in PARAMS {
        sql = sql.replace(&format!("${{{k}}}"), v);
    }
    for (option, most) in CUTS {
        let key = format!("'{option}'");
        let mut out = String::new();
        let mut rest = sql.as_str();
        while let Some(at) = rest.find(&key) {
            let (head, tail) = rest.split_at(at + key.len());
            out.push_str(head);
            let value = tail.find('\'').and_then(|open| {
                let close = open + 1 + tail[open + 1..].find('\'')?;
                Some((open, close, tail[open + 1..close].parse::<u64>().ok()?))
            });
            match value {
                Some((open, close, n)) if n > *most => {
                    out.push_str(&tail[..=open]);
                    out.push_str(&most.to_string());
                    rest = &tail[close..];
                }
                _ => rest = tail,
            }
        }
        out.push_str(rest);
        sql = out;
    }
    sql
}

#[test]
fn every_example_round_trips_through_a_compiled_plan() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base");
    std::fs::create_dir_all(base.join("data")).unwrap();
    std::fs::copy(examples().join("clicks.csv"), base.join("clicks.csv")).unwrap();
    for csv in [
        "bids.csv",
        "interval_left.csv",
        "interval_right.csv",
        "window_join_left.csv",
        "window_join_right.csv",
        "user_activity_log.csv",
        "supplier_bids.csv",
        "group_window_late_fire.csv",
        "lookup_users.csv",
        "lookup_orders.csv",
    ] {
        std::fs::copy(examples().join(csv), base.join(csv)).unwrap();
    }
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(examples())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sql"))
        .collect();
    // (kv_csv_gen writes the file kv_group_agg reads.)
    scripts.sort();
    let sources = ConnectorSources {
        base_dir: base.clone(),
    };
    let mut total = 0;
    let mut failures = Vec::new();
    for script in &scripts {
        let name = script.file_stem().unwrap().to_string_lossy().to_string();
        let sql = small(&std::fs::read_to_string(script).unwrap());
        for variant in [
            vec![],
            vec![
                ("table.exec.mini-batch.enabled", "true".to_string()),
                ("table.exec.mini-batch.allow-latency", "1 s".to_string()),
                ("table.exec.mini-batch.size", "7".to_string()),
                ("table.optimizer.multi-join.enabled", "true".to_string()),
                (
                    "table.optimizer.distinct-agg.split.enabled",
                    "true".to_string(),
                ),
                ("parallelism.default", "3".to_string()),
            ],
        ] {
            match round_trip(&sql, &base, dir.path(), &sources, &settings(&variant)) {
                Ok(n) => total += n,
                Err(e) => failures.push(format!("{name} {variant:?}: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(total >= 40, "only {total} plans checked");
}

/// A list of `(sink columns, query)`.
type Queries = &'static [(&'static str, &'static str)];
/// Configuration overrides.
type Settings = Vec<(&'static str, String)>;

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    #[test]
    fn random_inputs_and_queries_round_trip_through_compiled_plans(
        sources in inputs(),
        batch in prop_oneof![Just(1usize), Just(1024)],
        p in prop_oneof![Just(1usize), Just(4)],
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut variants: Vec<(Queries, Settings)> = vec![
            (QUERIES, vec![]),
            (MATERIALIZED_QUERIES, vec![("table.exec.sink.upsert-materialize", "FORCE".to_string())]),
        ];
        variants.extend(agg_variants().into_iter().step_by(3).map(|v| (AGG_QUERIES, v)));
        variants.extend(join_variants().into_iter().map(|v| (JOIN_QUERIES, v)));
        // FULL and RIGHT joins, one record at a time and in mini-batches.
        variants.extend(join_variants().into_iter().step_by(3).map(|v| (OUTER_JOIN_QUERIES, v)));
        variants.push((UNION_QUERIES, vec![]));
        for (i, (queries, variant)) in variants.into_iter().enumerate() {
            let mut extra = variant;
            extra.push(("parallelism.default", p.to_string()));
            extra.push(("lab.source.batch-size", batch.to_string()));
            if i % 4 == 1 {
                extra.push(("state.backend.type", "rocksdb".to_string()));
            }
            let checked = round_trip(&script_for(queries), Path::new("."), dir.path(), &sources, &settings(&extra))
                .map_err(TestCaseError::fail)?;
            prop_assert_eq!(checked, queries.len());
        }
    }

    #[test]
    fn delta_joins_round_trip_through_compiled_plans(
        sources in delta_inputs(),
        read_ahead in prop_oneof![Just(0usize), Just(2)],
    ) {
        let dir = tempfile::tempdir().unwrap();
        let extra = [
            ("lab.delta-join.source-read-ahead", read_ahead.to_string()),
            ("table.optimizer.delta-join.strategy", "FORCE".to_string()),
        ];
        let checked = round_trip(DELTA_DDL, Path::new("."), dir.path(), &sources, &settings(&extra))
            .map_err(TestCaseError::fail)?;
        prop_assert_eq!(checked, 1);
    }
}
