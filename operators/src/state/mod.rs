//! Keyed state with exact access counters, on two backends.
//!
//! Operators keep their state in [`ValueState`] (key → row) and [`MapState`]
//! (key → {user key → row}) handles obtained from a [`StateBackend`]:
//! - heap ([`heap`]): `hashbrown` maps of native rows, no serialisation;
//! - RocksDB ([`rocksdb`]): one column family per (operator, state), keys
//!   encoded by [`codec`] so that a key's map entries are contiguous, values
//!   serialised, WAL off; every access is a real `get`/`put`/`delete`.
//!
//! Both count, per handle: reads, writes, deletes, live entries and live
//! logical bytes (encoded key + value length, the same rule on both). The
//! counting rules, pinned by tests:
//! - `get` is one read; `put` one write; `delete` one delete (even if absent);
//! - `modify` (read-modify-write) is one read, then one write if the slot
//!   holds a row afterwards, or one delete if a row was removed;
//! - a map scan (`entries`, `for_each`) is one read per entry visited, and
//!   one read when the key has no entries (the seek still happens).

pub mod codec;
pub mod heap;
pub mod rocksdb;

use crate::value::{Row, Value};
use std::path::Path;
use std::sync::Arc;

/// A state backend failure (RocksDB I/O, corrupt bytes).
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("RocksDB error in state '{state}': {message}")]
    RocksDb { state: String, message: String },
    #[error("cannot create the RocksDB state directory under {dir}: {message}")]
    Directory { dir: String, message: String },
    #[error("corrupt state bytes in '{0}'")]
    Corrupt(String),
}

pub type StateResult<T> = Result<T, StateError>;

/// Which backend holds the state (`state.backend.type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BackendKind {
    /// `hashmap`: heap maps.
    Heap,
    /// `rocksdb`: an on-disk RocksDB per run.
    RocksDb,
}

impl BackendKind {
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Heap => "hashmap",
            BackendKind::RocksDb => "rocksdb",
        }
    }
}

/// Access counters and live size of one state handle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StateMetrics {
    pub reads: u64,
    pub writes: u64,
    pub deletes: u64,
    /// Live entries: keys of a value state, (key, user key) pairs of a map state.
    pub entries: i64,
    /// Live logical bytes: encoded key (+ user key) + value, summed.
    pub logical_bytes: i64,
}

impl StateMetrics {
    pub fn merge(&mut self, o: &StateMetrics) {
        self.reads += o.reads;
        self.writes += o.writes;
        self.deletes += o.deletes;
        self.entries += o.entries;
        self.logical_bytes += o.logical_bytes;
    }

    pub fn accesses(&self) -> u64 {
        self.reads + self.writes + self.deletes
    }
}

/// A state's name and its counters, as an operator reports them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateReport {
    /// The state's name within its operator (`acc`, `left`, ...).
    pub name: String,
    /// The RocksDB column family, if on RocksDB.
    pub column_family: Option<String>,
    pub metrics: StateMetrics,
}

/// Creates state handles; cheap to clone (shared by every subtask of a run).
#[derive(Clone)]
pub struct StateBackend {
    inner: Arc<Inner>,
}

enum Inner {
    Heap,
    RocksDb(rocksdb::RocksDbStore),
}

impl StateBackend {
    pub fn heap() -> StateBackend {
        StateBackend {
            inner: Arc::new(Inner::Heap),
        }
    }

    /// A fresh RocksDB in a new directory under `parent` (the system
    /// temporary directory when `None`), removed when the backend drops.
    pub fn rocksdb(parent: Option<&Path>) -> StateResult<StateBackend> {
        Ok(StateBackend {
            inner: Arc::new(Inner::RocksDb(rocksdb::RocksDbStore::open(parent)?)),
        })
    }

    pub fn new(kind: BackendKind, parent: Option<&Path>) -> StateResult<StateBackend> {
        match kind {
            BackendKind::Heap => Ok(StateBackend::heap()),
            BackendKind::RocksDb => StateBackend::rocksdb(parent),
        }
    }

    pub fn kind(&self) -> BackendKind {
        match &*self.inner {
            Inner::Heap => BackendKind::Heap,
            Inner::RocksDb(_) => BackendKind::RocksDb,
        }
    }

