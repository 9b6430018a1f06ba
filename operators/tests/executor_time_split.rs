//! The job report splits the job thread's time: waiting for sources, and
//! in the sink. A source that sleeps shows up as source wait, a sink writer
//! that sleeps as sink time, and neither exceeds the wall time.

use operators::changelog::{Change, SinkEncoding};
use operators::exec::job::JobOptions;
use operators::exec::{ChangeSource, Exchange, JobBuilder, Target};
use operators::operator::OpResult;
use operators::sink::{RowWriter, SinkCollector, SinkError};
use operators::state::StateBackend;
use operators::value::Value;
use std::time::Duration;

const BATCHES: usize = 5;
const PAUSE: Duration = Duration::from_millis(4);

/// `BATCHES` one-row batches, each after a pause.
struct SlowSource {
    sent: usize,
    read_ahead: bool,
}

impl ChangeSource for SlowSource {
    fn next_batch(&mut self, _max: usize, out: &mut Vec<Change>) -> OpResult<usize> {
        if self.sent == BATCHES {
            return Ok(0);
        }
        std::thread::sleep(PAUSE);
        out.push(Change::insert(vec![Value::Int(self.sent as i64)]));
        self.sent += 1;
        Ok(1)
    }

    fn can_read_ahead(&self) -> bool {
        self.read_ahead
    }
}

/// Pauses on every row it writes.
struct SlowWriter;

impl RowWriter for SlowWriter {
    fn write(&mut self, _row: &[Value]) -> Result<(), SinkError> {
        std::thread::sleep(PAUSE);
        Ok(())
    }
    fn finish(self: Box<Self>) -> Result<(), SinkError> {
        Ok(())
    }
}

fn run(read_ahead: bool, slow_sink: bool) -> operators::exec::JobReport {
    let backend = StateBackend::heap();
    let mut job = JobBuilder::new();
    let src = job.add_source(Box::new(SlowSource {
        sent: 0,
        read_ahead,
    }));
    job.connect_source(src, Target::Sink(0), Exchange::Forward);
    let options = JobOptions {
        batch_size: 1,
        bundle_latency: None,
        backend,
        deterministic_clock: false,
        watermark_interval_ms: 200,
        source_idle_timeout_ms: 0,
        breadth_first: false,
    };
    let sink = SinkCollector::new(SinkEncoding::Retract, false, false, None);
    let mut job = {
        job.add_sink("sink", sink);
        job.build(options)
    }
    .expect("job");
    if slow_sink {
        job.set_sink_writer(0, Box::new(SlowWriter))
            .expect("writer");
    }
    job.run(&mut |_| {}).expect("run")
}

#[test]
fn a_slow_source_is_source_wait() {
    for read_ahead in [false, true] {
        let r = run(read_ahead, false);
        assert_eq!(r.input_rows, BATCHES as u64);
        // Inline, the job reads every batch itself; with a reader thread
        // it waits for at least the first batch.
        let least = if read_ahead {
            PAUSE
        } else {
            PAUSE * BATCHES as u32
        };
        assert!(r.source_wait >= least, "{:?} < {least:?}", r.source_wait);
        assert!(
            r.source_wait <= r.wall,
            "{:?} > wall {:?}",
            r.source_wait,
            r.wall
        );
        assert!(
            r.sink_time <= r.wall,
            "{:?} > wall {:?}",
            r.sink_time,
            r.wall
        );
    }
}

#[test]
fn a_slow_sink_is_sink_time() {
    let r = run(true, true);
    assert!(r.sink_time >= PAUSE * BATCHES as u32, "{:?}", r.sink_time);
    assert!(
        r.sink_time <= r.wall,
        "{:?} > wall {:?}",
        r.sink_time,
        r.wall
    );
}
