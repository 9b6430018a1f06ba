//! Kinds-only emission is the builder's choice ([`Emission`]), and the
//! executor holds it to its condition: a stage built to emit kinds only
//! may feed only sinks that keep nothing but kinds (no materialising,
//! changelog, printing or writer). Anything else is refused when the job
//! is built or the writer set, so an empty row never reaches a reader.

use operators::changelog::{Change, SinkEncoding};
use operators::exec::job::JobOptions;
use operators::exec::{ChangeSource, Exchange, Job, JobBuilder, Target};
use operators::operator::{Emission, OpResult, Operator};
use operators::sink::{RowWriter, SinkCollector, SinkError};
use operators::state::StateBackend;
use operators::value::Value;

/// Three rows, in one batch.
struct ThreeRows(bool);

impl ChangeSource for ThreeRows {
    fn next_batch(&mut self, _max: usize, out: &mut Vec<Change>) -> OpResult<usize> {
        if std::mem::replace(&mut self.0, true) {
            return Ok(0);
        }
        out.extend((0..3).map(|i| Change::insert(vec![Value::Int(i)])));
        Ok(3)
    }
}

/// Forwards its input.
struct Forward;

impl Operator for Forward {
    fn process(
        &mut self,
        _input: usize,
        batch: Vec<Change>,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        out.extend(batch);
        Ok(())
    }
}

struct NoWriter;

impl RowWriter for NoWriter {
    fn write(&mut self, _row: &[Value]) -> Result<(), SinkError> {
        Ok(())
    }
    fn finish(self: Box<Self>) -> Result<(), SinkError> {
        Ok(())
    }
}

/// Builds source -> first -> last -> sink, with `emission` on the stage
/// named `kinds_only_stage`.
fn build(
    kinds_only_stage: &str,
    keep_changelog: bool,
    materialize: bool,
    print: bool,
) -> Result<Job, String> {
    let mut job = JobBuilder::new();
    let src = job.add_source(Box::new(ThreeRows(false)));
    let first = job.add_stage("first", vec![Box::new(Forward) as Box<dyn Operator>]);
    let last = job.add_stage("last", vec![Box::new(Forward) as Box<dyn Operator>]);
    let chosen = if kinds_only_stage == "first" {
        first
    } else {
        last
    };
    job.set_emission(chosen, Emission::KindsOnly);
    job.connect_source(src, Target::Stage(first, 0), Exchange::Forward);
    job.connect_stage(first, Target::Stage(last, 0), Exchange::Forward);
    job.connect_stage(last, Target::Sink(0), Exchange::Forward);
    let sink = SinkCollector::new(
        SinkEncoding::Retract,
        keep_changelog,
        materialize,
        print.then(|| "probe> ".to_string()),
    );
    job.add_sink("sink", sink);
    job.build(JobOptions {
        batch_size: 8,
        bundle_latency: None,
        backend: StateBackend::heap(),
        deterministic_clock: false,
        watermark_interval_ms: 200,
        source_idle_timeout_ms: 0,
        breadth_first: false,
    })
}

#[test]
fn a_kinds_only_stage_may_feed_only_a_counting_sink() {
    let mut job = build("last", false, false, false).expect("a counting sink");
    let report = job.run(&mut |_| {}).expect("run");
    assert_eq!(report.sinks[0].counts.total(), 3);

    let e = build("first", false, false, false)
        .err()
        .expect("feeds a stage");
    assert!(e.contains("stage 0 (first) emits kinds only"), "{e}");
    for (keep, materialize, print) in [
        (true, false, false),
        (false, true, false),
        (false, false, true),
    ] {
        let e = build("last", keep, materialize, print)
            .err()
            .unwrap_or_else(|| panic!("keep {keep}, materialise {materialize}, print {print}"));
        assert!(e.contains("feeds a consumer that reads rows"), "{e}");
    }
}

#[test]
fn a_writer_is_refused_for_a_sink_fed_kinds_only() {
    let mut job = build("last", false, false, false).expect("job");
    let e = job
        .set_sink_writer(0, Box::new(NoWriter))
        .expect_err("kinds only");
    assert!(e.to_string().contains("built to emit kinds only"), "{e}");
}
