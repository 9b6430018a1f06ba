//! Top-N over an input that updates and deletes (Flink's
//! `RetractableTopNFunction`, `RetractStrategy`): every row of the input is
//! kept, since a retraction may bring a row from below back into the top.
//!
//! State, per partition key:
//! - `sorted-map`: the sort keys in order with how many rows have each
//!   (one state row: the sort key's values then the count, key after key);
//!   deleted when the partition has no rows left;
//! - `data-state`: a map from sort key to its rows in arrival order (one
//!   state row holding them one after another).
//!
//! An accumulating row (`+I`, `+U`) is ranked after the rows with an equal
//! sort key; a retracting one (`-U`, `-D`) removes the first equal row.
//! What each emits, as Flink's function does:
//! - without the rank: `-D` of the row pushed out of the top and `+I` of
//!   the row that enters it (accumulate), or `-D` of the retracted row and
//!   `+I` of the row that moves up into the top (retract);
//! - with the rank (or a range not starting at 1): each row whose rank
//!   changes as `-U` (the row that held the rank) and `+U` (the one that
//!   holds it now), then `+I` of the new last rank (accumulate) or `-D` of
//!   the old last rank (retract), within the range.
//!
//! A retraction of a row it does not have is skipped (counted), as Flink's
//! lenient default does after state expired.

use super::topn::{flatten, unflatten, Emitter, TopNSpec};
use crate::changelog::{Change, RowKind};
use crate::checkpoint::OperatorImage;
use crate::operator::{OpError, OpResult, Operator};
use crate::state::{MapState, StateBackend, StateReport, ValueState};
use crate::value::{Row, Value};
use std::cmp::Ordering;

/// A partition's sort keys in order, each with its row count.
type SortedMap = Vec<(Row, u64)>;

pub struct RetractableTopN {
    spec: TopNSpec,
    sorted: ValueState,
    data: MapState,
    key_buf: Row,
    processed: u64,
    missing_retractions: u64,
    stale_keys: u64,
}

fn bad_state() -> OpError {
    OpError::Spec("a Top-N state row does not hold whole entries".into())
}

impl RetractableTopN {
    pub fn new(backend: &StateBackend, scope: &str, spec: TopNSpec) -> OpResult<RetractableTopN> {
        spec.check().map_err(OpError::Spec)?;
        Ok(RetractableTopN {
            sorted: backend.value_state(scope, "sorted-map", spec.order.len() + 1)?,
            data: backend.map_state(scope, "data-state", spec.order.len(), spec.arity)?,
            spec,
            key_buf: Row::new(),
            processed: 0,
            missing_retractions: 0,
            stale_keys: 0,
        })
    }

    fn read_sorted(&mut self) -> OpResult<SortedMap> {
        let Some(flat) = self.sorted.get(&self.key_buf)? else {
            return Ok(Vec::new());
        };
        let width = self.spec.order.len() + 1;
        let entries = unflatten(&flat, width).ok_or_else(bad_state)?;
        entries
            .into_iter()
            .map(|mut e| match e.pop() {
                Some(Value::Int(n)) if n > 0 => Ok((e, n as u64)),
                _ => Err(bad_state()),
            })
            .collect()
    }

    fn write_sorted(&mut self, map: &SortedMap) -> OpResult<()> {
        if map.is_empty() {
            self.sorted.delete(&self.key_buf)?;
            return Ok(());
        }
        let mut flat = Row::with_capacity(map.len() * (self.spec.order.len() + 1));
        for (k, n) in map {
            flat.extend(k.iter().cloned());
            flat.push(Value::Int(*n as i64));
        }
        self.sorted.put(&self.key_buf, flat)?;
        Ok(())
    }

    fn rows_of(&mut self, key: &[Value]) -> OpResult<Option<Vec<Row>>> {
        match self.data.get(&self.key_buf, key)? {
            None => Ok(None),
            Some(flat) => Ok(Some(
                unflatten(&flat, self.spec.arity).ok_or_else(bad_state)?,
            )),
        }
    }

    fn write_rows(&mut self, key: &[Value], rows: &[Row]) -> OpResult<()> {
        if rows.is_empty() {
            self.data.delete(&self.key_buf, key)?;
        } else {
            self.data.put(&self.key_buf, key, flatten(rows))?;
        }
        Ok(())
    }

    fn find(&self, map: &SortedMap, key: &[Value]) -> Result<usize, usize> {
        map.binary_search_by(|(k, _)| self.spec.compare(k, key))
    }

