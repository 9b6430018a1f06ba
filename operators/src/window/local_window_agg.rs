//! The local half of a two-phase window aggregate (Flink's
//! `LocalWindowAggregate`): folds the records of each (group key, slice)
//! into one partial accumulator in memory, and emits the partials when the
//! watermark advances (before the watermark goes on, so the global half
//! merges them with the watermark the records met), as Flink's local
//! window operator flushes its buffer. A partial row is the group key, two
//! slots per call, then the slice end. It keeps no state and drops
//! nothing: the global half applies the late rule.

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
        }
    }
}

impl Operator for LocalWindowAggregateOperator {
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
            key.push(Value::Ts(self.window.slice_end(t)));
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

    fn on_watermark(&mut self, _watermark: i64, out: &mut Vec<Change>) -> OpResult<()> {
        self.buffer.clear();
        for (mut key, slots) in self.partials.drain(..) {
            let slice = key.pop().expect("a slice end");
            key.extend(slots);
            key.push(slice);
            out.push(Change::insert(key));
        }
        Ok(())
    }
}
