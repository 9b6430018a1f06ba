//! Reading CSV files for the `filesystem` connector.
//!
//! Semantics (Flink's `csv` format, plus the lab's `changelog-csv`):
//!
//! - Each non-blank line is one row; a blank line (including a trailing
//!   one) is skipped. There is no header unless [`CsvOptions::has_header`]
//!   is set (Flink's `'csv.ignore-first-line' = 'true'`), in which case the
//!   first line is skipped whatever it holds.
//! - Fields are separated by [`CsvOptions::delimiter`] (`,` by default) and
//!   may be double-quoted as in RFC 4180.
//! - With [`CsvOptions::changelog_column`] the first field of every line is
//!   the row kind (`+I`, `-U`, `+U`, `-D`, also `I`, `UB`, `UA`, `D`) and the
//!   columns follow; otherwise every row is an insert (`+I`).
//! - An empty field is NULL, for every type including `STRING`.
//! - `INT`, `BIGINT` and `DOUBLE` fields may be surrounded by whitespace,
//!   which is ignored (a field of only whitespace is NULL). `INT` must fit in
//!   32 bits. `DOUBLE` accepts what Rust's `f64` parser does (`1`, `2.5`,
//!   `-1e3`, `inf`, `NaN`). `BOOLEAN` is `true` or `false` in any case.
//!   `STRING` is taken verbatim (no trimming) and must be UTF-8.
//! - A line with the wrong number of fields or a field that does not parse
//!   is an error naming the file, the 1-based line, the column and the text;
//!   reading never panics on bad input.
//!
//! Speed: records are read into one reused `csv::ByteRecord` and fields are
//! parsed straight from its bytes; the only allocations per row are the row
//! `Vec` and the `STRING` values.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use operators::{Change, DataType, RowKind, Value};

use crate::error::DatasetError;

/// How a CSV file is laid out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvOptions {
    /// Skip the first line (`'csv.ignore-first-line' = 'true'`).
    pub has_header: bool,
    /// The first field of each line is the row kind (`changelog-csv`).
    pub changelog_column: bool,
    /// The field separator (`'csv.field-delimiter'`), one byte.
    pub delimiter: u8,
}

impl Default for CsvOptions {
    fn default() -> CsvOptions {
        CsvOptions {
            has_header: false,
            changelog_column: false,
            delimiter: b',',
        }
    }
}

/// The name used for the row-kind column in messages and written headers.
pub const OP_COLUMN: &str = "op";

/// Longest offending text quoted in full in an error message.
const MAX_QUOTED: usize = 80;

/// A CSV file read as a stream of changes, batch by batch.
pub struct CsvSource {
    reader: csv::Reader<File>,
    path: PathBuf,
    file: String,
    types: Vec<DataType>,
    column_names: Vec<String>,
    changelog_column: bool,
    record: csv::ByteRecord,
    skip_header: bool,
    done: bool,
}

impl std::fmt::Debug for CsvSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CsvSource")
            .field("file", &self.file)
            .field("types", &self.types)
            .field("column_names", &self.column_names)
            .field("changelog_column", &self.changelog_column)
            .field("done", &self.done)
            .finish()
    }
}

impl CsvSource {
    /// Opens `path` for reading rows of the given column types and names
    /// (names are used in error messages).
    pub fn open(
        path: &Path,
        types: Vec<DataType>,
        column_names: Vec<String>,
        options: CsvOptions,
    ) -> Result<CsvSource, DatasetError> {
        if types.len() != column_names.len() {
            return Err(DatasetError::SchemaMismatch {
                names: column_names.len(),
                types: types.len(),
            });
        }
        let file = File::open(path).map_err(|error| DatasetError::Io {
            action: "open",
            path: path.to_path_buf(),
            error,
        })?;
        let reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .delimiter(options.delimiter)
            .buffer_capacity(1 << 16)
            .from_reader(file);
        Ok(CsvSource {
            reader,
            path: path.to_path_buf(),
            file: path.display().to_string(),
            types,
            column_names,
            changelog_column: options.changelog_column,
            record: csv::ByteRecord::new(),
            skip_header: options.has_header,
            done: false,
        })
    }

