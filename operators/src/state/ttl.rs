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
//! as Flink's TTL wrapper's timestamp is). Every write also queues the key
//! with its deadline; each access first sweeps the queue's expired head,
//! deleting an entry only if it was not rewritten since. Sweep reads and
//! deletes are real state accesses and are counted.
//!
//! Time is the state clock, which the executor advances: wall time since
//! the job started, or, with `lab.clock = deterministic`, one millisecond
//! per input record read, so tests are reproducible.

use crate::value::{Row, Value};
use std::collections::VecDeque;
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
    /// (deadline, key, user key) in write order.
    pub(crate) queue: VecDeque<(u64, Row, Option<Row>)>,
}

impl Ttl {
    pub(crate) fn new(ttl_ms: u64, clock: StateClock) -> Ttl {
        Ttl {
            ttl_ms,
            clock,
            queue: VecDeque::new(),
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

    /// Appends the write time to a row about to be stored, and queues it.
    pub(crate) fn stamp(&mut self, row: &mut Row, key: &[Value], ukey: Option<&[Value]>) {
        let now = self.now();
        row.push(Value::Int(now as i64));
        self.queue.push_back((
            now.saturating_add(self.ttl_ms),
            key.to_vec(),
            ukey.map(<[Value]>::to_vec),
        ));
    }

    /// Queue entries whose deadline passed.
    pub(crate) fn due(&mut self) -> Vec<(Row, Option<Row>)> {
        let now = self.now();
        let mut out = Vec::new();
        while self.queue.front().is_some_and(|(d, _, _)| *d <= now) {
            let (_, k, u) = self.queue.pop_front().expect("front exists");
            out.push((k, u));
        }
        out
    }
}

/// Drops the write time a TTL state appends.
pub(crate) fn strip(mut row: Row) -> Row {
    row.pop();
    row
}
