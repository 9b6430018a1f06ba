//! Flink's `LookupJoinITCase` (flink-table-planner, runtime/stream/sql)
//! with its data and expected rows: the probe tables `src` and
//! `nullable_src` (id, len, content, proctime), the lookup tables
//! `user_table` and `nullable_user_table` (age, id, name) and
//! `userTableWithComputedColumn` (its `nominal_age AS age + 1`). Flink runs
//! each case without a cache, with a partial cache and with a full one;
//! here every case runs without a cache and with a partial cache of
//! Flink's size (`Long.MaxValue` rows) and of one row, on both state
//! backends, at parallelism 1 and 4.
//!
//! Not ported, and why: the cases on user-defined functions (`add`,
//! `D.id + 4` as a key), the retry hints and lookup thresholds
//! (`LOOKUP('retry-predicate' = ...)`, a connector that misses on
//! purpose), custom shuffles, the full cache, `CURRENT_DATE`, the cache
//! shared across subtasks (the lab's cache is per subtask), and the
//! aggregate-then-lookup cases (`PROCTIME()` in a SELECT list). `testJoinTemporalTableWithUdfEqualFilter`'s `CONCAT` is
//! not a lab function: its filter is written with `UPPER` (same rows).
//! Beyond Flink's cases: an updating probe, whose retractions are looked
//! up again and emitted with their kind.

mod common;

use common::{run_mem, MemSources};
use operators::changelog::{Change, RowKind};
use operators::value::{Row, Value};
use optimizer::session::RunOptions;

/// The partial cache of each variant: none, Flink's, one row.
const CACHES: [&str; 3] = [
    "",
    "'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '9223372036854775807',",
    "'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '1',",
];

fn variants() -> Vec<(&'static str, Vec<(&'static str, String)>)> {
    let mut out = Vec::new();
    for cache in CACHES {
        for backend in ["hashmap", "rocksdb"] {
            for p in [1usize, 4] {
                out.push((
                    cache,
                    vec![
                        ("state.backend.type", backend.to_string()),
                        ("parallelism.default", p.to_string()),
                        ("lab.source.batch-size", "2".to_string()),
                    ],
                ));
            }
        }
    }
    out
}

fn long(v: Option<i64>) -> Value {
    v.map(Value::Int).unwrap_or(Value::Null)
}

fn rows(data: &[(Option<i64>, i64, &str)]) -> Vec<Change> {
    data.iter()
        .map(|&(a, b, c)| Change::insert(vec![long(a), Value::Int(b), Value::str(c)]))
        .collect()
}

/// `data`, `dataWithNull`, `userData` and `userDataWithNull`.
fn sources() -> MemSources {
    let data = [
        (Some(1), 12, "Julian"),
        (Some(2), 15, "Hello"),
        (Some(3), 15, "Fabian"),
        (Some(8), 11, "Hello world"),
        (Some(9), 12, "Hello world!"),
    ];
    let data_with_null = [
        (None, 15, "Hello"),
        (Some(3), 15, "Fabian"),
        (None, 11, "Hello world"),
        (Some(9), 12, "Hello world!"),
    ];
    let user = |age: i64, id: Option<i64>, name: &str| {
        Change::insert(vec![Value::Int(age), long(id), Value::str(name)])
    };
    let user_data = vec![
        user(11, Some(1), "Julian"),
        user(22, Some(2), "Jark"),
        user(33, Some(3), "Fabian"),
        user(11, Some(4), "Hello world"),
        user(11, Some(5), "Hello world"),
    ];
    let user_data_with_null = vec![
        user(11, Some(1), "Julian"),
        user(22, None, "Hello"),
        user(33, Some(3), "Fabian"),
        user(44, None, "Hello world"),
    ];
    let mut s = MemSources::default();
    s.0.insert("src".into(), rows(&data));
    s.0.insert("nullable_src".into(), rows(&data_with_null));
    s.0.insert("user_table".into(), user_data.clone());
    s.0.insert("userTableWithComputedColumn".into(), user_data);
    s.0.insert("nullable_user_table".into(), user_data_with_null);
    s
}

fn ddl(cache: &str) -> String {
    let probe = |name: &str| {
        format!(
            "CREATE TABLE {name} (id BIGINT, len INT, content STRING, proctime AS PROCTIME()) WITH ('connector' = 'datagen');\n"
        )
    };
    let lookup = |name: &str, computed: &str| {
        format!(
            "CREATE TABLE {name} (age INT, id BIGINT, name STRING{computed}) WITH ({cache} 'connector' = 'datagen');\n"
        )
    };
    [
        probe("src"),
        probe("nullable_src"),
        lookup("user_table", ""),
        lookup("nullable_user_table", ""),
        lookup("userTableWithComputedColumn", ", nominal_age AS age + 1"),
    ]
    .concat()
}

