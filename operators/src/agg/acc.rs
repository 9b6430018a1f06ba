//! An accumulator row as the aggregate functions read and write it.
//!
//! Layout: `[row count, slots of call 0, slots of call 1, ...]`, two slots
//! per call (see [`super::functions`]). What the calls compute is written
//! once, in [`super::functions`] and [`super::core::AggCore`], over this
//! trait; where the row lives is the store's business
//! ([`super::acc_store`]):
//! - a row of [`Value`]s, decoded from any backend's value state (the
//!   general path);
//! - the heap's [`PackedRow`], updated in place as tagged machine words
//!   (the typed path). A value it cannot hold (a string) marks the row,
//!   and the store then takes the general path for that record
//!   ([`PackedRow::fits`]).

use crate::state::heap::PackedRow;
use crate::value::Value;
use std::borrow::Cow;

/// The slots of one accumulator row.
pub trait Acc {
    /// Slot `i` (0 is the row count).
    fn get(&self, i: usize) -> Cow<'_, Value>;

    /// Sets slot `i`.
    fn set(&mut self, i: usize, v: Value);

    /// Slot `i`, copied out.
    #[inline]
    fn value(&self, i: usize) -> Value {
        self.get(i).into_owned()
    }

    /// Appends slot `i` to `out`.
    #[inline]
    fn push_to(&self, i: usize, out: &mut Vec<Value>) {
        crate::value::push_copy(out, &self.get(i));
    }

    /// Slot `i` if it is an integer (counts are): `get` without a `Value`.
    #[inline]
    fn int(&self, i: usize) -> Option<i64> {
        self.get(i).as_int()
    }

    /// Sets slot `i` to an integer.
    #[inline]
    fn set_int(&mut self, i: usize, v: i64) {
        self.set(i, Value::Int(v));
    }

    /// Whether slot `i` holds the same in `self` and `other`; for integers
    /// (what counts hold) exactly when they are equal.
    #[inline]
    fn same(&self, other: &Self, i: usize) -> bool {
        *self.get(i) == *other.get(i)
    }
}

impl Acc for [Value] {
    #[inline]
    fn get(&self, i: usize) -> Cow<'_, Value> {
        Cow::Borrowed(&self[i])
    }

    #[inline]
    fn set(&mut self, i: usize, v: Value) {
        self[i] = v;
    }

    #[inline]
    fn int(&self, i: usize) -> Option<i64> {
        self[i].as_int()
    }
}

impl Acc for PackedRow {
    #[inline]
    fn get(&self, i: usize) -> Cow<'_, Value> {
        Cow::Owned(PackedRow::get(self, i))
    }

    #[inline]
    fn set(&mut self, i: usize, v: Value) {
        PackedRow::set(self, i, &v);
    }

    #[inline]
    fn value(&self, i: usize) -> Value {
        PackedRow::get(self, i)
    }

    #[inline]
    fn push_to(&self, i: usize, out: &mut Vec<Value>) {
        PackedRow::push_to(self, i, out);
    }

    #[inline]
    fn int(&self, i: usize) -> Option<i64> {
        PackedRow::int(self, i)
    }

    #[inline]
    fn set_int(&mut self, i: usize, v: i64) {
        PackedRow::set_int(self, i, v);
    }

    #[inline]
    fn same(&self, other: &Self, i: usize) -> bool {
        PackedRow::same(self, other, i)
    }
}

/// The row count of an accumulator.
#[inline]
pub fn row_count<A: Acc + ?Sized>(acc: &A) -> i64 {
    acc.int(0).unwrap_or(0)
}
