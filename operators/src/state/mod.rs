//! Keyed state with exact access counters, on two backends.
//!
//! Operators keep their state in [`ValueState`] (key → row) and [`MapState`]
//! (key → {user key → row}) handles obtained from a [`StateBackend`]:
//! - heap ([`heap`]): `hashbrown` maps of native rows, no serialisation;
//! - RocksDB ([`rocksdb`]): one column family per (operator, state), keys
//!   encoded by [`codec`] so that a key's map entries are contiguous, values
//!   serialised, WAL off; every access is a real `get`/`put`/`delete`.
//!
//! The handles' methods mean the same on both backends. An operator with a
//! faster path on the heap's own representation asks, once when it is
//! built, for the heap's handle ([`StateBackend::heap_value_state`]); it
//! counts by the same rules.
//!
//! Both count, per handle: reads, writes, deletes, live entries and live
//! logical bytes (encoded key + value length, the same rule on both). The
//! counting rules, pinned by tests:
//! - `get` is one read; `put` one write; `delete` one delete (even if absent);
//! - `modify` (read-modify-write) is one read, then one write if the slot
//!   holds a row afterwards, or one delete if a row was removed;
//! - `modify_many` and, on RocksDB, `modify_in_order` count the same per
//!   distinct key (not per record);
//! - a map scan (`entries`, `for_each`) is one read per entry visited, and
//!   one read when the key has no entries (the seek still happens);
//! - a per-batch image on RocksDB (`rocksdb::StateImage`, the join's
//!   asynchronous state) counts its load as one read per value key and a
//!   scan's reads per map key, and one write or delete per entry changed.

pub mod codec;
pub mod heap;
pub mod heap_parking;
pub mod rocksdb;
pub mod rocksdb_options;
pub mod ttl;

pub use ttl::StateClock;

use crate::value::{Row, Value};
use rocksdb_options::RocksDbOptions;
use std::hash::BuildHasher;
use std::path::Path;
use std::sync::Arc;

/// A state backend failure (RocksDB I/O, corrupt bytes). The cause is
/// kept (and printed as part of the message, not as a `source()`, so an
/// error-chain printer does not repeat it).
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("RocksDB error in state '{state}': {error}")]
    RocksDb {
        state: String,
        error: ::rocksdb::Error,
    },
    #[error("cannot create the RocksDB state directory under {dir}: {error}")]
    Directory { dir: String, error: std::io::Error },
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

/// Counts a write of a `len`-byte value under a `key_len`-byte key over a
/// value of `old` bytes (`None`: absent).
pub(crate) fn count_write(m: &mut StateMetrics, key_len: usize, len: usize, old: Option<usize>) {
    m.writes += 1;
    match old {
        Some(l) => m.logical_bytes += len as i64 - l as i64,
        None => {
            m.entries += 1;
            m.logical_bytes += (key_len + len) as i64;
        }
    }
}

