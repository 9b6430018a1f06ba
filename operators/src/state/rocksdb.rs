//! The RocksDB backend: a real on-disk database per run.
//!
//! One column family per (operator, state), shared by the operator's
//! subtasks (their keys are disjoint, as hash partitioning guarantees).
//! Keys and values are encoded by [`super::codec`]; a map state's entry key
//! is `encode(key) ++ encode(user key)`, so one key's entries are contiguous
//! and found by a prefix seek, with one iterator per map state that each
//! scan refreshes rather than one created per scan. Writes skip the WAL:
//! durability would come from checkpoints, which the lab does not take.
//! Every option the lab sets is in [`super::rocksdb_options`].
//!
//! Live entries and logical bytes must be exact, so a write must know the
//! size of the value it replaces. Flink's backend writes blind, without a
//! lookup, and so does this one: each handle keeps an in-memory index of
//! the keys it holds, encoded key → value length ([`LiveIndex`]), which
//! every write and delete keeps true. A handle starts empty on a new
//! database (a restore writes its entries through the handle), and an
//! operator's subtasks share a column family with disjoint keys, so each
//! handle's index holds exactly its own subtask's entries, as its counters
//! do. The index is exact (a hash of the key could collide and miscount).
//! Its memory per live entry: a 32-byte bucket and a control byte, at
//! 1.14–2.3 buckets per entry as the table grows (38–75 bytes); a key
//! over 28 bytes, or a value of 64 KiB or more, adds the key's own
//! allocation. Keys up to 28 bytes (up to three `BIGINT`s, key and user
//! key together) sit in the bucket, so a lookup follows no pointer.
//!
//! Batches (`modify_many`, `modify_in_order`, the join's per-batch images)
//! read every entry they write, so they know the lengths they replace: the
//! first batch drops the index, and a state written by batches alone (the
//! join with asynchronous state, a mini-batch aggregate) pays neither its
//! upkeep nor its memory. Should a blind write come after that, one
//! uncounted scan of the column family rebuilds the index, kept from then
//! on. That scan also takes in the other subtasks' keys, which is harmless:
//! this handle never writes them, so it never asks for their lengths.
//!
//! Each handle keeps its column family's handle too, instead of looking it
//! up by name (a lock and an `Arc` clone) per access.

use super::codec::{decode_all, decode_all_into, decode_into, encode_into};
use super::rocksdb_options::RocksDbOptions;
use super::{count_delete, count_write, StateError, StateMetrics, StateReport, StateResult};
use crate::value::{Row, Value};
use rocksdb::{
    BoundColumnFamily, DBWithThreadMode, MultiThreaded, Options, WriteBatch, WriteOptions,
};
use std::path::Path;
use std::sync::{Arc, Mutex};

// Per-batch images of a state's keys (asynchronous state of the join).
#[path = "rocksdb_map_batch.rs"]
mod map_batch;
pub use map_batch::{ImageWrites, StateImage};

type Db = DBWithThreadMode<MultiThreaded>;

/// The database of one run and the directory it lives in.
pub struct RocksDbStore {
    db: Arc<Db>,
    create_lock: Mutex<()>,
    /// Every column family's options (they share one block cache).
    cf_opts: Options,
    options: RocksDbOptions,
    // Dropped after `db` (field order), so the files go once RocksDB closed.
    _dir: tempfile::TempDir,
}

fn err(state: &str, error: rocksdb::Error) -> StateError {
    StateError::RocksDb {
        state: state.to_string(),
        error,
    }
}

impl RocksDbStore {
    pub fn open(parent: Option<&Path>, options: &RocksDbOptions) -> StateResult<RocksDbStore> {
        let parent = parent
            .map(Path::to_path_buf)
            .unwrap_or_else(std::env::temp_dir);
        let dir_err = |error: std::io::Error| StateError::Directory {
            dir: parent.display().to_string(),
            error,
        };
        // Named after this process; a killed run's are removed here.
        let dir = crate::debris::owned_temp_dir(&parent, "joinlab-rocksdb-").map_err(dir_err)?;
        let cf_opts = options.to_rocksdb();
        let mut opts = cf_opts.clone();
        opts.create_if_missing(true);
        opts.create_missing_column_families(true);
        let db = Db::open(&opts, dir.path()).map_err(|e| err("<open>", e))?;
        Ok(RocksDbStore {
            db: Arc::new(db),
            create_lock: Mutex::new(()),
            cf_opts,
            options: options.clone(),
            _dir: dir,
        })
    }

