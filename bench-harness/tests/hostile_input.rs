//! Hostile input gets an error that says what and where (exit code 2),
//! never a panic, an abort, a silently wrong result, or a wait that grows
//! with a number in the input.

use std::path::Path;
use std::process::{Command, Output};

fn lab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lab"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Exit 2 and the stderr, which must not mention a panic.
fn refused(o: &Output) -> String {
    let err = text(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(2),
        "stdout: {}\nstderr: {err}",
        text(&o.stdout)
    );
    assert!(
        !err.contains("panicked") && !err.contains("memory allocation"),
        "{err}"
    );
    err
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

#[test]
fn an_unterminated_quote_in_a_csv_file_is_an_error_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    // Four lines: once read as two rows without a word.
    write(dir.path(), "q.csv", "1,a\n2,\"b\n3,c\n4,d\n");
    write(dir.path(), "ints.csv", "1,2\n3,\"4\n5,6\n");
    write(
        dir.path(),
        "q.sql",
        "CREATE TABLE t (id INT, name STRING) WITH ('connector'='filesystem','path'='q.csv','format'='csv');
CREATE TABLE i (a BIGINT, b BIGINT) WITH ('connector'='filesystem','path'='ints.csv','format'='csv');
CREATE TABLE o (id INT, name STRING) WITH ('connector'='blackhole');
CREATE TABLE p (a BIGINT, b BIGINT) WITH ('connector'='blackhole');
INSERT INTO o SELECT id, name FROM t;
INSERT INTO p SELECT a, b FROM i;
",
    );
    let o = lab()
        .current_dir(dir.path())
        .args(["run", "q.sql", "--quiet"])
        .output()
        .unwrap();
    let err = refused(&o);
    assert!(
        err.contains("q.csv line 2: malformed CSV: unterminated quoted field"),
        "{err}"
    );
    // The integer file (the fused fast path) alone.
    let script = std::fs::read_to_string(dir.path().join("q.sql")).unwrap();
    let ints: String = script
        .lines()
        .filter(|l| !l.contains("INTO o"))
        .map(|l| format!("{l}\n"))
        .collect();
    write(dir.path(), "ints.sql", &ints);
    let o = lab()
        .current_dir(dir.path())
        .args(["run", "ints.sql", "--quiet"])
        .output()
        .unwrap();
    let err = refused(&o);
    assert!(
        err.contains("ints.csv line 2: malformed CSV: unterminated quoted field"),
        "{err}"
    );
}

/// Runs `cmd` and fails the test if it takes longer than a generous
/// minute (it used to take 78 s of did-you-mean search). Its output goes
/// to files in `dir` (a long message would fill a pipe nobody reads).
fn output_within_a_minute(dir: &Path, cmd: &mut Command) -> Output {
    let (out, err) = (dir.join("stdout.txt"), dir.join("stderr.txt"));
    let mut child = cmd
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > std::time::Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("still running after a minute");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    Output {
        status,
        stdout: std::fs::read(out).unwrap(),
        stderr: std::fs::read(err).unwrap(),
    }
}

#[test]
fn identifiers_of_100k_characters_are_refused_without_a_long_search() {
    let dir = tempfile::tempdir().unwrap();
    let a = "a".repeat(100_000);
    let b = format!("{}b", "a".repeat(99_999));
    write(
        dir.path(),
        "long.sql",
        &format!(
            "CREATE TABLE t ({a} INT, {a}x INT) WITH ('connector'='datagen','number-of-rows'='3');
CREATE TABLE o (x INT) WITH ('connector'='blackhole');
INSERT INTO o SELECT {b} FROM t;
"
        ),
    );
    let o = output_within_a_minute(
        dir.path(),
        lab().current_dir(dir.path()).args(["explain", "long.sql"]),
    );
    let err = refused(&o);
    assert!(
        err.starts_with("error: validation error at line 3, column 22: Column 'aaa"),
        "{}",
        &err[..200]
    );
    assert!(
        !err.contains("Did you mean"),
        "no suggestion for such names"
    );
}

#[test]
fn configuration_errors_name_the_set_line_or_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "s.sql",
        "CREATE TABLE t (a INT) WITH ('connector'='datagen','number-of-rows'='3');
CREATE TABLE o (a INT) WITH ('connector'='blackhole');

SET 'lab.source.batch-size' = '2147483647';
INSERT INTO o SELECT a FROM t;
",
    );
    for cmd in ["run", "explain"] {
        let o = lab()
            .current_dir(dir.path())
            .args([cmd, "s.sql"])
            .output()
            .unwrap();
        let err = refused(&o);
        assert_eq!(
            err.trim_end(),
            "error: configuration error at line 4, column 1: invalid value '2147483647' for \
             configuration key 'lab.source.batch-size': expected a 32-bit integer from 1 to \
             1048576 (a batch's buffer is allocated before it is filled)",
            "{cmd}"
        );
    }
    let o = lab()
        .current_dir(dir.path())
        .args(["run", "s.sql", "--set", "parallelism.default=99999"])
        .output()
        .unwrap();
    let err = refused(&o);
    assert!(
        err.starts_with(
            "error: --set 'parallelism.default=99999': invalid value '99999' for configuration \
             key 'parallelism.default': expected a 32-bit integer from 1 to 32768"
        ),
        "{err}"
    );
    let o = lab()
        .current_dir(dir.path())
        .args(["tune", "s.sql", "--try", "parallelism.default=1,40000"])
        .output()
        .unwrap();
    let err = refused(&o);
    assert!(
        err.starts_with("error: --try 'parallelism.default=1,40000': invalid value '40000'"),
        "{err}"
    );
}
