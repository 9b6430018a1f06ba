//! [`StoreWritingSource`]: a source that writes what it reads into an
//! [`IndexLookupStore`] table before handing it on.
//!
//! In Flink a delta join's sources are Fluss tables: producers write the
//! table, and the join consumes its changelog. The table is therefore
//! always at least as new as what the join has processed, and a lookup may
//! return rows whose own changelog records the join has not seen yet. This
//! wrapper reproduces that: every change of a batch is applied to the store
//! *before* the batch is returned to the executor.
//!
//! `read_ahead` widens the gap: with `read_ahead = n` the wrapper keeps up to
//! `n` further batches read (and written to the store) but not yet returned,
//! as when producers run ahead of a lagging join. With the lab's
//! batch-synchronous executor and `read_ahead = 0`, a batch is written and
//! then pushed through the join before the other source is read, so the two
//! sides never see each other's unprocessed rows; `read_ahead > 0` on both
//! sides makes the duplicates of a delta join appear (see
//! [`super::delta_join`]).

use crate::changelog::Change;
use crate::exec::ChangeSource;
use crate::lookup::{IndexLookupStore, TableId};
use crate::operator::OpResult;
use std::collections::VecDeque;
use std::sync::Arc;

pub struct StoreWritingSource {
    inner: Box<dyn ChangeSource>,
    store: Arc<IndexLookupStore>,
    table: TableId,
    read_ahead: usize,
    /// Batches written to the store, not yet returned.
    pending: VecDeque<Vec<Change>>,
    exhausted: bool,
    written: u64,
}

impl StoreWritingSource {
    /// Wraps `inner`, writing every change it reads into `table`.
    pub fn new(
        inner: Box<dyn ChangeSource>,
        store: Arc<IndexLookupStore>,
        table: TableId,
    ) -> StoreWritingSource {
        StoreWritingSource {
            inner,
            store,
            table,
            read_ahead: 0,
            pending: VecDeque::new(),
            exhausted: false,
            written: 0,
        }
    }

    /// Reads (and writes to the store) up to `batches` batches ahead of what
    /// it returns.
    pub fn with_read_ahead(mut self, batches: usize) -> StoreWritingSource {
        self.read_ahead = batches;
        self
    }

    /// Changes written to the store so far.
    pub fn written(&self) -> u64 {
        self.written
    }
}

impl ChangeSource for StoreWritingSource {
    fn next_batch(&mut self, max: usize, out: &mut Vec<Change>) -> OpResult<usize> {
        while !self.exhausted && self.pending.len() <= self.read_ahead {
            let mut batch = Vec::with_capacity(max);
            let n = self.inner.next_batch(max, &mut batch)?;
            if n == 0 {
                self.exhausted = true;
                break;
            }
            self.store.apply_all(self.table, &batch)?;
            self.written += batch.len() as u64;
            self.pending.push_back(batch);
        }
        match self.pending.pop_front() {
            Some(batch) => {
                let n = batch.len();
                out.extend(batch);
                Ok(n)
            }
            None => Ok(0),
        }
    }
}
