//! Deduplication's changelogs and counters, pinned on both backends: keep
//! first and last on processing time and on a rowtime column, with and
//! without `-U`, and a state TTL (Flink's `DeduplicateFunctionHelper`).

use operators::changelog::Change;
use operators::operator::Operator;
use operators::rank::deduplicate::{DedupOrder, Deduplicate, DeduplicateSpec, Keep};
use operators::state::StateBackend;
use operators::value::Value;

fn backends() -> Vec<StateBackend> {
    vec![
        StateBackend::heap(),
        StateBackend::rocksdb(None).expect("rocksdb opens"),
    ]
}

/// Rows (key, value, ts): key a twice, b once, a again with an equal row.
fn input() -> Vec<Change> {
    [
        ("a", 1, 10),
        ("b", 2, 5),
        ("a", 3, 7),
        ("a", 3, 7),
        ("a", 4, 12),
    ]
    .iter()
    .map(|&(k, v, t)| Change::insert(vec![Value::str(k), Value::Int(v), Value::Ts(t)]))
    .collect()
}

fn spec(keep: Keep, order: DedupOrder, update_before: bool) -> DeduplicateSpec {
    DeduplicateSpec {
        key: vec![0],
        keep,
        order,
        generate_update_before: update_before,
        generate_insert: true,
        ttl_enabled: false,
        arity: 3,
    }
}

/// The changelog (one batch per row) and the counters, the same on both
/// backends.
fn run(spec: DeduplicateSpec) -> (Vec<String>, Vec<(&'static str, u64)>) {
    let mut seen = None;
    for backend in backends() {
        let mut op = Deduplicate::new(&backend, "1-Deduplicate", spec.clone()).unwrap();
        let mut out = Vec::new();
        for c in input() {
            op.process(0, vec![c], &mut out).unwrap();
        }
        let got = (
            out.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
            op.counters(),
        );
        if let Some(s) = &seen {
            assert_eq!(s, &got, "backends differ");
        }
        seen = Some(got);
    }
    seen.unwrap()
}

#[test]
fn keep_first_on_proctime_emits_only_inserts() {
    let (rows, counters) = run(spec(Keep::FirstRow, DedupOrder::ProcTime, true));
    assert_eq!(
        rows,
        [
            "+I[a, 1, 1970-01-01 00:00:00.010]",
            "+I[b, 2, 1970-01-01 00:00:00.005]"
        ]
    );
    assert_eq!(counters, [("rows_kept", 2), ("duplicates_dropped", 3)]);
}

#[test]
fn keep_last_on_proctime_retracts_the_kept_row_and_skips_an_equal_one() {
    let (rows, counters) = run(spec(Keep::LastRow, DedupOrder::ProcTime, true));
    assert_eq!(
        rows,
        [
            "+I[a, 1, 1970-01-01 00:00:00.010]",
            "+I[b, 2, 1970-01-01 00:00:00.005]",
            "-U[a, 1, 1970-01-01 00:00:00.010]",
            "+U[a, 3, 1970-01-01 00:00:00.007]",
            "-U[a, 3, 1970-01-01 00:00:00.007]",
            "+U[a, 4, 1970-01-01 00:00:00.012]"
        ]
    );
    assert_eq!(counters, [("rows_kept", 4), ("duplicates_dropped", 1)]);
}

#[test]
fn keep_last_without_update_before_is_an_upsert_stream() {
    let (rows, _) = run(spec(Keep::LastRow, DedupOrder::ProcTime, false));
    assert_eq!(
        rows,
        [
            "+I[a, 1, 1970-01-01 00:00:00.010]",
            "+I[b, 2, 1970-01-01 00:00:00.005]",
            "+U[a, 3, 1970-01-01 00:00:00.007]",
            "+U[a, 4, 1970-01-01 00:00:00.012]"
        ]
    );
    // With neither -U nor +I asked for, no state: every row is a +U.
    let mut s = spec(Keep::LastRow, DedupOrder::ProcTime, false);
    s.generate_insert = false;
    let (rows, _) = run(s);
    assert_eq!(rows.len(), 5);
    assert!(rows.iter().all(|r| r.starts_with("+U")));
}

#[test]
fn a_ttl_emits_an_equal_last_row_again() {
    let mut s = spec(Keep::LastRow, DedupOrder::ProcTime, true);
    s.ttl_enabled = true;
    let (rows, counters) = run(s);
    assert_eq!(rows.len(), 8);
    assert_eq!(counters, [("rows_kept", 5), ("duplicates_dropped", 0)]);
}

#[test]
fn keep_first_and_last_on_rowtime_follow_the_time_column() {
    let (rows, counters) = run(spec(Keep::FirstRow, DedupOrder::RowTime(2), true));
    // a@10, then a@7 is earlier: it replaces; the second a@7 and a@12 do not.
    assert_eq!(
        rows,
        [
            "+I[a, 1, 1970-01-01 00:00:00.010]",
            "+I[b, 2, 1970-01-01 00:00:00.005]",
            "-U[a, 1, 1970-01-01 00:00:00.010]",
            "+U[a, 3, 1970-01-01 00:00:00.007]"
        ]
    );
    assert_eq!(counters, [("rows_kept", 3), ("duplicates_dropped", 2)]);
    let (rows, counters) = run(spec(Keep::LastRow, DedupOrder::RowTime(2), true));
    // a@7 is earlier than a@10: dropped, twice; a@12 replaces.
    assert_eq!(
        rows,
        [
            "+I[a, 1, 1970-01-01 00:00:00.010]",
            "+I[b, 2, 1970-01-01 00:00:00.005]",
            "-U[a, 1, 1970-01-01 00:00:00.010]",
            "+U[a, 4, 1970-01-01 00:00:00.012]"
        ]
    );
    assert_eq!(counters, [("rows_kept", 3), ("duplicates_dropped", 2)]);
}

#[test]
fn an_update_in_the_input_is_a_bad_record() {
    let backend = StateBackend::heap();
    let mut op = Deduplicate::new(
        &backend,
        "1-Deduplicate",
        spec(Keep::FirstRow, DedupOrder::ProcTime, true),
    )
    .unwrap();
    let mut c = input().remove(0);
    c.kind = operators::changelog::RowKind::UpdateAfter;
    let err = op.process(0, vec![c], &mut Vec::new()).unwrap_err();
    assert!(err.is_bad_input());
    assert_eq!(
        err.to_string(),
        "Deduplicate takes an insert-only input, got +U[a, 1, 1970-01-01 00:00:00.010]"
    );
}
