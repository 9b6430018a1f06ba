//! Top-N over an input that updates by a unique key, each update moving
//! its row up in the order (Flink's `UpdatableTopNFunction`,
//! `UpdateFastStrategy`): the planner proves the sort key monotonic (a
//! `COUNT` or `MAX` ordered `DESC`, a `MIN` ordered `ASC`, over an
//! insert-only input), so a row that fell out of the top never comes back
//! by falling, and only the top rows are kept. The input's `-U` rows are
//! not needed (skipped); a `-D` is a bad record.
//!
//! State, per partition key: `data-state-with-update`, a map from the
//! row's unique key to the row and its place among the rows with an equal
//! sort key (its inner rank, 1-based). Flink writes it back lazily (when a
//! checkpoint is taken or the cache evicts a partition); the lab writes
//! each change through, so a checkpoint holds the state alone and a
//! restored operator starts with no mirror. A heap mirror of
//! each partition (the sort keys in order with their rows' unique keys)
//! is kept for the `cache_size / rank_end` partitions used last
//! (`table.exec.rank.topn-cache-size`), off with a TTL.
//!
//! What it emits, as Flink's function does:
//! - without the rank: a row already in the top as `-U` of its old row and
//!   `+U` of the new one; a row entering it as `-D` of the row it pushes
//!   out, if any, then `+I`;
//! - with the rank: the rows between the row's new and old rank move down
//!   one rank each (`-U`, `+U` at each rank), then the row's old rank (an
//!   update) or the new last rank (`+I`) is emitted.

use super::topn::{Emitter, TopNSpec};
use crate::changelog::{Change, RowKind};
use crate::checkpoint::OperatorImage;
use crate::operator::{OpError, OpResult, Operator};
use crate::state::{MapState, StateBackend, StateReport};
use crate::value::{Row, Value};
use std::cmp::Ordering;

/// One partition: sort keys best first, each with its rows' unique keys
/// in arrival order, and each unique key's row and inner rank.
#[derive(Clone, Debug, Default)]
struct Partition {
    entries: Vec<(Row, Vec<Row>)>,
    rows: hashbrown::HashMap<Row, (Row, u64)>,
}

impl Partition {
    fn count(&self) -> usize {
        self.rows.len()
    }

    fn find(&self, spec: &TopNSpec, key: &[Value]) -> Result<usize, usize> {
        self.entries.binary_search_by(|(k, _)| spec.compare(k, key))
    }

    /// Adds `row_key` last under `sort_key`; returns its inner rank.
    fn put(&mut self, spec: &TopNSpec, sort_key: Row, row_key: Row) -> u64 {
        let at = match self.find(spec, &sort_key) {
            Ok(i) => i,
            Err(i) => {
                self.entries.insert(i, (sort_key, Vec::new()));
                i
            }
        };
        self.entries[at].1.push(row_key);
        self.entries[at].1.len() as u64
    }

    fn remove(&mut self, spec: &TopNSpec, sort_key: &[Value], row_key: &[Value]) {
        if let Ok(i) = self.find(spec, sort_key) {
            let keys = &mut self.entries[i].1;
            if let Some(p) = keys.iter().position(|k| k == row_key) {
                keys.remove(p);
            }
            if keys.is_empty() {
                self.entries.remove(i);
            }
        }
    }

    /// The rank and inner rank of `row_key` under `sort_key`.
    fn row_number(
        &self,
        spec: &TopNSpec,
        sort_key: &[Value],
        row_key: &[Value],
    ) -> Option<(u64, u64)> {
        let mut rank = 1u64;
        for (k, keys) in &self.entries {
            if spec.compare(k, sort_key) == Ordering::Equal {
                let p = keys.iter().position(|x| x == row_key)? as u64;
                return Some((rank + p, p + 1));
            }
            rank += keys.len() as u64;
        }
        None
    }

    fn in_range(&self, spec: &TopNSpec, key: &[Value]) -> bool {
        match self.entries.last() {
            None => true,
            Some((worst, _)) => {
                spec.compare(key, worst) == Ordering::Less || (self.count() as u64) < spec.rank_end
            }
        }
    }
}

pub struct UpdatableTopN {
    spec: TopNSpec,
    row_key: Vec<usize>,
    data: MapState,
    cache: hashbrown::HashMap<Row, (Partition, u64)>,
    cache_capacity: usize,
    tick: u64,
    key_buf: Row,
    processed: u64,
    requests: u64,
    hits: u64,
}

