//! MultiJoin computes the batch join: its changelog materialises to a
//! from-scratch nested-loop evaluation of the same left-deep join, and to
//! what a chain of binary regular joins computes; it keeps only its inputs;
//! its recomputation cost and its changelog are pinned on small inputs.
//! Every test runs on both state backends.

use operators::changelog::{Change, ChangelogMode, Multiset, RowKind};
use operators::expr::{BinOp, Expr};
use operators::join::JoinType;
use operators::join::{
    JoinSpec, JoinStateLayout, MultiJoinOperator, MultiJoinSpec, RegularJoinOperator,
};
use operators::operator::Operator;
use operators::state::StateBackend;
use operators::value::{Row, Value};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::HashSet;

/// Every input row is `[k, id, v]`: join key, unique key, payload.
const ARITY: usize = 3;
const K: usize = 0;
const ID: usize = 1;
const V: usize = 2;

fn backends() -> Vec<StateBackend> {
    vec![
        StateBackend::heap(),
        StateBackend::rocksdb(None).expect("rocksdb opens"),
    ]
}

fn int(i: i64) -> Value {
    Value::Int(i)
}

fn row(k: Option<i64>, id: i64, v: i64) -> Row {
    vec![k.map_or(Value::Null, Value::Int), int(id), int(v)]
}

const LAYOUTS: [fn() -> JoinStateLayout; 3] = [
    || JoinStateLayout::JoinKeyContainsUniqueKey,
    || JoinStateLayout::HasUniqueKey(vec![ID]),
    || JoinStateLayout::NoUniqueKey,
];

// ---------------------------------------------------------------------------
// The query under test.

#[derive(Clone, Debug)]
struct Config {
    /// `join_types[0]` is ignored.
    join_types: Vec<JoinType>,
    /// Which family of residual conditions (0 = none).
    residual: u8,
    layouts: Vec<JoinStateLayout>,
}

/// Column `c` of input `i` in the concatenated row.
fn col(i: usize, c: usize) -> Expr {
    Expr::col(i * ARITY + c)
}

fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
    Expr::bin(op, l, r)
}

impl Config {
    fn n(&self) -> usize {
        self.layouts.len()
    }

    /// The residual condition of input `i >= 1` (over inputs `0..=i`).
    /// Families 1 and 3 read the previous input, so a NULL-padded previous
    /// input makes them NULL; family 2 is TRUE on it.
    fn conditions(&self) -> Vec<Option<Expr>> {
        let mut conds = vec![None];
        for i in 1..self.n() {
            conds.push(match self.residual {
                0 => None,
                // in_{i-1}.v <= in_i.v + 1
                1 => Some(bin(
                    BinOp::LtEq,
                    col(i - 1, V),
                    bin(BinOp::Add, col(i, V), Expr::lit(int(1))),
                )),
                // in_{i-1}.id IS NULL OR in_0.v <> in_i.v
                2 => Some(bin(
                    BinOp::Or,
                    Expr::IsNull {
                        expr: Box::new(col(i - 1, ID)),
                        negated: false,
                    },
                    bin(BinOp::NotEq, col(0, V), col(i, V)),
                )),
                // odd i: in_0.v + in_i.v <> 3; even i: in_{i-1}.v = in_i.v
                _ if i % 2 == 1 => Some(bin(
                    BinOp::NotEq,
                    bin(BinOp::Add, col(0, V), col(i, V)),
                    Expr::lit(int(3)),
                )),
                _ => Some(bin(BinOp::Eq, col(i - 1, V), col(i, V))),
            });
        }
        conds
    }

    fn spec(&self) -> MultiJoinSpec {
        MultiJoinSpec {
            arities: vec![ARITY; self.n()],
            keys: vec![vec![K]; self.n()],
            join_types: self.join_types.clone(),
            conditions: self.conditions(),
            layouts: self.layouts.clone(),
        }
    }

    fn all_inner(&self) -> bool {
        self.join_types[1..].iter().all(|t| *t == JoinType::Inner)
    }
}

// ---------------------------------------------------------------------------
// Workloads: abstract operations turned into a valid changelog per input
// (respecting each layout's uniqueness), then interleaved across inputs.

#[derive(Clone, Debug)]
struct Op {
    input: u8,
    /// 0..5 insert, 5..8 update, 8..10 delete.
    action: u8,
    /// 0 = NULL, else the key value.
    key: u8,
    id: u8,
    v: u8,
    pick: u8,
}

fn op_strategy(n: usize) -> impl Strategy<Value = Op> {
    (0..n as u8, 0..10u8, 0..3u8, 0..4u8, 0..4u8, any::<u8>()).prop_map(
        |(input, action, key, id, v, pick)| Op {
            input,
            action,
            key,
            id,
            v,
            pick,
        },
    )
}

