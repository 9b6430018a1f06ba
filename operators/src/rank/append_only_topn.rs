//! Top-N over an insert-only input (Flink's `AppendOnlyTopNFunction`,
//! `AppendFastStrategy`): only the rows that are in the top `rank_end`
//! are kept, so a row that falls out is forgotten.
//!
//! State, per partition key: `data-state-with-append`, a map from sort key
//! to the rows with that key in arrival order (one state row holding them
//! one after another). A heap mirror of each partition's map (Flink's
//! `TopNBuffer`) is kept for the `cache_size / rank_end` partitions used
//! last (`table.exec.rank.topn-cache-size`); a partition not in it is read
//! back from the state. With a TTL the mirror is off (the state decides
//! what has expired). A checkpoint holds the state alone (every change is
//! written through); a restored operator starts with no mirror.
//!
//! What it emits for a row that enters the top:
//! - without the rank (and a range starting at 1): `-D` of the row it
//!   pushes out, if any, then `+I` of the row;
//! - with the rank: the rows below it move down one rank each (`-U` of the
//!   row that held a rank, `+U` of the one that now holds it), then `+I` of
//!   the row that takes the last rank not held before, if within
//!   `rank_end`.
//!
//! Counters: rows processed, rows that entered the top, cache requests and
//! hits (Flink's `topn.cache.hitRate`).

use super::topn::{flatten, unflatten, Emitter, TopNSpec};
use crate::changelog::{Change, RowKind};
use crate::checkpoint::OperatorImage;
use crate::operator::{OpError, OpResult, Operator};
use crate::state::{MapState, StateBackend, StateReport};
use crate::value::{Row, Value};
use std::cmp::Ordering;

/// One partition's rows by sort key, best first (Flink's `TopNBuffer`).
#[derive(Clone, Debug, Default)]
struct Buffer {
    entries: Vec<(Row, Vec<Row>)>,
    rows: usize,
}

impl Buffer {
    fn find(&self, spec: &TopNSpec, key: &[crate::value::Value]) -> Result<usize, usize> {
        self.entries.binary_search_by(|(k, _)| spec.compare(k, key))
    }

    /// Whether a row with sort key `key` belongs in the top `top` rows.
    fn in_range(&self, spec: &TopNSpec, key: &[crate::value::Value], top: u64) -> bool {
        match self.entries.last() {
            None => true,
            Some((worst, _)) => {
                spec.compare(key, worst) == Ordering::Less || (self.rows as u64) < top
            }
        }
    }
}

pub struct AppendOnlyTopN {
    spec: TopNSpec,
    data: MapState,
    /// Partition key -> (its buffer, when it was last used).
    cache: hashbrown::HashMap<Row, (Buffer, u64)>,
    cache_capacity: usize,
    tick: u64,
    key_buf: Row,
    processed: u64,
    entered: u64,
    requests: u64,
    hits: u64,
}

impl AppendOnlyTopN {
    /// `cache_size` rows of buffers are kept on the heap (at least one
    /// partition's).
    pub fn new(
        backend: &StateBackend,
        scope: &str,
        spec: TopNSpec,
        cache_size: u64,
    ) -> OpResult<AppendOnlyTopN> {
        spec.check().map_err(OpError::Spec)?;
        let cache_capacity = if spec.ttl_enabled {
            0
        } else {
            (cache_size / spec.rank_end).max(1) as usize
        };
        Ok(AppendOnlyTopN {
            data: backend.map_state(
                scope,
                "data-state-with-append",
                spec.order.len(),
                spec.arity,
            )?,
            spec,
            cache: hashbrown::HashMap::new(),
            cache_capacity,
            tick: 0,
            key_buf: Row::new(),
            processed: 0,
            entered: 0,
            requests: 0,
            hits: 0,
        })
    }

    /// The buffer of the partition in `key_buf`, from the cache or the state.
    fn buffer(&mut self) -> OpResult<Buffer> {
        self.requests += 1;
        if let Some((b, _)) = self.cache.remove(&self.key_buf) {
            self.hits += 1;
            return Ok(b);
        }
        let mut b = Buffer::default();
        for (key, flat) in self.data.entries(&self.key_buf)? {
            let rows = unflatten(&flat, self.spec.arity).ok_or_else(|| {
                OpError::Spec("a Top-N state row does not hold whole rows".into())
            })?;
            b.rows += rows.len();
            b.entries.push((key, rows));
        }
        let spec = &self.spec;
        b.entries.sort_by(|x, y| spec.compare(&x.0, &y.0));
        Ok(b)
    }

