//! Writing CSV files: changelogs and materialised results.
//!
//! Semantics:
//!
//! - [`ChangelogCsvWriter`] writes a header `op,<column names...>` and then
//!   one line per change, the row kind (`+I`, `-U`, `+U`, `-D`) first. The
//!   file reads back with [`crate::CsvSource`] and
//!   `changelog_column = true, has_header = true`.
//! - [`ResultCsvWriter`] writes a header of the column names and then one
//!   line per row. It reads back with `has_header = true`.
//! - Values print with `Value`'s `Display` (`Double` 2.0 as `2.0`, booleans
//!   as `TRUE`/`FALSE`); NULL is an empty field. Fields are quoted only when
//!   needed (a delimiter, quote or line break inside). An empty `STRING`
//!   prints as an empty field and so reads back as NULL.
//! - Atomicity: both write into a temporary file next to the target
//!   (`.<name>.<pid>-<n>.tmp`) and rename it into place in `finish()`, after
//!   flushing and syncing. A writer dropped without `finish()` (an error, a
//!   panic) deletes its temporary file, so a file at the target path is
//!   always complete; one of a killed process is removed by the next
//!   writer in the directory (`operators::debris`). Missing parent
//!   directories are created.
//! - Resumable ([`OutputMode::Resumable`], a run that takes checkpoints):
//!   the file is written under a fixed pending name (`.<name>.inprogress`)
//!   that outlives the process; each checkpoint commits a prefix of it
//!   ([`operators::sink::RowWriter::commit`]: flushed, synced, its length
//!   recorded), a resumed run cuts it back to the committed length and
//!   appends, and `finish()` renames it into place as before (a file
//!   already renamed into place at exactly the committed length, by a run
//!   killed while completing its files after its final checkpoint, is
//!   taken back first). So a run resumed after a kill writes the same
//!   bytes as one never killed.
//! - A target that exists and is not a regular file (`/dev/stdout`, a
//!   named pipe, `/dev/full`) is a stream, not a file to replace: rows are
//!   written straight to it, and a failed write is an error all the same.

use std::fmt::Write as _;
use std::fs::File;
use std::path::{Path, PathBuf};

use operators::sink::{RowWriter, SinkError};
use operators::{Change, Value};

use crate::csv_read::OP_COLUMN;
use crate::error::DatasetError;

/// How an output file is opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutputMode {
    /// Under a temporary name, renamed into place when complete.
    #[default]
    Atomic,
    /// Under a fixed pending name that a resumed run reopens: fresh
    /// (`None`), or cut back to the length a checkpoint committed.
    Resumable { from: Option<u64> },
}

/// The pending name of `name` in a resumable run.
fn pending_name(name: &std::ffi::OsStr) -> std::ffi::OsString {
    let mut p = std::ffi::OsString::from(".");
    p.push(name);
    p.push(".inprogress");
    p
}

/// A CSV file being written under a temporary name.
struct AtomicCsv {
    writer: Option<csv::Writer<File>>,
    /// The temporary file; empty when writing straight to a stream, or
    /// once renamed into place.
    tmp: PathBuf,
    path: PathBuf,
    record: csv::ByteRecord,
    text: String,
    /// Fields per line, including `lead` fields that are not row values.
    width: usize,
    /// Leading fields that are not row values (the `op` column).
    lead: usize,
    /// A resumable file's pending name stays when the writer is dropped
    /// unfinished: the run it belongs to resumes from it.
    keep_pending: bool,
}

impl AtomicCsv {
    /// Starts `path` under a temporary name; writes `header` as the first
    /// line unless `write_header` is false (it still sets the width).
    fn create(
        path: &Path,
        header: &[&str],
        lead: usize,
        mode: OutputMode,
    ) -> Result<AtomicCsv, DatasetError> {
        AtomicCsv::create_with(path, header, lead, true, mode)
    }

