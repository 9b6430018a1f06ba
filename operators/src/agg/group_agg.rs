//! `GroupAggregate`: one record at a time, or in mini-batches; also the
//! global half of a local-global aggregate.
//!
//! Semantics: for each group key the operator keeps an accumulator whose
//! result equals the aggregate over every row of that group seen so far
//! (accumulated minus retracted), so the emitted changelog materialises to
//! the batch `GROUP BY`. Emission follows Flink's `GroupAggFunction` (and
//! its mini-batch and global variants) with no state TTL, once per record,
//! or once per key per bundle in mini-batch mode:
//! - a group seen for the first time: `+I(result)`;
//! - result changed: `-U(old)` (unless the consumer is an upsert sink that
//!   does not need update-before) then `+U(new)`;
//! - result unchanged (a repeated distinct value, a MAX that did not move):
//!   nothing;
//! - row count back to 0: `-D(old)` and the group's state is cleared.
//!
//! Retractions that arrive for a group with no state are dropped (nothing
//! to take away), as Flink does.
//!
//! Mini-batch: records are buffered per key (keys in arrival order) until
//! the bundle closes: on `table.exec.mini-batch.size` buffered records, on
//! the executor's latency trigger, or at end of input. Then each key's
//! accumulator is read once, every buffered record applied, and written
//! once; the bundle's keys go to the state together
//! ([`crate::state::ValueState::modify_many`]: on RocksDB one `MultiGet`
//! and one `WriteBatch` per bundle). The global aggregate buffers partial
//! accumulators from local aggregates and merges them the same way.
//!
//! Where the accumulators live is the store's choice ([`super::acc_store`]),
//! made once when the operator is built: on the heap backend without TTL,
//! calls whose accumulator is all their state (`COUNT`, `SUM`, `AVG`, and
//! `MIN`/`MAX` over an insert-only input) take a typed path, updated in
//! place in the state table's bucket; what it declines (a group that
//! empties, a value it cannot hold) goes the general way on unchanged
//! state: same changelog, same counters. What is computed for a key is
//! written once ([`super::fold`], over [`super::acc::Acc`]).
//!
//! Asynchronous state execution ([`GroupAggregateOperator::with_async_state`],
//! [`super::async_state`]): one record at a time, with each input batch's
//! keys read together and written together on RocksDB; the same changelog.
//!
//! Built to feed a sink that only counts kinds
//! ([`GroupAggregateOperator::with_emission`], [`Emission::KindsOnly`]),
//! the operator emits the same changes with empty rows: whether to emit is
//! decided on the results either way, so kinds and order do not change.
//!
//! One record at a time, the operator only reads its input batches
//! ([`InputOwnership::Reads`]: the executor frees them where they were
//! read); in mini-batch mode it keeps the records in its bundle
//! ([`InputOwnership::Takes`]).
//!
//! Counters: one-record-at-a-time, per input record one read and one write
//! (or delete) of `acc`; mini-batch, one read and one write per distinct key
//! per bundle; plus the distinct and MIN/MAX maps (see [`super::core`]).

use super::acc_store::{AccStore, Stores};
use super::async_state;
use super::core::AggCore;
use super::fold::{AggInput, Emit, Fold};
use super::functions::AggSpec;
use crate::changelog::Change;
use crate::checkpoint::OperatorImage;
use crate::operator::{Emission, InputOwnership, OpResult, Operator};
use crate::state::heap::{fixed_state, FixedState};
use crate::state::{StateBackend, StateReport, PREFETCH_AHEAD};
use crate::value::Value;
use hashbrown::HashTable;
use std::hash::BuildHasher;

/// Buffered records of an open bundle: the records in arrival order, each
/// with the index of its key; keys are kept once, in order of first
/// arrival, one after another in one `Vec` (no allocation per key).
struct Bundle {
    size: usize,
    /// Values per key.
    width: usize,
    /// Key `i` is `keys[i * width..(i + 1) * width]`.
    keys: Vec<Value>,
    /// Indices of keys, by key hash.
    index: HashTable<u32>,
    hasher: FixedState,
    records: Vec<Change>,
    key_of: Vec<u32>,
}

impl Bundle {
    fn new(size: usize, width: usize) -> Bundle {
        Bundle {
            size: size.max(1),
            width,
            keys: Vec::new(),
            index: HashTable::new(),
            hasher: fixed_state(),
            records: Vec::new(),
            key_of: Vec::new(),
        }
    }

    /// Distinct keys buffered.
    fn key_count(&self) -> usize {
        self.index.len()
    }

    #[inline]
    fn key(&self, i: usize) -> &[Value] {
        &self.keys[i * self.width..(i + 1) * self.width]
    }

