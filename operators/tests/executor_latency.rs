//! Latency samples are dated per subtask: a mini-batch bundle that closes
//! late on one subtask is measured from its oldest record, even while
//! another subtask delivers every batch.

use operators::agg::{AggKind, AggSpec, GroupAggregateOperator};
use operators::changelog::{Change, SinkEncoding};
use operators::exec::job::JobOptions;
use operators::exec::{ChangeSource, Exchange, JobBuilder, Target};
use operators::operator::{OpResult, Operator};
use operators::sink::SinkCollector;
use operators::state::StateBackend;
use operators::value::{DataType, Value};
use std::time::Duration;

const BATCHES: usize = 20;
const BATCH: usize = 10;
const PAUSE: Duration = Duration::from_millis(3);

/// `BATCHES` batches of `BATCH` rows `[k, 1]`, k cycling over 0..20, with a
/// pause before each batch (a slow source).
struct SlowSource {
    sent: usize,
}

impl ChangeSource for SlowSource {
    fn next_batch(&mut self, max: usize, out: &mut Vec<Change>) -> OpResult<usize> {
        if self.sent == BATCHES * BATCH {
            return Ok(0);
        }
        std::thread::sleep(PAUSE);
        let n = max.min(BATCHES * BATCH - self.sent);
        for i in self.sent..self.sent + n {
            out.push(Change::insert(vec![
                Value::Int((i % 20) as i64),
                Value::Int(1),
            ]));
        }
        self.sent += n;
        Ok(n)
    }
}

fn count_star() -> Vec<AggSpec> {
    vec![AggSpec {
        kind: AggKind::CountStar,
        arg: None,
        distinct: false,
        filter: None,
        result_type: DataType::BigInt,
    }]
}

#[test]
fn a_late_bundle_is_dated_by_its_oldest_record() {
    let backend = StateBackend::heap();
    // Subtask 0 closes a bundle on every record, subtask 1 only at the end.
    let subtasks: Vec<Box<dyn Operator>> = [1, usize::MAX]
        .into_iter()
        .map(|size| {
            let op =
                GroupAggregateOperator::new(&backend, "agg", vec![0], count_star(), true, true)
                    .unwrap()
                    .with_mini_batch(size);
            Box::new(op) as Box<dyn Operator>
        })
        .collect();
    let mut job = JobBuilder::new();
    let src = job.add_source(Box::new(SlowSource { sent: 0 }));
    let stage = job.add_stage("GroupAggregate", subtasks);
    job.connect_source(src, Target::Stage(stage, 0), Exchange::Hash(vec![0]));
    job.connect_stage(stage, Target::Sink(0), Exchange::Forward);
    let sink = SinkCollector::new(SinkEncoding::Retract, false, true, None);
    let options = JobOptions {
        batch_size: BATCH,
        bundle_latency: None,
        backend: backend.clone(),
        deterministic_clock: false,
        watermark_interval_ms: 200,
        source_idle_timeout_ms: 0,
        breadth_first: false,
    };
    let mut job = {
        job.add_sink("sink", sink);
        job.build(options)
    }
    .unwrap();
    let report = job.run(&mut |_| {}).unwrap();

    // Both subtasks own keys.
    assert!(report.stages[0].subtasks.iter().all(|s| s.records_in > 0));
    // Every key counted 10 times, whichever subtask held it.
    let mut result = report.sinks[0].result.clone().unwrap();
    result.sort_by_key(|r| r[0].as_int());
    let expected: Vec<Vec<Value>> = (0..20)
        .map(|k| vec![Value::Int(k), Value::Int((BATCHES * BATCH / 20) as i64)])
        .collect();
    assert_eq!(result, expected);

    // Subtask 1's rows waited from the first batch to the end: about
    // (BATCHES - 1) pauses. They are a few percent of the rows (one +I per
    // key, where subtask 0 emits -U/+U per record), so they are the p99.
    let waited = PAUSE * (BATCHES as u32 - 1);
    assert!(
        report.sinks[0].latency.max >= waited,
        "max {:?} < {waited:?}",
        report.sinks[0].latency.max
    );
    assert!(
        report.sinks[0].latency.p99 >= waited,
        "p99 {:?} < {waited:?}",
        report.sinks[0].latency.p99
    );
}
