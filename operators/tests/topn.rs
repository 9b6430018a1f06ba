//! Top-N's changelogs pinned on both backends, for each of its three
//! strategies: Flink's own harness cases (`TopNFunctionTestBase`, which
//! every Top-N function passes, and the retract and update cases of
//! `RetractableTopNFunctionTest` and `UpdatableTopNFunctionTest`) with
//! their inputs and expected rows: rows `(category, id, sort key)`,
//! partitioned by the category, ascending by the sort key, the id being
//! the updatable strategy's unique key.

use operators::changelog::{Change, RowKind};
use operators::operator::Operator;
use operators::rank::append_only_topn::AppendOnlyTopN;
use operators::rank::retractable_topn::RetractableTopN;
use operators::rank::topn::{SortField, TopNSpec};
use operators::rank::updatable_topn::UpdatableTopN;
use operators::state::StateBackend;
use operators::value::Value;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Strategy {
    AppendOnly,
    Retract,
    Update,
}

const ALL: [Strategy; 3] = [Strategy::AppendOnly, Strategy::Retract, Strategy::Update];

fn spec(range: (u64, u64), update_before: bool, rank_number: bool) -> TopNSpec {
    TopNSpec {
        partition_key: vec![0],
        order: vec![SortField {
            column: 2,
            descending: false,
        }],
        rank_start: range.0,
        rank_end: range.1,
        output_rank_number: rank_number,
        generate_update_before: update_before,
        ttl_enabled: false,
        arity: 3,
    }
}

fn make(
    backend: &StateBackend,
    strategy: Strategy,
    spec: TopNSpec,
    cache_size: u64,
) -> Box<dyn Operator> {
    let scope = "1-Rank";
    match strategy {
        Strategy::AppendOnly => {
            Box::new(AppendOnlyTopN::new(backend, scope, spec, cache_size).unwrap())
        }
        Strategy::Retract => Box::new(RetractableTopN::new(backend, scope, spec).unwrap()),
        Strategy::Update => {
            Box::new(UpdatableTopN::new(backend, scope, spec, vec![1], cache_size).unwrap())
        }
    }
}

fn row(kind: RowKind, c: &str, id: i64, v: i64) -> Change {
    Change::new(kind, vec![Value::str(c), Value::Int(id), Value::Int(v)])
}

fn i(c: &str, id: i64, v: i64) -> Change {
    row(RowKind::Insert, c, id, v)
}

fn ub(c: &str, id: i64, v: i64) -> Change {
    row(RowKind::UpdateBefore, c, id, v)
}

fn ua(c: &str, id: i64, v: i64) -> Change {
    row(RowKind::UpdateAfter, c, id, v)
}

/// A fresh backend of each kind (RocksDB state outlives an operator).
fn backends() -> Vec<StateBackend> {
    vec![
        StateBackend::heap(),
        StateBackend::rocksdb(None).expect("rocksdb opens"),
    ]
}

/// The changelog of `input` (one record a batch), the same on both
/// backends and with the heap cache on (10000 rows) and at its smallest
/// (one partition, so partitions are read back from state).
fn run(strategy: Strategy, spec: &TopNSpec, input: &[Change]) -> Vec<String> {
    let mut seen: Option<Vec<String>> = None;
    for cache in [10_000, 1] {
        for backend in backends() {
            let mut op = make(&backend, strategy, spec.clone(), cache);
            let mut out = Vec::new();
            for c in input {
                op.process(0, vec![c.clone()], &mut out).unwrap();
            }
            let got: Vec<String> = out.iter().map(|c| c.to_string()).collect();
            if let Some(s) = &seen {
                assert_eq!(s, &got, "{strategy:?}: backends or caches differ");
            }
            seen = Some(got);
        }
    }
    seen.unwrap()
}

fn base_input() -> Vec<Change> {
    vec![
        i("book", 1, 12),
        i("book", 2, 19),
        i("book", 4, 11),
        i("fruit", 4, 33),
        i("fruit", 3, 44),
        i("fruit", 5, 22),
    ]
}

