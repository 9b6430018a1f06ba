//! Delta join against the index-lookup store: an upsert sink on
//! (left pk, right pk) materialises to the batch inner join of the final
//! tables for every interleaving of source reads and join processing, with
//! and without caches; caches stay coherent with the store; the join keeps
//! no state; duplicates are counted.

use operators::changelog::{Change, RowKind, SinkEncoding};
use operators::exec::{ChangeSource, Exchange, JobBuilder, Target};
use operators::expr::{BinOp, Expr};
use operators::join::StoreWritingSource;
use operators::join::{
    DeltaJoinOperator, DeltaJoinOptions, DeltaJoinSpec, JoinSpec, JoinStateLayout,
    RegularJoinOperator,
};
use operators::lookup::{IndexLookupStore, TableId};
use operators::operator::{OpResult, Operator};
use operators::sink::SinkCollector;
use operators::state::StateBackend;
use operators::value::{cmp_rows, Row, Value};
use proptest::prelude::*;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::Path;
use std::sync::Arc;

// ---------------------------------------------------------------- helpers

/// A source over a fixed list of changes.
struct VecSource(VecDeque<Change>);

impl VecSource {
    fn boxed(changes: Vec<Change>) -> Box<dyn ChangeSource> {
        Box::new(VecSource(changes.into()))
    }
}

impl ChangeSource for VecSource {
    fn next_batch(&mut self, max: usize, out: &mut Vec<Change>) -> OpResult<usize> {
        let n = max.min(self.0.len());
        out.extend(self.0.drain(..n));
        Ok(n)
    }
}

fn int(i: i64) -> Value {
    Value::Int(i)
}

fn row(k: i64, id: i64, v: i64) -> Row {
    vec![int(k), int(id), int(v)]
}

fn counter(op: &dyn Operator, name: &str) -> u64 {
    op.counters()
        .into_iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no counter {name}"))
        .1
}

/// Tables `[k, id, v]`: insert-only ones keyed by `id`, upsert ones by
/// `(k, id)`; both indexed by `k`.
fn pk_of(upsert: bool) -> Vec<usize> {
    if upsert {
        vec![0, 1]
    } else {
        vec![1]
    }
}

/// Stores go to tmpfs when there is one: opening, creating column families
/// and closing a RocksDB sync files, which dominates these small tests.
fn store_dir() -> Option<&'static Path> {
    let shm = Path::new("/dev/shm");
    shm.is_dir().then_some(shm)
}

fn open_store(left_upsert: bool, right_upsert: bool) -> (Arc<IndexLookupStore>, TableId, TableId) {
    let store = Arc::new(IndexLookupStore::open(store_dir()).expect("store opens"));
    let l = store
        .create_table("L", 3, vec![0], Some(pk_of(left_upsert)))
        .unwrap();
    let r = store
        .create_table("R", 3, vec![0], Some(pk_of(right_upsert)))
        .unwrap();
    (store, l, r)
}

fn spec(l: TableId, r: TableId, keys: Vec<usize>, residual: Option<Expr>) -> DeltaJoinSpec {
    DeltaJoinSpec {
        left_table: l,
        right_table: r,
        left_calc: Default::default(),
        right_calc: Default::default(),
        left_keys: keys.clone(),
        right_keys: keys,
        residual,
    }
}

/// An upsert sink keyed by `key` (positions in the joined row).
fn materialise(changes: &[Change], key: &[usize]) -> BTreeMap<String, Row> {
    let mut m = BTreeMap::new();
    for c in changes {
        let k = format!("{:?}", key.iter().map(|&i| &c.row[i]).collect::<Vec<_>>());
        match c.kind {
            RowKind::Insert | RowKind::UpdateAfter => {
                m.insert(k, c.row.clone());
            }
            RowKind::UpdateBefore | RowKind::Delete => {
                m.remove(&k);
            }
        }
    }
    m
}