fn random_ops(rng: &mut StdRng, n: usize, len: usize) -> Vec<Op> {
    (0..len)
        .map(|_| Op {
            input: rng.random_range(0..n as u8),
            action: rng.random_range(0..10),
            key: rng.random_range(0..3),
            id: rng.random_range(0..4),
            v: rng.random_range(0..4),
            pick: rng.random(),
        })
        .collect()
}

fn key_value(k: u8) -> Value {
    if k == 0 {
        Value::Null
    } else {
        int(k as i64)
    }
}

/// The live row that `new` would collide with under `layout`'s uniqueness
/// (same unique key, or same join key), ignoring position `skip`.
fn conflict(
    layout: &JoinStateLayout,
    live: &[Row],
    new: &Row,
    skip: Option<usize>,
) -> Option<usize> {
    live.iter().enumerate().position(|(i, r)| {
        Some(i) != skip
            && match layout {
                JoinStateLayout::HasUniqueKey(_) => r[ID] == new[ID],
                JoinStateLayout::JoinKeyContainsUniqueKey => r[K] == new[K],
                JoinStateLayout::NoUniqueKey => false,
            }
    })
}

struct Workload {
    per_input: Vec<Vec<Change>>,
    /// The inputs' rows after the whole changelog.
    live: Vec<Vec<Row>>,
}

/// Turns `ops` into a changelog per input. With `retractions` false only
/// inserts survive (colliding inserts are dropped).
fn build(ops: &[Op], layouts: &[JoinStateLayout], retractions: bool) -> Workload {
    let n = layouts.len();
    let mut per_input = vec![Vec::new(); n];
    let mut live: Vec<Vec<Row>> = vec![Vec::new(); n];
    for op in ops {
        let i = op.input as usize % n;
        let (log, rows, layout) = (&mut per_input[i], &mut live[i], &layouts[i]);
        let new = vec![key_value(op.key), int(op.id as i64), int(op.v as i64)];
        let action = if op.action >= 5 && rows.is_empty() {
            0
        } else {
            op.action
        };
        match action {
            0..=4 => match conflict(layout, rows, &new, None) {
                None => {
                    log.push(Change::insert(new.clone()));
                    rows.push(new);
                }
                Some(idx) if retractions => {
                    // An insert of an existing unique key is an update.
                    log.push(Change::update_before(rows[idx].clone()));
                    log.push(Change::update_after(new.clone()));
                    rows[idx] = new;
                }
                Some(_) => {}
            },
            5..=7 if retractions => {
                let idx = op.pick as usize % rows.len();
                let old = rows[idx].clone();
                // Same unique key; maybe another join key, if still unique.
                let mut updated = vec![new[K].clone(), old[ID].clone(), new[V].clone()];
                if conflict(layout, rows, &updated, Some(idx)).is_some() {
                    updated[K] = old[K].clone();
                }
                log.push(Change::update_before(old));
                log.push(Change::update_after(updated.clone()));
                rows[idx] = updated;
            }
            _ if retractions => {
                let idx = op.pick as usize % rows.len();
                log.push(Change::delete(rows.swap_remove(idx)));
            }
            _ => {}
        }
    }
    Workload { per_input, live }
}

/// Merges the per-input changelogs, keeping each input's order, choosing
/// the next input by `picks`.
fn interleave(per_input: &[Vec<Change>], picks: &[u8]) -> Vec<(usize, Change)> {
    let mut pos = vec![0; per_input.len()];
    let mut merged = Vec::new();
    loop {
        let open: Vec<usize> = (0..per_input.len())
            .filter(|&i| pos[i] < per_input[i].len())
            .collect();
        if open.is_empty() {
            return merged;
        }
        let t = merged.len();
        let pick = picks.get(t).copied().unwrap_or(t as u8) as usize;
        let i = open[pick % open.len()];
        merged.push((i, per_input[i][pos[i]].clone()));
        pos[i] += 1;
    }
}

// ---------------------------------------------------------------------------
// The reference: the left-deep join evaluated from scratch over the final
// inputs, by nested loops.

fn reference(cfg: &Config, live: &[Vec<Row>]) -> Multiset {
    let conds = cfg.conditions();
    let mut acc: Vec<Row> = live[0].clone();
    for i in 1..cfg.n() {
        let mut next = Vec::new();
        for p in &acc {
            let mut matched = false;
            for s in &live[i] {
                // The common key: in_i.k = in_0.k, NULL equals nothing.
                if p[K].is_null() || s[K].is_null() || p[K] != s[K] {
                    continue;
                }
                let joined: Row = p.iter().chain(s).cloned().collect();
                if conds[i].as_ref().is_none_or(|c| c.is_true(&joined)) {
                    next.push(joined);
                    matched = true;
                }
            }
            if !matched && cfg.join_types[i] == JoinType::Left {
                let mut padded = p.clone();
                padded.extend(std::iter::repeat_n(Value::Null, ARITY));
                next.push(padded);
            }
        }
        acc = next;
    }
    let mut m = Multiset::new();
    for r in acc {
        m.add(r, 1);
    }
    m
}

