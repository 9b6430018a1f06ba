//! A campaign killed at any of its steps loses no finished run, and
//! `--resume` completes it with every (point, variant, repeat) once:
//! the kills are made deterministic with `LAB_CRASH_AT` (the process
//! aborts right after the named step, as `kill -9` would end it), plus a
//! real SIGKILL of a campaign holding its report directory's lock.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime};

const SCRIPT: &str = "CREATE TABLE src (k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '${rows}',
  'fields.k.min' = '1', 'fields.k.max' = '50', 'fields.v.min' = '1', 'fields.v.max' = '9',
  'seed' = '${seed}');
CREATE TABLE out (k BIGINT, n BIGINT, s BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k;
";

/// 3 points × 2 variants × 2 repeats = 12 runs.
const SPEC: &str = r#"name = "crashy"
script = "s.sql"
repeats = 2

[variants.p1]
"parallelism.default" = 1

[variants.p2]
"parallelism.default" = 2

[sweep]
rows = [ROWS]
seed = [1, 2, 3]

[[chart]]
title = "Throughput"
x = "seed"
y = "throughput_rows_per_s"

[[chart]]
title = "State accesses"
x = "seed"
y = "state_accesses"
"#;
const RUNS: usize = 12;

struct Lab {
    dir: tempfile::TempDir,
}

impl Lab {
    fn new(rows: u64) -> Lab {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s.sql"), SCRIPT).unwrap();
        std::fs::write(
            dir.path().join("c.toml"),
            SPEC.replace("ROWS", &rows.to_string()),
        )
        .unwrap();
        Lab { dir }
    }

    fn out(&self) -> PathBuf {
        self.dir.path().join("report")
    }

    fn command(&self, crash_at: Option<&str>, extra: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_lab"));
        c.current_dir(self.dir.path())
            .args(["campaign", "c.toml", "--quiet", "--out"])
            .arg(self.out())
            .args(extra)
            .env_remove("LAB_CRASH_AT");
        if let Some(point) = crash_at {
            c.env("LAB_CRASH_AT", point);
        }
        c
    }

    fn campaign(&self, crash_at: Option<&str>, extra: &[&str]) -> Output {
        self.command(crash_at, extra).output().unwrap()
    }

    /// A campaign that must succeed.
    fn ok(&self, extra: &[&str]) -> String {
        let o = self.campaign(None, extra);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// A campaign that must die at `point`.
    fn crash(&self, point: &str, extra: &[&str]) {
        let o = self.campaign(Some(point), extra);
        assert!(
            !o.status.success(),
            "no crash at {point}: {}",
            String::from_utf8_lossy(&o.stdout)
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(&format!("crash point '{point}'")), "{err}");
    }

    fn file(&self, name: &str) -> PathBuf {
        self.out().join(name)
    }
}

/// The data lines of a results file (without the header, and without a
/// last line cut short by a kill).
fn rows(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let whole = &text[..text.rfind('\n').map_or(0, |i| i + 1)];
    whole.lines().skip(1).map(str::to_string).collect()
}

/// Checks `results.csv` holds every run once and nothing else.
fn every_run_once(path: &Path) {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    let (p, v, rep) = (col("point"), col("variant"), col("repeat"));
    let mut seen = HashSet::new();
    for row in r.records() {
        let row = row.unwrap();
        assert!(
            seen.insert((row[p].to_string(), row[v].to_string(), row[rep].to_string())),
            "a run appears twice in {}",
            path.display()
        );
    }
    assert_eq!(seen.len(), RUNS, "every point x variant x repeat once");
}

/// Every file of the report directory (not its folders, nor the hidden
/// lock file) with a digest of its bytes and its modification time.
fn snapshot(dir: &Path) -> Vec<(String, u64, SystemTime)> {
    use std::hash::{Hash, Hasher};
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let mut h = std::collections::hash_map::DefaultHasher::new();
            std::fs::read(e.path()).unwrap().hash(&mut h);
            (name, h.finish(), e.metadata().unwrap().modified().unwrap())
        })
        .collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files
}

