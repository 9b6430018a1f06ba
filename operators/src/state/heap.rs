//! The heap backend: native rows in hash tables, no serialisation.
//!
//! Tables use fixed hash functions, so iteration order (and so the order of
//! emitted rows that depends on it) is the same on every run.
//!
//! A value state is its own open-addressing table ([`SlotTable`]) made for
//! the access pattern of an aggregate: one lookup per record over many keys,
//! where the cost is the cache miss. Each entry is one 64-byte, line-aligned
//! [`Bucket`]: when the key and the row together hold at most [`INLINE`]
//! values and none is a `STRING`, they are packed in it (a tag byte and a
//! 64-bit word per value), so a lookup touches one word of the control array
//! and one cache line, and [`HeapValueState::prefetch`] can fetch that line
//! ahead of time. Other entries keep their key and row in a side list. The
//! row handed to a `modify` closure is decoded into a spare `Vec` reused
//! from call to call, so a read-modify-write allocates nothing;
//! [`HeapValueState::modify_packed`] skips even the decoding, for callers
//! that work on the packed words (the aggregates' typed path, which asks
//! the backend for this handle once:
//! [`super::StateBackend::heap_value_state`]). Single-`INT` keys are hashed
//! with one folded multiply (fixed constants), other keys with `foldhash`
//! under the fixed seed.
//!
//! Map states are `hashbrown` maps of maps, the outer key held in the
//! table's bucket when it is one value (`KeyRow`).

use super::codec::row_len;
use super::{count_delete, count_write, StateMetrics, StateReport, StateResult};
use crate::value::{Row, Value};
use hashbrown::hash_map::EntryRef;
use std::hash::BuildHasher;

pub type FixedState = foldhash::fast::FixedState;
pub type Map<K, V> = hashbrown::HashMap<K, V, FixedState>;

const SEED: u64 = 0x5eed;

pub fn new_map<K, V>() -> Map<K, V> {
    Map::with_hasher(fixed_state())
}

/// The fixed hasher of the heap's maps, for tables built by hand.
pub fn fixed_state() -> FixedState {
    FixedState::with_seed(SEED)
}

/// The hash of a value-state key.
#[inline]
fn hash_key(key: &[Value]) -> u64 {
    match key {
        [Value::Int(i)] => hash_int(*i),
        _ => FixedState::with_seed(SEED).hash_one(key),
    }
}

/// One folded multiply: well-mixed low bits (the bucket) and high bits
/// (the control tag) for sequential and random integers alike.
#[inline]
fn hash_int(i: i64) -> u64 {
    let p = u128::from(i as u64 ^ 0x243f_6a88_85a3_08d3) * 0x9e37_79b9_7f4a_7c15_u128;
    (p as u64) ^ ((p >> 64) as u64)
}

/// Values a bucket packs (key and row together).
const INLINE: usize = 7;

const T_NULL: u8 = 0;
const T_FALSE: u8 = 1;
const T_TRUE: u8 = 2;
const T_INT: u8 = 3;
const T_DOUBLE: u8 = 4;
const T_TS: u8 = 5;

/// A value as (tag, word); `None` for a `STRING`. Doubles keep their exact
/// bits (`-0.0` stays `-0.0`).
#[inline]
fn pack(v: &Value) -> Option<(u8, u64)> {
    match v {
        Value::Null => Some((T_NULL, 0)),
        Value::Bool(b) => Some((if *b { T_TRUE } else { T_FALSE }, 0)),
        Value::Int(i) => Some((T_INT, *i as u64)),
        Value::Double(d) => Some((T_DOUBLE, d.to_bits())),
        Value::Ts(t) => Some((T_TS, *t as u64)),
        Value::Str(_) => None,
    }
}

#[inline]
fn unpack(tag: u8, word: u64) -> Value {
    match tag {
        T_INT => Value::Int(word as i64),
        T_DOUBLE => Value::Double(f64::from_bits(word)),
        T_TS => Value::Ts(word as i64),
        T_FALSE => Value::Bool(false),
        T_TRUE => Value::Bool(true),
        _ => Value::Null,
    }
}

/// The encoded length ([`super::codec::value_len`]) of a packed value.
#[inline]
fn packed_len(tag: u8) -> usize {
    if tag >= T_INT {
        9
    } else {
        1
    }
}

/// `Value` equality between a packed value and `v`.
#[inline]
fn packed_eq(tag: u8, word: u64, v: &Value) -> bool {
    match v {
        Value::Int(i) => tag == T_INT && word == *i as u64,
        Value::Str(_) => false,
        _ => unpack(tag, word) == *v,
    }
}

/// A packed row, a key's bucket as [`HeapValueState::modify_packed`] lends
/// it: value `i` is a tag and a 64-bit word, read and written in place
/// without building rows. Only `NULL`, `BOOLEAN`, integers and doubles
/// pack; setting a value that does not (a string) marks the row instead
/// ([`PackedRow::fits`] false), and its user must then put the row back as
/// it found it. Updated in place rather than copied out and back: the copy
/// back read the row's just-written bytes with wider loads than they were
/// stored with, a stall per record that instruction counts do not show.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct PackedRow {
    b: Bucket,
}

impl PackedRow {
    #[inline]
    fn at(&self, i: usize) -> usize {
        self.b.klen() + i
    }

    /// Value `i` (`NULL` for a mark). Integers (what counts and most
    /// sums hold) are tested first: a compare rather than `unpack`'s jump
    /// table, whose indirect branch mispredicts when a row's values
    /// alternate between kinds.
    #[inline]
    pub fn get(&self, i: usize) -> Value {
        let j = self.at(i);
        let (tag, word) = (self.b.tags[j], self.b.words[j]);
        if tag == T_INT {
            return Value::Int(word as i64);
        }
        unpack(tag, word)
    }

    /// Appends value `i` to `out`, written in place (see
    /// [`crate::value::push_copy`]).
    #[inline]
    pub fn push_to(&self, i: usize, out: &mut Vec<Value>) {
        let j = self.at(i);
        let (tag, word) = (self.b.tags[j], self.b.words[j]);
        match tag {
            T_INT => out.push(Value::Int(word as i64)),
            T_DOUBLE => out.push(Value::Double(f64::from_bits(word))),
            T_TS => out.push(Value::Ts(word as i64)),
            T_FALSE => out.push(Value::Bool(false)),
            T_TRUE => out.push(Value::Bool(true)),
            _ => out.push(Value::Null),
        }
    }