    /// Buffers `c` under `key`; true when the bundle is full.
    fn push(&mut self, key: &[Value], c: Change) -> bool {
        let Bundle {
            width,
            keys,
            index,
            hasher,
            ..
        } = self;
        let w = *width;
        let key_at = |i: u32| &keys[i as usize * w..(i as usize + 1) * w];
        let hash = hasher.hash_one(key);
        let k = match index.find(hash, |&i| key_at(i) == key) {
            Some(&i) => i,
            None => {
                let i = index.len() as u32;
                index.insert_unique(hash, i, |&j| hasher.hash_one(key_at(j)));
                keys.extend_from_slice(key);
                i
            }
        };
        self.key_of.push(k);
        self.records.push(c);
        self.records.len() >= self.size
    }

    /// For each key, the indices of its records in arrival order: key `i`'s
    /// are `order[start[i]..start[i + 1]]` (a counting sort by key).
    fn grouped(&self) -> (Vec<u32>, Vec<u32>) {
        let mut start = vec![0u32; self.key_count() + 1];
        for &k in &self.key_of {
            start[k as usize + 1] += 1;
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        let mut next = start.clone();
        let mut order = vec![0u32; self.records.len()];
        for (r, &k) in self.key_of.iter().enumerate() {
            order[next[k as usize] as usize] = r as u32;
            next[k as usize] += 1;
        }
        (start, order)
    }

    fn clear(&mut self) {
        self.keys.clear();
        self.index.clear();
        self.records.clear();
        self.key_of.clear();
    }
}

pub struct GroupAggregateOperator {
    group_key: Vec<usize>,
    /// What is computed and emitted for a key.
    fold: Fold,
    /// Where the accumulators live.
    store: Stores,
    bundle: Option<Bundle>,
    key_buf: Vec<Value>,
    /// Asynchronous state execution (rows store only).
    async_state: bool,
}

impl GroupAggregateOperator {
    /// One record at a time. `scope` names the operator's state;
    /// `input_insert_only` lets MIN/MAX skip their value maps.
    pub fn new(
        backend: &StateBackend,
        scope: &str,
        group_key: Vec<usize>,
        aggs: Vec<AggSpec>,
        input_insert_only: bool,
        generate_update_before: bool,
    ) -> OpResult<GroupAggregateOperator> {
        let core = AggCore::new(Some(backend), scope, aggs, input_insert_only)?;
        let store = Stores::new(backend, scope, &core, group_key.len())?;
        let emit = Emit {
            update_before: generate_update_before,
            kinds_only: false,
        };
        Ok(GroupAggregateOperator {
            group_key,
            fold: Fold::new(core, emit),
            store,
            bundle: None,
            key_buf: Vec::new(),
            async_state: false,
        })
    }

    /// Emits as `emission` says: [`Emission::KindsOnly`] for a sink that
    /// only counts kinds (the job builder's choice; the executor checks it).
    pub fn with_emission(mut self, emission: Emission) -> GroupAggregateOperator {
        self.fold.emit.kinds_only = emission == Emission::KindsOnly;
        self
    }

    /// Buffers records and closes a bundle every `size` records (mini-batch).
    pub fn with_mini_batch(mut self, size: usize) -> GroupAggregateOperator {
        self.bundle = Some(Bundle::new(size, self.group_key.len()));
        self
    }

    /// One record at a time with Flink's asynchronous state execution: each
    /// input batch's keys are read, and written, together
    /// ([`super::async_state`]). It changes nothing on the typed path
    /// (the heap's, which has no reads to batch) or in mini-batch mode.
    pub fn with_async_state(mut self) -> GroupAggregateOperator {
        self.async_state = true;
        self
    }

    /// Whether records take the typed path (packed accumulators, see
    /// [`super::acc_store`]): on the heap backend without TTL, for `COUNT`,
    /// `SUM`, `AVG` and (over an insert-only input) `MIN`/`MAX` calls whose
    /// key and accumulator pack (rows or partial accumulators alike).
    pub fn typed_path(&self) -> bool {
        matches!(self.store, Stores::Packed(_))
    }

    /// Turns the typed path off, so every record takes the general path
    /// (benches and tests compare the two on one backend).
    pub fn with_general_path(mut self) -> GroupAggregateOperator {
        self.store = self.store.into_rows();
        self
    }

    /// Makes this the global half of a local-global aggregate: input rows
    /// are partial accumulators keyed by their leading group columns.
    pub fn with_partial_input(mut self) -> GroupAggregateOperator {
        self.fold.input = AggInput::Partials;
        self.group_key = (0..self.group_key.len()).collect();
        self
    }

    fn extract_key(&mut self, row: &[Value]) {
        extract_key(&self.group_key, row, &mut self.key_buf);
    }

