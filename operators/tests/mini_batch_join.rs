//! The mini-batch join: golden changelogs for folding, pairing and
//! suppression; equivalence with the regular join and a nested-loop join of
//! the final inputs on random changelogs (both backends, all layouts, INNER,
//! LEFT, RIGHT and FULL, with and without a residual condition); fewer changelog rows
//! on an update-heavy input.

use operators::changelog::{Change, Multiset};
use operators::expr::{BinOp, Expr};
use operators::join::JoinType;
use operators::join::{JoinSpec, JoinStateLayout, MiniBatchJoinOperator, RegularJoinOperator};
use operators::operator::Operator;
use operators::state::StateBackend;
use operators::value::{Row, Value};
use proptest::prelude::*;

// Both inputs are `[id, k, v]`; the join is `L.k = R.k`, the residual
// `L.v <= R.v` (columns 2 and 5 of the joined row).

fn spec(
    join_type: JoinType,
    left: JoinStateLayout,
    right: JoinStateLayout,
    residual: bool,
) -> JoinSpec {
    JoinSpec {
        join_type,
        left_keys: vec![1],
        right_keys: vec![1],
        left_arity: 3,
        right_arity: 3,
        residual: residual.then(|| Expr::bin(BinOp::LtEq, Expr::col(2), Expr::col(5))),
        left_layout: left,
        right_layout: right,
    }
}

fn has_uk() -> JoinStateLayout {
    JoinStateLayout::HasUniqueKey(vec![0])
}

fn row(id: i64, k: i64, v: i64) -> Row {
    vec![Value::Int(id), Value::Int(k), Value::Int(v)]
}

fn ins(id: i64, k: i64, v: i64) -> Change {
    Change::insert(row(id, k, v))
}
fn del(id: i64, k: i64, v: i64) -> Change {
    Change::delete(row(id, k, v))
}
fn ub(id: i64, k: i64, v: i64) -> Change {
    Change::update_before(row(id, k, v))
}
fn ua(id: i64, k: i64, v: i64) -> Change {
    Change::update_after(row(id, k, v))
}

/// One step of a test input: a batch on input 0 (left) or 1 (right), or a
/// bundle close.
enum Step {
    L(Vec<Change>),
    R(Vec<Change>),
    Finish,
}

fn run(op: &mut dyn Operator, steps: Vec<Step>) -> Vec<String> {
    let mut out = Vec::new();
    for s in steps {
        match s {
            Step::L(b) => op.process(0, b, &mut out).unwrap(),
            Step::R(b) => op.process(1, b, &mut out).unwrap(),
            Step::Finish => op.finish_bundle(&mut out).unwrap(),
        }
    }
    out.iter().map(|c| c.to_string()).collect()
}

fn mini(spec: JoinSpec, size: usize) -> MiniBatchJoinOperator {
    MiniBatchJoinOperator::new(&StateBackend::heap(), "mb", spec, size).unwrap()
}

fn regular(spec: JoinSpec) -> RegularJoinOperator {
    RegularJoinOperator::new(&StateBackend::heap(), "reg", spec).unwrap()
}

fn counter(op: &dyn Operator, name: &str) -> u64 {
    op.counters()
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v)
        .unwrap()
}

// ---------------------------------------------------------------------------
// Golden changelogs

#[test]
fn insert_then_delete_within_a_bundle_emits_nothing() {
    for join_type in [JoinType::Inner, JoinType::Left] {
        for layout in [
            JoinStateLayout::JoinKeyContainsUniqueKey,
            has_uk(),
            JoinStateLayout::NoUniqueKey,
        ] {
            let s = spec(join_type, layout.clone(), has_uk(), false);
            let steps = || {
                vec![
                    Step::R(vec![ins(10, 7, 5)]),
                    Step::Finish,
                    Step::L(vec![ins(1, 7, 0), del(1, 7, 0)]),
                    Step::Finish,
                ]
            };
            assert_eq!(
                run(&mut mini(s.clone(), 100), steps()),
                Vec::<String>::new(),
                "{layout:?}"
            );
            assert_eq!(
                run(&mut regular(s), steps()),
                ["+I[1, 7, 0, 10, 7, 5]", "-D[1, 7, 0, 10, 7, 5]"],
                "{layout:?}"
            );
        }
    }
    // On the outer side with nothing to match: no NULL-padded row either.
    let s = spec(JoinType::Left, has_uk(), has_uk(), false);
    let steps = || vec![Step::L(vec![ins(1, 7, 0), del(1, 7, 0)]), Step::Finish];
    assert_eq!(
        run(&mut mini(s.clone(), 100), steps()),
        Vec::<String>::new()
    );
    assert_eq!(
        run(&mut regular(s), steps()),
        [
            "+I[1, 7, 0, NULL, NULL, NULL]",
            "-D[1, 7, 0, NULL, NULL, NULL]"
        ]
    );
}

