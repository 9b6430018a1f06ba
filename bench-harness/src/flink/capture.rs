//! Reading what the capture sink printed (see `flink/capture/`).
//!
//! Each subtask of a `lab-capture` sink writes to its TaskManager's
//! standard output, which the REST API serves for any cluster:
//!
//! ```text
//! LABROW    <identifier> <subtask> <kind> <fields as a JSON array>
//! LABCOUNTS <identifier> <subtask> <+I> <-U> <+U> <-D> <end of input>
//! ```
//!
//! (the end of input in ms since the epoch, by the TaskManager's clock;
//! older capture jars wrote no time)
//!
//! (tab-separated). A sink's changelog is its subtasks' rows, subtask by
//! subtask, each in the order it received them: Flink keeps the order of
//! one key's changes within a subtask, and nothing across subtasks.

use super::rewrite::SinkSpec;
use super::FlinkError;
use operators::changelog::KindCounts;
use operators::{Change, DataType, RowKind, Value};
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// What one sink received on Flink.
#[derive(Clone, Debug, Default)]
pub struct Captured {
    /// Rows by kind, from the subtasks' counts.
    pub counts: KindCounts,
    /// Subtasks that reported.
    pub subtasks: usize,
    /// Every row, subtask by subtask (empty in counts mode).
    pub changelog: Vec<Change>,
    /// When the last subtask's input ended (ms since the epoch, the
    /// TaskManager's clock), when every subtask said.
    pub end_of_input_ms: Option<u64>,
}

/// Whether `line` is a capture line of the run `run_id`.
pub fn is_run_line(line: &str, run_id: &str) -> bool {
    let rest = line
        .strip_prefix("LABROW\t")
        .or_else(|| line.strip_prefix("LABCOUNTS\t"));
    rest.and_then(|r| r.strip_prefix(run_id))
        .is_some_and(|r| r.starts_with('/'))
}

/// Collects the lines of `sink` from TaskManager output lines.
pub fn collect(lines: &[String], sink: &SinkSpec) -> Result<Captured, FlinkError> {
    let mut rows: BTreeMap<u32, Vec<Change>> = BTreeMap::new();
    let mut counts: BTreeMap<u32, KindCounts> = BTreeMap::new();
    let mut ends: BTreeMap<u32, Option<u64>> = BTreeMap::new();
    {
        for line in lines {
            let mut f = line.splitn(5, '\t');
            let tag = f.next().unwrap_or("");
            if tag != "LABROW" && tag != "LABCOUNTS" {
                continue;
            }
            if f.next() != Some(sink.identifier.as_str()) {
                continue;
            }
            let bad = || {
                FlinkError::execution(format!(
                    "sink '{}': cannot read the capture line '{line}'",
                    sink.name
                ))
            };
            let subtask: u32 = f.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
            if tag == "LABCOUNTS" {
                let rest: Vec<u64> = f
                    .flat_map(|s| s.split('\t'))
                    .map(|s| s.parse().map_err(|_| bad()))
                    .collect::<Result<_, _>>()?;
                let (i, ub, ua, d, end) = match rest[..] {
                    [i, ub, ua, d] => (i, ub, ua, d, None),
                    [i, ub, ua, d, end] => (i, ub, ua, d, Some(end)),
                    _ => return Err(bad()),
                };
                counts.insert(subtask, KindCounts([i, ub, ua, d]));
                ends.insert(subtask, end);
                continue;
            }
            let kind = f.next().and_then(RowKind::parse).ok_or_else(bad)?;
            let json: Json = f
                .next()
                .and_then(|s| serde_json::from_str(s).ok())
                .ok_or_else(bad)?;
            let row = parse_row(&json, &sink.types).map_err(|m| {
                FlinkError::execution(format!("sink '{}': {m} in '{line}'", sink.name))
            })?;
            rows.entry(subtask)
                .or_default()
                .push(Change::new(kind, row));
        }
    }
    let mut total = KindCounts::default();
    for c in counts.values() {
        total.merge(c);
    }
    let changelog: Vec<Change> = rows.into_values().flatten().collect();
    if !changelog.is_empty() && changelog.len() as u64 != total.total() {
        return Err(FlinkError::execution(format!(
            "sink '{}': {} rows captured but the subtasks counted {}",
            sink.name,
            changelog.len(),
            total.total()
        )));
    }
    let end_of_input_ms = ends
        .values()
        .copied()
        .collect::<Option<Vec<u64>>>()
        .and_then(|e| e.into_iter().max());
    Ok(Captured {
        counts: total,
        subtasks: counts.len(),
        changelog,
        end_of_input_ms,
    })
}

