//! A small least-recently-used map with a fixed number of entries.
//!
//! Entries live in a slab (`Vec`) linked into a recency list by index; a
//! `hashbrown::HashTable` of slab indices finds a key without storing it
//! twice. `get` and `put` are O(1); a `put` into a full cache reuses the
//! slot of the least recently used entry. Hashing uses `foldhash` under a
//! fixed seed, so behaviour is the same on every run.

use hashbrown::HashTable;
use std::borrow::Borrow;
use std::hash::{BuildHasher, Hash};

type FixedState = foldhash::fast::FixedState;

const NIL: usize = usize::MAX;
const SEED: u64 = 0x1eed_ca5e;

struct Node<K, V> {
    key: K,
    value: V,
    /// Towards the most recently used end.
    prev: usize,
    /// Towards the least recently used end.
    next: usize,
}

/// A map holding at most `capacity` entries, evicting the least recently
/// used one (a `get` or `put` counts as a use).
pub struct LruCache<K, V> {
    table: HashTable<usize>,
    nodes: Vec<Node<K, V>>,
    /// Most recently used.
    head: usize,
    /// Least recently used.
    tail: usize,
    capacity: usize,
    evictions: u64,
    hasher: FixedState,
}

impl<K: Hash + Eq, V> LruCache<K, V> {
    /// A cache of at most `capacity` entries; a capacity of 0 caches nothing.
    pub fn new(capacity: usize) -> LruCache<K, V> {
        LruCache {
            table: HashTable::new(),
            nodes: Vec::new(),
            head: NIL,
            tail: NIL,
            capacity,
            evictions: 0,
            hasher: FixedState::with_seed(SEED),
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Entries evicted to make room so far.
    pub fn evictions(&self) -> u64 {
        self.evictions
    }

    /// Every cached value, in no particular order.
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.nodes.iter().map(|n| &n.value)
    }

    fn find<Q>(&self, key: &Q) -> Option<usize>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let nodes = &self.nodes;
        self.table
            .find(self.hasher.hash_one(key), |&i| nodes[i].key.borrow() == key)
            .copied()
    }

    /// The value under `key`, marked as most recently used.
    pub fn get<Q>(&mut self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let i = self.find(key)?;
        self.touch(i);
        Some(&self.nodes[i].value)
    }

    /// The value under `key` without changing its recency.
    pub fn peek<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.find(key).map(|i| &self.nodes[i].value)
    }

    /// Inserts or replaces `key`'s value, evicting the least recently used
    /// entry when full.
    pub fn put(&mut self, key: K, value: V) {
        if let Some(i) = self.find(&key) {
            self.nodes[i].value = value;
            self.touch(i);
            return;
        }
        if self.capacity == 0 {
            return;
        }
        let hash = self.hasher.hash_one(&key);
        let i = if self.nodes.len() < self.capacity {
            self.nodes.push(Node {
                key,
                value,
                prev: NIL,
                next: NIL,
            });
            self.nodes.len() - 1
        } else {
            let i = self.tail;
            let old_hash = self.hasher.hash_one(&self.nodes[i].key);
            if let Ok(entry) = self.table.find_entry(old_hash, |&j| j == i) {
                entry.remove();
            }
            self.unlink(i);
            self.evictions += 1;
            self.nodes[i].key = key;
            self.nodes[i].value = value;
            i
        };
        self.push_front(i);
        let (nodes, hasher) = (&self.nodes, &self.hasher);
        self.table
            .insert_unique(hash, i, |&j| hasher.hash_one(&nodes[j].key));
    }

    /// Drops every entry.
    pub fn clear(&mut self) {
        self.table.clear();
        self.nodes.clear();
        self.head = NIL;
        self.tail = NIL;
    }

    fn touch(&mut self, i: usize) {
        if self.head != i {
            self.unlink(i);
            self.push_front(i);
        }
    }

    fn unlink(&mut self, i: usize) {
        let (prev, next) = (self.nodes[i].prev, self.nodes[i].next);
        if prev == NIL {
            self.head = next;
        } else {
            self.nodes[prev].next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.nodes[next].prev = prev;
        }
        self.nodes[i].prev = NIL;
        self.nodes[i].next = NIL;
    }

    fn push_front(&mut self, i: usize) {
        self.nodes[i].prev = NIL;
        self.nodes[i].next = self.head;
        if self.head != NIL {
            self.nodes[self.head].prev = i;
        }
        self.head = i;
        if self.tail == NIL {
            self.tail = i;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::LruCache;

    #[test]
    fn evicts_least_recently_used() {
        let mut c: LruCache<u32, &str> = LruCache::new(2);
        c.put(1, "a");
        c.put(2, "b");
        assert_eq!(c.get(&1), Some(&"a")); // 2 is now the oldest
        c.put(3, "c");
        assert_eq!(c.peek(&2), None);
        assert_eq!(c.peek(&1), Some(&"a"));
        assert_eq!(c.peek(&3), Some(&"c"));
        assert_eq!((c.len(), c.evictions()), (2, 1));
        c.put(1, "a2"); // replace, no eviction
        c.put(4, "d"); // evicts 3
        assert_eq!(c.peek(&3), None);
        assert_eq!(c.peek(&1), Some(&"a2"));
        assert_eq!(c.evictions(), 2);
    }

    #[test]
    fn capacity_one_and_zero() {
        let mut c: LruCache<u32, u32> = LruCache::new(1);
        for k in 0..10 {
            c.put(k, k * 10);
            assert_eq!(c.get(&k), Some(&(k * 10)));
            assert_eq!(c.len(), 1);
        }
        let mut z: LruCache<u32, u32> = LruCache::new(0);
        z.put(1, 1);
        assert!(z.is_empty() && z.get(&1).is_none());
    }

    #[test]
    fn many_keys_stay_consistent() {
        let mut c: LruCache<Vec<i64>, i64> = LruCache::new(7);
        for k in 0..1000i64 {
            c.put(vec![k % 13], k);
            let got = c.get(&[k % 13][..]).copied();
            assert_eq!(got, Some(k));
        }
        assert_eq!(c.len(), 7);
        // The 7 most recently used keys are the last 7 distinct ones.
        for k in 993..1000i64 {
            assert!(c.peek(&[k % 13][..]).is_some());
        }
    }
}
