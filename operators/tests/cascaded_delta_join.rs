//! Cascaded delta join against the index-lookup store: `(A JOIN B) JOIN C`
//! as a two-way delta join feeding a cascaded one, whose C records look B
//! up, then A (a lookup chain). For every interleaving of source reads and
//! processing by the two joins, an upsert sink on the three primary keys
//! materialises the batch join of the final tables, with and without
//! caches, and neither join keeps state.

use operators::changelog::{Change, RowKind};
use operators::exec::ChangeSource;
use operators::expr::{BinOp, Expr};
use operators::join::{
    CascadedDeltaJoinOperator, CascadedDeltaJoinSpec, DeltaJoinOperator, DeltaJoinOptions,
    DeltaJoinSpec, KeySource, LookupChain, LookupRound, SideCalc, StoreWritingSource,
};
use operators::lookup::{IndexLookupStore, TableId};
use operators::operator::{OpResult, Operator};
use operators::value::{Row, Value};
use proptest::prelude::*;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::Path;
use std::sync::Arc;

struct VecSource(VecDeque<Change>);

impl ChangeSource for VecSource {
    fn next_batch(&mut self, max: usize, out: &mut Vec<Change>) -> OpResult<usize> {
        let n = max.min(self.0.len());
        out.extend(self.0.drain(..n));
        Ok(n)
    }
}

fn store_dir() -> Option<&'static Path> {
    let shm = Path::new("/dev/shm");
    shm.is_dir().then_some(shm)
}

/// A table `[k, id, v]` indexed by `k`: insert-only rows keyed by `id`, or
/// upserts without deletes keyed by `(k, id)`.
#[derive(Clone, Debug)]
struct Table {
    upsert: bool,
    rows: Vec<(i64, i64, i64)>,
    batch: usize,
}

impl Table {
    fn pk(&self) -> Vec<usize> {
        if self.upsert {
            vec![0, 1]
        } else {
            vec![1]
        }
    }

    /// The changelog and the final rows.
    fn changes(&self) -> (Vec<Change>, Vec<Row>) {
        let mut out = Vec::new();
        let mut live: BTreeMap<(i64, i64), Row> = BTreeMap::new();
        for (i, &(k, id, v)) in self.rows.iter().enumerate() {
            // Insert-only rows are keyed by position and may have a NULL
            // join key; upserts by (k, id).
            let (id, key) = if self.upsert {
                (id, Value::Int(k % 3))
            } else if k == 3 {
                (i as i64, Value::Null)
            } else {
                (i as i64, Value::Int(k))
            };
            let new = vec![key, Value::Int(id), Value::Int(v)];
            match live.insert((k % 3, id), new.clone()) {
                Some(old) if self.upsert => {
                    out.push(Change::update_before(old));
                    out.push(Change::update_after(new));
                }
                _ => out.push(Change::insert(new)),
            }
        }
        (out, live.into_values().collect())
    }
}

fn table() -> impl Strategy<Value = Table> {
    (
        any::<bool>(),
        prop::collection::vec((0..4i64, 0..3i64, 0..3i64), 0..14),
        1..4usize,
    )
        .prop_map(|(upsert, rows, batch)| Table {
            upsert,
            rows,
            batch,
        })
}

#[derive(Clone, Debug)]
struct Workload {
    tables: [Table; 3],
    schedule: Vec<u8>,
    cache: Option<usize>,
}

fn workload() -> impl Strategy<Value = Workload> {
    (
        [table(), table(), table()],
        prop::collection::vec(any::<u8>(), 1..64),
        prop_oneof![Just(None), Just(Some(1)), Just(Some(100))],
    )
        .prop_map(|(tables, schedule, cache)| Workload {
            tables,
            schedule,
            cache,
        })
}

fn col(i: usize) -> Expr {
    Expr::col(i)
}

/// The upper join's residual: `A.id <> C.id` (primary key columns).
fn residual() -> Expr {
    Expr::bin(BinOp::NotEq, col(1), col(7))
}

