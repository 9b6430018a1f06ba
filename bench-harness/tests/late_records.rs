//! `lab run --late FILE`: the file holds exactly the records the window
//! operator dropped as late (issue 17, acceptance 4), with its input's
//! columns, for one- and two-phase plans, both backends, parallelism 1 and
//! 4; it is written to a temporary and renamed, and a file that cannot be
//! written is a failed execution (exit 3) that leaves nothing behind.

use std::path::Path;
use std::process::Command;

fn lab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lab"))
}

const SCRIPT: &str = "
CREATE TABLE ev (
  k  INT,
  v  BIGINT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'ev.csv', 'format' = 'csv');
CREATE TABLE tumble_out (k INT, ws TIMESTAMP(3), we TIMESTAMP(3), c BIGINT)
  WITH ('connector' = 'blackhole');
CREATE TABLE session_out (k INT, ws TIMESTAMP(3), we TIMESTAMP(3), c BIGINT)
  WITH ('connector' = 'blackhole');
INSERT INTO tumble_out
SELECT k, window_start, window_end, COUNT(*)
FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY k, window_start, window_end;
INSERT INTO session_out
SELECT k, window_start, window_end, COUNT(*)
FROM TABLE(SESSION(TABLE ev PARTITION BY k, DESCRIPTOR(ts), INTERVAL '3' SECOND))
GROUP BY k, window_start, window_end;
";

const T0: i64 = 1_586_937_600_000; // 2020-04-15 08:00:00 UTC

/// 400 rows drifting forward, every seventh one 4 to 40 s behind.
fn rows() -> Vec<(i64, i64, i64)> {
    let mut seed = 12345u64;
    let mut next = |m: u64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % m
    };
    let mut t = T0 + 60_000;
    (0..400)
        .map(|i| {
            t += next(1500) as i64;
            let ts = if i % 7 == 3 {
                t - 4000 - next(36_000) as i64
            } else {
                t
            };
            (next(5) as i64, i as i64, ts)
        })
        .collect()
}

fn timestamp(ms: i64) -> String {
    let s = ms.div_euclid(1000) - T0 / 1000;
    format!(
        "2020-04-15 {:02}:{:02}:{:02}.{:03}",
        8 + s / 3600,
        s / 60 % 60,
        s % 60,
        ms.rem_euclid(1000)
    )
}

/// The late records by the rule, with one row per batch and a watermark
/// after each (the greatest time so far - 1 s): a TUMBLE record is late
/// when its window's end - 1 is at most the watermark it meets; a SESSION
/// record when its own window [t, t + 3 s) has fired and it touches no open
/// session of its key.
fn expected() -> (Vec<String>, Vec<String>) {
    let mut wm = i64::MIN;
    let mut max = i64::MIN;
    let (mut tumble, mut session) = (Vec::new(), Vec::new());
    let mut open: Vec<(i64, i64, i64)> = Vec::new(); // (key, start, end)
    for (k, _, t) in rows() {
        open.retain(|&(_, _, e)| wm < e - 1);
        let end = t - t.rem_euclid(10_000) + 10_000;
        if wm >= end - 1 {
            tumble.push(format!("{k},{}", timestamp(t)));
        }
        let (mut s, mut e) = (t, t + 3000);
        let touched: Vec<_> = open
            .iter()
            .copied()
            .filter(|&(key, a, b)| key == k && a <= e && b >= s)
            .collect();
        if touched.is_empty() && wm >= e - 1 {
            session.push(format!("{k},{}", timestamp(t)));
        } else {
            open.retain(|x| !touched.contains(x));
            for (_, a, b) in touched {
                s = s.min(a);
                e = e.max(b);
            }
            open.push((k, s, e));
        }
        max = max.max(t);
        wm = max - 1000;
    }
    tumble.sort();
    session.sort();
    (tumble, session)
}

