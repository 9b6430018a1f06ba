//! What a window operator does with a record behind the watermark: drops
//! it, counts it (Flink's `numLateRecordsDropped`), and keeps it while
//! `lab run --late` asks ([`crate::operator::Operator::keep_late`]), until
//! the executor takes the kept records after each batch.

use crate::value::Row;

#[derive(Default)]
pub(crate) struct LateRecords {
    dropped: u64,
    /// The records dropped, kept for `--late` (`None`: not kept).
    kept: Option<Vec<Row>>,
}

impl LateRecords {
    /// Drops `row` as late: counted, and kept if asked.
    pub(crate) fn drop_row(&mut self, row: Row) {
        self.dropped += 1;
        if let Some(kept) = &mut self.kept {
            kept.push(row);
        }
    }

    /// From now on, keeps the records dropped.
    pub(crate) fn keep(&mut self) {
        self.kept.get_or_insert_with(Vec::new);
    }

    /// Moves the records kept so far into `into`.
    pub(crate) fn take(&mut self, into: &mut Vec<Row>) {
        if let Some(kept) = &mut self.kept {
            into.append(kept);
        }
    }

    /// The operator's counter of records dropped.
    pub(crate) fn counter(&self) -> (&'static str, u64) {
        ("numLateRecordsDropped", self.dropped)
    }
}
