//! Idle sources (`JobOptions::source_idle_timeout_ms`, the executor's
//! `job/idleness.rs`): a stage of two inputs, each fed by its own source,
//! records the watermarks it gets and the rows that reach it behind its
//! watermark. One row a batch, deterministic clock (1 ms per row read),
//! watermarks after every batch: each source's watermark is the greatest
//! time it read.

use operators::calc::CalcOperator;
use operators::changelog::{Change, SinkEncoding};
use operators::exec::job::JobOptions;
use operators::exec::{ChangeSource, Exchange, JobBuilder, Target};
use operators::operator::{OpResult, Operator};
use operators::sink::SinkCollector;
use operators::state::StateBackend;
use operators::value::Value;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// Reads its script one step a call: `Some(t)` a row at time `t`, `None`
/// nothing (an unbounded source with nothing to read yet).
struct Scripted {
    steps: VecDeque<Option<i64>>,
    greatest: Option<i64>,
    unbounded: bool,
}

impl Scripted {
    fn new(steps: &[Option<i64>], unbounded: bool) -> Box<Scripted> {
        Box::new(Scripted {
            steps: steps.iter().copied().collect(),
            greatest: None,
            unbounded,
        })
    }
}

impl ChangeSource for Scripted {
    fn next_batch(&mut self, _max: usize, out: &mut Vec<Change>) -> OpResult<usize> {
        match self.steps.pop_front() {
            Some(Some(t)) => {
                out.push(Change::insert(vec![Value::Int(t)]));
                self.greatest = Some(self.greatest.map_or(t, |g| g.max(t)));
                Ok(1)
            }
            Some(None) | None => Ok(0),
        }
    }

    fn watermark(&self) -> Option<i64> {
        self.greatest
    }

    fn has_watermark(&self) -> bool {
        true
    }

    fn is_unbounded(&self) -> bool {
        self.unbounded
    }
}

/// What the stage saw: its watermarks in order, and the rows (their
/// times) that reached it at or behind its watermark, per input.
#[derive(Default, Debug, PartialEq)]
struct Seen {
    watermarks: Vec<i64>,
    late: Vec<(usize, i64)>,
}

struct Recorder {
    watermark: i64,
    seen: Arc<Mutex<Seen>>,
}

impl Operator for Recorder {
    fn process(
        &mut self,
        input: usize,
        batch: Vec<Change>,
        _out: &mut Vec<Change>,
    ) -> OpResult<()> {
        for c in batch {
            if let Value::Int(t) = c.row[0] {
                if t <= self.watermark {
                    self.seen.lock().unwrap().late.push((input, t));
                }
            }
        }
        Ok(())
    }

    fn on_watermark(&mut self, watermark: i64, _out: &mut Vec<Change>) -> OpResult<()> {
        self.watermark = watermark;
        self.seen.lock().unwrap().watermarks.push(watermark);
        Ok(())
    }
}

/// Runs sources `a` and `b` into one stage (inputs 0 and 1).
fn run(a: Box<Scripted>, b: Box<Scripted>, idle_timeout_ms: u64) -> Seen {
    run_beside(a, b, None, idle_timeout_ms)
}

/// [`run`], with `other` read in the same rounds into a sink of its own.
fn run_beside(
    a: Box<Scripted>,
    b: Box<Scripted>,
    other: Option<Box<Scripted>>,
    idle_timeout_ms: u64,
) -> Seen {
    run_graph(a, b, other, false, idle_timeout_ms)
}

/// [`run_beside`]; with `b_through_calc`, `b` reaches the stage through a
/// Calc stage of its own, which goes idle with it.
fn run_graph(
    a: Box<Scripted>,
    b: Box<Scripted>,
    other: Option<Box<Scripted>>,
    b_through_calc: bool,
    idle_timeout_ms: u64,
) -> Seen {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut job = JobBuilder::new();
    let sa = job.add_source(a);
    let sb = job.add_source(b);
    // Stages are added upstream first.
    let calc = b_through_calc.then(|| {
        let calc = CalcOperator::new(None, None);
        job.add_stage("Calc", vec![Box::new(calc) as Box<dyn Operator>])
    });
    let op = Recorder {
        watermark: i64::MIN,
        seen: seen.clone(),
    };
    let stage = job.add_stage("Recorder", vec![Box::new(op) as Box<dyn Operator>]);
    let sink = job.add_sink(
        "out",
        SinkCollector::new(SinkEncoding::Retract, false, false, None),
    );
    job.connect_source(sa, Target::Stage(stage, 0), Exchange::Forward);
    match calc {
        Some(calc) => {
            job.connect_source(sb, Target::Stage(calc, 0), Exchange::Forward);
            job.connect_stage(calc, Target::Stage(stage, 1), Exchange::Forward);
        }
        None => job.connect_source(sb, Target::Stage(stage, 1), Exchange::Forward),
    }
    job.connect_stage(stage, Target::Sink(sink), Exchange::Forward);
    if let Some(other) = other {
        let so = job.add_source(other);
        let own = job.add_sink(
            "other",
            SinkCollector::new(SinkEncoding::Retract, false, false, None),
        );
        job.connect_source(so, Target::Sink(own), Exchange::Forward);
    }
    let mut job = job
        .build(JobOptions {
            batch_size: 1,
            bundle_latency: None,
            backend: StateBackend::heap(),
            deterministic_clock: true,
            watermark_interval_ms: 0,
            source_idle_timeout_ms: idle_timeout_ms,
            breadth_first: false,
        })
        .unwrap();
    job.run(&mut |_| {}).unwrap();
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    seen
}

