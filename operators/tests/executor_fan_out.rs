//! A job with several sinks: a source connected to several consumers is
//! read once and each consumer gets every record; each sink reports what
//! it received, the job the rows it read (once).

use operators::calc::CalcOperator;
use operators::changelog::{Change, RowKind, SinkEncoding};
use operators::exec::job::JobOptions;
use operators::exec::{ChangeSource, Exchange, JobBuilder, Target};
use operators::expr::{BinOp, Expr};
use operators::operator::{OpResult, Operator};
use operators::sink::SinkCollector;
use operators::state::StateBackend;
use operators::value::Value;
use std::sync::{Arc, Mutex};

/// `n` rows `[i]`; counts the batches it was asked for.
struct Numbers {
    next: i64,
    n: i64,
    reads: Arc<Mutex<usize>>,
    read_ahead: bool,
}

impl ChangeSource for Numbers {
    fn next_batch(&mut self, max: usize, out: &mut Vec<Change>) -> OpResult<usize> {
        *self.reads.lock().unwrap() += 1;
        let end = (self.next + max as i64).min(self.n);
        for i in self.next..end {
            out.push(Change::insert(vec![Value::Int(i)]));
        }
        let k = (end - self.next) as usize;
        self.next = end;
        Ok(k)
    }

    fn can_read_ahead(&self) -> bool {
        self.read_ahead
    }
}

#[test]
fn a_source_feeding_two_sinks_is_read_once() {
    for read_ahead in [false, true] {
        let reads = Arc::new(Mutex::new(0));
        let mut job = JobBuilder::new();
        let src = job.add_source(Box::new(Numbers {
            next: 0,
            n: 10,
            reads: reads.clone(),
            read_ahead,
        }));
        // Sink 0 takes every row; sink 1 the even ones, through a Calc.
        let even = Expr::bin(
            BinOp::Eq,
            Expr::bin(BinOp::Mod, Expr::col(0), Expr::lit(Value::Int(2))),
            Expr::lit(Value::Int(0)),
        );
        let calc = job.add_stage(
            "Calc",
            vec![Box::new(CalcOperator::new(Some(even), None)) as Box<dyn Operator>],
        );
        let all = job.add_sink(
            "all",
            SinkCollector::new(SinkEncoding::Retract, true, true, None),
        );
        let evens = job.add_sink(
            "evens",
            SinkCollector::new(SinkEncoding::Retract, true, true, None),
        );
        job.connect_source(src, Target::Sink(all), Exchange::Forward);
        job.connect_source(src, Target::Stage(calc, 0), Exchange::Forward);
        job.connect_stage(calc, Target::Sink(evens), Exchange::Forward);
        let mut job = job
            .build(JobOptions {
                batch_size: 4,
                bundle_latency: None,
                backend: StateBackend::heap(),
                deterministic_clock: false,
                watermark_interval_ms: 200,
                source_idle_timeout_ms: 0,
                breadth_first: false,
            })
            .unwrap();
        let report = job.run(&mut |_| {}).unwrap();
        assert_eq!(report.input_rows, 10, "each row counted once");
        // 3 batches of rows, then the end (read ahead: one group).
        assert_eq!(*reads.lock().unwrap(), 4, "read once");
        assert_eq!(report.sinks.len(), 2);
        assert_eq!(report.sinks[0].name, "all");
        assert_eq!(report.sinks[0].counts.get(RowKind::Insert), 10);
        assert_eq!(report.sinks[1].counts.get(RowKind::Insert), 5);
        let evens: Vec<i64> = job
            .sink(1)
            .changelog()
            .iter()
            .map(|c| match c.row[0] {
                Value::Int(i) => i,
                _ => -1,
            })
            .collect();
        assert_eq!(evens, [0, 2, 4, 6, 8], "in order");
        assert_eq!(job.sink(0).changelog().len(), 10);
        assert_eq!(report.stages[0].records_in(), 10);
    }
}

#[test]
fn a_sink_nothing_feeds_is_an_error() {
    let mut job = JobBuilder::new();
    let src = job.add_source(Box::new(Numbers {
        next: 0,
        n: 1,
        reads: Arc::new(Mutex::new(0)),
        read_ahead: false,
    }));
    let a = job.add_sink(
        "a",
        SinkCollector::new(SinkEncoding::Retract, false, false, None),
    );
    job.add_sink(
        "b",
        SinkCollector::new(SinkEncoding::Retract, false, false, None),
    );
    job.connect_source(src, Target::Sink(a), Exchange::Forward);
    let options = JobOptions {
        batch_size: 4,
        bundle_latency: None,
        backend: StateBackend::heap(),
        deterministic_clock: false,
        watermark_interval_ms: 200,
        source_idle_timeout_ms: 0,
        breadth_first: false,
    };
    let err = job.build(options).err().expect("refused");
    assert!(err.contains("sink 1 (b) is not fed"), "{err}");
}
