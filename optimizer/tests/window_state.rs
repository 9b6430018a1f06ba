//! Window state is freed by the watermark, not by time-to-live: after the
//! final watermark every window operator (TUMBLE, HOP, CUMULATE, SESSION;
//! one phase and two) holds 0 state entries on both backends, and
//! `table.exec.state.ttl` does not touch it (a 1 ms TTL on the
//! deterministic clock, which would expire every accumulator of a group
//! aggregate between its rows, changes no window result).

mod common;

use common::{run_mem, MemSources};
use operators::changelog::Change;
use operators::value::Value;
use optimizer::session::{InsertOutcome, RunOptions};

const SCRIPT: &str = "
CREATE TABLE ev (
  k  INT,
  v  BIGINT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'datagen');
CREATE TABLE out4 (k INT, ws TIMESTAMP(3), we TIMESTAMP(3), c BIGINT, s BIGINT)
  WITH ('connector' = 'blackhole');
INSERT INTO out4 SELECT k, window_start, window_end, COUNT(*), SUM(v)
FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY k, window_start, window_end;
INSERT INTO out4 SELECT k, window_start, window_end, COUNT(*), SUM(v)
FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '20' SECOND))
GROUP BY k, window_start, window_end;
INSERT INTO out4 SELECT k, window_start, window_end, COUNT(*), SUM(v)
FROM TABLE(CUMULATE(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '30' SECOND))
GROUP BY k, window_start, window_end;
INSERT INTO out4 SELECT k, window_start, window_end, COUNT(*), SUM(v)
FROM TABLE(SESSION(TABLE ev PARTITION BY k, DESCRIPTOR(ts), INTERVAL '4' SECOND))
GROUP BY k, window_start, window_end;
";

const KINDS: [&str; 4] = ["TUMBLE", "HOP", "CUMULATE", "SESSION"];

fn sources() -> MemSources {
    let t0 = 1_700_000_000_000i64;
    let changes = (0..300i64)
        .map(|i| {
            // Forward by 0.7 s a row, every fifth row 3 s behind.
            let ts = t0 + i * 700 - if i % 5 == 2 { 3000 } else { 0 };
            Change::insert(vec![Value::Int(i % 3), Value::Int(i), Value::Ts(ts)])
        })
        .collect();
    let mut s = MemSources::default();
    s.0.insert("ev".into(), changes);
    s
}

fn run(overrides: &[(&str, String)]) -> Vec<InsertOutcome> {
    run_mem(SCRIPT, &sources(), overrides, RunOptions::keep_all())
        .unwrap()
        .1
}

#[test]
fn window_state_is_empty_after_the_final_watermark_and_ttl_does_not_touch_it() {
    for backend in ["hashmap", "rocksdb"] {
        for phase in ["ONE_PHASE", "TWO_PHASE"] {
            for p in ["1", "4"] {
                let base = [
                    ("state.backend.type", backend.to_string()),
                    ("table.optimizer.agg-phase-strategy", phase.to_string()),
                    ("parallelism.default", p.to_string()),
                    ("lab.source.batch-size", "7".to_string()),
                    ("lab.clock", "deterministic".to_string()),
                    ("pipeline.auto-watermark-interval", "0 ms".to_string()),
                ];
                let plain = run(&base);
                let mut with_ttl = base.to_vec();
                with_ttl.push(("table.exec.state.ttl", "1 ms".to_string()));
                let ttl = run(&with_ttl);
                for (i, (a, b)) in plain.iter().zip(&ttl).enumerate() {
                    let what = format!("{} {backend} {phase} P{p}", KINDS[i]);
                    let rows = a.sink_report().result.clone().unwrap();
                    assert!(rows.len() > 20, "{what}: {} windows", rows.len());
                    assert_eq!(
                        Some(rows),
                        b.sink_report().result.clone(),
                        "{what}: the TTL changed a window result"
                    );
                    for o in [a, b] {
                        let mut window_writes = 0;
                        for stage in &o.report.stages {
                            for s in &stage.states {
                                assert_eq!(
                                    s.metrics.entries, 0,
                                    "{what}: {} of {} after the final watermark",
                                    s.name, stage.name
                                );
                                if stage.name.contains("WindowAggregate") {
                                    window_writes += s.metrics.writes;
                                }
                            }
                        }
                        assert!(window_writes > 0, "{what}: the windows kept state");
                    }
                }
            }
        }
    }
}