    fn create_with(
        path: &Path,
        header: &[&str],
        lead: usize,
        write_header: bool,
        mode: OutputMode,
    ) -> Result<AtomicCsv, DatasetError> {
        let io = |action: &'static str, path: &Path| {
            let path = path.to_path_buf();
            move |error| DatasetError::Io {
                action,
                path,
                error,
            }
        };
        let name = path.file_name().ok_or_else(|| DatasetError::Io {
            action: "create",
            path: path.to_path_buf(),
            error: std::io::Error::new(std::io::ErrorKind::InvalidInput, "the path names no file"),
        })?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let stream = std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
        let mut write_header = write_header;
        let (file, tmp) = if let (OutputMode::Resumable { from }, false) = (mode, stream) {
            std::fs::create_dir_all(&dir).map_err(io("create directory", &dir))?;
            let tmp = dir.join(pending_name(name));
            let file = match from {
                None => File::create(&tmp).map_err(io("create", &tmp))?,
                Some(len) => {
                    // A run killed while completing its files may have
                    // renamed this one into place already: whole, it is
                    // exactly the committed length; take it back.
                    let whole = std::fs::metadata(path).is_ok_and(|m| m.len() == len);
                    if !tmp.exists() && whole {
                        std::fs::rename(path, &tmp).map_err(io("take back", path))?;
                    }
                    let file = std::fs::OpenOptions::new()
                        .write(true)
                        .open(&tmp)
                        .map_err(io("reopen the pending output", &tmp))?;
                    let have = file.metadata().map_err(io("reopen", &tmp))?.len();
                    if have < len {
                        return Err(DatasetError::Io {
                            action: "resume",
                            path: tmp,
                            error: std::io::Error::new(
                                std::io::ErrorKind::UnexpectedEof,
                                format!(
                                    "the checkpoint committed {len} bytes, the file has {have}"
                                ),
                            ),
                        });
                    }
                    file.set_len(len).map_err(io("truncate", &tmp))?;
                    use std::io::Seek;
                    let mut file = file;
                    file.seek(std::io::SeekFrom::End(0))
                        .map_err(io("seek", &tmp))?;
                    // The header is in the committed bytes.
                    write_header = false;
                    file
                }
            };
            (file, tmp)
        } else if stream {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(io("open", path))?;
            (file, PathBuf::new())
        } else {
            std::fs::create_dir_all(&dir).map_err(io("create directory", &dir))?;
            // The process id and a counter keep concurrent writers apart;
            // what a killed writer left here goes first.
            operators::debris::sweep_temp_files(&dir);
            let tmp = operators::debris::temp_file_for(&dir.join(name));
            (File::create(&tmp).map_err(io("create", &tmp))?, tmp)
        };
        let writer = csv::WriterBuilder::new()
            .flexible(true)
            .buffer_capacity(1 << 16)
            .from_writer(file);
        let mut csv = AtomicCsv {
            writer: Some(writer),
            tmp,
            path: path.to_path_buf(),
            record: csv::ByteRecord::new(),
            text: String::new(),
            width: header.len(),
            lead: 0,
            keep_pending: matches!(mode, OutputMode::Resumable { .. }),
        };
        if write_header {
            csv.record.clear();
            for h in header {
                csv.record.push_field(h.as_bytes());
            }
            csv.flush_record()?;
        }
        csv.lead = lead;
        Ok(csv)
    }

    fn push_value(&mut self, v: &Value) {
        match v {
            Value::Null => self.record.push_field(b""),
            Value::Str(s) => self.record.push_field(s.as_bytes()),
            other => {
                self.text.clear();
                // Writing into a String cannot fail.
                let _ = write!(self.text, "{other}");
                self.record.push_field(self.text.as_bytes());
            }
        }
    }

    fn flush_record(&mut self) -> Result<(), DatasetError> {
        if self.record.len() != self.width {
            return Err(DatasetError::RowWidth {
                path: self.path.clone(),
                expected: self.width - self.lead,
                found: self.record.len().saturating_sub(self.lead),
            });
        }
        let writer = self.writer.as_mut().expect("writer present until finish");
        writer
            .write_byte_record(&self.record)
            .map_err(|e| csv_io(e, &self.path))
    }

    /// Flushes and syncs what was written; returns its length in bytes
    /// (`None` for a stream, which cannot be cut back).
    fn commit(&mut self) -> Result<Option<u64>, DatasetError> {
        let writer = self.writer.as_mut().expect("writer present until finish");
        let path = &self.path;
        let io = |action: &'static str| {
            move |error| DatasetError::Io {
                action,
                path: path.clone(),
                error,
            }
        };
        writer.flush().map_err(io("write"))?;
        if self.tmp.as_os_str().is_empty() {
            return Ok(None);
        }
        let file = writer.get_ref();
        file.sync_data().map_err(io("sync"))?;
        let len = file.metadata().map_err(io("sync"))?.len();
        Ok(Some(len))
    }

    fn finish(mut self) -> Result<(), DatasetError> {
        let writer = self.writer.take().expect("writer present until finish");
        let file = writer.into_inner().map_err(|e| DatasetError::Io {
            action: "write",
            path: self.path.clone(),
            error: e.into_error(),
        })?;
        if self.tmp.as_os_str().is_empty() {
            // A stream: flushed is all there is to finish.
            return Ok(());
        }
        file.sync_all().map_err(|error| DatasetError::Io {
            action: "sync",
            path: self.path.clone(),
            error,
        })?;
        drop(file);
        std::fs::rename(&self.tmp, &self.path).map_err(|error| DatasetError::Io {
            action: "rename into place",
            path: self.path.clone(),
            error,
        })?;
        // Renamed: nothing left for Drop to clean up.
        self.tmp = PathBuf::new();
        Ok(())
    }
}