/// Nested-loop join of the final tables, keyed by the three primary keys.
fn oracle(t: &[Vec<Row>; 3]) -> BTreeMap<String, Row> {
    let mut m = BTreeMap::new();
    for a in &t[0] {
        for b in &t[1] {
            for c in &t[2] {
                let joined: Row = a.iter().chain(b).chain(c).cloned().collect();
                let eq = |x: &Value, y: &Value| !x.is_null() && x == y;
                if eq(&a[0], &b[0]) && eq(&b[0], &c[0]) && residual().is_true(&joined) {
                    m.insert(sink_key(&joined), joined);
                }
            }
        }
    }
    m
}

fn sink_key(row: &[Value]) -> String {
    format!("{:?}", [0, 1, 3, 4, 6, 7].map(|i| &row[i]))
}

fn materialise(changes: &[Change]) -> BTreeMap<String, Row> {
    let mut m = BTreeMap::new();
    for c in changes {
        match c.kind {
            RowKind::Insert | RowKind::UpdateAfter => {
                m.insert(sink_key(&c.row), c.row.clone());
            }
            RowKind::UpdateBefore | RowKind::Delete => {
                m.remove(&sink_key(&c.row));
            }
        }
    }
    m
}

fn options(cache: Option<usize>) -> DeltaJoinOptions {
    match cache {
        None => DeltaJoinOptions::uncached(),
        Some(n) => DeltaJoinOptions::cached(n, n),
    }
}

/// The cascaded join of `(A JOIN B ON k)` (6 columns) with C on `B.k`.
fn cascaded_spec(t: [TableId; 3]) -> CascadedDeltaJoinSpec {
    CascadedDeltaJoinSpec {
        left_keys: vec![3],
        right_keys: vec![0],
        residual: Some(residual()),
        widths: [6, 3],
        chains: [
            LookupChain::binary(t[2], SideCalc::default(), vec![KeySource::Input(3)]),
            LookupChain {
                rounds: vec![
                    LookupRound {
                        table: t[1],
                        calc: SideCalc::default(),
                        key: vec![KeySource::Input(0)],
                    },
                    LookupRound {
                        table: t[0],
                        calc: SideCalc::default(),
                        key: vec![KeySource::Round(0, 0)],
                    },
                ],
                order: vec![1, 0],
                condition: Some(Expr::bin(BinOp::Eq, col(0), col(3))),
                calc: SideCalc::default(),
            },
        ],
        updates_allowed: [true, true],
        names: ["A JOIN B".into(), "C".into()],
    }
}

struct Run {
    output: Vec<Change>,
    finals: [Vec<Row>; 3],
    counters: HashMap<&'static str, u64>,
}

