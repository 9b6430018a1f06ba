//! Materialising the lab's sources as files Flink reads.
//!
//! A source table whose connector is the lab's (`datagen` with its skew
//! options, `uv`, `colors`, `tenant`, `orders`, `nexmark` (each of its
//! tables the events of its kind), and `filesystem` with the
//! lab's CSV options or `changelog-csv`) is read once with the lab's own
//! reader ([`datasets::open_source`]), so Flink gets the same rows in the
//! same order, and written as:
//!
//! - an insert-only input: CSV, read by Flink's `filesystem` connector with
//!   `'format' = 'csv'` and `'csv.null-literal' = '\N'` (so NULL and an
//!   empty string stay apart);
//! - a changelog input: `debezium-json`, one line per change: `+I` as
//!   `"op": "c"`, `-D` as `"d"`, and each `-U` with the `+U` right after
//!   it as one `"u"` with `before` and `after`, which Flink's
//!   `debezium-json` decodes back into the same `-U`, `+U` pair. An update
//!   half without its other half cannot be carried and is an error.
//!
//! Files are named by a hash of what defines their rows (schema, options,
//! and for a file its path, size and modification time), so a second run of
//! the same script reuses them.

use super::install::Fnv;
use super::FlinkError;
use operators::{Change, DataType, RowKind, Value};
use optimizer::logical::TableDef;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The text a CSV field holds for NULL.
pub const NULL_LITERAL: &str = "\\N";

/// How a materialised table is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Csv,
    DebeziumJson,
}

/// A source table written to a file.
#[derive(Clone, Debug)]
pub struct Materialized {
    pub path: PathBuf,
    pub format: Format,
}

impl Materialized {
    /// The `WITH` options of Flink's `filesystem` connector for the file,
    /// at `path` (the file's own, or where a bundle puts it).
    pub fn flink_options(&self, path: &str) -> BTreeMap<String, String> {
        let mut o = BTreeMap::new();
        o.insert("connector".to_string(), "filesystem".to_string());
        o.insert("path".to_string(), path.to_string());
        match self.format {
            Format::Csv => {
                o.insert("format".to_string(), "csv".to_string());
                o.insert("csv.null-literal".to_string(), NULL_LITERAL.to_string());
            }
            Format::DebeziumJson => {
                o.insert("format".to_string(), "debezium-json".to_string());
            }
        }
        o
    }
}

/// The connectors whose tables the lab materialises.
pub fn is_lab_source(options: &BTreeMap<String, String>) -> bool {
    match options.get("connector").map(String::as_str) {
        Some("uv" | "colors" | "tenant" | "orders" | "nexmark") => true,
        // Flink's datagen has neither the lab's seeds nor its distributions:
        // the lab's rows are what the script means.
        Some("datagen") => true,
        Some("filesystem") => true,
        _ => false,
    }
}

fn cache_key(table: &TableDef, base_dir: &Path) -> String {
    let mut h = Fnv::default();
    h.write(b"joinlab-data-v1");
    for f in &table.schema.fields {
        h.write(f.name.as_bytes());
        h.write(f.data_type.sql_name().as_bytes());
    }
    for (k, v) in &table.options {
        h.write(k.as_bytes());
        h.write(v.as_bytes());
    }
    if let Some(p) = table.options.get("path") {
        let file = datasets::resolve_path(base_dir, p);
        h.write(file.display().to_string().as_bytes());
        if let Ok(m) = std::fs::metadata(&file) {
            h.write(&m.len().to_le_bytes());
            if let Ok(t) = m.modified() {
                let d = t.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
                h.write(&d.as_nanos().to_le_bytes());
            }
        }
    }
    format!("{:016x}", h.0)
}

