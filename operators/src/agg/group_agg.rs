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
//! ([`ValueState::modify_many`]: on RocksDB one `MultiGet` and one
//! `WriteBatch` per bundle). The global aggregate buffers partial accumulators from local
//! aggregates and merges them the same way.
//!
//! On the heap backend, `COUNT`/`SUM`/`AVG` calls take a typed path
//! ([`super::packed_acc`]): the accumulator is updated in place in the
//! state table's bucket and only emitted rows are built. It declines what
//! it does not take (a group that empties, a value of another kind), and
//! the record goes the general way on unchanged state: same changelog,
//! same counters.
//!
//! Feeding a sink that only counts kinds ([`Operator::emit_kinds_only`]),
//! the operator emits the same changes with empty rows: whether to emit is
//! decided on the results either way, so kinds and order do not change.
//!
//! Counters: one-record-at-a-time, per input record one read and one write
//! (or delete) of `acc`; mini-batch, one read and one write per distinct key
//! per bundle; plus the distinct and MIN/MAX maps (see [`super::core`]).

use super::core::{row_count, AggCore};
use super::functions::AggSpec;
use super::packed_acc::PackedAccumulator;
use crate::changelog::{Change, RowKind};
use crate::operator::{OpResult, Operator};
use crate::state::heap::{fixed_state, FixedState};
use crate::state::{StateBackend, StateReport, ValueState, PREFETCH_AHEAD};
use crate::value::{Row, Value};
use hashbrown::HashTable;
use std::hash::BuildHasher;

/// What the operator's input rows are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggInput {
    /// Rows of the aggregated table.
    Rows,
    /// Partial accumulators `[group key..., acc...]` from a local aggregate.
    Partials,
}

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
    core: AggCore,
    acc: ValueState,
    /// `-U` or not, rows or kinds only.
    emit: Emit,
    input: AggInput,
    bundle: Option<Bundle>,
    key_buf: Vec<Value>,
    results: Results,
    /// The typed path, on the heap backend when the calls have one.
    packed: Option<PackedAccumulator>,
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
        let acc = backend.value_state(scope, "acc", core.acc_width())?;
        let packed = acc
            .packs()
            .then(|| {
                let (aggs, init) = (core.aggs(), core.init_values());
                PackedAccumulator::new(aggs, input_insert_only, group_key.len(), init)
            })
            .flatten();
        Ok(GroupAggregateOperator {
            group_key,
            core,
            acc,
            emit: Emit {
                update_before: generate_update_before,
                kinds_only: false,
            },
            input: AggInput::Rows,
            bundle: None,
            key_buf: Vec::new(),
            results: Results::default(),
            packed,
        })
    }

    /// Buffers records and closes a bundle every `size` records (mini-batch).
    pub fn with_mini_batch(mut self, size: usize) -> GroupAggregateOperator {
        self.bundle = Some(Bundle::new(size, self.group_key.len()));
        self
    }

    /// Whether records take the typed path ([`PackedAccumulator`]): on the
    /// heap backend without TTL, for `COUNT`, `SUM`, `AVG` and (over an
    /// insert-only input) `MIN`/`MAX` calls whose key and accumulator pack
    /// (rows or partial accumulators alike).
    pub fn typed_path(&self) -> bool {
        self.packed.is_some()
    }

    /// Turns the typed path off, so every record takes the general path
    /// (benches and tests compare the two on one backend).
    pub fn with_general_path(mut self) -> GroupAggregateOperator {
        self.packed = None;
        self
    }

    /// Makes this the global half of a local-global aggregate: input rows
    /// are partial accumulators keyed by their leading group columns.
    pub fn with_partial_input(mut self) -> GroupAggregateOperator {
        self.input = AggInput::Partials;
        self.group_key = (0..self.group_key.len()).collect();
        self
    }

    fn extract_key(&mut self, row: &[Value]) {
        self.key_buf.clear();
        self.key_buf
            .extend(self.group_key.iter().map(|&i| row[i].clone()));
    }

    fn close_bundle(&mut self, out: &mut Vec<Change>) -> OpResult<()> {
        let GroupAggregateOperator {
            core,
            acc,
            emit,
            input,
            bundle,
            results,
            packed,
            ..
        } = self;
        let emit = *emit;
        let Some(b) = bundle.as_mut().filter(|b| b.key_count() > 0) else {
            return Ok(());
        };
        let (start, order) = b.grouped();
        let records_of = |i: usize| {
            order[start[i] as usize..start[i + 1] as usize]
                .iter()
                .map(|&r| &b.records[r as usize])
        };
        if let Some(p) = packed {
            // The heap: one key at a time, typed where it can be, each
            // key's bucket fetched some keys ahead.
            for i in 0..b.key_count() {
                let key = b.key(i);
                if i + PREFETCH_AHEAD < b.key_count() {
                    acc.prefetch(b.key(i + PREFETCH_AHEAD));
                }
                if apply_packed(p, acc, *input, key, records_of(i), emit, out) {
                    continue;
                }
                acc.modify(key, |slot| {
                    apply_to_slot(core, emit, *input, key, slot, records_of(i), results, out)
                })??;
            }
            b.clear();
            return Ok(());
        }
        let keys: Vec<&[Value]> = (0..b.key_count()).map(|i| b.key(i)).collect();
        let done = acc.modify_many(&keys, |i, slot| {
            apply_to_slot(
                core,
                emit,
                *input,
                keys[i],
                slot,
                records_of(i),
                results,
                out,
            )
        });
        b.clear();
        done?.into_iter().collect()
    }
}

