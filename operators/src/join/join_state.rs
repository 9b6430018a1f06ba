//! One input side's join state, in the three layouts Flink uses.
//!
//! | layout | when | state |
//! |---|---|---|
//! | `JoinKeyContainsUniqueKey` | the join key covers a unique key | value state: join key → row |
//! | `HasUniqueKey` | the input has a unique key | map state: join key → {unique key → row} |
//! | `NoUniqueKey` | otherwise | map state: join key → {row → count} |
//!
//! An outer side (a preserved side of a LEFT, RIGHT or FULL join; Flink's
//! `OuterJoinRecordStateView`) also keeps, per row,
//! its number of matches on the other side ("associations"), which decides
//! when its NULL-padded row must be emitted or retracted.
//!
//! Stored values: `JoinKeyContainsUniqueKey` and `HasUniqueKey` store the
//! row followed by the associations (outer side only); `NoUniqueKey` stores
//! `[count]` or `[count, associations]` under the row itself.

use super::side_access::{Maps, Values};
use crate::checkpoint::OperatorImage;
use crate::operator::OpResult;
use crate::state::rocksdb::{ImageWrites, StateImage};
use crate::state::{MapState, StateBackend, StateReport, ValueState};
use crate::value::{extend_copy, Row, Value};

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum JoinStateLayout {
    JoinKeyContainsUniqueKey,
    /// Positions of the unique key in the input row.
    HasUniqueKey(Vec<usize>),
    NoUniqueKey,
}

impl JoinStateLayout {
    pub fn describe(&self) -> &'static str {
        match self {
            JoinStateLayout::JoinKeyContainsUniqueKey => "JoinKeyContainsUniqueKey",
            JoinStateLayout::HasUniqueKey(_) => "HasUniqueKey",
            JoinStateLayout::NoUniqueKey => "NoUniqueKey",
        }
    }
}

enum Store {
    Value(ValueState),
    Map(MapState),
}

/// A row of this side that matched, with how often it is stored and its
/// associations (outer side only).
#[derive(Clone, Debug)]
pub struct Stored {
    pub row: Row,
    pub count: i64,
    pub associations: i64,
}

pub struct JoinSideState {
    layout: JoinStateLayout,
    outer: bool,
    arity: usize,
    store: Store,
    /// The unique key of the row at hand (`HasUniqueKey`), reused from
    /// record to record rather than allocated for each.
    ukey: Row,
    /// The batch's keys while an input batch is joined with asynchronous
    /// state ([`super::join_async_state`]): every access goes to it.
    image: Option<StateImage>,
}

impl JoinSideState {
    pub fn new(
        backend: &StateBackend,
        scope: &str,
        name: &str,
        layout: JoinStateLayout,
        outer: bool,
        arity: usize,
    ) -> OpResult<JoinSideState> {
        let extra = outer as usize;
        let store = match &layout {
            JoinStateLayout::JoinKeyContainsUniqueKey => {
                Store::Value(backend.value_state(scope, name, arity + extra)?)
            }
            JoinStateLayout::HasUniqueKey(uk) => {
                Store::Map(backend.map_state(scope, name, uk.len(), arity + extra)?)
            }
            JoinStateLayout::NoUniqueKey => {
                Store::Map(backend.map_state(scope, name, arity, 1 + extra)?)
            }
        };
        Ok(JoinSideState {
            layout,
            outer,
            arity,
            store,
            ukey: Row::new(),
            image: None,
        })
    }

    /// Whether this side's state keeps per-batch images (RocksDB without a
    /// TTL; see [`super::join_async_state`]).
    pub(crate) fn keeps_images(&self) -> bool {
        match &self.store {
            Store::Value(s) => s.keeps_images(),
            Store::Map(s) => s.keeps_images(),
        }
    }

    /// Loads `keys` (distinct) into this side's image; accesses go to it
    /// until [`JoinSideState::end_batch`].
    pub(crate) fn begin_batch(&mut self, keys: &[&[Value]]) -> OpResult<()> {
        self.image = match &mut self.store {
            Store::Value(s) => s.load_image(keys)?,
            Store::Map(s) => s.load_image(keys)?,
        };
        Ok(())
    }