fn flink_value(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        _ => v.to_string(),
    }
}

fn flink_rows(rows: &[Row]) -> Vec<String> {
    let mut out: Vec<String> = rows
        .iter()
        .map(|r| r.iter().map(flink_value).collect::<Vec<_>>().join(","))
        .collect();
    out.sort();
    out
}

/// Runs `INSERT INTO s <query>` (`s` has the columns `sink`) in every
/// variant and compares the result with Flink's expected rows.
fn expect(sink: &str, query: &str, want: &[&str]) {
    let mut want: Vec<String> = want.iter().map(|s| s.to_string()).collect();
    want.sort();
    for (cache, o) in variants() {
        let sql = format!(
            "{}CREATE TABLE s ({sink}) WITH ('connector' = 'blackhole');\nINSERT INTO s {query};",
            ddl(cache)
        );
        let (_, out) = run_mem(&sql, &sources(), &o, RunOptions::keep_all())
            .unwrap_or_else(|e| panic!("{e}\n{cache} {o:?}"));
        let result = out[0].sink_report().result.clone().unwrap();
        assert_eq!(flink_rows(&result), want, "{cache} {o:?}");
        let changelog = &out[0].changelog;
        assert!(
            changelog.iter().all(|c| c.kind == RowKind::Insert),
            "{cache} {o:?}"
        );
    }
}

const ID_LEN_CONTENT_NAME: &str = "id BIGINT, len INT, content STRING, name STRING";
const ID_LEN_NAME: &str = "id BIGINT, len INT, name STRING";
const ID_LEN_NAME_AGE: &str = "id BIGINT, len INT, name STRING, age INT";

#[test]
fn join_temporal_table() {
    expect(
        ID_LEN_CONTENT_NAME,
        "SELECT T.id, T.len, T.content, D.name FROM src AS T JOIN user_table \
         for system_time as of T.proctime AS D ON T.id = D.id",
        &[
            "1,12,Julian,Julian",
            "2,15,Hello,Jark",
            "3,15,Fabian,Fabian",
        ],
    );
}

#[test]
fn join_temporal_table_with_equal_filter() {
    expect(
        ID_LEN_CONTENT_NAME,
        "SELECT T.id, T.len, T.content, D.name FROM src AS T JOIN user_table for system_time as of T.proctime AS D \
         ON T.id = D.id WHERE UPPER(D.name) = 'JARK'",
        &["2,15,Hello,Jark"],
    );
}

#[test]
fn join_temporal_table_on_constant_key() {
    expect(
        ID_LEN_CONTENT_NAME,
        "SELECT T.id, T.len, T.content, D.name FROM src AS T JOIN user_table \
         for system_time as of T.proctime AS D ON D.id = 1",
        &[
            "1,12,Julian,Julian",
            "2,15,Hello,Julian",
            "3,15,Fabian,Julian",
            "8,11,Hello world,Julian",
            "9,12,Hello world!,Julian",
        ],
    );
}

#[test]
fn join_temporal_table_on_multi_key_fields_with_constant_key() {
    expect(
        ID_LEN_NAME,
        "SELECT T.id, T.len, D.name FROM src AS T JOIN user_table \
         for system_time as of T.proctime AS D ON T.content = D.name AND 3 = D.id",
        &["3,15,Fabian"],
    );
}

#[test]
fn join_temporal_table_on_multi_key_fields_with_string_constant_key() {
    expect(
        ID_LEN_NAME,
        "SELECT T.id, T.len, D.name FROM src AS T JOIN user_table \
         for system_time as of T.proctime AS D ON D.name = 'Fabian' AND T.id = D.id",
        &["3,15,Fabian"],
    );
}

#[test]
fn join_temporal_table_on_multi_constant_key() {
    expect(
        ID_LEN_NAME,
        "SELECT T.id, T.len, D.name FROM src AS T JOIN user_table \
         for system_time as of T.proctime AS D ON D.name = 'Fabian' AND 3 = D.id",
        &[
            "1,12,Fabian",
            "2,15,Fabian",
            "3,15,Fabian",
            "8,11,Fabian",
            "9,12,Fabian",
        ],
    );
}

