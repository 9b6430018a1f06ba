//! The local half of a two-phase window aggregate (Flink's
//! `LocalWindowAggregate`): folds the records of each (group key, slice)
//! into one partial accumulator in memory, and emits the partials when the
//! watermark advances (before the watermark goes on, so the global half
//! merges them with the watermark the records met), as Flink's local
//! window operator flushes its buffer. A partial row is the group key, two
//! slots per call, then the slice end. It keeps no state and drops
//! nothing: the global half applies the late rule. For `--late` it keeps
//! the records the global half will drop with their partial (the same rule
//! at the same watermark: a partial reaches the global half before the
//! watermark that flushed it), since the global half sees no records.

use super::assigner::WindowSpec;
use super::window_agg::WindowAggregateOperator;
use crate::agg::functions::{self, AggSpec};
use crate::changelog::Change;
use crate::operator::{OpResult, Operator};
use crate::value::{Row, Value};

pub struct LocalWindowAggregateOperator {
    group_by: Vec<usize>,
    aggs: Vec<AggSpec>,
    time_col: usize,
    window: WindowSpec,
    /// (group key, slice end) -> slots, in the order first seen.
    buffer: hashbrown::HashMap<Row, usize>,
    partials: Vec<(Row, Row)>,
    watermark: i64,
    /// The records the global half will drop as late, for `--late`.
    late: Option<Vec<Row>>,
    /// The time column is each row's window end (window-attached): a
    /// partial per window, not per slice.
    attached: bool,
}

impl LocalWindowAggregateOperator {
    pub fn new(
        group_by: Vec<usize>,
        aggs: Vec<AggSpec>,
        time_col: usize,
        window: WindowSpec,
    ) -> LocalWindowAggregateOperator {
        LocalWindowAggregateOperator {
            group_by,
            aggs,
            time_col,
            window,
            buffer: hashbrown::HashMap::new(),
            partials: Vec::new(),
            watermark: i64::MIN,
            late: None,
            attached: false,
        }
    }

    /// Over a window aggregate's windows: the time column is the row's
    /// window end, which its partial carries instead of a slice end.
    pub fn attached(mut self) -> LocalWindowAggregateOperator {
        self.attached = true;
        self
    }
}

impl Operator for LocalWindowAggregateOperator {
    /// Its partial accumulators wait for the watermark outside any state
    /// handle; they are not in checkpoints yet.
    fn snapshot_state(&mut self, _image: &mut crate::checkpoint::OperatorImage) -> OpResult<()> {
        Err(crate::operator::OpError::Spec(
            "checkpoints of window aggregates are not supported yet".into(),
        ))
    }

    fn process(
        &mut self,
        _input: usize,
        batch: Vec<Change>,
        _out: &mut Vec<Change>,
    ) -> OpResult<()> {
        for change in batch {
            let row = change.row;
            let Some(t) = row[self.time_col].as_ts() else {
                continue;
            };
            let mut key: Row = self.group_by.iter().map(|&c| row[c].clone()).collect();
            let slice = if self.attached {
                t
            } else {
                self.window.slice_end(t)
            };
            if let Some(late) = &mut self.late {
                let late_here = if self.attached {
                    self.watermark >= t.saturating_sub(1)
                } else {
                    WindowAggregateOperator::is_late(&self.window, slice, self.watermark)
                };
                if late_here {
                    late.push(row.clone());
                }
            }
            key.push(Value::Ts(slice));
            let i = match self.buffer.get(&key) {
                Some(&i) => i,
                None => {
                    let init: Row = self
                        .aggs
                        .iter()
                        .flat_map(|a| functions::init(a.kind))
                        .collect();
                    self.partials.push((key.clone(), init));
                    self.buffer.insert(key, self.partials.len() - 1);
                    self.partials.len() - 1
                }
            };
            WindowAggregateOperator::accumulate(&self.aggs, &mut self.partials[i].1, &row);
        }
        Ok(())
    }

    fn on_watermark(&mut self, watermark: i64, out: &mut Vec<Change>) -> OpResult<()> {
        self.watermark = self.watermark.max(watermark);
        self.buffer.clear();
        for (mut key, slots) in self.partials.drain(..) {
            let slice = key.pop().expect("a slice end");
            key.extend(slots);
            key.push(slice);
            out.push(Change::insert(key));
        }
        Ok(())
    }

    fn keep_late(&mut self) -> bool {
        self.late.get_or_insert_with(Vec::new);
        true
    }

    fn take_late(&mut self, late: &mut Vec<Row>) {
        if let Some(kept) = &mut self.late {
            late.append(kept);
        }
    }
}
