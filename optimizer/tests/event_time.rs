//! Event time in DDL: `TIMESTAMP(3)`/`TIMESTAMP_LTZ(3)` columns, computed
//! columns, `INTERVAL` literals and `WATERMARK FOR ... AS ...`; bad input
//! is refused with its line and column.

mod common;

use common::{run_mem, MemSources};
use operators::changelog::Change;
use operators::value::Value;
use optimizer::session::RunOptions;
use optimizer::sql::parse_script;

const DDL: &str = "CREATE TABLE clicks (
  user_id STRING,
  ts_ms   BIGINT,
  ts AS TO_TIMESTAMP_LTZ(ts_ms, 3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'datagen');
";

#[test]
fn computed_column_and_watermark_bind() {
    let script = parse_script(DDL).unwrap();
    let def = script.catalog.get("clicks").unwrap();
    assert_eq!(def.schema.names(), ["user_id", "ts_ms", "ts"]);
    assert_eq!(
        def.schema.fields[2].data_type,
        operators::value::DataType::TimestampLtz
    );
    let w = def.watermark.as_ref().unwrap();
    assert_eq!(w.rowtime, 2);
    assert_eq!(w.text, "-(ts, 5000:INTERVAL SECOND)");
    assert_eq!(def.physical().schema.names(), ["user_id", "ts_ms"]);
}

#[test]
fn computed_columns_are_computed_on_read() {
    let sql = format!(
        "{DDL}CREATE TABLE out1 (u STRING, ts TIMESTAMP_LTZ(3), later TIMESTAMP_LTZ(3)) WITH ('connector' = 'blackhole');
INSERT INTO out1 SELECT user_id, ts, ts + INTERVAL '1' MINUTE FROM clicks;"
    );
    let mut sources = MemSources::default();
    sources.0.insert(
        "clicks".into(),
        vec![Change::insert(vec![
            Value::str("a"),
            Value::Int(1_602_288_005_123),
        ])],
    );
    let (_, out) = run_mem(&sql, &sources, &[], RunOptions::keep_all()).unwrap();
    let rows: Vec<String> = out[0].changelog.iter().map(|c| c.to_string()).collect();
    assert_eq!(
        rows,
        ["+I[a, 2020-10-10 00:00:05.123, 2020-10-10 00:01:05.123]"]
    );
}

fn error_of(sql: &str) -> String {
    parse_script(sql).unwrap_err().to_string()
}

#[test]
fn bad_time_ddl_is_refused_where_it_is() {
    let cases = [
        (
            "CREATE TABLE c (\n  a BIGINT,\n  WATERMARK FOR a AS a - INTERVAL '5' SECOND\n) WITH ('connector' = 'datagen');",
            "validation error at line 3, column 17: Invalid data type of time field for watermark definition. The field must be of type TIMESTAMP(3) or TIMESTAMP_LTZ(3), but the time field 'a' is BIGINT",
        ),
        (
            "CREATE TABLE c (\n  a BIGINT,\n  ts AS TO_TIMESTAMP_LTZ(a, 3),\n  WATERMARK FOR ts AS ts - INTERVAL '5x' SECOND\n) WITH ('connector' = 'datagen');",
            "validation error at line 4, column 37: Illegal interval literal format '5x' for INTERVAL SECOND",
        ),
        (
            "CREATE TABLE c (\n  a BIGINT,\n  ts AS TO_TIMESTAMP_LTZ(a, 3),\n  WATERMARK FOR tss AS ts - INTERVAL '5' SECOND\n) WITH ('connector' = 'datagen');",
            "validation error at line 4, column 17: The rowtime attribute field 'tss' is not defined in the table schema of 'c'. Did you mean 'ts'?",
        ),
        (
            "CREATE TABLE c (\n  a BIGINT,\n  ts AS TO_TIMESTAMP_LTZ(a, 3),\n  WATERMARK FOR ts AS a - 5\n) WITH ('connector' = 'datagen');",
            "validation error at line 4, column 23: Invalid data type of expression for watermark definition. The expression must return TIMESTAMP(3) or TIMESTAMP_LTZ(3), but 'a - 5' is BIGINT",
        ),
        (
            "CREATE TABLE c (\n  a STRING,\n  ts AS TO_TIMESTAMP_LTZ(a, 3)\n) WITH ('connector' = 'datagen');",
            "validation error at line 3, column 26: TO_TIMESTAMP_LTZ takes an integer epoch, found STRING: 'a'",
        ),
    ];
    for (sql, want) in cases {
        assert_eq!(error_of(sql), want, "{sql}");
    }
}
