//! A per-batch in-memory image of some keys of a RocksDB value or map
//! state, for asynchronous state execution of an operator that reads and
//! writes several entries per key (the regular join,
//! `operators/src/join/join_async_state.rs`).
//!
//! [`ValueState::load_image`] reads the given keys with one `MultiGet`;
//! [`MapState::load_image`] reads every entry of the given keys in one
//! sorted pass: a single iterator seeks the keys' prefixes in byte order
//! (a key's entries are contiguous, [`super::super::codec`]), moving on
//! without a seek when it already stands on the next prefix. The caller
//! then reads and changes the image ([`StateImage`]: get, put, delete,
//! modify, and a scan of a key's entries in RocksDB's order, so a scan
//! of the image meets the rows in the order a prefix seek would), and
//! [`ValueState::stage_image`] / [`MapState::stage_image`] put every
//! changed entry into an [`ImageWrites`], which one `WriteBatch` writes
//! ([`ImageWrites::commit`]; a join puts both sides' changes into one).
//!
//! Counters, by the rules of `state/mod.rs`: a value key loaded is one
//! read; a map key loaded is one read per entry met, or one when it has
//! none (a scan's rule). Each entry changed is one write if it holds a row
//! at the end, or one delete if it held one when loaded; entries and
//! logical bytes follow exactly from the lengths the image loaded. The
//! first image drops the handle's index of live entries, unless it was
//! rebuilt before; staging keeps a kept one true (`state/rocksdb.rs`).
//! Only RocksDB without a TTL keeps images:
//! elsewhere `load_image` gives `None` and the caller goes one access at a
//! time.

use super::{count_delete, count_write, err, Db, Handle};
use crate::state::codec::{decode, decode_all, encode_into};
use crate::state::heap::{fixed_state, Map};
use crate::state::{MapImpl, MapState, StateError, StateResult, ValueImpl, ValueState};
use crate::value::{Row, Value};
use rocksdb::WriteBatch;
use std::sync::Arc;

/// One entry of the image: the user key (empty in a value state), its
/// row as it stands now (`None`: absent or deleted), the length of the
/// value RocksDB holds (`None`: absent), and whether it was written.
struct ImageEntry {
    ukey_bytes: Vec<u8>,
    ukey: Row,
    value: Option<Row>,
    stored_len: Option<usize>,
    changed: bool,
}

/// One key's entries, sorted by encoded user key.
struct KeyImage {
    prefix: Vec<u8>,
    entries: Vec<ImageEntry>,
}

/// The loaded keys of one state (see the module doc).
pub struct StateImage {
    index: Map<Row, u32>,
    keys: Vec<KeyImage>,
    ukey_buf: Vec<u8>,
}

impl StateImage {
    /// An empty image sized for `keys` keys (growing the index key by key
    /// rehashed it several times per batch).
    fn new(keys: usize) -> StateImage {
        StateImage {
            index: Map::with_capacity_and_hasher(keys, fixed_state()),
            keys: Vec::with_capacity(keys),
            ukey_buf: Vec::new(),
        }
    }

    fn key_index(&self, key: &[Value]) -> usize {
        *self
            .index
            .get(key)
            .expect("a state image is only accessed under a key it loaded") as usize
    }

    /// The index of `key` and the position of `ukey` among its entries
    /// (`Err`: where it would go); `ukey_buf` holds its encoding.
    fn find(&mut self, key: &[Value], ukey: &[Value]) -> (usize, Result<usize, usize>) {
        self.ukey_buf.clear();
        encode_into(ukey, &mut self.ukey_buf);
        let k = self.key_index(key);
        let buf = &self.ukey_buf;
        let at = self.keys[k]
            .entries
            .binary_search_by(|e| e.ukey_bytes.as_slice().cmp(buf));
        (k, at)
    }

    /// The row under (`key`, `ukey`).
    pub fn get(&mut self, key: &[Value], ukey: &[Value]) -> Option<&Row> {
        match self.find(key, ukey) {
            (k, Ok(i)) => self.keys[k].entries[i].value.as_ref(),
            (_, Err(_)) => None,
        }
    }

