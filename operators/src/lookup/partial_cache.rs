//! [`PartialCache`]: the lookup join's cache of recent lookups, Flink's
//! `lookup.cache = 'PARTIAL'` (its `DefaultLookupCache`): at most
//! `max_rows` keys, the least recently used evicted first, each key with
//! every row its lookup returned. A key that found nothing is cached too
//! unless `cache_missing_key` is off. Entries expire a given time after
//! they were written or last read; time is the probe record's processing
//! time (the lab's clock, deterministic under `lab.clock=deterministic`).

use super::lru::LruCache;
use crate::value::{Row, Value};
use std::cell::Cell;

/// The `lookup.partial-cache.*` options of a lookup table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PartialCacheOptions {
    /// Keys kept at most (`lookup.partial-cache.max-rows`).
    pub max_rows: usize,
    /// `lookup.partial-cache.expire-after-write`, in milliseconds.
    pub expire_after_write_ms: Option<i64>,
    /// `lookup.partial-cache.expire-after-access`, in milliseconds.
    pub expire_after_access_ms: Option<i64>,
    /// `lookup.partial-cache.cache-missing-key`.
    pub cache_missing_key: bool,
}

struct Entry {
    rows: Vec<Row>,
    written: i64,
    accessed: Cell<i64>,
}

pub struct PartialCache {
    options: PartialCacheOptions,
    lru: LruCache<Vec<Value>, Entry>,
}

impl PartialCache {
    pub fn new(options: PartialCacheOptions) -> PartialCache {
        PartialCache {
            options,
            lru: LruCache::new(options.max_rows),
        }
    }

    /// The cached rows of `key` at time `now`, if cached and not expired.
    pub fn get(&mut self, key: &[Value], now: i64) -> Option<&[Row]> {
        let o = self.options;
        let e = self.lru.get(key)?;
        let expired = |after: Option<i64>, since: i64| after.is_some_and(|ms| now - since >= ms);
        if expired(o.expire_after_write_ms, e.written)
            || expired(o.expire_after_access_ms, e.accessed.get())
        {
            return None;
        }
        e.accessed.set(now);
        Some(&e.rows)
    }

    /// Caches what a lookup of `key` returned at time `now`.
    pub fn put(&mut self, key: Vec<Value>, rows: &[Row], now: i64) {
        if rows.is_empty() && !self.options.cache_missing_key {
            return;
        }
        self.lru.put(
            key,
            Entry {
                rows: rows.to_vec(),
                written: now,
                accessed: Cell::new(now),
            },
        );
    }

    /// Keys cached now.
    pub fn len(&self) -> usize {
        self.lru.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lru.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(max_rows: usize) -> PartialCacheOptions {
        PartialCacheOptions {
            max_rows,
            expire_after_write_ms: None,
            expire_after_access_ms: None,
            cache_missing_key: true,
        }
    }

    fn key(i: i64) -> Vec<Value> {
        vec![Value::Int(i)]
    }

    #[test]
    fn evicts_the_least_recently_used_key() {
        let mut c = PartialCache::new(options(2));
        c.put(key(1), &[vec![Value::Int(10)]], 0);
        c.put(key(2), &[], 0);
        assert!(c.get(&key(1), 0).is_some());
        c.put(key(3), &[], 0);
        assert!(c.get(&key(2), 0).is_none());
        assert_eq!(c.get(&key(1), 0).map(<[Row]>::len), Some(1));
        assert_eq!(c.get(&key(3), 0).map(<[Row]>::len), Some(0));
    }

    #[test]
    fn missing_keys_are_cached_only_when_asked() {
        let mut c = PartialCache::new(PartialCacheOptions {
            cache_missing_key: false,
            ..options(4)
        });
        c.put(key(1), &[], 0);
        assert!(c.get(&key(1), 0).is_none());
        assert!(c.is_empty());
    }

    #[test]
    fn entries_expire_after_write_and_after_access() {
        let mut c = PartialCache::new(PartialCacheOptions {
            expire_after_write_ms: Some(100),
            ..options(4)
        });
        c.put(key(1), &[], 0);
        assert!(c.get(&key(1), 99).is_some());
        assert!(c.get(&key(1), 100).is_none());
        let mut c = PartialCache::new(PartialCacheOptions {
            expire_after_access_ms: Some(10),
            ..options(4)
        });
        c.put(key(1), &[], 0);
        assert!(c.get(&key(1), 9).is_some());
        assert!(c.get(&key(1), 18).is_some());
        assert!(c.get(&key(1), 28).is_none());
    }
}
