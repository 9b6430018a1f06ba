//! `--param name=value` on `run`, `explain` and `tune`; `lab tune`'s
//! spread, verdicts, width and baselines; help texts.

use std::path::{Path, PathBuf};
use std::process::Command;

fn lab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lab"))
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples")
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

const PARAMS: &[&str] = &[
    "--param",
    "rows=2000",
    "--param",
    "keys=50",
    "--param",
    "skew=1.0",
];

#[test]
fn run_fills_templates_from_params() {
    let o = run(lab()
        .arg("run")
        .arg(examples().join("demo_agg.sql"))
        .arg("--quiet")
        .args(PARAMS));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("input rows        2k"), "{}", o.stdout);
}

#[test]
fn an_unfilled_template_names_the_parameter_and_the_flag() {
    let o = run(lab()
        .arg("run")
        .arg(examples().join("demo_agg.sql"))
        .arg("--quiet"));
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains("'${rows}' is a template parameter"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr
            .contains("pass --param rows=... --param keys=... --param skew=..."),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("demo_agg.sql:12:"), "{}", o.stderr);
    assert!(!o.stderr.contains("panicked"));

    // Half filled: the missing one is named.
    let o = run(lab()
        .arg("explain")
        .arg(examples().join("demo_agg.sql"))
        .args(["--param", "rows=10", "--param", "keys=5"]));
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("'${skew}'"), "{}", o.stderr);
    assert!(o.stderr.contains("--param skew=..."), "{}", o.stderr);

    // A parameter the script does not have, or a malformed flag.
    let o = run(lab()
        .arg("explain")
        .arg(examples().join("demo_agg.sql"))
        .args(PARAMS)
        .args(["--param", "skw=1"]));
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("--param skw"), "{}", o.stderr);
    let o = run(lab()
        .arg("explain")
        .arg(examples().join("demo_agg.sql"))
        .args(["--param", "rows"]));
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("NAME=VALUE"), "{}", o.stderr);
}

#[test]
fn explain_fills_templates_too() {
    let o = run(lab()
        .arg("explain")
        .arg(examples().join("demo_agg.sql"))
        .args(PARAMS));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("per_key"), "{}", o.stdout);
}

#[test]
fn tune_shows_spread_verdicts_and_fits_100_columns() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(lab()
        .current_dir(dir.path())
        .arg("tune")
        .arg(examples().join("demo_agg.sql"))
        .args(PARAMS)
        .args(["--try", "parallelism.default=1,2"])
        .args(["--try", "table.exec.mini-batch.enabled=false,true"])
        .args(["--set", "table.exec.mini-batch.allow-latency=1s"])
        .args(["--set", "table.exec.mini-batch.size=100"])
        .args(["--repeats", "3", "--quiet"]));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let out = &o.stdout;
    for needle in [
        "4 variant(s) × 3 run(s) each, interleaved, after a warm-up run of each",
        "v4  parallelism.default=2, table.exec.mini-batch.enabled=true",
        "throughput (rows/s): median [min–max]; ratio to v1 [95% interval]",
        "p99 latency: median [min–max]",
        "counters (one value: the same in every run; ratio to v1):",
        "too short to time",
    ] {
        assert!(out.contains(needle), "{needle}: {out}");
    }
    // Every timing of v2..v4 has a ratio with its interval and a verdict.
    let verdicts = out
        .lines()
        .filter(|l| {
            l.contains("beyond noise")
                || l.contains("no difference")
                || l.contains("too few runs to tell")
                || l.contains("cannot tell")
        })
        .count();
    assert_eq!(verdicts, 2 * 3, "{out}");
    let widest = out.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest <= 100, "a line of {widest} columns: {out}");
}

#[test]
fn tune_baselines() {
    let dir = tempfile::tempdir().unwrap();
    let tune = |extra: &[&str]| {
        run(lab()
            .current_dir(dir.path())
            .arg("tune")
            .arg(examples().join("demo_agg.sql"))
            .args(PARAMS)
            .args([
                "--try",
                "parallelism.default=1,2",
                "--repeats",
                "2",
                "--quiet",
            ])
            .args(extra))
    };
    let o = tune(&["--baseline", "a"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("no baseline 'a'"), "{}", o.stderr);
    let o = tune(&["--save-baseline", "a"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("saved this run as baseline 'a'"),
        "{}",
        o.stdout
    );
    assert!(dir
        .path()
        .join("reports/tune/demo_agg/baselines/a.csv")
        .exists());
    let o = tune(&["--baseline", "a"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let out = &o.stdout;
    assert!(out.contains("change against baseline 'a'"), "{out}");
    assert!(
        out.contains("v2 (parallelism.default=2), INSERT INTO per_key"),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.contains("throughput (rows/s)") && l.contains("change: ")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.contains("state accesses") && l.contains("change: 0%")),
        "{out}"
    );
}

#[test]
fn every_subcommand_has_an_example_and_every_argument_a_description() {
    for cmd in [
        "run",
        "explain",
        "campaign",
        "plot",
        "tune",
        "compile-plan",
        "execute-plan",
        "compare",
        "export",
        "flink install",
        "flink start",
        "flink status",
        "flink stop",
    ] {
        let mut args: Vec<&str> = cmd.split(' ').collect();
        args.push("--help");
        let o = run(lab().args(&args));
        assert_eq!(o.code, 0, "{cmd}: {}", o.stderr);
        assert!(
            o.stdout.contains("Example"),
            "{cmd}: no example\n{}",
            o.stdout
        );
        // clap lists an argument without a description as its name alone:
        // nothing after it on its line (short help) and no more indented
        // line below it (long help, used once any value has a description).
        let flags = o.stdout.split("Example").next().unwrap();
        let lines: Vec<&str> = flags.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let t = line.trim();
            let indent = line.len() - line.trim_start().len();
            let described_below = lines.get(i + 1).is_some_and(|next| {
                !next.trim().is_empty() && next.len() - next.trim_start().len() > indent
            });
            // ("- value: ..." lines list a flag's possible values.)
            let bare = (t.starts_with('<') || (t.starts_with('-') && !t.starts_with("- ")))
                && !t.contains("  ")
                && !described_below
                && !t.starts_with("-h")
                && !t.starts_with("-V");
            assert!(!bare, "{cmd}: '{t}' has no description\n{}", o.stdout);
        }
    }
    // One name per flag: --out everywhere (--output still accepted).
    let o = run(lab().args(["compile-plan", "--help"]));
    assert!(o.stdout.contains("--out <FILE>"), "{}", o.stdout);
}