/// Nested-loop inner join of the final tables, keyed like [`materialise`].
fn oracle(
    left: &[Row],
    right: &[Row],
    keys: &[usize],
    residual: Option<&Expr>,
    sink_key: &[usize],
) -> BTreeMap<String, Row> {
    let mut m = BTreeMap::new();
    for l in left {
        for r in right {
            if !keys.iter().all(|&k| !l[k].is_null() && l[k] == r[k]) {
                continue;
            }
            let joined: Row = l.iter().chain(r).cloned().collect();
            if residual.is_some_and(|p| !p.is_true(&joined)) {
                continue;
            }
            let k = format!(
                "{:?}",
                sink_key.iter().map(|&i| &joined[i]).collect::<Vec<_>>()
            );
            assert!(m.insert(k, joined).is_none(), "sink key not unique");
        }
    }
    m
}

/// Output rows identical to an earlier output row.
fn duplicates_in(changes: &[Change]) -> u64 {
    let mut seen = HashSet::new();
    changes
        .iter()
        .filter(|c| !seen.insert(c.row.clone()))
        .count() as u64
}

// ------------------------------------------------------- random workloads

#[derive(Clone, Debug)]
struct SideInput {
    upsert: bool,
    /// (k, id, v, update style): id is a row id for insert-only inputs and
    /// the second primary key column for upsert inputs; the style picks how
    /// an update of an existing key is sent (0: -U then +U, 1: +U alone,
    /// 2: +I alone).
    events: Vec<(i64, i64, i64, u8)>,
    batch_sizes: Vec<usize>,
}

impl SideInput {
    /// The changelog and the final table.
    fn changes(&self) -> (Vec<Change>, Vec<Row>) {
        let mut out = Vec::new();
        let mut table: BTreeMap<(i64, i64), Row> = BTreeMap::new();
        for (i, &(k, id, v, style)) in self.events.iter().enumerate() {
            if !self.upsert {
                let r = row(k, i as i64, v);
                table.insert((i as i64, 0), r.clone());
                out.push(Change::insert(r));
                continue;
            }
            let new = row(k, id, v);
            match table.insert((k, id), new.clone()) {
                None => out.push(Change::insert(new)),
                Some(old) => match style {
                    0 => {
                        out.push(Change::update_before(old));
                        out.push(Change::update_after(new));
                    }
                    1 => out.push(Change::update_after(new)),
                    _ => out.push(Change::insert(new)),
                },
            }
        }
        (out, table.into_values().collect())
    }
}

fn side_input() -> impl Strategy<Value = SideInput> {
    (
        any::<bool>(),
        prop::collection::vec((0i64..3, 0i64..3, 0i64..4, 0u8..3), 0..14),
        prop::collection::vec(1usize..5, 1..6),
    )
        .prop_map(|(upsert, events, batch_sizes)| SideInput {
            upsert,
            events,
            batch_sizes,
        })
}

#[derive(Clone, Debug)]
struct Workload {
    sides: [SideInput; 2],
    /// 0: none; 1: `(l.id + r.id) % 2 = 0` (primary key columns); 2:
    /// `l.v <= r.v` (only when both inputs are insert-only, else as 1).
    residual: u8,
    /// Join on `(k, v)` with the index on `k` alone (insert-only inputs only).
    two_keys: bool,
    /// Picks the next action among those possible: read a batch of a source
    /// (writing it to the store), or process a side's oldest read batch.
    schedule: Vec<u8>,
}

fn workload() -> impl Strategy<Value = Workload> {
    (
        side_input(),
        side_input(),
        0u8..3,
        any::<bool>(),
        prop::collection::vec(any::<u8>(), 1..40),
    )
        .prop_map(|(l, r, residual, two_keys, schedule)| Workload {
            sides: [l, r],
            residual,
            two_keys,
            schedule,
        })
}

impl Workload {
    fn insert_only(&self) -> bool {
        !self.sides[0].upsert && !self.sides[1].upsert
    }

    fn keys(&self) -> Vec<usize> {
        if self.two_keys && self.insert_only() {
            vec![0, 2]
        } else {
            vec![0]
        }
    }