    /// Value `i` if it is an integer.
    #[inline]
    pub fn int(&self, i: usize) -> Option<i64> {
        let j = self.at(i);
        (self.b.tags[j] == T_INT).then_some(self.b.words[j] as i64)
    }

    /// Sets value `i` to `v`, or marks the row when `v` does not pack
    /// (value `i` then stays as it was; the row is dropped anyway).
    #[inline]
    pub fn set(&mut self, i: usize, v: &Value) {
        match pack(v) {
            Some(packed) => self.put(i, packed),
            None => self.b.lens |= UNFIT,
        }
    }

    /// [`PackedRow::set`] of an integer.
    #[inline]
    pub fn set_int(&mut self, i: usize, v: i64) {
        self.put(i, (T_INT, v as u64));
    }

    #[inline]
    fn put(&mut self, i: usize, (tag, word): (u8, u64)) {
        let j = self.at(i);
        (self.b.tags[j], self.b.words[j]) = (tag, word);
    }

    /// Whether value `i` is packed the same (tag and word) in both rows;
    /// for integers, booleans and NULL exactly when the values are equal.
    #[inline]
    pub fn same(&self, other: &PackedRow, i: usize) -> bool {
        let (j, k) = (self.at(i), other.at(i));
        (self.b.tags[j], self.b.words[j]) == (other.b.tags[k], other.b.words[k])
    }

    /// Whether every value packs (no [`PackedRow::set`] marked the row).
    #[inline]
    pub fn fits(&self) -> bool {
        self.b.lens & UNFIT == 0
    }

    /// The key's bucket as a row, to update in place.
    #[inline]
    fn in_bucket(b: &mut Bucket) -> &mut PackedRow {
        // SAFETY: `PackedRow` is `repr(transparent)` over `Bucket`.
        unsafe { &mut *(b as *mut Bucket).cast::<PackedRow>() }
    }
}

/// The encoded length of a bucket's row ([`row_len`] of its values).
#[inline]
fn encoded_len(b: &Bucket) -> usize {
    b.tags[b.value_range()].iter().map(|&t| packed_len(t)).sum()
}

/// The row an absent key starts from in [`HeapValueState::modify_packed`],
/// packed once for keys of a given length.
#[derive(Clone, Copy)]
pub struct PackedTemplate {
    b: Bucket,
}

impl PackedTemplate {
    /// `None` if `key_len` values and `init` do not fit a bucket or `init`
    /// holds a string.
    pub fn new(key_len: usize, init: &[Value]) -> Option<PackedTemplate> {
        // The key's place is held by NULLs until `with_key` fills it.
        let b = Bucket::pack(&vec![Value::Null; key_len], init)?;
        Some(PackedTemplate { b })
    }

    /// The template with `key` filled in; `None` if it does not pack.
    #[inline]
    fn with_key(&self, key: &[Value]) -> Option<PackedRow> {
        if key.len() != self.b.klen() {
            return None;
        }
        let mut b = self.b;
        b.pack_at(0, key)?;
        Some(PackedRow { b })
    }
}

/// Keeps `row`'s buffer in `slot` if it is the larger one (its values are
/// cleared when the buffer is next used).
#[inline]
fn recycle(slot: &mut Option<Row>, row: Row) {
    if slot.as_ref().map_or(0, Vec::capacity) < row.capacity() {
        *slot = Some(row);
    }
}

