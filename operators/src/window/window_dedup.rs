//! Window deduplication: Flink's `WindowDeduplicate` on a rowtime order
//! (`RowTimeWindowDeduplicateProcessor`), the first or last row of each
//! partition key and window, emitted once as `+I` when the watermark
//! passes the window's end.
//!
//! Its input carries the window columns of a window TVF: each record
//! belongs to the window whose `window_end` it holds. A record is late,
//! dropped and counted as `numLateRecordsDropped`, when that window has
//! fired (the watermark is at least its end - 1, Flink's `isWindowFired`).
//! Otherwise it is compared with the row kept for its key and window, as
//! Flink's `DeduplicateFunctionHelper.isDuplicate` does on a rowtime: a
//! keep-last row replaces the kept one when its time is not earlier, a
//! keep-first row when its time is earlier.
//!
//! When the watermark passes a window's end - 1, each key with a row in
//! it emits that row and its state is deleted: windows in order of their
//! end, keys in the order they first reached the window. After the final
//! watermark the state is empty; `table.exec.state.ttl` does not apply.

use super::late::LateRecords;
use crate::changelog::{Change, RowKind};
use crate::operator::{OpError, OpResult, Operator};
use crate::rank::deduplicate::Keep;
use crate::state::{StateBackend, StateReport, ValueState};
use crate::value::{Row, Value};
use std::collections::{BTreeMap, HashSet};

/// What the planner fixed of a window deduplication.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowDedupSpec {
    /// The partition keys other than the window's.
    pub partition_keys: Vec<usize>,
    /// The input column holding each record's `window_end`.
    pub window_end: usize,
    /// The rowtime column the rows are ordered by.
    pub order_key: usize,
    pub keep: Keep,
    /// The input row's arity.
    pub arity: usize,
}

pub struct WindowDeduplicateOperator {
    spec: WindowDedupSpec,
    /// (partition key, window end) -> the row kept.
    kept: ValueState,
    /// Window end -> keys with a row there, in the order they came.
    timers: BTreeMap<i64, (Vec<Row>, HashSet<Row>)>,
    watermark: i64,
    /// Records behind the watermark: dropped, counted, kept for `--late`.
    late: LateRecords,
}

impl WindowDeduplicateOperator {
    pub fn new(
        backend: &StateBackend,
        scope: &str,
        spec: WindowDedupSpec,
    ) -> OpResult<WindowDeduplicateOperator> {
        let bad = spec
            .partition_keys
            .iter()
            .chain([&spec.window_end, &spec.order_key])
            .find(|&&c| c >= spec.arity);
        if let Some(c) = bad {
            return Err(OpError::Spec(format!(
                "column {c} is not among the {} input columns",
                spec.arity
            )));
        }
        Ok(WindowDeduplicateOperator {
            kept: backend.value_state(scope, "window-deduplicate", spec.arity)?,
            spec,
            timers: BTreeMap::new(),
            watermark: i64::MIN,
            late: LateRecords::default(),
        })
    }

    fn fired(end: i64, wm: i64) -> bool {
        wm >= end.saturating_sub(1)
    }
}

/// A row's time on the order key; NULL orders first (Flink's rowtime is
/// NOT NULL).
fn rowtime(row: &[Value], c: usize) -> i64 {
    row[c].as_ts().unwrap_or(i64::MIN)
}

impl Operator for WindowDeduplicateOperator {
    fn process(
        &mut self,
        _input: usize,
        batch: Vec<Change>,
        _out: &mut Vec<Change>,
    ) -> OpResult<()> {
        for change in batch {
            if change.kind != RowKind::Insert {
                return Err(OpError::Record(format!(
                    "WindowDeduplicate takes an insert-only input, got {change}"
                )));
            }
            let row = change.row;
            let Some(end) = row[self.spec.window_end].as_ts() else {
                continue;
            };
            if Self::fired(end, self.watermark) {
                self.late.drop_row(row);
                continue;
            }
            let mut key: Row = self
                .spec
                .partition_keys
                .iter()
                .map(|&c| row[c].clone())
                .collect();
            let (order, set) = self.timers.entry(end).or_default();
            if set.insert(key.clone()) {
                order.push(key.clone());
            }
            key.push(Value::Ts(end));
            let (t, keep) = (self.spec.order_key, self.spec.keep);
            self.kept.modify(&key, |slot| {
                let replaces = match slot {
                    None => true,
                    Some(p) => match keep {
                        Keep::LastRow => rowtime(p, t) <= rowtime(&row, t),
                        Keep::FirstRow => rowtime(&row, t) < rowtime(p, t),
                    },
                };
                if replaces {
                    *slot = Some(row);
                }
            })?;
        }
        Ok(())
    }

    fn on_watermark(&mut self, watermark: i64, out: &mut Vec<Change>) -> OpResult<()> {
        self.watermark = self.watermark.max(watermark);
        while let Some(entry) = self.timers.first_entry() {
            let end = *entry.key();
            if !Self::fired(end, self.watermark) {
                break;
            }
            let (keys, _) = entry.remove();
            for mut key in keys {
                key.push(Value::Ts(end));
                if let Some(row) = self.kept.get(&key)? {
                    self.kept.delete(&key)?;
                    out.push(Change::insert(row));
                }
            }
        }
        Ok(())
    }

    fn state_reports(&self) -> Vec<StateReport> {
        vec![self.kept.report()]
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![self.late.counter()]
    }

    fn keep_late(&mut self) -> bool {
        self.late.keep();
        true
    }

    fn take_late(&mut self, late: &mut Vec<Row>) {
        self.late.take(late);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(k: &str, t: i64, end: i64) -> Row {
        vec![Value::str(k), Value::Ts(t), Value::Ts(end)]
    }

    fn op(keep: Keep) -> WindowDeduplicateOperator {
        WindowDeduplicateOperator::new(
            &StateBackend::heap(),
            "t",
            WindowDedupSpec {
                partition_keys: vec![0],
                window_end: 2,
                order_key: 1,
                keep,
                arity: 3,
            },
        )
        .unwrap()
    }

    #[test]
    fn keeps_one_row_per_key_and_window_until_the_window_fires() {
        for (keep, expected) in [(Keep::LastRow, 7), (Keep::FirstRow, 3)] {
            let mut o = op(keep);
            let mut out = Vec::new();
            let batch = vec![row("a", 5, 10), row("a", 3, 10), row("a", 7, 10)];
            o.process(0, batch.into_iter().map(Change::insert).collect(), &mut out)
                .unwrap();
            assert!(out.is_empty());
            o.on_watermark(8, &mut out).unwrap();
            assert!(out.is_empty());
            o.on_watermark(9, &mut out).unwrap();
            assert_eq!(out, vec![Change::insert(row("a", expected, 10))]);
            assert_eq!(o.kept.metrics().entries, 0);
            // The window has fired: a record of it is late.
            o.process(0, vec![Change::insert(row("a", 4, 10))], &mut out)
                .unwrap();
            assert_eq!(o.counters(), vec![("numLateRecordsDropped", 1)]);
        }
    }
}