    fn residual(&self) -> Option<Expr> {
        let ids_even = Expr::bin(
            BinOp::Eq,
            Expr::bin(
                BinOp::Mod,
                Expr::bin(BinOp::Add, Expr::col(1), Expr::col(4)),
                Expr::lit(int(2)),
            ),
            Expr::lit(int(0)),
        );
        match self.residual {
            0 => None,
            2 if self.insert_only() => Some(Expr::bin(BinOp::LtEq, Expr::col(2), Expr::col(5))),
            _ => Some(ids_even),
        }
    }

    fn sink_key(&self) -> Vec<usize> {
        let l = pk_of(self.sides[0].upsert);
        let r = pk_of(self.sides[1].upsert);
        l.into_iter().chain(r.into_iter().map(|c| c + 3)).collect()
    }
}

struct RunResult {
    output: Vec<Change>,
    counters: HashMap<&'static str, u64>,
    store_rows: [Vec<Row>; 2],
}

/// Runs the workload's interleaving against a fresh store.
fn run(w: &Workload, options: DeltaJoinOptions) -> RunResult {
    let (store, l, r) = open_store(w.sides[0].upsert, w.sides[1].upsert);
    let tables = [l, r];
    let mut op = DeltaJoinOperator::new(store.clone(), spec(l, r, w.keys(), w.residual()), options)
        .expect("valid delta join");
    let mut sources: Vec<StoreWritingSource> = (0..2)
        .map(|s| {
            StoreWritingSource::new(
                VecSource::boxed(w.sides[s].changes().0),
                store.clone(),
                tables[s],
            )
        })
        .collect();
    let mut done = [false; 2];
    let mut reads = [0usize; 2];
    let mut pending: [VecDeque<Vec<Change>>; 2] = [VecDeque::new(), VecDeque::new()];
    let mut output = Vec::new();
    let mut step = 0usize;
    loop {
        // (side, true = read a batch / false = process one)
        let mut actions = Vec::new();
        for s in 0..2 {
            if !done[s] {
                actions.push((s, true));
            }
            if !pending[s].is_empty() {
                actions.push((s, false));
            }
        }
        if actions.is_empty() {
            break;
        }
        let choice = w.schedule[step % w.schedule.len()] as usize;
        step += 1;
        let (s, read) = actions[choice % actions.len()];
        if read {
            let sizes = &w.sides[s].batch_sizes;
            let size = sizes[reads[s] % sizes.len()];
            reads[s] += 1;
            let mut batch = Vec::new();
            let n = sources[s].next_batch(size, &mut batch).unwrap();
            if n == 0 {
                done[s] = true;
            } else {
                pending[s].push_back(batch);
            }
        } else {
            let batch = pending[s].pop_front().unwrap();
            op.process(s, batch, &mut output).unwrap();
        }
    }
    assert!(op.state_reports().is_empty(), "a delta join keeps no state");
    RunResult {
        output,
        counters: op.counters().into_iter().collect(),
        store_rows: [store.scan(l).unwrap(), store.scan(r).unwrap()],
    }
}