/// Writes (or reuses) the file of a source table.
pub fn materialize(
    table: &TableDef,
    base_dir: &Path,
    data_dir: &Path,
) -> Result<Materialized, FlinkError> {
    let mode = datasets::source_changelog_mode(&table.options);
    let format = if mode.is_insert_only() {
        Format::Csv
    } else {
        Format::DebeziumJson
    };
    let ext = match format {
        Format::Csv => "csv",
        Format::DebeziumJson => "json",
    };
    let path = data_dir.join(format!(
        "{}-{}.{ext}",
        safe_name(&table.name),
        cache_key(table, base_dir)
    ));
    let m = Materialized {
        path: path.clone(),
        format,
    };
    if path.exists() {
        return Ok(m);
    }
    std::fs::create_dir_all(data_dir)
        .map_err(|e| FlinkError::execution(format!("cannot create {}: {e}", data_dir.display())))?;
    // The file holds the physical columns: Flink computes the rest from
    // the table's DDL, as the lab does.
    let physical = table.physical();
    let names = physical.schema.names();
    let types = physical.schema.types();
    // The lab's `index.*` options describe the table in its index-lookup
    // store (delta join), not its rows.
    let options = optimizer::physical::job::connector_options(table);
    let mut source = datasets::open_source(&table.name, &options, &names, &types, base_dir)
        .map_err(|e| FlinkError::input(e.to_string()))?;
    let tmp = path.with_extension(format!("{ext}.{}.tmp", std::process::id()));
    let file = std::fs::File::create(&tmp)
        .map_err(|e| FlinkError::execution(format!("cannot create {}: {e}", tmp.display())))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
    let mut encoder = Encoder {
        table: &table.name,
        names: &names,
        types: &types,
        format,
        pending_before: None,
        line: String::new(),
        position: 0,
    };
    let written = (|| {
        let mut batch = Vec::new();
        loop {
            batch.clear();
            let n = source.next_batch(8192, &mut batch).map_err(|e| {
                if e.is_bad_input() {
                    FlinkError::input(e.to_string())
                } else {
                    FlinkError::execution(e.to_string())
                }
            })?;
            if n == 0 {
                break;
            }
            for c in batch.drain(..) {
                if encoder.encode(c)? {
                    out.write_all(encoder.line.as_bytes()).map_err(|e| {
                        FlinkError::execution(format!("cannot write {}: {e}", tmp.display()))
                    })?;
                }
            }
        }
        encoder.finish()?;
        out.flush()
            .map_err(|e| FlinkError::execution(format!("cannot write {}: {e}", tmp.display())))
    })();
    drop(out);
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, &path)
        .map_err(|e| FlinkError::execution(format!("cannot write {}: {e}", path.display())))?;
    Ok(m)
}

fn safe_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Turns changes into lines of the table's format.
struct Encoder<'a> {
    table: &'a str,
    names: &'a [String],
    types: &'a [DataType],
    format: Format,
    /// A `-U` waiting for its `+U`.
    pending_before: Option<Vec<Value>>,
    /// The line(s) of the last change, when `encode` returns true.
    line: String,
    /// Changes seen so far (for error messages).
    position: u64,
}

