//! Window Top-N: Flink's `WindowRank` (`WindowRankProcessor`, fed by its
//! `TopNRecordsCombiner`), the rows ranked `rank_start..=rank_end` by the
//! sort key within each partition key and window, emitted once as `+I`
//! when the watermark passes the window's end.
//!
//! Its input carries the window columns of a window TVF or of a window
//! aggregate's output: each record belongs to the window whose
//! `window_end` it holds. A record is late, dropped and counted as
//! `numLateRecordsDropped`, when that window has fired (the watermark is
//! at least its end - 1, Flink's `isWindowFired`). Otherwise it joins the
//! rows kept for its key and window, after the rows whose sort key is not
//! greater (`ROW_NUMBER`: equal sort keys rank in the order they came), and
//! only the first `rank_end` rows are kept: a later row can never move one
//! of the others back in, since rows are only added until the window fires.
//!
//! When the watermark passes a window's end - 1, each key with rows in it
//! emits its rows in the rank range (with the rank appended when it is
//! output) and its state is deleted: windows in order of their end, keys in
//! the order they first reached the window. After the final watermark the
//! state is empty; `table.exec.state.ttl` does not apply.

use super::late::LateRecords;
use crate::changelog::{Change, RowKind};
use crate::operator::{OpError, OpResult, Operator};
use crate::rank::topn::{flatten, unflatten, SortField};
use crate::state::{StateBackend, StateReport, ValueState};
use crate::value::{Row, Value};
use std::cmp::Ordering;
use std::collections::{BTreeMap, HashSet};

/// What the planner fixed of a window Top-N.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowRankSpec {
    /// The partition keys other than the window's.
    pub partition_keys: Vec<usize>,
    /// The input column holding each record's `window_end`.
    pub window_end: usize,
    pub order: Vec<SortField>,
    /// 1-based and inclusive, `1 <= rank_start <= rank_end`.
    pub rank_start: u64,
    pub rank_end: u64,
    /// Whether each output row ends with its rank (a BIGINT).
    pub output_rank_number: bool,
    /// The input row's arity.
    pub arity: usize,
}

impl WindowRankSpec {
    fn check(&self) -> Result<(), String> {
        if self.rank_start < 1 || self.rank_end < self.rank_start {
            return Err(format!(
                "the rank range {}..={} is empty or starts before 1",
                self.rank_start, self.rank_end
            ));
        }
        if self.order.is_empty() {
            return Err("a window Top-N needs an ORDER BY column".into());
        }
        let bad = self
            .partition_keys
            .iter()
            .chain(self.order.iter().map(|f| &f.column))
            .chain([&self.window_end])
            .find(|&&c| c >= self.arity);
        match bad {
            Some(c) => Err(format!(
                "column {c} is not among the {} input columns",
                self.arity
            )),
            None => Ok(()),
        }
    }

    fn compare(&self, a: &[Value], b: &[Value]) -> Ordering {
        for f in &self.order {
            let o = a[f.column].total_cmp(&b[f.column]);
            let o = if f.descending { o.reverse() } else { o };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    }
}

pub struct WindowRankOperator {
    spec: WindowRankSpec,
    /// (partition key, window end) -> the top `rank_end` rows, in rank
    /// order, flattened into one state row.
    kept: ValueState,
    /// Window end -> keys with rows there, in the order they came.
    timers: BTreeMap<i64, (Vec<Row>, HashSet<Row>)>,
    watermark: i64,
    /// Records behind the watermark: dropped, counted, kept for `--late`.
    late: LateRecords,
}

impl WindowRankOperator {
    pub fn new(
        backend: &StateBackend,
        scope: &str,
        spec: WindowRankSpec,
    ) -> OpResult<WindowRankOperator> {
        spec.check().map_err(OpError::Spec)?;
        Ok(WindowRankOperator {
            kept: backend.value_state(scope, "window-rank", spec.arity)?,
            spec,
            timers: BTreeMap::new(),
            watermark: i64::MIN,
            late: LateRecords::default(),
        })
    }

    fn fired(end: i64, wm: i64) -> bool {
        wm >= end.saturating_sub(1)
    }