/// Applies a change to a materialised table; a row's count never goes
/// negative.
fn apply(table: &mut Multiset, c: &Change) {
    table.apply(c);
    assert!(
        table.count(&c.row) >= 0,
        "{c} retracts a row the result does not hold"
    );
}

fn multi_join(backend: &StateBackend, cfg: &Config) -> MultiJoinOperator {
    MultiJoinOperator::new(backend, "mj", cfg.spec()).expect("valid spec")
}

/// Runs the MultiJoin one record at a time; checks each record's output
/// kinds and order; returns the materialised output.
fn run_multi(op: &mut MultiJoinOperator, cfg: &Config, records: &[(usize, Change)]) -> Multiset {
    let mut table = Multiset::new();
    let mut out = Vec::new();
    for (input, change) in records {
        out.clear();
        op.process(*input, vec![change.clone()], &mut out).unwrap();
        let mut accumulated = false;
        for c in &out {
            // Rows with the record carry its kind; padded rows that flip
            // are +I/-D; all-INNER forwards the record's kind only.
            assert!(
                c.kind == change.kind
                    || (!cfg.all_inner() && matches!(c.kind, RowKind::Insert | RowKind::Delete)),
                "record {change} on input {input} emitted {c}"
            );
            assert!(
                !(accumulated && c.kind.is_retract()),
                "record {change} emitted a retraction after an accumulation: {out:?}"
            );
            accumulated |= c.kind.is_accumulate();
            apply(&mut table, c);
        }
    }
    table
}

/// The same query as a chain of binary regular joins:
/// `((in_0 ⋈ in_1) ⋈ in_2) ...`, each keyed on `in_0.k = in_i.k`.
fn run_chain(backend: &StateBackend, cfg: &Config, records: &[(usize, Change)]) -> (Multiset, i64) {
    let conds = cfg.conditions();
    let mut joins: Vec<RegularJoinOperator> = (1..cfg.n())
        .map(|i| {
            let spec = JoinSpec {
                join_type: cfg.join_types[i],
                left_keys: vec![K],
                right_keys: vec![K],
                left_arity: ARITY * i,
                right_arity: ARITY,
                residual: conds[i].clone(),
                left_layout: if i == 1 {
                    cfg.layouts[0].clone()
                } else {
                    JoinStateLayout::NoUniqueKey
                },
                right_layout: cfg.layouts[i].clone(),
            };
            RegularJoinOperator::new(backend, &format!("chain{i}"), spec).unwrap()
        })
        .collect();
    let mut table = Multiset::new();
    for (input, change) in records {
        let (mut level, side) = if *input == 0 { (0, 0) } else { (input - 1, 1) };
        let mut batch = Vec::new();
        joins[level]
            .process(side, vec![change.clone()], &mut batch)
            .unwrap();
        while level + 1 < joins.len() {
            level += 1;
            let mut next = Vec::new();
            joins[level].process(0, batch, &mut next).unwrap();
            batch = next;
        }
        for c in &batch {
            apply(&mut table, c);
        }
    }
    let entries = joins
        .iter()
        .flat_map(|j| j.state_reports())
        .map(|r| r.metrics.entries)
        .sum();
    (table, entries)
}

/// The promise at every point: after each record, the materialised output
/// equals the batch join of the inputs seen so far.
fn check_every_step(cfg: &Config, records: &[(usize, Change)]) {
    let mut op = multi_join(&StateBackend::heap(), cfg);
    let mut live: Vec<Vec<Row>> = vec![Vec::new(); cfg.n()];
    let mut table = Multiset::new();
    for (step, (input, change)) in records.iter().enumerate() {
        let mut out = Vec::new();
        op.process(*input, vec![change.clone()], &mut out).unwrap();
        out.iter().for_each(|c| apply(&mut table, c));
        let rows = &mut live[*input];
        if change.kind.is_accumulate() {
            rows.push(change.row.clone());
        } else {
            let at = rows.iter().position(|r| *r == change.row).unwrap();
            rows.remove(at);
        }
        assert_eq!(
            table.sorted_rows(),
            reference(cfg, &live).sorted_rows(),
            "after record {step} ({change} on input {input}), {cfg:?}"
        );
    }
}