/// Hints the CPU to bring `target`'s cache line in; never faults.
#[inline]
fn prefetch_line<T>(target: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; it reads nothing and never faults.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((target as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = target;
}

/// `lens` of a bucket whose entry lives in [`SlotTable::boxed`] (at the
/// index in `words[0]`).
const BOXED: u8 = 0xff;

/// Set in `lens` of a [`PackedRow`] given a value that does not pack
/// (never stored: a row is at most 7 values, so `lens` has the bit free).
const UNFIT: u8 = 0x80;

/// One table entry, one cache line: `lens` is the key length plus 16 times
/// the row length; values `0..klen` are the key, the next `vlen` the row.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Bucket {
    lens: u8,
    tags: [u8; INLINE],
    words: [u64; INLINE],
}

const EMPTY_BUCKET: Bucket = Bucket {
    lens: 0,
    tags: [T_NULL; INLINE],
    words: [0; INLINE],
};

impl Bucket {
    #[inline]
    fn klen(&self) -> usize {
        (self.lens & 15) as usize
    }

    #[inline]
    fn value_range(&self) -> std::ops::Range<usize> {
        let klen = self.klen();
        klen..klen + ((self.lens >> 4) & 7) as usize
    }

    /// Packs `key` and `value`; `None` if they do not fit or hold a string.
    #[inline]
    fn pack(key: &[Value], value: &[Value]) -> Option<Bucket> {
        if key.len() + value.len() > INLINE {
            return None;
        }
        let mut b = EMPTY_BUCKET;
        b.pack_at(0, key)?;
        b.pack_at(key.len(), value)?;
        b.lens = (key.len() | (value.len() << 4)) as u8;
        Some(b)
    }

    /// Packs `value` as the row after the key and returns its encoded
    /// length; `None` (bucket unchanged but for scratch) if it does not fit
    /// or holds a string.
    #[inline]
    fn pack_value(&mut self, value: &[Value]) -> Option<usize> {
        let klen = self.klen();
        if klen + value.len() > INLINE {
            return None;
        }
        let len = self.pack_at(klen, value)?;
        self.lens = (klen | (value.len() << 4)) as u8;
        Some(len)
    }

    /// Packs `values` into slots `at..` (which must fit) and returns their
    /// encoded length; `None`, slots partly written, if one is a string.
    #[inline]
    fn pack_at(&mut self, at: usize, values: &[Value]) -> Option<usize> {
        let mut len = 0;
        for (i, v) in values.iter().enumerate() {
            let (t, w) = pack(v)?;
            (self.tags[at + i], self.words[at + i]) = (t, w);
            len += packed_len(t);
        }
        Some(len)
    }

    fn decode_key(&self) -> Box<[Value]> {
        (0..self.klen())
            .map(|i| unpack(self.tags[i], self.words[i]))
            .collect()
    }
}

/// A key and row that do not pack.
#[derive(Default)]
struct BoxedEntry {
    key: Box<[Value]>,
    value: Row,
}

/// Open addressing with linear probing: `ctrl[i]` is 0 for an empty bucket
/// or a 7-bit tag of the hash (high bit set), read eight at a time;
/// deletion shifts the rest of the probe run back, so there are no
/// tombstones. At most 7/8 full.
#[derive(Default)]
struct SlotTable {
    ctrl: Box<[u8]>,
    buckets: Box<[Bucket]>,
    len: usize,
    boxed: Vec<BoxedEntry>,
    /// Free indices of `boxed`.
    free: Vec<usize>,
}

#[inline]
fn tag_of(hash: u64) -> u8 {
    (hash >> 57) as u8 | 0x80
}

// Control bytes are probed eight at a time, as one word (SWAR).
const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// The high bit of each empty byte of `group` (full bytes have it set).
#[inline]
fn empty_bytes(group: u64) -> u64 {
    !group & HI
}

/// The high bit of each byte of `group` equal to `tag`, and possibly of
/// bytes above a real match (the borrow of the subtraction): callers
/// compare keys anyway. Never of an empty byte.
#[inline]
fn tag_bytes(group: u64, tag: u8) -> u64 {
    let x = group ^ (LO * u64::from(tag));
    x.wrapping_sub(LO) & !x & HI
}

/// The slot of the lowest bit set in a byte mask, counted from `i`.
#[inline]
fn slot_of(i: usize, bytes: u64, mask: usize) -> usize {
    (i + (bytes.trailing_zeros() / 8) as usize) & mask
}

impl SlotTable {
    #[inline]
    fn mask(&self) -> usize {
        self.ctrl.len().wrapping_sub(1)
    }

    #[inline]
    fn key_eq(&self, i: usize, key: &[Value]) -> bool {
        let b = &self.buckets[i];
        if b.lens == BOXED {
            return *self.boxed[b.words[0] as usize].key == *key;
        }
        b.klen() == key.len()
            && key
                .iter()
                .enumerate()
                .all(|(j, v)| packed_eq(b.tags[j], b.words[j], v))
    }

    /// The eight control bytes from slot `i` on (wrapping around the end;
    /// a table has at least eight slots), byte `k` for slot `i + k`.
    #[inline]
    fn group(&self, i: usize) -> u64 {
        match self.ctrl.get(i..i + 8) {
            Some(g) => u64::from_le_bytes(g.try_into().expect("eight bytes")),
            None => {
                let mask = self.mask();
                u64::from_le_bytes(std::array::from_fn(|k| self.ctrl[(i + k) & mask]))
            }
        }
    }

    /// The first empty slot from `i` on.
    #[inline]
    fn first_empty(&self, mut i: usize) -> usize {
        let mask = self.mask();
        loop {
            let empty = empty_bytes(self.group(i));
            if empty != 0 {
                return slot_of(i, empty, mask);
            }
            i = (i + 8) & mask;
        }
    }

    /// The bucket holding `key`: the probe from its home slot runs to the
    /// first empty slot.
    #[inline]
    fn find(&self, hash: u64, key: &[Value]) -> Option<usize> {
        if self.ctrl.is_empty() {
            return None;
        }
        let mask = self.mask();
        let tag = tag_of(hash);
        let mut i = hash as usize & mask;
        loop {
            let g = self.group(i);
            let empty = empty_bytes(g);
            // Slots past the first empty one are not in the probe run.
            let run = if empty == 0 {
                u64::MAX
            } else {
                (empty & empty.wrapping_neg()) - 1
            };
            let mut hits = tag_bytes(g, tag) & run;
            while hits != 0 {
                let j = slot_of(i, hits, mask);
                if self.key_eq(j, key) {
                    return Some(j);
                }
                hits &= hits - 1;
            }
            if empty != 0 {
                return None;
            }
            i = (i + 8) & mask;
        }
    }

    /// Starts fetching the bucket a lookup of `hash` will most likely end
    /// at: the first one whose tag matches (or the empty one that ends the
    /// probe), among the eight from its home slot.
    #[inline]
    fn prefetch_bucket(&self, hash: u64) {
        if self.ctrl.is_empty() {
            return;
        }
        let mask = self.mask();
        let i = hash as usize & mask;
        let g = self.group(i);
        let stops = tag_bytes(g, tag_of(hash)) | empty_bytes(g);
        let j = if stops == 0 {
            (i + 8) & mask
        } else {
            slot_of(i, stops, mask)
        };
        prefetch_line(&self.buckets[j]);
    }

    /// The hash of the key in bucket `i` (equal to [`hash_key`] of any
    /// equal key).
    fn bucket_hash(&self, i: usize) -> u64 {
        let b = &self.buckets[i];
        if b.lens == BOXED {
            return hash_key(&self.boxed[b.words[0] as usize].key);
        }
        let klen = b.klen();
        if klen == 1 && b.tags[0] == T_INT {
            return hash_int(b.words[0] as i64);
        }
        let mut key: [Value; INLINE] = Default::default();
        for (j, k) in key.iter_mut().enumerate().take(klen) {
            *k = unpack(b.tags[j], b.words[j]);
        }
        hash_key(&key[..klen])
    }

    /// Adds an entry for a key known to be absent.
    fn insert_new(&mut self, hash: u64, key: &[Value], value: Row, spare: &mut Option<Row>) {
        let bucket = match Bucket::pack(key, &value) {
            Some(b) => {
                recycle(spare, value);
                b
            }
            None => self.boxed_bucket(key.into(), value),
        };
        self.insert_bucket(hash, bucket);
    }

    /// Adds `bucket`, whose key is known to be absent and hashes to `hash`;
    /// returns where it went.
    fn insert_bucket(&mut self, hash: u64, bucket: Bucket) -> usize {
        if (self.len + 1) * 8 > self.ctrl.len() * 7 {
            self.grow();
        }
        let i = self.first_empty(hash as usize & self.mask());
        self.ctrl[i] = tag_of(hash);
        self.buckets[i] = bucket;
        self.len += 1;
        i
    }

    fn boxed_bucket(&mut self, key: Box<[Value]>, value: Row) -> Bucket {
        let entry = BoxedEntry { key, value };
        let idx = match self.free.pop() {
            Some(idx) => {
                self.boxed[idx] = entry;
                idx
            }
            None => {
                self.boxed.push(entry);
                self.boxed.len() - 1
            }
        };
        let mut b = EMPTY_BUCKET;
        b.lens = BOXED;
        b.words[0] = idx as u64;
        b
    }

    fn grow(&mut self) {
        let cap = (self.ctrl.len() * 2).max(8);
        let old_ctrl = std::mem::replace(&mut self.ctrl, vec![0; cap].into_boxed_slice());
        let old = std::mem::replace(
            &mut self.buckets,
            vec![EMPTY_BUCKET; cap].into_boxed_slice(),
        );
        let mask = cap - 1;
        for (j, c) in old_ctrl.iter().enumerate() {
            if *c == 0 {
                continue;
            }
            let hash = self.hash_of(&old[j]);
            let i = self.first_empty(hash as usize & mask);
            self.ctrl[i] = *c;
            self.buckets[i] = old[j];
        }
    }

    /// [`SlotTable::bucket_hash`] of a bucket not (yet) in the table.
    fn hash_of(&self, b: &Bucket) -> u64 {
        if b.lens != BOXED && b.klen() == 1 && b.tags[0] == T_INT {
            return hash_int(b.words[0] as i64);
        }
        if b.lens == BOXED {
            return hash_key(&self.boxed[b.words[0] as usize].key);
        }
        hash_key(&b.decode_key())
    }

    /// Removes the entry in bucket `i`, shifting later entries of its
    /// probe run back so every entry stays reachable from its home bucket.
    fn remove_at(&mut self, mut i: usize) {
        let b = self.buckets[i];
        if b.lens == BOXED {
            let idx = b.words[0] as usize;
            self.boxed[idx] = BoxedEntry::default();
            self.free.push(idx);
        }
        self.len -= 1;
        let mask = self.mask();
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            if self.ctrl[j] == 0 {
                break;
            }
            let home = self.bucket_hash(j) as usize & mask;
            // Move j into the hole at i unless its home lies in (i, j].
            if j.wrapping_sub(home) & mask >= j.wrapping_sub(i) & mask {
                self.ctrl[i] = self.ctrl[j];
                self.buckets[i] = self.buckets[j];
                i = j;
            }
        }
        self.ctrl[i] = 0;
        self.buckets[i] = EMPTY_BUCKET;
    }

    #[inline]
    fn is_boxed(&self, i: usize) -> bool {
        self.buckets[i].lens == BOXED
    }

    /// Appends the row of packed bucket `i` to `out`; returns its encoded
    /// length.
    #[inline]
    fn decode_value(&self, i: usize, out: &mut Row) -> usize {
        let b = &self.buckets[i];
        let mut len = 0;
        out.extend(b.value_range().map(|j| {
            len += packed_len(b.tags[j]);
            unpack(b.tags[j], b.words[j])
        }));
        len
    }

    /// Stores the row in `slot` (which holds one) as the row of packed
    /// bucket `i`; the row stays in `slot` when it packs. Returns the row's
    /// encoded length.
    #[inline]
    fn store_value(&mut self, i: usize, slot: &mut Option<Row>) -> usize {
        let b = &mut self.buckets[i];
        let row = slot.as_deref().unwrap_or_default();
        if let Some(len) = b.pack_value(row) {
            return len;
        }
        let len = row_len(row);
        let key = b.decode_key();
        self.buckets[i] = self.boxed_bucket(key, slot.take().unwrap_or_default());
        len
    }

    /// The row of boxed bucket `i`, moved out; it must be put back or the
    /// entry removed.
    fn take_boxed_value(&mut self, i: usize) -> Row {
        let idx = self.buckets[i].words[0] as usize;
        std::mem::take(&mut self.boxed[idx].value)
    }

    /// Stores `value` as the row of bucket `i`; its buffer goes to `spare`
    /// when it packs.
    fn set_value(&mut self, i: usize, value: Row, spare: &mut Option<Row>) {
        let b = &mut self.buckets[i];
        if b.lens == BOXED {
            self.boxed[b.words[0] as usize].value = value;
        } else if b.pack_value(&value).is_some() {
            recycle(spare, value);
        } else {
            let key = b.decode_key();
            self.buckets[i] = self.boxed_bucket(key, value);
        }
    }

    fn clone_value(&self, i: usize) -> Row {
        let b = &self.buckets[i];
        if b.lens == BOXED {
            return self.boxed[b.words[0] as usize].value.clone();
        }
        b.value_range()
            .map(|j| unpack(b.tags[j], b.words[j]))
            .collect()
    }

    /// Every key and row, in bucket order.
    fn all(&self) -> Vec<(Row, Row)> {
        let mut out = Vec::with_capacity(self.len);
        for (i, &c) in self.ctrl.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let b = &self.buckets[i];
            let key = if b.lens == BOXED {
                self.boxed[b.words[0] as usize].key.to_vec()
            } else {
                b.decode_key().into_vec()
            };
            out.push((key, self.clone_value(i)));
        }
        out
    }

    /// The encoded length of the row of bucket `i`.
    fn value_len(&self, i: usize) -> usize {
        let b = &self.buckets[i];
        if b.lens == BOXED {
            return row_len(&self.boxed[b.words[0] as usize].value);
        }
        b.value_range().map(|j| packed_len(b.tags[j])).sum()
    }
}