fn run(w: &Workload) -> Run {
    let store = Arc::new(IndexLookupStore::open(store_dir()).expect("store opens"));
    let ids: Vec<TableId> = ["A", "B", "C"]
        .iter()
        .zip(&w.tables)
        .map(|(n, t)| store.create_table(n, 3, vec![0], Some(t.pk())).unwrap())
        .collect();
    let ids = [ids[0], ids[1], ids[2]];
    let lower_spec = DeltaJoinSpec {
        left_table: ids[0],
        right_table: ids[1],
        left_calc: SideCalc::default(),
        right_calc: SideCalc::default(),
        left_keys: vec![0],
        right_keys: vec![0],
        residual: None,
    };
    let mut lower = DeltaJoinOperator::new(store.clone(), lower_spec, options(w.cache)).unwrap();
    let mut upper =
        CascadedDeltaJoinOperator::new(store.clone(), cascaded_spec(ids), options(w.cache))
            .unwrap();
    let mut finals: [Vec<Row>; 3] = Default::default();
    let mut sources: Vec<StoreWritingSource> = Vec::new();
    for (i, t) in w.tables.iter().enumerate() {
        let (changes, rows) = t.changes();
        finals[i] = rows;
        sources.push(StoreWritingSource::new(
            Box::new(VecSource(changes.into())),
            store.clone(),
            ids[i],
        ));
    }
    // Pending batches: A and B for the lower join, C and the lower join's
    // output for the upper one.
    let mut done = [false; 3];
    let mut pending: [VecDeque<Vec<Change>>; 4] = Default::default();
    let mut output = Vec::new();
    let mut step = 0;
    loop {
        let reads = (0..3).filter(|&s| !done[s]).map(|s| (s, true));
        let work = (0..4)
            .filter(|&q| !pending[q].is_empty())
            .map(|q| (q, false));
        let actions: Vec<(usize, bool)> = reads.chain(work).collect();
        if actions.is_empty() {
            break;
        }
        let (s, read) = actions[w.schedule[step % w.schedule.len()] as usize % actions.len()];
        step += 1;
        if read {
            let mut batch = Vec::new();
            if sources[s]
                .next_batch(w.tables[s].batch, &mut batch)
                .unwrap()
                == 0
            {
                done[s] = true;
            } else {
                pending[s].push_back(batch);
            }
            continue;
        }
        let batch = pending[s].pop_front().unwrap();
        match s {
            0 | 1 => {
                let mut mid = Vec::new();
                lower.process(s, batch, &mut mid).unwrap();
                if !mid.is_empty() {
                    pending[3].push_back(mid);
                }
            }
            2 => upper.process(1, batch, &mut output).unwrap(),
            _ => upper.process(0, batch, &mut output).unwrap(),
        }
    }
    assert!(lower.state_reports().is_empty() && upper.state_reports().is_empty());
    Run {
        output,
        finals,
        counters: upper.counters().into_iter().collect(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn upsert_sink_equals_the_batch_join(w in workload()) {
        let r = run(&w);
        prop_assert_eq!(materialise(&r.output), oracle(&r.finals));
        prop_assert!(r.output.iter().all(|c| c.kind != RowKind::UpdateBefore));
    }
}

#[test]
fn chain_finds_rows_written_before_the_lower_join_processed_them() {
    // Schedule 0 reads every table first, then processes A, B, C and last
    // the lower join's rows: C's records find A and B through the chain
    // (lookups into the left input's tables), and the lower join's rows
    // find C again (duplicates the sink absorbs).
    let t = |upsert, rows: Vec<(i64, i64, i64)>| Table {
        upsert,
        rows,
        batch: 2,
    };
    let w = Workload {
        tables: [
            t(false, vec![(1, 0, 0), (1, 0, 1), (2, 0, 0)]),
            t(true, vec![(1, 5, 0), (1, 5, 1), (2, 6, 0)]),
            t(true, vec![(1, 7, 0), (2, 1, 0), (2, 2, 0)]),
        ],
        schedule: vec![0],
        cache: Some(100),
    };
    let r = run(&w);
    let expected = oracle(&r.finals);
    assert_eq!(expected.len(), 3);
    assert_eq!(materialise(&r.output), expected);
    assert!(r.counters["left_cache_misses"] > 0, "{:?}", r.counters);
    assert!(r.counters["duplicates"] > 0, "{:?}", r.counters);
}

#[test]
fn bad_chains_are_spec_errors() {
    let store = Arc::new(IndexLookupStore::open(store_dir()).expect("store opens"));
    let ids: Vec<TableId> = ["A", "B", "C"]
        .iter()
        .map(|n| store.create_table(n, 3, vec![0], None).unwrap())
        .collect();
    let ids = [ids[0], ids[1], ids[2]];
    let mut spec = cascaded_spec(ids);
    spec.chains[1].rounds[0].key = vec![KeySource::Round(1, 0)];
    let e = CascadedDeltaJoinOperator::new(store.clone(), spec, DeltaJoinOptions::uncached())
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("round 1") && e.contains("which it has not got"),
        "{e}"
    );
    let mut spec = cascaded_spec(ids);
    spec.chains[1].order = vec![0, 0];
    let e = CascadedDeltaJoinOperator::new(store.clone(), spec, DeltaJoinOptions::uncached())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("orders its 2 rounds"), "{e}");
    let mut spec = cascaded_spec(ids);
    spec.left_keys = vec![6];
    let e = CascadedDeltaJoinOperator::new(store, spec, DeltaJoinOptions::uncached())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("join key column 6"), "{e}");
}
