//! One record at a time vs mini-batch, `COUNT(*), SUM(v) GROUP BY k` over
//! 100k Zipf-skewed keys (exponent 1.2), bundles of 5000, on RocksDB and
//! heap. Prints state accesses per variant next to criterion's throughput,
//! so both ratios are read in one run.
//!
//! Mini-batch reads and writes each key once per bundle, so the access
//! ratio is records per distinct key per bundle, a property of the input:
//! 5000 draws of Zipf(1.2) over 100k keys hit 1242 distinct keys on
//! average, a ratio of 4.02 at parallelism 1. Bundles are per subtask, so
//! at parallelism 4 each bundle holds 5000 records of a quarter of the keys
//! and the ratio grows (5.6 expected); the accesses are printed for both.
//! Throughput is timed for both too, the subtasks of parallelism 4 run one
//! after another (the stage's work on one core); operator creation and
//! input copies are set-up, outside the timing.

// The allocator of the `lab` binary, so operators are timed as the lab runs them.
#[global_allocator]
static GLOBAL: operators::alloc::LabAllocator = operators::alloc::LabAllocator;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use operators::agg::{AggKind, AggSpec, GroupAggregateOperator};
use operators::changelog::Change;
use operators::exec::Exchange;
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

fn operator(backend: &StateBackend, mini_batch: bool) -> GroupAggregateOperator {
    let op = GroupAggregateOperator::new(
        backend,
        &format!("b{}", rand::random::<u32>()),
        vec![0],
        specs(),
        true,
        true,
    )
    .unwrap();
    if mini_batch {
        op.with_mini_batch(BUNDLE)
    } else {
        op
    }
}

/// Feeds `batches` and closes the last bundle, as the executor does.
fn run(op: &mut GroupAggregateOperator, batches: Vec<Vec<Change>>) -> usize {
    let mut out = Vec::new();
    let mut emitted = 0;
    for batch in batches {
        out.clear();
        op.process(0, batch, &mut out).unwrap();
        emitted += out.len();
    }
    out.clear();
    op.finish_bundle(&mut out).unwrap();
    emitted + out.len()
}

/// The input at parallelism `p`: hash partitioned by key as the executor's
/// exchange does, one operator per subtask, so each subtask has its own
/// bundles of `BUNDLE` records (Flink's `table.exec.mini-batch.size`
/// counts per subtask too).
fn subtasks(
    backend: &StateBackend,
    mini_batch: bool,
    data: &[Change],
    p: usize,
) -> Vec<(GroupAggregateOperator, Vec<Vec<Change>>)> {
    Exchange::Hash(vec![0])
        .route(vec![data.to_vec()], p)
        .into_iter()
        .map(|part| {
            let batches = part.chunks(1024).map(<[Change]>::to_vec).collect();
            (operator(backend, mini_batch), batches)
        })
        .collect()
}

/// State accesses of the whole input at parallelism `p`.
fn accesses(backend: &StateBackend, mini_batch: bool, data: &[Change], p: usize) -> u64 {
    subtasks(backend, mini_batch, data, p)
        .into_iter()
        .map(|(mut op, batches)| {
            run(&mut op, batches);
            op.state_reports()
                .iter()
                .map(|r| r.metrics.accesses())
                .sum::<u64>()
        })
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
        for p in [1, 4] {
            let one = accesses(&backend, false, &data, p);
            let mb = accesses(&backend, true, &data, p);
            eprintln!(
                "{name}: parallelism {p}: state accesses one-at-a-time {one}, mini-batch {mb} ({:.2}x fewer)",
                one as f64 / mb as f64
            );
        }
        for p in [1, 4] {
            for (variant, mini_batch) in [("one_at_a_time", false), ("mini_batch", true)] {
                g.bench_function(format!("{name}/p{p}/{variant}"), |b| {
                    b.iter_batched(
                        || subtasks(&backend, mini_batch, &data, p),
                        |subtasks| {
                            // The subtasks one after another: the work of
                            // the whole stage, on one core.
                            subtasks
                                .into_iter()
                                .map(|(mut op, batches)| {
                                    run(&mut op, batches);
                                    op
                                })
                                .collect::<Vec<_>>()
                        },
                        BatchSize::PerIteration,
                    )
                });
            }
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
