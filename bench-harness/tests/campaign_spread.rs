//! Spread, runs too short to time, kept history, baselines and the chart
//! fixes, from the outside, on tiny datagen workloads (a few hundred rows:
//! every run is deliberately too short to time).

use std::path::Path;
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

const SCRIPT: &str = "CREATE TABLE src (k BIGINT, v BIGINT) WITH (
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
script = "t.sql"
repeats = 3

[variants.p1]
"parallelism.default" = 1

[variants.p2]
"parallelism.default" = 2

[sweep]
rows = [200, 400]
skew = [0.5, 1.5]

[quick]
repeats = 2
sweep = { rows = [200] }

[[chart]]
title = "Throughput vs rows"
x = "rows"
y = "throughput_rows_per_s"
x_label = "input rows (count)"
y_label = "rows per second"

[[chart]]
title = "Deletes vs skew"
x = "skew"
y = "changelog_delete"
log_y = true
"#;

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.sql"), SCRIPT).unwrap();
    std::fs::write(dir.path().join("c.toml"), SPEC).unwrap();
    dir
}

fn campaign(dir: &Path, extra: &[&str]) -> Out {
    run(lab()
        .current_dir(dir)
        .args(["campaign", "c.toml", "--out", "report", "--quiet"])
        .args(extra))
}

fn texts(svg: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(svg).unwrap();
    text.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim().to_string())
        })
        .collect()
}

#[test]
fn every_repeat_is_kept_and_every_output_shows_spread() {
    let dir = setup();
    let o = campaign(dir.path(), &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let report = dir.path().join("report");

    // results.csv: one row per point, variant and repeat.
    let mut r = csv::Reader::from_path(report.join("results.csv")).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    let repeat = header.iter().position(|h| h == "repeat").unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 4 * 2 * 3);
    for rep in ["1", "2", "3"] {
        assert_eq!(rows.iter().filter(|r| &r[repeat] == rep).count(), 8);
    }

    // The command's summary: median [min–max] and ratios with intervals.
    assert!(
        o.stdout
            .contains("throughput (rows/s), sink out: median [min–max] of 3 run(s)"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains("point 4: rows=400, skew=1.5"),
        "{}",
        o.stdout
    );
    let p2 = o
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("p2 "))
        .unwrap();
    assert!(
        p2.contains('[') && p2.contains('–') && p2.contains('×'),
        "{p2}"
    );

    // index.md: the same cells.
    let index = std::fs::read_to_string(report.join("index.md")).unwrap();
    assert!(
        index.contains("median over the repeats [min–max]"),
        "{index}"
    );
    assert!(index.contains("95% bootstrap interval"), "{index}");
    let row = index
        .lines()
        .find(|l| l.starts_with("| throughput (rows/s) |"))
        .unwrap();
    assert!(row.contains("–") && row.contains("×"), "{row}");

    // The chart draws the spread and says so; its labels are the spec's.
    let svg = report.join("throughput-vs-rows.svg");
    let t = texts(&svg);
    assert!(t.iter().any(|x| x == "bars: min–max of the runs"), "{t:?}");
    assert!(t.iter().any(|x| x == "median of 3 runs per point"), "{t:?}");
    assert!(t.iter().any(|x| x == "input rows (count)"), "{t:?}");
    assert!(t.iter().any(|x| x == "rows per second"), "{t:?}");
    assert!(t.iter().any(|x| x == "tiny: Throughput vs rows"), "{t:?}");
    // x is a whole-number dimension: whole-number ticks only.
    assert!(
        !t.iter()
            .any(|x| x.contains('.') && x.parse::<f64>().is_ok()),
        "{t:?}"
    );
}