    /// Appends up to `max` changes to `out` and returns how many; 0 means the
    /// file is exhausted (and stays 0 on later calls).
    pub fn next_batch(&mut self, max: usize, out: &mut Vec<Change>) -> Result<usize, DatasetError> {
        let mut n = 0;
        while n < max && !self.done {
            match self.reader.read_byte_record(&mut self.record) {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    break;
                }
                Err(e) => return Err(self.csv_error(e)),
            }
            if self.skip_header {
                self.skip_header = false;
                continue;
            }
            out.push(self.parse_record()?);
            n += 1;
        }
        Ok(n)
    }

    /// The file name used in messages.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The 1-based line where the current record starts.
    fn line(&self) -> u64 {
        self.record.position().map_or(0, |p| self.line_at(p))
    }

    /// The `csv` crate's own line counter skips blank lines and CRLF
    /// terminators, but its byte offset is exact up to the blank lines
    /// before a record; so on error the file is rescanned to count physical
    /// lines. Nothing of this runs on the happy path.
    fn line_at(&self, position: &csv::Position) -> u64 {
        physical_line(&self.path, position.byte()).unwrap_or_else(|| position.line())
    }

    fn parse_record(&self) -> Result<Change, DatasetError> {
        let record = &self.record;
        let offset = self.changelog_column as usize;
        let expected = self.types.len() + offset;
        if record.len() != expected {
            return Err(DatasetError::FieldCount {
                file: self.file.clone(),
                line: self.line(),
                expected,
                found: record.len(),
            });
        }
        let kind = if self.changelog_column {
            let text = &record[0];
            std::str::from_utf8(text)
                .ok()
                .and_then(RowKind::parse)
                .ok_or_else(|| self.bad_value(OP_COLUMN, "a row kind (+I, -U, +U or -D)", text))?
        } else {
            RowKind::Insert
        };
        let mut row = Vec::with_capacity(self.types.len());
        for (i, ty) in self.types.iter().enumerate() {
            let text = &record[i + offset];
            match parse_field(text, *ty) {
                Ok(v) => row.push(v),
                Err(expected) => return Err(self.bad_value(&self.column_names[i], expected, text)),
            }
        }
        Ok(Change { kind, row })
    }

    fn bad_value(&self, column: &str, expected: &str, text: &[u8]) -> DatasetError {
        DatasetError::BadValue {
            file: self.file.clone(),
            line: self.line(),
            column: column.to_string(),
            expected: expected.to_string(),
            found: quote_text(text),
        }
    }

    fn csv_error(&self, e: csv::Error) -> DatasetError {
        let line = e
            .position()
            .map_or_else(|| self.line(), |p| self.line_at(p));
        let message = e.to_string();
        match e.into_kind() {
            csv::ErrorKind::Io(error) => DatasetError::Io {
                action: "read",
                path: self.file.clone().into(),
                error,
            },
            _ => DatasetError::MalformedCsv {
                file: self.file.clone(),
                line,
                message,
            },
        }
    }
}

/// The 1-based line of the first byte at or after `byte` that is not a line
/// terminator, counting `\n`, `\r\n` and a lone `\r` as one terminator
/// each; `None` if the file cannot be read.
fn physical_line(path: &Path, byte: u64) -> Option<u64> {
    let mut reader = BufReader::with_capacity(1 << 16, File::open(path).ok()?);
    let mut line = 1u64;
    let mut offset = 0u64;
    let mut after_cr = false;
    loop {
        let buf = reader.fill_buf().ok()?;
        if buf.is_empty() {
            return Some(line);
        }
        let len = buf.len();
        for &b in buf {
            match b {
                b'\n' => {
                    if !after_cr {
                        line += 1;
                    }
                    after_cr = false;
                }
                b'\r' => {
                    line += 1;
                    after_cr = true;
                }
                _ if offset >= byte => return Some(line),
                _ => after_cr = false,
            }
            offset += 1;
        }
        reader.consume(len);
    }
}