#[test]
fn join_temporal_table_on_null_constant_key() {
    expect(
        "id BIGINT, len INT, content STRING",
        "SELECT T.id, T.len, T.content FROM nullable_src AS T JOIN nullable_user_table \
         for system_time as of T.proctime AS D ON D.id = null",
        &[],
    );
}

#[test]
fn join_temporal_table_on_multi_key_fields_with_null_constant_key() {
    expect(
        ID_LEN_NAME,
        "SELECT T.id, T.len, D.name FROM src AS T JOIN user_table \
         for system_time as of T.proctime AS D ON T.content = D.name AND null = D.id",
        &[],
    );
}

#[test]
fn join_temporal_table_on_nullable_key() {
    expect(
        ID_LEN_NAME,
        "SELECT T.id, T.len, D.name FROM nullable_src AS T JOIN user_table \
         for system_time as of T.proctime AS D ON T.id = D.id",
        &["3,15,Fabian"],
    );
}

#[test]
fn join_temporal_table_with_push_down() {
    expect(
        ID_LEN_CONTENT_NAME,
        "SELECT T.id, T.len, T.content, D.name FROM src AS T JOIN user_table \
         for system_time as of T.proctime AS D ON T.id = D.id AND D.age > 20",
        &["2,15,Hello,Jark", "3,15,Fabian,Fabian"],
    );
}

#[test]
fn join_temporal_table_with_non_equal_filter() {
    expect(
        "id BIGINT, len INT, content STRING, name STRING, age INT",
        "SELECT T.id, T.len, T.content, D.name, D.age FROM src AS T JOIN user_table \
         for system_time as of T.proctime AS D ON T.id = D.id WHERE T.len <= D.age",
        &["2,15,Hello,Jark,22", "3,15,Fabian,Fabian,33"],
    );
}

#[test]
fn join_temporal_table_on_multi_fields() {
    expect(
        ID_LEN_NAME,
        "SELECT T.id, T.len, D.name FROM src AS T JOIN user_table \
         for system_time as of T.proctime AS D ON T.id = D.id AND T.content = D.name",
        &["1,12,Julian", "3,15,Fabian"],
    );
}

#[test]
fn join_temporal_table_on_multi_key_fields() {
    expect(
        ID_LEN_NAME,
        "SELECT T.id, T.len, D.name FROM src AS T JOIN user_table \
         for system_time as of T.proctime AS D ON T.content = D.name AND T.id = D.id",
        &["1,12,Julian", "3,15,Fabian"],
    );
}

#[test]
fn join_temporal_table_on_multi_key_fields2() {
    // The left table's key columns in another order than the right's.
    expect(
        ID_LEN_NAME,
        "SELECT t1.id, t1.len, D.name FROM \
         (select proctime, content, id, len FROM src) t1 \
         JOIN user_table for system_time as of t1.proctime AS D \
         ON t1.content = D.name AND t1.id = D.id",
        &["1,12,Julian", "3,15,Fabian"],
    );
}

#[test]
fn left_join_temporal_table() {
    expect(
        ID_LEN_NAME_AGE,
        "SELECT T.id, T.len, D.name, D.age FROM src AS T LEFT JOIN user_table \
         for system_time as of T.proctime AS D ON T.id = D.id",
        &[
            "1,12,Julian,11",
            "2,15,Jark,22",
            "3,15,Fabian,33",
            "8,11,null,null",
            "9,12,null,null",
        ],
    );
}

#[test]
fn left_join_temporal_table_with_pre_filter() {
    expect(
        ID_LEN_NAME_AGE,
        "SELECT T.id, T.len, D.name, D.age FROM src AS T LEFT JOIN user_table \
         for system_time as of T.proctime AS D ON T.id = D.id AND T.len < 15",
        &[
            "1,12,Julian,11",
            "2,15,null,null",
            "3,15,null,null",
            "8,11,null,null",
            "9,12,null,null",
        ],
    );
}

#[test]
fn left_join_temporal_table_on_nullable_key() {
    expect(
        ID_LEN_NAME,
        "SELECT T.id, T.len, D.name FROM nullable_src AS T LEFT OUTER JOIN user_table \
         for system_time as of T.proctime AS D ON T.id = D.id",
        &["null,15,null", "3,15,Fabian", "null,11,null", "9,12,null"],
    );
}

#[test]
fn left_join_temporal_table_on_multi_key_fields() {
    expect(
        ID_LEN_NAME_AGE,
        "SELECT T.id, T.len, D.name, D.age FROM src AS T LEFT JOIN user_table \
         for system_time as of T.proctime AS D ON T.id = D.id and T.content = D.name",
        &[
            "1,12,Julian,11",
            "2,15,null,null",
            "3,15,Fabian,33",
            "8,11,null,null",
            "9,12,null,null",
        ],
    );
}

