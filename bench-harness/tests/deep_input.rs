//! Input depth cannot exhaust the stack: a 10,000-deep nested expression,
//! a 10,000-term chain and their kin are refused at the token where they
//! pass the limit (exit 2) by `lab explain` and `lab run` alike, before
//! anything recurses over them (`optimizer/src/sql/nesting.rs`); a query
//! just under the limit explains and runs.

use std::process::Command;

const DDL: &str = "CREATE TABLE clicks (user_id STRING, url STRING, dwell INT, ts BIGINT)
  WITH ('connector' = 'datagen', 'number-of-rows' = '20', 'seed' = '1');
CREATE TABLE out1 (v BIGINT) WITH ('connector' = 'blackhole');
";

/// (name, the INSERT) of every deep shape.
fn deep_scripts() -> Vec<(&'static str, String)> {
    const N: usize = 10_000;
    vec![
        (
            "nested parentheses",
            format!(
                "INSERT INTO out1 SELECT {}ts{} FROM clicks;",
                "(".repeat(N),
                ")".repeat(N)
            ),
        ),
        (
            "a chain of +",
            format!(
                "INSERT INTO out1 SELECT {} FROM clicks;",
                vec!["ts"; N].join(" + ")
            ),
        ),
        (
            "a chain of AND",
            format!(
                "INSERT INTO out1 SELECT ts FROM clicks WHERE {};",
                vec!["ts > 1"; N].join(" AND ")
            ),
        ),
        (
            "a chain of IS NULL",
            format!(
                "INSERT INTO out1 SELECT ts FROM clicks WHERE ts{};",
                " IS NULL".repeat(N)
            ),
        ),
        (
            "unary minus",
            format!("INSERT INTO out1 SELECT {}ts FROM clicks;", "- ".repeat(N)),
        ),
        (
            "nested CASE",
            format!(
                "INSERT INTO out1 SELECT {}ts{} FROM clicks;",
                "CASE WHEN ts > 0 THEN ts ELSE ".repeat(N),
                " END".repeat(N)
            ),
        ),
        (
            "nested subqueries",
            format!(
                "INSERT INTO out1 SELECT ts FROM {}clicks{};",
                "(SELECT ts FROM ".repeat(N),
                ")".repeat(N)
            ),
        ),
    ]
}

#[test]
fn ten_thousand_deep_input_is_refused_by_explain_and_run() {
    let dir = tempfile::tempdir().unwrap();
    for (shape, insert) in deep_scripts() {
        let path = dir.path().join("deep.sql");
        std::fs::write(&path, format!("{DDL}{insert}\n")).unwrap();
        for command in ["explain", "run"] {
            let o = Command::new(env!("CARGO_BIN_EXE_lab"))
                .arg(command)
                .arg(&path)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{shape}, lab {command}: {err}");
            assert!(
                err.starts_with("error: unsupported SQL at line 4, column ")
                    && err.contains(
                        "expression nested too deeply: more than 200 levels here (each \
                         parenthesis, CASE, keyword and operator of a chain nests one level deeper)"
                    ),
                "{shape}, lab {command}: {err}"
            );
            assert!(
                err.len() < 400,
                "{shape}, lab {command}: a long message: {err}"
            );
        }
    }
}

#[test]
fn a_chain_under_the_limit_explains_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ok.sql");
    std::fs::write(
        &path,
        format!(
            "{DDL}INSERT INTO out1 SELECT {} FROM clicks;\n",
            vec!["ts"; 190].join(" + ")
        ),
    )
    .unwrap();
    for command in ["explain", "run"] {
        let o = Command::new(env!("CARGO_BIN_EXE_lab"))
            .arg(command)
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "lab {command}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// The `changelog rows` line of `lab run`'s summary of `insert`.
fn changelog_rows(dir: &std::path::Path, name: &str, insert: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("{DDL}{insert}\n")).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_lab"))
        .arg("run")
        .arg(&path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    stdout
        .lines()
        .find(|l| l.trim_start().starts_with("changelog rows"))
        .unwrap_or_else(|| panic!("{name}: no changelog line in {stdout}"))
        .to_string()
}

#[test]
fn a_where_of_150_and_ed_comparisons_keeps_the_rows_its_one_real_condition_keeps() {
    // 150 terms are 150 levels of AND (plus the deepest term), not 300:
    // the chain is counted as the parser builds it.
    let dir = tempfile::tempdir().unwrap();
    let chain = (0..150)
        .map(|i| format!("url <> 'no such url {i}'"))
        .chain(["dwell > 0".to_string()])
        .collect::<Vec<_>>()
        .join(" AND ");
    let long = changelog_rows(
        dir.path(),
        "chain.sql",
        &format!("INSERT INTO out1 SELECT ts FROM clicks WHERE {chain};"),
    );
    let one = changelog_rows(
        dir.path(),
        "one.sql",
        "INSERT INTO out1 SELECT ts FROM clicks WHERE dwell > 0;",
    );
    assert_eq!(long, one);
}