/// The offending text for a message: lossy UTF-8, cut after
/// [`MAX_QUOTED`] characters.
fn quote_text(text: &[u8]) -> String {
    let s = String::from_utf8_lossy(text);
    if s.chars().count() > MAX_QUOTED {
        let cut: String = s.chars().take(MAX_QUOTED).collect();
        format!("{cut}...")
    } else {
        s.into_owned()
    }
}

/// Parses one field; on failure returns what was expected.
pub(crate) fn parse_field(text: &[u8], ty: DataType) -> Result<Value, &'static str> {
    if text.is_empty() {
        return Ok(Value::Null);
    }
    if ty == DataType::String {
        return std::str::from_utf8(text)
            .map(|s| Value::Str(Arc::from(s)))
            .map_err(|_| "STRING (UTF-8 text)");
    }
    let trimmed = text.trim_ascii();
    if trimmed.is_empty() {
        return Ok(Value::Null);
    }
    match ty {
        DataType::Int => match parse_i64(trimmed) {
            Some(i) if i32::try_from(i).is_ok() => Ok(Value::Int(i)),
            Some(_) => Err("INT (from -2147483648 to 2147483647)"),
            None => Err("INT"),
        },
        DataType::BigInt => parse_i64(trimmed).map(Value::Int).ok_or("BIGINT"),
        DataType::Double => std::str::from_utf8(trimmed)
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .map(Value::Double)
            .ok_or("DOUBLE"),
        DataType::Boolean => {
            if trimmed.eq_ignore_ascii_case(b"true") {
                Ok(Value::Bool(true))
            } else if trimmed.eq_ignore_ascii_case(b"false") {
                Ok(Value::Bool(false))
            } else {
                Err("BOOLEAN (true or false)")
            }
        }
        DataType::String => unreachable!("handled above"),
    }
}

/// Parses an optionally signed decimal integer from ASCII digits; `None` on
/// any other byte or on overflow.
pub(crate) fn parse_i64(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text.first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() {
        return None;
    }
    // Accumulate negatively so that i64::MIN parses without overflow.
    let mut acc: i64 = 0;
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        acc = acc.checked_mul(10)?.checked_sub(d as i64)?;
    }
    if negative {
        Some(acc)
    } else {
        acc.checked_neg()
    }
}