fn write_input(dir: &Path) {
    let csv: String = rows()
        .iter()
        .map(|(k, v, t)| format!("{k},{v},{}\n", timestamp(*t)))
        .collect();
    std::fs::write(dir.join("ev.csv"), csv).unwrap();
    std::fs::write(dir.join("late.sql"), SCRIPT).unwrap();
}

fn run(dir: &Path, late: &Path, sets: &[String]) -> std::process::Output {
    let mut cmd = lab();
    cmd.arg("run").arg(dir.join("late.sql")).arg("--quiet");
    for s in [
        "lab.source.batch-size=1",
        "lab.clock=deterministic",
        "pipeline.auto-watermark-interval=0 ms",
    ] {
        cmd.arg("--set").arg(s);
    }
    for s in sets {
        cmd.arg("--set").arg(s);
    }
    cmd.arg("--late").arg(late).output().unwrap()
}

fn body(path: &Path) -> (String, Vec<String>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines().map(str::to_string);
    let header = lines.next().unwrap();
    let mut rows: Vec<String> = lines.collect();
    rows.sort();
    (header, rows)
}

#[test]
fn the_late_file_holds_exactly_the_dropped_records() {
    let (tumble, session) = expected();
    assert!(
        tumble.len() >= 10 && session.len() >= 10,
        "the input has late records"
    );
    let dir = tempfile::tempdir().unwrap();
    write_input(dir.path());
    for phase in ["ONE_PHASE", "TWO_PHASE"] {
        for backend in ["hashmap", "rocksdb"] {
            for p in ["1", "4"] {
                let sets = [
                    format!("table.optimizer.agg-phase-strategy={phase}"),
                    format!("state.backend.type={backend}"),
                    format!("parallelism.default={p}"),
                ];
                let late = dir.path().join(format!("late-{phase}-{backend}-{p}.csv"));
                let o = run(dir.path(), &late, &sets);
                let stdout = String::from_utf8_lossy(&o.stdout);
                assert_eq!(
                    o.status.code(),
                    Some(0),
                    "{sets:?}: {}",
                    String::from_utf8_lossy(&o.stderr)
                );
                let file = |sink: &str| {
                    dir.path()
                        .join(format!("late-{phase}-{backend}-{p}-{sink}.csv"))
                };
                // The window aggregate's input, as its Calc makes it: the
                // group key, the calls' arguments (none: COUNT(*)), the time.
                let (header, rows) = body(&file("tumble_out"));
                assert_eq!(header, "k,ts", "{sets:?}");
                assert_eq!(rows, tumble, "{sets:?}");
                let (header, rows) = body(&file("session_out"));
                assert_eq!(header, "k,ts", "{sets:?}");
                assert_eq!(rows, session, "{sets:?}");
                // One phase, the operator counts exactly these records.
                if phase == "ONE_PHASE" {
                    let counts: Vec<u64> = stdout
                        .lines()
                        .filter_map(|l| l.trim().strip_prefix("numLateRecordsDropped "))
                        .map(|n| n.trim().parse().unwrap())
                        .collect();
                    assert_eq!(counts, [tumble.len() as u64, session.len() as u64]);
                }
            }
        }
    }
}

#[test]
fn a_late_file_that_cannot_be_written_fails_the_execution() {
    let dir = tempfile::tempdir().unwrap();
    write_input(dir.path());
    std::fs::write(dir.path().join("afile"), "").unwrap();
    let o = run(dir.path(), &dir.path().join("afile").join("late.csv"), &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("late records of sink"), "{stderr}");
    // A device cannot take one file per sink: refused before running.
    let o = run(dir.path(), Path::new("/dev/full"), &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--late /dev/full"), "{stderr}");
    // Nothing looks complete, no temporary is left.
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["afile", "ev.csv", "late.sql"]);
}

