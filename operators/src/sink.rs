//! The sink end of a job: counts the changelog it receives by kind,
//! materialises it, and optionally keeps every row (for `--changelog`).
//!
//! Materialising is optional (a blackhole sink in Flink keeps nothing, and
//! the lab should not charge its cost to the operators measured).
//! A retract sink materialises a multiset (`+I`/`+U` add, `-U`/`-D` remove).
//! An upsert sink keeps one row per primary key: `+I`/`+U` overwrite, `-D`
//! deletes, and `-U` (if an upstream still sends it) is ignored.
//! A sink that writes somewhere (a `filesystem` table) hands each row to
//! its [`RowWriter`] as it arrives, so the rows are never all in memory;
//! so does `--changelog` through a [`ChangeWriter`], kind and row.

use crate::changelog::{Change, KindCounts, Multiset, RowKind, SinkEncoding};
use crate::checkpoint::SinkImage;
use crate::state::heap::{new_map, Map};
use crate::value::{cmp_rows, Row, Value};

/// Where a sink writes the rows it receives, in arrival order.
pub trait RowWriter: Send {
    fn write(&mut self, row: &[Value]) -> Result<(), SinkError>;
    /// At a checkpoint: makes everything written so far durable and
    /// returns how many bytes that is, the length a resumed run truncates
    /// its output back to; `None` if the writer cannot resume.
    fn commit(&mut self) -> Result<Option<u64>, SinkError> {
        Ok(None)
    }
    /// Completes the output: until then it must not look complete.
    fn finish(self: Box<Self>) -> Result<(), SinkError>;
}

/// Where a sink writes every change it receives, kind and row, in arrival
/// order (`lab run --changelog`): the changelog streams to its file instead
/// of being kept, so memory does not grow with its length.
pub trait ChangeWriter: Send {
    fn write(&mut self, change: &Change) -> Result<(), SinkError>;
    /// As [`RowWriter::commit`].
    fn commit(&mut self) -> Result<Option<u64>, SinkError> {
        Ok(None)
    }
    /// Completes the output: until then it must not look complete.
    fn finish(self: Box<Self>) -> Result<(), SinkError>;
}

/// Why a sink's writer failed (IO: a full disk, a path it cannot write),
/// with the writer's own error as the cause.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct SinkError(pub Box<dyn std::error::Error + Send + Sync>);

pub struct SinkCollector {
    encoding: SinkEncoding,
    counts: KindCounts,
    retract: Multiset,
    upsert: Map<Row, Row>,
    keep_changelog: bool,
    materialize: bool,
    changelog: Vec<Change>,
    /// Print each row as Flink's print connector does, with this prefix.
    print: Option<String>,
    writer: Option<Box<dyn RowWriter>>,
    changelog_writer: Option<Box<dyn ChangeWriter>>,
}

impl SinkCollector {
    pub fn new(
        encoding: SinkEncoding,
        keep_changelog: bool,
        materialize: bool,
        print: Option<String>,
    ) -> SinkCollector {
        SinkCollector {
            encoding,
            counts: KindCounts::default(),
            retract: Multiset::new(),
            upsert: new_map(),
            keep_changelog,
            materialize,
            changelog: Vec::new(),
            print,
            writer: None,
            changelog_writer: None,
        }
    }

    /// Writes every row from now on to `writer`.
    pub fn set_writer(&mut self, writer: Box<dyn RowWriter>) {
        self.writer = Some(writer);
    }

    /// Writes every change from now on to `writer`; the owner completes it
    /// ([`SinkCollector::take_changelog_writer`]).
    pub fn set_changelog_writer(&mut self, writer: Box<dyn ChangeWriter>) {
        self.changelog_writer = Some(writer);
    }

    /// The changelog writer, not yet completed: whoever asked for it
    /// decides when its output is complete.
    pub fn take_changelog_writer(&mut self) -> Option<Box<dyn ChangeWriter>> {
        self.changelog_writer.take()
    }

    /// Completes the writer's output, if there is one.
    pub fn finish_writer(&mut self) -> Result<(), SinkError> {
        match self.writer.take() {
            Some(w) => w.finish(),
            None => Ok(()),
        }
    }