/// Reads a whole CSV file into memory.
pub fn read_all(
    path: &Path,
    types: Vec<DataType>,
    column_names: Vec<String>,
    options: CsvOptions,
) -> Result<Vec<Change>, DatasetError> {
    let mut source = CsvSource::open(path, types, column_names, options)?;
    let mut out = Vec::new();
    while source.next_batch(8192, &mut out)? > 0 {}
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_with(name: &str, text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::File::create(&path)
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        (dir, path)
    }

    fn names(ns: &[&str]) -> Vec<String> {
        ns.iter().map(|s| s.to_string()).collect()
    }

    fn read(
        text: &str,
        types: &[DataType],
        cols: &[&str],
        options: CsvOptions,
    ) -> Result<Vec<Change>, DatasetError> {
        let (_dir, path) = file_with("clicks.csv", text);
        read_all(&path, types.to_vec(), names(cols), options)
    }

    const TYPES: [DataType; 3] = [DataType::Int, DataType::String, DataType::Double];
    const COLS: [&str; 3] = ["user_id", "url", "score"];

    #[test]
    fn reads_typed_rows_as_inserts() {
        let rows = read(
            "1,a,2.5\n2,,\n 3 ,b c, -1e3 \n\n",
            &TYPES,
            &COLS,
            CsvOptions::default(),
        )
        .unwrap();
        assert_eq!(
            rows,
            vec![
                Change::insert(vec![Value::Int(1), Value::str("a"), Value::Double(2.5)]),
                Change::insert(vec![Value::Int(2), Value::Null, Value::Null]),
                Change::insert(vec![
                    Value::Int(3),
                    Value::str("b c"),
                    Value::Double(-1000.0)
                ]),
            ]
        );
    }

    #[test]
    fn header_is_skipped_when_asked() {
        let options = CsvOptions {
            has_header: true,
            ..CsvOptions::default()
        };
        let rows = read("user_id,url,score\n1,a,2\n", &TYPES, &COLS, options).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].row[0], Value::Int(1));
    }

    #[test]
    fn without_header_option_a_header_is_a_bad_value() {
        let err = read(
            "user_id,url,score\n1,a,2\n",
            &TYPES,
            &COLS,
            CsvOptions::default(),
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.ends_with("clicks.csv line 1, column 'user_id': expected INT, found \"user_id\""),
            "{msg}"
        );
    }

    #[test]
    fn changelog_column_gives_row_kinds() {
        let options = CsvOptions {
            changelog_column: true,
            ..CsvOptions::default()
        };
        let rows = read(
            "+I,1,a,1.0\n-U,1,a,1.0\n+U,1,b,2.0\n-D,1,b,2.0\n",
            &TYPES,
            &COLS,
            options,
        )
        .unwrap();
        let kinds: Vec<RowKind> = rows.iter().map(|c| c.kind).collect();
        assert_eq!(kinds, RowKind::ALL.to_vec());
    }

    #[test]
    fn bad_row_kind_names_line_and_op_column() {
        let options = CsvOptions {
            changelog_column: true,
            ..CsvOptions::default()
        };
        let err = read("+I,1,a,1.0\n*X,1,a,1.0\n", &TYPES, &COLS, options).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.ends_with("clicks.csv line 2, column 'op': expected a row kind (+I, -U, +U or -D), found \"*X\""),
            "{msg}"
        );
    }

    #[test]
    fn bad_int_names_file_line_and_column() {
        let text = "1,a,1\n2,b,2\n3,c,3\n4,d,4\n5,e,5\n6,f,6\nabc,g,7\n";
        let msg = read(text, &TYPES, &COLS, CsvOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            msg.ends_with("clicks.csv line 7, column 'user_id': expected INT, found \"abc\""),
            "{msg}"
        );
    }

    #[test]
    fn int_out_of_range_is_named() {
        let msg = read("3000000000,a,1\n", &TYPES, &COLS, CsvOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("line 1, column 'user_id': expected INT (from -2147483648 to 2147483647), found \"3000000000\""),
            "{msg}"
        );
    }

    #[test]
    fn bad_double_and_bigint_and_boolean() {
        let types = [DataType::BigInt, DataType::Double, DataType::Boolean];
        let cols = ["id", "amount", "flag"];
        let msg = |text: &str| {
            read(text, &types, &cols, CsvOptions::default())
                .unwrap_err()
                .to_string()
        };
        assert!(msg("1x,1,true\n").contains("line 1, column 'id': expected BIGINT, found \"1x\""));
        assert!(msg("1,2,true\n1,one,true\n")
            .contains("line 2, column 'amount': expected DOUBLE, found \"one\""));
        assert!(msg("1,2,yes\n")
            .contains("line 1, column 'flag': expected BOOLEAN (true or false), found \"yes\""));
        let ok = read(
            "9223372036854775807,1,TRUE\n-9223372036854775808,2,False\n",
            &types,
            &cols,
            CsvOptions::default(),
        )
        .unwrap();
        assert_eq!(
            ok[0].row,
            vec![Value::Int(i64::MAX), Value::Double(1.0), Value::Bool(true)]
        );
        assert_eq!(
            ok[1].row,
            vec![Value::Int(i64::MIN), Value::Double(2.0), Value::Bool(false)]
        );
        assert!(msg("9223372036854775808,1,true\n").contains("expected BIGINT"));
    }

    #[test]
    fn wrong_field_count_names_line() {
        let msg = read("1,a,1\n2,b,2\n3,c\n", &TYPES, &COLS, CsvOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            msg.ends_with("clicks.csv line 3: expected 3 fields, found 2"),
            "{msg}"
        );
        let options = CsvOptions {
            changelog_column: true,
            ..CsvOptions::default()
        };
        let msg = read("1,a,1\n", &TYPES, &COLS, options)
            .unwrap_err()
            .to_string();
        assert!(
            msg.ends_with("clicks.csv line 1: expected 4 fields, found 3"),
            "{msg}"
        );
    }

    #[test]
    fn line_numbers_count_quoted_newlines_and_blank_lines() {
        let text = "1,\"multi\nline\",1\n\n2,b,x\n";
        let msg = read(text, &TYPES, &COLS, CsvOptions::default())
            .unwrap_err()
            .to_string();
        assert!(msg.contains("line 4, column 'score'"), "{msg}");
    }

    #[test]
    fn line_numbers_count_crlf_and_lone_cr() {
        let msg = read(
            "1,a,1\r\n\r\n2,b,2\r\n3,c,x\r\n",
            &TYPES,
            &COLS,
            CsvOptions::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(msg.contains("line 4, column 'score'"), "{msg}");
        let msg = read("1,a,1\r2,b,x\r", &TYPES, &COLS, CsvOptions::default())
            .unwrap_err()
            .to_string();
        assert!(msg.contains("line 2, column 'score'"), "{msg}");
        let msg = read("\n\n1,a\n", &TYPES, &COLS, CsvOptions::default())
            .unwrap_err()
            .to_string();
        assert!(msg.ends_with("line 3: expected 3 fields, found 2"), "{msg}");
        let msg = read(
            "\u{feff}1,a,1\nx,b,2\n",
            &TYPES,
            &COLS,
            CsvOptions::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(msg.contains("line 2, column 'user_id'"), "{msg}");
    }

    #[test]
    fn invalid_utf8_string_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.csv");
        std::fs::write(&path, b"1,\xff\xfe,1\n").unwrap();
        let msg = read_all(&path, TYPES.to_vec(), names(&COLS), CsvOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("line 1, column 'url': expected STRING (UTF-8 text)"),
            "{msg}"
        );
    }

    #[test]
    fn missing_file_names_path() {
        let msg = read_all(
            Path::new("/nonexistent/x.csv"),
            vec![],
            vec![],
            CsvOptions::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(msg.starts_with("cannot open '/nonexistent/x.csv'"), "{msg}");
    }

    #[test]
    fn delimiter_and_crlf() {
        let options = CsvOptions {
            delimiter: b'\t',
            ..CsvOptions::default()
        };
        let rows = read("1\ta,b\t2\r\n", &TYPES, &COLS, options).unwrap();
        assert_eq!(
            rows[0].row,
            vec![Value::Int(1), Value::str("a,b"), Value::Double(2.0)]
        );
    }

    #[test]
    fn batches_respect_max() {
        let (_dir, path) = file_with("n.csv", "1\n2\n3\n4\n5\n");
        let mut src = CsvSource::open(
            &path,
            vec![DataType::Int],
            names(&["x"]),
            CsvOptions::default(),
        )
        .unwrap();
        let mut out = Vec::new();
        assert_eq!(src.next_batch(2, &mut out).unwrap(), 2);
        assert_eq!(src.next_batch(2, &mut out).unwrap(), 2);
        assert_eq!(src.next_batch(2, &mut out).unwrap(), 1);
        assert_eq!(src.next_batch(2, &mut out).unwrap(), 0);
        assert_eq!(src.next_batch(2, &mut out).unwrap(), 0);
        assert_eq!(out.len(), 5);
    }

    #[test]
    fn long_offending_text_is_cut() {
        let long = "x".repeat(200);
        let msg = read(
            &format!("{long},a,1\n"),
            &TYPES,
            &COLS,
            CsvOptions::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            msg.contains(&format!("found \"{}...\"", "x".repeat(80))),
            "{msg}"
        );
    }

    #[test]
    fn parse_i64_edges() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"+7"), Some(7));
        assert_eq!(parse_i64(b"-"), None);
        assert_eq!(parse_i64(b""), None);
        assert_eq!(parse_i64(b"1 2"), None);
    }
}
