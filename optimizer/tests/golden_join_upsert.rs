//! A join feeding an upsert sink emits no `-U` (Flink's upsert-key rule,
//! `physical/rules/update_before.rs`): `examples/join_into_upsert_sink.sql`
//! joins two aggregates per user over a changelog with deletes.
//!
//! The golden file pins the upsert sink's exact `+I/+U/-D` sequence. It is
//! checked against an independent derivation too: the same query into a
//! sink without a key gets the retract changelog, and dropping its `-U`
//! rows must give exactly the upsert changelog (each `+U` replaces the row
//! the dropped `-U` retracted, under the same key).

use operators::changelog::RowKind;
use operators::value::Value;
use optimizer::session::{explain_script_in, run_script, InsertOutcome, RunOptions};
use std::path::Path;

fn examples() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples"))
}

fn sql() -> String {
    std::fs::read_to_string(examples().join("join_into_upsert_sink.sql")).unwrap()
}

fn run(overrides: &[(&str, &str)]) -> Vec<InsertOutcome> {
    let overrides: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    run_script(
        &sql(),
        examples(),
        &overrides,
        RunOptions::keep_all(),
        &mut |_, _| {},
    )
    .unwrap()
}

fn changelog_csv(kinds_and_rows: impl Iterator<Item = (RowKind, Vec<Value>)>) -> String {
    let mut s = String::from("op,user_id,clicks,max_dwell\n");
    for (kind, row) in kinds_and_rows {
        s.push_str(kind.short());
        for v in &row {
            s.push(',');
            s.push_str(&v.to_string());
        }
        s.push('\n');
    }
    s
}

fn changelog(o: &InsertOutcome) -> String {
    changelog_csv(o.changelog.iter().map(|c| (c.kind, c.row.clone())))
}

/// One record per source batch, one subtask: the order is Flink's.
const ONE_BY_ONE: [(&str, &str); 1] = [("lab.source.batch-size", "1")];

#[test]
fn the_upsert_sink_gets_no_update_before() {
    let out = run(&ONE_BY_ONE);
    let (upsert, retract) = (&out[0], &out[1]);
    let golden = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/user_activity_upsert.csv"
    ));
    assert_eq!(changelog(upsert), std::fs::read_to_string(golden).unwrap());
    let counts = &upsert.sink_report().counts;
    assert_eq!(counts.get(RowKind::UpdateBefore), 0);
    assert!(counts.get(RowKind::UpdateAfter) > 0 && counts.get(RowKind::Delete) > 0);
    assert!(retract.sink_report().counts.get(RowKind::UpdateBefore) > 0);
    let without_ub = changelog_csv(
        retract
            .changelog
            .iter()
            .filter(|c| c.kind != RowKind::UpdateBefore)
            .map(|c| (c.kind, c.row.clone())),
    );
    assert_eq!(changelog(upsert), without_ub);
}

#[test]
fn both_sinks_hold_the_batch_join_everywhere() {
    let s = |v: &str| Value::Str(v.into());
    let want = vec![
        vec![s("u1"), Value::Int(2), Value::Int(10)],
        vec![s("u2"), Value::Int(1), Value::Int(7)],
        vec![s("u3"), Value::Int(1), Value::Int(9)],
    ];
    for backend in ["hashmap", "rocksdb"] {
        for p in ["1", "4"] {
            for batch in ["1", "1024"] {
                for mini_batch in ["false", "true"] {
                    let out = run(&[
                        ("state.backend.type", backend),
                        ("parallelism.default", p),
                        ("lab.source.batch-size", batch),
                        ("table.exec.mini-batch.enabled", mini_batch),
                        ("table.exec.mini-batch.allow-latency", "1 s"),
                        ("table.exec.mini-batch.size", "3"),
                    ]);
                    for o in &out {
                        let at = format!(
                            "{} on {backend} x{p}, batch {batch}, mini-batch {mini_batch}",
                            o.sink
                        );
                        assert_eq!(o.sink_report().result.as_ref(), Some(&want), "{at}");
                        assert!(o.sink_report().negative_rows.is_empty(), "{at}");
                    }
                    // (A mini-batch join folds bundles that need the -U.)
                    if mini_batch == "false" {
                        let ub = out[0].sink_report().counts.get(RowKind::UpdateBefore);
                        assert_eq!(ub, 0);
                    }
                }
            }
        }
    }
}

#[test]
fn explain_shows_the_join_without_update_before() {
    let text = explain_script_in(&sql(), examples(), &[]).unwrap();
    let joins: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("+- Join(") && l.contains("changelogMode"))
        .collect();
    assert_eq!(joins.len(), 2, "{text}");
    assert!(
        joins[0].ends_with("changelogMode=[I,UA,D])"),
        "{}",
        joins[0]
    );
    assert!(
        joins[1].ends_with("changelogMode=[I,UB,UA,D])"),
        "{}",
        joins[1]
    );
}

/// The changelog mode of the first node named `name` in the physical plan
/// of `query` into an upsert sink keyed on `k`.
fn mode_of(name: &str, query: &str, columns: &str) -> String {
    let sql = format!(
        "CREATE TABLE a (k INT, v INT) WITH ('connector' = 'filesystem', 'path' = 'a.csv', 'format' = 'changelog-csv');
         CREATE TABLE b (k INT, w INT) WITH ('connector' = 'filesystem', 'path' = 'b.csv', 'format' = 'changelog-csv');
         CREATE TABLE o ({columns}, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'blackhole');
         INSERT INTO o {query};"
    );
    let text = optimizer::session::explain_script(&sql, &[]).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains(&format!("- {name}(")) && l.contains("changelogMode="))
        .unwrap_or_else(|| panic!("no {name} in {text}"));
    line[line.rfind("changelogMode=").unwrap()..].to_string()
}

const AGGS: &str = "(SELECT k, COUNT(*) AS n FROM a GROUP BY k) AS t \
                    JOIN (SELECT k, MAX(w) AS mx FROM b GROUP BY k) AS u";

#[test]
fn a_join_or_filter_that_needs_update_before_plans_the_query_with_it() {
    let cols = "k INT, n BIGINT, mx INT";
    let q = |on: &str| format!("SELECT t.k, t.n, u.mx FROM {AGGS} ON {on}");
    assert_eq!(
        mode_of("Join", &q("t.k = u.k"), cols),
        "changelogMode=[I,UA,D])"
    );
    // A residual on non-key columns would leave a pair the new version no
    // longer matches in the sink: the whole query emits -U.
    assert_eq!(
        mode_of("Join", &q("t.k = u.k AND t.n < u.mx"), cols),
        "changelogMode=[I,UB,UA,D])"
    );
    assert_eq!(
        mode_of("GroupAggregate", &q("t.k = u.k AND t.n < u.mx"), cols),
        "changelogMode=[I,UB,UA,D])"
    );
    // Flink's filter rule (FLINK-9528): a filter on an aggregated value.
    let agg = "SELECT k, n FROM (SELECT k, COUNT(*) AS n FROM a GROUP BY k) AS t";
    assert_eq!(
        mode_of(
            "GroupAggregate",
            &format!("{agg} WHERE n < 3"),
            "k INT, n BIGINT"
        ),
        "changelogMode=[I,UB,UA,D])"
    );
    assert_eq!(
        mode_of(
            "GroupAggregate",
            &format!("{agg} WHERE k > 0"),
            "k INT, n BIGINT"
        ),
        "changelogMode=[I,UA,D])"
    );
}
