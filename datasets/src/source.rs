//! Table connectors: opening sources and validating sinks from `WITH` options.
//!
//! Semantics. A `CREATE TABLE ... WITH ('connector' = '...', ...)` names its
//! connector and options exactly as in Flink; this module turns them into a
//! [`ChangeSource`] (for tables read by a query) or a [`SinkKind`] (for
//! tables written by `INSERT INTO`). Options are case-sensitive keys.
//!
//! Sources ([`open_source`]):
//!
//! | connector | options |
//! |---|---|
//! | `filesystem` | `path` (required; relative paths resolve against the SQL script's folder), `format` (required: `csv`, or `changelog-csv` = csv whose first field is the row kind), `csv.ignore-first-line` (`true`/`false`, default `false`), `csv.field-delimiter` (one character, default `,`; `\t` means tab), `source.monitor-interval` (a duration above zero: the source is unbounded, see `MonitoredFileSource`) |
//! | `datagen` | see [`crate::datagen`] |
//! | `uv`, `colors`, `tenant`, `orders`, `nexmark` | seeded workloads, see [`crate::workloads`] |
//!
//! Sinks ([`validate_sink_options`]): `blackhole` (no options), `print`
//! (`print-identifier`), `filesystem` (`path`, `format` = `csv`).
//!
//! A missing or unknown connector, an unknown option, a missing required
//! option or a bad value is an error that names the table and lists what is
//! allowed.
//!
//! A source yields changes in batches; `next_batch` returning 0 means it is
//! exhausted. Every source here reads or generates rows that depend on
//! nothing the job does, so the executor may read it ahead
//! ([`ChangeSource::can_read_ahead`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use operators::exec::ChangeSource;
use operators::operator::OpResult;
use operators::{Change, ChangelogMode, DataType};

use crate::csv_read::{CsvOptions, CsvSource};
use crate::datagen::DatagenSource;
use crate::error::{quote_list, DatasetError};
use crate::workloads;

/// A CSV file, read as it is parsed.
impl ChangeSource for CsvSource {
    fn next_batch(&mut self, max: usize, out: &mut Vec<Change>) -> OpResult<usize> {
        Ok(CsvSource::next_batch(self, max, out)?)
    }

    fn can_read_ahead(&self) -> bool {
        true
    }
}

/// An in-memory source (tests): yields the given changes in order.
#[derive(Debug)]
pub struct VecSource {
    changes: std::vec::IntoIter<Change>,
}

impl VecSource {
    pub fn new(changes: Vec<Change>) -> VecSource {
        VecSource {
            changes: changes.into_iter(),
        }
    }
}

impl ChangeSource for VecSource {
    fn next_batch(&mut self, max: usize, out: &mut Vec<Change>) -> OpResult<usize> {
        let before = out.len();
        out.extend(self.changes.by_ref().take(max));
        Ok(out.len() - before)
    }

    fn can_read_ahead(&self) -> bool {
        true
    }
}

/// Source connectors.
const SOURCE_CONNECTORS: [&str; 7] = [
    "colors",
    "datagen",
    "filesystem",
    "nexmark",
    "orders",
    "tenant",
    "uv",
];
/// Sink connectors.
const SINK_CONNECTORS: [&str; 3] = ["blackhole", "filesystem", "print"];

const FILESYSTEM_SOURCE_OPTIONS: [&str; 6] = [
    "connector",
    "path",
    "format",
    "csv.ignore-first-line",
    "csv.field-delimiter",
    "source.monitor-interval",
];

/// A `filesystem` table with `source.monitor-interval`: Flink's continuous
/// file source, which reads its file and then waits for new ones instead
/// of ending. No file appears during a lab run, so once read it reads
/// nothing more but stays open: unbounded, and silent, until the job ends
/// (an idle source with `table.exec.source.idle-timeout`).
struct MonitoredFileSource {
    file: CsvSource,
}

impl ChangeSource for MonitoredFileSource {
    fn next_batch(&mut self, max: usize, out: &mut Vec<Change>) -> OpResult<usize> {
        Ok(self.file.next_batch(max, out)?)
    }

    fn is_unbounded(&self) -> bool {
        true
    }
}

