//! The heap backend's typed aggregate path (packed accumulators, `operators/src/agg/acc_store.rs`)
//! against the general path, on the heap and on RocksDB (which has no
//! typed path): on random changelogs, with NULLs, doubles (-0.0 and NaN
//! among them), integers meeting doubles, values the typed path declines,
//! `FILTER` flags, retractions of rows never added, and MIN/MAX over
//! insert-only inputs, both emit exactly the same changelog, record by
//! record, and count the same state accesses; one record at a time, in
//! mini-batches, and as the global half of a local-global aggregate.
//! Told that only the kinds of its output are observed, either path emits
//! the same changes, in the same order, with empty rows.

use operators::agg::{AggKind, AggSpec, GroupAggregateOperator, LocalAggregateOperator};
use operators::changelog::{Change, RowKind};
use operators::operator::{Emission, Operator};
use operators::state::{StateBackend, StateMetrics};
use operators::value::{DataType, Value};
use proptest::prelude::*;

/// Input rows: `[key, a (BIGINT), b (DOUBLE), flag (BOOLEAN)]`.
fn value_a() -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => (-5i64..5).prop_map(Value::Int),
        1 => Just(Value::Null),
        // An integer column meeting a double, and a value no sum takes.
        1 => Just(Value::Double(0.5)),
        1 => Just(Value::str("x")),
    ]
}

fn value_b() -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => (-4i32..4).prop_map(|x| Value::Double(f64::from(x) * 0.25)),
        1 => Just(Value::Double(-0.0)),
        1 => Just(Value::Double(f64::NAN)),
        1 => Just(Value::Null),
        1 => (-3i64..3).prop_map(Value::Int),
    ]
}

/// A change; only inserts when `insert_only`.
fn change(insert_only: bool) -> impl Strategy<Value = Change> {
    (
        0i64..4,
        value_a(),
        value_b(),
        any::<bool>(),
        prop_oneof![3 => Just(true), 1 => Just(insert_only)],
    )
        .prop_map(|(k, a, b, flag, add)| {
            let kind = if add {
                RowKind::Insert
            } else {
                RowKind::Delete
            };
            Change::new(kind, vec![Value::Int(k), a, b, Value::Bool(flag)])
        })
}

fn spec(kind: AggKind, arg: Option<usize>, filter: bool, result_type: DataType) -> AggSpec {
    AggSpec {
        kind,
        arg,
        distinct: false,
        filter: filter.then_some(3),
        result_type,
    }
}

/// One or two calls the typed path takes (a key and the accumulator of
/// three calls no longer pack in a bucket); MIN/MAX only over an
/// insert-only input (an updating one keeps a value map).
fn calls(insert_only: bool) -> impl Strategy<Value = Vec<AggSpec>> {
    let kinds = if insert_only { 10 } else { 6 };
    let call = (0usize..kinds, any::<bool>()).prop_map(|(c, filter)| match c {
        0 => spec(AggKind::CountStar, None, filter, DataType::BigInt),
        1 => spec(AggKind::Count, Some(1), filter, DataType::BigInt),
        2 => spec(AggKind::Sum, Some(1), filter, DataType::BigInt),
        3 => spec(AggKind::Sum, Some(2), filter, DataType::Double),
        4 => spec(AggKind::Avg, Some(1), filter, DataType::BigInt),
        5 => spec(AggKind::Avg, Some(2), filter, DataType::Double),
        6 => spec(AggKind::Min, Some(1), filter, DataType::BigInt),
        7 => spec(AggKind::Max, Some(1), filter, DataType::BigInt),
        8 => spec(AggKind::Min, Some(2), filter, DataType::Double),
        _ => spec(AggKind::Max, Some(2), filter, DataType::Double),
    });
    proptest::collection::vec(call, 1..3)
}