/// The whole check for one configuration and workload, on both backends
/// (on the heap only when `rocksdb` is false).
fn check(cfg: &Config, ops: &[Op], picks: &[u8], rocksdb: bool) {
    let w = build(ops, &cfg.layouts, true);
    let records = interleave(&w.per_input, picks);
    if rocksdb {
        check_every_step(cfg, &records);
    }
    let expected = reference(cfg, &w.live).sorted_rows();
    let backends = if rocksdb {
        backends()
    } else {
        vec![StateBackend::heap()]
    };
    for backend in backends {
        let mut op = multi_join(&backend, cfg);
        let got = run_multi(&mut op, cfg, &records).sorted_rows();
        assert_eq!(
            got,
            expected,
            "MultiJoin vs batch join, {:?}, {cfg:?}, records {records:?}",
            backend.kind()
        );
        let (chain, _) = run_chain(&backend, cfg, &records);
        assert_eq!(
            chain.sorted_rows(),
            got,
            "MultiJoin vs chain of binary joins, {:?}, {cfg:?}, records {records:?}",
            backend.kind()
        );
    }
}

fn layout_strategy() -> impl Strategy<Value = JoinStateLayout> {
    (0..3usize).prop_map(|i| LAYOUTS[i]())
}

fn join_type_strategy() -> impl Strategy<Value = JoinType> {
    prop_oneof![Just(JoinType::Inner), Just(JoinType::Left)]
}

fn config_strategy(n: usize) -> impl Strategy<Value = Config> {
    (
        proptest::collection::vec(join_type_strategy(), n),
        0..4u8,
        proptest::collection::vec(layout_strategy(), n),
    )
        .prop_map(|(join_types, residual, layouts)| Config {
            join_types,
            residual,
            layouts,
        })
}

fn three_way() -> impl Strategy<Value = (Config, Vec<Op>, Vec<u8>)> {
    (
        config_strategy(3),
        proptest::collection::vec(op_strategy(3), 0..60),
        proptest::collection::vec(any::<u8>(), 0..120),
    )
}

fn n_way() -> impl Strategy<Value = (Config, Vec<Op>, Vec<u8>)> {
    prop_oneof![Just(2usize), Just(4usize)].prop_flat_map(|n| {
        (
            config_strategy(n),
            proptest::collection::vec(op_strategy(n), 0..50),
            proptest::collection::vec(any::<u8>(), 0..100),
        )
    })
}

// Opening a RocksDB costs ~0.1 s, which bounds the number of cases.
proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// (1) and (2): random changelogs on three inputs, interleaved at
    /// random, every join type, residual and layout.
    #[test]
    fn three_way_materialises_to_the_batch_join((cfg, ops, picks) in three_way()) {
        check(&cfg, &ops, &picks, true);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// The same on two and four inputs.
    #[test]
    fn n_way_materialises_to_the_batch_join((cfg, ops, picks) in n_way()) {
        check(&cfg, &ops, &picks, true);
    }
}

fn all_three_way_configs() -> Vec<Config> {
    let types = [JoinType::Inner, JoinType::Left];
    let mut configs = Vec::new();
    for t1 in types {
        for t2 in types {
            for residual in 0..4 {
                for l0 in LAYOUTS {
                    for l1 in LAYOUTS {
                        for l2 in LAYOUTS {
                            configs.push(Config {
                                join_types: vec![JoinType::Inner, t1, t2],
                                residual,
                                layouts: vec![l0(), l1(), l2()],
                            });
                        }
                    }
                }
            }
        }
    }
    configs
}

/// Every combination of join types, residuals and layouts on three inputs,
/// each on seeded random workloads, on the heap; on RocksDB every layout
/// combination, once, with join types and residual varying (opening a
/// RocksDB per configuration would take minutes).
#[test]
fn every_three_way_configuration_materialises_to_the_batch_join() {
    let configs = all_three_way_configs();
    assert_eq!(configs.len(), 4 * 4 * 27);
    for (i, cfg) in configs.iter().enumerate() {
        let (join_types, layouts) = (i / 108, i % 27);
        let rocksdb = join_types == layouts % 4 && cfg.residual as usize == layouts / 4 % 4;
        for seed in 0..3 {
            let mut rng = StdRng::seed_from_u64((i * 3 + seed) as u64);
            let ops = random_ops(&mut rng, 3, 70);
            let picks: Vec<u8> = (0..140).map(|_| rng.random()).collect();
            check(cfg, &ops, &picks, rocksdb && seed == 0);
        }
    }
}

// ---------------------------------------------------------------------------
// (3) State holds the input rows and nothing else.