fn three_updates() -> Vec<Step> {
    vec![
        Step::L(vec![ins(1, 7, 0)]),
        Step::R(vec![ins(10, 7, 5)]),
        Step::Finish,
        Step::L(vec![ub(1, 7, 0), ua(1, 7, 1)]),
        Step::L(vec![ub(1, 7, 1), ua(1, 7, 2)]),
        Step::L(vec![ub(1, 7, 2), ua(1, 7, 3)]),
        Step::Finish,
    ]
}

#[test]
fn three_updates_of_one_unique_key_emit_only_the_last() {
    for layout in [JoinStateLayout::JoinKeyContainsUniqueKey, has_uk()] {
        // INNER forwards the row kinds.
        let s = spec(JoinType::Inner, layout.clone(), has_uk(), false);
        assert_eq!(
            run(&mut mini(s.clone(), 100), three_updates()),
            [
                "+I[1, 7, 0, 10, 7, 5]",
                "-U[1, 7, 0, 10, 7, 5]",
                "+U[1, 7, 3, 10, 7, 5]"
            ],
            "{layout:?}"
        );
        assert_eq!(
            run(&mut regular(s), three_updates()).len(),
            1 + 6,
            "{layout:?}"
        );
        // LEFT: the outer side emits -D and +I.
        let s = spec(JoinType::Left, layout.clone(), has_uk(), false);
        assert_eq!(
            run(&mut mini(s, 100), three_updates()),
            [
                "+I[1, 7, 0, 10, 7, 5]",
                "-D[1, 7, 0, 10, 7, 5]",
                "+I[1, 7, 3, 10, 7, 5]"
            ],
            "{layout:?}"
        );
    }
}

#[test]
fn right_bundle_is_joined_before_the_left_one() {
    // Flink's order for INNER and LEFT: a left row arriving with its first
    // match never shows its NULL-padded row.
    let s = spec(JoinType::Left, has_uk(), has_uk(), false);
    let steps = || {
        vec![
            Step::L(vec![ins(1, 7, 0)]),
            Step::R(vec![ins(10, 7, 5)]),
            Step::Finish,
        ]
    };
    assert_eq!(
        run(&mut mini(s.clone(), 100), steps()),
        ["+I[1, 7, 0, 10, 7, 5]"]
    );
    assert_eq!(
        run(&mut regular(s), steps()),
        [
            "+I[1, 7, 0, NULL, NULL, NULL]",
            "-D[1, 7, 0, NULL, NULL, NULL]",
            "+I[1, 7, 0, 10, 7, 5]"
        ]
    );
}

#[test]
fn right_join_joins_the_left_bundle_first() {
    // Flink's order for RIGHT (MiniBatchRightOuterJoinStreamOperator): a
    // right row arriving with its first match never shows its padded row.
    let s = spec(JoinType::Right, has_uk(), has_uk(), false);
    let steps = || {
        vec![
            Step::R(vec![ins(10, 7, 5)]),
            Step::L(vec![ins(1, 7, 0)]),
            Step::Finish,
        ]
    };
    assert_eq!(
        run(&mut mini(s.clone(), 100), steps()),
        ["+I[1, 7, 0, 10, 7, 5]"]
    );
    assert_eq!(
        run(&mut regular(s), steps()),
        [
            "+I[NULL, NULL, NULL, 10, 7, 5]",
            "-D[NULL, NULL, NULL, 10, 7, 5]",
            "+I[1, 7, 0, 10, 7, 5]"
        ]
    );
}