fn bad_state() -> OpError {
    OpError::Spec("a Top-N state row does not hold a row and its inner rank".into())
}

impl UpdatableTopN {
    /// `row_key`: the input's unique key (it holds the partition key).
    pub fn new(
        backend: &StateBackend,
        scope: &str,
        spec: TopNSpec,
        row_key: Vec<usize>,
        cache_size: u64,
    ) -> OpResult<UpdatableTopN> {
        spec.check().map_err(OpError::Spec)?;
        if let Some(&c) = row_key.iter().find(|&&c| c >= spec.arity) {
            return Err(OpError::Spec(format!(
                "the unique key column {c} is not among the {} input columns",
                spec.arity
            )));
        }
        let cache_capacity = if spec.ttl_enabled {
            0
        } else {
            (cache_size / spec.rank_end).max(1) as usize
        };
        Ok(UpdatableTopN {
            data: backend.map_state(
                scope,
                "data-state-with-update",
                row_key.len(),
                spec.arity + 1,
            )?,
            spec,
            row_key,
            cache: hashbrown::HashMap::new(),
            cache_capacity,
            tick: 0,
            key_buf: Row::new(),
            processed: 0,
            requests: 0,
            hits: 0,
        })
    }

    fn partition(&mut self) -> OpResult<Partition> {
        self.requests += 1;
        if let Some((p, _)) = self.cache.remove(&self.key_buf) {
            self.hits += 1;
            return Ok(p);
        }
        let mut p = Partition::default();
        let mut by_sort_key: Vec<(Row, u64, Row)> = Vec::new();
        for (row_key, mut value) in self.data.entries(&self.key_buf)? {
            let inner = match value.pop() {
                Some(Value::Int(n)) if value.len() == self.spec.arity => n as u64,
                _ => return Err(bad_state()),
            };
            by_sort_key.push((self.spec.sort_key(&value), inner, row_key.clone()));
            p.rows.insert(row_key, (value, inner));
        }
        let spec = &self.spec;
        by_sort_key.sort_by(|a, b| spec.compare(&a.0, &b.0).then(a.1.cmp(&b.1)));
        for (sort_key, _, row_key) in by_sort_key {
            p.put(spec, sort_key, row_key);
        }
        Ok(p)
    }

    fn keep(&mut self, p: Partition) {
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
        self.cache.insert(self.key_buf.clone(), (p, self.tick));
    }

    fn store(&mut self, row_key: &[Value], row: &[Value], inner: u64) -> OpResult<()> {
        let mut v = row.to_vec();
        v.push(Value::Int(inner as i64));
        self.data.put(&self.key_buf, row_key, v)?;
        Ok(())
    }

    /// Renumbers the rows under `sort_key` after one left it, writing the
    /// changed inner ranks.
    fn update_inner_ranks(&mut self, p: &mut Partition, sort_key: &[Value]) -> OpResult<()> {
        let Ok(i) = p.find(&self.spec, sort_key) else {
            return Ok(());
        };
        let keys = p.entries[i].1.clone();
        for (n, k) in keys.iter().enumerate() {
            let inner = n as u64 + 1;
            if let Some((row, old)) = p.rows.get_mut(k) {
                if *old != inner {
                    *old = inner;
                    let row = row.clone();
                    self.store(k, &row, inner)?;
                }
            }
        }
        Ok(())
    }

    fn one(&mut self, row: Row, out: &mut Vec<Change>) -> OpResult<()> {
        self.processed += 1;
        let mut p = self.partition()?;
        let r = if self.spec.ranked() {
            self.with_rank_number(&mut p, row, out)
        } else {
            self.without_rank_number(&mut p, row, out)
        };
        self.keep(p);
        r
    }