    /// Read-modify-write of (`key`, `ukey`): `f` sees the row (or `None`)
    /// and may change, set or clear it.
    pub fn modify<R>(
        &mut self,
        key: &[Value],
        ukey: &[Value],
        f: impl FnOnce(&mut Option<Row>) -> R,
    ) -> R {
        let (k, at) = self.find(key, ukey);
        let i = match at {
            Ok(i) => i,
            Err(i) => {
                let mut slot = None;
                let r = f(&mut slot);
                if slot.is_some() {
                    let entry = ImageEntry {
                        ukey_bytes: self.ukey_buf.clone(),
                        ukey: ukey.to_vec(),
                        value: slot,
                        stored_len: None,
                        changed: true,
                    };
                    self.keys[k].entries.insert(i, entry);
                }
                return r;
            }
        };
        let e = &mut self.keys[k].entries[i];
        let was = e.value.is_some();
        let r = f(&mut e.value);
        // A write of a row, or the removal of one, changes the entry.
        e.changed |= e.value.is_some() || was;
        r
    }

    pub fn put(&mut self, key: &[Value], ukey: &[Value], row: Row) {
        self.modify(key, ukey, |slot| *slot = Some(row));
    }

    pub fn delete(&mut self, key: &[Value], ukey: &[Value]) {
        self.modify(key, ukey, |slot| *slot = None);
    }

    /// Visits `key`'s live (user key, row) in RocksDB's order.
    pub fn for_each(&mut self, key: &[Value], mut f: impl FnMut(&[Value], &[Value])) {
        let k = self.key_index(key);
        for e in &self.keys[k].entries {
            if let Some(v) = &e.value {
                f(&e.ukey, v);
            }
        }
    }

    fn insert_key(&mut self, key: &[Value], prefix: Vec<u8>) -> usize {
        let k = self.keys.len();
        self.index.insert(key.to_vec(), k as u32);
        self.keys.push(KeyImage {
            prefix,
            entries: Vec::new(),
        });
        k
    }
}

/// Changed entries of one or more images, written by one `WriteBatch`.
#[derive(Default)]
pub struct ImageWrites {
    batch: WriteBatch,
    target: Option<(Arc<Db>, rocksdb::WriteOptions)>,
}

impl ImageWrites {
    pub fn new() -> ImageWrites {
        ImageWrites::default()
    }

    /// Writes every staged entry at once.
    pub fn commit(self) -> StateResult<()> {
        match self.target {
            Some((db, opts)) if !self.batch.is_empty() => db
                .write_opt(self.batch, &opts)
                .map_err(|e| err("<image>", e)),
            _ => Ok(()),
        }
    }
}

/// The distinct keys' encodings and the order that sorts them.
fn encode_sorted(keys: &[&[Value]]) -> (Vec<Vec<u8>>, Vec<usize>) {
    let prefixes: Vec<Vec<u8>> = keys
        .iter()
        .map(|k| {
            let mut b = Vec::new();
            encode_into(k, &mut b);
            b
        })
        .collect();
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_unstable_by(|&a, &b| prefixes[a].cmp(&prefixes[b]));
    (prefixes, order)
}

impl Handle {
    /// A value state's image of `keys` (distinct): one `MultiGet`.
    fn load_values(&mut self, keys: &[&[Value]]) -> StateResult<StateImage> {
        self.drop_index_for_batches();
        let (mut prefixes, order) = encode_sorted(keys);
        let got =
            self.db
                .batched_multi_get_cf(self.cf(), order.iter().map(|&i| &prefixes[i]), true);
        self.metrics.reads += keys.len() as u64;
        let mut image = StateImage::new(keys.len());
        let mut loaded: Vec<Option<(Row, usize)>> = vec![None; keys.len()];
        for (&i, got) in order.iter().zip(got) {
            if let Some(bytes) = got.map_err(|e| err(&self.cf, e))? {
                let row = decode_all(&bytes).ok_or_else(|| StateError::Corrupt(self.cf.clone()))?;
                loaded[i] = Some((row, bytes.len()));
            }
        }
        for (i, (key, got)) in keys.iter().zip(loaded).enumerate() {
            let k = image.insert_key(key, std::mem::take(&mut prefixes[i]));
            if let Some((row, len)) = got {
                image.keys[k].entries.push(ImageEntry {
                    ukey_bytes: Vec::new(),
                    ukey: Row::new(),
                    value: Some(row),
                    stored_len: Some(len),
                    changed: false,
                });
            }
        }
        Ok(image)
    }