pub struct HeapValueState {
    name: String,
    table: SlotTable,
    /// The slot a `modify` closure gets for a packed row: the row is
    /// decoded into it and packed back from it, so its buffer never moves.
    slot: Option<Row>,
    pub metrics: StateMetrics,
}

/// The table goes to [`super::heap_parking`] (when parking is on).
impl Drop for HeapValueState {
    fn drop(&mut self) {
        super::heap_parking::park(std::mem::take(&mut self.table));
    }
}

impl HeapValueState {
    pub fn new(name: &str) -> HeapValueState {
        HeapValueState {
            name: name.to_string(),
            table: SlotTable::default(),
            slot: None,
            metrics: StateMetrics::default(),
        }
    }

    pub fn metrics(&self) -> StateMetrics {
        self.metrics
    }

    pub fn report(&self) -> StateReport {
        StateReport {
            name: self.name.clone(),
            column_family: None,
            metrics: self.metrics,
        }
    }

    /// Starts fetching the memory a later access of `key` touches, so that
    /// an operator can overlap the cache misses of upcoming records: call it
    /// for each record some records ahead of processing it (8 to 16 is
    /// good). Reads the key's control bytes, then prefetches the bucket its
    /// lookup will end at. Not an access: counts nothing.
    #[inline]
    pub fn prefetch(&self, key: &[Value]) {
        self.table.prefetch_bucket(hash_key(key));
    }

