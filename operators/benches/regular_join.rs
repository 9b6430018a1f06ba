//! A binary INNER join of two insert-only inputs on a key with ~4 rows per
//! key and side, on both backends (each input record probes the other
//! side's state and is added to its own).

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

fn bench(c: &mut Criterion) {
    let (left, right) = (side(1), side(2));
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
    let mut g = c.benchmark_group("regular_join");
    g.throughput(Throughput::Elements(2 * ROWS as u64));
    g.sample_size(10);
    for (name, backend) in [
        ("heap", StateBackend::heap()),
        ("rocksdb", StateBackend::rocksdb(None).unwrap()),
    ] {
        g.bench_function(name, |b| {
            b.iter_batched(
                || {
                    RegularJoinOperator::new(
                        &backend,
                        &format!("bench-{}", rand::random::<u32>()),
                        spec.clone(),
                    )
                    .unwrap()
                },
                |mut op| {
                    let mut out = Vec::new();
                    for (l, r) in left.chunks(1024).zip(right.chunks(1024)) {
                        out.clear();
                        op.process(0, l.to_vec(), &mut out).unwrap();
                        op.process(1, r.to_vec(), &mut out).unwrap();
                    }
                    op
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