impl Encoder<'_> {
    /// Encodes `c` into `self.line`; false when it waits for its pair.
    fn encode(&mut self, c: Change) -> Result<bool, FlinkError> {
        self.position += 1;
        self.line.clear();
        match self.format {
            Format::Csv => {
                if c.kind != RowKind::Insert {
                    return Err(self.unpaired(c.kind, "an insert-only table"));
                }
                self.csv_row(&c.row)?;
                Ok(true)
            }
            Format::DebeziumJson => {
                if let Some(before) = self.pending_before.take() {
                    if c.kind != RowKind::UpdateAfter {
                        return Err(self.unpaired(RowKind::UpdateBefore, "debezium-json"));
                    }
                    let (b, a) = (self.json_row(&before), self.json_row(&c.row));
                    self.line = format!("{{\"before\":{b},\"after\":{a},\"op\":\"u\"}}\n");
                    return Ok(true);
                }
                match c.kind {
                    RowKind::Insert => {
                        let a = self.json_row(&c.row);
                        self.line = format!("{{\"before\":null,\"after\":{a},\"op\":\"c\"}}\n");
                        Ok(true)
                    }
                    RowKind::Delete => {
                        let b = self.json_row(&c.row);
                        self.line = format!("{{\"before\":{b},\"after\":null,\"op\":\"d\"}}\n");
                        Ok(true)
                    }
                    RowKind::UpdateBefore => {
                        self.pending_before = Some(c.row);
                        Ok(false)
                    }
                    RowKind::UpdateAfter => Err(self.unpaired(c.kind, "debezium-json")),
                }
            }
        }
    }

    fn finish(&mut self) -> Result<(), FlinkError> {
        match self.pending_before {
            Some(_) => Err(self.unpaired(RowKind::UpdateBefore, "debezium-json")),
            None => Ok(()),
        }
    }

    fn unpaired(&self, kind: RowKind, format: &str) -> FlinkError {
        FlinkError::input(format!(
            "table '{}': change {} is a lone {} that {format} cannot carry to Flink \
             (an update must be a -U followed by its +U)",
            self.table,
            self.position,
            kind.short()
        ))
    }

    fn csv_row(&mut self, row: &[Value]) -> Result<(), FlinkError> {
        for (i, v) in row.iter().enumerate() {
            if i > 0 {
                self.line.push(',');
            }
            match v {
                Value::Null => self.line.push_str(NULL_LITERAL),
                Value::Str(s) => {
                    if &**s == NULL_LITERAL {
                        return Err(FlinkError::input(format!(
                            "table '{}': change {}: the string '{NULL_LITERAL}' in column '{}' \
                             reads back as NULL on Flink",
                            self.table, self.position, self.names[i]
                        )));
                    }
                    if s.is_empty() || s.contains([',', '"', '\n', '\r']) || s.trim() != &**s {
                        self.line.push('"');
                        self.line.push_str(&s.replace('"', "\"\""));
                        self.line.push('"');
                    } else {
                        self.line.push_str(s);
                    }
                }
                other => scalar(&mut self.line, other, self.types[i]),
            }
        }
        self.line.push('\n');
        Ok(())
    }

    fn json_row(&self, row: &[Value]) -> String {
        let mut s = String::from("{");
        for (i, v) in row.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            s.push_str(&serde_json::to_string(&self.names[i]).expect("a string serialises"));
            s.push(':');
            match v {
                Value::Null => s.push_str("null"),
                Value::Str(t) => {
                    s.push_str(&serde_json::to_string(&**t).expect("a string serialises"))
                }
                // JSON's SQL timestamp format is a string.
                Value::Ts(t) => {
                    s.push('"');
                    s.push_str(&operators::value::format_timestamp(*t));
                    s.push('"');
                }
                other => scalar(&mut s, other, self.types[i]),
            }
        }
        s.push('}');
        s
    }
}