/// Result buffers reused from record to record: the results before and
/// after a key's records, compared without building rows; a row is built
/// only for what is emitted.
#[derive(Default)]
struct Results {
    before: Vec<Value>,
    after: Vec<Value>,
}

/// A result row: the group key, then the calls' results.
#[inline]
fn result_row(key: &[Value], results: &[Value]) -> Row {
    let mut r = Vec::with_capacity(key.len() + results.len());
    r.extend_from_slice(key);
    r.extend_from_slice(results);
    r
}

/// Applies `records` (all of one key, in arrival order) to the key's
/// accumulator `slot` and emits the net change of its result.
#[allow(clippy::too_many_arguments)]
fn apply_to_slot<'a>(
    core: &mut AggCore,
    emit: Emit,
    input: AggInput,
    key: &[Value],
    slot: &mut Option<Row>,
    records: impl Iterator<Item = &'a Change>,
    results: &mut Results,
    out: &mut Vec<Change>,
) -> OpResult<()> {
    let mut records = records.peekable();
    if slot.is_none() {
        // No state: leading retractions have nothing to take away.
        if input == AggInput::Rows {
            while records.next_if(|c| c.kind.is_retract()).is_some() {}
        }
        if records.peek().is_none() {
            return Ok(());
        }
    }
    let first = slot.is_none();
    let acc_row = slot.get_or_insert_with(|| core.init_row());
    if !first {
        core.results_into(acc_row, &mut results.before);
    }
    for c in records {
        match input {
            AggInput::Rows => {
                let sign = if c.kind.is_accumulate() { 1 } else { -1 };
                core.accumulate(key, acc_row, &c.row, sign)?;
            }
            AggInput::Partials => core.merge(acc_row, &c.row[key.len()..]),
        }
    }
    if row_count(acc_row) == 0 {
        if !first {
            emit.delete(|| result_row(key, &results.before), out);
        }
        *slot = None;
        return Ok(());
    }
    core.results_into(acc_row, &mut results.after);
    emit.update(
        first,
        key.len(),
        || result_row(key, &results.before),
        || result_row(key, &results.after),
        || results.before != results.after,
        out,
    );
    Ok(())
}

/// How the operator emits: with `-U` rows or not, and whether rows are
/// built at all ([`Operator::emit_kinds_only`]).
#[derive(Clone, Copy)]
struct Emit {
    update_before: bool,
    kinds_only: bool,
}

impl Emit {
    /// The row `build` makes, or an empty one with kinds only.
    #[inline]
    fn row(self, build: impl FnOnce() -> Row) -> Row {
        if self.kinds_only {
            Row::new()
        } else {
            build()
        }
    }

    /// Emits `-D` of a group that emptied; `before` builds its last result.
    #[inline]
    fn delete(self, before: impl FnOnce() -> Row, out: &mut Vec<Change>) {
        out.push(Change::new(RowKind::Delete, self.row(before)));
    }

    /// Emits the change of a group that is not empty after its records:
    /// `+I` for a new group, else `-U` (if asked for) and `+U` when the
    /// result changed. With `-U` and rows, both rows are built and their
    /// results compared; otherwise `changed` says whether anything is
    /// emitted. With kinds only, the same changes carry empty rows.
    #[inline]
    fn update(
        self,
        first: bool,
        key_len: usize,
        before: impl FnOnce() -> Row,
        after: impl FnOnce() -> Row,
        changed: impl FnOnce() -> bool,
        out: &mut Vec<Change>,
    ) {
        if first {
            out.push(Change::new(RowKind::Insert, self.row(after)));
        } else if self.update_before && !self.kinds_only {
            let (b, a) = (before(), after());
            if b[key_len..] != a[key_len..] {
                out.push(Change::new(RowKind::UpdateBefore, b));
                out.push(Change::new(RowKind::UpdateAfter, a));
            }
        } else if changed() {
            if self.update_before {
                out.push(Change::new(RowKind::UpdateBefore, self.row(before)));
            }
            out.push(Change::new(RowKind::UpdateAfter, self.row(after)));
        }
    }
}