#[test]
fn runs_too_short_to_time_are_flagged() {
    let dir = setup();
    let o = campaign(dir.path(), &["--quick"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let report = dir.path().join("report");
    // A few hundred rows take well under 50 ms.
    assert!(o.stdout.contains("too short to time"), "{}", o.stdout);
    assert!(o.stdout.contains('⚠'), "{}", o.stdout);
    let index = std::fs::read_to_string(report.join("index.md")).unwrap();
    assert!(
        index.contains("runs were too short to time** (under 50 ms of wall time"),
        "{index}"
    );
    let row = index
        .lines()
        .find(|l| l.starts_with("| throughput (rows/s) |"))
        .unwrap();
    assert!(row.contains('⚠'), "{row}");
    let t = texts(&report.join("throughput-vs-rows.svg"));
    assert!(
        t.iter().any(|x| x == "hollow: runs too short to time"),
        "{t:?}"
    );
    assert!(
        t.iter().any(|x| x == "tiny: Throughput vs rows (quick)"),
        "{t:?}"
    );

    // `lab run` says it too.
    let sql = SCRIPT.replace("${rows}", "100").replace("${skew}", "1.0");
    std::fs::write(dir.path().join("plain.sql"), sql).unwrap();
    let o = run(lab()
        .arg("run")
        .arg(dir.path().join("plain.sql"))
        .arg("--quiet"));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("too short to time: under"),
        "{}",
        o.stdout
    );
}

#[test]
fn an_all_zero_log_chart_says_no_data() {
    let dir = setup();
    let o = campaign(dir.path(), &["--quick"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    // An insert-only aggregate emits no -D rows: every value is 0.
    let t = texts(&dir.path().join("report/deletes-vs-skew.svg"));
    assert!(t.iter().any(|x| x == "no data"), "{t:?}");
    assert!(o.stderr.contains("no data"), "{}", o.stderr);
}

#[test]
fn a_rerun_keeps_the_earlier_results() {
    let dir = setup();
    let report = dir.path().join("report");
    let o = campaign(dir.path(), &["--quick"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let first = std::fs::read_to_string(report.join("results.csv")).unwrap();
    let o = campaign(dir.path(), &["--quick"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("the previous run's results are kept in"),
        "{}",
        o.stdout
    );
    let kept: Vec<_> = std::fs::read_dir(report.join("history"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(
        std::fs::read_to_string(kept[0].join("results.csv")).unwrap(),
        first
    );
    for f in [
        "spec.toml",
        "run.toml",
        "index.md",
        "throughput-vs-rows.png",
    ] {
        assert!(kept[0].join(f).exists(), "{f} kept");
    }
    // Each kept run is a report of its own.
    let o = run(lab().arg("plot").arg(&kept[0]));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(report.join("results.csv").exists());
}

#[test]
fn baselines_print_a_change_with_its_interval_per_point() {
    let dir = setup();
    let o = campaign(dir.path(), &["--baseline", "a"]);
    assert_eq!(o.code, 2, "a missing baseline is refused first");
    assert!(o.stderr.contains("no baseline 'a'"), "{}", o.stderr);
    assert!(!dir.path().join("report/results.csv").exists());

    let o = campaign(dir.path(), &["--save-baseline", "a"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("saved this run as baseline 'a'"),
        "{}",
        o.stdout
    );
    assert!(dir.path().join("report/baselines/a/results.csv").exists());

    let o = campaign(dir.path(), &["--baseline", "a"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let out = &o.stdout;
    assert!(out.contains("change against baseline 'a'"), "{out}");
    for point in ["point 1: rows=200, skew=0.5", "point 4: rows=400, skew=1.5"] {
        let block = out
            .split(point)
            .nth(2)
            .unwrap_or_else(|| panic!("{point}: {out}"));
        let first = block.lines().nth(1).unwrap();
        assert!(first.contains("change: "), "{first}");
    }
    // Timings: an interval; counters: exact, unchanged.
    assert!(
        out.lines().any(|l| l.contains("throughput (rows/s)")
            && l.contains("change: ")
            && l.contains(", ")
            && l.contains('[')),
        "{out}"
    );
    assert!(
        out.lines().any(|l| l.contains("-D rows (rows)")
            && l.contains("change: 0%")
            && l.contains("no change detected")),
        "{out}"
    );
    let index = std::fs::read_to_string(dir.path().join("report/index.md")).unwrap();
    assert!(index.contains("## Change against baseline `a`"), "{index}");

    let o = campaign(dir.path(), &["--baseline", "b"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("saved baselines: a"), "{}", o.stderr);
}