    fn ensure_cf(&self, cf: &str) -> StateResult<()> {
        let _guard = self.create_lock.lock().unwrap_or_else(|p| p.into_inner());
        if self.db.cf_handle(cf).is_none() {
            self.db
                .create_cf(cf, &self.cf_opts)
                .map_err(|e| err(cf, e))?;
        }
        Ok(())
    }

    pub fn value_state(
        &self,
        scope: &str,
        name: &str,
        _value_arity: usize,
    ) -> StateResult<RocksValueState> {
        let cf = format!("{scope}/{name}");
        self.ensure_cf(&cf)?;
        Ok(RocksValueState {
            inner: Handle::new(self.db.clone(), name, cf),
        })
    }

    pub fn map_state(
        &self,
        scope: &str,
        name: &str,
        ukey_arity: usize,
        _value_arity: usize,
    ) -> StateResult<RocksMapState> {
        let cf = format!("{scope}/{name}");
        self.ensure_cf(&cf)?;
        Ok(RocksMapState {
            scan_iter: None,
            inner: Handle::new(self.db.clone(), name, cf),
            ukey_arity,
        })
    }

    /// RocksDB's own checkpoint of the whole database into the new
    /// directory `dir`: memtables flushed, then every live SST file hard
    /// linked (copied across file systems) beside a copy of the MANIFEST,
    /// CURRENT and OPTIONS files. What an incremental checkpoint shares.
    pub fn create_checkpoint(&self, dir: &Path) -> StateResult<()> {
        rocksdb::checkpoint::Checkpoint::new(&self.db)
            .and_then(|c| c.create_checkpoint(dir))
            .map_err(|e| err("<checkpoint>", e))
    }

    /// The options the database was opened with.
    pub fn options(&self) -> &RocksDbOptions {
        &self.options
    }

    pub fn physical_bytes(&self, cf: &str) -> Option<u64> {
        let handle = self.db.cf_handle(cf)?;
        let live = self
            .db
            .property_int_value_cf(&handle, "rocksdb.estimate-live-data-size")
            .ok()
            .flatten()
            .unwrap_or(0);
        let mem = self
            .db
            .property_int_value_cf(&handle, "rocksdb.cur-size-all-mem-tables")
            .ok()
            .flatten()
            .unwrap_or(0);
        Some(live + mem)
    }
}

/// What one handle shares between value and map state: the column family,
/// counters, scratch buffers and the index of live entries.
struct Handle {
    /// The column family's handle, which borrows the database `db` keeps
    /// open: declared before `db`, so it is dropped first.
    cf_ref: CfRef,
    db: Arc<Db>,
    name: String,
    cf: String,
    write_opts: WriteOptions,
    key_buf: Vec<u8>,
    val_buf: Vec<u8>,
    /// `None` once batches alone wrote the handle (see the module doc).
    live: Option<LiveIndex>,
    /// Set once the index was rebuilt: then batches keep it too.
    keep_index: bool,
    /// A prefix scan's user key and value buffers, reused from scan to scan.
    scan_bufs: (Row, Row),
    metrics: StateMetrics,
}

/// A column family handle of the database that `Handle::db` keeps open.
type CfRef = Arc<BoundColumnFamily<'static>>;

/// The live entries of one handle: encoded key → value length (see the
/// module doc).
struct LiveIndex(hashbrown::HashTable<Slot>);

/// The longest key a [`Slot`] holds inline.
const INLINE: usize = 28;

/// One entry of the index in 32 bytes: a key of up to [`INLINE`] bytes
/// with a value under 64 KiB inline (no allocation, and no pointer to
/// follow, so a lookup touches one bucket), else the key boxed.
enum Slot {
    Inline {
        n: u8,
        len: u16,
        bytes: [u8; INLINE],
    },
    Boxed {
        len: u32,
        key: Box<[u8]>,
    },
}

const _: () = assert!(std::mem::size_of::<Slot>() == 32);

impl Slot {
    fn new(key: &[u8], len: u32) -> Slot {
        match u16::try_from(len) {
            Ok(len) if key.len() <= INLINE => {
                let mut bytes = [0; INLINE];
                bytes[..key.len()].copy_from_slice(key);
                Slot::Inline {
                    n: key.len() as u8,
                    len,
                    bytes,
                }
            }
            _ => Slot::Boxed {
                len,
                key: key.into(),
            },
        }
    }

    fn key(&self) -> &[u8] {
        match self {
            Slot::Inline { n, bytes, .. } => &bytes[..*n as usize],
            Slot::Boxed { key, .. } => key,
        }
    }