#[test]
fn state_holds_only_the_input_rows() {
    // Every layout combination, under varying join types.
    let mut rng = StdRng::seed_from_u64(3);
    for (_, cfg) in all_three_way_configs()
        .into_iter()
        .filter(|c| c.residual == 1)
        .enumerate()
        .filter(|(i, _)| i / 27 == (i % 27) % 4)
    {
        let ops = random_ops(&mut rng, 3, 80);
        let w = build(&ops, &cfg.layouts, false);
        let records = interleave(&w.per_input, &[]);
        assert!(records.iter().all(|(_, c)| c.kind == RowKind::Insert));
        // Distinct stored rows: rows whose key has a NULL are not stored.
        let stored: usize = w
            .live
            .iter()
            .map(|rows| {
                rows.iter()
                    .filter(|r| !r[K].is_null())
                    .collect::<HashSet<_>>()
                    .len()
            })
            .sum();
        for backend in backends() {
            let mut op = multi_join(&backend, &cfg);
            run_multi(&mut op, &cfg, &records);
            let reports = op.state_reports();
            let names: Vec<&str> = reports.iter().map(|r| r.name.as_str()).collect();
            assert_eq!(names, ["input0", "input1", "input2"]);
            let entries: i64 = reports.iter().map(|r| r.metrics.entries).sum();
            assert_eq!(entries, stored as i64, "{:?} {cfg:?}", backend.kind());
            // The binary chain also keeps its intermediate result.
            let (_, chain_entries) = run_chain(&backend, &cfg, &records);
            assert!(chain_entries > entries, "{chain_entries} vs {entries}");
        }
    }
}

// ---------------------------------------------------------------------------
// (4) Recomputation cost and the changelog, pinned on a tiny input.

fn tiny_records() -> Vec<(usize, Change)> {
    vec![
        (0, Change::insert(row(Some(1), 1, 0))), // a1
        (1, Change::insert(row(Some(1), 1, 0))), // b1
        (1, Change::insert(row(Some(1), 2, 0))), // b2
        (2, Change::insert(row(Some(1), 1, 0))), // c1
        (0, Change::insert(row(Some(1), 2, 0))), // a2
        (1, Change::delete(row(Some(1), 1, 0))), // -b1
        (1, Change::delete(row(Some(1), 2, 0))), // -b2
    ]
}

fn tiny_config(t: JoinType) -> Config {
    Config {
        join_types: vec![JoinType::Inner, t, t],
        residual: 0,
        layouts: vec![JoinStateLayout::NoUniqueKey; 3],
    }
}

/// One record's output as strings: retractions (sorted), then
/// accumulations (sorted). The scan order of a map state is unspecified,
/// so rows are compared within each group; the groups' order is checked.
fn normalise(rows: Vec<String>) -> Vec<String> {
    let split = rows.iter().take_while(|r| r.starts_with('-')).count();
    assert!(
        rows[split..].iter().all(|r| r.starts_with('+')),
        "retractions must come first: {rows:?}"
    );
    let (mut retractions, mut accumulations) = (rows[..split].to_vec(), rows[split..].to_vec());
    retractions.sort();
    accumulations.sort();
    retractions.extend(accumulations);
    retractions
}

fn strings(rows: &[&str]) -> Vec<String> {
    normalise(rows.iter().map(|r| r.to_string()).collect())
}

/// Runs the tiny input; returns each record's output and `rows_visited`
/// after each record.
fn run_tiny(
    backend: &StateBackend,
    cfg: &Config,
) -> (Vec<Vec<String>>, Vec<u64>, MultiJoinOperator) {
    let mut op = multi_join(backend, cfg);
    let mut outputs = Vec::new();
    let mut visited = Vec::new();
    for (input, change) in tiny_records() {
        let mut out = Vec::new();
        op.process(input, vec![change], &mut out).unwrap();
        outputs.push(normalise(out.iter().map(|c| c.to_string()).collect()));
        let counters = op.counters();
        assert_eq!(counters.len(), 1);
        assert_eq!(counters[0].0, "rows_visited");
        visited.push(counters[0].1);
    }
    (outputs, visited, op)
}

// Rows of the tiny input, joined.
const A1B1C1: &str = "1, 1, 0, 1, 1, 0, 1, 1, 0";
const A1B2C1: &str = "1, 1, 0, 1, 2, 0, 1, 1, 0";
const A2B1C1: &str = "1, 2, 0, 1, 1, 0, 1, 1, 0";
const A2B2C1: &str = "1, 2, 0, 1, 2, 0, 1, 1, 0";

