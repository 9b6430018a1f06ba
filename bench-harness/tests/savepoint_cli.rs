//! `lab run --stop-with-savepoint-after ROWS --savepoint-dir DIR` stops a
//! run with a savepoint and prints its path; `--from-savepoint PATH` (or
//! `--set execution.savepoint.path=PATH`) goes on from it, and the output
//! files end as those of a run never stopped, byte for byte. A missing,
//! cut-short or corrupt savepoint is refused with exit code 2, overwriting
//! nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// An aggregate and a filesystem copy of the same source, one job.
const AGG: &str = "
CREATE TABLE src (k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '20000',
  'fields.k.kind' = 'random', 'fields.k.min' = '1', 'fields.k.max' = '3000',
  'fields.v.min' = '1', 'fields.v.max' = '100', 'seed' = '3');
CREATE TABLE per_key (k BIGINT, cnt BIGINT, total BIGINT)
  WITH ('connector' = 'blackhole');
CREATE TABLE copy (k BIGINT, v BIGINT)
  WITH ('connector' = 'filesystem', 'path' = 'copy.csv', 'format' = 'csv');
EXECUTE STATEMENT SET BEGIN
INSERT INTO per_key SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k;
INSERT INTO copy SELECT k, v FROM src WHERE v > 90;
END;
";

fn lab(dir: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lab"))
        .current_dir(dir)
        .args(["run", "s.sql", "--quiet"])
        .args(["--changelog", "changelog.csv", "--result", "result.csv"])
        .args(["--set", "lab.clock=deterministic"])
        .args(["--set", "lab.source.batch-size=500"])
        .args(extra)
        .output()
        .unwrap()
}

fn ok(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every file in `dir` (not in subdirectories), by name, with its bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            (n, std::fs::read(e.path()).unwrap())
        })
        .collect();
    v.sort();
    v
}

fn fresh(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("s.sql"), AGG).unwrap();
}

/// The savepoint path the run summary prints.
fn printed_savepoint(stdout: &str) -> PathBuf {
    let line = stdout
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("savepoint "))
        .unwrap_or_else(|| panic!("no savepoint in the summary:\n{stdout}"));
    PathBuf::from(line.trim())
}

#[test]
fn a_run_stopped_with_a_savepoint_goes_on_to_the_same_files() {
    let tmp = tempfile::tempdir().unwrap();
    let reference = tmp.path().join("ref");
    fresh(&reference);
    ok(&lab(&reference, &[]), "uninterrupted");
    let expected = files(&reference);
    for (k, restore) in [
        ["--from-savepoint", ""],
        ["--set", "execution.savepoint.path="],
    ]
    .into_iter()
    .enumerate()
    {
        let dir = tmp.path().join(format!("stopped-{k}"));
        fresh(&dir);
        let out = lab(
            &dir,
            &[
                "--stop-with-savepoint-after",
                "9000",
                "--savepoint-dir",
                "sp",
            ],
        );
        let path = printed_savepoint(&ok(&out, "stop with savepoint"));
        assert!(path.ends_with("sp/savepoint-9000"), "{}", path.display());
        // Stopped: the files hold only what came before the savepoint.
        let stopped = files(&dir);
        assert_ne!(stopped, expected);
        let arg = format!("{}{}", restore[1], path.display());
        ok(&lab(&dir, &[restore[0], &arg]), "from the savepoint");
        assert_eq!(files(&dir), expected, "restored with {}", restore[0]);
    }
}

#[test]
fn a_bad_savepoint_is_refused_and_nothing_is_overwritten() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    fresh(dir);
    let out = lab(
        dir,
        &[
            "--stop-with-savepoint-after",
            "9000",
            "--savepoint-dir",
            "sp",
        ],
    );
    let path = dir.join(printed_savepoint(&ok(&out, "stop with savepoint")));
    let metadata = path.join("_metadata");
    let good = std::fs::read(&metadata).unwrap();
    let mut flipped = good.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 1;
    let bad: [(&str, Option<Vec<u8>>, &str); 4] = [
        (
            "truncated",
            Some(good[..good.len() - 10].to_vec()),
            "truncated",
        ),
        ("corrupt", Some(flipped), "checksum"),
        ("not a savepoint", Some(b"hello".to_vec()), "bad header"),
        ("missing", None, "no checkpoint at"),
    ];
    for (what, bytes, says) in bad {
        match &bytes {
            Some(b) => std::fs::write(&metadata, b).unwrap(),
            None => std::fs::remove_file(&metadata).unwrap(),
        }
        let before = files(dir);
        let held = files(&path);
        let out = lab(dir, &["--from-savepoint", &path.display().to_string()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert!(err.contains(says), "{what}: {err}");
        assert!(!err.contains("panicked"), "{what}: {err}");
        assert_eq!(files(dir), before, "{what}: a file changed");
        assert_eq!(files(&path), held, "{what}: the savepoint changed");
    }
}
