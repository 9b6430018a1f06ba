//! `table.exec.sink.upsert-materialize`: when a sink's primary key is not
//! a key whose changes reach the sink in order, a SinkUpsertMaterializer
//! keys the result by the primary key (results: `equivalence.rs`).

use optimizer::session::explain_script;

const DDL: &str = "
CREATE TABLE a (k INT, v INT) WITH ('connector' = 'filesystem', 'path' = 'a.csv', 'format' = 'changelog-csv');
CREATE TABLE b (id INT, k INT, w INT, PRIMARY KEY (id) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = 'b.csv', 'format' = 'changelog-csv');
";

fn explain(insert: &str, sink_cols: &str, mode: &str) -> Result<String, String> {
    let sql = format!(
        "{DDL}CREATE TABLE s ({sink_cols}) WITH ('connector' = 'blackhole');\nINSERT INTO s {insert};"
    );
    explain_script(
        &sql,
        &[(
            "table.exec.sink.upsert-materialize".to_string(),
            mode.to_string(),
        )],
    )
    .map_err(|e| e.to_string())
}

/// A LEFT join on `k` whose unique key is b's `id`: an update of b that
/// changes `k` is retracted and re-added on different join subtasks.
const JOIN: &str = "SELECT b.id, b.w, t.n FROM b LEFT JOIN (SELECT k, COUNT(*) AS n FROM a GROUP BY k) AS t ON b.k = t.k";
const JOIN_SINK: &str = "id INT, w INT, n BIGINT, PRIMARY KEY (id) NOT ENFORCED";
const AGG: &str = "SELECT k, COUNT(*) AS n FROM a GROUP BY k";
const AGG_SINK: &str = "k INT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED";

#[test]
fn a_key_reordered_by_a_join_is_materialized() {
    let plan = explain(JOIN, JOIN_SINK, "AUTO").unwrap();
    // As Flink prints it: the materializer is part of the sink node.
    assert!(
        plan.contains(
            "== Optimized Physical Plan ==\n\
             Sink(table=[default_catalog.default_database.s], fields=[id, w, n], upsertMaterialize=[true], stateTtl=[0 ms (config)], changelogMode=[NONE])\n\
             +- Exchange(distribution=[hash[id]], changelogMode=[I,UB,D])\n"
        ),
        "{plan}"
    );
    assert!(
        plan.contains(
            "== Optimized Execution Plan ==\n\
             Sink(table=[default_catalog.default_database.s], fields=[id, w, n], upsertMaterialize=[true])\n\
             +- Exchange(distribution=[hash[id]])\n"
        ),
        "{plan}"
    );
}

#[test]
fn an_aggregate_keyed_sink_needs_no_materializer_unless_forced() {
    let plan = explain(AGG, AGG_SINK, "AUTO").unwrap();
    assert!(!plan.contains("upsertMaterialize"), "{plan}");
    assert!(
        plan.contains("GroupAggregate(groupBy=[k], select=[k, COUNT_RETRACT(*) AS n]"),
        "{plan}"
    );
    assert!(
        plan.contains("changelogMode=[I,UA,D])"),
        "no -U for an upsert sink: {plan}"
    );
    let forced = explain(AGG, AGG_SINK, "FORCE").unwrap();
    assert!(
        forced.contains("fields=[k, n], upsertMaterialize=[true]"),
        "{forced}"
    );
    // The materializer finds rows to retract by their -U.
    assert!(forced.contains("changelogMode=[I,UB,UA,D]"), "{forced}");
}

#[test]
fn none_refuses_a_sink_that_would_need_one() {
    let err = explain(JOIN, JOIN_SINK, "NONE").unwrap_err();
    assert!(err.contains("PRIMARY KEY (id)"), "{err}");
    assert!(
        err.contains("'table.exec.sink.upsert-materialize' = 'NONE'"),
        "{err}"
    );
    assert!(explain(AGG, AGG_SINK, "NONE").is_ok());
}

#[test]
fn a_bad_mode_names_the_key_and_the_values() {
    let err = explain(AGG, AGG_SINK, "SOMETIMES").unwrap_err();
    assert!(err.contains("table.exec.sink.upsert-materialize"), "{err}");
    assert!(
        err.contains("NONE") && err.contains("AUTO") && err.contains("FORCE"),
        "{err}"
    );
}