fn sorted(mut rows: Vec<Row>) -> Vec<Row> {
    rows.sort_by(|a, b| cmp_rows(a, b));
    rows
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn upsert_sink_equals_batch_join(w in workload()) {
        let (_, left_final) = w.sides[0].changes();
        let (_, right_final) = w.sides[1].changes();
        let residual = w.residual();
        let expected = oracle(&left_final, &right_final, &w.keys(), residual.as_ref(), &w.sink_key());

        let uncached = run(&w, DeltaJoinOptions::uncached());
        prop_assert_eq!(sorted(uncached.store_rows[0].clone()), sorted(left_final.clone()));
        prop_assert_eq!(sorted(uncached.store_rows[1].clone()), sorted(right_final.clone()));
        prop_assert_eq!(&materialise(&uncached.output, &w.sink_key()), &expected);
        prop_assert_eq!(uncached.counters["duplicates"], duplicates_in(&uncached.output));
        prop_assert!(uncached.output.iter().all(|c| c.kind.is_accumulate()));
        let probes = uncached.counters["lookups"];
        prop_assert_eq!(uncached.counters["left_cache_hits"] + uncached.counters["left_cache_misses"], 0);

        for size in [1usize, 2, 1000] {
            let cached = run(&w, DeltaJoinOptions::cached(size, size));
            // Coherent caches: the very same changelog as without them.
            prop_assert_eq!(&cached.output, &uncached.output, "cache size {}", size);
            prop_assert_eq!(cached.counters["duplicates"], uncached.counters["duplicates"]);
            prop_assert_eq!(cached.counters["rows_visited"], uncached.counters["rows_visited"]);
            let c = &cached.counters;
            let (hits, misses) = (
                c["left_cache_hits"] + c["right_cache_hits"],
                c["left_cache_misses"] + c["right_cache_misses"],
            );
            prop_assert_eq!(hits + misses, probes);
            prop_assert_eq!(c["lookups"], misses);
            prop_assert!(c["left_cache_stale"] <= c["left_cache_misses"]);
            prop_assert!(c["left_cache_entries"] <= size as u64);
            prop_assert!(c["right_cache_entries"] <= size as u64);
        }
    }

    /// The store alone: random upserts whose index key may move; a lookup
    /// always returns exactly the current rows with that index key.
    #[test]
    fn store_lookup_follows_upserts(ops in prop::collection::vec((0i64..4, 0i64..3, 0i64..5), 0..40)) {
        let store = IndexLookupStore::open(store_dir()).unwrap();
        // pk = id (column 1), index = k (column 0): the index key can change.
        let t = store.create_table("T", 3, vec![0], Some(vec![1])).unwrap();
        let mut model: BTreeMap<i64, Row> = BTreeMap::new();
        for (i, &(id, k, v)) in ops.iter().enumerate() {
            let r = row(k, id, v);
            let kind = if model.contains_key(&id) && i % 2 == 0 { RowKind::UpdateAfter } else { RowKind::Insert };
            store.apply(t, &Change::new(kind, r.clone())).unwrap();
            model.insert(id, r);
            for key in 0..3 {
                let want: Vec<Row> = model.values().filter(|r| r[0] == int(key)).cloned().collect();
                prop_assert_eq!(sorted(store.lookup(t, &[int(key)]).unwrap()), sorted(want));
            }
        }
        let s = store.stats(t).unwrap();
        prop_assert_eq!(s.writes, ops.len() as u64);
        prop_assert_eq!(s.version_reads, ops.len() as u64);
        prop_assert_eq!(s.lookups, 3 * ops.len() as u64);
    }
}

// ------------------------------------------------------- fixed scenarios

