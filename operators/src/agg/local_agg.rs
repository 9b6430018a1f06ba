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
//!
//! Mechanics: each group is one row `[key..., partial...]`, allocated once
//! at its full width and shipped as it is; an index of row positions by
//! key hash finds it. Input batches are only read
//! ([`InputOwnership::Reads`]): the executor frees them where they were read.

use super::core::AggCore;
use super::functions::AggSpec;
use crate::changelog::Change;
use crate::operator::{InputOwnership, OpResult, Operator};
use crate::state::heap::{fixed_state, FixedState};
use crate::value::{Row, Value};
use hashbrown::HashTable;
use std::hash::BuildHasher;

pub struct LocalAggregateOperator {
    group_key: Vec<usize>,
    core: AggCore,
    size: usize,
    buffered: usize,
    /// Positions in `partials`, by key hash.
    index: HashTable<u32>,
    hasher: FixedState,
    /// Per group: `[key..., partial accumulator...]`.
    partials: Vec<Row>,
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
            index: HashTable::new(),
            hasher: fixed_state(),
            partials: Vec::new(),
            key_buf: Vec::new(),
        })
    }

    fn flush(&mut self, out: &mut Vec<Change>) {
        self.buffered = 0;
        self.index.clear();
        out.extend(self.partials.drain(..).map(Change::insert));
    }
}

impl Operator for LocalAggregateOperator {
    fn process(&mut self, input: usize, batch: Vec<Change>, out: &mut Vec<Change>) -> OpResult<()> {
        self.process_read(input, &batch, out)
    }

    fn input_ownership(&self) -> InputOwnership {
        InputOwnership::Reads
    }

    fn process_read(
        &mut self,
        _input: usize,
        batch: &[Change],
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        let klen = self.group_key.len();
        for c in batch {
            self.key_buf.clear();
            self.key_buf
                .extend(self.group_key.iter().map(|&i| c.row[i].clone()));
            let LocalAggregateOperator {
                index,
                hasher,
                partials,
                key_buf,
                core,
                ..
            } = self;
            let hash = hasher.hash_one(key_buf.as_slice());
            let i = match index.find(hash, |&i| partials[i as usize][..klen] == key_buf[..]) {
                Some(&i) => i as usize,
                None => {
                    let i = partials.len();
                    let mut row = Vec::with_capacity(klen + core.acc_width());
                    row.extend_from_slice(key_buf);
                    row.extend_from_slice(core.init_values());
                    partials.push(row);
                    index.insert_unique(hash, i as u32, |&j| {
                        hasher.hash_one(&partials[j as usize][..klen])
                    });
                    i
                }
            };
            let sign = if c.kind.is_accumulate() { 1 } else { -1 };
            let (key, acc) = partials[i].split_at_mut(klen);
            core.accumulate(key, acc, &c.row, sign)?;
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
