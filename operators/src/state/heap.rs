//! The heap backend: `hashbrown` maps of native rows, no serialisation.
//!
//! Maps use a fixed-seed hasher, so iteration order (and so the order of
//! emitted rows that depends on it) is the same on every run.

use super::codec::row_len;
use super::{StateMetrics, StateReport, StateResult};
use crate::value::{Row, Value};

pub type FixedState = foldhash::fast::FixedState;
pub type Map<K, V> = hashbrown::HashMap<K, V, FixedState>;

pub fn new_map<K, V>() -> Map<K, V> {
    Map::with_hasher(FixedState::with_seed(0x5eed))
}

pub struct HeapValueState {
    name: String,
    map: Map<Row, Row>,
    pub metrics: StateMetrics,
}

impl HeapValueState {
    pub fn new(name: &str) -> HeapValueState {
        HeapValueState {
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

    pub fn get(&mut self, key: &[Value]) -> StateResult<Option<Row>> {
        self.metrics.reads += 1;
        Ok(self.map.get(key).cloned())
    }

    pub fn put(&mut self, key: &[Value], value: Row) -> StateResult<()> {
        self.metrics.writes += 1;
        let new_len = row_len(&value) as i64;
        match self.map.get_mut(key) {
            Some(old) => {
                self.metrics.logical_bytes += new_len - row_len(old) as i64;
                *old = value;
            }
            None => {
                self.metrics.entries += 1;
                self.metrics.logical_bytes += (row_len(key) as i64) + new_len;
                self.map.insert(key.to_vec(), value);
            }
        }
        Ok(())
    }

    pub fn delete(&mut self, key: &[Value]) -> StateResult<()> {
        self.metrics.deletes += 1;
        if let Some(old) = self.map.remove(key) {
            self.metrics.entries -= 1;
            self.metrics.logical_bytes -= (row_len(key) + row_len(&old)) as i64;
        }
        Ok(())
    }

    pub fn modify<R>(
        &mut self,
        key: &[Value],
        f: impl FnOnce(&mut Option<Row>) -> R,
    ) -> StateResult<R> {
        self.metrics.reads += 1;
        let m = &mut self.metrics;
        Ok(match self.map.get_mut(key) {
            Some(v) => {
                let old_len = row_len(v) as i64;
                let mut slot = Some(std::mem::take(v));
                let r = f(&mut slot);
                match slot {
                    Some(new) => {
                        m.writes += 1;
                        m.logical_bytes += row_len(&new) as i64 - old_len;
                        *v = new;
                    }
                    None => {
                        m.deletes += 1;
                        m.entries -= 1;
                        m.logical_bytes -= row_len(key) as i64 + old_len;
                        self.map.remove(key);
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
                    self.map.insert(key.to_vec(), new);
                }
                r
            }
        })
    }
}

pub struct HeapMapState {
    name: String,
    map: Map<Row, Map<Row, Row>>,
    pub metrics: StateMetrics,
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

    pub fn get(&mut self, key: &[Value], ukey: &[Value]) -> StateResult<Option<Row>> {
        self.metrics.reads += 1;
        Ok(self.map.get(key).and_then(|m| m.get(ukey)).cloned())
    }

    pub fn put(&mut self, key: &[Value], ukey: &[Value], value: Row) -> StateResult<()> {
        self.modify_counted(key, ukey, false, |slot| *slot = Some(value))
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
        self.modify_counted(key, ukey, true, f)
    }

    /// Shared by `put` (no read counted) and `modify` (one read).
    fn modify_counted<R>(
        &mut self,
        key: &[Value],
        ukey: &[Value],
        count_read: bool,
        f: impl FnOnce(&mut Option<Row>) -> R,
    ) -> StateResult<R> {
        let m = &mut self.metrics;
        if count_read {
            m.reads += 1;
        }
        let prefix = (row_len(key) + row_len(ukey)) as i64;
        let inner = match self.map.get_mut(key) {
            Some(inner) => inner,
            None => self.map.entry(key.to_vec()).or_insert_with(new_map),
        };
        let r = match inner.get_mut(ukey) {
            Some(v) => {
                let old_len = row_len(v) as i64;
                let mut slot = Some(std::mem::take(v));
                let r = f(&mut slot);
                match slot {
                    Some(new) => {
                        m.writes += 1;
                        m.logical_bytes += row_len(&new) as i64 - old_len;
                        *v = new;
                    }
                    None => {
                        m.deletes += 1;
                        m.entries -= 1;
                        m.logical_bytes -= prefix + old_len;
                        inner.remove(ukey);
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
                    m.logical_bytes += prefix + row_len(&new) as i64;
                    inner.insert(ukey.to_vec(), new);
                }
                r
            }
        };
        if inner.is_empty() {
            self.map.remove(key);
        }
        Ok(r)
    }

    pub fn for_each(
        &mut self,
        key: &[Value],
        mut f: impl FnMut(&[Value], &[Value]),
    ) -> StateResult<()> {
        match self.map.get(key) {
            Some(inner) => {
                self.metrics.reads += inner.len().max(1) as u64;
                for (k, v) in inner {
                    f(k, v);
                }
            }
            None => self.metrics.reads += 1,
        }
        Ok(())
    }
}
