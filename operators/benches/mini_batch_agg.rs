//! One record at a time vs mini-batch, `COUNT(*), SUM(v) GROUP BY k` over
//! 100k Zipf-skewed keys (exponent 1.2), bundles of 5000, on RocksDB and
//! heap. Prints state accesses per variant next to criterion's throughput,
//! so both ratios are read in one run.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use operators::agg::{AggKind, AggSpec, GroupAggregateOperator};
use operators::changelog::Change;
use operators::operator::Operator;
use operators::state::StateBackend;
use operators::value::{DataType, Value};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const ROWS: usize = 200_000;
const KEYS: usize = 100_000;
const BUNDLE: usize = 5000;

/// Zipf(1.2) ranks by inverse CDF over a precomputed table.
fn input() -> Vec<Change> {
    let weights: Vec<f64> = (1..=KEYS).map(|r| 1.0 / (r as f64).powf(1.2)).collect();
    let total: f64 = weights.iter().sum();
    let mut cdf = Vec::with_capacity(KEYS);
    let mut acc = 0.0;
    for w in weights {
        acc += w / total;
        cdf.push(acc);
    }
    let mut rng = SmallRng::seed_from_u64(7);
    (0..ROWS)
        .map(|_| {
            let u: f64 = rng.random();
            let k = cdf.partition_point(|c| *c < u).min(KEYS - 1);
            Change::insert(vec![
                Value::Int(k as i64),
                Value::Int(rng.random_range(0..100)),
            ])
        })
        .collect()
}

fn specs() -> Vec<AggSpec> {
    vec![
        AggSpec {
            kind: AggKind::CountStar,
            arg: None,
            distinct: false,
            filter: None,
            result_type: DataType::BigInt,
        },
        AggSpec {
            kind: AggKind::Sum,
            arg: Some(1),
            distinct: false,
            filter: None,
            result_type: DataType::BigInt,
        },
    ]
}

fn run(backend: &StateBackend, mini_batch: bool, data: &[Change]) -> u64 {
    let op = GroupAggregateOperator::new(
        backend,
        &format!("b{}", rand::random::<u32>()),
        vec![0],
        specs(),
        true,
        true,
    )
    .unwrap();
    let mut op = if mini_batch {
        op.with_mini_batch(BUNDLE)
    } else {
        op
    };
    let mut out = Vec::new();
    for chunk in data.chunks(1024) {
        out.clear();
        op.process(0, chunk.to_vec(), &mut out).unwrap();
    }
    op.finish_bundle(&mut out).unwrap();
    op.state_reports()
        .iter()
        .map(|r| r.metrics.accesses())
        .sum()
}

fn bench(c: &mut Criterion) {
    let data = input();
    let mut g = c.benchmark_group("mini_batch_agg");
    g.throughput(Throughput::Elements(ROWS as u64));
    g.sample_size(10);
    for (name, backend) in [
        ("rocksdb", StateBackend::rocksdb(None).unwrap()),
        ("heap", StateBackend::heap()),
    ] {
        let one = run(&backend, false, &data);
        let mb = run(&backend, true, &data);
        eprintln!(
            "{name}: state accesses one-at-a-time {one}, mini-batch {mb} ({:.1}x fewer)",
            one as f64 / mb as f64
        );
        for (variant, mini_batch) in [("one_at_a_time", false), ("mini_batch", true)] {
            g.bench_function(format!("{name}/{variant}"), |b| {
                b.iter_batched(
                    || (),
                    |_| run(&backend, mini_batch, &data),
                    BatchSize::PerIteration,
                )
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