#[test]
fn rows_visited_pinned_inner() {
    // Each input is read from state at most once per record.
    // a1: scan in1 (empty).                                          0
    // b1, b2: scan in0 (a1), then in2 (empty).                       1 + 1
    // c1: scan in0 (a1), in1 (b1, b2).                               3
    // a2: scan in1 (b1, b2), in2 (c1).                               2 + 1
    // -b1: scan in0 (a1, a2), in2 (c1).                              2 + 1
    // -b2: the same.                                                 3
    for backend in backends() {
        let (outputs, visited, op) = run_tiny(&backend, &tiny_config(JoinType::Inner));
        assert_eq!(visited, [0, 1, 2, 5, 8, 11, 14], "{:?}", backend.kind());
        let expected: Vec<Vec<String>> = vec![
            strings(&[]),
            strings(&[]),
            strings(&[]),
            strings(&[&format!("+I[{A1B1C1}]"), &format!("+I[{A1B2C1}]")]),
            strings(&[&format!("+I[{A2B1C1}]"), &format!("+I[{A2B2C1}]")]),
            strings(&[&format!("-D[{A1B1C1}]"), &format!("-D[{A2B1C1}]")]),
            strings(&[&format!("-D[{A1B2C1}]"), &format!("-D[{A2B2C1}]")]),
        ];
        assert_eq!(outputs, expected);
        // State reads: one per entry a scan visits (one for an empty
        // scan), one per stored record (read-modify-write).
        //   input0: a1 add, b1/b2/c1 scan 1 each, a2 add, -b1/-b2 scan 2.
        //   input1: a1 empty scan, b1/b2 add, c1/a2 scan 2, -b1/-b2 retract.
        //   input2: b1/b2 empty scan, c1 add, a2/-b1/-b2 one scan of 1.
        let reads: Vec<u64> = op.state_reports().iter().map(|r| r.metrics.reads).collect();
        assert_eq!(
            reads,
            [1 + 3 + 1 + 2 + 2, 1 + 2 + 2 + 2 + 2, 2 + 1 + 1 + 1 + 1],
            "{:?}",
            backend.kind()
        );
    }
}

#[test]
fn rows_visited_pinned_left() {
    // Each input is read from state at most once per record.
    // a1: scan in1 (empty), pad; in2 (empty), pad.                     0
    // b1: in0 (a1); own in1 (empty: m = 0); in2 (empty).               1
    // b2: in0 (a1); own in1 (b1: m = 1); in2 (empty).                  1 + 1
    // c1: in0 (a1); in1 (b1, b2); own in2 (empty: m = 0).              3
    // a2: in1 (b1, b2); in2 (c1).                                      2 + 1
    // -b1: in0 (a1, a2); own in1 (b1, b2: m = 2); in2 (c1).            2 + 2 + 1
    // -b2: in0 (a1, a2); own in1 (b2: m = 1); in2 (c1).                2 + 1 + 1
    const N3: &str = "NULL, NULL, NULL";
    for backend in backends() {
        let (outputs, visited, _) = run_tiny(&backend, &tiny_config(JoinType::Left));
        assert_eq!(visited, [0, 1, 3, 6, 9, 14, 18], "{:?}", backend.kind());
        let expected: Vec<Vec<String>> = vec![
            strings(&[&format!("+I[1, 1, 0, {N3}, {N3}]")]),
            strings(&[
                &format!("-D[1, 1, 0, {N3}, {N3}]"),
                &format!("+I[1, 1, 0, 1, 1, 0, {N3}]"),
            ]),
            strings(&[&format!("+I[1, 1, 0, 1, 2, 0, {N3}]")]),
            strings(&[
                &format!("-D[1, 1, 0, 1, 1, 0, {N3}]"),
                &format!("-D[1, 1, 0, 1, 2, 0, {N3}]"),
                &format!("+I[{A1B1C1}]"),
                &format!("+I[{A1B2C1}]"),
            ]),
            strings(&[&format!("+I[{A2B1C1}]"), &format!("+I[{A2B2C1}]")]),
            strings(&[&format!("-D[{A1B1C1}]"), &format!("-D[{A2B1C1}]")]),
            strings(&[
                &format!("-D[{A1B2C1}]"),
                &format!("-D[{A2B2C1}]"),
                &format!("+I[1, 1, 0, {N3}, 1, 1, 0]"),
                &format!("+I[1, 2, 0, {N3}, 1, 1, 0]"),
            ]),
        ];
        assert_eq!(outputs, expected);
    }
}

// ---------------------------------------------------------------------------
// Golden changelogs and edge cases.

fn two_way_left() -> Config {
    Config {
        join_types: vec![JoinType::Inner, JoinType::Left],
        residual: 0,
        layouts: vec![
            JoinStateLayout::JoinKeyContainsUniqueKey,
            JoinStateLayout::HasUniqueKey(vec![ID]),
        ],
    }
}