/// Opens the source of table `table_name` from its `WITH` options.
/// `base_dir` is the folder relative `path`s resolve against (the SQL
/// script's folder).
pub fn open_source(
    table_name: &str,
    options: &BTreeMap<String, String>,
    column_names: &[String],
    types: &[DataType],
    base_dir: &Path,
) -> Result<Box<dyn ChangeSource>, DatasetError> {
    let connector = connector(options, &SOURCE_CONNECTORS).map_err(|e| e.in_table(table_name))?;
    let source: Result<Box<dyn ChangeSource>, DatasetError> = match connector {
        "datagen" => DatagenSource::new(options, column_names, types)
            .map(|s| Box::new(s) as Box<dyn ChangeSource>),
        "filesystem" => open_filesystem(options, column_names, types, base_dir),
        other => workloads::open(other, options, column_names, types)
            .expect("connector() checks the name"),
    };
    source.map_err(|e| e.in_table(table_name))
}

/// The row kinds a source table may emit, from its `WITH` options:
/// everything for `filesystem` with `format` = `changelog-csv`, what
/// [`workloads::changelog_mode`] says for a workload connector (a `tenant`
/// table with updates emits `-U`/`+U`), insert-only otherwise. Options are
/// not validated here; [`open_source`] does that.
pub fn source_changelog_mode(options: &BTreeMap<String, String>) -> ChangelogMode {
    let connector = options.get("connector").map(|c| c.as_str()).unwrap_or("");
    match connector {
        "filesystem" if options.get("format").map(|f| f.trim()) == Some("changelog-csv") => {
            ChangelogMode::ALL
        }
        other => workloads::changelog_mode(other, options).unwrap_or(ChangelogMode::INSERT_ONLY),
    }
}

fn open_filesystem(
    options: &BTreeMap<String, String>,
    column_names: &[String],
    types: &[DataType],
    base_dir: &Path,
) -> Result<Box<dyn ChangeSource>, DatasetError> {
    check_keys(options, &FILESYSTEM_SOURCE_OPTIONS)?;
    let path = required(options, "path", "the file to read")?;
    let format = required(options, "format", "'csv' or 'changelog-csv'")?;
    let changelog_column = match format.trim() {
        "csv" => false,
        "changelog-csv" => true,
        other => {
            return Err(DatasetError::bad_option(
                "format",
                other,
                "'csv' or 'changelog-csv'",
            ))
        }
    };
    let has_header = match options.get("csv.ignore-first-line") {
        None => false,
        Some(v) => parse_bool("csv.ignore-first-line", v)?,
    };
    let delimiter = match options.get("csv.field-delimiter") {
        None => b',',
        Some(v) => parse_delimiter("csv.field-delimiter", v)?,
    };
    let csv_options = CsvOptions {
        has_header,
        changelog_column,
        delimiter,
    };
    let monitored = match options.get("source.monitor-interval") {
        None => false,
        Some(v) => {
            check_positive_duration("source.monitor-interval", v)?;
            true
        }
    };
    let source = CsvSource::open(
        &resolve_path(base_dir, path),
        types.to_vec(),
        column_names.to_vec(),
        csv_options,
    )?;
    if monitored {
        return Ok(Box::new(MonitoredFileSource { file: source }));
    }
    Ok(Box::new(source))
}

/// A duration above zero, as Flink writes them (`10 s`, `500ms`, `1 min`;
/// a bare number is milliseconds). The lab needs only that it is one.
fn check_positive_duration(key: &str, value: &str) -> Result<(), DatasetError> {
    const UNITS: [&str; 21] = [
        "",
        "ms",
        "milli",
        "millis",
        "millisecond",
        "milliseconds",
        "s",
        "sec",
        "secs",
        "second",
        "seconds",
        "m",
        "min",
        "minute",
        "minutes",
        "h",
        "hour",
        "hours",
        "d",
        "day",
        "days",
    ];
    let text = value.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let unit = unit.trim().to_ascii_lowercase();
    let ok = number.parse::<u64>().is_ok_and(|n| n > 0) && UNITS.contains(&unit.as_str());
    if ok {
        Ok(())
    } else {
        Err(DatasetError::bad_option(
            key,
            value,
            "a duration above zero (e.g. '10 s')",
        ))
    }
}