#[test]
fn killed_while_running_points_keeps_every_finished_run() {
    let lab = Lab::new(300);
    lab.crash("run:5", &[]);
    let partial = lab.file("results.csv.partial");
    assert!(!lab.file("results.csv").exists());
    let before = rows(&partial);
    assert_eq!(before.len(), 5, "one row per finished run");

    // Killed again after two more runs of the resumed campaign.
    lab.crash("run:2", &["--resume"]);
    let middle = rows(&partial);
    assert_eq!(middle.len(), 7);
    assert_eq!(middle[..5], before[..], "the finished rows are untouched");

    let stdout = lab.ok(&["--resume"]);
    assert!(stdout.contains("(7 done, 5 to run)"), "{stdout}");
    every_run_once(&lab.file("results.csv"));
    let after = rows(&lab.file("results.csv"));
    for row in &middle {
        assert!(after.contains(row), "a finished row was lost: {row}");
    }
    assert!(!partial.exists() && lab.file("index.md").exists());
}

#[test]
fn killed_while_writing_results_csv_resumes_from_the_partial_file() {
    let lab = Lab::new(300);
    lab.crash("finalize", &[]);
    let partial = rows(&lab.file("results.csv.partial"));
    assert_eq!(partial.len(), RUNS);
    assert!(!lab.file("results.csv").exists());

    let stdout = lab.ok(&["--resume"]);
    assert!(stdout.contains("(12 done, 0 to run)"), "{stdout}");
    every_run_once(&lab.file("results.csv"));
    assert_eq!(rows(&lab.file("results.csv")), partial, "not one run again");
}

#[test]
fn killed_after_results_csv_or_while_drawing_only_draws() {
    for point in ["results", "chart"] {
        let lab = Lab::new(300);
        lab.crash(point, &[]);
        assert!(!lab.file("results.csv.partial").exists());
        let finished = std::fs::read(lab.file("results.csv")).unwrap();
        assert!(!lab.file("index.md").exists(), "{point}");

        let stdout = lab.ok(&["--resume"]);
        assert!(stdout.contains("drawing the charts"), "{point}: {stdout}");
        assert!(stdout.contains("point 3: rows=300, seed=3"), "{stdout}");
        assert_eq!(std::fs::read(lab.file("results.csv")).unwrap(), finished);
        every_run_once(&lab.file("results.csv"));
        for f in [
            "index.md",
            "throughput.png",
            "throughput.svg",
            "state-accesses.svg",
        ] {
            assert!(lab.file(f).exists(), "{point}: {f}");
        }
        assert!(!lab.out().join("history").exists(), "nothing was moved");
    }
}

#[test]
fn resume_of_a_finished_campaign_changes_nothing() {
    let lab = Lab::new(300);
    lab.ok(&[]);
    let before = snapshot(&lab.out());
    assert!(before.iter().any(|(n, _, _)| n == "results.csv"));
    std::thread::sleep(Duration::from_millis(20));
    let stdout = lab.ok(&["--resume"]);
    assert!(stdout.contains("nothing to resume"), "{stdout}");
    assert_eq!(snapshot(&lab.out()), before);
    assert!(!lab.out().join("history").exists());

    // Asking for a baseline it was not compared with redraws the report
    // with the change, and runs nothing.
    lab.ok(&["--resume", "--save-baseline", "a"]);
    let stdout = lab.ok(&["--resume", "--baseline", "a"]);
    assert!(stdout.contains("change against baseline 'a'"), "{stdout}");
    let results =
        |s: &[(String, u64, SystemTime)]| s.iter().find(|f| f.0 == "results.csv").unwrap().clone();
    assert_eq!(results(&snapshot(&lab.out())), results(&before));
}

