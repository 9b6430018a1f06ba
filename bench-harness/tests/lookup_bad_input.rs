//! Bad lookup-join input through `lab run`: `FOR SYSTEM_TIME AS OF` a
//! rowtime attribute (an event-time temporal join, not supported yet) or a
//! column that is no time attribute, a lookup without an equality on the
//! table's columns, a RIGHT or FULL lookup join, the clause outside a
//! join, unknown or bad `lookup.*` options: each an error naming its line
//! and column, exit 2, no panic.

use std::process::Command;

/// The probe `orders` (line 1-4) and the lookup table `users` (5-7), with
/// `users_options` in its WITH clause; the sink on line 8.
fn tables(users_options: &str) -> String {
    format!(
        "CREATE TABLE orders (
  id BIGINT, len INT, ts AS TO_TIMESTAMP_LTZ(len, 3), pt AS PROCTIME(),
  WATERMARK FOR ts AS ts
) WITH ('connector' = 'filesystem', 'path' = 'orders.csv', 'format' = 'csv');
CREATE TABLE users (age INT, id BIGINT, name STRING) WITH (
  'connector' = 'filesystem', 'path' = 'users.csv', 'format' = 'csv'{users_options}
);
CREATE TABLE o (id BIGINT, name STRING) WITH ('connector' = 'blackhole');
"
    )
}

/// The lookup join on line 9 (its table on column 57).
fn lookup(join: &str, time: &str, on: &str) -> String {
    format!(
        "{}INSERT INTO o SELECT r.id, u.name FROM orders AS r {join} users FOR SYSTEM_TIME AS OF {time} AS u ON {on};\n",
        tables("")
    )
}

fn run(sql: &str) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("q.sql"), sql).unwrap();
    std::fs::write(dir.path().join("orders.csv"), "1,10\n").unwrap();
    std::fs::write(dir.path().join("users.csv"), "11,1,Julian\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_lab"))
        .arg("run")
        .arg(dir.path().join("q.sql"))
        .arg("--quiet")
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn bad_lookup_join_input_is_refused_where_it_is() {
    let with_options = |options: &str| {
        format!(
            "{}INSERT INTO o SELECT r.id, u.name FROM orders AS r JOIN users FOR SYSTEM_TIME AS OF r.pt AS u ON r.id = u.id;\n",
            tables(options)
        )
    };
    let cases = [
        (
            lookup("JOIN", "r.ts", "r.id = u.id"),
            "unsupported SQL at line 9, column 85: FOR SYSTEM_TIME AS OF the rowtime attribute 'r.ts' is an event-time temporal join (against a versioned table), which is not supported yet",
        ),
        (
            lookup("JOIN", "r.len", "r.id = u.id"),
            "validation error at line 9, column 85: Temporal table join currently only supports 'FOR SYSTEM_TIME AS OF' left table's time attribute field; 'r.len' is not a time attribute",
        ),
        (
            lookup("JOIN", "r.pt", "r.len > u.age"),
            "validation error at line 9, column 98: Temporal table join requires an equality condition on fields of table [default_catalog.default_database.users]",
        ),
        (
            lookup("JOIN", "r.pt", "r.id = r.len"),
            "validation error at line 9, column 98: Temporal table join requires an equality condition on fields of table [default_catalog.default_database.users]",
        ),
        (
            lookup("RIGHT JOIN", "r.pt", "r.id = u.id"),
            "unsupported SQL at line 9, column 63: a lookup join (FOR SYSTEM_TIME AS OF) is INNER or LEFT, not RightOuterJoin",
        ),
        (
            format!("{}INSERT INTO o SELECT id, name FROM users FOR SYSTEM_TIME AS OF pt;\n", tables("")),
            "unsupported SQL at line 9, column 36: FOR SYSTEM_TIME AS OF is supported on the right side of a JOIN only",
        ),
        (
            with_options(",\n  'lookup.cache' = 'LRU'"),
            "configuration error at line 10, column 57: table 'users': 'lookup.cache' = 'LRU' is not a cache type; use 'NONE' or 'PARTIAL'",
        ),
        (
            with_options(",\n  'lookup.cache' = 'FULL'"),
            "configuration error at line 10, column 57: table 'users': 'lookup.cache' = 'FULL' is not supported yet",
        ),
        (
            with_options(",\n  'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = 'many'"),
            "configuration error at line 10, column 57: table 'users': 'lookup.partial-cache.max-rows' = 'many' is not a positive whole number",
        ),
        (
            with_options(",\n  'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.expire-after-write' = '5 parsecs'"),
            "configuration error at line 10, column 57: table 'users': 'lookup.partial-cache.expire-after-write' = '5 parsecs': unknown time unit 'parsecs'",
        ),
        (
            with_options(",\n  'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.cache-missing-key' = 'maybe'"),
            "configuration error at line 10, column 57: table 'users': 'lookup.partial-cache.cache-missing-key' = 'maybe' is not 'true' or 'false'",
        ),
        (
            with_options(",\n  'lookup.cache' = 'NONE', 'lookup.partial-cache.max-rows' = '0'"),
            "configuration error at line 10, column 57: table 'users': 'lookup.partial-cache.max-rows' = '0' is not a positive whole number",
        ),
        (
            with_options(",\n  'lookup.cache.size' = '10'"),
            "configuration error at line 10, column 57: table 'users': unknown lookup option 'lookup.cache.size'",
        ),
    ];
    for (sql, want) in cases {
        let (code, stderr) = run(&sql);
        assert_eq!(code, 2, "{sql}\n{stderr}");
        assert!(stderr.contains(want), "{sql}\nwant {want:?}\ngot  {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// A lookup join that runs: the same script with the cache on gives the
/// same result, exit 0.
#[test]
fn a_good_lookup_join_runs() {
    let sql = format!(
        "{}INSERT INTO o SELECT r.id, u.name FROM orders AS r LEFT JOIN users FOR SYSTEM_TIME AS OF r.pt AS u ON r.id = u.id;\n",
        tables(",\n  'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '10'")
    );
    let (code, stderr) = run(&sql);
    assert_eq!(code, 0, "{stderr}");
}