    /// A value state `key → row`. `scope` names the operator (all subtasks
    /// of one operator share one column family; their keys are disjoint).
    pub fn value_state(
        &self,
        scope: &str,
        name: &str,
        value_arity: usize,
    ) -> StateResult<ValueState> {
        Ok(match &*self.inner {
            Inner::Heap => ValueState::Heap(heap::HeapValueState::new(name)),
            Inner::RocksDb(store) => {
                ValueState::Rocks(store.value_state(scope, name, value_arity)?)
            }
        })
    }

    /// A map state `key → {user key → row}`.
    pub fn map_state(
        &self,
        scope: &str,
        name: &str,
        ukey_arity: usize,
        value_arity: usize,
    ) -> StateResult<MapState> {
        Ok(match &*self.inner {
            Inner::Heap => MapState::Heap(heap::HeapMapState::new(name)),
            Inner::RocksDb(store) => {
                MapState::Rocks(store.map_state(scope, name, ukey_arity, value_arity)?)
            }
        })
    }

    /// RocksDB's own estimate of a column family's bytes (live SST data plus
    /// memtables); `None` on the heap backend.
    pub fn physical_bytes(&self, column_family: &str) -> Option<u64> {
        match &*self.inner {
            Inner::Heap => None,
            Inner::RocksDb(store) => store.physical_bytes(column_family),
        }
    }
}

/// `key → row`.
pub enum ValueState {
    Heap(heap::HeapValueState),
    Rocks(rocksdb::RocksValueState),
}

macro_rules! dispatch {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            Self::Heap($s) => $e,
            Self::Rocks($s) => $e,
        }
    };
}

impl ValueState {
    pub fn get(&mut self, key: &[Value]) -> StateResult<Option<Row>> {
        dispatch!(self, s => s.get(key))
    }
    pub fn put(&mut self, key: &[Value], value: Row) -> StateResult<()> {
        dispatch!(self, s => s.put(key, value))
    }
    pub fn delete(&mut self, key: &[Value]) -> StateResult<()> {
        dispatch!(self, s => s.delete(key))
    }
    /// Read-modify-write: `f` sees the current row (or `None`) and may
    /// change, set or clear it; the result is written back (or deleted).
    pub fn modify<R>(
        &mut self,
        key: &[Value],
        f: impl FnOnce(&mut Option<Row>) -> R,
    ) -> StateResult<R> {
        dispatch!(self, s => s.modify(key, f))
    }
    pub fn metrics(&self) -> StateMetrics {
        dispatch!(self, s => s.metrics())
    }
    pub fn report(&self) -> StateReport {
        dispatch!(self, s => s.report())
    }
}

/// `key → {user key → row}`.
pub enum MapState {
    Heap(heap::HeapMapState),
    Rocks(rocksdb::RocksMapState),
}

impl MapState {
    pub fn get(&mut self, key: &[Value], ukey: &[Value]) -> StateResult<Option<Row>> {
        dispatch!(self, s => s.get(key, ukey))
    }
    pub fn put(&mut self, key: &[Value], ukey: &[Value], value: Row) -> StateResult<()> {
        dispatch!(self, s => s.put(key, ukey, value))
    }
    pub fn delete(&mut self, key: &[Value], ukey: &[Value]) -> StateResult<()> {
        dispatch!(self, s => s.delete(key, ukey))
    }
    pub fn modify<R>(
        &mut self,
        key: &[Value],
        ukey: &[Value],
        f: impl FnOnce(&mut Option<Row>) -> R,
    ) -> StateResult<R> {
        dispatch!(self, s => s.modify(key, ukey, f))
    }
    /// Visits every (user key, row) of `key`; order is unspecified.
    pub fn for_each(
        &mut self,
        key: &[Value],
        f: impl FnMut(&[Value], &[Value]),
    ) -> StateResult<()> {
        dispatch!(self, s => s.for_each(key, f))
    }
    /// Every (user key, row) of `key`, copied out.
    pub fn entries(&mut self, key: &[Value]) -> StateResult<Vec<(Row, Row)>> {
        let mut out = Vec::new();
        self.for_each(key, |k, v| out.push((k.to_vec(), v.to_vec())))?;
        Ok(out)
    }
    pub fn metrics(&self) -> StateMetrics {
        dispatch!(self, s => s.metrics())
    }
    pub fn report(&self) -> StateReport {
        dispatch!(self, s => s.report())
    }
}
