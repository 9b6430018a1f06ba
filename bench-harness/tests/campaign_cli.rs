//! `lab campaign`, `lab plot` and `lab tune` from the outside, on tiny
//! datagen workloads: results, charts, index, resume.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn lab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lab"))
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(cmd: &mut Command) -> Out {
    let o = cmd.output().expect("lab runs");
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

const SCRIPT: &str = "-- rows: ${rows} in a comment is left alone
CREATE TABLE src (k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '${rows}',
  'fields.k.kind' = 'random',
  'fields.k.min' = '1',
  'fields.k.max' = '20',
  'fields.k.distribution' = 'zipf',
  'fields.k.zipf-exponent' = '${skew}',
  'fields.v.min' = '1',
  'fields.v.max' = '9',
  'seed' = '1'
);
CREATE TABLE out (k BIGINT, n BIGINT, s BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k;
";

const SPEC: &str = r#"name = "tiny"
script = "sql/tiny.sql"
description = "A tiny campaign for tests."
repeats = 2

[variants.p1]
"parallelism.default" = 1

[variants.p2]
parallelism.default = 2

[sweep]
rows = [300]
skew = [0.5, 1.5]

[quick]
sweep = { skew = [1.0] }

[[chart]]
title = "Throughput vs skew"
x = "skew"
y = "throughput_rows_per_s"
log_y = true

[[chart]]
title = "State accesses vs skew"
x = "skew"
y = "state_accesses"
"#;

/// A temp dir with `spec.toml` (the spec) and `sql/tiny.sql`.
fn setup(spec: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("sql")).unwrap();
    std::fs::write(dir.path().join("sql/tiny.sql"), SCRIPT).unwrap();
    std::fs::write(dir.path().join("c.toml"), spec).unwrap();
    dir
}

fn campaign(dir: &Path, out: &Path, extra: &[&str]) -> Out {
    run(lab()
        .current_dir(dir)
        .arg("campaign")
        .arg("c.toml")
        .arg("--out")
        .arg(out)
        .arg("--quiet")
        .args(extra))
}

fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header = r.headers().unwrap().iter().map(str::to_string).collect();
    let rows = r
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect();
    (header, rows)
}

/// (point, variant, repeat) of every row.
fn run_keys(header: &[String], rows: &[Vec<String>]) -> Vec<(String, String, String)> {
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    let (p, v, r) = (col("point"), col("variant"), col("repeat"));
    rows.iter()
        .map(|row| (row[p].clone(), row[v].clone(), row[r].clone()))
        .collect()
}

