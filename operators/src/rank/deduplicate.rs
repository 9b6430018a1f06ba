//! Deduplication: the first or last row of each key, ordered by processing
//! time or by a rowtime column (Flink's `ProcTimeDeduplicateKeepFirstRowFunction`,
//! `ProcTimeDeduplicateKeepLastRowFunction` and `RowTimeDeduplicateFunction`,
//! one record at a time).
//!
//! What each emits, as Flink's `DeduplicateFunctionHelper`:
//! - keep-first on processing time: the key's first row as `+I`, nothing
//!   after; state is one flag per key.
//! - keep-last on processing time: with `generate_update_before` or
//!   `generate_insert` (Flink's `table.exec.deduplicate.insert-update-after-sensitive-enabled`,
//!   on by default), the first row as `+I` and each later one as `[-U of
//!   the kept row,] +U`; a row equal to the kept one emits nothing unless
//!   the state has a TTL (so downstream state is refreshed). With neither,
//!   every row as `+U`. State is the kept row per key.
//! - on a rowtime column: a row replaces the kept one when keep-last and
//!   its time is not earlier, or keep-first and its time is earlier; a
//!   replacement is emitted as above (so keep-first on rowtime can update).
//!
//! Mini-batch (Flink's `*MiniBatchDeduplicate*Function`s, `with_mini_batch`):
//! records wait in a bundle; when it closes, each key's rows are folded
//! into the one row the bundle keeps (keep-first on processing time: its
//! first; keep-last: its last; on rowtime: the rows replacing each other in
//! arrival order from the stored one), which is then emitted against the
//! state as above: one emission and one state access per key and bundle.
//!
//! Input is insert-only (Flink checks it); another kind is a bad record.
//! Counters: rows kept (emitted) and rows dropped as duplicates.

use crate::changelog::{Change, RowKind};
use crate::operator::{OpError, OpResult, Operator};
use crate::state::{StateBackend, StateReport, ValueState};
use crate::value::Value;

/// Which row of each key is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Keep {
    FirstRow,
    LastRow,
}

/// What the rows of a key are ordered by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum DedupOrder {
    /// Arrival order (`ORDER BY pt` of a `PROCTIME()` column).
    ProcTime,
    /// The rowtime column at this position (a timestamp).
    RowTime(usize),
}

/// A deduplication as the planner fixed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeduplicateSpec {
    pub key: Vec<usize>,
    pub keep: Keep,
    pub order: DedupOrder,
    pub generate_update_before: bool,
    pub generate_insert: bool,
    /// Whether the state has a TTL (an identical last row is then emitted).
    pub ttl_enabled: bool,
    /// The input row's arity.
    pub arity: usize,
}

/// A buffered record: its key and its row.
type Keyed = (Vec<Value>, Vec<Value>);

pub struct Deduplicate {
    spec: DeduplicateSpec,
    /// Per key: `[true]` (keep-first on processing time) or the kept row.
    kept: ValueState,
    key_buf: Vec<Value>,
    emitted: u64,
    dropped: u64,
    /// Mini-batch: the bundle size and its records (key, row) in order.
    bundle: Option<(usize, Vec<Keyed>)>,
}

impl Deduplicate {
    pub fn new(
        backend: &StateBackend,
        scope: &str,
        spec: DeduplicateSpec,
    ) -> OpResult<Deduplicate> {
        let flag_only = spec.keep == Keep::FirstRow && spec.order == DedupOrder::ProcTime;
        let arity = if flag_only { 1 } else { spec.arity };
        if let DedupOrder::RowTime(c) = spec.order {
            if c >= spec.arity {
                return Err(OpError::Spec(format!(
                    "the rowtime column {c} is not among the {} input columns",
                    spec.arity
                )));
            }
        }
        Ok(Deduplicate {
            kept: backend.value_state(scope, "deduplicateState", arity)?,
            spec,
            key_buf: Vec::new(),
            emitted: 0,
            dropped: 0,
            bundle: None,
        })
    }

    /// Buffers records and closes a bundle every `size` records.
    pub fn with_mini_batch(mut self, size: usize) -> Deduplicate {
        self.bundle = Some((size.max(1), Vec::new()));
        self
    }

