//! `LocalGroupAggregate`: the first half of a local-global aggregate.
//!
//! Semantics: within one bundle, a subtask folds the records of each group
//! key into one *partial* accumulator (a delta: accumulated minus
//! retracted) and, when the bundle closes, ships `+I[key..., partial...]`
//! per key to the global aggregate, which merges partials into its state.
//! Merging deltas in any order gives the same accumulator as applying the
//! records one by one, which is why every call must be mergeable (no
//! DISTINCT, no MIN/MAX over an updating input; see
//! [`super::core::not_mergeable`]).
//!
//! It keeps no state between bundles, so it costs no state accesses; what it
//! saves is records through the hash exchange (one per key per subtask per
//! bundle instead of one per record) and load on the hot key's subtask.

use super::core::AggCore;
use super::functions::AggSpec;
use crate::changelog::Change;
use crate::operator::{OpResult, Operator};
use crate::state::heap::{new_map, Map};
use crate::value::{Row, Value};

pub struct LocalAggregateOperator {
    group_key: Vec<usize>,
    core: AggCore,
    size: usize,
    buffered: usize,
    index: Map<Row, usize>,
    partials: Vec<(Row, Row)>,
    key_buf: Vec<Value>,
}

impl LocalAggregateOperator {
    pub fn new(
        group_key: Vec<usize>,
        aggs: Vec<AggSpec>,
        bundle_size: usize,
    ) -> OpResult<LocalAggregateOperator> {
        Ok(LocalAggregateOperator {
            group_key,
            core: AggCore::new(None, "", aggs, true)?,
            size: bundle_size.max(1),
            buffered: 0,
            index: new_map(),
            partials: Vec::new(),
            key_buf: Vec::new(),
        })
    }

    fn flush(&mut self, out: &mut Vec<Change>) {
        self.buffered = 0;
        self.index.clear();
        for (key, acc) in self.partials.drain(..) {
            let mut row = key;
            row.extend(acc);
            out.push(Change::insert(row));
        }
    }
}

impl Operator for LocalAggregateOperator {
    fn process(
        &mut self,
        _input: usize,
        batch: Vec<Change>,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        for c in batch {
            self.key_buf.clear();
            self.key_buf
                .extend(self.group_key.iter().map(|&i| c.row[i].clone()));
            let i = match self.index.get(self.key_buf.as_slice()) {
                Some(&i) => i,
                None => {
                    self.index.insert(self.key_buf.clone(), self.partials.len());
                    self.partials
                        .push((self.key_buf.clone(), self.core.init_row()));
                    self.partials.len() - 1
                }
            };
            let sign = if c.kind.is_accumulate() { 1 } else { -1 };
            let (key, acc) = &mut self.partials[i];
            self.core.accumulate(key, acc, &c.row, sign)?;
            self.buffered += 1;
            if self.buffered >= self.size {
                self.flush(out);
            }
        }
        Ok(())
    }

    fn finish_bundle(&mut self, out: &mut Vec<Change>) -> OpResult<()> {
        self.flush(out);
        Ok(())
    }

    fn buffered(&self) -> usize {
        self.buffered
    }
}