/// `Users u LEFT JOIN Orders o ON u.k = o.k`, the sequence of Flink's
/// `StreamingTwoWayOuterMultiJoinOperatorTest` with updates as -U/+U pairs:
/// rows with the record carry its kind, flipped padded rows are -D/+I.
#[test]
fn two_way_left_join_changelog_follows_flink() {
    let u = |v| row(Some(1), 1, v);
    let o = |id, v| row(Some(1), id, v);
    let steps: Vec<((usize, Change), Vec<&str>)> = vec![
        (
            (0, Change::insert(u(0))),
            vec!["+I[1, 1, 0, NULL, NULL, NULL]"],
        ),
        ((1, Change::insert(row(Some(2), 2, 0))), vec![]),
        (
            (1, Change::insert(o(1, 0))),
            vec!["-D[1, 1, 0, NULL, NULL, NULL]", "+I[1, 1, 0, 1, 1, 0]"],
        ),
        (
            (1, Change::delete(o(1, 0))),
            vec!["-D[1, 1, 0, 1, 1, 0]", "+I[1, 1, 0, NULL, NULL, NULL]"],
        ),
        (
            (1, Change::insert(o(1, 0))),
            vec!["-D[1, 1, 0, NULL, NULL, NULL]", "+I[1, 1, 0, 1, 1, 0]"],
        ),
        ((0, Change::delete(u(0))), vec!["-D[1, 1, 0, 1, 1, 0]"]),
        ((0, Change::insert(u(0))), vec!["+I[1, 1, 0, 1, 1, 0]"]),
        (
            (0, Change::update_before(u(0))),
            vec!["-U[1, 1, 0, 1, 1, 0]"],
        ),
        (
            (0, Change::update_after(u(5))),
            vec!["+U[1, 1, 5, 1, 1, 0]"],
        ),
        (
            (1, Change::update_before(o(1, 0))),
            vec!["-U[1, 1, 5, 1, 1, 0]", "+I[1, 1, 5, NULL, NULL, NULL]"],
        ),
        (
            (1, Change::update_after(o(1, 7))),
            vec!["-D[1, 1, 5, NULL, NULL, NULL]", "+U[1, 1, 5, 1, 1, 7]"],
        ),
        ((1, Change::insert(o(2, 0))), vec!["+I[1, 1, 5, 1, 2, 0]"]),
        (
            (0, Change::update_before(u(5))),
            vec!["-U[1, 1, 5, 1, 1, 7]", "-U[1, 1, 5, 1, 2, 0]"],
        ),
        (
            (0, Change::update_after(u(6))),
            vec!["+U[1, 1, 6, 1, 1, 7]", "+U[1, 1, 6, 1, 2, 0]"],
        ),
    ];
    for backend in backends() {
        let mut op = multi_join(&backend, &two_way_left());
        for ((input, change), expected) in &steps {
            let mut out = Vec::new();
            op.process(*input, vec![change.clone()], &mut out).unwrap();
            let got = normalise(out.iter().map(|c| c.to_string()).collect());
            assert_eq!(got, strings(expected), "after {change} on input {input}");
        }
    }
}

/// An all-INNER MultiJoin forwards the record's kind.
#[test]
fn inner_join_forwards_row_kinds() {
    let cfg = Config {
        join_types: vec![JoinType::Inner; 3],
        residual: 0,
        layouts: vec![JoinStateLayout::JoinKeyContainsUniqueKey; 3],
    };
    for backend in backends() {
        let mut op = multi_join(&backend, &cfg);
        let mut out = Vec::new();
        for i in 0..3 {
            op.process(i, vec![Change::insert(row(Some(4), i as i64, 0))], &mut out)
                .unwrap();
        }
        assert_eq!(
            out.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
            ["+I[4, 0, 0, 4, 1, 0, 4, 2, 0]"]
        );
        out.clear();
        op.process(1, vec![Change::update_before(row(Some(4), 1, 0))], &mut out)
            .unwrap();
        op.process(1, vec![Change::update_after(row(Some(4), 1, 9))], &mut out)
            .unwrap();
        assert_eq!(
            out.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
            [
                "-U[4, 0, 0, 4, 1, 0, 4, 2, 0]",
                "+U[4, 0, 0, 4, 1, 9, 4, 2, 0]"
            ]
        );
    }
}

/// A NULL key matches nothing: an input-0 row shows padded only when every
/// join is LEFT; nothing with a NULL key is stored.
#[test]
fn null_keys_match_nothing_and_are_not_stored() {
    for backend in backends() {
        for (t, shows) in [(JoinType::Left, true), (JoinType::Inner, false)] {
            let cfg = Config {
                join_types: vec![JoinType::Inner, JoinType::Left, t],
                residual: 2,
                layouts: vec![JoinStateLayout::NoUniqueKey; 3],
            };
            let mut op = multi_join(&backend, &cfg);
            let mut out = Vec::new();
            for i in 0..3 {
                op.process(i, vec![Change::insert(row(None, 1, 1))], &mut out)
                    .unwrap();
            }
            op.process(0, vec![Change::delete(row(None, 1, 1))], &mut out)
                .unwrap();
            let expected: Vec<&str> = if shows {
                vec![
                    "+I[NULL, 1, 1, NULL, NULL, NULL, NULL, NULL, NULL]",
                    "-D[NULL, 1, 1, NULL, NULL, NULL, NULL, NULL, NULL]",
                ]
            } else {
                vec![]
            };
            assert_eq!(
                out.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
                expected
            );
            let entries: i64 = op.state_reports().iter().map(|r| r.metrics.entries).sum();
            assert_eq!(entries, 0);
            assert_eq!(op.counters(), [("rows_visited", 0)]);
        }
    }
}

