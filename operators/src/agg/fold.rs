//! One key's records applied to its accumulator, and the change that
//! emits (the rules are in the module doc of [`super::group_agg`]).
//!
//! [`Fold`] is what a group aggregate computes, apart from where it keeps
//! its accumulators ([`super::acc_store`]): the calls ([`AggCore`]), what
//! the input rows are, and how changes are emitted. It works on an
//! accumulator row of either form the store holds ([`Acc`]): [`Fold::rows`]
//! on a decoded row in its state slot, [`Fold::packed`] on the heap's
//! packed row, which may decline (nothing done) for the store to take the
//! rows way instead. Both apply the records with the same code.

use super::acc::{row_count, Acc};
use super::core::AggCore;
use crate::changelog::{Change, RowKind};
use crate::operator::OpResult;
use crate::state::heap::PackedRow;
use crate::value::{Row, Value};

/// What the operator's input rows are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AggInput {
    /// Rows of the aggregated table.
    Rows,
    /// Partial accumulators `[group key..., acc...]` from a local aggregate.
    Partials,
}

pub(crate) struct Fold {
    pub(crate) core: AggCore,
    pub(crate) input: AggInput,
    pub(crate) emit: Emit,
    /// Results before and after a key's records (the rows form), reused
    /// from key to key: compared without building rows, and a row is built
    /// only for what is emitted.
    before: Vec<Value>,
    after: Vec<Value>,
}

impl Fold {
    pub(crate) fn new(core: AggCore, emit: Emit) -> Fold {
        Fold {
            core,
            input: AggInput::Rows,
            emit,
            before: Vec::new(),
            after: Vec::new(),
        }
    }

    /// Applies `records` (all of one key, in arrival order) to the key's
    /// accumulator row in its state `slot` and emits the net change.
    pub(crate) fn rows<'a>(
        &mut self,
        key: &[Value],
        slot: &mut Option<Row>,
        records: impl Iterator<Item = &'a Change>,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        let mut records = records.peekable();
        if slot.is_none() {
            if self.input == AggInput::Rows {
                skip_retractions(&mut records);
            }
            if records.peek().is_none() {
                return Ok(());
            }
        }
        let first = slot.is_none();
        let acc = &mut slot.get_or_insert_with(|| self.core.init_row())[..];
        if !first {
            self.core.results_into(acc, &mut self.before);
        }
        self.apply(key, acc, records)?;
        let Fold {
            emit,
            before,
            after,
            ..
        } = self;
        if row_count(acc) == 0 {
            if !first {
                emit.delete(|| result_row(key, before), out);
            }
            *slot = None;
            return Ok(());
        }
        self.core.results_into(acc, after);
        emit.update(
            first,
            key.len(),
            || result_row(key, before),
            || result_row(key, after),
            || before != after,
            out,
        );
        Ok(())
    }

    /// [`Fold::rows`] on the heap's packed `row` (`first`: a fresh one for
    /// a key without state). Declines with `None`, having emitted nothing,
    /// where the packed form cannot follow: only retractions for a missing
    /// group, a group that empties (its state is deleted), or a value it
    /// cannot hold. Only for calls whose accumulator is all their state
    /// ([`AggCore::acc_is_all_state`]), so a declined key changed nothing.
    #[inline]
    pub(crate) fn packed<'a>(
        &mut self,
        key: &[Value],
        row: &mut PackedRow,
        first: bool,
        records: impl Iterator<Item = &'a Change>,
        out: &mut Vec<Change>,
    ) -> Option<()> {
        let mut records = records.peekable();
        if first && self.input == AggInput::Rows {
            skip_retractions(&mut records);
            records.peek()?;
        }
        let before = *row;
        // An error (there is none without value maps) declines too: the
        // rows way meets it again and reports it. Declining puts the row
        // back as it was (`modify_packed` lends it in place).
        let kept = self.apply(key, row, records).is_ok() && row.fits() && row_count(row) != 0;
        if !kept {
            *row = before;
            return None;
        }
        let core = &self.core;
        self.emit.update(
            first,
            key.len(),
            || core.result_row(key, &before),
            || core.result_row(key, row),
            || core.results_differ(&before, row),
            out,
        );
        Some(())
    }

    /// Applies each record to `acc`: an input row accumulated or
    /// retracted, or a partial accumulator merged.
    #[inline]
    fn apply<'a, A: Acc + ?Sized>(
        &mut self,
        key: &[Value],
        acc: &mut A,
        records: impl Iterator<Item = &'a Change>,
    ) -> OpResult<()> {
        for c in records {
            match self.input {
                AggInput::Rows => {
                    let sign = if c.kind.is_accumulate() { 1 } else { -1 };
                    self.core.accumulate(key, acc, &c.row, sign)?;
                }
                AggInput::Partials => self.core.merge(acc, &c.row[key.len()..]),
            }
        }
        Ok(())
    }
}

/// Drops leading retractions: with no state there is nothing to take away.
fn skip_retractions<'a>(records: &mut std::iter::Peekable<impl Iterator<Item = &'a Change>>) {
    while records.next_if(|c| c.kind.is_retract()).is_some() {}
}

/// A result row: the group key, then the calls' results.
#[inline]
fn result_row(key: &[Value], results: &[Value]) -> Row {
    let mut r = Vec::with_capacity(key.len() + results.len());
    r.extend_from_slice(key);
    r.extend_from_slice(results);
    r
}

/// How the operator emits: with `-U` rows or not, and whether rows are
/// built at all (kinds only: the sink only counts kinds).
#[derive(Clone, Copy)]
pub(crate) struct Emit {
    pub(crate) update_before: bool,
    pub(crate) kinds_only: bool,
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