    fn len(&self) -> u32 {
        match self {
            Slot::Inline { len, .. } => u32::from(*len),
            Slot::Boxed { len, .. } => *len,
        }
    }

    /// Sets the value length, boxing the key if the length no longer fits.
    fn set_len(&mut self, new: u32) {
        match (&mut *self, u16::try_from(new)) {
            (Slot::Inline { len, .. }, Ok(l)) => *len = l,
            (Slot::Boxed { len, .. }, _) => *len = new,
            (Slot::Inline { .. }, Err(_)) => {
                *self = Slot::Boxed {
                    len: new,
                    key: self.key().into(),
                }
            }
        }
    }
}

/// A fixed hash of an encoded key, 8 bytes at a time (the last 8 read
/// again when the length is not a multiple), each folded in by a 128-bit
/// multiply: well-mixed low and high bits, at a fraction of a general
/// hasher's cost on these short keys.
#[inline]
fn key_hash(key: &[u8]) -> u64 {
    #[inline]
    fn fold(a: u64) -> u64 {
        let p = u128::from(a) * 0x9e37_79b9_7f4a_7c15_u128;
        (p as u64) ^ ((p >> 64) as u64)
    }
    let word = |at: usize| u64::from_le_bytes(key[at..at + 8].try_into().expect("8 bytes"));
    let mut h = 0x243f_6a88_85a3_08d3 ^ key.len() as u64;
    if key.len() < 8 {
        for &b in key {
            h = (h << 8) | u64::from(b);
        }
        return fold(h);
    }
    let mut at = 0;
    while at + 8 < key.len() {
        h = fold(h ^ word(at));
        at += 8;
    }
    fold(h ^ word(key.len() - 8))
}

impl LiveIndex {
    fn new() -> LiveIndex {
        LiveIndex(hashbrown::HashTable::new())
    }

    /// The value length of `key`, if live.
    fn get(&self, key: &[u8]) -> Option<usize> {
        self.0
            .find(key_hash(key), |s| s.key() == key)
            .map(|s| s.len() as usize)
    }

    /// Records `key` live with a value of `len` bytes; the length it had.
    fn set(&mut self, key: &[u8], len: usize) -> Option<usize> {
        let len = u32::try_from(len).expect("a state value under 4 GiB");
        let hash = key_hash(key);
        match self
            .0
            .entry(hash, |s| s.key() == key, |s| key_hash(s.key()))
        {
            hashbrown::hash_table::Entry::Occupied(mut e) => {
                let old = e.get().len();
                e.get_mut().set_len(len);
                Some(old as usize)
            }
            hashbrown::hash_table::Entry::Vacant(e) => {
                e.insert(Slot::new(key, len));
                None
            }
        }
    }

    /// Records `key` absent; the length it had.
    fn remove(&mut self, key: &[u8]) -> Option<usize> {
        let found = self.0.find_entry(key_hash(key), |s| s.key() == key);
        found.ok().map(|e| e.remove().0.len() as usize)
    }
}

/// The options of every write: no WAL (see [`super::rocksdb_options`]).
pub fn write_options() -> WriteOptions {
    let mut o = WriteOptions::default();
    o.disable_wal(true);
    o
}

impl Handle {
    fn new(db: Arc<Db>, name: &str, cf: String) -> Handle {
        let write_opts = write_options();
        let cf_ref = db
            .cf_handle(&cf)
            .expect("column family created with the handle");
        // SAFETY: the handle borrows the database `db` holds an `Arc` of;
        // `cf_ref` is dropped before `db` (field order) and never handed
        // out beyond a borrow of `self`, so the database outlives it. The
        // lab never drops a column family.
        let cf_ref: CfRef = unsafe { std::mem::transmute(cf_ref) };
        Handle {
            cf_ref,
            db,
            name: name.to_string(),
            cf,
            write_opts,
            key_buf: Vec::new(),
            val_buf: Vec::new(),
            live: Some(LiveIndex::new()),
            keep_index: false,
            scan_bufs: (Row::new(), Row::new()),
            metrics: StateMetrics::default(),
        }
    }

    fn report(&self) -> StateReport {
        StateReport {
            name: self.name.clone(),
            column_family: Some(self.cf.clone()),
            metrics: self.metrics,
        }
    }