/// A busy source at 10, 20, ..., 80 and a quiet one that reads 5 and then
/// nothing until the job ends.
fn busy() -> Box<Scripted> {
    Scripted::new(&(1..=8).map(|i| Some(i * 10)).collect::<Vec<_>>(), false)
}

#[test]
fn without_the_timeout_a_silent_source_holds_the_watermark_back() {
    let quiet = Scripted::new(&[Some(5)], true);
    let seen = run(busy(), quiet, 0);
    // 5 until the busy source ends (8 rows, 1 + 8 ms), then the quiet
    // one is stopped: only then does the watermark move on.
    assert_eq!(seen.watermarks, [5, i64::MAX]);
    assert!(seen.late.is_empty());
}

#[test]
fn with_the_timeout_a_silent_source_goes_idle_and_the_other_leads() {
    let quiet = Scripted::new(&[Some(5)], true);
    let seen = run(busy(), quiet, 3);
    // Clock: a:10 at 1, b:5 at 2, then a alone: 20 at 3, 30 at 4, 40 at
    // 5, 50 at 6; b is silent at 6 (4 ms > 3 since its row): idle, and the
    // stage takes a's 50 at once; then 60, 70, 80, and the end.
    assert_eq!(seen.watermarks, [5, 50, 60, 70, 80, i64::MAX]);
    assert!(seen.late.is_empty());
}

#[test]
fn an_idle_source_makes_a_stage_it_alone_feeds_idle() {
    // The quiet source reaches the stage through a Calc: the Calc goes
    // idle with it and tells the stage, which then follows a alone.
    for timeout in [0, 3] {
        let quiet = Scripted::new(&[Some(5)], true);
        let through_calc = run_graph(busy(), quiet, None, true, timeout);
        let quiet = Scripted::new(&[Some(5)], true);
        assert_eq!(
            through_calc,
            run(busy(), quiet, timeout),
            "timeout {timeout}"
        );
    }
}

#[test]
fn a_timeout_longer_than_the_silence_changes_nothing() {
    let quiet = Scripted::new(&[Some(5)], true);
    let seen = run(busy(), quiet, 100);
    assert_eq!(seen.watermarks, [5, i64::MAX]);
}

#[test]
fn an_idle_source_that_reads_again_is_active_and_its_old_rows_are_late() {
    // b reads 5, is silent for five rounds (idle from the fourth, as in
    // the test above), then reads 15, behind the stage's 70: late. It is
    // active again but not aligned (15 < 70), so a's 80 moves the stage on
    // without it; b's 85 catches up, and from then b holds the stage back
    // again: when a ends, the stage goes to 85, not to the end.
    let quiet = Scripted::new(
        &[Some(5), None, None, None, None, None, Some(15), Some(85)],
        true,
    );
    let seen = run(busy(), quiet, 3);
    assert_eq!(seen.watermarks, [5, 50, 60, 70, 80, 85, i64::MAX]);
    assert_eq!(seen.late, [(1, 15)]);
}

#[test]
fn a_bounded_source_that_ends_sends_the_greatest_watermark() {
    // The quiet source is bounded: it ends after its row (in the second
    // round, after a read 20), so it never holds the busy one back, with
    // or without the timeout.
    for timeout in [0, 3] {
        let quiet = Scripted::new(&[Some(5)], false);
        let seen = run(busy(), quiet, timeout);
        assert_eq!(
            seen.watermarks,
            [5, 20, 30, 40, 50, 60, 70, 80, i64::MAX],
            "timeout {timeout}"
        );
    }
}

#[test]
fn when_every_input_is_idle_the_stage_flushes_to_the_greatest() {
    // a reads 20, b reads 10, then both fall silent while a third source
    // goes on elsewhere. a goes idle first (the stage stays at b's 10),
    // then b: every input is idle, and the stage moves to the greatest of
    // their watermarks, a's 20, as Flink's valve flushes. Without the
    // timeout the stage waits at 10 for the end.
    let elsewhere = || Scripted::new(&[Some(1); 8], false);
    let seen = run_beside(
        Scripted::new(&[Some(20)], true),
        Scripted::new(&[Some(10)], true),
        Some(elsewhere()),
        3,
    );
    assert_eq!(seen.watermarks, [10, 20, i64::MAX]);
    let seen = run_beside(
        Scripted::new(&[Some(20)], true),
        Scripted::new(&[Some(10)], true),
        Some(elsewhere()),
        0,
    );
    assert_eq!(seen.watermarks, [10, i64::MAX]);
}
