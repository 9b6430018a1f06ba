//! The executor tells the operators feeding the sink that only the kinds
//! of their output are observed ([`Operator::emit_kinds_only`]) exactly
//! when the sink keeps nothing else: it does not materialise, keep the
//! changelog, write or print.

use operators::changelog::{Change, SinkEncoding};
use operators::exec::job::JobOptions;
use operators::exec::{ChangeSource, Exchange, JobBuilder, Target};
use operators::operator::{OpResult, Operator};
use operators::sink::{RowWriter, SinkCollector};
use operators::state::StateBackend;
use operators::value::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Three rows, in one batch.
struct ThreeRows(bool);

impl ChangeSource for ThreeRows {
    fn next_batch(&mut self, _max: usize, out: &mut Vec<Change>) -> Result<usize, String> {
        if std::mem::replace(&mut self.0, true) {
            return Ok(0);
        }
        out.extend((0..3).map(|i| Change::insert(vec![Value::Int(i)])));
        Ok(3)
    }
}

/// Forwards its input; notes whether it was told kinds only.
struct Probe(Arc<AtomicBool>);

impl Operator for Probe {
    fn process(
        &mut self,
        _input: usize,
        batch: Vec<Change>,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        out.extend(batch);
        Ok(())
    }

    fn emit_kinds_only(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

struct NoWriter;

impl RowWriter for NoWriter {
    fn write(&mut self, _row: &[Value]) -> Result<(), String> {
        Ok(())
    }
    fn finish(self: Box<Self>) -> Result<(), String> {
        Ok(())
    }
}

/// Runs source -> probe -> probe -> sink; whether each probe was told.
fn told(keep_changelog: bool, materialize: bool, print: bool, writer: bool) -> [bool; 2] {
    let flags = [
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    ];
    let mut job = JobBuilder::new();
    let src = job.add_source(Box::new(ThreeRows(false)));
    let first = job.add_stage(
        "first",
        vec![Box::new(Probe(flags[0].clone())) as Box<dyn Operator>],
    );
    let last = job.add_stage(
        "last",
        vec![Box::new(Probe(flags[1].clone())) as Box<dyn Operator>],
    );
    job.connect_source(src, Target::Stage(first, 0), Exchange::Forward);
    job.connect_stage(first, Target::Stage(last, 0), Exchange::Forward);
    job.connect_stage(last, Target::Sink(0), Exchange::Forward);
    let sink = SinkCollector::new(
        SinkEncoding::Retract,
        keep_changelog,
        materialize,
        print.then(|| "probe> ".to_string()),
    );
    let options = JobOptions {
        batch_size: 8,
        bundle_latency: None,
        backend: StateBackend::heap(),
        deterministic_clock: false,
        watermark_interval_ms: 200,
    };
    let mut job = {
        job.add_sink("sink", sink);
        job.build(options)
    }
    .expect("job");
    if writer {
        job.set_sink_writer(0, Box::new(NoWriter));
    }
    let report = job.run(&mut |_| {}).expect("run");
    assert_eq!(report.sinks[0].counts.total(), 3);
    flags.map(|f| f.load(Ordering::Relaxed))
}

#[test]
fn only_the_stage_feeding_a_counting_sink_is_told() {
    assert_eq!(told(false, false, false, false), [false, true]);
    for (keep, materialize, print, writer) in [
        (true, false, false, false),
        (false, true, false, false),
        (false, false, true, false),
        (false, false, false, true),
    ] {
        assert_eq!(
            told(keep, materialize, print, writer),
            [false, false],
            "keep {keep}, materialise {materialize}, print {print}, writer {writer}"
        );
    }
}
