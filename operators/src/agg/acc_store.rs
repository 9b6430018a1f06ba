//! Where a group aggregate keeps its accumulators, chosen once when the
//! operator is built ([`Stores::new`]):
//! - rows ([`ValueState`]): a value state of any backend; each access
//!   decodes the row (the general path);
//! - [`PackedAccs`]: the heap's own handle
//!   ([`StateBackend::heap_value_state`]: the heap backend, no TTL), for
//!   calls whose accumulator is all their state and packs with the key in
//!   a bucket: the accumulator is updated in place as machine words, and no
//!   row is built but the ones emitted (the typed path; Flink generates
//!   typed code for the same reason). A key it declines
//!   ([`Fold::packed`]) goes the rows way on the same table, so both forms
//!   emit the same changelog and count the same state accesses.
//!
//! The operator's loops are generic over [`AccStore`], so the choice is
//! made once per batch, not per record.

use super::core::AggCore;
use super::fold::Fold;
use crate::changelog::Change;
use crate::checkpoint::OperatorImage;
use crate::operator::OpResult;
use crate::state::heap::{HeapValueState, PackedTemplate};
use crate::state::{StateBackend, StateReport, ValueState, PREFETCH_AHEAD};
use crate::value::Value;

/// Keeps a group aggregate's accumulators: applies a key's records to its
/// accumulator and emits the change ([`Fold`] says how).
pub(crate) trait AccStore {
    /// Starts fetching `key`'s accumulator (see [`ValueState::prefetch`]).
    fn prefetch(&self, key: &[Value]);

    /// Applies `records` (all of `key`, in arrival order) and emits the
    /// change.
    fn update<'a>(
        &mut self,
        fold: &mut Fold,
        key: &[Value],
        records: impl Iterator<Item = &'a Change> + Clone,
        out: &mut Vec<Change>,
    ) -> OpResult<()>;

    /// [`AccStore::update`] of each of `keys` (distinct), whose records
    /// `records_of(i)` gives; by default one at a time, each key's
    /// accumulator fetched some keys ahead.
    fn update_many<'a, I: Iterator<Item = &'a Change> + Clone>(
        &mut self,
        fold: &mut Fold,
        keys: &[&[Value]],
        records_of: impl Fn(usize) -> I,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        for (i, key) in keys.iter().enumerate() {
            if let Some(next) = keys.get(i + PREFETCH_AHEAD) {
                self.prefetch(next);
            }
            self.update(fold, key, records_of(i), out)?;
        }
        Ok(())
    }

    fn report(&self) -> StateReport;
}

/// Rows, in any backend.
impl AccStore for ValueState {
    #[inline]
    fn prefetch(&self, key: &[Value]) {
        ValueState::prefetch(self, key);
    }

    #[inline]
    fn update<'a>(
        &mut self,
        fold: &mut Fold,
        key: &[Value],
        records: impl Iterator<Item = &'a Change> + Clone,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        self.modify(key, |slot| fold.rows(key, slot, records, out))?
    }

    /// On RocksDB the keys are read and written together
    /// ([`ValueState::modify_many`]).
    fn update_many<'a, I: Iterator<Item = &'a Change> + Clone>(
        &mut self,
        fold: &mut Fold,
        keys: &[&[Value]],
        records_of: impl Fn(usize) -> I,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        let done = self.modify_many(keys, |i, slot| fold.rows(keys[i], slot, records_of(i), out));
        done?.into_iter().collect()
    }

    fn report(&self) -> StateReport {
        ValueState::report(self)
    }
}

/// Packed accumulators in the heap's table (the typed path).
pub(crate) struct PackedAccs {
    state: HeapValueState,
    /// The accumulator of a new group.
    init: PackedTemplate,
}

impl AccStore for PackedAccs {
    #[inline]
    fn prefetch(&self, key: &[Value]) {
        self.state.prefetch(key);
    }

    #[inline]
    fn update<'a>(
        &mut self,
        fold: &mut Fold,
        key: &[Value],
        records: impl Iterator<Item = &'a Change> + Clone,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        // A string key never packs: no need to look.
        let packs = !key.iter().any(|v| matches!(v, Value::Str(_)));
        let packed = packs
            && self
                .state
                .modify_packed(key, &self.init, |row, first| {
                    fold.packed(key, row, first, records.clone(), out)
                })
                .is_some();
        if packed {
            return Ok(());
        }
        self.state
            .modify(key, |slot| fold.rows(key, slot, records, out))?
    }

    fn report(&self) -> StateReport {
        self.state.report()
    }
}

/// The store a group aggregate was built with.
pub(crate) enum Stores {
    Rows(ValueState),
    Packed(PackedAccs),
}

impl Stores {
    /// State `acc` of operator `scope`, for `core`'s calls over keys of
    /// `key_len` values: packed where it can be.
    pub(crate) fn new(
        backend: &StateBackend,
        scope: &str,
        core: &AggCore,
        key_len: usize,
    ) -> OpResult<Stores> {
        let init = core
            .acc_is_all_state()
            .then(|| PackedTemplate::new(key_len, core.init_values()))
            .flatten();
        if let Some(init) = init {
            if let Some(state) = backend.heap_value_state(scope, "acc") {
                return Ok(Stores::Packed(PackedAccs { state, init }));
            }
        }
        let rows = backend.value_state(scope, "acc", core.acc_width())?;
        Ok(Stores::Rows(rows))
    }

    /// The same state, always taken the rows way.
    pub(crate) fn into_rows(self) -> Stores {
        match self {
            Stores::Packed(p) => Stores::Rows(p.state.into()),
            rows => rows,
        }
    }

    pub(crate) fn report(&self) -> StateReport {
        match self {
            Stores::Rows(s) => AccStore::report(s),
            Stores::Packed(s) => s.report(),
        }
    }

    /// Adds the accumulators to a checkpoint as state `acc`, rows either
    /// way (a packed accumulator decodes to the row it stands for).
    pub(crate) fn snapshot(&mut self, image: &mut OperatorImage) -> OpResult<()> {
        match self {
            Stores::Rows(s) => Ok(image.add_value("acc", s)?),
            Stores::Packed(p) => {
                image.add_rows("acc", p.state.all_entries());
                Ok(())
            }
        }
    }

    /// Takes back the accumulators of the keys `owns` says are this subtask's.
    pub(crate) fn restore(
        &mut self,
        image: &OperatorImage,
        owns: &dyn Fn(&[Value]) -> bool,
    ) -> OpResult<()> {
        match self {
            Stores::Rows(s) => Ok(image.restore_value("acc", s, owns)?),
            Stores::Packed(p) => {
                for (k, _, v) in image.entries("acc", owns) {
                    p.state.put(k, v.clone())?;
                }
                Ok(())
            }
        }
    }
}