/// A FULL join over a small updating input: a left row, its first match,
/// an update of the match within its join key, one that moves it to
/// another key, and the left row's deletion; each step its own bundle.
fn full_join_updates() -> Vec<Step> {
    vec![
        Step::L(vec![ins(1, 7, 0)]),
        Step::Finish,
        Step::R(vec![ins(10, 7, 5)]),
        Step::Finish,
        Step::R(vec![ub(10, 7, 5), ua(10, 7, 9)]),
        Step::Finish,
        Step::R(vec![ub(10, 7, 9), ua(10, 8, 6)]),
        Step::Finish,
        Step::L(vec![del(1, 7, 0)]),
        Step::Finish,
    ]
}

#[test]
fn full_join_golden_changelog_regular() {
    // Flink's StreamingJoinOperator with both sides outer: every row kind
    // is +I or -D; each side's padded row comes and goes with its matches.
    let s = spec(JoinType::Full, has_uk(), has_uk(), false);
    assert_eq!(
        run(&mut regular(s), full_join_updates()),
        [
            "+I[1, 7, 0, NULL, NULL, NULL]",
            "-D[1, 7, 0, NULL, NULL, NULL]",
            "+I[1, 7, 0, 10, 7, 5]",
            "-D[1, 7, 0, 10, 7, 5]",
            "+I[1, 7, 0, NULL, NULL, NULL]",
            "-D[1, 7, 0, NULL, NULL, NULL]",
            "+I[1, 7, 0, 10, 7, 9]",
            "-D[1, 7, 0, 10, 7, 9]",
            "+I[1, 7, 0, NULL, NULL, NULL]",
            "+I[NULL, NULL, NULL, 10, 8, 6]",
            "-D[1, 7, 0, NULL, NULL, NULL]",
        ]
    );
}

#[test]
fn full_join_golden_changelog_mini_batch() {
    // The same input in bundles: the -U/+U of one join key is joined as one
    // update, so the left row's padded row does not come and go in between
    // (Flink's isSuppress); the update that moves to another key is two
    // records and emits what the regular join emits.
    let s = spec(JoinType::Full, has_uk(), has_uk(), false);
    let mut op = mini(s, 100);
    assert_eq!(
        run(&mut op, full_join_updates()),
        [
            "+I[1, 7, 0, NULL, NULL, NULL]",
            "-D[1, 7, 0, NULL, NULL, NULL]",
            "+I[1, 7, 0, 10, 7, 5]",
            "-D[1, 7, 0, 10, 7, 5]",
            "+I[1, 7, 0, 10, 7, 9]",
            "-D[1, 7, 0, 10, 7, 9]",
            "+I[1, 7, 0, NULL, NULL, NULL]",
            "+I[NULL, NULL, NULL, 10, 8, 6]",
            "-D[1, 7, 0, NULL, NULL, NULL]",
        ]
    );
    assert_eq!(counter(&op, "update_pairs"), 1);
    assert_eq!(counter(&op, "suppressed_rows"), 2);
}

#[test]
fn full_join_in_one_bundle_joins_right_then_left() {
    // Flink's order for FULL (MiniBatchFullOuterJoinStreamOperator): the
    // right bundle first, so a right row arriving with its first match
    // shows its padded row once.
    let s = spec(JoinType::Full, has_uk(), has_uk(), false);
    let steps = vec![
        Step::L(vec![ins(1, 7, 0)]),
        Step::R(vec![ins(10, 7, 5), ins(11, 9, 1)]),
        Step::Finish,
    ];
    assert_eq!(
        run(&mut mini(s, 100), steps),
        [
            "+I[NULL, NULL, NULL, 10, 7, 5]",
            "+I[NULL, NULL, NULL, 11, 9, 1]",
            "-D[NULL, NULL, NULL, 10, 7, 5]",
            "+I[1, 7, 0, 10, 7, 5]",
        ]
    );
}

fn right_update() -> Vec<Step> {
    vec![
        Step::L(vec![ins(1, 7, 0)]),
        Step::R(vec![ins(10, 7, 5)]),
        Step::Finish,
        Step::R(vec![ub(10, 7, 5), ua(10, 7, 6)]),
        Step::Finish,
    ]
}