    /// Every key and row (a checkpoint's copy; not an access).
    pub fn all_entries(&self) -> Vec<(Row, Row)> {
        self.table.all()
    }

    pub fn get(&mut self, key: &[Value]) -> StateResult<Option<Row>> {
        self.metrics.reads += 1;
        Ok(self
            .table
            .find(hash_key(key), key)
            .map(|i| self.table.clone_value(i)))
    }

    pub fn put(&mut self, key: &[Value], value: Row) -> StateResult<()> {
        self.metrics.writes += 1;
        let new_len = row_len(&value) as i64;
        let hash = hash_key(key);
        match self.table.find(hash, key) {
            Some(i) => {
                self.metrics.logical_bytes += new_len - self.table.value_len(i) as i64;
                self.table.set_value(i, value, &mut self.slot);
            }
            None => {
                self.metrics.entries += 1;
                self.metrics.logical_bytes += row_len(key) as i64 + new_len;
                self.table.insert_new(hash, key, value, &mut self.slot);
            }
        }
        Ok(())
    }

    pub fn delete(&mut self, key: &[Value]) -> StateResult<()> {
        self.metrics.deletes += 1;
        if let Some(i) = self.table.find(hash_key(key), key) {
            self.metrics.entries -= 1;
            self.metrics.logical_bytes -= (row_len(key) + self.table.value_len(i)) as i64;
            self.table.remove_at(i);
        }
        Ok(())
    }

    /// [`HeapValueState::modify`] of a packed row, without decoding it:
    /// `f` gets the key's row in its bucket, or a new bucket made from
    /// `init` for an absent key (with `true`), and either returns `Some`
    /// with a row that fits (counted as `modify` counts a read and a write)
    /// or declines with `None`, leaving the row exactly as it found it
    /// (nothing is counted; a new bucket is removed again). Also declines,
    /// without calling `f`, for a key or row that does not pack. A closure
    /// that may delete the row declines instead and leaves that to `modify`.
    #[inline]
    pub fn modify_packed<R>(
        &mut self,
        key: &[Value],
        init: &PackedTemplate,
        f: impl FnOnce(&mut PackedRow, bool) -> Option<R>,
    ) -> Option<R> {
        let hash = hash_key(key);
        let (i, first) = match self.table.find(hash, key) {
            Some(i) if !self.table.is_boxed(i) => (i, false),
            Some(_) => return None,
            None => {
                let row = init.with_key(key)?;
                (self.table.insert_bucket(hash, row.b), true)
            }
        };
        let b = &mut self.table.buckets[i];
        let (old_lens, old_tags) = (b.lens, b.tags);
        let Some(r) = f(PackedRow::in_bucket(b), first) else {
            if first {
                self.table.remove_at(i);
            }
            return None;
        };
        debug_assert!(
            PackedRow::in_bucket(b).fits(),
            "a row that does not fit was kept"
        );
        let m = &mut self.metrics;
        m.reads += 1;
        m.writes += 1;
        if first {
            m.entries += 1;
            m.logical_bytes += (row_len(key) + encoded_len(b)) as i64;
        } else if (old_lens, old_tags) != (b.lens, b.tags) {
            // Lengths follow the tags (lens and tags are one word).
            let old = Bucket {
                lens: old_lens,
                tags: old_tags,
                words: [0; INLINE],
            };
            m.logical_bytes += encoded_len(b) as i64 - encoded_len(&old) as i64;
        }
        Some(r)
    }

    #[inline]
    pub fn modify<R>(
        &mut self,
        key: &[Value],
        f: impl FnOnce(&mut Option<Row>) -> R,
    ) -> StateResult<R> {
        self.metrics.reads += 1;
        let m = &mut self.metrics;
        let hash = hash_key(key);
        Ok(match self.table.find(hash, key) {
            Some(i) if !self.table.is_boxed(i) => {
                let row = self.slot.get_or_insert_with(Vec::new);
                row.clear();
                let old_len = self.table.decode_value(i, row) as i64;
                let r = f(&mut self.slot);
                match &self.slot {
                    Some(_) => {
                        m.writes += 1;
                        m.logical_bytes +=
                            self.table.store_value(i, &mut self.slot) as i64 - old_len;
                    }
                    None => {
                        m.deletes += 1;
                        m.entries -= 1;
                        m.logical_bytes -= row_len(key) as i64 + old_len;
                        self.table.remove_at(i);
                    }
                }
                r
            }
            Some(i) => {
                let row = self.table.take_boxed_value(i);
                let old_len = row_len(&row) as i64;
                let mut slot = Some(row);
                let r = f(&mut slot);
                match slot {
                    Some(new) => {
                        m.writes += 1;
                        m.logical_bytes += row_len(&new) as i64 - old_len;
                        self.table.set_value(i, new, &mut self.slot);
                    }
                    None => {
                        m.deletes += 1;
                        m.entries -= 1;
                        m.logical_bytes -= row_len(key) as i64 + old_len;
                        self.table.remove_at(i);
                    }
                }
                r
            }
            None => {
                let mut slot = None;
                let r = f(&mut slot);
                if let Some(new) = slot {
                    m.writes += 1;
                    m.entries += 1;
                    m.logical_bytes += (row_len(key) + row_len(&new)) as i64;
                    self.table.insert_new(hash, key, new, &mut self.slot);
                }
                r
            }
        })
    }
}

