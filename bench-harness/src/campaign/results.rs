//! `results.csv`: one row per point, variant, repeat and sink.
//!
//! A running campaign appends to `results.csv.partial`, flushing after
//! every row, and renames it to `results.csv` only when every run is done,
//! so an interrupted campaign never leaves a file that looks complete.
//! Whenever the partial file is rewritten (on `--resume`, or sorted before
//! the rename) the new one is written beside it and renamed over it: a
//! kill at any moment leaves the partial file or the complete one.

use super::CampaignError;
use std::fs::File;
use std::path::Path;

pub const RESULTS: &str = "results.csv";
pub const PARTIAL: &str = "results.csv.partial";

/// A CSV file held as text: its header and rows.
#[derive(Clone, Debug)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// Reads a complete results file; every row must have every column.
    pub fn read(path: &Path) -> Result<Table, CampaignError> {
        let bad = |e: &dyn std::fmt::Display| {
            CampaignError::input(format!("cannot read {}: {e}", path.display()))
        };
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .from_path(path)
            .map_err(|e| bad(&e))?;
        let header: Vec<String> = reader
            .headers()
            .map_err(|e| bad(&e))?
            .iter()
            .map(str::to_string)
            .collect();
        let mut rows = Vec::new();
        for r in reader.records() {
            let r = r.map_err(|e| bad(&e))?;
            rows.push(r.iter().map(str::to_string).collect());
        }
        Ok(Table { header, rows })
    }

    /// Reads what an interrupted campaign left: a row cut short by the
    /// interruption (wrong number of fields, or a last line without its
    /// newline) is dropped. `None` for a file without a header.
    pub fn read_partial(path: &Path) -> Result<Option<Table>, CampaignError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| CampaignError::input(format!("cannot read {}: {e}", path.display())))?;
        // Only whole lines were written completely.
        let complete = match text.rfind('\n') {
            Some(i) => &text[..=i],
            None => return Ok(None),
        };
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(complete.as_bytes());
        let mut records = reader.records();
        let header: Vec<String> = match records.next() {
            Some(Ok(h)) => h.iter().map(str::to_string).collect(),
            _ => return Ok(None),
        };
        let mut rows = Vec::new();
        for r in records {
            match r {
                Ok(r) if r.len() == header.len() => {
                    rows.push(r.iter().map(str::to_string).collect())
                }
                _ => {}
            }
        }
        Ok(Some(Table { header, rows }))
    }

    /// The index of column `name`.
    pub fn col(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }
}

/// Appends rows to a results file, flushing after each.
pub struct RowWriter {
    writer: csv::Writer<File>,
    path: std::path::PathBuf,
}

impl RowWriter {
    /// Replaces `path` with a file of `header` and `rows` (written under a
    /// temporary name and renamed over it, so a kill leaves the old file or
    /// the new one, never a truncated one) and opens it to append.
    pub fn replace(
        path: &Path,
        header: &[String],
        rows: &[Vec<String>],
    ) -> Result<RowWriter, CampaignError> {
        write_table(path, header, rows)?;
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| write_error(path, e))?;
        Ok(RowWriter {
            writer: csv::Writer::from_writer(file),
            path: path.to_path_buf(),
        })
    }

    /// Writes one row and flushes it to the file.
    pub fn write(&mut self, row: &[String]) -> Result<(), CampaignError> {
        self.writer
            .write_record(row)
            .and_then(|_| self.writer.flush().map_err(csv::Error::from))
            .map_err(|e| {
                CampaignError::execution(format!("cannot write {}: {e}", self.path.display()))
            })
    }
}

/// Writes `header` and `rows` to `path` through a temporary file.
pub fn write_table(
    path: &Path,
    header: &[String],
    rows: &[Vec<String>],
) -> Result<(), CampaignError> {
    crate::files::write_atomic_with(path, |tmp| {
        let file = File::create(tmp).map_err(|e| write_error(path, e).message)?;
        let mut w = csv::Writer::from_writer(file);
        for r in std::iter::once(header).chain(rows.iter().map(|r| r.as_slice())) {
            w.write_record(r)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        let file = w
            .into_inner()
            .map_err(|e| format!("cannot write {}: {}", path.display(), e.error()))?;
        file.sync_all()
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    })
    .map_err(CampaignError::execution)
}

fn write_error(path: &Path, e: std::io::Error) -> CampaignError {
    CampaignError::execution(format!("cannot write {}: {e}", path.display()))
}