#[test]
fn update_of_a_matched_inner_row_suppresses_the_padded_rows_in_between() {
    for layout in [JoinStateLayout::JoinKeyContainsUniqueKey, has_uk()] {
        let s = spec(JoinType::Left, has_uk(), layout.clone(), false);
        let mut mb = mini(s.clone(), 100);
        assert_eq!(
            run(&mut mb, right_update()),
            [
                "+I[1, 7, 0, 10, 7, 5]",
                "-U[1, 7, 0, 10, 7, 5]",
                "+I[1, 7, 0, 10, 7, 6]"
            ],
            "{layout:?}"
        );
        assert_eq!(counter(&mb, "update_pairs"), 1);
        assert_eq!(counter(&mb, "suppressed_rows"), 2);
        assert_eq!(
            run(&mut regular(s), right_update()),
            [
                "+I[1, 7, 0, NULL, NULL, NULL]",
                "-D[1, 7, 0, NULL, NULL, NULL]",
                "+I[1, 7, 0, 10, 7, 5]",
                "-U[1, 7, 0, 10, 7, 5]",
                "+I[1, 7, 0, NULL, NULL, NULL]",
                "-D[1, 7, 0, NULL, NULL, NULL]",
                "+I[1, 7, 0, 10, 7, 6]"
            ],
            "{layout:?}"
        );
    }
    // Without a unique key the update is two unrelated rows: no pair.
    let s = spec(
        JoinType::Left,
        has_uk(),
        JoinStateLayout::NoUniqueKey,
        false,
    );
    assert_eq!(
        run(&mut mini(s, 100), right_update()),
        [
            "+I[1, 7, 0, 10, 7, 5]",
            "-U[1, 7, 0, 10, 7, 5]",
            "+I[1, 7, 0, NULL, NULL, NULL]",
            "-D[1, 7, 0, NULL, NULL, NULL]",
            "+I[1, 7, 0, 10, 7, 6]"
        ]
    );
}

#[test]
fn suppression_keeps_padded_rows_when_the_residual_changes_the_match() {
    // L.v <= R.v: the update to 2 loses the match, the update to 4 regains it.
    let s = spec(JoinType::Left, has_uk(), has_uk(), true);
    let steps = vec![
        Step::L(vec![ins(1, 7, 3)]),
        Step::R(vec![ins(10, 7, 5)]),
        Step::Finish,
        Step::R(vec![ub(10, 7, 5), ua(10, 7, 2)]),
        Step::Finish,
        Step::R(vec![ub(10, 7, 2), ua(10, 7, 4)]),
        Step::Finish,
    ];
    assert_eq!(
        run(&mut mini(s, 100), steps),
        [
            "+I[1, 7, 3, 10, 7, 5]",
            "-U[1, 7, 3, 10, 7, 5]",
            "+I[1, 7, 3, NULL, NULL, NULL]",
            "-D[1, 7, 3, NULL, NULL, NULL]",
            "+I[1, 7, 3, 10, 7, 4]"
        ]
    );
}

#[test]
fn a_bundle_closes_when_both_sides_together_reach_the_size() {
    let s = spec(JoinType::Inner, has_uk(), has_uk(), false);
    let mut mb = mini(s, 3);
    let mut out = Vec::new();
    mb.process(0, vec![ins(1, 7, 0)], &mut out).unwrap();
    mb.process(1, vec![ins(10, 7, 5)], &mut out).unwrap();
    assert!(out.is_empty());
    assert_eq!(mb.buffered(), 2);
    mb.process(0, vec![ins(2, 7, 1), ins(3, 7, 2)], &mut out)
        .unwrap();
    // The third record closed the bundle; the fourth waits in the next one.
    assert_eq!(
        out.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
        ["+I[1, 7, 0, 10, 7, 5]", "+I[2, 7, 1, 10, 7, 5]"]
    );
    assert_eq!(mb.buffered(), 1);
    mb.finish_bundle(&mut out).unwrap();
    assert_eq!(out.len(), 3);
    assert_eq!(out[2].to_string(), "+I[3, 7, 2, 10, 7, 5]");
}

#[test]
fn rows_without_unique_key_fold_by_count() {
    let s = spec(
        JoinType::Inner,
        JoinStateLayout::NoUniqueKey,
        has_uk(),
        false,
    );
    let mut mb = mini(s, 100);
    let steps = vec![
        Step::R(vec![ins(10, 7, 5)]),
        Step::Finish,
        Step::L(vec![
            ins(1, 7, 0),
            ins(1, 7, 0),
            ins(2, 7, 0),
            del(1, 7, 0),
            ins(1, 7, 0),
        ]),
        Step::Finish,
    ];
    assert_eq!(
        run(&mut mb, steps),
        [
            "+I[1, 7, 0, 10, 7, 5]",
            "+I[1, 7, 0, 10, 7, 5]",
            "+I[2, 7, 0, 10, 7, 5]"
        ]
    );
    assert_eq!(counter(&mb, "folded_records"), 2);
}