/// One key's entries of a [`HeapMapState`]. Most keys of a join's state
/// hold a single row (a key's only row replaced, a row and its NULL-padded
/// form taking turns), so one pair is kept without a table of its own: no
/// table allocated and freed per key. A key that ever holds two gets a
/// table and keeps it while it has entries, so iteration is the table's
/// order, as it was before any key stayed single.
enum Entries {
    One(Row, Row),
    Many(Map<Row, Row>),
}

impl Entries {
    #[inline]
    fn get(&self, ukey: &[Value]) -> Option<&Row> {
        match self {
            Entries::One(k, v) => (k[..] == *ukey).then_some(v),
            Entries::Many(m) => m.get(ukey),
        }
    }

    #[inline]
    fn get_mut(&mut self, ukey: &[Value]) -> Option<&mut Row> {
        match self {
            Entries::One(k, v) => (k[..] == *ukey).then_some(v),
            Entries::Many(m) => m.get_mut(ukey),
        }
    }

    /// Adds an entry for `ukey`, which has none.
    fn insert(&mut self, ukey: Row, value: Row) {
        match self {
            Entries::Many(m) => {
                m.insert(ukey, value);
            }
            Entries::One(..) => {
                let mut m = new_map();
                if let Entries::One(k, v) = std::mem::replace(self, Entries::Many(new_map())) {
                    m.insert(k, v);
                }
                m.insert(ukey, value);
                *self = Entries::Many(m);
            }
        }
    }

    /// Removes `ukey`'s entry; a single entry leaves an empty table
    /// (which allocates nothing), so [`Entries::is_empty`] then holds.
    #[inline]
    fn remove(&mut self, ukey: &[Value]) -> Option<Row> {
        match self {
            Entries::One(k, _) if k[..] == *ukey => {
                match std::mem::replace(self, Entries::Many(new_map())) {
                    Entries::One(_, v) => Some(v),
                    Entries::Many(_) => None,
                }
            }
            Entries::One(..) => None,
            Entries::Many(m) => m.remove(ukey),
        }
    }

    #[inline]
    fn is_empty(&self) -> bool {
        matches!(self, Entries::Many(m) if m.is_empty())
    }

    #[inline]
    fn len(&self) -> usize {
        match self {
            Entries::One(..) => 1,
            Entries::Many(m) => m.len(),
        }
    }

    #[inline]
    fn for_each(&self, mut f: impl FnMut(&[Value], &[Value])) {
        match self {
            Entries::One(k, v) => f(k, v),
            Entries::Many(m) => {
                for (k, v) in m {
                    f(k, v);
                }
            }
        }
    }
}

/// The user key of a map access: lent by the caller, or given up (kept by
/// an entry the access adds, copied by nothing).
enum UserKey<'a> {
    Borrowed(&'a [Value]),
    Owned(Row),
}

impl UserKey<'_> {
    #[inline]
    fn as_slice(&self) -> &[Value] {
        match self {
            UserKey::Borrowed(k) => k,
            UserKey::Owned(k) => k,
        }
    }

    #[inline]
    fn into_row(self) -> Row {
        match self {
            UserKey::Borrowed(k) => k.to_vec(),
            UserKey::Owned(k) => k,
        }
    }
}

/// A map state's key, its values inline up to one (a join key is mostly
/// one column): no allocation per key, and a probe compares the key
/// without following a pointer to it.
type KeyRow = smallvec::SmallVec<[Value; 1]>;

pub struct HeapMapState {
    name: String,
    map: Map<KeyRow, Entries>,
    pub metrics: StateMetrics,
}

/// The table goes to [`super::heap_parking`] (when parking is on).
impl Drop for HeapMapState {
    fn drop(&mut self) {
        super::heap_parking::park(std::mem::replace(&mut self.map, new_map()));
    }
}

impl HeapMapState {
    pub fn new(name: &str) -> HeapMapState {
        HeapMapState {
            name: name.to_string(),
            map: new_map(),
            metrics: StateMetrics::default(),
        }
    }

    pub fn metrics(&self) -> StateMetrics {
        self.metrics
    }

    pub fn report(&self) -> StateReport {
        StateReport {
            name: self.name.clone(),
            column_family: None,
            metrics: self.metrics,
        }
    }

    /// Every key, user key and row (a checkpoint's copy; not an access).
    pub fn all_entries(&self) -> Vec<(Row, Row, Row)> {
        let mut out = Vec::new();
        for (k, inner) in &self.map {
            inner.for_each(|u, v| out.push((k.to_vec(), u.to_vec(), v.to_vec())));
        }
        out
    }

    pub fn get(&mut self, key: &[Value], ukey: &[Value]) -> StateResult<Option<Row>> {
        self.metrics.reads += 1;
        Ok(self.map.get(key).and_then(|m| m.get(ukey)).cloned())
    }

    pub fn put(&mut self, key: &[Value], ukey: &[Value], value: Row) -> StateResult<()> {
        self.modify_counted(key, UserKey::Borrowed(ukey), false, |slot| {
            *slot = Some(value)
        })
    }

    pub fn delete(&mut self, key: &[Value], ukey: &[Value]) -> StateResult<()> {
        self.metrics.deletes += 1;
        if let Some(inner) = self.map.get_mut(key) {
            if let Some(old) = inner.remove(ukey) {
                self.metrics.entries -= 1;
                self.metrics.logical_bytes -= (row_len(key) + row_len(ukey) + row_len(&old)) as i64;
            }
            if inner.is_empty() {
                self.map.remove(key);
            }
        }
        Ok(())
    }

    pub fn modify<R>(
        &mut self,
        key: &[Value],
        ukey: &[Value],
        f: impl FnOnce(&mut Option<Row>) -> R,
    ) -> StateResult<R> {
        self.modify_counted(key, UserKey::Borrowed(ukey), true, f)
    }

    /// [`HeapMapState::modify`] with the user key given up: an entry it
    /// adds keeps `ukey` instead of a copy (a join side without a unique
    /// key stores each row under the row itself).
    pub fn modify_owned<R>(
        &mut self,
        key: &[Value],
        ukey: Row,
        f: impl FnOnce(&mut Option<Row>) -> R,
    ) -> StateResult<R> {
        self.modify_counted(key, UserKey::Owned(ukey), true, f)
    }