    fn one(&mut self, kind: RowKind, row: Row, out: &mut Vec<Change>) -> OpResult<()> {
        self.processed += 1;
        let mut map = self.read_sorted()?;
        let key = self.spec.sort_key(&row);
        if kind.is_accumulate() {
            match self.find(&map, &key) {
                Ok(i) => map[i].1 += 1,
                Err(i) => map.insert(i, (key.clone(), 1)),
            }
            if self.spec.ranked() {
                self.emit_with_rank(&mut map, &key, &row, out)?;
            } else {
                self.emit_without_rank(&mut map, &key, &row, out)?;
            }
            let mut rows = self.rows_of(&key)?.unwrap_or_default();
            rows.push(row);
            self.write_rows(&key, &rows)?;
        } else {
            let removed = if self.spec.ranked() {
                self.retract_with_rank(&mut map, &key, &row, out)?
            } else {
                self.retract_without_rank(&mut map, &key, &row, out)?
            };
            match self.find(&map, &key) {
                Ok(i) if map[i].1 > 1 => map[i].1 -= 1,
                Ok(i) => {
                    map.remove(i);
                }
                Err(_) => self.missing_retractions += 1,
            }
            if !removed {
                if let Some(mut rows) = self.rows_of(&key)? {
                    if let Some(p) = rows.iter().position(|r| r == &row) {
                        rows.remove(p);
                    }
                    self.write_rows(&key, &rows)?;
                }
            }
        }
        self.write_sorted(&map)
    }

    /// The rows of the sort key at `i` of `map`; a key whose rows are gone
    /// (expired) is dropped from `map` and `None` returned.
    fn rows_at(&mut self, map: &mut SortedMap, i: usize) -> OpResult<Option<Vec<Row>>> {
        let rows = self.rows_of(&map[i].0)?;
        if rows.is_none() {
            self.stale_keys += 1;
            map.remove(i);
        }
        Ok(rows)
    }

    fn emit_with_rank(
        &mut self,
        map: &mut SortedMap,
        key: &[Value],
        row: &Row,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        let mut rank = 0u64;
        let mut current = row.clone();
        let mut found = false;
        let mut i = 0;
        while i < map.len() && self.spec.in_rank_end(rank) {
            if !found && self.spec.compare(&map[i].0, key) == Ordering::Equal {
                rank += map[i].1;
                found = true;
            } else if found {
                let Some(rows) = self.rows_at(map, i)? else {
                    continue;
                };
                let mut emit = Emitter {
                    spec: &self.spec,
                    out,
                };
                for previous in rows {
                    if !self.spec.in_rank_end(rank) {
                        break;
                    }
                    emit.update_before_at(&previous, rank);
                    emit.update_after_at(&current, rank);
                    current = previous;
                    rank += 1;
                }
            } else {
                rank += map[i].1;
            }
            i += 1;
        }
        if self.spec.in_rank_end(rank) {
            Emitter {
                spec: &self.spec,
                out,
            }
            .insert_at(&current, rank);
        }
        Ok(())
    }

    fn emit_without_rank(
        &mut self,
        map: &mut SortedMap,
        key: &[Value],
        row: &Row,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        let mut rank = 0u64;
        let mut found = false;
        let mut collect = false;
        let mut delete: Option<Row> = None;
        let mut i = 0;
        while i < map.len() && self.spec.in_rank_end(rank) {
            if !found && self.spec.compare(&map[i].0, key) == Ordering::Equal {
                rank += map[i].1;
                collect = self.spec.in_rank_range(rank);
                found = true;
            } else if found {
                let count = map[i].1;
                let Some(rows) = self.rows_at(map, i)? else {
                    continue;
                };
                let last = rank + count;
                if self.spec.in_rank_end(last) {
                    rank = last;
                } else {
                    delete = rows.into_iter().nth((self.spec.rank_end - rank) as usize);
                    break;
                }
            } else {
                rank += map[i].1;
            }
            i += 1;
        }
        let mut emit = Emitter {
            spec: &self.spec,
            out,
        };
        if let Some(d) = delete {
            emit.delete(&d);
        }
        if collect {
            emit.insert(row);
        }
        Ok(())
    }