/// What an `INSERT INTO` target table writes to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SinkKind {
    /// Discards every row (`'connector' = 'blackhole'`).
    Blackhole,
    /// Prints the changelog (`'connector' = 'print'`; the optional
    /// `print-identifier` stays in the options for the printer to read).
    Print,
    /// Writes a result CSV file (`'connector' = 'filesystem'`). The path is
    /// as written in the options; resolve it with [`resolve_path`].
    Filesystem { path: PathBuf },
}

/// Checks the `WITH` options of a sink table and says what it writes to.
pub fn validate_sink_options(
    table_name: &str,
    options: &BTreeMap<String, String>,
) -> Result<SinkKind, DatasetError> {
    let sink = match connector(options, &SINK_CONNECTORS).map_err(|e| e.in_table(table_name))? {
        "blackhole" => check_keys(options, &["connector"]).map(|_| SinkKind::Blackhole),
        "print" => check_keys(options, &["connector", "print-identifier"]).map(|_| SinkKind::Print),
        "filesystem" => (|| {
            check_keys(options, &["connector", "path", "format"])?;
            let path = required(options, "path", "the file to write")?;
            let format = required(options, "format", "'csv'")?;
            if format.trim() != "csv" {
                return Err(DatasetError::bad_option("format", format, "'csv'"));
            }
            Ok(SinkKind::Filesystem {
                path: PathBuf::from(path),
            })
        })(),
        _ => unreachable!("connector() checks the name"),
    };
    sink.map_err(|e| e.in_table(table_name))
}

/// `path` itself when absolute, otherwise `base_dir/path`.
pub fn resolve_path(base_dir: &Path, path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base_dir.join(p)
    }
}

/// The `connector` option, checked against `allowed`.
fn connector<'a>(
    options: &'a BTreeMap<String, String>,
    allowed: &[&str],
) -> Result<&'a str, DatasetError> {
    let Some(c) = options.get("connector") else {
        return Err(DatasetError::missing(
            "connector",
            format!("one of: {}", quote_list(allowed)),
        ));
    };
    let c = c.as_str();
    if allowed.contains(&c) {
        Ok(c)
    } else {
        Err(DatasetError::UnknownConnector {
            table: String::new(),
            connector: c.to_string(),
            allowed: quote_list(allowed),
        })
    }
}

fn check_keys(options: &BTreeMap<String, String>, allowed: &[&str]) -> Result<(), DatasetError> {
    match options.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(DatasetError::unknown_option(k, allowed)),
        None => Ok(()),
    }
}

fn required<'a>(
    options: &'a BTreeMap<String, String>,
    key: &str,
    expected: &str,
) -> Result<&'a str, DatasetError> {
    options
        .get(key)
        .map(String::as_str)
        .ok_or_else(|| DatasetError::missing(key, expected))
}

fn parse_bool(key: &str, value: &str) -> Result<bool, DatasetError> {
    let v = value.trim();
    if v.eq_ignore_ascii_case("true") {
        Ok(true)
    } else if v.eq_ignore_ascii_case("false") {
        Ok(false)
    } else {
        Err(DatasetError::bad_option(key, value, "'true' or 'false'"))
    }
}

