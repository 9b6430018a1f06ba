//! `COUNT(*), SUM(v) GROUP BY k` one record at a time, on both backends,
//! next to three floors over the same keys: a plain `hashbrown`
//! count-and-sum loop, the same loop emitting the changelog an aggregate
//! must emit (`+I`, or `-U`/`+U`, one row `Vec` each), and emitting it as
//! columns. Compare records per second within one run: the first floor is
//! what the issue measures against, the others say how much of the
//! distance is the changelog itself. The RocksDB operator has its own
//! floor, `rocksdb_get_put_floor`: per record one `get` and one `put` of
//! the same key and value bytes the operator reads and writes, on a
//! database with the lab's options. After the group the bench prints each
//! operator's rate as a share of its floor's (`support/floor_ratio.rs`).
//! `rocksdb_async_state` is the RocksDB operator with asynchronous state
//! execution (each batch's keys read with one `MultiGet`, written with one
//! `WriteBatch`); before the group it also runs ten times in turn with
//! `rocksdb` (one record at a time) and the bench prints its rate as a
//! share of that one's. Its floor, `rocksdb_batched_floor`, does the same
//! `MultiGet` and `WriteBatch` of the same bytes with nothing else: that
//! floor's rate over `rocksdb_get_put_floor`'s bounds what batching can
//! gain on this backend.
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
use operators::state::codec::encode_into;
use operators::state::rocksdb::write_options;
use operators::state::rocksdb_options::RocksDbOptions;
use operators::state::StateBackend;
use operators::value::{DataType, Value};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

#[path = "support/floor_ratio.rs"]
mod floor_ratio;

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

/// The RocksDB operator's accumulator for `COUNT(*), SUM(v)` after `n`
/// rows summing to `sum`: the row count, then two slots per call
/// (`operators/src/agg/functions.rs`), encoded as the state stores it.
fn acc_bytes(n: i64, sum: i64, out: &mut Vec<u8>) {
    out.clear();
    encode_into(
        &[
            Value::Int(n),
            Value::Int(n),
            Value::Null,
            Value::Int(sum),
            Value::Int(n),
        ],
        out,
    );
}

/// A fresh database with the lab's options and one column family, `acc`,
/// for the floors (its directory goes when the first value is dropped).
fn open_floor_db() -> (tempfile::TempDir, rocksdb::DB) {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = RocksDbOptions::default().to_rocksdb();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    let db = rocksdb::DB::open_cf(&opts, dir.path(), ["acc"]).unwrap();
    (dir, db)
}

/// One `get` and one `put` per record of the operator's key and value
/// bytes on a fresh database with the lab's options, WAL off: what the
/// backend costs with nothing of the operator around it. The new value is
/// built from the old one's count (read in place) and the record.
fn rocksdb_get_put(data: &[Change]) -> usize {
    let (_dir, db) = open_floor_db();
    let cf = db.cf_handle("acc").unwrap();
    let wo = write_options();
    let (mut key, mut value) = (Vec::with_capacity(16), Vec::with_capacity(64));
    let mut found = 0;
    for c in data {
        key.clear();
        encode_into(std::slice::from_ref(&c.row[0]), &mut key);
        let v = c.row[1].as_int().unwrap();
        // Tag byte, then the count as a sign-flipped big-endian word.
        let n = match db.get_pinned_cf(cf, &key).unwrap() {
            Some(old) => {
                found += 1;
                let word: [u8; 8] = old[1..9].try_into().unwrap();
                (u64::from_be_bytes(word) ^ (1 << 63)) as i64
            }
            None => 0,
        };
        acc_bytes(n + 1, v, &mut value);
        db.put_cf_opt(cf, &key, &value, &wo).unwrap();
    }
    found
}