    fn without_rank_number(
        &mut self,
        p: &mut Partition,
        row: Row,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        let sort_key = self.spec.sort_key(&row);
        let row_key: Row = self.row_key.iter().map(|&i| row[i].clone()).collect();
        if let Some((old_row, old_inner)) = p.rows.get(&row_key).cloned() {
            let old_sort_key = self.spec.sort_key(&old_row);
            if self.spec.compare(&old_sort_key, &sort_key) != Ordering::Equal {
                p.remove(&self.spec, &old_sort_key, &row_key);
                let inner = p.put(&self.spec, sort_key, row_key.clone());
                p.rows.insert(row_key.clone(), (row.clone(), inner));
                self.store(&row_key, &row, inner)?;
                self.update_inner_ranks(p, &old_sort_key)?;
            } else {
                p.rows.insert(row_key.clone(), (row.clone(), old_inner));
                self.store(&row_key, &row, old_inner)?;
            }
            let emit = Emitter {
                spec: &self.spec,
                out,
            };
            if self.spec.generate_update_before {
                emit.out.push(Change::new(RowKind::UpdateBefore, old_row));
            }
            emit.out.push(Change::new(RowKind::UpdateAfter, row));
        } else if p.in_range(&self.spec, &sort_key) {
            let inner = p.put(&self.spec, sort_key, row_key.clone());
            p.rows.insert(row_key.clone(), (row.clone(), inner));
            self.store(&row_key, &row, inner)?;
            if p.count() as u64 > self.spec.rank_end {
                let (_, last_keys) = p.entries.last_mut().expect("rows are kept");
                let last_key = last_keys.pop().expect("an entry has rows");
                if last_keys.is_empty() {
                    p.entries.pop();
                }
                if let Some((last_row, _)) = p.rows.remove(&last_key) {
                    self.data.delete(&self.key_buf, &last_key)?;
                    Emitter {
                        spec: &self.spec,
                        out,
                    }
                    .delete(&last_row);
                }
            }
            Emitter {
                spec: &self.spec,
                out,
            }
            .insert(&row);
        }
        Ok(())
    }

    fn with_rank_number(
        &mut self,
        p: &mut Partition,
        row: Row,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        let sort_key = self.spec.sort_key(&row);
        let row_key: Row = self.row_key.iter().map(|&i| row[i].clone()).collect();
        if let Some((old_row, _)) = p.rows.get(&row_key).cloned() {
            let old_sort_key = self.spec.sort_key(&old_row);
            let compare = self.spec.compare(&sort_key, &old_sort_key);
            if compare == Ordering::Equal {
                let (rank, inner) = p
                    .row_number(&self.spec, &sort_key, &row_key)
                    .ok_or_else(bad_state)?;
                p.rows.insert(row_key.clone(), (row.clone(), inner));
                self.store(&row_key, &row, inner)?;
                let mut emit = Emitter {
                    spec: &self.spec,
                    out,
                };
                emit.update_before_at(&old_row, rank);
                emit.update_after_at(&row, rank);
                return Ok(());
            }
            let (old_rank, _) = p
                .row_number(&self.spec, &old_sort_key, &row_key)
                .ok_or_else(bad_state)?;
            p.remove(&self.spec, &old_sort_key, &row_key);
            let inner = p.put(&self.spec, sort_key.clone(), row_key.clone());
            p.rows.insert(row_key.clone(), (row.clone(), inner));
            self.store(&row_key, &row, inner)?;
            self.update_inner_ranks(p, &old_sort_key)?;
            if compare == Ordering::Less {
                self.emit(
                    p,
                    &sort_key,
                    &row,
                    Some((&old_sort_key, &old_row, old_rank)),
                    out,
                )?;
            } else {
                // The order moved the row down, against what the planner
                // proved (state expired upstream): emitted as Flink's
                // lenient path does.
                let (new_rank, _) = p
                    .row_number(&self.spec, &sort_key, &row_key)
                    .ok_or_else(bad_state)?;
                self.emit_moved_down(p, &row, new_rank, &old_row, old_rank, out);
            }
        } else if p.in_range(&self.spec, &sort_key) {
            let inner = p.put(&self.spec, sort_key.clone(), row_key.clone());
            p.rows.insert(row_key.clone(), (row.clone(), inner));
            self.store(&row_key, &row, inner)?;
            self.emit(p, &sort_key, &row, None, out)?;
        }
        Ok(())
    }