#[test]
fn late_is_refused_on_the_flink_engine() {
    let dir = tempfile::tempdir().unwrap();
    write_input(dir.path());
    let o = lab()
        .arg("run")
        .arg(dir.path().join("late.sql"))
        .args(["--engine", "flink", "--late"])
        .arg(dir.path().join("late.csv"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--late"));
}

/// A window deduplication drops by the same rule: its late file holds the
/// window TVF's rows whose window had fired, the TUMBLE aggregate's late
/// records with their window columns.
#[test]
fn the_late_file_of_a_window_deduplication() {
    let (tumble, _) = expected();
    let dir = tempfile::tempdir().unwrap();
    write_input(dir.path());
    let script = SCRIPT
        .split("CREATE TABLE tumble_out")
        .next()
        .unwrap()
        .to_string()
        + "CREATE TABLE last_out (k INT, ts TIMESTAMP(3), ws TIMESTAMP(3), we TIMESTAMP(3))
  WITH ('connector' = 'blackhole');
INSERT INTO last_out
SELECT k, ts, window_start, window_end FROM (
  SELECT k, ts, window_start, window_end,
    ROW_NUMBER() OVER (PARTITION BY k, window_start, window_end ORDER BY ts DESC) AS rn
  FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))
) WHERE rn = 1;
";
    std::fs::write(dir.path().join("late.sql"), script).unwrap();
    for backend in ["hashmap", "rocksdb"] {
        for p in ["1", "4"] {
            let sets = [
                format!("state.backend.type={backend}"),
                format!("parallelism.default={p}"),
            ];
            let late = dir.path().join(format!("late-{backend}-{p}.csv"));
            let o = run(dir.path(), &late, &sets);
            assert_eq!(
                o.status.code(),
                Some(0),
                "{sets:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let (header, rows) = body(&late);
            assert_eq!(header, "k,ts,window_start,window_end", "{sets:?}");
            let records: Vec<String> = rows
                .iter()
                .map(|r| r.splitn(3, ',').take(2).collect::<Vec<_>>().join(","))
                .collect();
            assert_eq!(records, tumble, "{sets:?}");
            let counts: Vec<u64> = String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter_map(|l| l.trim().strip_prefix("numLateRecordsDropped "))
                .map(|n| n.trim().parse().unwrap())
                .collect();
            assert_eq!(counts, [tumble.len() as u64]);
        }
    }
}

/// A window Top-N over a window TVF drops by the same rule: its late file
/// holds the TVF's rows whose window had fired, the TUMBLE aggregate's late
/// records with their window columns.
#[test]
fn the_late_file_of_a_window_top_n() {
    let (tumble, _) = expected();
    let dir = tempfile::tempdir().unwrap();
    write_input(dir.path());
    let script = SCRIPT
        .split("CREATE TABLE tumble_out")
        .next()
        .unwrap()
        .to_string()
        + "CREATE TABLE top_out (k INT, ts TIMESTAMP(3), ws TIMESTAMP(3), we TIMESTAMP(3), rn BIGINT)
  WITH ('connector' = 'blackhole');
INSERT INTO top_out
SELECT * FROM (
  SELECT k, ts, window_start, window_end,
    ROW_NUMBER() OVER (PARTITION BY k, window_start, window_end ORDER BY ts DESC) AS rn
  FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))
) WHERE rn <= 2;
";
    std::fs::write(dir.path().join("late.sql"), script).unwrap();
    for backend in ["hashmap", "rocksdb"] {
        for p in ["1", "4"] {
            let sets = [
                format!("state.backend.type={backend}"),
                format!("parallelism.default={p}"),
            ];
            let late = dir.path().join(format!("late-{backend}-{p}.csv"));
            let o = run(dir.path(), &late, &sets);
            assert_eq!(
                o.status.code(),
                Some(0),
                "{sets:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let (header, rows) = body(&late);
            assert_eq!(header, "k,ts,window_start,window_end", "{sets:?}");
            let records: Vec<String> = rows
                .iter()
                .map(|r| r.splitn(3, ',').take(2).collect::<Vec<_>>().join(","))
                .collect();
            assert_eq!(records, tumble, "{sets:?}");
            let counts: Vec<u64> = String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter_map(|l| l.trim().strip_prefix("numLateRecordsDropped "))
                .map(|n| n.trim().parse().unwrap())
                .collect();
            assert_eq!(counts, [tumble.len() as u64]);
        }
    }
}