#[test]
fn cache_stays_coherent_with_store_writes() {
    let (store, l, r) = open_store(false, false);
    let mut op = DeltaJoinOperator::new(
        store.clone(),
        spec(l, r, vec![0], None),
        DeltaJoinOptions::cached(10, 10),
    )
    .unwrap();
    let feed_left = |op: &mut DeltaJoinOperator, rw: Row| {
        let c = Change::insert(rw);
        store.apply(l, &c).unwrap();
        let mut out = Vec::new();
        op.process(0, vec![c], &mut out).unwrap();
        out
    };
    store.apply(r, &Change::insert(row(1, 100, 0))).unwrap();

    let out = feed_left(&mut op, row(1, 1, 0));
    assert_eq!(
        out,
        vec![Change::insert(vec![
            int(1),
            int(1),
            int(0),
            int(1),
            int(100),
            int(0)
        ])]
    );
    assert_eq!(
        (
            counter(&op, "right_cache_hits"),
            counter(&op, "right_cache_misses")
        ),
        (0, 1)
    );

    let out = feed_left(&mut op, row(1, 2, 0));
    assert_eq!(out.len(), 1);
    assert_eq!(counter(&op, "right_cache_hits"), 1);
    assert_eq!(counter(&op, "lookups"), 1);

    // A write to the cached index key, not (yet) seen by the join.
    let g = store.generation(r, &[int(1)]).unwrap();
    store.apply(r, &Change::insert(row(1, 101, 0))).unwrap();
    assert!(store.generation(r, &[int(1)]).unwrap() > g);
    // A write to another key leaves key 1's entry valid.
    store.apply(r, &Change::insert(row(7, 102, 0))).unwrap();

    let out = feed_left(&mut op, row(1, 3, 0));
    let right_ids: Vec<Value> = out.iter().map(|c| c.row[4].clone()).collect();
    assert_eq!(right_ids, vec![int(100), int(101)], "the new row is seen");
    assert_eq!(
        (
            counter(&op, "right_cache_hits"),
            counter(&op, "right_cache_misses"),
            counter(&op, "right_cache_stale"),
            counter(&op, "lookups"),
        ),
        (1, 2, 1, 2)
    );

    assert!(feed_left(&mut op, row(2, 4, 0)).is_empty());
    assert_eq!(feed_left(&mut op, row(1, 5, 0)).len(), 2);
    assert_eq!(feed_left(&mut op, row(2, 6, 0)).len(), 0);
    // Requests: 6; hits: rows 2, 5 and 6.
    let (hits, misses) = (
        counter(&op, "right_cache_hits"),
        counter(&op, "right_cache_misses"),
    );
    assert_eq!((hits, misses), (3, 3));
    assert_eq!(counter(&op, "right_cache_entries"), 2);
    assert_eq!(counter(&op, "right_cache_rows"), 2);
    // Left records never looked into the left table.
    assert_eq!(
        counter(&op, "left_cache_hits") + counter(&op, "left_cache_misses"),
        0
    );
    let s = store.stats(r).unwrap();
    assert_eq!((s.lookups, s.rows_returned), (3, 1 + 2));

    // An upsert of a cached key's row replaces it in the next lookup.
    let (store, l, r) = open_store(false, true);
    let mut op = DeltaJoinOperator::new(
        store.clone(),
        spec(l, r, vec![0], None),
        DeltaJoinOptions::cached(4, 4),
    )
    .unwrap();
    store.apply(r, &Change::insert(row(1, 9, 0))).unwrap();
    let mut out = Vec::new();
    for (i, update) in [None, Some(row(1, 9, 5))].into_iter().enumerate() {
        if let Some(u) = update {
            store.apply(r, &Change::update_after(u)).unwrap();
        }
        let c = Change::insert(row(1, i as i64, 0));
        store.apply(l, &c).unwrap();
        op.process(0, vec![c], &mut out).unwrap();
    }
    assert_eq!(out[1].row[5], int(5));
    assert_eq!(counter(&op, "right_cache_stale"), 1);
}

#[test]
fn lru_of_size_one_misses_on_alternating_keys() {
    let (store, l, r) = open_store(false, false);
    for k in 0..2 {
        store.apply(r, &Change::insert(row(k, 50 + k, 0))).unwrap();
    }
    let mut results = Vec::new();
    for size in [1usize, 2] {
        let mut op = DeltaJoinOperator::new(
            store.clone(),
            spec(l, r, vec![0], None),
            DeltaJoinOptions::cached(size, size),
        )
        .unwrap();
        let mut out = Vec::new();
        let batch: Vec<Change> = (0..8).map(|i| Change::insert(row(i % 2, i, 0))).collect();
        op.process(0, batch, &mut out).unwrap();
        assert_eq!(out.len(), 8);
        results.push((
            counter(&op, "right_cache_hits"),
            counter(&op, "right_cache_misses"),
        ));
    }
    assert_eq!(results, vec![(0, 8), (6, 2)]);
}

