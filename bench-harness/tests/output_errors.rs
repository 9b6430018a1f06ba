//! Output errors are errors: a write to stdout, stderr or an output file
//! that fails ends `lab` with a message and a non-zero exit, never a
//! panic, and leaves no temporary file. stdout goes to `/dev/full`; a
//! full disk for files is a file-size limit (`ulimit -f`, with SIGXFSZ
//! ignored, so a write past it fails with EFBIG as a full disk fails with
//! ENOSPC) set by `sh` before it runs `lab`: no root, no tmpfs.
//!
//! The policy for the files of a run that then fails: every file is
//! written whole or not at all, those written before the failure are kept,
//! and the error names them.

use std::fs::File;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn lab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lab"))
}

fn examples() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples"))
}

/// `lab args...` under a file-size limit of `kib` KiB.
fn lab_with_file_limit(kib: u32, dir: &Path, args: &[&str]) -> Output {
    Command::new("sh")
        .current_dir(dir)
        .arg("-c")
        .arg(format!(
            "ulimit -f {kib} && trap '' XFSZ && exec \"$0\" \"$@\""
        ))
        .arg(env!("CARGO_BIN_EXE_lab"))
        .args(args)
        .output()
        .unwrap()
}

fn stdout_full(cmd: &mut Command) -> Output {
    cmd.stdout(File::create("/dev/full").unwrap())
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Exit 1 with the stdout message, and no panic.
fn fails_on_stdout(o: &Output, what: &str) {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{what}: {err}");
    assert!(
        err.contains("cannot write to standard output: No space left on device"),
        "{what}: {err}"
    );
    assert!(!err.contains("panicked"), "{what}: {err}");
}

/// The names in `dir`.
fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    n.sort();
    n
}

const TWO_SINKS: &str = "CREATE TABLE src (k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '3000',
  'fields.k.min' = '1', 'fields.k.max' = '3', 'fields.v.min' = '1', 'fields.v.max' = '1000000');
CREATE TABLE small (k BIGINT, n BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE big (k BIGINT, v BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO small SELECT k, COUNT(*) FROM src GROUP BY k;
INSERT INTO big SELECT k, v FROM src;
";

#[test]
fn stdout_on_a_full_device_is_an_error_for_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let clicks = examples().join("clicks_per_user.sql");
    let o = stdout_full(lab().arg("explain").arg(&clicks));
    fails_on_stdout(&o, "explain");
    let o = stdout_full(lab().arg("--help"));
    fails_on_stdout(&o, "--help");

    // The files come first and are complete; the error says so.
    let changelog = dir.path().join("c.csv");
    let o = stdout_full(
        lab()
            .args(["run", "--quiet"])
            .arg(examples().join("orders_state_ttl.sql"))
            .arg("--changelog")
            .arg(&changelog),
    );
    fails_on_stdout(&o, "run");
    assert!(text(&o.stderr).contains("the output files are complete"));
    let written = std::fs::read_to_string(&changelog).unwrap();
    assert!(written.starts_with("op,") && written.ends_with('\n'));

    // A script's EXPLAIN prints while the run goes on: its failed write
    // is reported with the summary's, not a panic.
    let explaining = dir.path().join("explaining.sql");
    std::fs::write(
        &explaining,
        format!(
            "{}EXPLAIN INSERT INTO small SELECT k, COUNT(*) FROM src GROUP BY k;\n",
            TWO_SINKS
        ),
    )
    .unwrap();
    let o = stdout_full(lab().args(["run", "--quiet"]).arg(&explaining));
    fails_on_stdout(&o, "run with EXPLAIN");

    let plan = dir.path().join("p.json");
    let o = stdout_full(
        lab()
            .arg("compile-plan")
            .arg(examples().join("orders_state_ttl.sql"))
            .arg("--out")
            .arg(&plan),
    );
    fails_on_stdout(&o, "compile-plan");
    assert!(plan.exists());

    let o = stdout_full(lab().arg("tune").arg(&clicks).args([
        "--try",
        "parallelism.default=1,2",
        "--repeats",
        "1",
        "--quiet",
    ]));
    fails_on_stdout(&o, "tune");

    // A campaign says so before it writes anything.
    std::fs::write(dir.path().join("s.sql"), TWO_SINKS).unwrap();
    std::fs::write(
        dir.path().join("c.toml"),
        "name = \"full\"\nscript = \"s.sql\"\nrepeats = 1\n",
    )
    .unwrap();
    let report = dir.path().join("report");
    let o = stdout_full(
        lab()
            .current_dir(dir.path())
            .args(["campaign", "c.toml", "--quiet", "--out"])
            .arg(&report),
    );
    fails_on_stdout(&o, "campaign");
    assert_eq!(names(&report), [".lock"]);

    // With a report to redraw, plot draws it and then fails to say so.
    let o = lab()
        .current_dir(dir.path())
        .args(["campaign", "c.toml", "--quiet", "--out"])
        .arg(&report)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = stdout_full(lab().arg("plot").arg(&report));
    fails_on_stdout(&o, "plot");
}

#[test]
fn stderr_on_a_full_device_does_not_panic() {
    let o = lab()
        .arg("run")
        .arg(examples().join("clicks_per_user.sql"))
        .args(["--set", "parallelism.default=0"])
        .stderr(File::create("/dev/full").unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "the error's own code");
}

#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    let mut child = lab()
        .arg("explain")
        .arg(examples().join("clicks_per_user.sql"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(o.stderr.is_empty(), "{}", text(&o.stderr));
}

#[test]
fn an_output_file_on_a_full_device_is_an_error() {
    // A device is written to, never replaced.
    let o = lab()
        .args(["run", "--quiet"])
        .arg(examples().join("orders_state_ttl.sql"))
        .args(["--changelog", "/dev/full"])
        .output()
        .unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("cannot write '/dev/full': No space left on device"),
        "{err}"
    );
    assert!(
        err.contains("no --changelog or --result file was written"),
        "{err}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = std::fs::metadata("/dev/full").unwrap().file_type();
        assert!(t.is_char_device(), "/dev/full is still the device");
    }
}

#[test]
fn files_written_before_a_failed_one_are_kept_and_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("two.sql"), TWO_SINKS).unwrap();
    std::fs::create_dir(dir.path().join("out")).unwrap();
    // 8 KiB: the small sink's result fits, the big one's 3000 rows do not.
    let o = lab_with_file_limit(
        8,
        dir.path(),
        &["run", "two.sql", "--quiet", "--result", "out/r.csv"],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("cannot write 'out/r-big.csv'"), "{err}");
    assert!(
        err.contains("the output files written before it are complete and kept: out/r-small.csv"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(
        names(&dir.path().join("out")),
        ["r-small.csv"],
        "no temporary file"
    );
    let small = std::fs::read_to_string(dir.path().join("out/r-small.csv")).unwrap();
    assert_eq!(small.lines().count(), 4, "{small}");
    // The summary of every INSERT is printed all the same.
    let out = text(&o.stdout);
    assert!(
        out.contains("INSERT INTO small") && out.contains("INSERT INTO big"),
        "{out}"
    );
}

#[test]
fn compile_plan_to_a_full_disk_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let script = examples().join("tenant_multijoin_10way.sql");
    let o = lab_with_file_limit(
        1,
        dir.path(),
        &["compile-plan", script.to_str().unwrap(), "--out", "p.json"],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("cannot write plan p.json: File too large"),
        "{err}"
    );
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
}