/// A key's records (in arrival order) on the typed path
/// ([`PackedAccumulator`] on the heap's packed rows), as [`apply_to_slot`]
/// applies them; `false`, with nothing done, when it declines: only
/// retractions for a missing group, a group that empties, or values the
/// typed path does not take.
#[inline]
#[allow(clippy::too_many_arguments)]
fn apply_packed<'a>(
    packed: &PackedAccumulator,
    acc: &mut ValueState,
    input: AggInput,
    key: &[Value],
    records: impl Iterator<Item = &'a Change>,
    emit: Emit,
    out: &mut Vec<Change>,
) -> bool {
    if key.iter().any(|v| matches!(v, Value::Str(_))) {
        return false; // a string key never packs
    }
    acc.modify_packed(key, packed.init(), |row, first| {
        let mut records = records.peekable();
        if first && input == AggInput::Rows {
            // No state: leading retractions have nothing to take away.
            while records.next_if(|c| c.kind.is_retract()).is_some() {}
            records.peek()?;
        }
        let before = *row;
        for c in records {
            let applied = match input {
                AggInput::Rows => {
                    let sign = if c.kind.is_accumulate() { 1 } else { -1 };
                    packed.accumulate(row, &c.row, sign)
                }
                AggInput::Partials => packed.merge(row, &c.row[key.len()..]),
            };
            if !applied {
                return None;
            }
        }
        if PackedAccumulator::row_count(row) == 0 {
            return None;
        }
        emit.update(
            first,
            key.len(),
            || packed.result_row(key, &before),
            || packed.result_row(key, row),
            || packed.results_differ(&before, row),
            out,
        );
        Some(())
    })
    .is_some()
}

impl Operator for GroupAggregateOperator {
    fn process(
        &mut self,
        _input: usize,
        batch: Vec<Change>,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        if self.bundle.is_none() {
            // Each record's state lookup is a cache miss; asking the state
            // to prefetch the key PREFETCH_AHEAD records ahead overlaps them.
            // A one-column key is read in place, without a copy.
            let single = match self.group_key[..] {
                [k] => Some(k),
                _ => None,
            };
            let mut ahead: Vec<Value> = Vec::with_capacity(self.group_key.len());
            for (i, c) in batch.iter().enumerate() {
                if let Some(next) = batch.get(i + PREFETCH_AHEAD) {
                    match single {
                        Some(k) => self.acc.prefetch(std::slice::from_ref(&next.row[k])),
                        None => {
                            ahead.clear();
                            ahead.extend(self.group_key.iter().map(|&k| next.row[k].clone()));
                            self.acc.prefetch(&ahead);
                        }
                    }
                }
                if single.is_none() {
                    self.extract_key(&c.row);
                }
                let GroupAggregateOperator {
                    core,
                    acc,
                    emit,
                    input,
                    key_buf,
                    results,
                    packed,
                    ..
                } = self;
                let emit = *emit;
                let key: &[Value] = match single {
                    Some(k) => std::slice::from_ref(&c.row[k]),
                    None => key_buf,
                };
                if let Some(p) = packed {
                    if apply_packed(p, acc, *input, key, std::iter::once(c), emit, out) {
                        continue;
                    }
                }
                acc.modify(key, |slot| {
                    apply_to_slot(
                        core,
                        emit,
                        *input,
                        key,
                        slot,
                        std::iter::once(c),
                        results,
                        out,
                    )
                })??;
            }
            // Read only: the rows go back to the thread that made them.
            crate::exec::give_back(batch);
            return Ok(());
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

    fn finish_bundle(&mut self, out: &mut Vec<Change>) -> OpResult<()> {
        self.close_bundle(out)
    }

    fn emit_kinds_only(&mut self) {
        self.emit.kinds_only = true;
    }

    fn buffered(&self) -> usize {
        self.bundle.as_ref().map_or(0, |b| b.records.len())
    }

    fn state_reports(&self) -> Vec<StateReport> {
        let mut r = vec![self.acc.report()];
        r.extend(self.core.state_reports());
        r
    }
}