#[test]
fn keeps_no_state_unlike_a_regular_join() {
    let (store, l, r) = open_store(false, false);
    let left: Vec<Change> = (0..20).map(|i| Change::insert(row(i % 4, i, i))).collect();
    let right: Vec<Change> = (0..20).map(|i| Change::insert(row(i % 5, i, i))).collect();
    let mut delta = DeltaJoinOperator::new(
        store.clone(),
        spec(l, r, vec![0], None),
        DeltaJoinOptions::default(),
    )
    .unwrap();
    let backend = StateBackend::heap();
    let mut regular = RegularJoinOperator::new(
        &backend,
        "join",
        JoinSpec {
            join_type: operators::join::JoinType::Inner,
            left_keys: vec![0],
            right_keys: vec![0],
            left_arity: 3,
            right_arity: 3,
            residual: None,
            left_layout: JoinStateLayout::HasUniqueKey(vec![1]),
            right_layout: JoinStateLayout::HasUniqueKey(vec![1]),
        },
    )
    .unwrap();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for (side, table, batch) in [(0, l, &left), (1, r, &right)] {
        store.apply_all(table, batch).unwrap();
        delta.process(side, batch.clone(), &mut a).unwrap();
        regular.process(side, batch.clone(), &mut b).unwrap();
    }
    assert_eq!(
        sorted(a.iter().map(|c| c.row.clone()).collect()),
        sorted(b.iter().map(|c| c.row.clone()).collect())
    );
    assert!(delta.state_reports().is_empty());
    let regular_entries: i64 = regular
        .state_reports()
        .iter()
        .map(|s| s.metrics.entries)
        .sum();
    assert_eq!(regular_entries, 40);
    // The rows live once, in the store.
    assert_eq!(
        store.scan(l).unwrap().len() + store.scan(r).unwrap().len(),
        40
    );
}

#[test]
fn both_sides_in_one_batch_emit_a_duplicate() {
    let (store, l, r) = open_store(false, false);
    let mut op = DeltaJoinOperator::new(
        store.clone(),
        spec(l, r, vec![0], None),
        DeltaJoinOptions::default(),
    )
    .unwrap();
    let mut left = StoreWritingSource::new(
        VecSource::boxed(vec![Change::insert(row(1, 1, 10))]),
        store.clone(),
        l,
    );
    let mut right = StoreWritingSource::new(
        VecSource::boxed(vec![
            Change::insert(row(1, 2, 20)),
            Change::insert(row(3, 3, 30)),
        ]),
        store.clone(),
        r,
    );
    // Both sources read (and write the store) before the join runs.
    let (mut lb, mut rb) = (Vec::new(), Vec::new());
    left.next_batch(10, &mut lb).unwrap();
    right.next_batch(10, &mut rb).unwrap();
    let mut out = Vec::new();
    op.process(0, lb, &mut out).unwrap();
    op.process(1, rb, &mut out).unwrap();
    let pair = vec![int(1), int(1), int(10), int(1), int(2), int(20)];
    assert_eq!(
        out,
        vec![Change::insert(pair.clone()), Change::insert(pair.clone())]
    );
    assert_eq!(counter(&op, "duplicates"), 1);
    assert_eq!(
        materialise(&out, &[1, 4]).into_values().collect::<Vec<_>>(),
        vec![pair]
    );
    assert_eq!(counter(&op, "lookups"), 3);
    assert_eq!(counter(&op, "rows_returned"), 2);

    // Processing one side before the other is written: no duplicate.
    let (store, l, r) = open_store(false, false);
    let mut op = DeltaJoinOperator::new(
        store.clone(),
        spec(l, r, vec![0], None),
        DeltaJoinOptions::default(),
    )
    .unwrap();
    let mut out = Vec::new();
    for (side, table, c) in [
        (0, l, Change::insert(row(1, 1, 10))),
        (1, r, Change::insert(row(1, 2, 20))),
    ] {
        store.apply(table, &c).unwrap();
        op.process(side, vec![c], &mut out).unwrap();
    }
    assert_eq!(out.len(), 1);
    assert_eq!(counter(&op, "duplicates"), 0);
}