    fn emit_moved_down(
        &self,
        p: &Partition,
        new_row: &Row,
        new_rank: u64,
        old_row: &Row,
        old_rank: u64,
        out: &mut Vec<Change>,
    ) {
        let mut emit = Emitter {
            spec: &self.spec,
            out,
        };
        let mut rank = 0u64;
        let mut previous: Option<&Row> = None;
        'entries: for (_, keys) in &p.entries {
            if rank > new_rank {
                break;
            }
            for k in keys {
                rank += 1;
                let current = &p.rows[k].0;
                if old_rank <= rank {
                    if rank == old_rank {
                        emit.update_before_at(old_row, old_rank);
                    } else if let Some(prev) = previous {
                        emit.update_before_at(prev, rank);
                        emit.update_after_at(prev, rank - 1);
                        if rank == new_rank {
                            emit.update_after_at(new_row, rank);
                        }
                    }
                }
                previous = Some(current);
                if rank > new_rank {
                    break 'entries;
                }
            }
        }
    }

    /// Emits the ranks a new row (`old` = `None`) or a row that moved up
    /// changed, then drops the rows past the top.
    fn emit(
        &mut self,
        p: &mut Partition,
        sort_key: &[Value],
        row: &Row,
        old: Option<(&Row, &Row, u64)>,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        let spec = &self.spec;
        let mut emit = Emitter { spec, out };
        let mut rank = 0u64;
        let mut current = row.clone();
        let mut current_is_input = true;
        let mut found = false;
        let mut old_retracted = false;
        let mut i = 0;
        while i < p.entries.len() && spec.in_rank_end(rank) {
            let (key, keys) = &p.entries[i];
            if !found && spec.compare(key, sort_key) == Ordering::Equal {
                rank += keys.len() as u64;
                current = row.clone();
                current_is_input = true;
                found = true;
            } else if found {
                let stop_at_old = match old {
                    None => None,
                    Some((old_key, _, old_rank)) => {
                        if spec.compare(key, old_key) == Ordering::Greater {
                            break;
                        }
                        Some(old_rank)
                    }
                };
                for k in keys {
                    let go_on = match stop_at_old {
                        None => spec.in_rank_end(rank),
                        Some(old_rank) => rank < old_rank,
                    };
                    if !go_on {
                        break;
                    }
                    let previous = &p.rows[k].0;
                    emit.update_before_at(previous, rank);
                    if let Some((_, old_row, old_rank)) = old {
                        if current_is_input && !old_retracted {
                            emit.update_before_at(old_row, old_rank);
                            old_retracted = true;
                        }
                    }
                    emit.update_after_at(&current, rank);
                    current = previous.clone();
                    current_is_input = false;
                    rank += 1;
                }
            } else {
                rank += keys.len() as u64;
            }
            i += 1;
        }
        if spec.in_rank_end(rank) {
            match old {
                None => emit.insert_at(&current, rank),
                Some((_, old_row, old_rank)) => {
                    if !old_retracted {
                        emit.update_before_at(old_row, old_rank);
                    }
                    emit.update_after_at(&current, rank);
                }
            }
            return Ok(());
        }
        // The sort keys past the last one visited are out of the top.
        let dropped: Vec<(Row, Vec<Row>)> = p.entries.drain(i..).collect();
        for (_, keys) in dropped {
            for k in keys {
                p.rows.remove(&k);
                self.data.delete(&self.key_buf, &k)?;
            }
        }
        Ok(())
    }
}

impl Operator for UpdatableTopN {
    fn process(
        &mut self,
        _input: usize,
        batch: Vec<Change>,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        for c in batch {
            match c.kind {
                RowKind::Insert | RowKind::UpdateAfter => {}
                RowKind::UpdateBefore => continue,
                RowKind::Delete => {
                    return Err(OpError::Record(format!(
                        "an updatable Top-N takes inserts and updates only, got {c}"
                    )))
                }
            }
            self.spec.checked_partition_of(&c.row, &mut self.key_buf)?;
            self.one(c.row, out)?;
        }
        Ok(())
    }

    fn state_reports(&self) -> Vec<StateReport> {
        vec![self.data.report()]
    }

    fn snapshot_state(&mut self, image: &mut OperatorImage) -> OpResult<()> {
        Ok(image.add_map("data-state-with-update", &mut self.data)?)
    }

    fn restore_state(
        &mut self,
        image: &OperatorImage,
        owns: &dyn Fn(&[Value]) -> bool,
    ) -> OpResult<()> {
        Ok(image.restore_map("data-state-with-update", &mut self.data, owns)?)
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("rows_processed", self.processed),
            ("cache_requests", self.requests),
            ("cache_hits", self.hits),
        ]
    }
}
