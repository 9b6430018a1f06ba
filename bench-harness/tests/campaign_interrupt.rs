//! A campaign killed mid-run leaves no results file that looks complete,
//! and `--resume` finishes it with every (point, variant, repeat) once.

use std::collections::HashSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SCRIPT: &str = "CREATE TABLE src (k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '${rows}',
  'fields.k.min' = '1', 'fields.k.max' = '2000', 'fields.v.min' = '1', 'fields.v.max' = '9', 'seed' = '${seed}');
CREATE TABLE out (k BIGINT, n BIGINT, s BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k;
";

const SPEC: &str = r#"name = "interrupted"
script = "s.sql"
repeats = 2

[variants.heap]
"state.backend.type" = "hashmap"

[variants.p2]
"parallelism.default" = 2

[sweep]
rows = [300000]
seed = [1, 2, 3, 4, 5, 6, 7, 8]

[[chart]]
title = "Throughput"
x = "seed"
y = "throughput_rows_per_s"
"#;

fn data_lines(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .map(|s| s.lines().count().saturating_sub(1))
        .unwrap_or(0)
}

#[test]
fn a_killed_campaign_resumes_with_every_run_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.sql"), SCRIPT).unwrap();
    std::fs::write(dir.path().join("c.toml"), SPEC).unwrap();
    let out = dir.path().join("report");
    let partial = out.join("results.csv.partial");
    let complete = out.join("results.csv");

    let mut child = Command::new(env!("CARGO_BIN_EXE_lab"))
        .current_dir(dir.path())
        .args(["campaign", "c.toml", "--quiet", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while data_lines(&partial) < 3 && start.elapsed() < Duration::from_secs(120) {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let finished_already = child.try_wait().unwrap().is_some();
    child.kill().ok();
    child.wait().unwrap();
    assert!(
        !finished_already,
        "the campaign should still be running when killed"
    );
    assert!(
        !complete.exists(),
        "an interrupted run must not leave results.csv"
    );
    assert!(data_lines(&partial) >= 3 && data_lines(&partial) < 32);

    let o = Command::new(env!("CARGO_BIN_EXE_lab"))
        .current_dir(dir.path())
        .args(["campaign", "c.toml", "--quiet", "--resume", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(complete.exists() && !partial.exists());

    let mut r = csv::Reader::from_path(&complete).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    let (p, v, rep) = (col("point"), col("variant"), col("repeat"));
    let mut seen = HashSet::new();
    let mut n = 0;
    for row in r.records() {
        let row = row.unwrap();
        assert!(
            seen.insert((row[p].to_string(), row[v].to_string(), row[rep].to_string())),
            "a run appears twice"
        );
        n += 1;
    }
    assert_eq!(n, 8 * 2 * 2, "every point x variant x repeat once");
}