    /// Shared by `put` (no read counted) and `modify` (one read).
    fn modify_counted<R>(
        &mut self,
        key: &[Value],
        ukey: UserKey<'_>,
        count_read: bool,
        f: impl FnOnce(&mut Option<Row>) -> R,
    ) -> StateResult<R> {
        let m = &mut self.metrics;
        if count_read {
            m.reads += 1;
        }
        let prefix = |ukey: &[Value]| row_len(key) + row_len(ukey);
        // One lookup of `key` serves the read, the insert of a new key and
        // the removal of an emptied one.
        let mut entry = match self.map.entry_ref(key) {
            EntryRef::Occupied(e) => e,
            EntryRef::Vacant(e) => {
                // A new key: its first entry needs no table.
                let mut slot = None;
                let r = f(&mut slot);
                if let Some(new) = slot {
                    count_write(m, prefix(ukey.as_slice()), row_len(&new), None);
                    e.insert(Entries::One(ukey.into_row(), new));
                }
                return Ok(r);
            }
        };
        let inner = entry.get_mut();
        let r = match inner.get_mut(ukey.as_slice()) {
            Some(v) => {
                let old_len = row_len(v);
                let mut slot = Some(std::mem::take(v));
                let r = f(&mut slot);
                match slot {
                    Some(new) => {
                        m.writes += 1;
                        m.logical_bytes += row_len(&new) as i64 - old_len as i64;
                        *v = new;
                    }
                    None => {
                        count_delete(m, prefix(ukey.as_slice()), Some(old_len));
                        if inner.len() == 1 {
                            // Its only entry: the key goes with it.
                            entry.remove();
                            return Ok(r);
                        }
                        inner.remove(ukey.as_slice());
                    }
                }
                r
            }
            None => {
                let mut slot = None;
                let r = f(&mut slot);
                if let Some(new) = slot {
                    count_write(m, prefix(ukey.as_slice()), row_len(&new), None);
                    inner.insert(ukey.into_row(), new);
                }
                r
            }
        };
        if inner.is_empty() {
            entry.remove();
        }
        Ok(r)
    }

    pub fn for_each(
        &mut self,
        key: &[Value],
        f: impl FnMut(&[Value], &[Value]),
    ) -> StateResult<()> {
        match self.map.get(key) {
            Some(inner) => {
                self.metrics.reads += inner.len().max(1) as u64;
                inner.for_each(f);
            }
            None => self.metrics.reads += 1,
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(xs: &[i64]) -> Row {
        xs.iter().map(|&x| Value::Int(x)).collect()
    }

    #[test]
    fn a_bucket_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Bucket>(), 64);
        assert_eq!(std::mem::align_of::<Bucket>(), 64);
    }

    #[test]
    fn stored_hash_matches_lookup_hash() {
        let keys: Vec<Row> = vec![
            vec![],
            ints(&[7]),
            ints(&[-1, 2]),
            vec![Value::Double(-0.0)],
            vec![Value::Null, Value::Bool(true)],
            vec![Value::str("a"), Value::Int(1)],
            ints(&[1, 2, 3, 4, 5, 6, 7]),
        ];
        let mut t = SlotTable::default();
        let mut spare = None;
        for k in &keys {
            t.insert_new(hash_key(k), k, ints(&[1]), &mut spare);
        }
        for k in &keys {
            let i = t.find(hash_key(k), k).unwrap();
            assert_eq!(t.bucket_hash(i), hash_key(k), "{k:?}");
        }
        let zero = [Value::Double(0.0)];
        let i = t.find(hash_key(&zero), &zero).unwrap();
        assert_eq!(t.clone_value(i), ints(&[1]));
        assert!(t
            .find(hash_key(&[Value::Int(0)]), &[Value::Int(0)])
            .is_none());
    }

    #[test]
    fn an_owned_user_key_counts_as_a_lent_one() {
        let (mut lent, mut owned) = (HeapMapState::new("a"), HeapMapState::new("b"));
        let key = ints(&[1]);
        let rows = [ints(&[1, 10]), ints(&[1, 20]), ints(&[1, 10])];
        let bump = |slot: &mut Option<Row>| {
            let n = slot.as_ref().map_or(0, |v| v[0].as_int().unwrap());
            *slot = Some(ints(&[n + 1]));
        };
        for r in &rows {
            lent.modify(&key, r, bump).unwrap();
            owned.modify_owned(&key, r.clone(), bump).unwrap();
        }
        // Retract both copies of one row: its entry goes, the key stays.
        for _ in 0..2 {
            for s in [&mut lent, &mut owned] {
                s.modify(&key, &rows[0], |slot| {
                    let n = slot.as_ref().unwrap()[0].as_int().unwrap() - 1;
                    *slot = (n > 0).then(|| ints(&[n]));
                })
                .unwrap();
            }
        }
        assert_eq!(lent.metrics(), owned.metrics());
        assert_eq!(owned.metrics().entries, 1);
        assert_eq!(lent.all_entries(), owned.all_entries());
        // The last entry takes its key along.
        owned.delete(&key, &rows[1]).unwrap();
        assert!(owned.map.is_empty());
    }

    #[test]
    fn rows_move_between_packed_and_boxed() {
        let mut s = HeapValueState::new("v");
        let k = ints(&[3]);
        let row = vec![Value::Double(-0.0), Value::Null, Value::Bool(false)];
        s.put(&k, row.clone()).unwrap();
        let got = s.get(&k).unwrap().unwrap();
        assert_eq!(got, row);
        assert_eq!(got[0].as_f64().unwrap().to_bits(), (-0.0f64).to_bits());
        // A string makes the entry boxed.
        s.modify(&k, |r| r.as_mut().unwrap().push(Value::str("x")))
            .unwrap();
        assert_eq!(s.get(&k).unwrap().unwrap().len(), 4);
        s.put(&k, ints(&[1, 2, 3, 4, 5, 6, 7])).unwrap();
        s.put(&k, ints(&[9])).unwrap();
        assert_eq!(s.get(&k).unwrap(), Some(ints(&[9])));
        assert_eq!(s.metrics.logical_bytes, 9 + 9);
        s.prefetch(&k);
        s.prefetch(&[Value::str("absent")]);
    }