    /// Stages the image's changed entries into `writes` and drops it.
    pub(crate) fn end_batch(&mut self, writes: &mut ImageWrites) -> OpResult<()> {
        if let Some(image) = self.image.take() {
            match &mut self.store {
                Store::Value(s) => s.stage_image(image, writes)?,
                Store::Map(s) => s.stage_image(image, writes)?,
            }
        }
        Ok(())
    }

    /// Drops the image unwritten (a failed batch).
    pub(crate) fn discard_batch(&mut self) {
        self.image = None;
    }

    pub fn layout(&self) -> &JoinStateLayout {
        &self.layout
    }

    /// This side's entries into a checkpoint, as state `name`.
    pub fn snapshot(&mut self, name: &str, image: &mut OperatorImage) -> OpResult<()> {
        match &mut self.store {
            Store::Value(s) => Ok(image.add_value(name, s)?),
            Store::Map(s) => Ok(image.add_map(name, s)?),
        }
    }

    /// This side's owned entries back from a checkpoint.
    pub fn restore(
        &mut self,
        name: &str,
        image: &OperatorImage,
        owns: &dyn Fn(&[Value]) -> bool,
    ) -> OpResult<()> {
        match &mut self.store {
            Store::Value(s) => Ok(image.restore_value(name, s, owns)?),
            Store::Map(s) => Ok(image.restore_map(name, s, owns)?),
        }
    }

    pub fn report(&self) -> StateReport {
        match &self.store {
            Store::Value(s) => s.report(),
            Store::Map(s) => s.report(),
        }
    }

    /// Every stored row under `key` for which `keep` holds.
    pub fn matches(
        &mut self,
        key: &[Value],
        keep: impl FnMut(&[Value]) -> bool,
    ) -> OpResult<Vec<Stored>> {
        let mut found = Vec::new();
        self.matches_into(key, keep, &mut found)?;
        Ok(found)
    }

    /// [`JoinSideState::matches`] into `found`, whose rows' buffers are
    /// reused: a caller that keeps `found` from record to record copies
    /// matched rows into buffers it already has instead of allocating one
    /// per match.
    pub fn matches_into(
        &mut self,
        key: &[Value],
        mut keep: impl FnMut(&[Value]) -> bool,
        found: &mut Vec<Stored>,
    ) -> OpResult<()> {
        let arity = self.arity;
        let outer = self.outer;
        let mut n = 0;
        let mut push = |row: &[Value], count: i64, associations: i64| {
            if n == found.len() {
                found.push(Stored {
                    row: Row::with_capacity(row.len()),
                    count: 0,
                    associations: 0,
                });
            }
            let s = &mut found[n];
            s.row.clear();
            extend_copy(&mut s.row, row);
            s.count = count;
            s.associations = associations;
            n += 1;
        };
        match (&mut self.store, &self.layout) {
            (Store::Value(s), _) => {
                if let Some(v) = Values::of(s, &mut self.image).get(key)? {
                    if keep(&v[..arity]) {
                        let associations = if outer {
                            v[arity].as_int().unwrap_or(0)
                        } else {
                            0
                        };
                        push(&v[..arity], 1, associations);
                    }
                }
            }
            (Store::Map(s), JoinStateLayout::HasUniqueKey(_)) => Maps::of(s, &mut self.image)
                .for_each(key, |_, v| {
                    if keep(&v[..arity]) {
                        let associations = if outer {
                            v[arity].as_int().unwrap_or(0)
                        } else {
                            0
                        };
                        push(&v[..arity], 1, associations);
                    }
                })?,
            (Store::Map(s), _) => Maps::of(s, &mut self.image).for_each(key, |row, v| {
                if keep(row) {
                    let count = v[0].as_int().unwrap_or(0);
                    let associations = if outer { v[1].as_int().unwrap_or(0) } else { 0 };
                    push(row, count, associations);
                }
            })?,
        }
        found.truncate(n);
        Ok(())
    }

    /// Adds one copy of `row` (with its associations, on an outer side).
    pub fn add(&mut self, key: &[Value], row: &[Value], associations: i64) -> OpResult<()> {
        // Room for the associations, which a stored row carries last.
        let extra = self.outer && self.layout != JoinStateLayout::NoUniqueKey;
        let mut v = Row::with_capacity(row.len() + extra as usize);
        extend_copy(&mut v, row);
        self.add_owned(key, v, associations)
    }