/// Counts a delete of a `key_len`-byte key whose value had `old` bytes.
pub(crate) fn count_delete(m: &mut StateMetrics, key_len: usize, old: Option<usize>) {
    m.deletes += 1;
    if let Some(l) = old {
        m.entries -= 1;
        m.logical_bytes -= (key_len + l) as i64;
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
    clock: StateClock,
    /// TTL per `scope/name`, registered before operators create their state.
    ttls: Arc<std::sync::Mutex<std::collections::HashMap<String, u64>>>,
}

enum Inner {
    Heap,
    RocksDb(rocksdb::RocksDbStore),
}

impl StateBackend {
    pub fn heap() -> StateBackend {
        StateBackend {
            inner: Arc::new(Inner::Heap),
            clock: StateClock::default(),
            ttls: Default::default(),
        }
    }

    /// A fresh RocksDB in a new directory under `parent` (the system
    /// temporary directory when `None`), removed when the backend drops,
    /// with Flink's default options.
    pub fn rocksdb(parent: Option<&Path>) -> StateResult<StateBackend> {
        StateBackend::rocksdb_with(parent, &RocksDbOptions::default())
    }

    /// [`StateBackend::rocksdb`] with `options`.
    pub fn rocksdb_with(
        parent: Option<&Path>,
        options: &RocksDbOptions,
    ) -> StateResult<StateBackend> {
        Ok(StateBackend {
            inner: Arc::new(Inner::RocksDb(rocksdb::RocksDbStore::open(
                parent, options,
            )?)),
            clock: StateClock::default(),
            ttls: Default::default(),
        })
    }

    pub fn new(kind: BackendKind, parent: Option<&Path>) -> StateResult<StateBackend> {
        StateBackend::new_with(kind, parent, &RocksDbOptions::default())
    }

    /// [`StateBackend::new`]; RocksDB with `options`.
    pub fn new_with(
        kind: BackendKind,
        parent: Option<&Path>,
        options: &RocksDbOptions,
    ) -> StateResult<StateBackend> {
        match kind {
            BackendKind::Heap => Ok(StateBackend::heap()),
            BackendKind::RocksDb => StateBackend::rocksdb_with(parent, options),
        }
    }

    /// The RocksDB options in effect; `None` on the heap backend.
    pub fn rocksdb_options(&self) -> Option<&RocksDbOptions> {
        match &*self.inner {
            Inner::Heap => None,
            Inner::RocksDb(store) => Some(store.options()),
        }
    }

    /// The clock TTL states read; the executor advances it.
    pub fn clock(&self) -> StateClock {
        self.clock.clone()
    }

    /// Sets the TTL of state `name` of operator `scope` (0 = never
    /// expires; `*` = every state of the scope); call before the operator
    /// creates its state.
    pub fn set_ttl(&self, scope: &str, name: &str, ttl: std::time::Duration) {
        let mut t = self.ttls.lock().unwrap_or_else(|p| p.into_inner());
        t.insert(format!("{scope}/{name}"), ttl.as_millis() as u64);
    }

    fn ttl_for(&self, scope: &str, name: &str) -> Option<ttl::Ttl> {
        let t = self.ttls.lock().unwrap_or_else(|p| p.into_inner());
        let found = t
            .get(&format!("{scope}/{name}"))
            .or_else(|| t.get(&format!("{scope}/*")));
        match found {
            Some(&ms) if ms > 0 => Some(ttl::Ttl::new(ms, self.clock.clone())),
            _ => None,
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
        let imp = match &*self.inner {
            Inner::Heap => ValueImpl::Heap(heap::HeapValueState::new(name)),
            Inner::RocksDb(store) => {
                ValueImpl::Rocks(store.value_state(scope, name, value_arity)?)
            }
        };
        Ok(ValueState {
            imp,
            ttl: self.ttl_for(scope, name),
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
        let imp = match &*self.inner {
            Inner::Heap => MapImpl::Heap(heap::HeapMapState::new(name)),
            Inner::RocksDb(store) => {
                MapImpl::Rocks(store.map_state(scope, name, ukey_arity, value_arity)?)
            }
        };
        Ok(MapState {
            imp,
            ttl: self.ttl_for(scope, name),
        })
    }

    /// The heap's own handle of value state `name` of operator `scope`,
    /// for a caller with a faster path on its packed rows
    /// ([`heap::HeapValueState::modify_packed`]); `None` on RocksDB, and
    /// for a state with a TTL (which only [`ValueState`] keeps). Asked
    /// once, when the operator is built: the generic handle has no
    /// backend-specific methods.
    pub fn heap_value_state(&self, scope: &str, name: &str) -> Option<heap::HeapValueState> {
        match (&*self.inner, self.ttl_for(scope, name)) {
            (Inner::Heap, None) => Some(heap::HeapValueState::new(name)),
            _ => None,
        }
    }

    /// RocksDB's own checkpoint of every state into the new directory
    /// `dir` ([`rocksdb::RocksDbStore::create_checkpoint`]); `false`, and
    /// nothing written, on the heap backend.
    pub fn create_native_checkpoint(&self, dir: &Path) -> StateResult<bool> {
        match &*self.inner {
            Inner::Heap => Ok(false),
            Inner::RocksDb(store) => store.create_checkpoint(dir).map(|()| true),
        }
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

/// How many accesses ahead a caller prefetches a heap key: far enough to
/// hide a cache miss behind the work on the keys in between.
pub const PREFETCH_AHEAD: usize = 12;

/// `key → row`.
pub struct ValueState {
    imp: ValueImpl,
    ttl: Option<ttl::Ttl>,
}

/// A heap handle used as a generic one (no TTL).
impl From<heap::HeapValueState> for ValueState {
    fn from(s: heap::HeapValueState) -> ValueState {
        ValueState {
            imp: ValueImpl::Heap(s),
            ttl: None,
        }
    }
}

enum ValueImpl {
    Heap(heap::HeapValueState),
    Rocks(rocksdb::RocksValueState),
}

macro_rules! dispatch {
    ($self:expr, $s:ident => $e:expr) => {
        match $self {
            ValueImpl::Heap($s) => $e,
            ValueImpl::Rocks($s) => $e,
        }
    };
}

macro_rules! dispatch_map {
    ($self:expr, $s:ident => $e:expr) => {
        match $self {
            MapImpl::Heap($s) => $e,
            MapImpl::Rocks($s) => $e,
        }
    };
}

impl ValueState {
    /// Removes entries whose TTL passed and that were not rewritten since.
    fn sweep(&mut self) -> StateResult<()> {
        let Some(t) = &mut self.ttl else {
            return Ok(());
        };
        for (key, _) in t.due() {
            let t = self.ttl.as_mut().expect("ttl");
            match dispatch!(&mut self.imp, s => s.get(&key))? {
                Some(r) if t.expired(&r) => dispatch!(&mut self.imp, s => s.delete(&key))?,
                Some(r) => t.requeue(&key, None, &r),
                None => {}
            }
        }
        Ok(())
    }

    pub fn get(&mut self, key: &[Value]) -> StateResult<Option<Row>> {
        self.sweep()?;
        let got = dispatch!(&mut self.imp, s => s.get(key))?;
        match (&self.ttl, got) {
            (None, got) => Ok(got),
            (Some(_), None) => Ok(None),
            (Some(t), Some(row)) if t.expired(&row) => {
                dispatch!(&mut self.imp, s => s.delete(key))?;
                Ok(None)
            }
            (Some(_), Some(row)) => Ok(Some(ttl::strip(row))),
        }
    }
    pub fn put(&mut self, key: &[Value], mut value: Row) -> StateResult<()> {
        self.sweep()?;
        if let Some(t) = &mut self.ttl {
            t.stamp(&mut value, key, None);
        }
        dispatch!(&mut self.imp, s => s.put(key, value))
    }
    pub fn delete(&mut self, key: &[Value]) -> StateResult<()> {
        self.sweep()?;
        dispatch!(&mut self.imp, s => s.delete(key))
    }
    /// Read-modify-write: `f` sees the current row (or `None`) and may
    /// change, set or clear it; the result is written back (or deleted).
    pub fn modify<R>(
        &mut self,
        key: &[Value],
        f: impl FnOnce(&mut Option<Row>) -> R,
    ) -> StateResult<R> {
        if self.ttl.is_some() {
            self.sweep()?;
        }
        match &mut self.ttl {
            None => dispatch!(&mut self.imp, s => s.modify(key, f)),
            Some(t) => dispatch!(&mut self.imp, s => s.modify(key, |slot| {
                // An expired row is as good as absent.
                if slot.as_ref().is_some_and(|r| t.expired(r)) || slot.is_none() {
                    let mut fresh = None;
                    let r = f(&mut fresh);
                    *slot = fresh.map(|mut row| {
                        t.stamp(&mut row, key, None);
                        row
                    });
                    return r;
                }
                let mut inner = slot.take().map(ttl::strip);
                let r = f(&mut inner);
                *slot = inner.map(|mut row| {
                    t.stamp(&mut row, key, None);
                    row
                });
                r
            })),
        }
    }
    /// `modify` of each of `keys` (which must be distinct) in order: the
    /// same results and counters as one `modify` per key, but RocksDB reads
    /// the keys with one `MultiGet` and writes them in one `WriteBatch` (a
    /// mini-batch bundle closes this way). `f` gets the key's index.
    pub fn modify_many<K: AsRef<[Value]>, R>(
        &mut self,
        keys: &[K],
        mut f: impl FnMut(usize, &mut Option<Row>) -> R,
    ) -> StateResult<Vec<R>> {
        debug_assert!(
            {
                let mut seen = std::collections::HashSet::new();
                keys.iter().all(|k| seen.insert(k.as_ref().to_vec()))
            },
            "modify_many keys must be distinct"
        );
        match (&mut self.imp, &self.ttl) {
            (ValueImpl::Rocks(s), None) => s.modify_many(keys, f),
            _ => {
                let mut out = Vec::with_capacity(keys.len());
                for (i, k) in keys.iter().enumerate() {
                    if let Some(next) = keys.get(i + PREFETCH_AHEAD) {
                        self.prefetch(next.as_ref());
                    }
                    out.push(self.modify(k.as_ref(), |slot| f(i, slot))?);
                }
                Ok(out)
            }
        }
    }
    /// `modify` of `keys[i]` for each record `i` in order (keys may
    /// repeat): `f` gets the record's index and its key's row as the
    /// records before it left it, so results are those of one `modify` per
    /// record. On RocksDB without TTL the distinct keys are read first with
    /// one `MultiGet` and written once at the end in one `WriteBatch`
    /// (Flink's asynchronous state execution, which prefetches a batch's
    /// keys): one read and at most one write or delete per distinct key,
    /// so the reads saved are the records minus the distinct keys.
    /// Elsewhere it is one `modify` per record.
    pub fn modify_in_order<K: AsRef<[Value]>, R>(
        &mut self,
        keys: &[K],
        mut f: impl FnMut(usize, &mut Option<Row>) -> R,
    ) -> StateResult<Vec<R>> {
        let (ValueImpl::Rocks(s), None) = (&mut self.imp, &self.ttl) else {
            let mut out = Vec::with_capacity(keys.len());
            for (i, k) in keys.iter().enumerate() {
                out.push(self.modify(k.as_ref(), |slot| f(i, slot))?);
            }
            return Ok(out);
        };
        // The distinct keys in order of first use; `key_of[i]` is record
        // `i`'s.
        let hasher = heap::fixed_state();
        let mut index: hashbrown::HashTable<u32> = hashbrown::HashTable::with_capacity(keys.len());
        let mut distinct: Vec<&[Value]> = Vec::new();
        let mut key_of: Vec<u32> = Vec::with_capacity(keys.len());
        for k in keys {
            let k = k.as_ref();
            let hash = hasher.hash_one(k);
            let d = match index.find(hash, |&d| distinct[d as usize] == k) {
                Some(&d) => d,
                None => {
                    let d = distinct.len() as u32;
                    index.insert_unique(hash, d, |&e| hasher.hash_one(distinct[e as usize]));
                    distinct.push(k);
                    d
                }
            };
            key_of.push(d);
        }
        s.modify_slots(&distinct, |slots| {
            key_of
                .iter()
                .enumerate()
                .map(|(i, &d)| f(i, &mut slots[d as usize]))
                .collect()
        })
    }
    /// Hints that `key` will be accessed soon: the heap backend starts
    /// fetching its memory (call it [`PREFETCH_AHEAD`] accesses ahead).
    /// Counts nothing.
    #[inline]
    pub fn prefetch(&self, key: &[Value]) {
        if let ValueImpl::Heap(s) = &self.imp {
            s.prefetch(key);
        }
    }
    pub fn metrics(&self) -> StateMetrics {
        dispatch!(&self.imp, s => s.metrics())
    }
    pub fn report(&self) -> StateReport {
        dispatch!(&self.imp, s => s.report())
    }
    /// Whether the state expires entries (a TTL).
    pub fn has_ttl(&self) -> bool {
        self.ttl.is_some()
    }
    /// The RocksDB column family holding the state; `None` on the heap.
    pub fn column_family(&self) -> Option<&str> {
        match &self.imp {
            ValueImpl::Heap(_) => None,
            ValueImpl::Rocks(s) => Some(s.column_family()),
        }
    }
    /// Every key and row, for a checkpoint (not an access). On RocksDB,
    /// where an operator's subtasks share a column family, all of theirs.
    /// With a TTL: the stored rows, write time last, of the entries not
    /// expired (another subtask's share may hold expired entries its
    /// sweep has not reached).
    pub fn all_entries(&self) -> StateResult<Vec<(Row, Row)>> {
        let mut all = match &self.imp {
            ValueImpl::Heap(s) => s.all_entries(),
            ValueImpl::Rocks(s) => s.all_entries()?,
        };
        if let Some(t) = &self.ttl {
            all.retain(|(_, v)| !t.expired(v));
        }
        Ok(all)
    }
    /// Removes the entries whose TTL passed, as the next access would;
    /// nothing without a TTL. At a checkpoint barrier, so that RocksDB's
    /// files hold no expired entry.
    pub fn expire_due(&mut self) -> StateResult<()> {
        self.sweep()
    }
    /// Writes back an entry [`ValueState::all_entries`] gave: with a TTL,
    /// `stored` carries its write time, which is kept and queued.
    pub fn restore_entry(&mut self, key: &[Value], stored: Row) -> StateResult<()> {
        if let Some(t) = &mut self.ttl {
            t.restored(key, None, &stored);
        }
        dispatch!(&mut self.imp, s => s.put(key, stored))
    }
}

/// `key → {user key → row}`.
pub struct MapState {
    imp: MapImpl,
    ttl: Option<ttl::Ttl>,
}

enum MapImpl {
    Heap(heap::HeapMapState),
    Rocks(rocksdb::RocksMapState),
}

impl MapState {
    /// Removes entries whose TTL passed; inlined, so that a state without
    /// a TTL pays one test per access.
    #[inline]
    fn sweep(&mut self) -> StateResult<()> {
        if self.ttl.is_none() {
            return Ok(());
        }
        self.sweep_due()
    }

    fn sweep_due(&mut self) -> StateResult<()> {
        let Some(t) = &mut self.ttl else {
            return Ok(());
        };
        for (key, ukey) in t.due() {
            let ukey = ukey.unwrap_or_default();
            let t = self.ttl.as_mut().expect("ttl");
            match dispatch_map!(&mut self.imp, s => s.get(&key, &ukey))? {
                Some(r) if t.expired(&r) => {
                    dispatch_map!(&mut self.imp, s => s.delete(&key, &ukey))?
                }
                Some(r) => t.requeue(&key, Some(&ukey), &r),
                None => {}
            }
        }
        Ok(())
    }

    pub fn get(&mut self, key: &[Value], ukey: &[Value]) -> StateResult<Option<Row>> {
        self.sweep()?;
        let got = dispatch_map!(&mut self.imp, s => s.get(key, ukey))?;
        match (&self.ttl, got) {
            (None, got) => Ok(got),
            (Some(_), None) => Ok(None),
            (Some(t), Some(row)) if t.expired(&row) => {
                dispatch_map!(&mut self.imp, s => s.delete(key, ukey))?;
                Ok(None)
            }
            (Some(_), Some(row)) => Ok(Some(ttl::strip(row))),
        }
    }
    pub fn put(&mut self, key: &[Value], ukey: &[Value], mut value: Row) -> StateResult<()> {
        self.sweep()?;
        if let Some(t) = &mut self.ttl {
            t.stamp(&mut value, key, Some(ukey));
        }
        dispatch_map!(&mut self.imp, s => s.put(key, ukey, value))
    }
    pub fn delete(&mut self, key: &[Value], ukey: &[Value]) -> StateResult<()> {
        self.sweep()?;
        dispatch_map!(&mut self.imp, s => s.delete(key, ukey))
    }
    pub fn modify<R>(
        &mut self,
        key: &[Value],
        ukey: &[Value],
        f: impl FnOnce(&mut Option<Row>) -> R,
    ) -> StateResult<R> {
        self.sweep()?;
        match &mut self.ttl {
            None => dispatch_map!(&mut self.imp, s => s.modify(key, ukey, f)),
            Some(t) => dispatch_map!(&mut self.imp, s => s.modify(key, ukey, |slot| {
                let expired = slot.as_ref().is_some_and(|r| t.expired(r));
                let mut inner = if expired { None } else { slot.take().map(ttl::strip) };
                let r = f(&mut inner);
                *slot = inner.map(|mut row| {
                    t.stamp(&mut row, key, Some(ukey));
                    row
                });
                r
            })),
        }
    }
    /// [`MapState::modify`] with the user key given up: the heap keeps it
    /// in an entry the access adds instead of a copy.
    pub fn modify_owned<R>(
        &mut self,
        key: &[Value],
        ukey: Row,
        f: impl FnOnce(&mut Option<Row>) -> R,
    ) -> StateResult<R> {
        match (&mut self.imp, &self.ttl) {
            (MapImpl::Heap(s), None) => s.modify_owned(key, ukey, f),
            _ => self.modify(key, &ukey, f),
        }
    }
    /// Visits every live (user key, row) of `key`; order is unspecified.
    /// Expired entries met on the way are removed.
    pub fn for_each(
        &mut self,
        key: &[Value],
        mut f: impl FnMut(&[Value], &[Value]),
    ) -> StateResult<()> {
        self.sweep()?;
        match &self.ttl {
            None => dispatch_map!(&mut self.imp, s => s.for_each(key, f)),
            Some(t) => {
                let mut expired: Vec<Row> = Vec::new();
                dispatch_map!(&mut self.imp, s => s.for_each(key, |k, v| {
                    if t.expired(v) {
                        expired.push(k.to_vec());
                    } else {
                        f(k, &v[..v.len() - 1]);
                    }
                }))?;
                for k in expired {
                    dispatch_map!(&mut self.imp, s => s.delete(key, &k))?;
                }
                Ok(())
            }
        }
    }
    /// Every (user key, row) of `key`, copied out.
    pub fn entries(&mut self, key: &[Value]) -> StateResult<Vec<(Row, Row)>> {
        let mut out = Vec::new();
        self.for_each(key, |k, v| out.push((k.to_vec(), v.to_vec())))?;
        Ok(out)
    }
    pub fn metrics(&self) -> StateMetrics {
        dispatch_map!(&self.imp, s => s.metrics())
    }
    pub fn report(&self) -> StateReport {
        dispatch_map!(&self.imp, s => s.report())
    }
    /// Whether the state expires entries (a TTL).
    pub fn has_ttl(&self) -> bool {
        self.ttl.is_some()
    }
    /// The RocksDB column family holding the state and the width of its
    /// user keys; `None` on the heap.
    pub fn column_family(&self) -> Option<(&str, usize)> {
        match &self.imp {
            MapImpl::Heap(_) => None,
            MapImpl::Rocks(s) => Some(s.column_family()),
        }
    }
    /// Every key, user key and row, for a checkpoint (not an access); see
    /// [`ValueState::all_entries`].
    pub fn all_entries(&self) -> StateResult<Vec<(Row, Row, Row)>> {
        let mut all = match &self.imp {
            MapImpl::Heap(s) => s.all_entries(),
            MapImpl::Rocks(s) => s.all_entries()?,
        };
        if let Some(t) = &self.ttl {
            all.retain(|(_, _, v)| !t.expired(v));
        }
        Ok(all)
    }
    /// [`ValueState::expire_due`].
    pub fn expire_due(&mut self) -> StateResult<()> {
        self.sweep()
    }
    /// [`ValueState::restore_entry`].
    pub fn restore_entry(&mut self, key: &[Value], ukey: &[Value], stored: Row) -> StateResult<()> {
        if let Some(t) = &mut self.ttl {
            t.restored(key, Some(ukey), &stored);
        }
        dispatch_map!(&mut self.imp, s => s.put(key, ukey, stored))
    }
}
