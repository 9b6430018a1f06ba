//! Giving processed input batches back to the thread that read them.
//!
//! A read-ahead source allocates its rows on its own thread; an operator
//! that only reads them would free them on the job's thread. A free from
//! another thread is the slow path of the allocator, and meanwhile the
//! reader keeps taking fresh pages. So an operator done with its input
//! batch hands it to [`give_back`]: while the job's thread runs the one
//! subtask of a stage fed straight by the job's only read-ahead source,
//! the batch travels back to that reader, which frees the rows and reuses
//! the batch's buffer; otherwise (rows made by an upstream operator,
//! several readers, a subtask on a `rayon` worker) it is simply dropped.
//! Only where memory is freed changes, never what the job computes.

use crate::changelog::Change;
use std::cell::RefCell;
use std::sync::mpsc::{Receiver, Sender};

/// Buffers a reader keeps for reuse at most.
const SPARE_BATCHES: usize = 64;

thread_local! {
    static RETURN: RefCell<Option<Sender<Vec<Change>>>> = const { RefCell::new(None) };
}

/// Hands a processed input batch back to its reader, or drops it.
pub fn give_back(batch: Vec<Change>) {
    if batch.is_empty() && batch.capacity() == 0 {
        return;
    }
    RETURN.with_borrow(|tx| match tx {
        Some(tx) => {
            // A reader that already stopped drops nothing: the send fails
            // and the batch is dropped here.
            let _ = tx.send(batch);
        }
        None => drop(batch),
    });
}

/// Routes this thread's [`give_back`] calls to `tx` until [`route_none`]
/// (the executor, for its reader; a bench, to time an operator as the
/// job's thread runs it).
pub fn route_to(tx: Sender<Vec<Change>>) {
    RETURN.set(Some(tx));
}

pub fn route_none() {
    RETURN.set(None);
}

/// The reader's side: batches given back, emptied here (freeing their
/// rows on the thread that allocated them), ready to be filled again.
pub(crate) struct Returned {
    rx: Receiver<Vec<Change>>,
    spare: Vec<Vec<Change>>,
}

impl Returned {
    pub(crate) fn new(rx: Receiver<Vec<Change>>) -> Returned {
        Returned {
            rx,
            spare: Vec::new(),
        }
    }

    /// An empty batch buffer: a returned one, or a new one for `max` rows.
    pub(crate) fn batch(&mut self, max: usize) -> Vec<Change> {
        while let Ok(mut b) = self.rx.try_recv() {
            if self.spare.len() < SPARE_BATCHES {
                b.clear();
                self.spare.push(b);
            }
        }
        self.spare.pop().unwrap_or_else(|| Vec::with_capacity(max))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_goes_back_only_while_routed() {
        let (tx, rx) = std::sync::mpsc::channel();
        let mut returned = Returned::new(rx);
        route_to(tx);
        let mut batch = Vec::with_capacity(16);
        batch.push(Change::insert(vec![crate::value::Value::Int(1)]));
        let buffer = batch.as_ptr();
        give_back(batch);
        route_none();
        let again = returned.batch(4);
        assert!(again.is_empty());
        assert_eq!(again.as_ptr(), buffer, "the buffer is reused");
        // Not routed: dropped here, nothing arrives.
        give_back(vec![Change::insert(vec![])]);
        assert!(returned.batch(4).capacity() >= 4);
        assert!(returned.spare.is_empty());
    }
}
