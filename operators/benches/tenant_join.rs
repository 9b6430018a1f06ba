//! The LEFT join chain of `campaigns/multijoin-vs-binary.toml` in small:
//! `t0 LEFT JOIN t1 ... LEFT JOIN t3 ON tenant_id`, four tables of
//! `(tenant_id, row_id, payload)` with one row per tenant (primary key
//! `(tenant_id, row_id)`) and a fifth of the rows updated afterwards
//! (`-U` old, `+U` new), the tables' batches interleaved, on the heap
//! backend, through
//!
//! - `binary_chain`: three [`RegularJoinOperator`]s, each LEFT-joining the
//!   next table to the previous join's output (every intermediate result
//!   kept in state, NULL-padded rows emitted and retracted as tables fill),
//! - `multi_join`: one [`MultiJoinOperator`] over the four tables,
//!
//! next to their floor in the same run, `hashbrown_floor`: the same records
//! joined by a plain `hashbrown` hash join (a map per table from tenant to
//! its row; a record emits the tenant's full row before and after it, its
//! NULL-padded row where a table loses or gains the tenant's row, the
//! changes MultiJoin emits). After the group the bench prints each
//! operator's rate as a share of the floor's, and each operator's state
//! accesses and rows emitted per input record.

// The allocator of the `lab` binary, so operators are timed as the lab runs them.
#[global_allocator]
static GLOBAL: operators::alloc::LabAllocator = operators::alloc::LabAllocator;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use operators::changelog::{Change, RowKind};
use operators::join::{
    JoinSpec, JoinStateLayout, JoinType, MultiJoinOperator, MultiJoinSpec, RegularJoinOperator,
};
use operators::operator::Operator;
use operators::state::StateBackend;
use operators::value::Value;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

#[path = "support/floor_ratio.rs"]
mod floor_ratio;

const TABLES: usize = 4;
const TENANTS: i64 = 20_000;
const ARITY: usize = 3;
const BATCH: usize = 1024;

fn payload(rng: &mut SmallRng) -> Value {
    let s: String = (0..16)
        .map(|_| rng.random_range(b'a'..=b'z') as char)
        .collect();
    Value::str(&s)
}

/// Table `t`'s records: one insert per tenant in a shuffled order, then
/// an update (`-U` old, `+U` new payload) of a fifth of the tenants.
fn table(t: usize) -> Vec<Change> {
    let mut rng = SmallRng::seed_from_u64(t as u64 + 1);
    let mut tenants: Vec<i64> = (0..TENANTS).collect();
    tenants.shuffle(&mut rng);
    let row_id = |k: i64| Value::Int(k * 10 + t as i64);
    let mut rows: Vec<Vec<Value>> = vec![Vec::new(); TENANTS as usize];
    let mut out = Vec::new();
    for &k in &tenants {
        let row = vec![Value::Int(k), row_id(k), payload(&mut rng)];
        rows[k as usize] = row.clone();
        out.push(Change::insert(row));
    }
    tenants.shuffle(&mut rng);
    for &k in &tenants[..TENANTS as usize / 5] {
        let new = vec![Value::Int(k), row_id(k), payload(&mut rng)];
        let old = std::mem::replace(&mut rows[k as usize], new.clone());
        out.push(Change::new(RowKind::UpdateBefore, old));
        out.push(Change::new(RowKind::UpdateAfter, new));
    }
    out
}

/// The tables' records as (table, batch), the tables' batches taken in turn.
fn interleaved(tables: &[Vec<Change>]) -> Vec<(usize, Vec<Change>)> {
    let chunks: Vec<Vec<&[Change]>> = tables.iter().map(|t| t.chunks(BATCH).collect()).collect();
    let rounds = chunks.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = Vec::new();
    for b in 0..rounds {
        for (t, c) in chunks.iter().enumerate() {
            if let Some(batch) = c.get(b) {
                out.push((t, batch.to_vec()));
            }
        }
    }
    out
}

fn records(batches: &[(usize, Vec<Change>)]) -> u64 {
    batches.iter().map(|(_, b)| b.len() as u64).sum()
}

/// The plain hash join: per table a map from tenant to its row (at most
/// one per tenant here). Returns the number of rows emitted.
fn hashbrown_join(batches: &[(usize, Vec<Change>)]) -> usize {
    let mut tables: Vec<hashbrown::HashMap<i64, Vec<Value>>> =
        (0..TABLES).map(|_| hashbrown::HashMap::new()).collect();
    let full = |tables: &[hashbrown::HashMap<i64, Vec<Value>>], k: i64| {
        let mut row = Vec::with_capacity(TABLES * ARITY);
        for t in tables {
            match t.get(&k) {
                Some(r) => row.extend_from_slice(r),
                None => row.resize(row.len() + ARITY, Value::Null),
            }
        }
        row
    };
    let mut out: Vec<Change> = Vec::with_capacity(4 * BATCH);
    let mut emitted = 0;
    for (t, batch) in batches {
        emitted += out.len();
        out.clear();
        for c in batch {
            let k = c.row[0].as_int().unwrap();
            let base = *t == 0 || tables[0].contains_key(&k);
            if c.kind.is_accumulate() {
                if base && *t > 0 {
                    out.push(Change::delete(full(&tables, k)));
                }
                tables[*t].insert(k, c.row.clone());
                if base {
                    out.push(Change::new(c.kind, full(&tables, k)));
                }
            } else {
                if base {
                    out.push(Change::new(c.kind, full(&tables, k)));
                }
                tables[*t].remove(&k);
                if base && *t > 0 {
                    out.push(Change::insert(full(&tables, k)));
                }
            }
        }
    }
    emitted + out.len()
}