    #[test]
    fn a_packed_row_is_updated_in_its_bucket_and_a_declined_new_key_leaves_nothing() {
        let mut s = HeapValueState::new("v");
        let init = PackedTemplate::new(1, &ints(&[0, 0])).unwrap();
        let k = ints(&[5]);
        // A new key declined: no entry, nothing counted.
        assert_eq!(s.modify_packed(&k, &init, |_, _| None::<()>), None);
        assert_eq!(s.get(&k).unwrap(), None);
        assert_eq!((s.metrics.entries, s.metrics.writes), (0, 0));
        // Kept: written in place, counted as one read and write.
        let first = s.modify_packed(&k, &init, |row, first| {
            row.set_int(0, 1);
            row.set_int(1, 10);
            Some(first)
        });
        assert_eq!(first, Some(true));
        assert_eq!(s.get(&k).unwrap(), Some(ints(&[1, 10])));
        assert_eq!(s.metrics.logical_bytes, 9 + 18);
        // A double changes no length; an existing key is not first.
        let again = s.modify_packed(&k, &init, |row, first| {
            row.set(1, &Value::Double(2.5));
            Some(first)
        });
        assert_eq!(again, Some(false));
        assert_eq!(
            s.get(&k).unwrap(),
            Some(vec![Value::Int(1), Value::Double(2.5)])
        );
        assert_eq!((s.metrics.entries, s.metrics.logical_bytes), (1, 9 + 18));
    }

    #[test]
    fn matches_a_reference_map_under_churn() {
        let key = |i: i64| match i % 4 {
            0 => vec![Value::str(&i.to_string())],
            1 => ints(&[i, i % 7]),
            2 => vec![Value::Double(i as f64)],
            _ => ints(&[i]),
        };
        let mut s = HeapValueState::new("v");
        let mut reference: std::collections::HashMap<i64, Row> = Default::default();
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        for step in 0..60_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let i = (x % 3000) as i64;
            let k = key(i);
            s.prefetch(&k);
            match x >> 60 {
                0..=2 => {
                    s.delete(&k).unwrap();
                    reference.remove(&i);
                }
                3..=5 => {
                    let row = if step % 5 == 0 {
                        vec![Value::str("s"), Value::Int(step)]
                    } else {
                        ints(&[step, i])
                    };
                    s.put(&k, row.clone()).unwrap();
                    reference.insert(i, row);
                }
                _ => {
                    s.modify(&k, |r| match r {
                        Some(row) if row.len() > 5 => *r = None,
                        Some(row) => row.push(Value::Int(step)),
                        None => *r = Some(ints(&[step])),
                    })
                    .unwrap();
                    match reference.get_mut(&i) {
                        Some(row) if row.len() > 5 => {
                            reference.remove(&i);
                        }
                        Some(row) => row.push(Value::Int(step)),
                        None => {
                            reference.insert(i, ints(&[step]));
                        }
                    }
                }
            }
            if step % 10_000 == 0 {
                for j in 0..3000 {
                    assert_eq!(s.get(&key(j)).unwrap().as_ref(), reference.get(&j));
                }
            }
        }
        assert_eq!(s.metrics.entries, reference.len() as i64);
        let bytes: usize = reference
            .iter()
            .map(|(i, r)| row_len(&key(*i)) + row_len(r))
            .sum();
        assert_eq!(s.metrics.logical_bytes, bytes as i64);
        assert_eq!(s.table.len, reference.len());
        let live_boxed = s.table.boxed.len() - s.table.free.len();
        assert!(live_boxed <= reference.len());
    }
    #[test]
    fn a_map_state_matches_a_reference_map_under_churn() {
        // Few user keys per key, so keys move between a single entry and a
        // table of their own, and values change length.
        let mut s = HeapMapState::new("m");
        let mut reference: std::collections::BTreeMap<(i64, i64), Row> = Default::default();
        let ukey_of = |u: i64| vec![Value::str(&format!("u{u}")), Value::Int(u)];
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        for step in 0..40_000_i64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let (k, u) = ((x % 500) as i64, ((x >> 20) % 3) as i64);
            let (key, ukey) = (ints(&[k]), ukey_of(u));
            match x >> 61 {
                0 => {
                    s.delete(&key, &ukey).unwrap();
                    reference.remove(&(k, u));
                }
                1 => {
                    s.put(&key, &ukey, ints(&[step])).unwrap();
                    reference.insert((k, u), ints(&[step]));
                }
                2 | 3 => {
                    s.modify_owned(&key, ukey.clone(), |r| match r {
                        Some(row) if row.len() > 3 => *r = None,
                        Some(row) => row.push(Value::Int(step)),
                        None => *r = Some(ints(&[step])),
                    })
                    .unwrap();
                    match reference.get_mut(&(k, u)) {
                        Some(row) if row.len() > 3 => {
                            reference.remove(&(k, u));
                        }
                        Some(row) => row.push(Value::Int(step)),
                        None => {
                            reference.insert((k, u), ints(&[step]));
                        }
                    }
                }
                _ => {
                    let got = s.modify(&key, &ukey, |r| r.clone()).unwrap();
                    assert_eq!(got.as_ref(), reference.get(&(k, u)));
                }
            }
        }
        let mut all = s.all_entries();
        all.sort_by_key(|(k, u, _)| (k[0].as_int(), u[1].as_int()));
        let expected: Vec<(Row, Row, Row)> = reference
            .iter()
            .map(|(&(k, u), v)| (ints(&[k]), ukey_of(u), v.clone()))
            .collect();
        assert_eq!(all, expected);
        assert_eq!(s.metrics.entries, reference.len() as i64);
        let bytes: usize = expected
            .iter()
            .map(|(k, u, v)| row_len(k) + row_len(u) + row_len(v))
            .sum();
        assert_eq!(s.metrics.logical_bytes, bytes as i64);
        for k in 0..500 {
            let mut n = 0;
            s.for_each(&ints(&[k]), |_, _| n += 1).unwrap();
            assert_eq!(n, reference.range((k, 0)..(k + 1, 0)).count());
        }
    }
}