#[test]
fn a_campaign_writes_results_charts_and_index_and_plot_redraws_them() {
    let dir = setup(SPEC);
    let out = dir.path().join("report");
    let o = campaign(dir.path(), &out, &[]);
    assert_eq!(o.code, 0, "stderr: {}", o.stderr);
    assert!(
        o.stdout
            .contains("2 point(s) × 2 variant(s) × 2 repeat(s) = 8 runs"),
        "{}",
        o.stdout
    );

    // results.csv: one row per point, variant, repeat (one sink), interleaved.
    assert!(!out.join("results.csv.partial").exists());
    let (header, rows) = read_csv(&out.join("results.csv"));
    for c in [
        "campaign",
        "point",
        "variant",
        "repeat",
        "sink",
        "rows",
        "skew",
        "throughput_rows_per_s",
        "hottest_subtask_rows_per_s",
        "wall_ms",
        "source_wait_ms",
        "sink_ms",
        "state_entries",
        "state_bytes",
        "state_physical_bytes",
        "state_reads",
        "state_writes",
        "state_accesses",
        "records_shuffled",
        "hotspot_factor",
        "latency_p50_ms",
        "latency_p99_ms",
        "changelog_rows",
        "changelog_insert",
        "changelog_update_before",
        "changelog_update_after",
        "changelog_delete",
        "input_rows",
        "peak_rss_kb",
        "cfg:parallelism.default",
        "cfg:state.backend.type",
        "git_revision",
        "machine_cores",
        "machine_model",
        "engine",
        "flink_checkpointed_state_bytes",
        "flink_taskmanagers",
    ] {
        assert!(header.iter().any(|h| h == c), "no column {c}: {header:?}");
    }
    let keys = run_keys(&header, &rows);
    let expected: Vec<(String, String, String)> = [
        ("1", "p1", "1"),
        ("1", "p2", "1"),
        ("1", "p1", "2"),
        ("1", "p2", "2"),
        ("2", "p1", "1"),
        ("2", "p2", "1"),
        ("2", "p1", "2"),
        ("2", "p2", "2"),
    ]
    .iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    .collect();
    assert_eq!(keys, expected);
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    for row in &rows {
        assert_eq!(row[col("campaign")], "tiny");
        assert_eq!(row[col("sink")], "out");
        assert_eq!(row[col("input_rows")], "300");
        assert_eq!(row[col("rows")], "300");
        // Every record is one read and one write of the group's accumulator.
        assert_eq!(row[col("state_accesses")], "600");
        assert_eq!(
            row[col("state_physical_bytes")],
            "",
            "heap has no physical bytes"
        );
        let p = if row[col("variant")] == "p1" {
            "1"
        } else {
            "2"
        };
        assert_eq!(row[col("cfg:parallelism.default")], p);
        assert_eq!(row[col("cfg:state.backend.type")], "hashmap");
    }
    assert_eq!(rows[0][col("skew")], "0.5");
    assert_eq!(rows[4][col("skew")], "1.5");

    // Charts and index.
    for slug in ["throughput-vs-skew", "state-accesses-vs-skew"] {
        let png = std::fs::read(out.join(format!("{slug}.png"))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let svg = std::fs::read_to_string(out.join(format!("{slug}.svg"))).unwrap();
        assert!(svg.contains("<svg"), "{slug}.svg");
    }
    let index = std::fs::read_to_string(out.join("index.md")).unwrap();
    assert!(index.contains("# Campaign `tiny`"), "{index}");
    assert!(index.contains("A tiny campaign for tests."), "{index}");
    assert!(index.contains("lab campaign c.toml --out"), "{index}");
    assert!(
        index.contains("![Throughput vs skew](throughput-vs-skew.png)"),
        "{index}"
    );
    assert!(index.contains("### Point 2: rows=300, skew=1.5"), "{index}");
    assert!(
        index.contains("| state accesses (accesses) | 600 | 600; 1.00× |"),
        "{index}"
    );
    assert!(index.contains("- machine: "), "{index}");
    assert!(index.contains("- git revision: `"), "{index}");
    assert_eq!(
        std::fs::read_to_string(out.join("spec.toml")).unwrap(),
        SPEC,
        "the spec is saved verbatim"
    );

    // lab plot redraws byte for byte.
    let before: HashMap<PathBuf, Vec<u8>> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
        .collect();
    for p in before.keys() {
        if p.extension()
            .is_some_and(|e| e == "svg" || e == "png" || e == "md")
        {
            std::fs::remove_file(p).unwrap();
        }
    }
    let o = run(lab().arg("plot").arg(&out));
    assert_eq!(o.code, 0, "stderr: {}", o.stderr);
    for (p, bytes) in &before {
        let now = std::fs::read(p).unwrap_or_else(|_| panic!("{} redrawn", p.display()));
        assert!(now == *bytes, "{} differs after lab plot", p.display());
    }
}

#[test]
fn a_dimension_series_keeps_variants_apart() {
    // Two variants, lines per `rows`: each variant keeps its own lines
    // (their runs are not pooled into one median).
    let spec = SPEC.replace("rows = [300]", "rows = [300, 600]").replace(
        "y = \"state_accesses\"\n",
        "y = \"state_accesses\"\nseries = \"rows\"\n",
    );
    let dir = setup(&spec);
    let out = dir.path().join("report");
    let o = campaign(dir.path(), &out, &[]);
    assert_eq!(o.code, 0, "stderr: {}", o.stderr);
    let svg = std::fs::read_to_string(out.join("state-accesses-vs-skew.svg")).unwrap();
    for line in [
        "p1, rows=300",
        "p2, rows=300",
        "p1, rows=600",
        "p2, rows=600",
    ] {
        assert!(svg.contains(line), "no line {line} in the legend");
    }
}

#[test]
fn quick_uses_the_quick_values_and_one_repeat() {
    let dir = setup(SPEC);
    let out = dir.path().join("q");
    let o = campaign(dir.path(), &out, &["--quick"]);
    assert_eq!(o.code, 0, "stderr: {}", o.stderr);
    let (header, rows) = read_csv(&out.join("results.csv"));
    assert_eq!(rows.len(), 2);
    let skew = header.iter().position(|h| h == "skew").unwrap();
    assert!(rows.iter().all(|r| r[skew] == "1.0"));
    let index = std::fs::read_to_string(out.join("index.md")).unwrap();
    assert!(index.contains("quick"), "{index}");
}

#[test]
fn the_default_report_directory_is_reports_name() {
    let dir = setup(SPEC);
    let o = run(lab()
        .current_dir(dir.path())
        .args(["campaign", "c.toml", "--quick", "--quiet"]));
    assert_eq!(o.code, 0, "stderr: {}", o.stderr);
    assert!(dir.path().join("reports/tiny/results.csv").exists());
    assert!(dir.path().join("reports/tiny/index.md").exists());
}

#[test]
fn resume_runs_only_what_is_missing() {
    let dir = setup(SPEC);
    let full = dir.path().join("full");
    let o = campaign(dir.path(), &full, &[]);
    assert_eq!(o.code, 0, "stderr: {}", o.stderr);
    let text = std::fs::read_to_string(full.join("results.csv")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 9);

    // An interrupted run: the header, three runs (point 1 repeat 1 p1, p2;
    // point 2 repeat 1 p1) and a row cut short without its newline.
    let out = dir.path().join("resumed");
    std::fs::create_dir_all(&out).unwrap();
    let kept = [lines[1], lines[2], lines[5]];
    let partial = format!(
        "{}\n{}\n{}\n{}\n{}",
        lines[0],
        kept[0],
        kept[1],
        kept[2],
        &lines[6][..lines[6].len() / 2]
    );
    std::fs::write(out.join("results.csv.partial"), partial).unwrap();
    let o = campaign(dir.path(), &out, &["--resume"]);
    assert_eq!(o.code, 0, "stderr: {}", o.stderr);
    assert!(o.stdout.contains("(3 done, 5 to run)"), "{}", o.stdout);
    assert!(!out.join("results.csv.partial").exists());
    let (header, rows) = read_csv(&out.join("results.csv"));
    let mut keys = run_keys(&header, &rows);
    assert_eq!(keys.len(), 8);
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 8, "every (point, variant, repeat) exactly once");
    // The kept rows are the old ones, untouched (they were not run again).
    let text = std::fs::read_to_string(out.join("results.csv")).unwrap();
    for k in kept {
        assert!(text.lines().any(|l| l == k), "kept row {k}");
    }
    assert!(out.join("index.md").exists());

    // A partial file of another spec is refused, and nothing runs.
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("results.csv.partial"), "a,b,c\n1,2,3\n").unwrap();
    let o = campaign(dir.path(), &other, &["--resume"]);
    assert_eq!(o.code, 2, "stderr: {}", o.stderr);
    assert!(o.stderr.contains("cannot resume"), "{}", o.stderr);
    assert!(!other.join("results.csv").exists());
}