#[test]
fn join_key_covering_unique_key_turns_insert_then_update_into_insert() {
    // As Flink's JoinKeyContainsUniqueKeyBundle: +I, -U, +U of one key in a
    // bundle is one +I.
    let s = spec(
        JoinType::Inner,
        JoinStateLayout::JoinKeyContainsUniqueKey,
        has_uk(),
        false,
    );
    let steps = vec![
        Step::R(vec![ins(10, 7, 5)]),
        Step::L(vec![ins(1, 7, 0), ub(1, 7, 0), ua(1, 7, 1)]),
        Step::Finish,
    ];
    assert_eq!(run(&mut mini(s, 100), steps), ["+I[1, 7, 1, 10, 7, 5]"]);
}

// ---------------------------------------------------------------------------
// Equivalence on random changelogs

#[derive(Clone, Copy, Debug)]
enum Layout {
    KeyCoversUnique,
    Unique,
    NoUnique,
}

impl Layout {
    fn state(self) -> JoinStateLayout {
        match self {
            // The join key `k` is the unique key.
            Layout::KeyCoversUnique => JoinStateLayout::JoinKeyContainsUniqueKey,
            // `id` is the unique key; updates may move a row to another `k`.
            Layout::Unique => has_uk(),
            Layout::NoUnique => JoinStateLayout::NoUniqueKey,
        }
    }
}

/// Emits a consistent changelog for one input: inserts, `-U`/`+U` updates
/// and deletes of live rows, keeping the layout's unique key unique.
struct Input {
    layout: Layout,
    live: Vec<Row>,
    next_id: i64,
}

fn key(a: u8) -> Value {
    match a % 4 {
        3 => Value::Null,
        k => Value::Int(k as i64),
    }
}

fn val(b: u8) -> Value {
    Value::Int((b % 4) as i64)
}

impl Input {
    fn new(layout: Layout) -> Input {
        Input {
            layout,
            live: Vec::new(),
            next_id: 0,
        }
    }

    fn step(&mut self, action: u8, a: u8, b: u8, c: u8) -> Vec<Change> {
        let action = if self.live.is_empty() { 0 } else { action % 10 };
        let idx = if self.live.is_empty() {
            0
        } else {
            c as usize % self.live.len()
        };
        match (action, self.layout) {
            (0..=3, Layout::KeyCoversUnique) => {
                let k = key(a);
                match self.live.iter().position(|r| r[1] == k) {
                    Some(i) => self.update(i, vec![Value::Int(self.next_id), k, val(b)]),
                    None => self.insert(vec![Value::Int(self.next_id), k, val(b)]),
                }
            }
            (0..=3, Layout::Unique) => self.insert(vec![Value::Int(self.next_id), key(a), val(b)]),
            (0..=3, Layout::NoUnique) => {
                self.insert(vec![Value::Int((a / 4 % 2) as i64), key(a), val(b)])
            }
            (4..=6, Layout::KeyCoversUnique) => {
                let old = &self.live[idx];
                let new = vec![Value::Int(self.next_id), old[1].clone(), val(b)];
                self.update(idx, new)
            }
            (4..=6, Layout::Unique) => {
                let new = vec![self.live[idx][0].clone(), key(a), val(b)];
                self.update(idx, new)
            }
            (4..=6, Layout::NoUnique) => {
                self.update(idx, vec![Value::Int((a / 4 % 2) as i64), key(a), val(b)])
            }
            _ => vec![Change::delete(self.live.swap_remove(idx))],
        }
    }

    fn insert(&mut self, r: Row) -> Vec<Change> {
        self.next_id += 1;
        self.live.push(r.clone());
        vec![Change::insert(r)]
    }

    fn update(&mut self, i: usize, new: Row) -> Vec<Change> {
        self.next_id += 1;
        let old = std::mem::replace(&mut self.live[i], new.clone());
        vec![Change::update_before(old), Change::update_after(new)]
    }
}