impl Drop for AtomicCsv {
    fn drop(&mut self) {
        if !self.tmp.as_os_str().is_empty() && !self.keep_pending {
            self.writer = None;
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

fn csv_io(e: csv::Error, path: &Path) -> DatasetError {
    let message = e.to_string();
    let error = match e.into_kind() {
        csv::ErrorKind::Io(io) => io,
        _ => std::io::Error::other(message),
    };
    DatasetError::Io {
        action: "write",
        path: path.to_path_buf(),
        error,
    }
}

/// Writes a changelog: header `op,<columns>`, then `+I,1,a` and so on.
pub struct ChangelogCsvWriter {
    csv: AtomicCsv,
}

impl ChangelogCsvWriter {
    /// Starts `path` (under a temporary name) and writes the header.
    pub fn create(
        path: &Path,
        column_names: &[String],
    ) -> Result<ChangelogCsvWriter, DatasetError> {
        ChangelogCsvWriter::create_in(path, column_names, OutputMode::Atomic)
    }

    /// [`ChangelogCsvWriter::create`], opened as `mode` says.
    pub fn create_in(
        path: &Path,
        column_names: &[String],
        mode: OutputMode,
    ) -> Result<ChangelogCsvWriter, DatasetError> {
        let mut header = vec![OP_COLUMN];
        header.extend(column_names.iter().map(String::as_str));
        Ok(ChangelogCsvWriter {
            csv: AtomicCsv::create(path, &header, 1, mode)?,
        })
    }

    /// Appends one change; its row must have one value per column.
    pub fn write(&mut self, change: &Change) -> Result<(), DatasetError> {
        self.csv.record.clear();
        self.csv.record.push_field(change.kind.short().as_bytes());
        for v in &change.row {
            self.csv.push_value(v);
        }
        self.csv.flush_record()
    }

    /// Flushes, syncs and renames the file into place.
    pub fn finish(self) -> Result<(), DatasetError> {
        self.csv.finish()
    }
}

/// Writes rows, one line each: a result table (a header of column names
/// first), or the rows a `filesystem` sink receives ([`ResultCsvWriter::headless`]:
/// no header, Flink's `csv` format, so the file reads back as a `csv`
/// source). NULL is an empty field; the file appears complete (on
/// [`ResultCsvWriter::finish`]) or not at all.
pub struct ResultCsvWriter {
    csv: AtomicCsv,
}

impl ResultCsvWriter {
    /// Starts `path` (under a temporary name) and writes the header.
    pub fn create(path: &Path, column_names: &[String]) -> Result<ResultCsvWriter, DatasetError> {
        ResultCsvWriter::open(path, column_names, true, OutputMode::Atomic)
    }

    /// Like [`ResultCsvWriter::create`], without writing the header.
    pub fn headless(path: &Path, column_names: &[String]) -> Result<ResultCsvWriter, DatasetError> {
        ResultCsvWriter::open(path, column_names, false, OutputMode::Atomic)
    }

    /// [`ResultCsvWriter::headless`], opened as `mode` says.
    pub fn headless_in(
        path: &Path,
        column_names: &[String],
        mode: OutputMode,
    ) -> Result<ResultCsvWriter, DatasetError> {
        ResultCsvWriter::open(path, column_names, false, mode)
    }

    fn open(
        path: &Path,
        column_names: &[String],
        header: bool,
        mode: OutputMode,
    ) -> Result<ResultCsvWriter, DatasetError> {
        let names: Vec<&str> = column_names.iter().map(String::as_str).collect();
        Ok(ResultCsvWriter {
            csv: AtomicCsv::create_with(path, &names, 0, header, mode)?,
        })
    }

    /// Appends one row; it must have one value per column.
    pub fn write_row(&mut self, row: &[Value]) -> Result<(), DatasetError> {
        self.csv.record.clear();
        for v in row {
            self.csv.push_value(v);
        }
        self.csv.flush_record()
    }

    /// Flushes, syncs and renames the file into place.
    pub fn finish(self) -> Result<(), DatasetError> {
        self.csv.finish()
    }
}

/// Writes a whole changelog file in one call.
pub fn write_changelog_csv(
    path: &Path,
    column_names: &[String],
    changes: &[Change],
) -> Result<(), DatasetError> {
    let mut w = ChangelogCsvWriter::create(path, column_names)?;
    for c in changes {
        w.write(c)?;
    }
    w.finish()
}

/// `--changelog` writes the changes a sink receives as they arrive.
impl operators::sink::ChangeWriter for ChangelogCsvWriter {
    fn write(&mut self, change: &Change) -> Result<(), SinkError> {
        Ok(ChangelogCsvWriter::write(self, change)?)
    }

    fn commit(&mut self) -> Result<Option<u64>, SinkError> {
        Ok(self.csv.commit()?)
    }

    fn finish(self: Box<Self>) -> Result<(), SinkError> {
        Ok(ChangelogCsvWriter::finish(*self)?)
    }
}

/// A `filesystem` sink writes the rows it receives as they arrive.
impl RowWriter for ResultCsvWriter {
    fn write(&mut self, row: &[Value]) -> Result<(), SinkError> {
        Ok(self.write_row(row)?)
    }

    fn commit(&mut self) -> Result<Option<u64>, SinkError> {
        Ok(self.csv.commit()?)
    }

    fn finish(self: Box<Self>) -> Result<(), SinkError> {
        Ok(ResultCsvWriter::finish(*self)?)
    }
}

/// Writes a whole result file in one call.
pub fn write_result_csv<R: AsRef<[Value]>>(
    path: &Path,
    column_names: &[String],
    rows: &[R],
) -> Result<(), DatasetError> {
    let mut w = ResultCsvWriter::create(path, column_names)?;
    for r in rows {
        w.write_row(r.as_ref())?;
    }
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csv_read::{read_all, CsvOptions};
    use operators::{DataType, RowKind};

    fn names(ns: &[&str]) -> Vec<String> {
        ns.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn result_csv_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out").join("result.csv");
        let cols = names(&["id", "name", "score", "ok"]);
        let rows = vec![
            vec![
                Value::Int(1),
                Value::str("plain"),
                Value::Double(2.0),
                Value::Bool(true),
            ],
            vec![
                Value::Int(-7),
                Value::str("a,b \"q\"\nline"),
                Value::Double(0.1),
                Value::Bool(false),
            ],
            vec![Value::Null, Value::Null, Value::Null, Value::Null],
            vec![
                Value::Int(i64::MAX),
                Value::str(" spaced "),
                Value::Double(1e300),
                Value::Null,
            ],
        ];
        write_result_csv(&path, &cols, &rows).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("id,name,score,ok\n1,plain,2.0,TRUE\n"),
            "{text}"
        );
        let types = vec![
            DataType::BigInt,
            DataType::String,
            DataType::Double,
            DataType::Boolean,
        ];
        let options = CsvOptions {
            has_header: true,
            ..CsvOptions::default()
        };
        let back = read_all(&path, types, cols, options).unwrap();
        let back_rows: Vec<Vec<Value>> = back.into_iter().map(|c| c.row).collect();
        assert_eq!(back_rows, rows);
    }

    #[test]
    fn single_column_null_survives_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("one.csv");
        let cols = names(&["x"]);
        let rows = vec![vec![Value::Int(1)], vec![Value::Null], vec![Value::Int(3)]];
        write_result_csv(&path, &cols, &rows).unwrap();
        let options = CsvOptions {
            has_header: true,
            ..CsvOptions::default()
        };
        let back = read_all(&path, vec![DataType::Int], cols, options).unwrap();
        assert_eq!(back.into_iter().map(|c| c.row).collect::<Vec<_>>(), rows);
    }

    #[test]
    fn changelog_csv_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("changes.csv");
        let cols = names(&["user", "cnt"]);
        let changes = vec![
            Change::insert(vec![Value::str("u1"), Value::Int(1)]),
            Change::update_before(vec![Value::str("u1"), Value::Int(1)]),
            Change::update_after(vec![Value::str("u1"), Value::Int(2)]),
            Change::delete(vec![Value::str("u1"), Value::Int(2)]),
        ];
        write_changelog_csv(&path, &cols, &changes).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "op,user,cnt\n+I,u1,1\n-U,u1,1\n+U,u1,2\n-D,u1,2\n");
        let options = CsvOptions {
            has_header: true,
            changelog_column: true,
            ..CsvOptions::default()
        };
        let back = read_all(
            &path,
            vec![DataType::String, DataType::BigInt],
            cols,
            options,
        )
        .unwrap();
        assert_eq!(back, changes);
        assert_eq!(back[2].kind, RowKind::UpdateAfter);
    }

    #[test]
    fn unfinished_writer_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("partial.csv");
        {
            let mut w = ResultCsvWriter::create(&path, &names(&["a"])).unwrap();
            w.write_row(&[Value::Int(1)]).unwrap();
            // Dropped without finish().
        }
        assert!(!path.exists());
        let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(leftovers.is_empty(), "temporary file left behind");
    }

    #[test]
    fn file_appears_only_on_finish() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.csv");
        let mut w = ResultCsvWriter::create(&path, &names(&["a"])).unwrap();
        w.write_row(&[Value::Int(1)]).unwrap();
        assert!(!path.exists());
        w.finish().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a\n1\n");
    }

    #[test]
    fn wrong_row_width_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.csv");
        let mut w = ResultCsvWriter::create(&path, &names(&["a", "b"])).unwrap();
        let msg = w.write_row(&[Value::Int(1)]).unwrap_err().to_string();
        assert!(
            msg.contains("w.csv") && msg.contains("row has 1 values, expected 2"),
            "{msg}"
        );
        let mut c = ChangelogCsvWriter::create(&path, &names(&["a"])).unwrap();
        let msg = c.write(&Change::insert(vec![])).unwrap_err().to_string();
        assert!(msg.contains("row has 0 values, expected 1"), "{msg}");
    }
}
