//! `SinkUpsertMaterializer`: turns a changelog into upserts on the sink's
//! primary key when the query's unique key is a different one (Flink's
//! operator of that name, which `table.exec.sink.upsert-materialize`
//! inserts).
//!
//! Semantics: for each primary-key value the operator keeps the rows the
//! sink was given that have not been retracted, in arrival order; the
//! sink's row for the key is the last of them. So when the query's result
//! holds at most one row per primary key (the user's promise when they
//! declare it), the sink materialises exactly that result, whatever order
//! the query's updates of different unique keys arrive in.
//!
//! Emission, as Flink's:
//! - `+I`/`+U` of a row: appended to the kept rows; emitted as `+I` when
//!   nothing was kept for the key, else `+U`;
//! - `-U`/`-D` of a row: the first kept row equal to it is removed; if
//!   none is left, `-D` of the retracted row; if it was the last one, `+U`
//!   of the new last row; otherwise nothing. A retraction that matches no
//!   kept row is dropped (Flink logs it).
//!
//! So the sink's row for a key is always the last kept row. Rows compare
//! on every column: Flink compares on the input's upsert key when it has
//! one, for inputs without `-U`; the lab's input always carries `-U`, and
//! a unique key is not enough (an update that changes a join key reaches
//! this operator from two join subtasks, its `+U` possibly first).
//!
//! State: one value per primary key, the kept rows flattened
//! (`arity` values each); one read and one write (or delete) per record.

use crate::changelog::{Change, RowKind};
use crate::operator::{OpResult, Operator};
use crate::state::{StateBackend, StateReport, ValueState};
use crate::value::{Row, Value};

pub struct SinkUpsertMaterializer {
    primary_key: Vec<usize>,
    arity: usize,
    values: ValueState,
    key_buf: Vec<Value>,
    /// Retractions that matched no kept row.
    unmatched: u64,
}

impl SinkUpsertMaterializer {
    pub fn new(
        backend: &StateBackend,
        scope: &str,
        primary_key: Vec<usize>,
        arity: usize,
    ) -> OpResult<SinkUpsertMaterializer> {
        Ok(SinkUpsertMaterializer {
            primary_key,
            arity,
            values: backend.value_state(scope, "values", arity)?,
            key_buf: Vec::new(),
            unmatched: 0,
        })
    }
}

impl Operator for SinkUpsertMaterializer {
    fn process(
        &mut self,
        _input: usize,
        batch: Vec<Change>,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        let arity = self.arity.max(1);
        for c in batch {
            self.key_buf.clear();
            self.key_buf
                .extend(self.primary_key.iter().map(|&i| c.row[i].clone()));
            let unmatched = &mut self.unmatched;
            self.values.modify(&self.key_buf, |slot| {
                let mut rows: Vec<Row> = slot
                    .take()
                    .map(|flat| flat.chunks(arity).map(<[Value]>::to_vec).collect())
                    .unwrap_or_default();
                if c.kind.is_accumulate() {
                    let kind = if rows.is_empty() {
                        RowKind::Insert
                    } else {
                        RowKind::UpdateAfter
                    };
                    rows.push(c.row.clone());
                    out.push(Change::new(kind, c.row));
                } else {
                    match rows.iter().position(|r| *r == c.row) {
                        None => *unmatched += 1,
                        Some(i) => {
                            let last = rows.len() - 1;
                            rows.remove(i);
                            match rows.last() {
                                None => out.push(Change::new(RowKind::Delete, c.row)),
                                Some(r) if i == last => {
                                    out.push(Change::new(RowKind::UpdateAfter, r.clone()))
                                }
                                Some(_) => {}
                            }
                        }
                    }
                }
                if !rows.is_empty() {
                    *slot = Some(rows.concat());
                }
            })?;
        }
        Ok(())
    }

    fn state_reports(&self) -> Vec<StateReport> {
        vec![self.values.report()]
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("unmatched_retractions", self.unmatched)]
    }
}
