//! The optimizer's rules: one ordered list, each rule switched off by name
//! (`lab.optimizer.disabled-rules`) gives the plan without it, and the
//! rules the plan needs cannot be switched off.

use optimizer::config::Config;
use optimizer::physical::rules::PhysicalOptimizer;
use optimizer::session::explain_script_in;
use std::path::{Path, PathBuf};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

fn explain(script: &str, sets: &[(&str, &str)]) -> String {
    let sql = std::fs::read_to_string(examples().join(script)).unwrap();
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    explain_script_in(&sql, &examples(), &sets).unwrap()
}

#[test]
fn the_rules_run_in_one_listed_order() {
    assert_eq!(
        PhysicalOptimizer::new().names(),
        [
            "split_distinct_aggregate",
            "local_global_aggregate",
            "window_agg_phase",
            "multi_join",
            "sink_upsert_materializer",
            "delta_join",
            "update_before",
        ]
    );
    let mut c = Config::default();
    c.set("lab.optimizer.disabled-rules", " multi_join , delta_join")
        .unwrap();
    assert_eq!(
        PhysicalOptimizer::from_config(&c).unwrap().names(),
        [
            "split_distinct_aggregate",
            "local_global_aggregate",
            "window_agg_phase",
            "sink_upsert_materializer",
            "update_before",
        ]
    );
}

#[test]
fn a_rule_switched_off_by_name_leaves_the_plan_without_it() {
    let on = [("table.optimizer.multi-join.enabled", "true")];
    let with = explain("tenant_multijoin_10way.sql", &on);
    assert!(with.contains("MultiJoin("), "{with}");
    let without = explain(
        "tenant_multijoin_10way.sql",
        &[on[0], ("lab.optimizer.disabled-rules", "multi_join")],
    );
    assert!(!without.contains("MultiJoin("), "{without}");
    // The plan without the rule is the plan of binary joins.
    assert_eq!(without, explain("tenant_multijoin_10way.sql", &[]));

    let mini_batch = [
        ("table.exec.mini-batch.enabled", "true"),
        ("table.exec.mini-batch.allow-latency", "5 s"),
        ("table.exec.mini-batch.size", "5000"),
    ];
    let two_phase = explain("colors_local_global.sql", &mini_batch);
    assert!(two_phase.contains("LocalGroupAggregate("), "{two_phase}");
    let mut off = mini_batch.to_vec();
    off.push(("lab.optimizer.disabled-rules", "local_global_aggregate"));
    let one_phase = explain("colors_local_global.sql", &off);
    assert!(!one_phase.contains("LocalGroupAggregate("), "{one_phase}");
    assert!(one_phase.contains("strategy=[ONE_PHASE]"), "{one_phase}");
    assert!(one_phase.contains("miniBatchSize=[5000]"), "{one_phase}");

    let with = explain("campaign_delta_join.sql", &[]);
    assert!(with.contains("DeltaJoin("), "{with}");
    let without = explain(
        "campaign_delta_join.sql",
        &[("lab.optimizer.disabled-rules", "delta_join")],
    );
    assert_eq!(
        without,
        explain(
            "campaign_delta_join.sql",
            &[("table.optimizer.delta-join.strategy", "NONE")]
        )
    );
}

#[test]
fn unknown_and_required_rules_cannot_be_switched_off() {
    let err = explain_script_in(
        "CREATE TABLE t (k INT) WITH ('connector' = 'datagen');\nEXPLAIN SELECT k FROM t;",
        &examples(),
        &[(
            "lab.optimizer.disabled-rules".to_string(),
            "multi_jion".to_string(),
        )],
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("'lab.optimizer.disabled-rules' names no rule 'multi_jion'")
            && err.contains("split_distinct_aggregate, local_global_aggregate"),
        "{err}"
    );
    let mut c = Config::default();
    c.set("lab.optimizer.disabled-rules", "update_before")
        .unwrap();
    let err = PhysicalOptimizer::from_config(&c)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("rule 'update_before' cannot be switched off"),
        "{err}"
    );
}