#[test]
fn disable_generate_update_before_still_deletes_without_the_rank() {
    let input = vec![
        i("book", 1, 12),
        i("book", 2, 19),
        i("book", 3, 19),
        i("book", 4, 11),
        i("book", 5, 11),
        i("fruit", 4, 33),
        i("fruit", 3, 44),
        i("fruit", 5, 22),
    ];
    for s in ALL {
        assert_eq!(
            run(s, &spec((1, 2), false, false), &input),
            [
                "+I[book, 1, 12]",
                "+I[book, 2, 19]",
                "-D[book, 2, 19]",
                "+I[book, 4, 11]",
                "-D[book, 1, 12]",
                "+I[book, 5, 11]",
                "+I[fruit, 4, 33]",
                "+I[fruit, 3, 44]",
                "-D[fruit, 3, 44]",
                "+I[fruit, 5, 22]"
            ],
            "{s:?}"
        );
    }
}

#[test]
fn disable_generate_update_before_with_the_rank_emits_only_update_afters() {
    let input = vec![
        i("book", 1, 12),
        i("book", 2, 19),
        i("book", 4, 11),
        i("book", 5, 11),
        i("fruit", 4, 33),
        i("fruit", 3, 44),
        i("fruit", 5, 22),
    ];
    for s in ALL {
        assert_eq!(
            run(s, &spec((1, 2), false, true), &input),
            [
                "+I[book, 1, 12, 1]",
                "+I[book, 2, 19, 2]",
                "+U[book, 4, 11, 1]",
                "+U[book, 1, 12, 2]",
                "+U[book, 5, 11, 2]",
                "+I[fruit, 4, 33, 1]",
                "+I[fruit, 3, 44, 2]",
                "+U[fruit, 5, 22, 1]",
                "+U[fruit, 4, 33, 2]"
            ],
            "{s:?}"
        );
    }
}

#[test]
fn output_rank_number_with_a_constant_range() {
    let input = vec![
        i("book", 1, 12),
        i("book", 2, 19),
        i("book", 4, 11),
        i("book", 5, 11),
        i("fruit", 4, 33),
        i("fruit", 3, 44),
        i("fruit", 5, 22),
    ];
    for s in ALL {
        assert_eq!(
            run(s, &spec((1, 2), true, true), &input),
            [
                "+I[book, 1, 12, 1]",
                "+I[book, 2, 19, 2]",
                "-U[book, 1, 12, 1]",
                "+U[book, 4, 11, 1]",
                "-U[book, 2, 19, 2]",
                "+U[book, 1, 12, 2]",
                "-U[book, 1, 12, 2]",
                "+U[book, 5, 11, 2]",
                "+I[fruit, 4, 33, 1]",
                "+I[fruit, 3, 44, 2]",
                "-U[fruit, 4, 33, 1]",
                "+U[fruit, 5, 22, 1]",
                "-U[fruit, 3, 44, 2]",
                "+U[fruit, 4, 33, 2]"
            ],
            "{s:?}"
        );
    }
}

#[test]
fn a_range_with_an_offset_takes_the_ranked_path() {
    for s in ALL {
        assert_eq!(
            run(s, &spec((2, 2), true, false), &base_input()),
            [
                "+I[book, 2, 19]",
                "-U[book, 2, 19]",
                "+U[book, 1, 12]",
                "+I[fruit, 3, 44]",
                "-U[fruit, 3, 44]",
                "+U[fruit, 4, 33]"
            ],
            "{s:?}"
        );
    }
}