    fn close_bundle(&mut self, out: &mut Vec<Change>) -> OpResult<()> {
        let GroupAggregateOperator {
            fold,
            store,
            bundle,
            ..
        } = self;
        let Some(b) = bundle.as_mut().filter(|b| b.key_count() > 0) else {
            return Ok(());
        };
        let (start, order) = b.grouped();
        let records_of = |i: usize| {
            order[start[i] as usize..start[i + 1] as usize]
                .iter()
                .map(|&r| &b.records[r as usize])
        };
        let keys: Vec<&[Value]> = (0..b.key_count()).map(|i| b.key(i)).collect();
        let done = match store {
            Stores::Rows(s) => s.update_many(fold, &keys, records_of, out),
            Stores::Packed(s) => s.update_many(fold, &keys, records_of, out),
        };
        b.clear();
        done
    }
}

fn extract_key(group_key: &[usize], row: &[Value], key: &mut Vec<Value>) {
    key.clear();
    key.extend(group_key.iter().map(|&i| row[i].clone()));
}

/// Applies each record of `batch` on its own, in order. Each record's
/// state lookup is a cache miss; asking the store to prefetch the key
/// [`PREFETCH_AHEAD`] records ahead overlaps them. A one-column key is
/// read in place, without a copy.
fn one_at_a_time<S: AccStore>(
    store: &mut S,
    fold: &mut Fold,
    group_key: &[usize],
    key_buf: &mut Vec<Value>,
    batch: &[Change],
    out: &mut Vec<Change>,
) -> OpResult<()> {
    let single = match group_key {
        [k] => Some(*k),
        _ => None,
    };
    let mut ahead: Vec<Value> = Vec::with_capacity(group_key.len());
    for (i, c) in batch.iter().enumerate() {
        if let Some(next) = batch.get(i + PREFETCH_AHEAD) {
            match single {
                Some(k) => store.prefetch(std::slice::from_ref(&next.row[k])),
                None => {
                    extract_key(group_key, &next.row, &mut ahead);
                    store.prefetch(&ahead);
                }
            }
        }
        let key: &[Value] = match single {
            Some(k) => std::slice::from_ref(&c.row[k]),
            None => {
                extract_key(group_key, &c.row, key_buf);
                key_buf
            }
        };
        store.update(fold, key, std::iter::once(c), out)?;
    }
    Ok(())
}

impl Operator for GroupAggregateOperator {
    fn process(&mut self, input: usize, batch: Vec<Change>, out: &mut Vec<Change>) -> OpResult<()> {
        if self.bundle.is_none() {
            return self.process_read(input, &batch, out);
        }
        for c in batch {
            self.extract_key(&c.row);
            let b = self.bundle.as_mut().expect("mini-batch mode");
            if b.push(&self.key_buf, c) {
                self.close_bundle(out)?;
            }
        }
        Ok(())
    }

    fn input_ownership(&self) -> InputOwnership {
        match self.bundle {
            None => InputOwnership::Reads,
            Some(_) => InputOwnership::Takes,
        }
    }

    /// One record at a time (a mini-batch bundle keeps its records, so it
    /// processes a copy).
    fn process_read(
        &mut self,
        input: usize,
        batch: &[Change],
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        if self.bundle.is_some() {
            return self.process(input, batch.to_vec(), out);
        }
        let GroupAggregateOperator {
            group_key,
            fold,
            store,
            key_buf,
            async_state,
            ..
        } = self;
        match store {
            Stores::Rows(s) if *async_state => {
                async_state::apply_batch(s, fold, group_key, key_buf, batch, out)
            }
            Stores::Rows(s) => one_at_a_time(s, fold, group_key, key_buf, batch, out),
            Stores::Packed(s) => one_at_a_time(s, fold, group_key, key_buf, batch, out),
        }
    }

    fn finish_bundle(&mut self, out: &mut Vec<Change>) -> OpResult<()> {
        self.close_bundle(out)
    }

    fn buffered(&self) -> usize {
        self.bundle.as_ref().map_or(0, |b| b.records.len())
    }

    fn state_reports(&self) -> Vec<StateReport> {
        let mut r = vec![self.store.report()];
        r.extend(self.fold.core.state_reports());
        r
    }

    fn snapshot_state(&mut self, image: &mut OperatorImage) -> OpResult<()> {
        crate::checkpoint::image::closed_bundle(self.buffered())?;
        self.store.snapshot(image)?;
        self.fold.core.snapshot(image)
    }

    fn restore_state(
        &mut self,
        image: &OperatorImage,
        owns: &dyn Fn(&[Value]) -> bool,
    ) -> OpResult<()> {
        self.store.restore(image, owns)?;
        self.fold.core.restore(image, owns)
    }
}