    /// The column family's handle, with the lifetime of a borrow of `self`.
    fn cf(&self) -> &Arc<BoundColumnFamily<'_>> {
        &self.cf_ref
    }

    fn err(&self, e: rocksdb::Error) -> StateError {
        err(&self.cf, e)
    }

    /// Reads `key_buf`'s value (counted).
    fn read(&mut self) -> StateResult<Option<Row>> {
        Ok(self.read_len()?.0)
    }

    /// Reads `key_buf`'s value (counted) and its stored length.
    fn read_len(&mut self) -> StateResult<(Option<Row>, Option<usize>)> {
        self.metrics.reads += 1;
        let got = self
            .db
            .get_pinned_cf(self.cf(), &self.key_buf)
            .map_err(|e| err(&self.cf, e))?;
        let len = got.as_ref().map(|b| b.len());
        if let Some(live) = &self.live {
            debug_assert_eq!(live.get(&self.key_buf), len);
        }
        match got {
            Some(bytes) => Ok((
                Some(decode_all(&bytes).ok_or_else(|| StateError::Corrupt(self.cf.clone()))?),
                len,
            )),
            None => Ok((None, None)),
        }
    }

    /// Batches read the entries they write, so the first one drops the
    /// index, unless it had to be rebuilt before.
    fn drop_index_for_batches(&mut self) {
        if !self.keep_index {
            self.live = None;
        }
    }

    /// Rebuilds a dropped index from one (uncounted) scan of the column
    /// family, before a write that does not know the length it replaces.
    fn ensure_index(&mut self) -> StateResult<()> {
        if self.live.is_some() {
            return Ok(());
        }
        let mut live = LiveIndex::new();
        let mut it = self.db.raw_iterator_cf(self.cf());
        it.seek_to_first();
        while let (Some(k), Some(v)) = (it.key(), it.value()) {
            live.set(k, v.len());
            it.next();
        }
        it.status().map_err(|e| err(&self.cf, e))?;
        drop(it);
        self.live = Some(live);
        self.keep_index = true;
        Ok(())
    }

    /// Writes `row` under `key_buf` (counted), keeping entries and bytes
    /// exact; `known` is the length it replaces if the caller just read it.
    fn write(&mut self, row: &[Value], known: Option<Option<usize>>) -> StateResult<()> {
        self.val_buf.clear();
        encode_into(row, &mut self.val_buf);
        if known.is_none() {
            self.ensure_index()?;
        }
        let old = match &mut self.live {
            Some(live) => live.set(&self.key_buf, self.val_buf.len()),
            None => known.expect("an index or a known length"),
        };
        count_write(
            &mut self.metrics,
            self.key_buf.len(),
            self.val_buf.len(),
            old,
        );
        self.db
            .put_cf_opt(self.cf(), &self.key_buf, &self.val_buf, &self.write_opts)
            .map_err(|e| self.err(e))
    }

    /// Deletes `key_buf` (counted); `known` as for [`Handle::write`].
    fn remove(&mut self, known: Option<Option<usize>>) -> StateResult<()> {
        if known.is_none() {
            self.ensure_index()?;
        }
        let old = match &mut self.live {
            Some(live) => live.remove(&self.key_buf),
            None => known.expect("an index or a known length"),
        };
        count_delete(&mut self.metrics, self.key_buf.len(), old);
        self.db
            .delete_cf_opt(self.cf(), &self.key_buf, &self.write_opts)
            .map_err(|e| self.err(e))
    }

    /// Every encoded key and decoded row of the column family (a
    /// checkpoint's copy; not an access). The column family is shared by
    /// the operator's subtasks, so this is all of theirs.
    fn all(&self) -> StateResult<Vec<(Vec<u8>, Row)>> {
        let mut it = self.db.raw_iterator_cf(self.cf());
        it.seek_to_first();
        let mut out = Vec::new();
        while it.valid() {
            let (Some(k), Some(v)) = (it.key(), it.value()) else {
                break;
            };
            let row = decode_all(v).ok_or_else(|| StateError::Corrupt(self.cf.clone()))?;
            out.push((k.to_vec(), row));
            it.next();
        }
        it.status().map_err(|e| err(&self.cf, e))?;
        Ok(out)
    }

    fn modify<R>(&mut self, f: impl FnOnce(&mut Option<Row>) -> R) -> StateResult<R> {
        let (mut slot, len) = self.read_len()?;
        let existed = slot.is_some();
        let r = f(&mut slot);
        match slot {
            Some(row) => self.write(&row, Some(len))?,
            None if existed => self.remove(Some(len))?,
            None => {}
        }
        Ok(r)
    }
}

pub struct RocksValueState {
    inner: Handle,
}

