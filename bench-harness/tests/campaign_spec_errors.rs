//! A malformed campaign spec fails with exit code 2, naming the file and
//! the line, before anything runs (no report directory appears).

use std::process::Command;

const SCRIPT: &str = "CREATE TABLE src (k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '${rows}',
  'fields.k.min' = '1',
  'fields.k.max' = '10',
  'fields.v.min' = '1',
  'fields.v.max' = '9'
);
CREATE TABLE out (k BIGINT, n BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT k, COUNT(*) FROM src GROUP BY k;
";

const GOOD: &str = r#"name = "bad"
script = "t.sql"
repeats = 1
[variants.a]
"parallelism.default" = 1
[sweep]
rows = [10]
[[chart]]
title = "t"
x = "rows"
y = "state_bytes"
"#;

/// Runs `lab campaign` on `spec` and checks it fails with code 2, a message
/// naming `c.toml:<line>:` (or `where`) and containing `needle`, and that
/// nothing ran.
fn fails(spec: &str, place: &str, needle: &str) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.sql"), SCRIPT).unwrap();
    std::fs::write(dir.path().join("c.toml"), spec).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_lab"))
        .current_dir(dir.path())
        .args(["campaign", "c.toml", "--quiet"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "exit code; stderr: {stderr}");
    assert!(
        stderr.contains(place),
        "stderr should name {place:?}: {stderr}"
    );
    assert!(
        stderr.contains(needle),
        "stderr should mention {needle:?}: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        !dir.path().join("reports").exists(),
        "nothing runs, no report is written"
    );
}

#[test]
fn the_good_spec_runs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.sql"), SCRIPT).unwrap();
    std::fs::write(dir.path().join("c.toml"), GOOD).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_lab"))
        .current_dir(dir.path())
        .args(["campaign", "c.toml", "--quiet"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(dir.path().join("reports/bad/results.csv").exists());
}

#[test]
fn an_unknown_field_names_its_line() {
    fails(
        &GOOD.replace("repeats = 1", "repeats = 1\nrepeets = 2"),
        "c.toml:4:",
        "unknown field `repeets`",
    );
    fails(
        &GOOD.replace(
            "y = \"state_bytes\"",
            "y = \"state_bytes\"\ncolour = \"red\"",
        ),
        "c.toml:12:",
        "unknown field `colour`",
    );
}

#[test]
fn a_bad_value_names_its_line() {
    fails(
        &GOOD.replace("repeats = 1", "repeats = \"one\""),
        "c.toml:3:",
        "invalid type",
    );
    fails(
        &GOOD.replace("repeats = 1", "repeats = 0"),
        "c.toml:3:",
        "expected an integer >= 1",
    );
    fails(
        &GOOD.replace("\"parallelism.default\" = 1", "\"parallelism.default\" = 0"),
        "c.toml:5:",
        "invalid value '0' for configuration key 'parallelism.default'",
    );
    fails(
        &GOOD.replace("rows = [10]", "rows = []"),
        "c.toml:7:",
        "has no values",
    );
}

#[test]
fn an_unknown_configuration_key_names_its_line() {
    fails(
        &GOOD.replace("\"parallelism.default\" = 1", "\"parallelism.defualt\" = 1"),
        "c.toml:5:",
        "did you mean 'parallelism.default'",
    );
    fails(
        &GOOD.replace(
            "rows = [10]",
            "rows = [10]\n\"state.backend\" = [\"rocksdb\"]",
        ),
        "c.toml:8:",
        "did you mean 'state.backend.type'",
    );
}

#[test]
fn a_missing_script_names_its_line() {
    fails(
        &GOOD.replace("script = \"t.sql\"", "script = \"missing.sql\""),
        "c.toml:2:",
        "cannot read script 'missing.sql'",
    );
}

#[test]
fn a_chart_with_an_unknown_metric_or_parameter_names_its_line() {
    fails(
        &GOOD.replace("y = \"state_bytes\"", "y = \"state_size\""),
        "c.toml:11:",
        "unknown metric y = 'state_size'; expected one of: throughput_rows_per_s",
    );
    fails(
        &GOOD.replace("x = \"rows\"", "x = \"skew\""),
        "c.toml:10:",
        "x = 'skew' is not a sweep dimension; expected one of: rows",
    );
    fails(
        &GOOD.replace(
            "y = \"state_bytes\"",
            "y = \"state_bytes\"\nsink = \"nope\"",
        ),
        "c.toml:12:",
        "sink = 'nope' is not a sink",
    );
}

#[test]
fn script_parameters_and_the_sweep_must_match() {
    fails(
        &GOOD.replace("rows = [10]", "rows = [10]\nskew = [1.0]"),
        "c.toml:8:",
        "sweep parameter 'skew' is not a configuration key",
    );
    fails(
        &GOOD
            .replace("rows = [10]", "[[sweep]]\nparam = \"rowz\"\nvalues = [10]")
            .replace("[sweep]\n", "")
            .replace("x = \"rows\"", "x = \"rowz\""),
        "t.sql:3:",
        "'${rows}' is not a parameter",
    );
}
