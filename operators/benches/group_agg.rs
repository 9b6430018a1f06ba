//! `COUNT(*), SUM(v) GROUP BY k` one record at a time, on both backends,
//! next to three floors over the same keys: a plain `hashbrown`
//! count-and-sum loop, the same loop emitting the changelog an aggregate
//! must emit (`+I`, or `-U`/`+U`, one row `Vec` each), and emitting it as
//! columns. Compare records per second within one run: the first floor is
//! what the issue measures against, the others say how much of the
//! distance is the changelog itself.
//! `heap` takes the operator's typed path for COUNT/SUM (as the lab runs
//! it), `heap_general_path` the path every other aggregate takes, and
//! `heap_kinds_only` the typed path feeding a sink that only counts kinds
//! (a blackhole: the same changes, no rows built), which like the first
//! floor materialises no rows. The operators hand their input batches back
//! as in a job (where the reader frees them), the floors only read theirs.

// The allocator of the `lab` binary, so operators are timed as the lab runs them.
#[global_allocator]
static GLOBAL: operators::alloc::LabAllocator = operators::alloc::LabAllocator;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use operators::agg::{AggKind, AggSpec, GroupAggregateOperator};
use operators::changelog::{Change, RowKind};
use operators::operator::{Emission, Operator};
use operators::state::StateBackend;
use operators::value::{DataType, Value};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const ROWS: usize = 200_000;
const KEYS: i64 = 100_000;

fn input() -> Vec<Change> {
    let mut rng = SmallRng::seed_from_u64(1);
    (0..ROWS)
        .map(|_| {
            Change::insert(vec![
                Value::Int(rng.random_range(0..KEYS)),
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

fn bench(c: &mut Criterion) {
    let data = input();
    let mut g = c.benchmark_group("group_agg");
    g.throughput(Throughput::Elements(ROWS as u64));
    g.sample_size(10);
    g.bench_function("hashbrown_floor", |b| {
        b.iter(|| {
            let mut m: hashbrown::HashMap<i64, (i64, i64)> = hashbrown::HashMap::new();
            for c in &data {
                let k = c.row[0].as_int().unwrap();
                let e = m.entry(k).or_insert((0, 0));
                e.0 += 1;
                e.1 += c.row[1].as_int().unwrap();
            }
            m.len()
        })
    });
    // The floor with the changelog: the same loop, also emitting each
    // record's `+I` or `-U`/`+U` as rows the way every operator must (one
    // `Vec` per row), dropped a batch later as a sink would. The distance
    // between the two floors is the cost of materialising the changelog.
    g.bench_function("hashbrown_changelog_floor", |b| {
        b.iter(|| {
            let mut m: hashbrown::HashMap<i64, (i64, i64)> = hashbrown::HashMap::new();
            let mut out: Vec<Change> = Vec::with_capacity(2048);
            let mut emitted = 0;
            for batch in data.chunks(1024) {
                emitted += out.len();
                out.clear();
                for c in batch {
                    let k = c.row[0].as_int().unwrap();
                    let e = m.entry(k).or_insert((0, 0));
                    let row =
                        |e: &(i64, i64)| vec![Value::Int(k), Value::Int(e.0), Value::Int(e.1)];
                    let prev = (e.0 > 0).then(|| row(e));
                    e.0 += 1;
                    e.1 += c.row[1].as_int().unwrap();
                    match prev {
                        Some(p) => {
                            out.push(Change::new(RowKind::UpdateBefore, p));
                            out.push(Change::new(RowKind::UpdateAfter, row(e)));
                        }
                        None => out.push(Change::new(RowKind::Insert, row(e))),
                    }
                }
            }
            emitted + out.len()
        })
    });
    // The changelog floor with columnar batches instead of rows: kinds and
    // each result column in a vector of its own, cleared a batch later.
    // What a columnar batch format (no allocation per row) could buy.
    g.bench_function("hashbrown_columnar_changelog_floor", |b| {
        b.iter(|| {
            let mut m: hashbrown::HashMap<i64, (i64, i64)> = hashbrown::HashMap::new();
            let mut kinds: Vec<RowKind> = Vec::with_capacity(2048);
            let mut cols: [Vec<i64>; 3] = std::array::from_fn(|_| Vec::with_capacity(2048));
            let mut emitted = 0;
            for batch in data.chunks(1024) {
                emitted += kinds.len();
                kinds.clear();
                cols.iter_mut().for_each(Vec::clear);
                for c in batch {
                    let k = c.row[0].as_int().unwrap();
                    let e = m.entry(k).or_insert((0, 0));
                    let mut row = |kind, e: &(i64, i64)| {
                        kinds.push(kind);
                        cols[0].push(k);
                        cols[1].push(e.0);
                        cols[2].push(e.1);
                    };
                    if e.0 > 0 {
                        row(RowKind::UpdateBefore, e);
                    }
                    let first = e.0 == 0;
                    e.0 += 1;
                    e.1 += c.row[1].as_int().unwrap();
                    row(
                        if first {
                            RowKind::Insert
                        } else {
                            RowKind::UpdateAfter
                        },
                        e,
                    );
                }
            }
            emitted + kinds.len()
        })
    });
    let heap = StateBackend::heap();
    let rocksdb = StateBackend::rocksdb(None).unwrap();
    for (name, backend, typed, kinds_only) in [
        ("heap", &heap, true, false),
        ("heap_kinds_only", &heap, true, true),
        ("heap_general_path", &heap, false, false),
        ("rocksdb", &rocksdb, false, false),
    ] {
        g.bench_function(name, |b| {
            b.iter_batched(
                || {
                    let op = GroupAggregateOperator::new(
                        backend,
                        &format!("bench-{}", rand::random::<u32>()),
                        vec![0],
                        specs(),
                        true,
                        true,
                    )
                    .unwrap();
                    let op = if typed { op } else { op.with_general_path() };
                    let op = if kinds_only {
                        op.with_emission(Emission::KindsOnly)
                    } else {
                        op
                    };
                    (
                        op,
                        data.chunks(1024).map(|c| c.to_vec()).collect::<Vec<_>>(),
                    )
                },
                |(mut op, batches)| {
                    // As in a job: the operator only reads its input
                    // (`InputOwnership::Reads`), lent by the executor, which
                    // sends it back to its reader to free (here, after the
                    // timing; the floors only read their input too).
                    let mut out = Vec::new();
                    for batch in &batches {
                        out.clear();
                        op.process_read(0, batch, &mut out).unwrap();
                    }
                    (op, batches)
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