/// A JSON array of fields as a row of `types`.
pub fn parse_row(json: &Json, types: &[DataType]) -> Result<Vec<Value>, String> {
    let fields = json.as_array().ok_or("a row that is not a JSON array")?;
    if fields.len() != types.len() {
        return Err(format!(
            "{} fields where the sink has {}",
            fields.len(),
            types.len()
        ));
    }
    fields
        .iter()
        .zip(types)
        .map(|(f, ty)| parse_value(f, *ty))
        .collect()
}

fn parse_value(f: &Json, ty: DataType) -> Result<Value, String> {
    if f.is_null() {
        return Ok(Value::Null);
    }
    let bad = || format!("{f} is not a {}", ty.sql_name());
    Ok(match ty {
        DataType::Boolean => Value::Bool(f.as_bool().ok_or_else(bad)?),
        DataType::Int | DataType::BigInt => Value::Int(f.as_i64().ok_or_else(bad)?),
        DataType::Double => match f {
            Json::Number(n) => Value::Double(n.as_f64().ok_or_else(bad)?),
            Json::String(s) => Value::Double(match s.as_str() {
                "NaN" => f64::NAN,
                "Infinity" => f64::INFINITY,
                "-Infinity" => f64::NEG_INFINITY,
                _ => return Err(bad()),
            }),
            _ => return Err(bad()),
        },
        DataType::String => Value::str(f.as_str().ok_or_else(bad)?),
        DataType::Timestamp | DataType::TimestampLtz => Value::Ts(
            f.as_str()
                .and_then(operators::value::parse_timestamp)
                .ok_or_else(bad)?,
        ),
        DataType::Interval => Value::Int(f.as_i64().ok_or_else(bad)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sink() -> SinkSpec {
        SinkSpec {
            name: "s".into(),
            identifier: "r1/s".into(),
            columns: vec!["u".into(), "n".into(), "d".into()],
            types: vec![DataType::String, DataType::BigInt, DataType::Double],
            key: None,
        }
    }

    #[test]
    fn rows_and_counts_by_subtask() {
        let tm1 = "LABROW\tr1/s\t1\t+I\t[\"b\",1,0.5]\n\
                   LABROW\tr0/s\t0\t+I\t[\"x\",1,0.5]\n\
                   some other output\n\
                   LABCOUNTS\tr1/s\t1\t1\t0\t0\t0\t1700000000500\n";
        let tm2 = "LABROW\tr1/s\t0\t+I\t[\"a\\tb\",null,\"NaN\"]\n\
                   LABROW\tr1/s\t0\t-U\t[\"a\\tb\",null,\"NaN\"]\n\
                   LABCOUNTS\tr1/s\t0\t1\t1\t0\t0\t1700000000250\n";
        let lines: Vec<String> = tm1.lines().chain(tm2.lines()).map(str::to_string).collect();
        assert!(is_run_line(&lines[0], "r1"));
        assert!(!is_run_line(&lines[1], "r1"));
        assert!(!is_run_line(&lines[2], "r1"));
        assert!(!is_run_line(&lines[0], "r"));
        let c = collect(&lines, &sink()).unwrap();
        assert_eq!(c.counts, KindCounts([2, 1, 0, 0]));
        assert_eq!(c.subtasks, 2);
        assert_eq!(c.end_of_input_ms, Some(1700000000500));
        assert_eq!(c.changelog.len(), 3);
        assert_eq!(c.changelog[0].row[0], Value::str("a\tb"));
        assert!(c.changelog[0].row[1].is_null());
        assert_eq!(c.changelog[1].kind, RowKind::UpdateBefore);
        assert_eq!(
            c.changelog[2].row,
            vec![Value::str("b"), Value::Int(1), Value::Double(0.5)]
        );
    }

    #[test]
    fn counts_mode_and_bad_lines() {
        let c = collect(&["LABCOUNTS\tr1/s\t0\t5\t0\t3\t1".to_string()], &sink()).unwrap();
        assert_eq!(c.counts.total(), 9);
        assert!(c.changelog.is_empty());
        // A jar that wrote no time: no end of input.
        assert_eq!(c.end_of_input_ms, None);
        let e = collect(&["LABROW\tr1/s\t0\t+I\t[1,2,3]".to_string()], &sink()).unwrap_err();
        assert!(e.message.contains("is not a STRING"), "{}", e.message);
        let e = collect(
            &[
                "LABROW\tr1/s\t0\t+I\t[\"a\",1,1.0]".to_string(),
                "LABCOUNTS\tr1/s\t0\t2\t0\t0\t0".to_string(),
            ],
            &sink(),
        )
        .unwrap_err();
        assert!(e.message.contains("1 rows captured"), "{}", e.message);
    }
}
