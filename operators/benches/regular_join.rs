//! A binary INNER join of two insert-only inputs on a key with ~4 rows per
//! key and side, on both backends (each input record probes the other
//! side's state and is added to its own), next to its floor,
//! `hashbrown_floor`: the same rows joined by a plain `hashbrown` hash join
//! (each side a map from key to its rows; each record probes the other
//! side's map, emits one `+I` row `Vec` per match, and is added to its own
//! side), in the same batches. After the group the bench prints each
//! operator's rate as a share of the floor's (`support/floor_ratio.rs`).
//! `rocksdb_async_state` is the RocksDB operator with asynchronous state
//! execution (each batch's keys loaded for both sides at once, one
//! `MultiGet` or one sorted prefix pass, the changes written with one
//! `WriteBatch`); before the group it also runs ten times in turn with
//! `rocksdb` (one record at a time) and the bench prints its rate as a
//! share of that one's.

// The allocator of the `lab` binary, so operators are timed as the lab runs them.
#[global_allocator]
static GLOBAL: operators::alloc::LabAllocator = operators::alloc::LabAllocator;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use operators::changelog::Change;
use operators::join::JoinType;
use operators::join::{JoinSpec, JoinStateLayout, RegularJoinOperator};
use operators::operator::Operator;
use operators::state::StateBackend;
use operators::value::Value;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

#[path = "support/floor_ratio.rs"]
mod floor_ratio;

const ROWS: usize = 50_000;
const KEYS: i64 = 12_500;

fn side(seed: u64) -> Vec<Change> {
    let mut rng = SmallRng::seed_from_u64(seed);
    (0..ROWS)
        .map(|i| {
            Change::insert(vec![
                Value::Int(i as i64),
                Value::Int(rng.random_range(0..KEYS)),
            ])
        })
        .collect()
}

/// The plain hash join of `left` and `right` on column 1, in the
/// operator's batches; returns the number of joined rows emitted.
fn hashbrown_join(left: &[Change], right: &[Change]) -> usize {
    let mut sides: [hashbrown::HashMap<i64, Vec<Vec<Value>>>; 2] = Default::default();
    let mut out: Vec<Change> = Vec::with_capacity(8192);
    let mut emitted = 0;
    for (l, r) in left.chunks(1024).zip(right.chunks(1024)) {
        emitted += out.len();
        out.clear();
        for (input, batch) in [(0, l), (1, r)] {
            for c in batch {
                let k = c.row[1].as_int().unwrap();
                if let Some(others) = sides[1 - input].get(&k) {
                    for o in others {
                        let (a, b) = if input == 0 { (&c.row, o) } else { (o, &c.row) };
                        let mut row = Vec::with_capacity(a.len() + b.len());
                        row.extend_from_slice(a);
                        row.extend_from_slice(b);
                        out.push(Change::insert(row));
                    }
                }
                sides[input].entry(k).or_default().push(c.row.clone());
            }
        }
    }
    emitted + out.len()
}

fn bench(c: &mut Criterion) {
    let (left, right) = (side(1), side(2));
    let timings = floor_ratio::Timings::default();
    let t = &timings;
    let spec = JoinSpec {
        join_type: JoinType::Inner,
        left_keys: vec![1],
        right_keys: vec![1],
        left_arity: 2,
        right_arity: 2,
        residual: None,
        left_layout: JoinStateLayout::HasUniqueKey(vec![0]),
        right_layout: JoinStateLayout::HasUniqueKey(vec![0]),
    };
    let rocksdb = StateBackend::rocksdb(None).unwrap();
    let operator = |backend: &StateBackend, async_state: bool| {
        let op = RegularJoinOperator::new(
            backend,
            &format!("bench-{}", rand::random::<u32>()),
            spec.clone(),
        )
        .unwrap();
        if async_state {
            op.with_async_state()
        } else {
            op
        }
    };
    let run = |op: &mut RegularJoinOperator| {
        let mut out = Vec::new();
        for (l, r) in left.chunks(1024).zip(right.chunks(1024)) {
            out.clear();
            op.process(0, l.to_vec(), &mut out).unwrap();
            op.process(1, r.to_vec(), &mut out).unwrap();
        }
    };
    // Asynchronous state against one record at a time on RocksDB, run in
    // turns (so both see the same machine), each on a fresh operator.
    let interleaved = floor_ratio::Timings::default();
    for _ in 0..10 {
        for (name, async_state) in [("rocksdb", false), ("rocksdb_async_state", true)] {
            let mut op = operator(&rocksdb, async_state);
            interleaved.time(name, || run(&mut op));
        }
    }
    let mut g = c.benchmark_group("regular_join");
    g.throughput(Throughput::Elements(2 * ROWS as u64));
    g.sample_size(10);
    g.bench_function("hashbrown_floor", |b| {
        b.iter(|| t.time("hashbrown_floor", || hashbrown_join(&left, &right)))
    });
    for (name, backend, async_state) in [
        ("heap", StateBackend::heap(), false),
        ("rocksdb", rocksdb.clone(), false),
        ("rocksdb_async_state", rocksdb.clone(), true),
    ] {
        g.bench_function(name, |b| {
            b.iter_batched(
                || operator(&backend, async_state),
                |mut op| {
                    t.time(name, || run(&mut op));
                    op
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
    for operator in ["heap", "rocksdb", "rocksdb_async_state"] {
        timings.print_ratio("regular_join", operator, "hashbrown_floor", 2 * ROWS as u64);
    }
    timings.print_ratio(
        "regular_join",
        "rocksdb_async_state",
        "rocksdb",
        2 * ROWS as u64,
    );
    interleaved.print_ratio(
        "regular_join, 10 interleaved runs",
        "rocksdb_async_state",
        "rocksdb",
        2 * ROWS as u64,
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
