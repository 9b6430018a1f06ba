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
use crate::value::Value;

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
                // The kept rows, back to back.
                let mut kept = slot.take().unwrap_or_default();
                let n = kept.len() / arity;
                if c.kind.is_accumulate() {
                    let kind = if n == 0 {
                        RowKind::Insert
                    } else {
                        RowKind::UpdateAfter
                    };
                    kept.extend_from_slice(&c.row);
                    out.push(Change::new(kind, c.row));
                } else {
                    match kept.chunks(arity).position(|r| *r == c.row[..]) {
                        None => *unmatched += 1,
                        Some(i) => {
                            kept.drain(i * arity..(i + 1) * arity);
                            if kept.is_empty() {
                                out.push(Change::new(RowKind::Delete, c.row));
                            } else if i == n - 1 {
                                let last = kept[kept.len() - arity..].to_vec();
                                out.push(Change::new(RowKind::UpdateAfter, last));
                            }
                        }
                    }
                }
                if !kept.is_empty() {
                    *slot = Some(kept);
                }
            })?;
        }
        Ok(())
    }

    fn snapshot_state(&mut self, image: &mut crate::checkpoint::OperatorImage) -> OpResult<()> {
        Ok(image.add_value("values", &mut self.values)?)
    }

    fn restore_state(
        &mut self,
        image: &crate::checkpoint::OperatorImage,
        owns: &dyn Fn(&[Value]) -> bool,
    ) -> OpResult<()> {
        Ok(image.restore_value("values", &mut self.values, owns)?)
    }
    fn state_reports(&self) -> Vec<StateReport> {
        vec![self.values.report()]
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("unmatched_retractions", self.unmatched)]
    }
}