fn layout() -> JoinStateLayout {
    JoinStateLayout::HasUniqueKey(vec![0, 1])
}

/// The binary chain: join `i` (0-based) LEFT-joins table `i + 1` to the
/// output of join `i - 1` (table 0 for join 0).
fn binary_chain(backend: &StateBackend) -> Vec<RegularJoinOperator> {
    let scope = format!("bench-{}", rand::random::<u32>());
    (1..TABLES)
        .map(|t| {
            let left_arity = t * ARITY;
            // The intermediate result is unique on its tables' row ids.
            let left_layout = if t == 1 {
                layout()
            } else {
                JoinStateLayout::HasUniqueKey((0..t).map(|i| i * ARITY + 1).collect())
            };
            let spec = JoinSpec {
                join_type: JoinType::Left,
                left_keys: vec![0],
                right_keys: vec![0],
                left_arity,
                right_arity: ARITY,
                residual: None,
                left_layout,
                right_layout: layout(),
            };
            RegularJoinOperator::new(backend, &format!("{scope}-{t}"), spec).unwrap()
        })
        .collect()
}

fn multi_join(backend: &StateBackend) -> MultiJoinOperator {
    let spec = MultiJoinSpec {
        arities: vec![ARITY; TABLES],
        keys: vec![vec![0]; TABLES],
        join_types: vec![JoinType::Left; TABLES],
        conditions: vec![None; TABLES],
        layouts: vec![layout(); TABLES],
    };
    MultiJoinOperator::new(backend, &format!("bench-{}", rand::random::<u32>()), spec).unwrap()
}

/// Runs the chain; returns the rows the last join emitted.
fn run_chain(ops: &mut [RegularJoinOperator], batches: Vec<(usize, Vec<Change>)>) -> usize {
    let mut emitted = 0;
    let mut a = Vec::new();
    let mut b = Vec::new();
    for (t, batch) in batches {
        // Table 0 enters join 0 on the left; table t > 0 join t - 1 on the right.
        let (first, input) = if t == 0 { (0, 0) } else { (t - 1, 1) };
        a.clear();
        ops[first].process(input, batch, &mut a).unwrap();
        for op in &mut ops[first + 1..] {
            b.clear();
            op.process(0, std::mem::take(&mut a), &mut b).unwrap();
            std::mem::swap(&mut a, &mut b);
        }
        emitted += a.len();
    }
    emitted
}

fn run_multi(op: &mut MultiJoinOperator, batches: Vec<(usize, Vec<Change>)>) -> usize {
    let mut emitted = 0;
    let mut out = Vec::new();
    for (t, batch) in batches {
        out.clear();
        op.process(t, batch, &mut out).unwrap();
        emitted += out.len();
    }
    emitted
}

fn accesses(reports: impl Iterator<Item = operators::state::StateReport>) -> u64 {
    reports.map(|r| r.metrics.accesses()).sum()
}

fn bench(c: &mut Criterion) {
    let tables: Vec<Vec<Change>> = (0..TABLES).map(table).collect();
    let batches = interleaved(&tables);
    let n = records(&batches);
    let heap = StateBackend::heap();

    // One untimed run of each, for the counts.
    let floor_rows = hashbrown_join(&batches);
    let mut chain = binary_chain(&heap);
    let chain_rows = run_chain(&mut chain, batches.clone());
    let chain_accesses = accesses(chain.iter().flat_map(|op| op.state_reports()));
    let mut multi = multi_join(&heap);
    let multi_rows = run_multi(&mut multi, batches.clone());
    let multi_accesses = accesses(multi.state_reports().into_iter());
    drop((chain, multi));
    for (name, rows, acc) in [
        ("hashbrown_floor", floor_rows, None),
        ("binary_chain", chain_rows, Some(chain_accesses)),
        ("multi_join", multi_rows, Some(multi_accesses)),
    ] {
        eprintln!(
            "tenant_join: {name}: {n} records in, {rows} rows out{}",
            acc.map(|a| format!(
                ", {a} state accesses ({:.2} per record)",
                a as f64 / n as f64
            ))
            .unwrap_or_default()
        );
    }

    let timings = floor_ratio::Timings::default();
    let t = &timings;
    let mut g = c.benchmark_group("tenant_join");
    g.throughput(Throughput::Elements(n));
    g.sample_size(10);
    g.bench_function("hashbrown_floor", |b| {
        b.iter(|| t.time("hashbrown_floor", || hashbrown_join(&batches)))
    });
    g.bench_function("binary_chain", |b| {
        b.iter_batched(
            || (binary_chain(&heap), batches.clone()),
            |(mut ops, input)| {
                t.time("binary_chain", || run_chain(&mut ops, input));
                ops
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("multi_join", |b| {
        b.iter_batched(
            || (multi_join(&heap), batches.clone()),
            |(mut op, input)| {
                t.time("multi_join", || run_multi(&mut op, input));
                op
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
    for operator in ["binary_chain", "multi_join"] {
        timings.print_ratio("tenant_join", operator, "hashbrown_floor", n);
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