/// `A LEFT JOIN B ON A.k = B.k JOIN C ON B.k = C.k`: the key equality is
/// taken against input 0, so the equality with the padded `B` must be in
/// `conditions[2]`; without it the query is `... JOIN C ON A.k = C.k`.
#[test]
fn key_equality_against_a_padded_input_goes_in_the_condition() {
    for backend in backends() {
        for (condition, expected) in [
            (None, vec!["+I[1, 1, 0, NULL, NULL, NULL, 1, 1, 0]"]),
            (Some(bin(BinOp::Eq, col(1, K), col(2, K))), vec![]),
        ] {
            let mut spec = tiny_config(JoinType::Left).spec();
            spec.join_types[2] = JoinType::Inner;
            spec.conditions[2] = condition;
            let mut op = MultiJoinOperator::new(&backend, "mj", spec).unwrap();
            let mut out = Vec::new();
            op.process(0, vec![Change::insert(row(Some(1), 1, 0))], &mut out)
                .unwrap();
            op.process(2, vec![Change::insert(row(Some(1), 1, 0))], &mut out)
                .unwrap();
            let got: Vec<String> = out.iter().map(|c| c.to_string()).collect();
            assert_eq!(got, expected);
        }
    }
}

#[test]
fn changelog_mode_names_the_kinds_it_may_emit() {
    let insert_only = ChangelogMode::INSERT_ONLY;
    let inner = tiny_config(JoinType::Inner).spec();
    assert_eq!(inner.changelog_mode(&[insert_only; 3]).to_string(), "[I]");
    assert_eq!(
        inner
            .changelog_mode(&[insert_only, ChangelogMode::ALL, insert_only])
            .to_string(),
        "[I,UB,UA,D]"
    );
    let left = tiny_config(JoinType::Left).spec();
    assert_eq!(left.changelog_mode(&[insert_only; 3]).to_string(), "[I,D]");
    assert_eq!(
        left.changelog_mode(&[ChangelogMode::UPSERT, insert_only, insert_only])
            .to_string(),
        "[I,UA,D]"
    );
}

#[test]
fn bad_specs_and_rows_are_errors_not_panics() {
    let backend = StateBackend::heap();
    let good = tiny_config(JoinType::Inner).spec();
    let mut cases: Vec<(MultiJoinSpec, &str)> = Vec::new();
    let mut s = good.clone();
    s.arities.truncate(1);
    s.keys.truncate(1);
    s.join_types.truncate(1);
    s.conditions.truncate(1);
    s.layouts.truncate(1);
    cases.push((s, "at least 2 inputs"));
    let mut s = good.clone();
    s.layouts.pop();
    cases.push((s, "entries in layouts"));
    let mut s = good.clone();
    s.keys[2] = vec![0, 1];
    cases.push((s, "share one join key"));
    let mut s = good.clone();
    s.keys[1] = vec![7];
    cases.push((s, "key column 7 is out of range"));
    let mut s = good.clone();
    s.conditions[1] = Some(col(2, V));
    cases.push((s, "reads column 8"));
    let mut s = good.clone();
    s.conditions[0] = Some(Expr::lit(Value::Bool(true)));
    cases.push((s, "conditions[0] must be None"));
    let mut s = good.clone();
    s.layouts[0] = JoinStateLayout::HasUniqueKey(vec![3]);
    cases.push((s, "unique key column 3"));
    for (spec, message) in cases {
        let err = MultiJoinOperator::new(&backend, "bad", spec)
            .err()
            .expect("invalid spec")
            .to_string();
        assert!(err.contains(message), "{err:?} should mention {message:?}");
    }
    let mut op = MultiJoinOperator::new(&backend, "ok", good).unwrap();
    let mut out = Vec::new();
    let err = op
        .process(3, vec![Change::insert(row(Some(1), 1, 1))], &mut out)
        .unwrap_err();
    assert!(err.to_string().contains("3 inputs"), "{err}");
    let err = op
        .process(1, vec![Change::insert(vec![int(1)])], &mut out)
        .unwrap_err();
    assert!(err.to_string().contains("1 columns, expected 3"), "{err}");
}