    /// Returns whether the row was found (and removed from `data-state`).
    fn retract_with_rank(
        &mut self,
        map: &mut SortedMap,
        key: &[Value],
        row: &Row,
        out: &mut Vec<Change>,
    ) -> OpResult<bool> {
        let mut rank = 0u64;
        let mut previous: Option<Row> = None;
        let mut found = false;
        let mut i = 0;
        while i < map.len() && self.spec.in_rank_end(rank) {
            if !found && self.spec.compare(&map[i].0, key) == Ordering::Equal {
                let Some(mut rows) = self.rows_at(map, i)? else {
                    continue;
                };
                let mut j = 0;
                while j < rows.len() && self.spec.in_rank_end(rank) {
                    if !found && rows[j] == *row {
                        previous = Some(rows.remove(j));
                        found = true;
                    } else {
                        if found {
                            let mut emit = Emitter {
                                spec: &self.spec,
                                out,
                            };
                            let p = previous.as_ref().expect("found");
                            emit.update_before_at(p, rank);
                            emit.update_after_at(&rows[j], rank);
                            previous = Some(rows[j].clone());
                        }
                        j += 1;
                    }
                    rank += 1;
                }
                let k = map[i].0.clone();
                self.write_rows(&k, &rows)?;
            } else if found {
                let Some(rows) = self.rows_at(map, i)? else {
                    continue;
                };
                let mut emit = Emitter {
                    spec: &self.spec,
                    out,
                };
                for r in rows {
                    if !self.spec.in_rank_end(rank) {
                        break;
                    }
                    let p = previous.as_ref().expect("found");
                    emit.update_before_at(p, rank);
                    emit.update_after_at(&r, rank);
                    previous = Some(r);
                    rank += 1;
                }
            } else {
                rank += map[i].1;
            }
            i += 1;
        }
        if found && self.spec.in_rank_end(rank) {
            let p = previous.as_ref().expect("found");
            Emitter {
                spec: &self.spec,
                out,
            }
            .delete_at(p, rank);
        }
        Ok(found)
    }

    /// Returns whether the row was found (and removed from `data-state`).
    fn retract_without_rank(
        &mut self,
        map: &mut SortedMap,
        key: &[Value],
        row: &Row,
        out: &mut Vec<Change>,
    ) -> OpResult<bool> {
        let end = self.spec.rank_end;
        let mut next = 1u64;
        let mut found = false;
        let mut i = 0;
        while i < map.len() && self.spec.in_rank_end(next) {
            if !found && self.spec.compare(&map[i].0, key) == Ordering::Equal {
                let Some(mut rows) = self.rows_at(map, i)? else {
                    continue;
                };
                let mut j = 0;
                while j < rows.len() && self.spec.in_rank_end(next) {
                    let mut emit = Emitter {
                        spec: &self.spec,
                        out,
                    };
                    if !found && rows[j] == *row {
                        emit.delete_at(&rows[j], next);
                        rows.remove(j);
                        next -= 1;
                        found = true;
                    } else {
                        if found && next == end {
                            emit.insert_at(&rows[j], next);
                        }
                        j += 1;
                    }
                    next += 1;
                }
                let k = map[i].0.clone();
                self.write_rows(&k, &rows)?;
            } else if found {
                let count = map[i].1;
                let last = next + count - 1;
                if last < end {
                    next = last + 1;
                } else {
                    let Some(rows) = self.rows_at(map, i)? else {
                        continue;
                    };
                    if let Some(r) = rows.get((end - next) as usize) {
                        Emitter {
                            spec: &self.spec,
                            out,
                        }
                        .insert(r);
                    }
                    break;
                }
            } else {
                next += map[i].1;
            }
            i += 1;
        }
        Ok(found)
    }
}

impl Operator for RetractableTopN {
    fn process(
        &mut self,
        _input: usize,
        batch: Vec<Change>,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        for c in batch {
            self.spec.checked_partition_of(&c.row, &mut self.key_buf)?;
            self.one(c.kind, c.row, out)?;
        }
        Ok(())
    }

    fn state_reports(&self) -> Vec<StateReport> {
        vec![self.sorted.report(), self.data.report()]
    }

    fn snapshot_state(&mut self, image: &mut OperatorImage) -> OpResult<()> {
        image.add_value("sorted-map", &mut self.sorted)?;
        Ok(image.add_map("data-state", &mut self.data)?)
    }

    fn restore_state(
        &mut self,
        image: &OperatorImage,
        owns: &dyn Fn(&[Value]) -> bool,
    ) -> OpResult<()> {
        image.restore_value("sorted-map", &mut self.sorted, owns)?;
        Ok(image.restore_map("data-state", &mut self.data, owns)?)
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("rows_processed", self.processed),
            ("retractions_not_found", self.missing_retractions),
            ("stale_sort_keys", self.stale_keys),
        ]
    }
}
