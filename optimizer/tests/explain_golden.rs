//! Golden EXPLAIN output of every script in `examples/`, in Flink's layout
//! (`lab explain`: each statement as `EXPLAIN CHANGELOG_MODE` prints it),
//! plus a few configurations that bring out mini-batch, local-global,
//! split distinct, MultiJoin, delta join and asynchronous state. The files are
//! `tests/golden/explain/<script>[@<variant>].txt` (`nexmark-<query>` for
//! `examples/nexmark/`); run with
//! `UPDATE_GOLDEN=1` to write them anew, then review the diff.
//!
//! Campaign scripts are templates: their `${name}` parameters are filled
//! with the values below (plans do not depend on them).

use optimizer::session::explain_script_in;
use std::path::{Path, PathBuf};

/// Values for the `${name}` parameters of the campaign scripts.
const PARAMS: &[(&str, &str)] = &[
    ("rows", "1000"),
    ("keys", "100"),
    ("skew", "1.1"),
    ("customers", "100"),
    ("users", "1000"),
    ("hot_share", "0.5"),
    ("changes", "1000"),
    ("update_ratio", "0.2"),
    ("tenants", "100"),
    ("rows_per_tenant", "2"),
    ("selective_tenants", "10"),
    ("events", "50000"),
    ("partitions", "100"),
    ("n", "10"),
    ("disorder", "2000"),
    ("windows", "10"),
    ("active", "10"),
    ("cache", "PARTIAL"),
    ("cache_rows", "100"),
];

/// `(script, variant, settings)`.
type Variant = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

/// Settings that exercise a strategy, per script.
const VARIANTS: &[Variant] = &[
    (
        "uv_split_distinct",
        "split-minibatch",
        &[
            ("table.optimizer.distinct-agg.split.enabled", "true"),
            ("table.exec.mini-batch.enabled", "true"),
            ("table.exec.mini-batch.allow-latency", "5 s"),
            ("table.exec.mini-batch.size", "5000"),
            ("parallelism.default", "4"),
        ],
    ),
    (
        "colors_local_global",
        "minibatch",
        &[
            ("table.exec.mini-batch.enabled", "true"),
            ("table.exec.mini-batch.allow-latency", "5 s"),
            ("table.exec.mini-batch.size", "5000"),
        ],
    ),
    (
        "clicks_per_user",
        "minibatch-one-phase",
        &[
            ("table.exec.mini-batch.enabled", "true"),
            ("table.exec.mini-batch.allow-latency", "5 s"),
            ("table.exec.mini-batch.size", "5000"),
            ("table.optimizer.agg-phase-strategy", "ONE_PHASE"),
        ],
    ),
    (
        "campaign_minibatch_join",
        "minibatch",
        &[
            ("table.exec.mini-batch.enabled", "true"),
            ("table.exec.mini-batch.allow-latency", "5 s"),
            ("table.exec.mini-batch.size", "5000"),
        ],
    ),
    (
        "campaign_minibatch_join",
        "async-state",
        &[("table.exec.async-state.enabled", "true")],
    ),
    (
        "tenant_multijoin_10way",
        "multijoin",
        &[("table.optimizer.multi-join.enabled", "true")],
    ),
    (
        "nexmark-q15",
        "split-minibatch",
        &[
            ("table.optimizer.distinct-agg.split.enabled", "true"),
            ("table.exec.mini-batch.enabled", "true"),
            ("table.exec.mini-batch.allow-latency", "5 s"),
            ("table.exec.mini-batch.size", "5000"),
        ],
    ),
    (
        "campaign_delta_join",
        "regular",
        &[("table.optimizer.delta-join.strategy", "NONE")],
    ),
    ("window_hop", "unsliced", &[("lab.window.slicing", "false")]),
    (
        "campaign_checkpoint_cost_joins",
        "multijoin",
        &[("table.optimizer.multi-join.enabled", "true")],
    ),
];

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/explain")
}

fn fill(sql: &str) -> String {
    let mut sql = sql.to_string();
    for (k, v) in PARAMS {
        sql = sql.replace(&format!("${{{k}}}"), v);
    }
    assert!(!sql.contains("'${"), "a parameter without a value");
    sql
}

/// Compares `text` with the golden file `name`, or writes it.
fn check(name: &str, text: &str, failures: &mut Vec<String>) {
    let path = golden_dir().join(format!("{name}.txt"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(golden_dir()).unwrap();
        std::fs::write(&path, text).unwrap();
        return;
    }
    match std::fs::read_to_string(&path) {
        Ok(want) if want == text => {}
        Ok(want) => {
            let line = want
                .lines()
                .zip(text.lines())
                .position(|(a, b)| a != b)
                .unwrap_or_else(|| want.lines().count().min(text.lines().count()));
            failures.push(format!(
                "{name}: differs from {} at line {}:\n  golden: {:?}\n  now:    {:?}",
                path.display(),
                line + 1,
                want.lines().nth(line).unwrap_or(""),
                text.lines().nth(line).unwrap_or("")
            ));
        }
        Err(e) => failures.push(format!("{name}: cannot read {}: {e}", path.display())),
    }
}

#[test]
fn every_example_explains_as_its_golden_file() {
    // `examples/*.sql` as `<stem>`, `examples/nexmark/*.sql` as
    // `nexmark-<stem>`.
    let mut scripts: Vec<(String, PathBuf)> = Vec::new();
    for (dir, prefix) in [(examples(), ""), (examples().join("nexmark"), "nexmark-")] {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|e| e == "sql") {
                let stem = p.file_stem().unwrap().to_string_lossy().to_string();
                scripts.push((format!("{prefix}{stem}"), p));
            }
        }
    }
    scripts.sort();
    assert!(scripts.len() >= 30, "the examples are where they were");
    let mut failures = Vec::new();
    let mut names = Vec::new();
    for (name, script) in &scripts {
        let name = name.clone();
        let base = script.parent().unwrap();
        let sql = fill(&std::fs::read_to_string(script).unwrap());
        let text = explain_script_in(&sql, base, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
        check(&name, &text, &mut failures);
        names.push(name.clone());
        for (_, variant, sets) in VARIANTS.iter().filter(|(s, _, _)| *s == name) {
            let sets: Vec<(String, String)> = sets
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let text = explain_script_in(&sql, base, &sets)
                .unwrap_or_else(|e| panic!("{name}@{variant}: {e}"));
            check(&format!("{name}@{variant}"), &text, &mut failures);
            names.push(format!("{name}@{variant}"));
        }
    }
    assert!(VARIANTS
        .iter()
        .all(|(s, v, _)| names.contains(&format!("{s}@{v}"))));
    // No golden file is left over from a script that is gone.
    if std::env::var_os("UPDATE_GOLDEN").is_none() {
        for f in std::fs::read_dir(golden_dir()).unwrap() {
            let f = f.unwrap().path();
            let stem = f.file_stem().unwrap().to_string_lossy().to_string();
            if !names.contains(&stem) {
                failures.push(format!("{}: no script explains into it", f.display()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n(UPDATE_GOLDEN=1 cargo test --release -p optimizer --test explain_golden rewrites them)",
        failures.join("\n")
    );
}