    fn keep(&mut self, b: Buffer) {
        if self.cache_capacity == 0 {
            return;
        }
        if self.cache.len() >= self.cache_capacity {
            let oldest = self
                .cache
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                self.cache.remove(&k);
            }
        }
        self.tick += 1;
        self.cache.insert(self.key_buf.clone(), (b, self.tick));
    }

    fn one(&mut self, row: Row, out: &mut Vec<Change>) -> OpResult<()> {
        self.processed += 1;
        let mut b = self.buffer()?;
        let key = self.spec.sort_key(&row);
        if b.in_range(&self.spec, &key, self.spec.rank_end) {
            self.entered += 1;
            let at = match b.find(&self.spec, &key) {
                Ok(i) => i,
                Err(i) => {
                    b.entries.insert(i, (key.clone(), Vec::new()));
                    i
                }
            };
            b.entries[at].1.push(row.clone());
            b.rows += 1;
            self.data
                .put(&self.key_buf, &key, flatten(&b.entries[at].1))?;
            if self.spec.ranked() {
                self.with_rank_number(&mut b, at, row, out)?;
            } else {
                self.without_rank_number(&mut b, &row, out)?;
            }
        }
        self.keep(b);
        Ok(())
    }

    fn without_rank_number(
        &mut self,
        b: &mut Buffer,
        row: &Row,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        let mut emit = Emitter {
            spec: &self.spec,
            out,
        };
        if b.rows as u64 > self.spec.rank_end {
            let (last_key, last_rows) = b.entries.last_mut().expect("rows are kept");
            let size = last_rows.len();
            let last = last_rows.pop().expect("an entry has rows");
            b.rows -= 1;
            if size <= 1 {
                self.data.delete(&self.key_buf, last_key)?;
                b.entries.pop();
            } else {
                self.data.put(&self.key_buf, last_key, flatten(last_rows))?;
            }
            if &last == row {
                return Ok(());
            }
            emit.delete(&last);
        }
        emit.insert(row);
        Ok(())
    }

    fn with_rank_number(
        &mut self,
        b: &mut Buffer,
        at: usize,
        row: Row,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        let spec = &self.spec;
        let mut emit = Emitter { spec, out };
        let mut rank = 0u64;
        let mut current = row;
        let mut i = 0;
        while i < b.entries.len() && spec.in_rank_end(rank) {
            let rows = &b.entries[i].1;
            if i == at {
                rank += rows.len() as u64;
            } else if i > at {
                for previous in rows {
                    if !spec.in_rank_end(rank) {
                        break;
                    }
                    emit.update_before_at(previous, rank);
                    emit.update_after_at(&current, rank);
                    current = previous.clone();
                    rank += 1;
                }
            } else {
                rank += rows.len() as u64;
            }
            i += 1;
        }
        if spec.in_rank_end(rank) {
            emit.insert_at(&current, rank);
        }
        // The sort keys past the last one visited are out of the top.
        for (key, rows) in b.entries.drain(i..) {
            b.rows -= rows.len();
            self.data.delete(&self.key_buf, &key)?;
        }
        Ok(())
    }
}

impl Operator for AppendOnlyTopN {
    fn process(
        &mut self,
        _input: usize,
        batch: Vec<Change>,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        for c in batch {
            if c.kind != RowKind::Insert {
                return Err(OpError::Record(format!(
                    "an append-only Top-N takes an insert-only input, got {c}"
                )));
            }
            self.spec.checked_partition_of(&c.row, &mut self.key_buf)?;
            self.one(c.row, out)?;
        }
        Ok(())
    }

    fn state_reports(&self) -> Vec<StateReport> {
        vec![self.data.report()]
    }

    /// The state alone: every change is written through, and the heap
    /// mirror is read back from it when a partition is not mirrored.
    fn snapshot_state(&mut self, image: &mut OperatorImage) -> OpResult<()> {
        Ok(image.add_map("data-state-with-append", &mut self.data)?)
    }

    fn restore_state(
        &mut self,
        image: &OperatorImage,
        owns: &dyn Fn(&[Value]) -> bool,
    ) -> OpResult<()> {
        Ok(image.restore_map("data-state-with-append", &mut self.data, owns)?)
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("rows_processed", self.processed),
            ("rows_entered_top", self.entered),
            ("cache_requests", self.requests),
            ("cache_hits", self.hits),
        ]
    }
}
