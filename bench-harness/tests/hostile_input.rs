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