#[test]
fn a_constant_range_without_offset_and_its_state_read_back() {
    for s in ALL {
        let sp = spec((1, 2), true, false);
        assert_eq!(
            run(s, &sp, &base_input()),
            [
                "+I[book, 1, 12]",
                "+I[book, 2, 19]",
                "-D[book, 2, 19]",
                "+I[book, 4, 11]",
                "+I[fruit, 4, 33]",
                "+I[fruit, 3, 44]",
                "-D[fruit, 3, 44]",
                "+I[fruit, 5, 22]"
            ],
            "{s:?}"
        );
        // A second operator on the same RocksDB state reads it back (as
        // Flink's harness restores a snapshot).
        let backend = StateBackend::rocksdb(None).unwrap();
        let mut first = make(&backend, s, sp.clone(), 10_000);
        let mut out = Vec::new();
        first.process(0, base_input(), &mut out).unwrap();
        let mut second = make(&backend, s, sp.clone(), 10_000);
        let mut out = Vec::new();
        second.process(0, vec![i("book", 5, 10)], &mut out).unwrap();
        let got: Vec<String> = out.iter().map(|c| c.to_string()).collect();
        assert_eq!(got, ["-D[book, 1, 12]", "+I[book, 5, 10]"], "{s:?}");
    }
}

#[test]
fn retract_strategy_retracts_with_and_without_update_before() {
    let input = vec![
        i("book", 1, 12),
        i("book", 2, 19),
        i("book", 4, 11),
        ub("book", 1, 12),
        i("book", 5, 11),
        i("fruit", 4, 33),
        i("fruit", 3, 44),
        i("fruit", 5, 22),
    ];
    assert_eq!(
        run(Strategy::Retract, &spec((1, 2), true, true), &input),
        [
            "+I[book, 1, 12, 1]",
            "+I[book, 2, 19, 2]",
            "-U[book, 1, 12, 1]",
            "+U[book, 4, 11, 1]",
            "-U[book, 2, 19, 2]",
            "+U[book, 1, 12, 2]",
            "-U[book, 1, 12, 2]",
            "+U[book, 2, 19, 2]",
            "-U[book, 2, 19, 2]",
            "+U[book, 5, 11, 2]",
            "+I[fruit, 4, 33, 1]",
            "+I[fruit, 3, 44, 2]",
            "-U[fruit, 4, 33, 1]",
            "+U[fruit, 5, 22, 1]",
            "-U[fruit, 3, 44, 2]",
            "+U[fruit, 4, 33, 2]"
        ]
    );
    assert_eq!(
        run(Strategy::Retract, &spec((1, 2), false, true), &input),
        [
            "+I[book, 1, 12, 1]",
            "+I[book, 2, 19, 2]",
            "+U[book, 4, 11, 1]",
            "+U[book, 1, 12, 2]",
            "+U[book, 2, 19, 2]",
            "+U[book, 5, 11, 2]",
            "+I[fruit, 4, 33, 1]",
            "+I[fruit, 3, 44, 2]",
            "+U[fruit, 5, 22, 1]",
            "+U[fruit, 4, 33, 2]"
        ]
    );
}

#[test]
fn retract_strategy_without_the_rank_brings_the_next_row_up() {
    // Not a Flink harness case: the retraction of a top row without the
    // rank deletes it and inserts the row that moves up into the top.
    let input = vec![
        i("book", 1, 12),
        i("book", 2, 19),
        i("book", 3, 15),
        row(RowKind::Delete, "book", 1, 12),
        row(RowKind::Delete, "book", 9, 99),
    ];
    let sp = spec((1, 2), true, false);
    assert_eq!(
        run(Strategy::Retract, &sp, &input),
        [
            "+I[book, 1, 12]",
            "+I[book, 2, 19]",
            "-D[book, 2, 19]",
            "+I[book, 3, 15]",
            "-D[book, 1, 12]",
            "+I[book, 2, 19]"
        ]
    );
    let backend = StateBackend::heap();
    let mut op = make(&backend, Strategy::Retract, sp, 1);
    op.process(0, input, &mut Vec::new()).unwrap();
    assert!(
        op.counters().contains(&("retractions_not_found", 1)),
        "{:?}",
        op.counters()
    );
}