/// One ASCII character, or the escapes `\t` (tab) and `\\` (backslash), as
/// Flink's csv format accepts.
fn parse_delimiter(key: &str, value: &str) -> Result<u8, DatasetError> {
    match value {
        "\\t" => Ok(b'\t'),
        "\\\\" => Ok(b'\\'),
        v if v.len() == 1 && v.is_ascii() && v != "\n" && v != "\r" && v != "\"" => {
            Ok(v.as_bytes()[0])
        }
        _ => Err(DatasetError::bad_option(
            key,
            value,
            "a single ASCII character other than a quote or line break (or '\\t' for tab)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use operators::Value;

    fn opts(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn names(ns: &[&str]) -> Vec<String> {
        ns.iter().map(|s| s.to_string()).collect()
    }

    fn drain(mut s: Box<dyn ChangeSource>) -> Vec<Change> {
        let mut out = Vec::new();
        while s.next_batch(2, &mut out).unwrap() > 0 {}
        out
    }

    fn open_err(pairs: &[(&str, &str)]) -> String {
        match open_source(
            "clicks",
            &opts(pairs),
            &names(&["x"]),
            &[DataType::Int],
            Path::new("/tmp"),
        ) {
            Ok(_) => panic!("expected an error for {pairs:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn filesystem_source_resolves_relative_paths() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("data")).unwrap();
        std::fs::write(dir.path().join("data/in.csv"), "h\n1\n2\n3\n").unwrap();
        let s = open_source(
            "t",
            &opts(&[
                ("connector", "filesystem"),
                ("path", "data/in.csv"),
                ("format", "csv"),
                ("csv.ignore-first-line", "true"),
            ]),
            &names(&["x"]),
            &[DataType::Int],
            dir.path(),
        )
        .unwrap();
        let rows: Vec<Value> = drain(s).into_iter().map(|c| c.row[0].clone()).collect();
        assert_eq!(rows, vec![Value::Int(1), Value::Int(2), Value::Int(3)]);
    }

    #[test]
    fn changelog_csv_format_and_delimiter() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.csv");
        std::fs::write(&path, "+I|1\n-D|1\n").unwrap();
        let s = open_source(
            "t",
            &opts(&[
                ("connector", "filesystem"),
                ("path", path.to_str().unwrap()),
                ("format", "changelog-csv"),
                ("csv.field-delimiter", "|"),
            ]),
            &names(&["x"]),
            &[DataType::Int],
            Path::new("/elsewhere"),
        )
        .unwrap();
        let changes = drain(s);
        assert_eq!(
            changes,
            vec![
                Change::insert(vec![Value::Int(1)]),
                Change::delete(vec![Value::Int(1)])
            ]
        );
    }

    #[test]
    fn datagen_source_via_connector() {
        let s = open_source(
            "t",
            &opts(&[("connector", "datagen"), ("number-of-rows", "5")]),
            &names(&["x"]),
            &[DataType::Int],
            Path::new("."),
        )
        .unwrap();
        assert_eq!(drain(s).len(), 5);
    }

    #[test]
    fn datagen_errors_name_the_table() {
        let msg = open_err(&[
            ("connector", "datagen"),
            ("number-of-rows", "1"),
            ("fields.k.min", "x"),
        ]);
        assert_eq!(
            msg,
            "table 'clicks': option 'fields.k.min' names unknown column 'k'; columns are: 'x'"
        );
        let msg = open_err(&[
            ("connector", "datagen"),
            ("number-of-rows", "1"),
            ("fields.x.min", "x"),
        ]);
        assert_eq!(
            msg,
            "table 'clicks': option 'fields.x.min' = 'x': expected an integer"
        );
    }

    #[test]
    fn source_option_errors() {
        let cases = [
            (
                vec![],
                "table 'clicks': missing required option 'connector' (one of: 'colors', 'datagen', 'filesystem', 'nexmark', 'orders', 'tenant', 'uv')",
            ),
            (
                vec![("connector", "kafka")],
                "table 'clicks': unknown connector 'kafka'; expected one of: 'colors', 'datagen', 'filesystem', 'nexmark', 'orders', 'tenant', 'uv'",
            ),
            (
                vec![("connector", "filesystem"), ("format", "csv")],
                "table 'clicks': missing required option 'path' (the file to read)",
            ),
            (
                vec![("connector", "filesystem"), ("path", "a.csv")],
                "table 'clicks': missing required option 'format' ('csv' or 'changelog-csv')",
            ),
            (
                vec![("connector", "filesystem"), ("path", "a.csv"), ("format", "json")],
                "table 'clicks': option 'format' = 'json': expected 'csv' or 'changelog-csv'",
            ),
            (
                vec![("connector", "filesystem"), ("path", "a.csv"), ("format", "csv"), ("csv.ignore-first-line", "yes")],
                "table 'clicks': option 'csv.ignore-first-line' = 'yes': expected 'true' or 'false'",
            ),
            (
                vec![("connector", "filesystem"), ("path", "a.csv"), ("format", "csv"), ("csv.field-delimiter", ";;")],
                "table 'clicks': option 'csv.field-delimiter' = ';;': expected a single ASCII character",
            ),
            (
                vec![("connector", "filesystem"), ("path", "a.csv"), ("format", "csv"), ("sink.parallelism", "2")],
                "table 'clicks': unknown option 'sink.parallelism'; allowed options: 'connector', 'path', 'format', 'csv.ignore-first-line', 'csv.field-delimiter'",
            ),
            (
                vec![("connector", "filesystem"), ("path", "missing.csv"), ("format", "csv")],
                "cannot open '/tmp/missing.csv'",
            ),
        ];
        for (pairs, want) in cases {
            let msg = open_err(&pairs);
            assert!(
                msg.starts_with(want),
                "for {pairs:?}\n got: {msg}\nwant: {want}"
            );
        }
    }

    #[test]
    fn tab_delimiter_escape() {
        assert_eq!(parse_delimiter("k", "\\t").unwrap(), b'\t');
        assert_eq!(parse_delimiter("k", "\t").unwrap(), b'\t');
        assert_eq!(parse_delimiter("k", ";").unwrap(), b';');
        assert!(parse_delimiter("k", "\"").is_err());
        assert!(parse_delimiter("k", "").is_err());
    }

    #[test]
    fn vec_source_yields_in_batches() {
        let changes: Vec<Change> = (0..5)
            .map(|i| Change::insert(vec![Value::Int(i)]))
            .collect();
        let mut s = VecSource::new(changes.clone());
        let mut out = Vec::new();
        assert_eq!(s.next_batch(3, &mut out).unwrap(), 3);
        assert_eq!(s.next_batch(3, &mut out).unwrap(), 2);
        assert_eq!(s.next_batch(3, &mut out).unwrap(), 0);
        assert_eq!(out, changes);
    }

    #[test]
    fn sinks_validate() {
        let ok = |pairs: &[(&str, &str)]| validate_sink_options("out", &opts(pairs)).unwrap();
        assert_eq!(ok(&[("connector", "blackhole")]), SinkKind::Blackhole);
        assert_eq!(ok(&[("connector", "print")]), SinkKind::Print);
        assert_eq!(
            ok(&[("connector", "print"), ("print-identifier", "res")]),
            SinkKind::Print
        );
        assert_eq!(
            ok(&[
                ("connector", "filesystem"),
                ("path", "out/r.csv"),
                ("format", "csv")
            ]),
            SinkKind::Filesystem {
                path: PathBuf::from("out/r.csv")
            }
        );
        let err = |pairs: &[(&str, &str)]| {
            validate_sink_options("out", &opts(pairs))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err(&[("connector", "datagen")]),
            "table 'out': unknown connector 'datagen'; expected one of: 'blackhole', 'filesystem', 'print'"
        );
        assert_eq!(
            err(&[]),
            "table 'out': missing required option 'connector' (one of: 'blackhole', 'filesystem', 'print')"
        );
        assert_eq!(
            err(&[("connector", "blackhole"), ("path", "x")]),
            "table 'out': unknown option 'path'; allowed options: 'connector'"
        );
        assert_eq!(
            err(&[("connector", "print"), ("standard-error", "true")]),
            "table 'out': unknown option 'standard-error'; allowed options: 'connector', 'print-identifier'"
        );
        assert_eq!(
            err(&[
                ("connector", "filesystem"),
                ("path", "x.csv"),
                ("format", "changelog-csv")
            ]),
            "table 'out': option 'format' = 'changelog-csv': expected 'csv'"
        );
        assert_eq!(
            err(&[("connector", "filesystem"), ("format", "csv")]),
            "table 'out': missing required option 'path' (the file to write)"
        );
    }

    #[test]
    fn resolve_path_keeps_absolute_paths() {
        assert_eq!(
            resolve_path(Path::new("/a"), "b.csv"),
            PathBuf::from("/a/b.csv")
        );
        assert_eq!(
            resolve_path(Path::new("/a"), "/c/b.csv"),
            PathBuf::from("/c/b.csv")
        );
    }
}