/// The batched floor: per input batch of 1024 records, the distinct keys
/// read with one sorted `MultiGet`, the records counted in order, and
/// each key's last value written in one `WriteBatch`; the least that
/// asynchronous state does on RocksDB. Its rate over `rocksdb_get_put`'s
/// is what batching can buy on this backend at all.
fn rocksdb_multi_get_write_batch(data: &[Change]) -> usize {
    let (_dir, db) = open_floor_db();
    let cf = db.cf_handle("acc").unwrap();
    let wo = write_options();
    let mut found = 0;
    let mut slots: hashbrown::HashMap<Vec<u8>, usize> = hashbrown::HashMap::new();
    let mut keys: Vec<Vec<u8>> = Vec::new();
    let mut accs: Vec<(i64, i64)> = Vec::new();
    let mut value = Vec::with_capacity(64);
    for batch in data.chunks(1024) {
        slots.clear();
        keys.clear();
        let mut key = Vec::with_capacity(16);
        let at: Vec<usize> = batch
            .iter()
            .map(|c| {
                key.clear();
                encode_into(std::slice::from_ref(&c.row[0]), &mut key);
                let next = keys.len();
                *slots.entry_ref(&key[..]).or_insert_with(|| {
                    keys.push(key.clone());
                    next
                })
            })
            .collect();
        let mut order: Vec<usize> = (0..keys.len()).collect();
        order.sort_unstable_by(|&a, &b| keys[a].cmp(&keys[b]));
        accs.clear();
        accs.resize(keys.len(), (0, 0));
        let got = db.batched_multi_get_cf(cf, order.iter().map(|&i| &keys[i]), true);
        for (&i, old) in order.iter().zip(got) {
            if let Some(old) = old.unwrap() {
                found += 1;
                let word: [u8; 8] = old[1..9].try_into().unwrap();
                accs[i].0 = (u64::from_be_bytes(word) ^ (1 << 63)) as i64;
            }
        }
        for (c, &i) in batch.iter().zip(&at) {
            accs[i].0 += 1;
            accs[i].1 = c.row[1].as_int().unwrap();
        }
        let mut writes = rocksdb::WriteBatch::default();
        for (k, &(n, v)) in keys.iter().zip(&accs) {
            acc_bytes(n, v, &mut value);
            writes.put_cf(cf, k, &value);
        }
        db.write_opt(writes, &wo).unwrap();
    }
    found
}

fn bench(c: &mut Criterion) {
    let data = input();
    let timings = floor_ratio::Timings::default();
    let t = &timings;
    let mut g = c.benchmark_group("group_agg");
    g.throughput(Throughput::Elements(ROWS as u64));
    g.sample_size(10);
    g.bench_function("rocksdb_get_put_floor", |b| {
        b.iter_batched(
            || (),
            |()| t.time("rocksdb_get_put_floor", || rocksdb_get_put(&data)),
            BatchSize::PerIteration,
        )
    });
    g.bench_function("rocksdb_batched_floor", |b| {
        b.iter_batched(
            || (),
            |()| {
                t.time("rocksdb_batched_floor", || {
                    rocksdb_multi_get_write_batch(&data)
                })
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("hashbrown_floor", |b| {
        b.iter(|| {
            t.time("hashbrown_floor", || {
                let mut m: hashbrown::HashMap<i64, (i64, i64)> = hashbrown::HashMap::new();
                for c in &data {
                    let k = c.row[0].as_int().unwrap();
                    let e = m.entry(k).or_insert((0, 0));
                    e.0 += 1;
                    e.1 += c.row[1].as_int().unwrap();
                }
                m.len()
            })
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
    let operator = |backend: &StateBackend, async_state: bool| {
        let op = GroupAggregateOperator::new(
            backend,
            &format!("bench-{}", rand::random::<u32>()),
            vec![0],
            specs(),
            true,
            true,
        )
        .unwrap();
        if async_state {
            op.with_async_state()
        } else {
            op
        }
    };
    let run = |op: &mut GroupAggregateOperator, batches: &[Vec<Change>]| {
        let mut out = Vec::new();
        for batch in batches {
            out.clear();
            op.process_read(0, batch, &mut out).unwrap();
        }
    };
    let batches: Vec<Vec<Change>> = data.chunks(1024).map(|c| c.to_vec()).collect();
    // Asynchronous state against one record at a time on RocksDB, run in
    // turns (so both see the same machine), each on a fresh operator.
    let interleaved = floor_ratio::Timings::default();
    for _ in 0..10 {
        for (name, async_state) in [("rocksdb", false), ("rocksdb_async_state", true)] {
            let mut op = operator(&rocksdb, async_state);
            interleaved.time(name, || run(&mut op, &batches));
        }
    }
    g.bench_function("rocksdb_async_state", |b| {
        b.iter_batched(
            || operator(&rocksdb, true),
            |mut op| {
                t.time("rocksdb_async_state", || run(&mut op, &batches));
                op
            },
            BatchSize::LargeInput,
        )
    });
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
                    t.time(name, || {
                        let mut out = Vec::new();
                        for batch in &batches {
                            out.clear();
                            op.process_read(0, batch, &mut out).unwrap();
                        }
                    });
                    (op, batches)
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
    for (operator, floor) in [
        ("heap", "hashbrown_floor"),
        ("heap_kinds_only", "hashbrown_floor"),
        ("heap_general_path", "hashbrown_floor"),
        ("rocksdb", "rocksdb_get_put_floor"),
        ("rocksdb_async_state", "rocksdb_get_put_floor"),
        ("rocksdb_async_state", "rocksdb_batched_floor"),
        ("rocksdb_batched_floor", "rocksdb_get_put_floor"),
    ] {
        timings.print_ratio("group_agg", operator, floor, ROWS as u64);
    }
    interleaved.print_ratio(
        "group_agg, 10 interleaved runs",
        "rocksdb_async_state",
        "rocksdb",
        ROWS as u64,
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
