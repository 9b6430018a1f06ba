//! `PROCTIME()` computed columns: the processing-time attribute binds as
//! Flink's `TIMESTAMP_LTZ(3) NOT NULL`, is filled from the lab's clock when
//! a batch is read (`lab.clock = deterministic`: the rows read before it),
//! and is refused, with where, anywhere else.

mod common;

use common::{run_mem, MemSources};
use operators::changelog::Change;
use operators::value::{DataType, Value};
use optimizer::session::RunOptions;
use optimizer::sql::parse_script;

const DDL: &str = "CREATE TABLE clicks (
  user_id STRING,
  dwell   INT,
  pt AS PROCTIME()
) WITH ('connector' = 'datagen');
CREATE TABLE out1 (u STRING, pt TIMESTAMP_LTZ(3)) WITH ('connector' = 'blackhole');
";

#[test]
fn proctime_binds_as_a_not_null_timestamp_ltz() {
    let script = parse_script(DDL).unwrap();
    let def = script.catalog.get("clicks").unwrap();
    assert_eq!(def.schema.names(), ["user_id", "dwell", "pt"]);
    assert_eq!(def.schema.fields[2].data_type, DataType::TimestampLtz);
    assert!(!def.schema.fields[2].nullable);
    assert_eq!(def.physical().schema.names(), ["user_id", "dwell"]);
}

#[test]
fn proctime_is_the_labs_clock_when_the_batch_is_read() {
    let sql = format!("{DDL}INSERT INTO out1 SELECT user_id, pt FROM clicks WHERE dwell > 0;");
    let mut sources = MemSources::default();
    sources.0.insert(
        "clicks".into(),
        (0..5)
            .map(|i| Change::insert(vec![Value::str(&format!("u{i}")), Value::Int(i)]))
            .collect(),
    );
    let overrides = [
        ("lab.clock", "deterministic".to_string()),
        ("lab.source.batch-size", "2".to_string()),
    ];
    let (_, out) = run_mem(&sql, &sources, &overrides, RunOptions::keep_all()).unwrap();
    let rows: Vec<String> = out[0].changelog.iter().map(|c| c.to_string()).collect();
    // Batches [u0 u1] [u2 u3] [u4]: each row carries the clock as its batch
    // was read (one millisecond per row read before it); u0 is filtered.
    assert_eq!(
        rows,
        [
            "+I[u1, 1970-01-01 00:00:00.000]",
            "+I[u2, 1970-01-01 00:00:00.002]",
            "+I[u3, 1970-01-01 00:00:00.002]",
            "+I[u4, 1970-01-01 00:00:00.004]",
        ]
    );
}

#[test]
fn proctime_elsewhere_is_refused_where_it_is() {
    let cases = [
        (
            "CREATE TABLE c (\n  a BIGINT,\n  pt AS PROCTIME(a)\n) WITH ('connector' = 'datagen');",
            "validation error at line 3, column 9: PROCTIME() takes no arguments",
        ),
        (
            "CREATE TABLE c (a BIGINT) WITH ('connector' = 'datagen');\nCREATE TABLE o (a BIGINT, t TIMESTAMP_LTZ(3)) WITH ('connector' = 'blackhole');\nINSERT INTO o SELECT a, PROCTIME() FROM c;",
            "unsupported SQL at line 3, column 25: PROCTIME() is supported as a table's computed column (pt AS PROCTIME()), not in a query",
        ),
    ];
    for (sql, want) in cases {
        assert_eq!(parse_script(sql).unwrap_err().to_string(), want, "{sql}");
    }
}

#[test]
fn a_compiled_plan_keeps_the_proctime_column() {
    use optimizer::physical::{compiled_plan, plan_insert};
    use optimizer::session::{configs_per_insert, Action};
    let sql = format!("{DDL}INSERT INTO out1 SELECT user_id, pt FROM clicks;");
    let script = parse_script(&sql).unwrap();
    let mut plans = 0;
    for (action, config) in configs_per_insert(&script, &[]).unwrap() {
        let Action::Run(set) = action else { continue };
        for insert in set {
            let plan = plan_insert(&insert, &script.catalog, &config).unwrap();
            let json = compiled_plan::compile(&plan);
            assert!(json.contains("\"ProcTime\""), "{json}");
            let loaded = compiled_plan::load(&json, "p.json").unwrap();
            assert_eq!(compiled_plan::compile(&loaded), json);
            plans += 1;
        }
    }
    assert_eq!(plans, 1);
}