    /// A map state's image of `keys` (distinct): one iterator, seeking the
    /// keys' prefixes in sorted order.
    fn load_prefixes(&mut self, keys: &[&[Value]], ukey_arity: usize) -> StateResult<StateImage> {
        self.drop_index_for_batches();
        let (mut prefixes, order) = encode_sorted(keys);
        let mut image = StateImage::new(keys.len());
        let slots: Vec<usize> = keys
            .iter()
            .enumerate()
            .map(|(i, key)| image.insert_key(key, std::mem::take(&mut prefixes[i])))
            .collect();
        let mut it = self.db.raw_iterator_cf(self.cf());
        let corrupt = || StateError::Corrupt(self.cf.clone());
        let mut reads = 0u64;
        let mut positioned = false;
        for &i in &order {
            let k = &mut image.keys[slots[i]];
            let prefix = &k.prefix;
            // The previous key's scan stopped at the first entry past its
            // own: at or before this prefix's entries.
            if !(positioned && it.valid() && it.key().is_some_and(|at| at >= prefix.as_slice())) {
                it.seek(prefix);
                positioned = true;
            }
            let mut visited = 0u64;
            while it.valid() {
                let key = it.key().expect("valid iterator has a key");
                if !key.starts_with(prefix) {
                    break;
                }
                visited += 1;
                let ukey_bytes = key[prefix.len()..].to_vec();
                let (ukey, _) = decode(&ukey_bytes, ukey_arity).ok_or_else(corrupt)?;
                let bytes = it.value().expect("valid iterator has a value");
                let value = decode_all(bytes).ok_or_else(corrupt)?;
                k.entries.push(ImageEntry {
                    ukey_bytes,
                    ukey,
                    value: Some(value),
                    stored_len: Some(bytes.len()),
                    changed: false,
                });
                it.next();
            }
            reads += visited.max(1);
        }
        it.status().map_err(|e| err(&self.cf, e))?;
        drop(it);
        self.metrics.reads += reads;
        Ok(image)
    }

    /// Puts `image`'s changed entries into `writes`, in key order, and
    /// counts them.
    fn stage(&mut self, image: StateImage, writes: &mut ImageWrites) -> StateResult<()> {
        let mut keys = image.keys;
        keys.sort_unstable_by(|a, b| a.prefix.cmp(&b.prefix));
        let mut entry_key = Vec::new();
        let mut value = std::mem::take(&mut self.val_buf);
        for k in &keys {
            for e in k.entries.iter().filter(|e| e.changed) {
                entry_key.clear();
                entry_key.extend_from_slice(&k.prefix);
                entry_key.extend_from_slice(&e.ukey_bytes);
                // The lengths the image loaded are those it replaces; a
                // kept index follows.
                match &e.value {
                    Some(row) => {
                        value.clear();
                        encode_into(row, &mut value);
                        if let Some(live) = &mut self.live {
                            live.set(&entry_key, value.len());
                        }
                        count_write(
                            &mut self.metrics,
                            entry_key.len(),
                            value.len(),
                            e.stored_len,
                        );
                        writes.batch.put_cf(&self.cf_ref, &entry_key, &value);
                    }
                    None if e.stored_len.is_some() => {
                        if let Some(live) = &mut self.live {
                            live.remove(&entry_key);
                        }
                        count_delete(&mut self.metrics, entry_key.len(), e.stored_len);
                        writes.batch.delete_cf(&self.cf_ref, &entry_key);
                    }
                    None => {}
                }
            }
        }
        self.val_buf = value;
        if writes.target.is_none() {
            writes.target = Some((self.db.clone(), super::write_options()));
        }
        Ok(())
    }
}

impl ValueState {
    /// An image of `keys` (distinct), read with one `MultiGet`; `None` on
    /// the heap and with a TTL (see the module doc).
    pub fn load_image(&mut self, keys: &[&[Value]]) -> StateResult<Option<StateImage>> {
        match (&mut self.imp, &self.ttl) {
            (ValueImpl::Rocks(s), None) => s.inner.load_values(keys).map(Some),
            _ => Ok(None),
        }
    }

    /// Stages `image`'s changed entries (see the module doc).
    pub fn stage_image(&mut self, image: StateImage, writes: &mut ImageWrites) -> StateResult<()> {
        match &mut self.imp {
            ValueImpl::Rocks(s) => s.inner.stage(image, writes),
            ValueImpl::Heap(_) => unreachable!("the heap keeps no image"),
        }
    }

