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
        "expected an integer from 1 to 1000",
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

/// [`fails`] with a script of one's own.
fn fails_with(script: &str, spec: &str, place: &str, needle: &str) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.sql"), script).unwrap();
    std::fs::write(dir.path().join("c.toml"), spec).unwrap();
    for quick in [false, true] {
        let o = Command::new(env!("CARGO_BIN_EXE_lab"))
            .current_dir(dir.path())
            .args(["campaign", "c.toml", "--quiet"])
            .args(quick.then_some("--quick"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "exit code; stderr: {stderr}");
        assert!(stderr.contains(place), "should name {place:?}: {stderr}");
        assert!(stderr.contains(needle), "should say {needle:?}: {stderr}");
        assert!(!dir.path().join("reports").exists(), "nothing runs");
    }
}

#[test]
fn an_over_long_title_or_label_names_its_line_before_any_run() {
    // 300 characters once passed the check and failed drawing after every
    // run (the chart's file name was too long).
    let title = "T".repeat(300);
    fails(
        &GOOD.replace("title = \"t\"", &format!("title = \"{title}\"")),
        "c.toml:9:",
        "the chart title 'TTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTT...' has 300 characters; \
         expected at most 100",
    );
    fails(
        &GOOD.replace(
            "y = \"state_bytes\"",
            &format!("y = \"state_bytes\"\ny_label = \"{title}\""),
        ),
        "c.toml:12:",
        "y_label",
    );
}

#[test]
fn an_out_of_range_sweep_value_names_its_line_before_any_run() {
    // A workload connector: the third point's value once failed after two
    // points had run, without a spec line.
    let colors = "CREATE TABLE T (color STRING, id BIGINT) WITH (
  'connector' = 'colors', 'number-of-rows' = '${rows}', 'colors' = '10',
  'hot-color-share' = '${hot_share}', 'seed' = '1');
CREATE TABLE o (color STRING, total BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO o SELECT color, SUM(id) FROM T GROUP BY color;
";
    let spec = "name = \"bad\"\nscript = \"t.sql\"\nrepeats = 1\n[sweep]\nrows = [100]\n\
                hot_share = [0.1, 0.5, 1.5]\n[quick]\nsweep = { hot_share = [0.2] }\n";
    fails_with(
        colors,
        spec,
        "c.toml:6:24:",
        "sweep value hot_share = 1.5: table 'T': option 'hot-color-share' = '1.5'",
    );
    // A value only --quick uses is checked by a full run too, and the
    // other way round.
    let spec = spec.replace("1.5]", "0.9]").replace("[0.2]", "[0.2, -3]");
    fails_with(colors, &spec, "c.toml:8:29:", "sweep value hot_share = -3");
    // datagen.
    fails(
        &GOOD.replace("rows = [10]", "rows = [10, -5]"),
        "c.toml:7:13:",
        "sweep value rows = -5: table 'src': option 'number-of-rows' = '-5'",
    );
}

#[test]
fn a_variant_that_cannot_be_planned_names_its_line() {
    fails(
        &GOOD.replace(
            "[sweep]",
            "[variants.b]\n\"table.exec.mini-batch.enabled\" = true\n[sweep]",
        ),
        "c.toml:6:",
        "variant 'b': configuration error at line 10, column 1: 'table.exec.mini-batch.allow-latency' must be > 0",
    );
}

#[test]
fn sizes_a_spec_asks_for_have_a_limit() {
    // 2147483647 rows a batch once asked for a 64 GiB buffer.
    fails(
        &GOOD.replace(
            "\"parallelism.default\" = 1",
            "\"lab.source.batch-size\" = 2147483647",
        ),
        "c.toml:5:",
        "variant 'a': invalid value '2147483647' for configuration key 'lab.source.batch-size': \
         expected a 32-bit integer from 1 to 1048576",
    );
    fails(
        &GOOD.replace(
            "rows = [10]",
            "rows = [10]\n\"lab.source.batch-size\" = [1024, 2147483647]",
        ),
        "c.toml:8:",
        "'lab.source.batch-size': expected a 32-bit integer from 1 to 1048576",
    );
    fails(
        &GOOD.replace("repeats = 1", "repeats = 2147483647"),
        "c.toml:3:",
        "invalid repeats = 2147483647: expected an integer from 1 to 1000",
    );
    let many: Vec<String> = (1..=200).map(|i| i.to_string()).collect();
    let list = format!("[{}]", many.join(", "));
    fails(
        &GOOD.replace("rows = [10]", &format!("rows = {list}\na = {list}\n")),
        "c.toml:8:",
        "the sweep has more than 10000 points with dimension 'a'",
    );
    fails(
        &GOOD
            .replace("repeats = 1", "repeats = 1000")
            .replace("rows = [10]", &format!("rows = {list}")),
        "c.toml:3:",
        "200 point(s) × 1 variant(s) × 1000 repeat(s) = 200000 runs, more than a campaign runs \
         (at most 100000)",
    );
}