#[test]
fn a_campaign_on_a_full_disk_stops_with_an_error_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("two.sql"), TWO_SINKS).unwrap();
    std::fs::write(
        dir.path().join("c.toml"),
        "name = \"full\"\nscript = \"two.sql\"\nrepeats = 3\n",
    )
    .unwrap();
    // Room for the header and a few rows of results.csv.partial.
    let o = lab_with_file_limit(
        2,
        dir.path(),
        &["campaign", "c.toml", "--quiet", "--out", "r"],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("results.csv.partial: File too large"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let o = lab()
        .current_dir(dir.path())
        .args(["campaign", "c.toml", "--quiet", "--out", "r", "--resume"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let results = std::fs::read_to_string(dir.path().join("r/results.csv")).unwrap();
    assert_eq!(
        results.lines().count(),
        1 + 3 * 2,
        "a row per repeat and sink"
    );
    assert!(
        !names(&dir.path().join("r"))
            .iter()
            .any(|n| n.contains("tmp")),
        "{:?}",
        names(&dir.path().join("r"))
    );
}

#[test]
fn a_run_that_fails_writes_no_output_file_and_keeps_finished_sinks() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.csv"), "1\n2\nthree\n").unwrap();
    std::fs::write(
        dir.path().join("s.sql"),
        "CREATE TABLE src (k BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '5',
  'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '5');
CREATE TABLE bad (k BIGINT) WITH ('connector' = 'filesystem', 'path' = 'bad.csv', 'format' = 'csv');
CREATE TABLE file_sink (k BIGINT) WITH ('connector' = 'filesystem', 'path' = 'sink.csv', 'format' = 'csv');
CREATE TABLE out (k BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO file_sink SELECT k FROM src;
INSERT INTO out SELECT k FROM bad;
",
    )
    .unwrap();
    let o = lab()
        .current_dir(dir.path())
        .args([
            "run",
            "s.sql",
            "--quiet",
            "--result",
            "r.csv",
            "--changelog",
            "c.csv",
        ])
        .output()
        .unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("bad.csv line 3"), "{err}");
    assert_eq!(
        names(dir.path()),
        ["bad.csv", "s.sql", "sink.csv"],
        "no --result or --changelog file, no temporary file"
    );
    let sink = std::fs::read_to_string(dir.path().join("sink.csv")).unwrap();
    assert_eq!(sink.lines().count(), 5, "{sink}");
}

#[test]
fn a_plan_that_cannot_be_written_is_a_failed_execution() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("compile.sql");
    std::fs::write(
        &script,
        "CREATE TABLE src (k BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');\n\
         CREATE TABLE snk (k BIGINT, c BIGINT) WITH ('connector' = 'blackhole');\n\
         COMPILE PLAN '/proc/no-such-dir/p.json' FOR INSERT INTO snk SELECT k, COUNT(*) FROM src GROUP BY k;\n",
    )
    .unwrap();
    // The statement in a script, and the command.
    let statement = lab().arg("run").arg(&script).output().unwrap();
    let command = lab()
        .arg("compile-plan")
        .arg(&script)
        .args(["-o", "/proc/no-such-dir/q.json"])
        .output()
        .unwrap();
    for o in [statement, command] {
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{err}");
        assert!(
            err.contains("execution failed: cannot write plan /proc/no-such-dir/"),
            "{err}"
        );
    }
}