#[test]
fn retractions_emit_nothing_and_updates_carry_the_new_version() {
    let (store, l, r) = open_store(true, true);
    let mut op = DeltaJoinOperator::new(
        store.clone(),
        spec(l, r, vec![0], None),
        DeltaJoinOptions::uncached(),
    )
    .unwrap();
    let mut out = Vec::new();
    let steps = [
        (1, r, Change::insert(row(1, 7, 70))),
        (0, l, Change::insert(row(1, 1, 10))),
        (0, l, Change::update_before(row(1, 1, 10))),
        (0, l, Change::update_after(row(1, 1, 11))),
    ];
    for (side, table, c) in steps {
        store.apply(table, &c).unwrap();
        op.process(side, vec![c], &mut out).unwrap();
    }
    let kinds: Vec<RowKind> = out.iter().map(|c| c.kind).collect();
    assert_eq!(kinds, vec![RowKind::Insert, RowKind::UpdateAfter]);
    assert_eq!(out[1].row[2], int(11));
    assert_eq!(counter(&op, "retractions_skipped"), 1);
    assert_eq!(store.stats(l).unwrap().ignored_retractions, 1);
}

#[test]
fn executor_with_read_ahead_matches_the_batch_join() {
    let left: Vec<Change> = (0..30).map(|i| Change::insert(row(i % 3, i, i))).collect();
    let right: Vec<Change> = (0..30)
        .map(|i| Change::insert(row(i % 4, 100 + i, i)))
        .collect();
    let left_rows: Vec<Row> = left.iter().map(|c| c.row.clone()).collect();
    let right_rows: Vec<Row> = right.iter().map(|c| c.row.clone()).collect();
    let mut results = Vec::new();
    for read_ahead in [0usize, 2] {
        let (store, l, r) = open_store(false, false);
        let op = DeltaJoinOperator::new(
            store.clone(),
            spec(l, r, vec![0], None),
            DeltaJoinOptions::default(),
        )
        .unwrap();
        let mut job = JobBuilder::new();
        for (i, (changes, table)) in [(left.clone(), l), (right.clone(), r)]
            .into_iter()
            .enumerate()
        {
            let src = StoreWritingSource::new(VecSource::boxed(changes), store.clone(), table)
                .with_read_ahead(read_ahead);
            let s = job.add_source(Box::new(src));
            job.connect_source(s, Target::Stage(0, i), Exchange::Forward);
        }
        let stage = job.add_stage("DeltaJoin", vec![Box::new(op)]);
        job.connect_stage(stage, Target::Sink(0), Exchange::Forward);
        let sink = SinkCollector::new(SinkEncoding::Upsert { key: vec![1, 4] }, false, true, None);
        job.add_sink("sink", sink);
        let mut job = job
            .build(operators::exec::job::JobOptions {
                batch_size: 4,
                bundle_latency: None,
                backend: StateBackend::heap(),
                deterministic_clock: false,
                watermark_interval_ms: 200,
                source_idle_timeout_ms: 0,
                breadth_first: false,
            })
            .unwrap();
        let report = job.run(&mut |_| {}).unwrap();
        let expected: Vec<Row> = oracle(&left_rows, &right_rows, &[0], None, &[1, 4])
            .into_values()
            .collect();
        assert_eq!(report.sinks[0].result.clone().unwrap(), sorted(expected));
        let dups = report.stages[0]
            .counters
            .iter()
            .find(|(n, _)| n == "duplicates")
            .unwrap()
            .1;
        assert!(report.stages[0].states.is_empty());
        results.push(dups);
    }
    assert_eq!(
        results[0], 0,
        "batch-synchronous, no read-ahead: no duplicates"
    );
    assert!(results[1] > 0, "sources ahead of the join: duplicates");
}

