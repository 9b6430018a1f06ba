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

const TINY_SQL: &str = "CREATE TABLE src (k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '${rows}',
  'fields.k.min' = '1', 'fields.k.max' = '50', 'fields.v.min' = '1', 'fields.v.max' = '9',
  'seed' = '${seed}');
CREATE TABLE out (k BIGINT, n BIGINT, s BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k;
";

const TINY_SPEC: &str = r#"name = "edited"
script = "s.sql"
repeats = 1
[variants.p1]
"parallelism.default" = 1
[variants.p2]
"parallelism.default" = 2
[sweep]
rows = [300]
seed = [1, 2]
[[chart]]
title = "Throughput"
x = "seed"
y = "throughput_rows_per_s"
log_y = true
[[chart]]
title = "Accesses"
x = "rows"
y = "state_accesses"
series = "seed"
log_x = true
"#;

/// The width and height of a PNG file.
fn png_size(path: &Path) -> (u32, u32) {
    let b = std::fs::read(path).unwrap();
    let word = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    (word(16), word(20))
}

#[test]
fn plot_reads_an_edited_results_file_defensively() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "s.sql", TINY_SQL);
    write(dir.path(), "c.toml", TINY_SPEC);
    let report = dir.path().join("report");
    let o = lab()
        .current_dir(dir.path())
        .args(["campaign", "c.toml", "--quiet", "--out", "report"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let results = report.join("results.csv");
    let original = std::fs::read_to_string(&results).unwrap();
    let header: Vec<&str> = original.lines().next().unwrap().split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    let (tp, seed, acc) = (
        col("throughput_rows_per_s"),
        col("seed"),
        col("state_accesses"),
    );

    // Numbers at the ends of what an f64 holds, a 300,000-character
    // parameter value, and 2000 copies of every row.
    let edit = |f: &dyn Fn(usize, &mut Vec<String>)| -> String {
        let mut lines = vec![original.lines().next().unwrap().to_string()];
        for (i, line) in original.lines().skip(1).enumerate() {
            let mut fields: Vec<String> = line.split(',').map(str::to_string).collect();
            f(i, &mut fields);
            lines.push(fields.join(","));
        }
        lines.join("\n") + "\n"
    };
    let long = "s".repeat(300_000);
    let hostile = edit(&|i, f| match i {
        0 => f[tp] = "1e308".into(),
        1 => f[tp] = "5e-324".into(),
        2 => {
            f[seed] = long.clone();
            f[acc] = "-1.7e308".into();
        }
        _ => f[acc] = "1.7e308".into(),
    });
    // Every row 2000 times, but the long one once (it alone is 300 KB).
    let (short, long_line): (Vec<&str>, Vec<&str>) =
        hostile.lines().skip(1).partition(|l| l.len() < 1000);
    let body: String = short.iter().map(|l| format!("{l}\n")).collect();
    let many = format!(
        "{}\n{}{}\n",
        hostile.lines().next().unwrap(),
        body.repeat(2000),
        long_line.join("\n")
    );
    std::fs::write(&results, many).unwrap();
    let o = output_within_a_minute(dir.path(), lab().arg("plot").arg(&report));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    for chart in ["throughput.png", "accesses.png"] {
        let (w, h) = png_size(&report.join(chart));
        assert!(w <= 1400 && h == 600, "{chart}: {w} x {h}");
    }

    // NaN or infinity is no measurement: refused with its line.
    std::fs::write(
        &results,
        edit(&|i, f| {
            if i == 2 {
                f[tp] = "NaN".into()
            }
        }),
    )
    .unwrap();
    let err = refused(&lab().arg("plot").arg(&report).output().unwrap());
    assert!(
        err.contains("results.csv:4: throughput_rows_per_s = 'NaN' is not a finite number"),
        "{err}"
    );
}

#[test]
fn tune_bounds_what_its_flags_multiply() {
    let clicks = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/clicks_per_user.sql"
    ));
    let o = lab()
        .arg("tune")
        .arg(clicks)
        .args([
            "--try",
            "parallelism.default=1,2",
            "--repeats",
            "4294967295",
        ])
        .output()
        .unwrap();
    let err = refused(&o);
    assert!(
        err.contains("--repeats 4294967295: expected an integer from 1 to 1000"),
        "{err}"
    );
    let eleven = "1,2,3,4,5,6,7,8,9,10,11";
    let o = lab()
        .arg("tune")
        .arg(clicks)
        .args(["--try", &format!("parallelism.default={eleven}")])
        .args(["--try", &format!("lab.source.batch-size={eleven}")])
        .args(["--try", &format!("table.exec.mini-batch.size={eleven}")])
        .output()
        .unwrap();
    let err = refused(&o);
    assert!(
        err.contains("the --try values make more than 1000 variants"),
        "{err}"
    );
}

#[test]
fn csv_option_errors_name_the_table_the_option_and_its_line() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "q.csv", "1\n");
    write(
        dir.path(),
        "s.sql",
        "CREATE TABLE o (a INT) WITH ('connector' = 'blackhole');
CREATE TABLE t (a INT) WITH ('connector' = 'filesystem', 'path' = 'q.csv',
  'format' = 'csv', 'csv.field-delimiter' = ';;');
INSERT INTO o SELECT a FROM t;
",
    );
    let o = lab()
        .current_dir(dir.path())
        .args(["run", "s.sql", "--quiet"])
        .output()
        .unwrap();
    let err = refused(&o);
    assert!(
        err.starts_with(
            "error: validation error at line 2, column 1: table 't': option \
             'csv.field-delimiter' = ';;': expected a single ASCII character"
        ),
        "{err}"
    );
}