/// A non-string, non-NULL value as Flink's CSV and JSON formats read it.
fn scalar(out: &mut String, v: &Value, ty: DataType) {
    use std::fmt::Write as _;
    let _ = match v {
        Value::Bool(b) => write!(out, "{b}"),
        Value::Int(i) => write!(out, "{i}"),
        // Rust prints the shortest text that reads back as the same double.
        Value::Double(d) if ty == DataType::Double => write!(out, "{d:?}"),
        Value::Double(d) => write!(out, "{d}"),
        Value::Ts(t) => write!(out, "{}", operators::value::format_timestamp(*t)),
        Value::Null | Value::Str(_) => Ok(()),
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use operators::Change;

    fn encoder<'a>(names: &'a [String], types: &'a [DataType], format: Format) -> Encoder<'a> {
        Encoder {
            table: "t",
            names,
            types,
            format,
            pending_before: None,
            line: String::new(),
            position: 0,
        }
    }

    #[test]
    fn csv_keeps_null_and_empty_apart() {
        let names = vec!["a".to_string(), "b".to_string(), "c".to_string()];
        let types = [DataType::String, DataType::BigInt, DataType::Double];
        let mut e = encoder(&names, &types, Format::Csv);
        e.encode(Change::insert(vec![
            Value::str(""),
            Value::Null,
            Value::Double(0.1),
        ]))
        .unwrap();
        assert_eq!(e.line, "\"\",\\N,0.1\n");
        e.encode(Change::insert(vec![
            Value::str("x,\"y\""),
            Value::Int(-3),
            Value::Double(1e300),
        ]))
        .unwrap();
        assert_eq!(e.line, "\"x,\"\"y\"\"\",-3,1e300\n");
        let err = e
            .encode(Change::delete(vec![Value::Null, Value::Null, Value::Null]))
            .unwrap_err();
        assert_eq!(err.code, 2);
    }

    #[test]
    fn debezium_pairs_updates() {
        let names = vec!["k".to_string(), "p".to_string()];
        let types = [DataType::BigInt, DataType::String];
        let mut e = encoder(&names, &types, Format::DebeziumJson);
        assert!(e
            .encode(Change::insert(vec![Value::Int(1), Value::str("a")]))
            .unwrap());
        assert_eq!(
            e.line,
            "{\"before\":null,\"after\":{\"k\":1,\"p\":\"a\"},\"op\":\"c\"}\n"
        );
        assert!(!e
            .encode(Change::new(
                RowKind::UpdateBefore,
                vec![Value::Int(1), Value::str("a")]
            ))
            .unwrap());
        assert!(e
            .encode(Change::new(
                RowKind::UpdateAfter,
                vec![Value::Int(1), Value::str("b\"")]
            ))
            .unwrap());
        assert_eq!(
            e.line,
            "{\"before\":{\"k\":1,\"p\":\"a\"},\"after\":{\"k\":1,\"p\":\"b\\\"\"},\"op\":\"u\"}\n"
        );
        assert!(e
            .encode(Change::delete(vec![Value::Int(1), Value::Null]))
            .unwrap());
        assert_eq!(
            e.line,
            "{\"before\":{\"k\":1,\"p\":null},\"after\":null,\"op\":\"d\"}\n"
        );
        e.finish().unwrap();
        // A -U left alone at the end, and a +U without its -U.
        e.encode(Change::new(
            RowKind::UpdateBefore,
            vec![Value::Int(1), Value::Null],
        ))
        .unwrap();
        assert!(e.finish().unwrap_err().message.contains("lone -U"));
        let mut e = encoder(&names, &types, Format::DebeziumJson);
        let err = e
            .encode(Change::new(
                RowKind::UpdateAfter,
                vec![Value::Int(1), Value::Null],
            ))
            .unwrap_err();
        assert!(err.message.contains("lone +U"), "{}", err.message);
    }

    #[test]
    fn materialized_tables_are_reused() {
        let dir = tempfile::tempdir().unwrap();
        let sql = "CREATE TABLE t (k BIGINT, v BIGINT) WITH ('connector' = 'datagen', \
                   'number-of-rows' = '5', 'seed' = '3', 'fields.k.min' = '1', 'fields.k.max' = '9');";
        let script = optimizer::sql::parse_script(sql).unwrap();
        let table = script.catalog.get("t").unwrap();
        let m = materialize(table, dir.path(), &dir.path().join("data")).unwrap();
        assert_eq!(m.format, Format::Csv);
        let text = std::fs::read_to_string(&m.path).unwrap();
        assert_eq!(text.lines().count(), 5);
        let again = materialize(table, dir.path(), &dir.path().join("data")).unwrap();
        assert_eq!(again.path, m.path);
        assert_eq!(
            m.flink_options("/x.csv").get("csv.null-literal").unwrap(),
            "\\N"
        );
    }

    #[test]
    fn a_computed_column_is_left_to_the_reader() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("in.csv"), "a,1000\nb,2000\n").unwrap();
        let sql = "CREATE TABLE t (k STRING, ts_ms BIGINT, \
                   rowtime AS TO_TIMESTAMP_LTZ(ts_ms, 3), \
                   WATERMARK FOR rowtime AS rowtime - INTERVAL '1' SECOND) \
                   WITH ('connector' = 'filesystem', 'path' = 'in.csv', 'format' = 'csv');";
        let script = optimizer::sql::parse_script(sql).unwrap();
        let table = script.catalog.get("t").unwrap();
        let m = materialize(table, dir.path(), &dir.path().join("data")).unwrap();
        let text = std::fs::read_to_string(&m.path).unwrap();
        assert_eq!(text, "a,1000\nb,2000\n");
    }
}
