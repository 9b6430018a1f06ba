//! The changelog example of Flink's "Dynamic Tables" page
//! (`examples/clicks_per_user.sql`): 120 clicks by 11 users.
//!
//! Golden files under `tests/golden/` pin the exact `+I/-U/+U/-D`
//! sequences. They were written by an independent model of Flink's
//! `GroupAggFunction` emission rules, not by this code.

use operators::changelog::RowKind;
use optimizer::session::{run_script, RunOptions};
use std::path::Path;

fn examples() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples"))
}

fn changelog_csv(outcome: &optimizer::session::InsertOutcome) -> String {
    let mut s = String::from("op");
    for n in outcome.plan.sink.table.schema.names() {
        s.push(',');
        s.push_str(&n);
    }
    s.push('\n');
    for c in &outcome.changelog {
        s.push_str(c.kind.short());
        for v in &c.row {
            s.push(',');
            s.push_str(&v.to_string());
        }
        s.push('\n');
    }
    s
}

fn run(overrides: &[(String, String)]) -> Vec<optimizer::session::InsertOutcome> {
    let sql = std::fs::read_to_string(examples().join("clicks_per_user.sql")).unwrap();
    run_script(
        &sql,
        examples(),
        overrides,
        RunOptions::keep_all(),
        &mut |_, _| {},
    )
    .unwrap()
}

#[test]
fn retract_sink_gets_229_rows_and_upsert_sink_120() {
    let out = run(&[]);
    assert_eq!(out.len(), 3);
    assert_eq!(out[0].report.input_rows, 120);
    let retract = out[0].sink_report();
    assert_eq!(retract.counts.total(), 229);
    assert_eq!(retract.counts.get(RowKind::Insert), 11);
    assert_eq!(retract.counts.get(RowKind::UpdateBefore), 109);
    assert_eq!(retract.counts.get(RowKind::UpdateAfter), 109);
    let upsert = out[1].sink_report();
    assert_eq!(upsert.counts.total(), 120);
    assert_eq!(upsert.counts.get(RowKind::UpdateBefore), 0);
    assert_eq!(
        retract.result, upsert.result,
        "both sinks materialise the same table"
    );
    assert_eq!(retract.result.as_ref().unwrap().len(), 11);
    let hist = out[2].sink_report();
    assert!(
        hist.counts.get(RowKind::Delete) > 0,
        "an emptied count group emits -D"
    );
}

/// A sink that keeps nothing but counts gets the same changes (its
/// aggregates then emit them without building rows), on both backends and
/// in parallel; the state counters are the same too.
#[test]
fn a_sink_that_only_counts_gets_the_same_changes() {
    let sql = std::fs::read_to_string(examples().join("clicks_per_user.sql")).unwrap();
    let counts_only = RunOptions {
        keep_changelog: false,
        materialize: false,
        ..Default::default()
    };
    for (backend, p) in [("hashmap", "1"), ("rocksdb", "1"), ("hashmap", "4")] {
        let set = [
            ("state.backend.type".to_string(), backend.to_string()),
            ("parallelism.default".to_string(), p.to_string()),
        ];
        let kept = run(&set);
        let counted = run_script(&sql, examples(), &set, counts_only, &mut |_, _| {}).unwrap();
        for (a, b) in kept.iter().zip(&counted) {
            let at = format!("{} on {backend} x{p}", a.sink);
            assert!(
                b.changelog.is_empty() && b.sink_report().result.is_none(),
                "{at}"
            );
            assert_eq!(a.sink_report().counts, b.sink_report().counts, "{at}");
            assert_eq!(a.report.state_reads(), b.report.state_reads(), "{at}");
            assert_eq!(a.report.state_writes(), b.report.state_writes(), "{at}");
        }
        assert_eq!(counted[0].sink_report().counts.total(), 229);
        assert_eq!(counted[1].sink_report().counts.total(), 120);
    }
}

#[test]
fn changelogs_match_the_golden_files() {
    let golden = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden"));
    for o in run(&[]) {
        let want = std::fs::read_to_string(golden.join(format!("{}.csv", o.sink))).unwrap();
        assert_eq!(changelog_csv(&o), want, "changelog of {}", o.sink);
    }
}

#[test]
fn same_result_on_rocksdb_and_in_parallel() {
    let base = run(&[]);
    for (backend, p) in [("rocksdb", "1"), ("hashmap", "4"), ("rocksdb", "4")] {
        let out = run(&[
            ("state.backend.type".into(), backend.into()),
            ("parallelism.default".into(), p.into()),
        ]);
        for (a, b) in base.iter().zip(&out) {
            assert_eq!(
                a.sink_report().result,
                b.sink_report().result,
                "{} on {backend} x{p}",
                a.sink
            );
            if p == "1" {
                // In parallel, updates of one count group arrive from several
                // subtasks, so the intermediate changelog may differ; the
                // result may not.
                assert_eq!(
                    a.sink_report().counts,
                    b.sink_report().counts,
                    "{} on {backend} x{p}",
                    a.sink
                );
            }
        }
    }
}

#[test]
fn a_group_aggregate_does_one_read_and_one_write_per_record() {
    for backend in ["hashmap", "rocksdb"] {
        let out = run(&[("state.backend.type".into(), backend.into())]);
        let agg = out[0]
            .report
            .stages
            .iter()
            .find(|s| s.name.starts_with("GroupAggregate"))
            .unwrap();
        let acc = &agg.states[0].metrics;
        assert_eq!(
            (acc.reads, acc.writes, acc.deletes),
            (120, 120, 0),
            "{backend}"
        );
        assert_eq!(acc.entries, 11, "{backend}");
    }
}
