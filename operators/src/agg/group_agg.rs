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
//! once. The global aggregate buffers partial accumulators from local
//! aggregates and merges them the same way.
//!
//! Counters: one-record-at-a-time, per input record one read and one write
//! (or delete) of `acc`; mini-batch, one read and one write per distinct key
//! per bundle; plus the distinct and MIN/MAX maps (see [`super::core`]).

use super::core::{row_count, AggCore};
use super::functions::AggSpec;
use crate::changelog::{Change, RowKind};
use crate::operator::{OpResult, Operator};
use crate::state::heap::{new_map, Map};
use crate::state::{StateBackend, StateReport, ValueState};
use crate::value::{Row, Value};

/// What the operator's input rows are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggInput {
    /// Rows of the aggregated table.
    Rows,
    /// Partial accumulators `[group key..., acc...]` from a local aggregate.
    Partials,
}

/// Buffered records of an open bundle, per key in arrival order.
struct Bundle {
    size: usize,
    buffered: usize,
    index: Map<Row, usize>,
    entries: Vec<(Row, Vec<Change>)>,
}

/// How many records ahead the one-at-a-time loop prefetches state.
const PREFETCH_AHEAD: usize = 12;

pub struct GroupAggregateOperator {
    group_key: Vec<usize>,
    core: AggCore,
    acc: ValueState,
    generate_update_before: bool,
    input: AggInput,
    bundle: Option<Bundle>,
    key_buf: Vec<Value>,
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
        Ok(GroupAggregateOperator {
            group_key,
            core,
            acc,
            generate_update_before,
            input: AggInput::Rows,
            bundle: None,
            key_buf: Vec::new(),
        })
    }

    /// Buffers records and closes a bundle every `size` records (mini-batch).
    pub fn with_mini_batch(mut self, size: usize) -> GroupAggregateOperator {
        self.bundle = Some(Bundle {
            size: size.max(1),
            buffered: 0,
            index: new_map(),
            entries: Vec::new(),
        });
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

    /// Applies `records` (all of one key) to the key's accumulator and
    /// emits the net change of its result.
    fn apply_key(
        &mut self,
        key: &[Value],
        records: &[Change],
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        let GroupAggregateOperator {
            core,
            acc,
            generate_update_before,
            input,
            ..
        } = self;
        let res = acc.modify(key, |slot| -> OpResult<()> {
            let mut records = records;
            if slot.is_none() {
                // No state: leading retractions have nothing to take away.
                let skip = match input {
                    AggInput::Rows => records.iter().take_while(|c| c.kind.is_retract()).count(),
                    AggInput::Partials => 0,
                };
                records = &records[skip..];
                if records.is_empty() {
                    return Ok(());
                }
            }
            let first = slot.is_none();
            let acc_row = slot.get_or_insert_with(|| core.init_row());
            let prev = (!first).then(|| core.result_row(key, acc_row));
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
                if let Some(prev) = prev {
                    out.push(Change::new(RowKind::Delete, prev));
                }
                *slot = None;
                return Ok(());
            }
            let new = core.result_row(key, acc_row);
            match prev {
                None => out.push(Change::new(RowKind::Insert, new)),
                Some(prev) if prev != new => {
                    if *generate_update_before {
                        out.push(Change::new(RowKind::UpdateBefore, prev));
                    }
                    out.push(Change::new(RowKind::UpdateAfter, new));
                }
                Some(_) => {}
            }
            Ok(())
        })?;
        res
    }

    fn close_bundle(&mut self, out: &mut Vec<Change>) -> OpResult<()> {
        let entries = match &mut self.bundle {
            Some(b) if !b.entries.is_empty() => {
                b.buffered = 0;
                b.index.clear();
                std::mem::take(&mut b.entries)
            }
            _ => return Ok(()),
        };
        for (key, records) in entries {
            self.apply_key(&key, &records, out)?;
        }
        Ok(())
    }
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
            let mut ahead: Vec<Value> = Vec::with_capacity(self.group_key.len());
            for (i, c) in batch.iter().enumerate() {
                if let Some(next) = batch.get(i + PREFETCH_AHEAD) {
                    ahead.clear();
                    ahead.extend(self.group_key.iter().map(|&k| next.row[k].clone()));
                    self.acc.prefetch(&ahead);
                }
                self.extract_key(&c.row);
                let key = std::mem::take(&mut self.key_buf);
                let r = self.apply_key(&key, std::slice::from_ref(c), out);
                self.key_buf = key;
                r?;
            }
            return Ok(());
        }
        for c in batch {
            self.extract_key(&c.row);
            let b = self.bundle.as_mut().expect("mini-batch mode");
            match b.index.get(self.key_buf.as_slice()) {
                Some(&i) => b.entries[i].1.push(c),
                None => {
                    b.index.insert(self.key_buf.clone(), b.entries.len());
                    b.entries.push((self.key_buf.clone(), vec![c]));
                }
            }
            b.buffered += 1;
            if b.buffered >= b.size {
                self.close_bundle(out)?;
            }
        }
        Ok(())
    }

    fn finish_bundle(&mut self, out: &mut Vec<Change>) -> OpResult<()> {
        self.close_bundle(out)
    }

    fn state_reports(&self) -> Vec<StateReport> {
        let mut r = vec![self.acc.report()];
        r.extend(self.core.state_reports());
        r
    }
}