/// Calls, whether the input is insert-only, and the input.
fn case() -> impl Strategy<Value = (Vec<AggSpec>, bool, Vec<Change>)> {
    any::<bool>().prop_flat_map(|insert_only| {
        (
            calls(insert_only),
            Just(insert_only),
            proptest::collection::vec(change(insert_only), 0..40),
        )
    })
}

struct Run {
    /// What each input batch emitted.
    emitted: Vec<Vec<Change>>,
    metrics: StateMetrics,
}

/// How the aggregate under test is fed.
#[derive(Clone, Copy, Debug)]
enum Mode {
    OneAtATime,
    MiniBatch(usize),
    /// The global half, merging the partials of a local aggregate with
    /// bundles of this size.
    Global(usize),
}

fn mode() -> impl Strategy<Value = Mode> {
    prop_oneof![
        Just(Mode::OneAtATime),
        (1usize..6).prop_map(Mode::MiniBatch),
        (1usize..6).prop_map(Mode::Global),
    ]
}

/// What a local aggregate with bundles of `size` ships for `input`, in the
/// batches the aggregate under test gets.
fn partials(aggs: &[AggSpec], input: &[Change], size: usize) -> Vec<Vec<Change>> {
    let mut local = LocalAggregateOperator::new(vec![0], aggs.to_vec(), size).expect("local");
    let mut batches: Vec<Vec<Change>> = input
        .chunks(3)
        .map(|batch| {
            let mut out = Vec::new();
            local.process(0, batch.to_vec(), &mut out).expect("local");
            out
        })
        .collect();
    let mut out = Vec::new();
    local.finish_bundle(&mut out).expect("local");
    batches.push(out);
    batches
}

#[allow(clippy::too_many_arguments)]
fn run(
    backend: &StateBackend,
    aggs: &[AggSpec],
    insert_only: bool,
    input: &[Change],
    update_before: bool,
    mode: Mode,
    typed: bool,
    kinds_only: bool,
) -> Run {
    let scope = format!("packed-{}", rand_scope());
    let mut op = GroupAggregateOperator::new(
        backend,
        &scope,
        vec![0],
        aggs.to_vec(),
        insert_only,
        update_before,
    )
    .expect("operator");
    let batches = match mode {
        Mode::OneAtATime => input.chunks(3).map(<[Change]>::to_vec).collect(),
        Mode::MiniBatch(size) => {
            op = op.with_mini_batch(size);
            input.chunks(3).map(<[Change]>::to_vec).collect()
        }
        Mode::Global(size) => {
            op = op.with_partial_input();
            partials(aggs, input, size)
        }
    };
    if !typed {
        op = op.with_general_path();
    }
    assert_eq!(op.typed_path(), typed);
    if kinds_only {
        op = op.with_emission(Emission::KindsOnly);
    }
    let mut emitted = Vec::new();
    for batch in batches {
        let mut out = Vec::new();
        op.process(0, batch, &mut out).expect("process");
        emitted.push(out);
    }
    let mut out = Vec::new();
    op.finish_bundle(&mut out).expect("finish");
    emitted.push(out);
    Run {
        emitted,
        metrics: op.state_reports()[0].metrics,
    }
}

fn rand_scope() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn typed_path_matches_the_general_path(
        (aggs, insert_only, input) in case(),
        update_before in any::<bool>(),
        mode in mode(),
    ) {
        let heap = StateBackend::heap();
        let rocks = StateBackend::rocksdb(None).expect("rocksdb opens");
        let typed = run(&heap, &aggs, insert_only, &input, update_before, mode, true, false);
        let general = run(&heap, &aggs, insert_only, &input, update_before, mode, false, false);
        prop_assert_eq!(&typed.emitted, &general.emitted);
        prop_assert_eq!(typed.metrics, general.metrics);
        // RocksDB has no typed path; it agrees too.
        let rocks = run(&rocks, &aggs, insert_only, &input, update_before, mode, false, false);
        prop_assert_eq!(&typed.emitted, &rocks.emitted);
        prop_assert_eq!(typed.metrics, rocks.metrics);
    }
}

