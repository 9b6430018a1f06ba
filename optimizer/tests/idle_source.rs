//! `table.exec.source.idle-timeout`: a window join of a busy table with a
//! quiet one, a `filesystem` table with `source.monitor-interval` (Flink's
//! continuous file source: after its two rows it stays open and reads
//! nothing). Without the timeout the quiet table's watermark holds the
//! join back and every window fires when the job ends; with it the quiet
//! table goes idle and the windows fire as the busy table's watermark
//! passes them. The rows are the same either way. One row a batch, the
//! deterministic clock (1 ms per row read), watermarks after every batch.

use operators::changelog::Change;
use operators::sink::{ChangeWriter, SinkError};
use optimizer::session::{run_script, InsertOutcome, RunOptions};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// `busy`: one row a second from 0 s to 11 s; `quiet`: rows at 0 s and
/// 1 s, then nothing. 4-second windows, watermarks 1 s behind.
const SQL: &str = "
CREATE TABLE busy (
  ts_ms BIGINT, num INT, id STRING,
  ts AS TO_TIMESTAMP_LTZ(ts_ms, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'busy.csv', 'format' = 'csv');

CREATE TABLE quiet (
  ts_ms BIGINT, num INT, id STRING,
  ts AS TO_TIMESTAMP_LTZ(ts_ms, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'quiet.csv', 'format' = 'csv',
        'source.monitor-interval' = '10 s');

CREATE TABLE joined (b_id STRING, q_id STRING, window_start TIMESTAMP(3))
WITH ('connector' = 'blackhole');

INSERT INTO joined
SELECT B.id, Q.id, B.window_start
FROM (SELECT * FROM TABLE(TUMBLE(TABLE busy, DESCRIPTOR(ts), INTERVAL '4' SECONDS))) B
LEFT JOIN (SELECT * FROM TABLE(TUMBLE(TABLE quiet, DESCRIPTOR(ts), INTERVAL '4' SECONDS))) Q
ON B.num = Q.num AND B.window_start = Q.window_start AND B.window_end = Q.window_end;
";

/// Counts the changes the sink received, as they arrive.
struct Counting(Arc<AtomicU64>);

impl ChangeWriter for Counting {
    fn write(&mut self, _change: &Change) -> Result<(), SinkError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<(), SinkError> {
        Ok(())
    }
}

/// Runs the join with the idle timeout `timeout`: the outcome, and after
/// each source batch (rows read so far), how many changes the sink had.
fn run(timeout: &str) -> (InsertOutcome, Vec<(u64, u64)>) {
    let dir = tables();
    run_in(dir.path(), SQL, timeout)
}

/// A folder with the two tables' files.
fn tables() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let busy: String = (0..12).map(|i| format!("{},1,b{i}\n", i * 1000)).collect();
    std::fs::write(dir.path().join("busy.csv"), busy).unwrap();
    std::fs::write(dir.path().join("quiet.csv"), "0,1,q0\n1000,1,q1\n").unwrap();
    dir
}

/// Runs `sql` in `dir` as [`run`] does; the outcome of its last INSERT.
fn run_in(dir: &std::path::Path, sql: &str, timeout: &str) -> (InsertOutcome, Vec<(u64, u64)>) {
    let overrides: Vec<(String, String)> = [
        ("lab.source.batch-size", "1"),
        ("lab.clock", "deterministic"),
        ("pipeline.auto-watermark-interval", "0 ms"),
        ("table.exec.source.idle-timeout", timeout),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let count = Arc::new(AtomicU64::new(0));
    let writer_count = count.clone();
    let factory = move |_: &str, _: &[String], _| {
        Ok(Box::new(Counting(writer_count.clone())) as Box<dyn ChangeWriter>)
    };
    let options = RunOptions {
        changelog_to: Some(&factory),
        ..RunOptions::keep_all()
    };
    let mut emitted = Vec::new();
    let mut out = run_script(sql, dir, &overrides, options, &mut |_, rows| {
        emitted.push((rows, count.load(Ordering::SeqCst)));
    })
    .unwrap();
    (out.pop().unwrap(), emitted)
}

fn rows(outcome: &InsertOutcome) -> Vec<String> {
    outcome.changelog.iter().map(|c| c.to_string()).collect()
}

fn late_dropped(outcome: &InsertOutcome) -> u64 {
    outcome
        .report
        .stages
        .iter()
        .flat_map(|s| &s.counters)
        .filter(|(n, _)| n.ends_with("NumLateRecordsDropped"))
        .map(|(_, v)| v)
        .sum()
}

/// Windows [0 s, 4 s): b0..b3 each with q0 and q1; [4 s, 8 s) and
/// [8 s, 12 s): padded.
fn expected_rows() -> Vec<String> {
    let mut want = Vec::new();
    for b in 0..4 {
        for q in ["q0", "q1"] {
            want.push(format!("+I[b{b}, {q}, 1970-01-01 00:00:00.000]"));
        }
    }
    for b in 4..12 {
        let start = if b < 8 { "04" } else { "08" };
        want.push(format!("+I[b{b}, NULL, 1970-01-01 00:00:{start}.000]"));
    }
    want
}

#[test]
fn without_the_timeout_every_window_waits_for_the_end() {
    let (out, emitted) = run("0 ms");
    assert_eq!(rows(&out), expected_rows());
    // Rows read after each batch: busy and quiet in turn, then busy alone.
    let reads: Vec<u64> = emitted.iter().map(|(r, _)| *r).collect();
    assert_eq!(reads, (1..=14).collect::<Vec<_>>());
    assert!(emitted.iter().all(|(_, n)| *n == 0), "{emitted:?}");
    assert_eq!(late_dropped(&out), 0);
}

#[test]
fn with_the_timeout_the_quiet_table_goes_idle_and_windows_fire_on_the_way() {
    let (out, emitted) = run("3 ms");
    assert_eq!(rows(&out), expected_rows());
    // quiet reads its rows at 2 and 4 ms. In its turn after busy's b5
    // (8 rows read, 8 ms) it has been silent for more than 3 ms: idle, and
    // the join takes busy's watermark (5 s - 1 s), which fires [0 s, 4 s)
    // at once: 8 rows before the 9th row is read. [4 s, 8 s) fires with
    // b9 (watermark 8 s), the 12th row read; [8 s, 12 s) at the end.
    let changes: Vec<(u64, u64)> = emitted.clone();
    let want: Vec<(u64, u64)> = (1..=14)
        .map(|r| {
            let n = match r {
                ..=8 => 0,
                9..=11 => 8,
                _ => 12,
            };
            (r, n)
        })
        .collect();
    assert_eq!(changes, want);
    assert_eq!(late_dropped(&out), 0);
}

/// A compiled plan keeps the timeout (`settings.sourceIdleTimeout`), and
/// runs with it whatever the session executing it says.
#[test]
fn a_compiled_plan_keeps_the_timeout() {
    let dir = tables();
    let (ddl, insert) = SQL.split_at(SQL.find("INSERT INTO").unwrap());
    let compile = format!("{ddl}COMPILE PLAN 'p.json' FOR {insert}");
    let plan = dir.path().join("p.json");
    run_in(dir.path(), &format!("{compile}{insert}"), "3 ms");
    let json = std::fs::read_to_string(&plan).unwrap();
    assert!(json.contains("\"sourceIdleTimeout\": \"3 ms\""), "{json}");
    let (out, emitted) = run_in(dir.path(), &format!("{ddl}EXECUTE PLAN 'p.json';"), "0 ms");
    assert_eq!(rows(&out), expected_rows());
    assert_eq!(emitted, run("3 ms").1);
    assert_ne!(emitted, run("0 ms").1);
    // Without the timeout the plan has no such setting.
    std::fs::remove_file(&plan).unwrap();
    run_in(dir.path(), &format!("{compile}{insert}"), "0 ms");
    let json = std::fs::read_to_string(&plan).unwrap();
    assert!(!json.contains("sourceIdleTimeout"), "{json}");
}

#[test]
fn a_bad_monitor_interval_is_refused_naming_the_option() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("busy.csv"), "").unwrap();
    std::fs::write(dir.path().join("quiet.csv"), "").unwrap();
    for bad in ["0 s", "soon", "-1 s"] {
        let sql = SQL.replace("'10 s'", &format!("'{bad}'"));
        let err = run_script(
            &sql,
            dir.path(),
            &[],
            RunOptions::keep_all(),
            &mut |_, _| {},
        )
        .err()
        .expect("refused");
        assert_eq!(err.exit_code(), 2);
        let text = err.to_string();
        assert!(
            text.contains("quiet") && text.contains("source.monitor-interval"),
            "{bad}: {text}"
        );
    }
}