/// The batch join of the final inputs, by nested loops.
fn nested_loop(left: &[Row], right: &[Row], s: &JoinSpec) -> Vec<Row> {
    let mut out = Vec::new();
    let mut right_matched = vec![false; right.len()];
    for l in left {
        let mut matched = false;
        for (r, r_matched) in right.iter().zip(right_matched.iter_mut()) {
            let joined: Row = l.iter().chain(r.iter()).cloned().collect();
            let equal = !l[1].is_null() && l[1] == r[1];
            if equal && s.residual.as_ref().is_none_or(|p| p.is_true(&joined)) {
                matched = true;
                *r_matched = true;
                out.push(joined);
            }
        }
        if !matched && s.join_type.left_is_outer() {
            let mut padded = l.clone();
            padded.extend([Value::Null, Value::Null, Value::Null]);
            out.push(padded);
        }
    }
    if s.join_type.right_is_outer() {
        for (r, _) in right.iter().zip(&right_matched).filter(|(_, m)| !**m) {
            let mut padded = vec![Value::Null, Value::Null, Value::Null];
            padded.extend(r.iter().cloned());
            out.push(padded);
        }
    }
    out.sort_by(|a, b| operators::value::cmp_rows(a, b));
    out
}

#[derive(Clone, Debug)]
struct Op {
    right: bool,
    action: u8,
    a: u8,
    b: u8,
    c: u8,
    finish: bool,
}

fn op() -> impl Strategy<Value = Op> {
    (
        any::<bool>(),
        0u8..10,
        any::<u8>(),
        any::<u8>(),
        any::<u8>(),
        prop::bool::weighted(0.15),
    )
        .prop_map(|(right, action, a, b, c, finish)| Op {
            right,
            action,
            a,
            b,
            c,
            finish,
        })
}

fn layout() -> impl Strategy<Value = Layout> {
    prop_oneof![
        Just(Layout::KeyCoversUnique),
        Just(Layout::Unique),
        Just(Layout::NoUnique)
    ]
}

#[derive(Clone, Debug)]
struct Case {
    join_type: JoinType,
    left: Layout,
    right: Layout,
    residual: bool,
    bundle_size: usize,
    ops: Vec<Op>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop_oneof![
            Just(JoinType::Inner),
            Just(JoinType::Left),
            Just(JoinType::Right),
            Just(JoinType::Full)
        ],
        layout(),
        layout(),
        any::<bool>(),
        1usize..10,
        prop::collection::vec(op(), 0..80),
    )
        .prop_map(
            |(join_type, left, right, residual, bundle_size, ops)| Case {
                join_type,
                left,
                right,
                residual,
                bundle_size,
                ops,
            },
        )
}

fn materialised(m: &Multiset, what: &str) -> Result<Vec<Row>, TestCaseError> {
    let neg = m.negative();
    prop_assert!(neg.is_empty(), "{what}: negative counts {neg:?}");
    Ok(m.sorted_rows())
}