fn sort_key_changes() -> Vec<Change> {
    vec![
        i("book", 2, 19),
        i("book", 3, 16),
        ua("book", 2, 11),
        ua("book", 3, 15),
        i("book", 4, 2),
        ua("book", 2, 1),
    ]
}

#[test]
fn update_strategy_moves_rows_up_with_the_rank() {
    assert_eq!(
        run(
            Strategy::Update,
            &spec((1, 2), true, true),
            &sort_key_changes()
        ),
        [
            "+I[book, 2, 19, 1]",
            "-U[book, 2, 19, 1]",
            "+U[book, 3, 16, 1]",
            "+I[book, 2, 19, 2]",
            "-U[book, 3, 16, 1]",
            "-U[book, 2, 19, 2]",
            "+U[book, 2, 11, 1]",
            "+U[book, 3, 16, 2]",
            "-U[book, 3, 16, 2]",
            "+U[book, 3, 15, 2]",
            "-U[book, 2, 11, 1]",
            "+U[book, 4, 2, 1]",
            "-U[book, 3, 15, 2]",
            "+U[book, 2, 11, 2]",
            "-U[book, 4, 2, 1]",
            "-U[book, 2, 11, 2]",
            "+U[book, 2, 1, 1]",
            "+U[book, 4, 2, 2]"
        ]
    );
    assert_eq!(
        run(
            Strategy::Update,
            &spec((1, 2), false, true),
            &sort_key_changes()
        ),
        [
            "+I[book, 2, 19, 1]",
            "+U[book, 3, 16, 1]",
            "+I[book, 2, 19, 2]",
            "+U[book, 2, 11, 1]",
            "+U[book, 3, 16, 2]",
            "+U[book, 3, 15, 2]",
            "+U[book, 4, 2, 1]",
            "+U[book, 2, 11, 2]",
            "+U[book, 2, 1, 1]",
            "+U[book, 4, 2, 2]"
        ]
    );
}

#[test]
fn update_strategy_moves_rows_up_without_the_rank() {
    assert_eq!(
        run(
            Strategy::Update,
            &spec((1, 2), true, false),
            &sort_key_changes()
        ),
        [
            "+I[book, 2, 19]",
            "+I[book, 3, 16]",
            "-U[book, 2, 19]",
            "+U[book, 2, 11]",
            "-U[book, 3, 16]",
            "+U[book, 3, 15]",
            "-D[book, 3, 15]",
            "+I[book, 4, 2]",
            "-U[book, 2, 11]",
            "+U[book, 2, 1]"
        ]
    );
    assert_eq!(
        run(
            Strategy::Update,
            &spec((1, 2), false, false),
            &sort_key_changes()
        ),
        [
            "+I[book, 2, 19]",
            "+I[book, 3, 16]",
            "+U[book, 2, 11]",
            "+U[book, 3, 15]",
            "-D[book, 3, 15]",
            "+I[book, 4, 2]",
            "+U[book, 2, 1]"
        ]
    );
}

#[test]
fn counters_and_bad_records() {
    let backend = StateBackend::heap();
    let mut op = make(
        &backend,
        Strategy::AppendOnly,
        spec((1, 2), true, false),
        10_000,
    );
    op.process(0, base_input(), &mut Vec::new()).unwrap();
    assert_eq!(
        op.counters(),
        [
            ("rows_processed", 6),
            ("rows_entered_top", 6),
            ("cache_requests", 6),
            ("cache_hits", 4)
        ]
    );
    let err = op
        .process(0, vec![ub("book", 1, 12)], &mut Vec::new())
        .unwrap_err();
    assert!(err.is_bad_input(), "{err}");
    assert!(err.to_string().contains("insert-only"), "{err}");
    let mut op = make(
        &backend,
        Strategy::Update,
        spec((1, 2), true, false),
        10_000,
    );
    let err = op
        .process(
            0,
            vec![row(RowKind::Delete, "book", 1, 12)],
            &mut Vec::new(),
        )
        .unwrap_err();
    assert!(err.is_bad_input(), "{err}");
}