#[test]
fn plot_without_results_says_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(lab().arg("plot").arg(dir.path()));
    assert_eq!(o.code, 2, "stderr: {}", o.stderr);
    assert!(o.stderr.contains("spec.toml"), "{}", o.stderr);
}

#[test]
fn tune_compares_configurations() {
    let dir = tempfile::tempdir().unwrap();
    let sql = SCRIPT.replace("${rows}", "500").replace("${skew}", "1.0");
    std::fs::write(dir.path().join("t.sql"), sql).unwrap();
    let o = run(lab()
        .arg("tune")
        .arg(dir.path().join("t.sql"))
        .args(["--try", "parallelism.default=1,2"])
        .args(["--try", "table.exec.mini-batch.enabled=false"])
        .args(["--repeats", "1", "--quiet"]));
    assert_eq!(o.code, 0, "stderr: {}", o.stderr);
    for needle in [
        "INSERT INTO out",
        "throughput",
        "state size",
        "state accesses",
        "records shuffled",
        "p99 latency",
        "changelog rows",
        "parallelism.default=1, table.exec.mini-batch.enabled=false",
        "parallelism.default=2, table.exec.mini-batch.enabled=false",
        "1k (1.00×)",
    ] {
        assert!(o.stdout.contains(needle), "{needle}: {}", o.stdout);
    }
    let o = run(lab()
        .arg("tune")
        .arg(dir.path().join("t.sql"))
        .args(["--try", "parallelism.defualt=1,2"]));
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("did you mean 'parallelism.default'"),
        "{}",
        o.stderr
    );
}