    fn corrupt(&self) -> OpError {
        OpError::Record(format!(
            "a window Top-N state row is not a list of {}-column rows",
            self.spec.arity
        ))
    }
}

impl Operator for WindowRankOperator {
    fn process(
        &mut self,
        _input: usize,
        batch: Vec<Change>,
        _out: &mut Vec<Change>,
    ) -> OpResult<()> {
        for change in batch {
            if change.kind != RowKind::Insert {
                return Err(OpError::Record(format!(
                    "WindowRank takes an insert-only input, got {change}"
                )));
            }
            let row = change.row;
            if row.len() != self.spec.arity {
                return Err(OpError::Record(format!(
                    "a window Top-N row has {} column(s), expected {}",
                    row.len(),
                    self.spec.arity
                )));
            }
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
            let mut rows = match self.kept.get(&key)? {
                Some(flat) => unflatten(&flat, self.spec.arity).ok_or_else(|| self.corrupt())?,
                None => Vec::new(),
            };
            let at = rows.partition_point(|r| self.spec.compare(r, &row) != Ordering::Greater);
            if (at as u64) < self.spec.rank_end {
                rows.insert(at, row);
                rows.truncate(self.spec.rank_end as usize);
                self.kept.put(&key, flatten(&rows))?;
            }
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
                let Some(flat) = self.kept.get(&key)? else {
                    continue;
                };
                self.kept.delete(&key)?;
                let rows = unflatten(&flat, self.spec.arity).ok_or_else(|| self.corrupt())?;
                for (i, mut row) in rows.into_iter().enumerate() {
                    let rank = i as u64 + 1;
                    if rank < self.spec.rank_start {
                        continue;
                    }
                    if self.spec.output_rank_number {
                        row.push(Value::Int(rank as i64));
                    }
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

    fn row(k: &str, price: i64, end: i64) -> Row {
        vec![Value::str(k), Value::Int(price), Value::Ts(end)]
    }

    fn op(
        partition_keys: Vec<usize>,
        rank_start: u64,
        output_rank_number: bool,
    ) -> WindowRankOperator {
        WindowRankOperator::new(
            &StateBackend::heap(),
            "t",
            WindowRankSpec {
                partition_keys,
                window_end: 2,
                order: vec![SortField {
                    column: 1,
                    descending: true,
                }],
                rank_start,
                rank_end: 2,
                output_rank_number,
                arity: 3,
            },
        )
        .unwrap()
    }

    #[test]
    fn keeps_the_top_rows_per_key_and_window_until_the_window_fires() {
        let mut o = op(vec![0], 1, false);
        let mut out = Vec::new();
        let batch = vec![
            row("a", 5, 10),
            row("a", 3, 10),
            row("b", 1, 10),
            row("a", 7, 10),
            row("a", 5, 20),
        ];
        o.process(0, batch.into_iter().map(Change::insert).collect(), &mut out)
            .unwrap();
        o.on_watermark(8, &mut out).unwrap();
        assert!(out.is_empty());
        o.on_watermark(9, &mut out).unwrap();
        let expected = [row("a", 7, 10), row("a", 5, 10), row("b", 1, 10)];
        assert_eq!(out, expected.map(Change::insert).to_vec());
        assert_eq!(o.kept.metrics().entries, 1);
        // The window has fired: a record of it is late.
        o.process(0, vec![Change::insert(row("a", 9, 10))], &mut out)
            .unwrap();
        assert_eq!(o.counters(), vec![("numLateRecordsDropped", 1)]);
        o.on_watermark(i64::MAX, &mut out).unwrap();
        assert_eq!(o.kept.metrics().entries, 0);
    }

    #[test]
    fn equal_sort_keys_rank_in_arrival_order_and_the_range_may_start_later() {
        let mut o = op(vec![], 2, true);
        let mut out = Vec::new();
        let batch = vec![row("x", 5, 10), row("y", 5, 10), row("z", 5, 10)];
        o.process(0, batch.into_iter().map(Change::insert).collect(), &mut out)
            .unwrap();
        o.on_watermark(100, &mut out).unwrap();
        let mut second = row("y", 5, 10);
        second.push(Value::Int(2));
        assert_eq!(out, vec![Change::insert(second)]);
    }
}