    /// Takes a batch; fails only when the writer does.
    pub fn consume(&mut self, batch: Vec<Change>) -> Result<(), SinkError> {
        for c in batch {
            self.counts.add(c.kind);
            if let Some(prefix) = &self.print {
                use std::io::Write;
                let printed = writeln!(std::io::stdout().lock(), "{prefix}{c}");
                match printed {
                    Ok(()) => {}
                    // The reader went away (`| head`): print no more.
                    Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => self.print = None,
                    Err(e) => {
                        return Err(SinkError(
                            format!("print sink: cannot write to standard output: {e}").into(),
                        ))
                    }
                }
            }
            if let Some(w) = &mut self.writer {
                w.write(&c.row)?;
            }
            if let Some(w) = &mut self.changelog_writer {
                w.write(&c)?;
            }
            if !self.materialize {
                if self.keep_changelog {
                    self.changelog.push(c);
                } else if c.row.capacity() == 0 {
                    // A kinds-only change: nothing to free, no call to make.
                    std::mem::forget(c.row);
                }
                continue;
            }
            match &self.encoding {
                SinkEncoding::Upsert { key } => {
                    let k: Row = key.iter().map(|&i| c.row[i].clone()).collect();
                    match c.kind {
                        RowKind::Insert | RowKind::UpdateAfter => {
                            self.upsert.insert(k, c.row.clone());
                        }
                        // As Flink's upsert connectors (JDBC, upsert-kafka)
                        // write it: a `-U` deletes its key, and the `+U`
                        // that follows writes it again. A query whose
                        // filter drops that `+U` relies on it (FLINK-9528).
                        RowKind::Delete | RowKind::UpdateBefore => {
                            self.upsert.remove(&k);
                        }
                    }
                }
                _ => self.retract.apply(&c),
            }
            if self.keep_changelog {
                self.changelog.push(c);
            }
        }
        Ok(())
    }

    /// What the sink hands over at a checkpoint: its counts, its
    /// materialised result, and the committed length of each of its
    /// outputs (rows writer, then changelog writer). A writer that cannot
    /// resume fails the checkpoint: its output would not be exactly once.
    pub fn snapshot(&mut self) -> Result<SinkImage, SinkError> {
        let rows = match &self.encoding {
            SinkEncoding::Upsert { .. } => {
                let mut rows: Vec<(Row, i64)> =
                    self.upsert.values().map(|r| (r.clone(), 1)).collect();
                rows.sort_by(|a, b| cmp_rows(&a.0, &b.0));
                rows
            }
            _ => self.retract.entries(),
        };
        let mut committed = Vec::new();
        let positions = [
            self.writer.as_mut().map(|w| w.commit()),
            self.changelog_writer.as_mut().map(|w| w.commit()),
        ];
        for p in positions.into_iter().flatten() {
            match p? {
                Some(n) => committed.push(n),
                None => {
                    return Err(SinkError(
                        "a sink output cannot resume from a checkpoint".into(),
                    ))
                }
            }
        }
        Ok(SinkImage {
            counts: self.counts.0,
            rows,
            committed,
            schema: String::new(),
        })
    }

    /// Takes back what [`SinkCollector::snapshot`] handed over (its
    /// outputs were resumed by whoever opened them).
    pub fn restore(&mut self, image: &SinkImage) {
        self.counts = KindCounts(image.counts);
        for (row, n) in &image.rows {
            match &self.encoding {
                SinkEncoding::Upsert { key } => {
                    let k: Row = key.iter().map(|&i| row[i].clone()).collect();
                    self.upsert.insert(k, row.clone());
                }
                _ => self.retract.add(row.clone(), *n),
            }
        }
    }

    /// Whether the sink keeps nothing of a row but its kind: it does not
    /// materialise, keep or write the changelog, write or print.
    pub fn counts_only(&self) -> bool {
        !self.materialize
            && !self.keep_changelog
            && self.writer.is_none()
            && self.changelog_writer.is_none()
            && self.print.is_none()
    }

    pub fn counts(&self) -> KindCounts {
        self.counts
    }

    pub fn changelog(&self) -> &[Change] {
        &self.changelog
    }

    pub fn is_materialized(&self) -> bool {
        self.materialize
    }

    /// The materialised result, sorted (empty when not materialising).
    pub fn result(&self) -> Vec<Row> {
        match &self.encoding {
            SinkEncoding::Upsert { .. } => {
                let mut rows: Vec<Row> = self.upsert.values().cloned().collect();
                rows.sort_by(|a, b| cmp_rows(a, b));
                rows
            }
            _ => self.retract.sorted_rows(),
        }
    }

    /// Retractions of rows that were never added (a bug upstream if any).
    pub fn negative_rows(&self) -> Vec<(Row, i64)> {
        self.retract.negative()
    }
}
