//! The ownership contract of input batches (`operators/src/operator.rs`):
//! batches lent to an operator that only reads them
//! ([`InputOwnership::Reads`]) go back to the read-ahead thread that filled
//! them, so the reader gets buffers it filled before; batches an operator
//! takes ([`InputOwnership::Takes`]) do not. The job computes the same
//! either way.

use operators::agg::{AggKind, AggSpec, GroupAggregateOperator};
use operators::changelog::{Change, SinkEncoding};
use operators::exec::job::JobOptions;
use operators::exec::{ChangeSource, Exchange, JobBuilder, Target};
use operators::operator::{InputOwnership, OpResult, Operator};
use operators::sink::SinkCollector;
use operators::state::StateBackend;
use operators::value::{DataType, Row, Value};
use std::sync::{Arc, Mutex};

const BATCHES: usize = 200;
const BATCH: usize = 16;

/// `BATCHES` batches of rows `[k, 1]`; counts the batches handed to it in
/// a buffer it filled before (it marks its buffers by growing them to
/// three times the batch size, which no new buffer has).
struct CountingSource {
    sent: usize,
    reused: Arc<Mutex<usize>>,
    read_ahead: bool,
}

impl ChangeSource for CountingSource {
    fn next_batch(&mut self, max: usize, out: &mut Vec<Change>) -> OpResult<usize> {
        if self.sent == BATCHES * BATCH {
            return Ok(0);
        }
        if out.capacity() >= 3 * max {
            *self.reused.lock().unwrap() += 1;
        } else {
            out.reserve_exact(3 * max - out.len());
        }
        let n = max.min(BATCHES * BATCH - self.sent);
        for i in self.sent..self.sent + n {
            out.push(Change::insert(vec![
                Value::Int((i % 7) as i64),
                Value::Int(1),
            ]));
        }
        self.sent += n;
        Ok(n)
    }

    fn can_read_ahead(&self) -> bool {
        self.read_ahead
    }
}

/// Runs `COUNT(*) GROUP BY k` one record at a time (or in mini-batches);
/// the result and how many batches came in a reused buffer.
fn run(read_ahead: bool, mini_batch: bool) -> (Vec<Row>, usize) {
    let backend = StateBackend::heap();
    let count = AggSpec {
        kind: AggKind::CountStar,
        arg: None,
        distinct: false,
        filter: None,
        result_type: DataType::BigInt,
    };
    let op = GroupAggregateOperator::new(&backend, "agg", vec![0], vec![count], true, true)
        .expect("operator");
    let op = if mini_batch {
        op.with_mini_batch(BATCH * 4)
    } else {
        op
    };
    let expected = if mini_batch {
        InputOwnership::Takes
    } else {
        InputOwnership::Reads
    };
    assert_eq!(op.input_ownership(), expected);
    let reused = Arc::new(Mutex::new(0));
    let mut job = JobBuilder::new();
    let src = job.add_source(Box::new(CountingSource {
        sent: 0,
        reused: reused.clone(),
        read_ahead,
    }));
    let stage = job.add_stage("GroupAggregate", vec![Box::new(op) as Box<dyn Operator>]);
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
    .expect("job");
    let report = job.run(&mut |_| {}).expect("run");
    let n = *reused.lock().unwrap();
    (report.sinks[0].result.clone().expect("materialised"), n)
}

#[test]
fn a_read_ahead_source_gets_its_buffers_back() {
    let (with, reused) = run(true, false);
    assert!(
        reused > BATCHES / 2,
        "only {reused} of {BATCHES} batches came in a buffer the source filled before"
    );
    // Read inline (no reader thread), nothing goes back; same result.
    let (without, none) = run(false, false);
    assert_eq!(none, 0);
    assert_eq!(with, without);
    assert_eq!(with.len(), 7);
    // A mini-batch aggregate takes its batches: none goes back.
    let (taken, none) = run(true, true);
    assert_eq!(none, 0);
    assert_eq!(taken, with);
}
