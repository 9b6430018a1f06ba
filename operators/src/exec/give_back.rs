//! Batches going back to the thread that read them.
//!
//! A read-ahead source allocates its rows on its own thread; an operator
//! that only reads them would free them on the job's thread. A free from
//! another thread is the slow path of the allocator, and meanwhile the
//! reader keeps taking fresh pages. So the executor lends a batch to an
//! operator that only reads it (the ownership contract of `operator.rs`)
//! and, when the job's only read-ahead source fed it whole to a stage of
//! one subtask, sends it back to that reader, which frees the rows and
//! reuses the batch's buffer; any other lent batch is dropped where it was
//! processed. Only where memory is freed changes, never what the job
//! computes.

use crate::changelog::Change;
use std::sync::mpsc::Receiver;

/// Buffers a reader keeps for reuse at most.
const SPARE_BATCHES: usize = 64;

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
    fn a_batch_sent_back_is_reused_emptied() {
        let (tx, rx) = std::sync::mpsc::channel();
        let mut returned = Returned::new(rx);
        let mut batch = Vec::with_capacity(16);
        batch.push(Change::insert(vec![crate::value::Value::Int(1)]));
        let buffer = batch.as_ptr();
        tx.send(batch).unwrap();
        let again = returned.batch(4);
        assert!(again.is_empty());
        assert_eq!(again.as_ptr(), buffer, "the buffer is reused");
        // Nothing sent back: a new buffer.
        assert!(returned.batch(4).capacity() >= 4);
        assert!(returned.spare.is_empty());
    }
}