/// The kinds of each batch's changes, and whether every row is empty.
fn kinds(run: &Run) -> (Vec<Vec<RowKind>>, bool) {
    let kinds = run
        .emitted
        .iter()
        .map(|b| b.iter().map(|c| c.kind).collect())
        .collect();
    let empty = run.emitted.iter().flatten().all(|c| c.row.is_empty());
    (kinds, empty)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn kinds_only_emits_the_same_changes_without_rows(
        (aggs, insert_only, input) in case(),
        update_before in any::<bool>(),
        mode in mode(),
    ) {
        let heap = StateBackend::heap();
        let rocks = StateBackend::rocksdb(None).expect("rocksdb opens");
        let rows = run(&heap, &aggs, insert_only, &input, update_before, mode, true, false);
        let (expected, _) = kinds(&rows);
        prop_assert!(rows.emitted.iter().flatten().all(|c| !c.row.is_empty()));
        for (backend, typed) in [(&heap, true), (&heap, false), (&rocks, false)] {
            let only = run(backend, &aggs, insert_only, &input, update_before, mode, typed, true);
            let (got, empty) = kinds(&only);
            prop_assert_eq!(&got, &expected, "typed {}", typed);
            prop_assert!(empty);
            prop_assert_eq!(only.metrics, rows.metrics);
        }
    }
}

#[test]
fn updating_min_max_distinct_and_wide_accumulators_take_the_general_path() {
    let heap = StateBackend::heap();
    let count = spec(AggKind::CountStar, None, false, DataType::BigInt);
    for aggs in [
        vec![count.clone(), count.clone(), count],
        vec![spec(AggKind::Max, Some(1), false, DataType::BigInt)],
        vec![AggSpec {
            distinct: true,
            ..spec(AggKind::Count, Some(1), false, DataType::BigInt)
        }],
    ] {
        let op = GroupAggregateOperator::new(&heap, "general", vec![0], aggs, false, true)
            .expect("operator");
        assert!(!op.typed_path());
    }
    // MIN/MAX over an insert-only input keep no value map: typed.
    let max = vec![spec(AggKind::Max, Some(1), false, DataType::BigInt)];
    let op = GroupAggregateOperator::new(&heap, "typed", vec![0], max, true, true).expect("op");
    assert!(op.typed_path());
}

#[test]
fn typed_path_emits_the_documented_changelog() {
    let heap = StateBackend::heap();
    let aggs = vec![
        spec(AggKind::CountStar, None, false, DataType::BigInt),
        spec(AggKind::Sum, Some(1), false, DataType::BigInt),
    ];
    let row = |k: i64, a: i64| vec![Value::Int(k), Value::Int(a), Value::Null, Value::Bool(true)];
    let input = vec![
        Change::insert(row(1, 5)),
        Change::insert(row(1, 7)),
        Change::delete(row(1, 5)),
        Change::delete(row(2, 1)),
        Change::delete(row(1, 7)),
    ];
    let r = run(
        &heap,
        &aggs,
        false,
        &input,
        true,
        Mode::OneAtATime,
        true,
        false,
    );
    let all: Vec<String> = r.emitted.concat().iter().map(|c| c.to_string()).collect();
    assert_eq!(
        all,
        [
            "+I[1, 1, 5]",
            "-U[1, 1, 5]",
            "+U[1, 2, 12]",
            "-U[1, 2, 12]",
            "+U[1, 1, 7]",
            "-D[1, 1, 7]"
        ]
    );
    // One read per record (the retraction for key 2 finds nothing to
    // change), one write per change but the last, which deletes.
    assert_eq!(
        (
            r.metrics.reads,
            r.metrics.writes,
            r.metrics.deletes,
            r.metrics.entries
        ),
        (5, 3, 1, 0)
    );
}