#[test]
fn killed_while_moving_the_previous_run_to_history_loses_nothing() {
    let lab = Lab::new(300);
    lab.ok(&[]);
    let first = std::fs::read(lab.file("results.csv")).unwrap();
    lab.crash("history", &[]);
    // The results move last: they are still in place.
    assert_eq!(std::fs::read(lab.file("results.csv")).unwrap(), first);

    // --resume finishes the move the killed run began, then runs all.
    let stdout = lab.ok(&["--resume"]);
    assert!(
        stdout.contains("the previous run's results are kept in"),
        "{stdout}"
    );
    let kept: Vec<PathBuf> = std::fs::read_dir(lab.out().join("history"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(std::fs::read(kept[0].join("results.csv")).unwrap(), first);
    for f in ["index.md", "spec.toml", "run.toml", "throughput.png"] {
        assert!(kept[0].join(f).exists(), "{f} kept");
    }
    every_run_once(&lab.file("results.csv"));
    assert!(lab.file("index.md").exists());
}

#[test]
fn a_run_without_resume_keeps_an_unfinished_one_in_history() {
    let lab = Lab::new(300);
    lab.crash("run:4", &[]);
    let unfinished = rows(&lab.file("results.csv.partial"));
    let stdout = lab.ok(&[]);
    assert!(stdout.contains("unfinished earlier run"), "{stdout}");
    let kept: Vec<PathBuf> = std::fs::read_dir(lab.out().join("history"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(kept[0].to_string_lossy().ends_with("-unfinished"));
    assert_eq!(rows(&kept[0].join("results.csv.partial")), unfinished);
    every_run_once(&lab.file("results.csv"));
}

#[test]
fn killed_while_replacing_a_baseline_keeps_the_old_one() {
    let lab = Lab::new(300);
    lab.ok(&["--save-baseline", "a"]);
    let saved = std::fs::read(lab.out().join("baselines/a/results.csv")).unwrap();
    lab.crash("baseline", &["--resume", "--save-baseline", "a"]);
    let stdout = lab.ok(&["--resume", "--baseline", "a"]);
    assert!(stdout.contains("change against baseline 'a'"), "{stdout}");
    assert_eq!(
        std::fs::read(lab.out().join("baselines/a/results.csv")).unwrap(),
        saved
    );
}

#[test]
fn a_second_campaign_on_the_same_directory_is_refused_and_a_killed_ones_lock_is_taken_over() {
    // Runs long enough to be caught running.
    let lab = Lab::new(1_000_000);
    let mut first = lab
        .command(None, &[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let partial = lab.file("results.csv.partial");
    let start = Instant::now();
    while rows(&partial).is_empty() && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let running = first.try_wait().unwrap().is_none();

    let second = lab.campaign(None, &["--resume"]);
    let err = String::from_utf8_lossy(&second.stderr).into_owned();
    first.kill().unwrap(); // SIGKILL
    first.wait().unwrap();
    assert!(
        running,
        "the first campaign ended before the second started"
    );
    assert_eq!(second.status.code(), Some(2), "{err}");
    assert!(err.contains("is in use"), "{err}");
    assert!(
        err.contains(&format!("process {} (", first.id())),
        "names the process: {err}"
    );
    let done_by_first = rows(&partial);

    let o = lab.campaign(None, &["--resume"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("took over") && err.contains(&format!("process {}", first.id())),
        "{err}"
    );
    every_run_once(&lab.file("results.csv"));
    let after = rows(&lab.file("results.csv"));
    for row in &done_by_first {
        assert!(after.contains(row), "a finished row was lost");
    }
}

#[test]
fn resume_of_a_finished_campaign_with_a_new_chart_only_redraws() {
    let lab = Lab::new(300);
    lab.ok(&[]);
    let results = std::fs::read(lab.file("results.csv")).unwrap();
    let spec = std::fs::read_to_string(lab.dir.path().join("c.toml")).unwrap();
    std::fs::write(
        lab.dir.path().join("c.toml"),
        format!("{spec}\n[[chart]]\ntitle = \"Wall\"\nx = \"seed\"\ny = \"wall_ms\"\n"),
    )
    .unwrap();
    let stdout = lab.ok(&["--resume"]);
    assert!(stdout.contains("drawing the charts"), "{stdout}");
    assert!(lab.file("wall.svg").exists());
    assert_eq!(std::fs::read(lab.file("results.csv")).unwrap(), results);
}