impl RocksValueState {
    pub fn metrics(&self) -> StateMetrics {
        self.inner.metrics
    }
    /// Every key and row of the operator (all its subtasks).
    /// The column family holding this state.
    pub fn column_family(&self) -> &str {
        &self.inner.cf
    }
    pub fn all_entries(&self) -> StateResult<Vec<(Row, Row)>> {
        let corrupt = || StateError::Corrupt(self.inner.cf.clone());
        self.inner
            .all()?
            .into_iter()
            .map(|(k, v)| Ok((decode_all(&k).ok_or_else(corrupt)?, v)))
            .collect()
    }
    pub fn report(&self) -> StateReport {
        self.inner.report()
    }
    fn set_key(&mut self, key: &[Value]) {
        self.inner.key_buf.clear();
        encode_into(key, &mut self.inner.key_buf);
    }
    pub fn get(&mut self, key: &[Value]) -> StateResult<Option<Row>> {
        self.set_key(key);
        self.inner.read()
    }
    pub fn put(&mut self, key: &[Value], value: Row) -> StateResult<()> {
        self.set_key(key);
        self.inner.write(&value, None)
    }
    pub fn delete(&mut self, key: &[Value]) -> StateResult<()> {
        self.set_key(key);
        self.inner.remove(None)
    }
    pub fn modify<R>(
        &mut self,
        key: &[Value],
        f: impl FnOnce(&mut Option<Row>) -> R,
    ) -> StateResult<R> {
        self.set_key(key);
        self.inner.modify(f)
    }

    /// `modify` of each of `keys` (distinct) in order, with the same
    /// counters, but one `MultiGet` for the reads and one `WriteBatch` for
    /// the writes, both in key order: a bundle pays RocksDB's per-call
    /// overhead once instead of once per key, and sorted inserts let the
    /// memtable's skip list reuse the previous insert's position.
    pub fn modify_many<K: AsRef<[Value]>, R>(
        &mut self,
        keys: &[K],
        mut f: impl FnMut(usize, &mut Option<Row>) -> R,
    ) -> StateResult<Vec<R>> {
        self.modify_slots(keys, |slots| {
            slots
                .iter_mut()
                .enumerate()
                .map(|(i, slot)| f(i, slot))
                .collect()
        })
    }

    /// Reads `keys` (distinct) with one `MultiGet`, lets `apply` change
    /// their rows (`slots[i]` is key `i`'s), and writes what changed with
    /// one `WriteBatch`: one read per key, then one write per key holding a
    /// row, or one delete per key whose row was removed.
    pub fn modify_slots<K: AsRef<[Value]>, R>(
        &mut self,
        keys: &[K],
        apply: impl FnOnce(&mut [Option<Row>]) -> R,
    ) -> StateResult<R> {
        let h = &mut self.inner;
        let n = keys.len();
        let mut encoded: Vec<u8> = std::mem::take(&mut h.key_buf);
        encoded.clear();
        let mut ends = Vec::with_capacity(n);
        for k in keys {
            encode_into(k.as_ref(), &mut encoded);
            ends.push(encoded.len());
        }
        let key_at = |i: usize| &encoded[if i == 0 { 0 } else { ends[i - 1] }..ends[i]];
        let mut sorted: Vec<u32> = (0..n as u32).collect();
        sorted.sort_unstable_by(|&a, &b| key_at(a as usize).cmp(key_at(b as usize)));

        h.drop_index_for_batches();
        let got =
            h.db.batched_multi_get_cf(&h.cf_ref, sorted.iter().map(|&i| key_at(i as usize)), true);
        h.metrics.reads += n as u64;
        let mut slots: Vec<Option<Row>> = vec![None; n];
        let mut old: Vec<Option<usize>> = vec![None; n];
        for (&i, got) in sorted.iter().zip(got) {
            if let Some(bytes) = got.map_err(|e| err(&h.cf, e))? {
                let row = decode_all(&bytes).ok_or_else(|| StateError::Corrupt(h.cf.clone()))?;
                slots[i as usize] = Some(row);
                old[i as usize] = Some(bytes.len());
            }
        }

        let out = apply(&mut slots);

        // New values encoded side by side; the index, if kept, follows.
        enum Change {
            Put(usize, usize),
            Delete,
            Keep,
        }
        let mut values: Vec<u8> = std::mem::take(&mut h.val_buf);
        values.clear();
        let mut changes: Vec<Change> = Vec::with_capacity(n);
        for (i, slot) in slots.iter().enumerate() {
            let key = key_at(i);
            let change = match slot {
                Some(row) => {
                    let before = values.len();
                    encode_into(row, &mut values);
                    let len = values.len() - before;
                    if let Some(live) = &mut h.live {
                        live.set(key, len);
                    }
                    count_write(&mut h.metrics, key.len(), len, old[i]);
                    Change::Put(before, values.len())
                }
                // Only a row removed is a delete (`modify`'s rule).
                None if old[i].is_some() => {
                    if let Some(live) = &mut h.live {
                        live.remove(key);
                    }
                    count_delete(&mut h.metrics, key.len(), old[i]);
                    Change::Delete
                }
                None => Change::Keep,
            };
            changes.push(change);
        }
        let mut batch = WriteBatch::default();
        for &i in &sorted {
            let i = i as usize;
            match changes[i] {
                Change::Put(begin, end) => batch.put_cf(&h.cf_ref, key_at(i), &values[begin..end]),
                Change::Delete => batch.delete_cf(&h.cf_ref, key_at(i)),
                Change::Keep => {}
            }
        }
        if !batch.is_empty() {
            h.db.write_opt(batch, &h.write_opts)
                .map_err(|e| err(&h.cf, e))?;
        }
        h.key_buf = encoded;
        h.val_buf = values;
        Ok(out)
    }
}