    /// [`JoinSideState::add`] of a row the caller gives up: the state keeps
    /// it (as the value, or on `NoUniqueKey` as the user key) instead of a
    /// copy.
    pub fn add_owned(&mut self, key: &[Value], mut row: Row, associations: i64) -> OpResult<()> {
        if self.layout == JoinStateLayout::NoUniqueKey {
            return self.add_counted(key, row, associations);
        }
        if self.outer {
            row.push(Value::Int(associations));
        }
        match (&mut self.store, &self.layout) {
            (Store::Value(s), _) => Values::of(s, &mut self.image).put(key, row)?,
            (Store::Map(s), JoinStateLayout::HasUniqueKey(uk)) => {
                fill_unique_key(&mut self.ukey, uk, &row);
                Maps::of(s, &mut self.image).put(key, &self.ukey, row)?
            }
            (Store::Map(_), _) => unreachable!("NoUniqueKey is handled above"),
        }
        Ok(())
    }

    /// `NoUniqueKey`: one more copy of `row`, stored under the row itself
    /// as `[count]` (`[count, associations]` on an outer side).
    fn add_counted(&mut self, key: &[Value], row: Row, associations: i64) -> OpResult<()> {
        let outer = self.outer;
        let Store::Map(s) = &mut self.store else {
            unreachable!("a NoUniqueKey side keeps map state")
        };
        Maps::of(s, &mut self.image).modify_owned(key, row, |slot| match slot {
            Some(v) => {
                v[0] = Value::Int(v[0].as_int().unwrap_or(0) + 1);
                if outer {
                    v[1] = Value::Int(associations);
                }
            }
            None => {
                let mut v = Row::with_capacity(1 + outer as usize);
                v.push(Value::Int(1));
                if outer {
                    v.push(Value::Int(associations));
                }
                *slot = Some(v);
            }
        })?;
        Ok(())
    }

    /// Removes one copy of `row`.
    pub fn retract(&mut self, key: &[Value], row: &[Value]) -> OpResult<()> {
        match (&mut self.store, &self.layout) {
            (Store::Value(s), _) => Values::of(s, &mut self.image).delete(key)?,
            (Store::Map(s), JoinStateLayout::HasUniqueKey(uk)) => {
                fill_unique_key(&mut self.ukey, uk, row);
                Maps::of(s, &mut self.image).delete(key, &self.ukey)?
            }
            (Store::Map(s), _) => Maps::of(s, &mut self.image).modify(key, row, |slot| {
                if let Some(v) = slot {
                    let count = v[0].as_int().unwrap_or(0) - 1;
                    if count <= 0 {
                        *slot = None;
                    } else {
                        v[0] = Value::Int(count);
                    }
                }
            })?,
        }
        Ok(())
    }

    /// Sets the associations of a stored row (outer side only).
    pub fn set_associations(
        &mut self,
        key: &[Value],
        row: &[Value],
        associations: i64,
    ) -> OpResult<()> {
        let arity = self.arity;
        match (&mut self.store, &self.layout) {
            (Store::Value(s), _) => Values::of(s, &mut self.image).modify(key, |slot| {
                if let Some(v) = slot {
                    v[arity] = Value::Int(associations);
                }
            })?,
            (Store::Map(s), JoinStateLayout::HasUniqueKey(uk)) => {
                fill_unique_key(&mut self.ukey, uk, row);
                Maps::of(s, &mut self.image).modify(key, &self.ukey, |slot| {
                    if let Some(v) = slot {
                        v[arity] = Value::Int(associations);
                    }
                })?
            }
            (Store::Map(s), _) => Maps::of(s, &mut self.image).modify(key, row, |slot| {
                if let Some(v) = slot {
                    v[1] = Value::Int(associations);
                }
            })?,
        }
        Ok(())
    }
}

/// `buf` becomes the values of `row` at positions `uk`.
#[inline]
fn fill_unique_key(buf: &mut Row, uk: &[usize], row: &[Value]) {
    buf.clear();
    buf.extend(uk.iter().map(|&i| row[i].clone()));
}