#[test]
fn an_insert_without_an_operator_that_drops_late_records_writes_no_late_file() {
    let dir = tempfile::tempdir().unwrap();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    for f in [
        "interval_join.sql",
        "interval_left.csv",
        "interval_right.csv",
    ] {
        std::fs::copy(examples.join(f), dir.path().join(f)).unwrap();
    }
    let late = dir.path().join("late.csv");
    let o = lab()
        .current_dir(dir.path())
        .args(["run", "interval_join.sql", "--late"])
        .arg(&late)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        stdout.contains("no late records file for joined"),
        "{stdout}"
    );
    assert!(!late.exists(), "a late file was written");
}

/// A legacy group window (`GROUP BY k, TUMBLE(ts, ...)`) drops a record
/// when the watermark it meets has passed its window's cleanup time (its
/// end - 1 + the allowed lateness): its late file holds exactly those,
/// without lateness the window TVF's late records, and with 5 s of
/// lateness and late firings fewer of them.
#[test]
fn the_late_file_of_a_group_window() {
    let late_by = |lateness: i64| {
        let (mut wm, mut max) = (i64::MIN, i64::MIN);
        let mut late = Vec::new();
        for (k, _, t) in rows() {
            let end = t - t.rem_euclid(10_000) + 10_000;
            if wm >= end - 1 + lateness {
                late.push(format!("{k},{}", timestamp(t)));
            }
            max = max.max(t);
            wm = max - 1000;
        }
        late.sort();
        late
    };
    assert_eq!(late_by(0), expected().0);
    assert!(late_by(5000).len() < late_by(0).len() && !late_by(5000).is_empty());
    let dir = tempfile::tempdir().unwrap();
    write_input(dir.path());
    let script = SCRIPT
        .split("CREATE TABLE session_out")
        .next()
        .unwrap()
        .to_string()
        + "INSERT INTO tumble_out
SELECT k, TUMBLE_START(ts, INTERVAL '10' SECOND), TUMBLE_END(ts, INTERVAL '10' SECOND), COUNT(*)
FROM ev
GROUP BY k, TUMBLE(ts, INTERVAL '10' SECOND);
";
    std::fs::write(dir.path().join("late.sql"), script).unwrap();
    for (lateness, late_fire) in [(0, false), (5000, true)] {
        for backend in ["hashmap", "rocksdb"] {
            for p in ["1", "4"] {
                let sets = [
                    format!("state.backend.type={backend}"),
                    format!("parallelism.default={p}"),
                    format!("table.exec.emit.allow-lateness={lateness} ms"),
                    format!("table.exec.emit.late-fire.enabled={late_fire}"),
                ];
                let late = dir
                    .path()
                    .join(format!("late-{lateness}-{backend}-{p}.csv"));
                let o = run(dir.path(), &late, &sets);
                assert_eq!(
                    o.status.code(),
                    Some(0),
                    "{sets:?}: {}",
                    String::from_utf8_lossy(&o.stderr)
                );
                let (header, rows) = body(&late);
                assert_eq!(header, "k,ts", "{sets:?}");
                assert_eq!(rows, late_by(lateness), "{sets:?}");
                let counts: Vec<u64> = String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .filter_map(|l| l.trim().strip_prefix("numLateRecordsDropped "))
                    .map(|n| n.trim().parse().unwrap())
                    .collect();
                assert_eq!(counts, [rows.len() as u64], "{sets:?}");
            }
        }
    }
}