pub struct RocksMapState {
    /// The prefix scans' iterator, created once and refreshed per scan
    /// (declared before `inner`, whose `Arc<Db>` it borrows, so it is
    /// dropped first).
    scan_iter: Option<Box<ScanIter>>,
    inner: Handle,
    ukey_arity: usize,
}

/// A raw iterator over the database that `Handle::db` keeps open.
type ScanIter = rocksdb::DBRawIteratorWithThreadMode<'static, Db>;

impl RocksMapState {
    pub fn metrics(&self) -> StateMetrics {
        self.inner.metrics
    }
    /// Every key, user key and row of the operator (all its subtasks).
    /// The column family holding this state, and the width of its user keys.
    pub fn column_family(&self) -> (&str, usize) {
        (&self.inner.cf, self.ukey_arity)
    }
    pub fn all_entries(&self) -> StateResult<Vec<(Row, Row, Row)>> {
        let corrupt = || StateError::Corrupt(self.inner.cf.clone());
        self.inner
            .all()?
            .into_iter()
            .map(|(k, v)| split_map_key(&k, self.ukey_arity).map(|(k, u)| (k, u, v)))
            .collect::<Option<_>>()
            .ok_or_else(corrupt)
    }
    pub fn report(&self) -> StateReport {
        self.inner.report()
    }
    fn set_key(&mut self, key: &[Value], ukey: &[Value]) {
        self.inner.key_buf.clear();
        encode_into(key, &mut self.inner.key_buf);
        encode_into(ukey, &mut self.inner.key_buf);
    }
    pub fn get(&mut self, key: &[Value], ukey: &[Value]) -> StateResult<Option<Row>> {
        self.set_key(key, ukey);
        self.inner.read()
    }
    pub fn put(&mut self, key: &[Value], ukey: &[Value], value: Row) -> StateResult<()> {
        self.set_key(key, ukey);
        self.inner.write(&value, None)
    }
    pub fn delete(&mut self, key: &[Value], ukey: &[Value]) -> StateResult<()> {
        self.set_key(key, ukey);
        self.inner.remove(None)
    }
    pub fn modify<R>(
        &mut self,
        key: &[Value],
        ukey: &[Value],
        f: impl FnOnce(&mut Option<Row>) -> R,
    ) -> StateResult<R> {
        self.set_key(key, ukey);
        self.inner.modify(f)
    }
    pub fn for_each(
        &mut self,
        key: &[Value],
        mut f: impl FnMut(&[Value], &[Value]),
    ) -> StateResult<()> {
        let h = &mut self.inner;
        h.key_buf.clear();
        encode_into(key, &mut h.key_buf);
        let prefix_len = h.key_buf.len();
        // Each entry decoded into the same two buffers.
        let (mut ukey, mut value) = std::mem::take(&mut h.scan_bufs);
        // One iterator for every scan: creating one (a super version
        // referenced, the memtables' and files' iterators built and merged)
        // costs more than most scans. `refresh` makes it read the latest
        // writes; it rebuilds only when the column family's super version
        // changed (a flush or compaction), else it only moves its sequence
        // number. Between scans it keeps the super version it read last.
        let it = match &mut self.scan_iter {
            Some(it) => {
                it.refresh().map_err(|e| err(&h.cf, e))?;
                it
            }
            None => {
                let it = h.db.raw_iterator_cf(h.cf());
                // SAFETY: the iterator borrows the database `h.db` holds an
                // `Arc` of; `scan_iter` is dropped before `inner` (field
                // order) and never moved out, so the database outlives it.
                let it: ScanIter = unsafe { std::mem::transmute(it) };
                self.scan_iter.insert(Box::new(it))
            }
        };
        it.seek(&h.key_buf);
        let mut visited = 0u64;
        while it.valid() {
            let k = it.key().expect("valid iterator has a key");
            if !k.starts_with(&h.key_buf) {
                break;
            }
            visited += 1;
            let corrupt = || StateError::Corrupt(h.cf.clone());
            ukey.clear();
            decode_into(&k[prefix_len..], self.ukey_arity, &mut ukey).ok_or_else(corrupt)?;
            value.clear();
            decode_all_into(it.value().expect("valid iterator has a value"), &mut value)
                .ok_or_else(corrupt)?;
            f(&ukey, &value);
            it.next();
        }
        ukey.clear();
        value.clear();
        it.status().map_err(|e| err(&h.cf, e))?;
        h.scan_bufs = (ukey, value);
        h.metrics.reads += visited.max(1);
        Ok(())
    }
}