    /// Whether [`ValueState::load_image`] gives an image.
    pub fn keeps_images(&self) -> bool {
        matches!((&self.imp, &self.ttl), (ValueImpl::Rocks(_), None))
    }
}

impl MapState {
    /// An image of every entry of `keys` (distinct), read in one sorted
    /// pass; `None` on the heap and with a TTL (see the module doc).
    pub fn load_image(&mut self, keys: &[&[Value]]) -> StateResult<Option<StateImage>> {
        match (&mut self.imp, &self.ttl) {
            (MapImpl::Rocks(s), None) => {
                let arity = s.ukey_arity;
                s.inner.load_prefixes(keys, arity).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// Stages `image`'s changed entries (see the module doc).
    pub fn stage_image(&mut self, image: StateImage, writes: &mut ImageWrites) -> StateResult<()> {
        match &mut self.imp {
            MapImpl::Rocks(s) => s.inner.stage(image, writes),
            MapImpl::Heap(_) => unreachable!("the heap keeps no image"),
        }
    }

    /// Whether [`MapState::load_image`] gives an image.
    pub fn keeps_images(&self) -> bool {
        matches!((&self.imp, &self.ttl), (MapImpl::Rocks(_), None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::StateBackend;

    fn i(v: i64) -> Value {
        Value::Int(v)
    }

    /// The same changes through an image and one access at a time leave
    /// the same entries, live count and logical bytes; the image reads
    /// each key once (a scan's reads) and writes each changed entry once.
    #[test]
    fn an_image_changes_what_direct_accesses_change_with_exact_counters() {
        let backend = StateBackend::rocksdb(None).unwrap();
        let mut direct = backend.map_state("t", "direct", 1, 1).unwrap();
        let mut batched = backend.map_state("t", "batched", 1, 1).unwrap();
        for s in [&mut direct, &mut batched] {
            s.put(&[i(1)], &[i(10)], vec![i(100)]).unwrap();
            s.put(&[i(1)], &[i(11)], vec![i(110)]).unwrap();
            s.put(&[i(3)], &[i(30)], vec![i(300)]).unwrap();
        }
        let before = batched.metrics();
        // Keys 3, 1, 2 (unsorted; 2 absent).
        let keys: [&[Value]; 3] = [&[i(3)], &[i(1)], &[i(2)]];
        let mut image = batched.load_image(&keys).unwrap().unwrap();
        assert_eq!(batched.metrics().reads - before.reads, 1 + 2 + 1);
        let mut seen = Vec::new();
        image.for_each(&[i(1)], |u, v| seen.push((u.to_vec(), v.to_vec())));
        assert_eq!(
            seen,
            [(vec![i(10)], vec![i(100)]), (vec![i(11)], vec![i(110)])]
        );
        type Put<'a> = dyn FnMut(&[Value], &[Value], Option<Row>) + 'a;
        let ops = |put: &mut Put| {
            put(&[i(1)], &[i(10)], None);
            put(&[i(1)], &[i(12)], Some(vec![i(120)]));
            put(&[i(2)], &[i(20)], Some(vec![i(200)]));
            put(&[i(2)], &[i(20)], None);
            put(&[i(3)], &[i(30)], Some(vec![i(3000)]));
            put(&[i(1)], &[i(11)], Some(vec![i(111)]));
        };
        ops(&mut |k, u, v| match v {
            Some(v) => direct.put(k, u, v).unwrap(),
            None => direct.delete(k, u).unwrap(),
        });
        ops(&mut |k, u, v| match v {
            Some(v) => image.put(k, u, v),
            None => image.delete(k, u),
        });
        let mut writes = ImageWrites::new();
        batched.stage_image(image, &mut writes).unwrap();
        writes.commit().unwrap();
        let (d, b) = (direct.metrics(), batched.metrics());
        assert_eq!((d.entries, d.logical_bytes), (b.entries, b.logical_bytes));
        // Changed: (1,10) deleted, (1,12), (3,30), (1,11) written; (2,20)
        // came and went.
        assert_eq!(
            (b.writes - before.writes, b.deletes - before.deletes),
            (3, 1)
        );
        let strip = |mut e: Vec<(Row, Row, Row)>| {
            e.sort_by(|x, y| crate::value::cmp_rows(&x.1, &y.1));
            e
        };
        assert_eq!(
            strip(direct.all_entries().unwrap()),
            strip(batched.all_entries().unwrap())
        );
    }
}
