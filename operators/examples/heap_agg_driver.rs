// Scratch driver (not committed): the heap group aggregate, one record at a
// time, p1, the mini_batch_agg bench's input; REPS runs.
#[global_allocator]
static GLOBAL: operators::alloc::LabAllocator = operators::alloc::LabAllocator;
use operators::agg::{AggKind, AggSpec, GroupAggregateOperator};
use operators::changelog::Change;
use operators::operator::Operator;
use operators::state::StateBackend;
use operators::value::{DataType, Value};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
const ROWS: usize = 200_000;
const KEYS: usize = 100_000;
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
fn main() {
    let reps: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let data = input();
    let backend = StateBackend::heap();
    let mut total = 0;
    let t = std::time::Instant::now();
    for r in 0..reps {
        let mut op =
            GroupAggregateOperator::new(&backend, &format!("b{r}"), vec![0], specs(), true, true)
                .unwrap();
        let batches: Vec<Vec<Change>> = data.chunks(1024).map(<[Change]>::to_vec).collect();
        let mut out = Vec::new();
        for batch in batches {
            out.clear();
            op.process(0, batch, &mut out).unwrap();
            total += out.len();
        }
        out.clear();
        op.finish_bundle(&mut out).unwrap();
        total += out.len();
    }
    eprintln!("{total} changes, {:?}", t.elapsed());
}