    fn close_bundle(&mut self, out: &mut Vec<Change>) -> OpResult<()> {
        let Some((_, records)) = self.bundle.as_mut() else {
            return Ok(());
        };
        let records = std::mem::take(records);
        // Each key's rows, keys in the order they first came.
        let mut order: Vec<Vec<Value>> = Vec::new();
        let mut rows: hashbrown::HashMap<Vec<Value>, Vec<Vec<Value>>> = hashbrown::HashMap::new();
        for (k, r) in records {
            rows.entry(k.clone())
                .or_insert_with(|| {
                    order.push(k);
                    Vec::new()
                })
                .push(r);
        }
        for k in order {
            let mut group = rows.remove(&k).unwrap_or_default();
            let n = group.len() as u64;
            self.key_buf = k;
            match (self.spec.keep, self.spec.order) {
                (Keep::FirstRow, DedupOrder::ProcTime) => {
                    group.truncate(1);
                    self.dropped += n - 1;
                    self.one(group.pop().expect("a key has rows"), out)?;
                }
                (Keep::LastRow, DedupOrder::ProcTime) => {
                    self.dropped += n - 1;
                    self.one(group.pop().expect("a key has rows"), out)?;
                }
                (keep, DedupOrder::RowTime(t)) => {
                    let previous = self.kept.get(&self.key_buf)?;
                    let mut kept: Option<Vec<Value>> = None;
                    for row in group {
                        let against = kept.as_ref().or(previous.as_ref());
                        if replaces(keep, t, against, &row) {
                            kept = Some(row);
                        }
                    }
                    match kept {
                        None => self.dropped += n,
                        Some(row) => {
                            self.dropped += n - 1;
                            self.kept.put(&self.key_buf, row.clone())?;
                            self.update(previous, row, out);
                            self.emitted += 1;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// One row of the key in `key_buf`, against its state.
    fn one(&mut self, row: Vec<Value>, out: &mut Vec<Change>) -> OpResult<()> {
        match (self.spec.keep, self.spec.order) {
            (Keep::FirstRow, DedupOrder::ProcTime) => {
                let first = self.kept.modify(&self.key_buf, |slot| {
                    let first = slot.is_none();
                    if first {
                        *slot = Some(vec![Value::Bool(true)]);
                    }
                    first
                })?;
                if !first {
                    self.dropped += 1;
                    return Ok(());
                }
                out.push(Change::new(RowKind::Insert, row));
            }
            (Keep::LastRow, DedupOrder::ProcTime) => {
                let s = &self.spec;
                let previous = if s.generate_update_before || s.generate_insert {
                    let previous = self.kept.get(&self.key_buf)?;
                    self.kept.put(&self.key_buf, row.clone())?;
                    if !s.ttl_enabled && previous.as_deref() == Some(&row[..]) {
                        self.dropped += 1;
                        return Ok(());
                    }
                    previous
                } else {
                    None
                };
                self.update(previous, row, out);
            }
            (keep, DedupOrder::RowTime(t)) => {
                let previous = self.kept.get(&self.key_buf)?;
                let replaces = match &previous {
                    None => true,
                    Some(p) if keep == Keep::LastRow => rowtime(p, t) <= rowtime(&row, t),
                    Some(p) => rowtime(&row, t) < rowtime(p, t),
                };
                if !replaces {
                    self.dropped += 1;
                    return Ok(());
                }
                self.kept.put(&self.key_buf, row.clone())?;
                self.update(previous, row, out);
            }
        }
        self.emitted += 1;
        Ok(())
    }

    fn update(&self, previous: Option<Vec<Value>>, row: Vec<Value>, out: &mut Vec<Change>) {
        let s = &self.spec;
        if s.generate_update_before || s.generate_insert {
            match previous {
                None => out.push(Change::new(RowKind::Insert, row)),
                Some(p) => {
                    if s.generate_update_before {
                        out.push(Change::new(RowKind::UpdateBefore, p));
                    }
                    out.push(Change::new(RowKind::UpdateAfter, row));
                }
            }
        } else {
            out.push(Change::new(RowKind::UpdateAfter, row));
        }
    }
}

fn replaces(keep: Keep, t: usize, previous: Option<&Vec<Value>>, row: &[Value]) -> bool {
    match previous {
        None => true,
        Some(p) if keep == Keep::LastRow => rowtime(p, t) <= rowtime(row, t),
        Some(p) => rowtime(row, t) < rowtime(p, t),
    }
}

fn rowtime(row: &[Value], c: usize) -> i64 {
    match &row[c] {
        Value::Ts(t) | Value::Int(t) => *t,
        // Flink's rowtime is NOT NULL; the lab orders NULL first.
        _ => i64::MIN,
    }
}

impl Operator for Deduplicate {
    fn process(
        &mut self,
        _input: usize,
        batch: Vec<Change>,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        for c in batch {
            if c.kind != RowKind::Insert {
                return Err(OpError::Record(format!(
                    "Deduplicate takes an insert-only input, got {}",
                    c
                )));
            }
            self.key_buf.clear();
            self.key_buf
                .extend(self.spec.key.iter().map(|&i| c.row[i].clone()));
            if let Some((size, records)) = self.bundle.as_mut() {
                records.push((self.key_buf.clone(), c.row));
                if records.len() >= *size {
                    self.close_bundle(out)?;
                }
                continue;
            }
            self.one(c.row, out)?;
        }
        Ok(())
    }

    fn finish_bundle(&mut self, out: &mut Vec<Change>) -> OpResult<()> {
        self.close_bundle(out)
    }

    fn buffered(&self) -> usize {
        self.bundle.as_ref().map_or(0, |(_, r)| r.len())
    }

    fn snapshot_state(&mut self, image: &mut crate::checkpoint::OperatorImage) -> OpResult<()> {
        crate::checkpoint::image::closed_bundle(self.buffered())?;
        Ok(image.add_value("deduplicateState", &mut self.kept)?)
    }

    fn restore_state(
        &mut self,
        image: &crate::checkpoint::OperatorImage,
        owns: &dyn Fn(&[Value]) -> bool,
    ) -> OpResult<()> {
        Ok(image.restore_value("deduplicateState", &mut self.kept, owns)?)
    }
    fn state_reports(&self) -> Vec<StateReport> {
        vec![self.kept.report()]
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("rows_kept", self.emitted),
            ("duplicates_dropped", self.dropped),
        ]
    }
}