/// A map state's encoded entry key back as its key and user key.
fn split_map_key(bytes: &[u8], ukey_arity: usize) -> Option<(Row, Row)> {
    let mut all = decode_all(bytes)?;
    let split = all.len().checked_sub(ukey_arity)?;
    let ukey = all.split_off(split);
    Some((all, ukey))
}

/// A RocksDB checkpoint directory ([`RocksDbStore::create_checkpoint`]),
/// opened read-only to take its entries back into the canonical form.
pub struct CheckpointDb {
    db: rocksdb::DB,
}

impl CheckpointDb {
    /// Opens the database in `dir` with every column family it has.
    pub fn open(dir: &Path) -> StateResult<CheckpointDb> {
        let opts = Options::default();
        let cfs = rocksdb::DB::list_cf(&opts, dir).map_err(|e| err("<checkpoint>", e))?;
        let db = rocksdb::DB::open_cf_for_read_only(&opts, dir, cfs, false)
            .map_err(|e| err("<checkpoint>", e))?;
        Ok(CheckpointDb { db })
    }

    /// Every entry of column family `cf` as (key, user key, row); a value
    /// state (`ukey_arity` `None`) has empty user keys.
    pub fn entries(
        &self,
        cf: &str,
        ukey_arity: Option<usize>,
    ) -> StateResult<Vec<(Row, Row, Row)>> {
        let corrupt = || StateError::Corrupt(cf.to_string());
        let handle = self.db.cf_handle(cf).ok_or_else(corrupt)?;
        let mut it = self.db.raw_iterator_cf(&handle);
        it.seek_to_first();
        let mut out = Vec::new();
        while let (Some(k), Some(v)) = (it.key(), it.value()) {
            let row = decode_all(v).ok_or_else(corrupt)?;
            let (key, ukey) = match ukey_arity {
                Some(n) => split_map_key(k, n).ok_or_else(corrupt)?,
                None => (decode_all(k).ok_or_else(corrupt)?, Row::new()),
            };
            out.push((key, ukey, row));
            it.next();
        }
        it.status().map_err(|e| err(cf, e))?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{MapImpl, MapState, StateBackend, ValueImpl, ValueState};

    fn i(v: i64) -> Value {
        Value::Int(v)
    }

    fn s(n: usize) -> Row {
        vec![Value::str(&"y".repeat(n))]
    }

    /// The column family (this handle's alone) as the index should hold it.
    fn assert_index_true(h: &Handle) {
        let mut it = h.db.raw_iterator_cf(h.cf());
        it.seek_to_first();
        let mut stored = Vec::new();
        while let (Some(k), Some(v)) = (it.key(), it.value()) {
            stored.push((k.to_vec(), v.len()));
            it.next();
        }
        let mut indexed: Vec<(Vec<u8>, usize)> = h
            .live
            .as_ref()
            .expect("an index")
            .0
            .iter()
            .map(|s| (s.key().to_vec(), s.len() as usize))
            .collect();
        indexed.sort();
        assert_eq!(indexed, stored);
        let bytes: usize = stored.iter().map(|(k, l)| k.len() + l).sum();
        assert_eq!(
            (h.metrics.entries, h.metrics.logical_bytes),
            (stored.len() as i64, bytes as i64)
        );
    }

    fn value_handle(s: &ValueState) -> &Handle {
        match &s.imp {
            ValueImpl::Rocks(r) => &r.inner,
            ValueImpl::Heap(_) => unreachable!(),
        }
    }

    fn map_handle(s: &MapState) -> &Handle {
        match &s.imp {
            MapImpl::Rocks(r) => &r.inner,
            MapImpl::Heap(_) => unreachable!(),
        }
    }

    /// Keys and lengths inline and boxed, and a length outgrowing inline.
    #[test]
    fn the_index_keeps_any_key_and_length() {
        let mut live = LiveIndex::new();
        let keys: Vec<Vec<u8>> = [0, 1, 7, 8, 9, 28, 29, 200]
            .iter()
            .map(|&n| (0..n).map(|b| b as u8).collect())
            .collect();
        for (j, k) in keys.iter().enumerate() {
            assert_eq!(live.set(k, j), None);
        }
        for (j, k) in keys.iter().enumerate() {
            assert_eq!(live.set(k, 70_000 + j), Some(j));
            assert_eq!(live.set(k, 5), Some(70_000 + j));
            assert_eq!(live.get(k), Some(5));
        }
        for k in &keys {
            assert_eq!(live.remove(k), Some(5));
            assert_eq!(live.remove(k), None);
        }
        assert_eq!(live.0.len(), 0);
    }

    /// Every path that writes keeps the index equal to the column family.
    #[test]
    fn every_write_path_keeps_the_index_true() {
        let b = StateBackend::rocksdb(None).unwrap();
        b.set_ttl("t", "ttl", std::time::Duration::from_millis(10));
        let mut v = b.value_state("t", "v", 1).unwrap();
        let mut m = b.map_state("t", "m", 1, 1).unwrap();
        let mut t = b.value_state("t", "ttl", 1).unwrap();
        for n in 0..6 {
            v.put(&[i(n)], s(n as usize)).unwrap();
            m.put(&[i(n % 2)], &[i(n)], s(n as usize)).unwrap();
            t.put(&[i(n)], s(1)).unwrap();
        }
        v.delete(&[i(1)]).unwrap();
        v.delete(&[i(42)]).unwrap();
        m.delete(&[i(1)], &[i(3)]).unwrap();
        v.modify(&[i(2)], |r| *r = Some(s(20))).unwrap();
        v.modify(&[i(3)], |r| *r = None).unwrap();
        assert_index_true(value_handle(&v));
        assert_index_true(map_handle(&m));

        // Batches: MultiGet and WriteBatch, keys repeated in order.
        let keys: Vec<Row> = [0, 4, 7, 0, 5, 8].iter().map(|&n| vec![i(n)]).collect();
        v.modify_in_order(&keys, |j, r| {
            *r = match j {
                1 | 4 => None,
                _ => Some(s(j + 30)),
            }
        })
        .unwrap();
        v.modify_many(&[vec![i(9)], vec![i(2)]], |j, r| {
            *r = (j == 0).then(|| s(2))
        })
        .unwrap();
        // Batches dropped the index; a blind write rebuilds it, for good.
        assert!(value_handle(&v).live.is_none());
        v.put(&[i(4)], s(44)).unwrap();
        assert_index_true(value_handle(&v));

        // Images: loaded, changed, staged.
        let vk: [&[Value]; 3] = [&[i(0)], &[i(9)], &[i(11)]];
        let mut vi = v.load_image(&vk).unwrap().unwrap();
        vi.put(&[i(0)], &[], s(1));
        vi.delete(&[i(9)], &[]);
        vi.put(&[i(11)], &[], s(11));
        let mk: [&[Value]; 2] = [&[i(0)], &[i(1)]];
        let mut mi = m.load_image(&mk).unwrap().unwrap();
        mi.delete(&[i(0)], &[i(0)]);
        mi.put(&[i(1)], &[i(1)], s(40));
        mi.put(&[i(1)], &[i(7)], s(7));
        let mut writes = ImageWrites::new();
        v.stage_image(vi, &mut writes).unwrap();
        m.stage_image(mi, &mut writes).unwrap();
        writes.commit().unwrap();
        assert_index_true(value_handle(&v));
        assert!(map_handle(&m).live.is_none());
        m.delete(&[i(1)], &[i(7)]).unwrap();
        m.put(&[i(0)], &[i(2)], s(9)).unwrap();
        assert_index_true(map_handle(&m));

        // TTL: expired entries read (and removed) or swept.
        b.clock().set(100);
        assert_eq!(t.get(&[i(0)]).unwrap(), None);
        t.put(&[i(1)], s(5)).unwrap();
        assert_index_true(value_handle(&t));
        assert_eq!(value_handle(&t).metrics.entries, 1);
    }
}