#[test]
fn join_temporal_table_on_multi_key_fields_with_null_data() {
    expect(
        ID_LEN_NAME,
        "SELECT T.id, T.len, D.name FROM nullable_src AS T JOIN nullable_user_table \
         for system_time as of T.proctime AS D ON T.content = D.name AND T.id = D.id",
        &["3,15,Fabian"],
    );
}

#[test]
fn left_join_temporal_table_on_multi_key_fields_with_null_data() {
    expect(
        ID_LEN_NAME,
        "SELECT D.id, T.len, D.name FROM nullable_src AS T LEFT JOIN nullable_user_table \
         for system_time as of T.proctime AS D ON T.content = D.name AND T.id = D.id",
        &[
            "null,15,null",
            "3,15,Fabian",
            "null,11,null",
            "null,12,null",
        ],
    );
}

#[test]
fn join_temporal_table_with_computed_column() {
    expect(
        "id BIGINT, len INT, content STRING, name STRING, age INT, nominal_age INT",
        "SELECT T.id, T.len, T.content, D.name, D.age, D.nominal_age \
         FROM src AS T JOIN userTableWithComputedColumn \
         for system_time as of T.proctime AS D ON T.id = D.id",
        &[
            "1,12,Julian,Julian,11,12",
            "2,15,Hello,Jark,22,23",
            "3,15,Fabian,Fabian,33,34",
        ],
    );
}

#[test]
fn join_temporal_table_with_computed_column_and_push_down() {
    expect(
        "id BIGINT, len INT, content STRING, name STRING, age INT, nominal_age INT",
        "SELECT T.id, T.len, T.content, D.name, D.age, D.nominal_age \
         FROM src AS T JOIN userTableWithComputedColumn \
         for system_time as of T.proctime AS D ON T.id = D.id and D.nominal_age > 12",
        &["2,15,Hello,Jark,22,23", "3,15,Fabian,Fabian,33,34"],
    );
}

/// Not one of Flink's cases: an updating probe. Each change is looked up
/// and emitted with its kind, so a `-U` retracts the joined row its `+I`
/// made (the dimension table does not change while the job runs).
#[test]
fn updating_probe_is_looked_up_per_change() {
    let mut sources = sources();
    let change = |kind: RowKind, id: i64, len: i64| {
        Change::new(kind, vec![Value::Int(id), Value::Int(len), Value::str("c")])
    };
    sources.0.insert(
        "changes".into(),
        vec![
            change(RowKind::Insert, 1, 10),
            change(RowKind::Insert, 2, 20),
            change(RowKind::UpdateBefore, 1, 10),
            change(RowKind::UpdateAfter, 1, 11),
            change(RowKind::Delete, 2, 20),
            change(RowKind::Insert, 8, 80),
        ],
    );
    for (cache, o) in variants() {
        let sql = format!(
            "{}CREATE TABLE changes (id BIGINT, len INT, content STRING, pt AS PROCTIME()) \
             WITH ('connector' = 'filesystem', 'path' = 'unused.csv', 'format' = 'changelog-csv');\n\
             CREATE TABLE s (id BIGINT, len INT, name STRING) WITH ('connector' = 'blackhole');\n\
             INSERT INTO s SELECT T.id, T.len, D.name FROM changes AS T LEFT JOIN user_table \
             FOR SYSTEM_TIME AS OF T.pt AS D ON T.id = D.id;",
            ddl(cache)
        );
        let (_, out) = run_mem(&sql, &sources, &o, RunOptions::keep_all())
            .unwrap_or_else(|e| panic!("{e}\n{cache} {o:?}"));
        let mut log: Vec<String> = out[0]
            .changelog
            .iter()
            .map(|c| {
                let values: Vec<String> = c.row.iter().map(flink_value).collect();
                format!("{}({})", c.kind.short(), values.join(","))
            })
            .collect();
        log.sort();
        let mut want = vec![
            "+I(1,10,Julian)",
            "+I(2,20,Jark)",
            "-U(1,10,Julian)",
            "+U(1,11,Julian)",
            "-D(2,20,Jark)",
            "+I(8,80,null)",
        ];
        want.sort();
        assert_eq!(log, want, "{cache} {o:?}");
        let result = out[0].sink_report().result.clone().unwrap();
        assert_eq!(
            flink_rows(&result),
            ["1,11,Julian", "8,80,null"],
            "{cache} {o:?}"
        );
    }
}
