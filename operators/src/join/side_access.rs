//! A join side's state, or its per-batch image while an input batch is
//! joined with asynchronous state ([`super::join_async_state`]): the same
//! accesses either way, so [`super::join_state`] reads and writes its
//! layouts through these without knowing which.

use crate::state::rocksdb::StateImage;
use crate::state::{MapState, StateResult, ValueState};
use crate::value::{Row, Value};

/// A value state, or its image while a batch is joined.
pub(crate) enum Values<'a> {
    State(&'a mut ValueState),
    Image(&'a mut StateImage),
}

impl Values<'_> {
    pub(crate) fn of<'a>(s: &'a mut ValueState, image: &'a mut Option<StateImage>) -> Values<'a> {
        match image {
            Some(i) => Values::Image(i),
            None => Values::State(s),
        }
    }
    pub(crate) fn get(&mut self, key: &[Value]) -> StateResult<Option<Row>> {
        match self {
            Values::State(s) => s.get(key),
            Values::Image(i) => Ok(i.get(key, &[]).cloned()),
        }
    }
    pub(crate) fn put(&mut self, key: &[Value], row: Row) -> StateResult<()> {
        match self {
            Values::State(s) => s.put(key, row),
            Values::Image(i) => {
                i.put(key, &[], row);
                Ok(())
            }
        }
    }
    pub(crate) fn delete(&mut self, key: &[Value]) -> StateResult<()> {
        match self {
            Values::State(s) => s.delete(key),
            Values::Image(i) => {
                i.delete(key, &[]);
                Ok(())
            }
        }
    }
    pub(crate) fn modify<R>(
        &mut self,
        key: &[Value],
        f: impl FnOnce(&mut Option<Row>) -> R,
    ) -> StateResult<R> {
        match self {
            Values::State(s) => s.modify(key, f),
            Values::Image(i) => Ok(i.modify(key, &[], f)),
        }
    }
}

/// A map state, or its image while a batch is joined.
pub(crate) enum Maps<'a> {
    State(&'a mut MapState),
    Image(&'a mut StateImage),
}

impl Maps<'_> {
    pub(crate) fn of<'a>(s: &'a mut MapState, image: &'a mut Option<StateImage>) -> Maps<'a> {
        match image {
            Some(i) => Maps::Image(i),
            None => Maps::State(s),
        }
    }
    pub(crate) fn put(&mut self, key: &[Value], ukey: &[Value], row: Row) -> StateResult<()> {
        match self {
            Maps::State(s) => s.put(key, ukey, row),
            Maps::Image(i) => {
                i.put(key, ukey, row);
                Ok(())
            }
        }
    }
    pub(crate) fn delete(&mut self, key: &[Value], ukey: &[Value]) -> StateResult<()> {
        match self {
            Maps::State(s) => s.delete(key, ukey),
            Maps::Image(i) => {
                i.delete(key, ukey);
                Ok(())
            }
        }
    }
    pub(crate) fn modify<R>(
        &mut self,
        key: &[Value],
        ukey: &[Value],
        f: impl FnOnce(&mut Option<Row>) -> R,
    ) -> StateResult<R> {
        match self {
            Maps::State(s) => s.modify(key, ukey, f),
            Maps::Image(i) => Ok(i.modify(key, ukey, f)),
        }
    }
    pub(crate) fn modify_owned<R>(
        &mut self,
        key: &[Value],
        ukey: Row,
        f: impl FnOnce(&mut Option<Row>) -> R,
    ) -> StateResult<R> {
        match self {
            Maps::State(s) => s.modify_owned(key, ukey, f),
            Maps::Image(i) => Ok(i.modify(key, &ukey, f)),
        }
    }
    pub(crate) fn for_each(
        &mut self,
        key: &[Value],
        f: impl FnMut(&[Value], &[Value]),
    ) -> StateResult<()> {
        match self {
            Maps::State(s) => s.for_each(key, f),
            Maps::Image(i) => {
                i.for_each(key, f);
                Ok(())
            }
        }
    }
}