#[test]
fn bad_inputs_are_errors() {
    let (store, l, r) = open_store(false, true);
    // Deletes are refused by the store and by the join.
    let err = store.apply(r, &Change::delete(row(1, 1, 1))).unwrap_err();
    assert!(err.to_string().contains("must not delete"), "{err}");
    let mut op = DeltaJoinOperator::new(
        store.clone(),
        spec(l, r, vec![0], None),
        DeltaJoinOptions::default(),
    )
    .unwrap();
    let mut out = Vec::new();
    let err = op
        .process(1, vec![Change::delete(row(1, 1, 1))], &mut out)
        .unwrap_err();
    assert!(err.to_string().contains("must not delete"), "{err}");
    // Updates on an input whose join key is outside its primary key.
    let err = op
        .process(0, vec![Change::update_after(row(1, 1, 1))], &mut out)
        .unwrap_err();
    assert!(err.to_string().contains("primary key"), "{err}");
    // Insert-only table without a primary key refuses updates.
    let t = store.create_table("N", 3, vec![0], None).unwrap();
    assert!(store.apply(t, &Change::update_after(row(1, 1, 1))).is_err());
    store.apply(t, &Change::insert(row(1, 1, 1))).unwrap();
    store.apply(t, &Change::insert(row(1, 1, 1))).unwrap();
    assert_eq!(store.lookup(t, &[int(1)]).unwrap().len(), 2);
    // Wrong arity, unknown columns, duplicate names.
    assert!(store.apply(t, &Change::insert(vec![int(1)])).is_err());
    assert!(store.create_table("X", 2, vec![2], None).is_err());
    assert!(store.create_table("N", 3, vec![0], None).is_err());
    assert!(store.lookup(t, &[int(1), int(2)]).is_err());
    // The index key must be covered by the equi-condition.
    let other = store.create_table("V", 3, vec![2], Some(vec![1])).unwrap();
    let e = DeltaJoinOperator::new(
        store.clone(),
        spec(l, other, vec![0], None),
        DeltaJoinOptions::default(),
    );
    assert!(e.err().unwrap().to_string().contains("not covered"));
    // Caching with a size of 0.
    let e = DeltaJoinOperator::new(
        store.clone(),
        spec(l, r, vec![0], None),
        DeltaJoinOptions::cached(0, 5),
    );
    assert!(e.is_err());
    // Only INNER joins.
    let js = JoinSpec {
        join_type: operators::join::JoinType::Left,
        left_keys: vec![0],
        right_keys: vec![0],
        left_arity: 3,
        right_arity: 3,
        residual: None,
        left_layout: JoinStateLayout::NoUniqueKey,
        right_layout: JoinStateLayout::NoUniqueKey,
    };
    assert!(DeltaJoinSpec::from_join_spec(&js, l, r).is_err());
    // NULL join keys match nothing.
    store
        .apply(l, &Change::insert(vec![Value::Null, int(5), int(0)]))
        .unwrap();
    let before = counter(&op, "lookups");
    let mut out = Vec::new();
    op.process(
        0,
        vec![Change::insert(vec![Value::Null, int(9), int(0)])],
        &mut out,
    )
    .unwrap();
    assert!(out.is_empty());
    assert_eq!(counter(&op, "lookups"), before);
}

/// Writers on two threads move rows between index keys while a reader
/// looks them up: each lookup sees every primary key at most once and only
/// rows of the key it asked for (a put is one atomic write batch), and the
/// final lookups equal the final table.
#[test]
fn concurrent_writers_and_readers() {
    let store = Arc::new(IndexLookupStore::open(store_dir()).unwrap());
    let t = store.create_table("T", 3, vec![0], Some(vec![1])).unwrap();
    let writers: Vec<_> = (0..2i64)
        .map(|w| {
            let store = store.clone();
            std::thread::spawn(move || {
                for i in 0..400i64 {
                    let id = w * 10 + i % 10;
                    store
                        .apply(t, &Change::insert(row((i * 7 + w) % 4, id, i)))
                        .unwrap();
                }
            })
        })
        .collect();
    let reader = {
        let store = store.clone();
        std::thread::spawn(move || {
            for i in 0..400 {
                let key = i % 4;
                let rows = store.lookup(t, &[int(key)]).unwrap();
                let mut ids = HashSet::new();
                for r in &rows {
                    assert_eq!(r[0], int(key));
                    assert!(ids.insert(r[1].clone()), "a primary key seen twice");
                }
            }
        })
    };
    for h in writers.into_iter().chain([reader]) {
        h.join().unwrap();
    }
    let all = store.scan(t).unwrap();
    assert_eq!(all.len(), 20);
    let by_key: usize = (0..4)
        .map(|k| store.lookup(t, &[int(k)]).unwrap().len())
        .sum();
    assert_eq!(by_key, 20);
    assert_eq!(store.stats(t).unwrap().writes, 800);
}
