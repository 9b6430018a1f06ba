//! Idle state retention (`table.exec.state.ttl`, the `STATE_TTL` hint).
//!
//! Semantics, as Flink's `StateTtlConfig` with `OnCreateAndWrite` updates
//! and `NeverReturnExpired` visibility: an entry not written for `ttl` is
//! gone. A read of an expired entry sees nothing (and removes it), so the
//! key's next record is treated as its first; entries nobody reads again are
//! removed by a sweep, so they leave the entry and byte counters too.
//!
//! Mechanics: a state with a TTL stores its write time as one extra value
//! at the end of each stored row (9 encoded bytes, counted in logical bytes
//! as Flink's TTL wrapper's timestamp is). A written key is queued with its
//! deadline unless it is queued already; each access first sweeps the
//! queue's expired head: an entry still expired is deleted, one rewritten
//! since is queued again with the deadline of its last write. So the queue
//! holds each key once (memory grows with the keys, not the writes), and
//! an entry leaves the counters at the first access after its deadline, as
//! if every write had been queued. Sweep reads and deletes are real state
//! accesses and are counted.
//!
//! Time is the state clock, which the executor advances: wall time since
//! the job started, or, with `lab.clock = deterministic`, one millisecond
//! per input record read, so tests are reproducible.
//!
//! Checkpoints: a state with a TTL hands over its live entries with their
//! write times (the stored rows as they are) after a sweep, so nothing
//! expired is kept; a restore writes them back as they were and queues
//! each with its last write's deadline. With the clock restored too
//! (`operators/src/exec/job/checkpointing.rs`), every entry expires when
//! it would have in a run never stopped.

use super::heap::{new_map, Map};
use crate::value::{Row, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The state clock in milliseconds, shared by a job's states.
#[derive(Clone, Debug, Default)]
pub struct StateClock(Arc<AtomicU64>);

impl StateClock {
    pub fn now(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
    pub fn set(&self, ms: u64) {
        self.0.store(ms, Ordering::Relaxed);
    }
}

/// The TTL of one state handle and its sweep queue.
pub(crate) struct Ttl {
    pub(crate) ttl_ms: u64,
    pub(crate) clock: StateClock,
    /// (deadline, sequence) → (key, user key), earliest deadline first.
    queue: BTreeMap<(u64, u64), (Row, Option<Row>)>,
    sequence: u64,
    /// The queued entries, as key ++ user key (arities are fixed per state).
    queued: Map<Row, ()>,
    probe: Row,
}

impl Ttl {
    pub(crate) fn new(ttl_ms: u64, clock: StateClock) -> Ttl {
        Ttl {
            ttl_ms,
            clock,
            queue: BTreeMap::new(),
            sequence: 0,
            queued: new_map(),
            probe: Vec::new(),
        }
    }

    pub(crate) fn now(&self) -> u64 {
        self.clock.now()
    }

    /// Whether a stored row (write time last) has expired.
    pub(crate) fn expired(&self, stored: &[Value]) -> bool {
        match stored.last() {
            Some(Value::Int(t)) => (*t as u64).saturating_add(self.ttl_ms) <= self.now(),
            _ => false,
        }
    }

    /// Appends the write time to a row about to be stored, and queues its
    /// key unless it is queued already.
    pub(crate) fn stamp(&mut self, row: &mut Row, key: &[Value], ukey: Option<&[Value]>) {
        let now = self.now();
        row.push(Value::Int(now as i64));
        self.enqueue(now, key, ukey);
    }

    /// Sets `probe` to the queued-set entry of (key, user key).
    fn set_probe(&mut self, key: &[Value], ukey: Option<&[Value]>) {
        self.probe.clear();
        self.probe.extend_from_slice(key);
        self.probe.extend_from_slice(ukey.unwrap_or_default());
    }

    fn enqueue(&mut self, written: u64, key: &[Value], ukey: Option<&[Value]>) {
        self.set_probe(key, ukey);
        if self.queued.contains_key(self.probe.as_slice()) {
            return;
        }
        self.queued.insert(self.probe.clone(), ());
        self.sequence += 1;
        self.queue.insert(
            (written.saturating_add(self.ttl_ms), self.sequence),
            (key.to_vec(), ukey.map(<[Value]>::to_vec)),
        );
    }

    /// Queue entries whose deadline passed, taken off the queue; the caller
    /// deletes those still expired and [`Ttl::requeue`]s the others.
    pub(crate) fn due(&mut self) -> Vec<(Row, Option<Row>)> {
        let now = self.now();
        let mut out = Vec::new();
        while let Some(entry) = self.queue.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let (k, u) = entry.remove();
            self.probe.clear();
            self.probe.extend_from_slice(&k);
            self.probe
                .extend_from_slice(u.as_deref().unwrap_or_default());
            self.queued.remove(self.probe.as_slice());
            out.push((k, u));
        }
        out
    }

    /// Queues a due entry again that was rewritten since it was queued
    /// (`stored` is its row, write time last).
    pub(crate) fn requeue(&mut self, key: &[Value], ukey: Option<&[Value]>, stored: &[Value]) {
        if let Some(Value::Int(t)) = stored.last() {
            self.enqueue(*t as u64, key, ukey);
        }
    }

    /// Queues an entry a checkpoint restored (`stored` is its row, write
    /// time last) with the deadline of its last write: the queue a resumed
    /// run rebuilds. An uninterrupted run may hold the key under an
    /// earlier deadline (its first write's), which only means one more
    /// sweep read; the entry expires at the same time either way.
    pub(crate) fn restored(&mut self, key: &[Value], ukey: Option<&[Value]>, stored: &[Value]) {
        self.requeue(key, ukey, stored);
    }
}

/// Drops the write time a TTL state appends.
pub(crate) fn strip(mut row: Row) -> Row {
    row.pop();
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queue_holds_each_key_once_and_requeues_rewritten_keys() {
        let clock = StateClock::default();
        let mut t = Ttl::new(10, clock.clone());
        let key = [Value::Int(7)];
        let mut last = Vec::new();
        for now in 0..1000 {
            clock.set(now);
            last = vec![Value::Int(1)];
            t.stamp(&mut last, &key, None);
        }
        assert_eq!(
            t.queue.len(),
            1,
            "one entry however often the key is written"
        );
        // Due at 0 + 10; its last write (999) is not expired then.
        clock.set(10);
        let due = t.due();
        assert_eq!(due, vec![(key.to_vec(), None)]);
        assert!(!t.expired(&last));
        t.requeue(&key, None, &last);
        clock.set(1008);
        assert!(t.due().is_empty());
        clock.set(1009);
        assert_eq!(t.due().len(), 1);
        assert!(t.expired(&last));
        assert!(t.queue.is_empty() && t.queued.is_empty());
    }

    #[test]
    fn map_entries_of_one_key_queue_apart() {
        let clock = StateClock::default();
        let mut t = Ttl::new(5, clock);
        for u in 0..3 {
            let mut row = vec![Value::Int(0)];
            t.stamp(&mut row, &[Value::Int(1)], Some(&[Value::Int(u)]));
            t.stamp(&mut row, &[Value::Int(1)], Some(&[Value::Int(u)]));
        }
        assert_eq!(t.queue.len(), 3);
    }
}