fn check_equivalence(backend: &StateBackend, c: &Case) -> Result<(), TestCaseError> {
    let s = spec(c.join_type, c.left.state(), c.right.state(), c.residual);
    let mut reg = RegularJoinOperator::new(backend, "reg", s.clone()).unwrap();
    let mut mb = MiniBatchJoinOperator::new(backend, "mb", s.clone(), c.bundle_size).unwrap();
    let mut inputs = [Input::new(c.left), Input::new(c.right)];
    let (mut reg_out, mut mb_out) = (Multiset::new(), Multiset::new());
    let mut buf = Vec::new();
    for (i, o) in c.ops.iter().enumerate() {
        let side = o.right as usize;
        let batch = inputs[side].step(o.action, o.a, o.b, o.c);
        reg.process(side, batch.clone(), &mut buf).unwrap();
        buf.drain(..).for_each(|ch| reg_out.apply(&ch));
        mb.process(side, batch, &mut buf).unwrap();
        if o.finish || i + 1 == c.ops.len() {
            mb.finish_bundle(&mut buf).unwrap();
        }
        buf.drain(..).for_each(|ch| mb_out.apply(&ch));
        if mb.buffered() == 0 {
            // Nothing buffered: both have seen the same input.
            prop_assert_eq!(
                materialised(&mb_out, "mini-batch")?,
                materialised(&reg_out, "regular")?,
                "after op {}",
                i
            );
        }
    }
    let expected = nested_loop(&inputs[0].live, &inputs[1].live, &s);
    prop_assert_eq!(&materialised(&reg_out, "regular")?, &expected);
    prop_assert_eq!(&materialised(&mb_out, "mini-batch")?, &expected);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn mini_batch_join_equals_regular_join_and_batch_join_on_heap(c in case()) {
        check_equivalence(&StateBackend::heap(), &c)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn mini_batch_join_equals_regular_join_and_batch_join_on_rocksdb(c in case()) {
        let backend = StateBackend::rocksdb(None).unwrap();
        check_equivalence(&backend, &c)?;
    }
}

// ---------------------------------------------------------------------------
// Fewer changelog rows on updates

#[test]
fn update_heavy_input_emits_fewer_rows_with_the_same_result() {
    // 4 keys, one left and one right row each; then 50 rounds that update
    // every row once (16 records a round), in bundles of 32 records.
    let s = spec(JoinType::Left, has_uk(), has_uk(), false);
    let mut steps = Vec::new();
    for k in 0..4 {
        steps.push(Step::L(vec![ins(k, k, 0)]));
        steps.push(Step::R(vec![ins(100 + k, k, 0)]));
    }
    steps.push(Step::Finish);
    for round in 1..=50 {
        for k in 0..4 {
            steps.push(Step::L(vec![ub(k, k, round - 1), ua(k, k, round)]));
            steps.push(Step::R(vec![
                ub(100 + k, k, round - 1),
                ua(100 + k, k, round),
            ]));
        }
    }
    steps.push(Step::Finish);
    let steps2 = || {
        steps
            .iter()
            .map(|s| match s {
                Step::L(b) => Step::L(b.clone()),
                Step::R(b) => Step::R(b.clone()),
                Step::Finish => Step::Finish,
            })
            .collect::<Vec<_>>()
    };

    let heap = StateBackend::heap();
    let mut reg = RegularJoinOperator::new(&heap, "reg", s.clone()).unwrap();
    let mut mb = MiniBatchJoinOperator::new(&heap, "mb", s, 32).unwrap();
    let reg_rows = run(&mut reg, steps2());
    let mb_rows = run(&mut mb, steps2());

    // Regular: 4 x (+I[l+NULL]) + 4 x (-D[l+NULL], +I[l+r]) to start; per
    // round and key, a left update (-D, +I) and a right update (-U,
    // +I[l+NULL], -D[l+NULL], +I).
    assert_eq!(reg_rows.len(), 12 + 50 * 4 * (2 + 4));
    // Mini-batch: right first, so 4 x +I[l+r] to start; per bundle (two
    // rounds) and key, one right pair (-U, +I) and one left pair (-D, +I).
    assert_eq!(mb_rows.len(), 4 + 25 * 4 * (2 + 2));
    assert_eq!(counter(&mb, "bundles"), 26);
    assert_eq!(counter(&mb, "update_pairs"), 25 * 8);
    assert_eq!(counter(&mb, "folded_records"), 25 * 8 * 2);
    assert_eq!(counter(&mb, "suppressed_rows"), 25 * 4 * 2);

    let materialise = |rows: &[String]| {
        let mut counts = std::collections::BTreeMap::<String, i64>::new();
        for r in rows {
            let (kind, body) = r.split_at(2);
            *counts.entry(body.to_string()).or_default() +=
                if kind == "+I" || kind == "+U" { 1 } else { -1 };
        }
        counts
            .into_iter()
            .filter(|(_, n)| *n != 0)
            .collect::<Vec<_>>()
    };
    let final_rows: Vec<(String, i64)> = (0..4)
        .map(|k| (format!("[{k}, {k}, 50, {}, {k}, 50]", 100 + k), 1))
        .collect();
    assert_eq!(materialise(&mb_rows), final_rows);
    assert_eq!(materialise(&reg_rows), final_rows);

    // And fewer state accesses.
    let accesses = |op: &dyn Operator| -> u64 {
        op.state_reports()
            .iter()
            .map(|r| r.metrics.accesses())
            .sum()
    };
    assert!(
        accesses(&mb) < accesses(&reg) / 2,
        "{} vs {}",
        accesses(&mb),
        accesses(&reg)
    );
}
