//! Heap state set aside when its handle drops, freed later.
//!
//! Freeing a finished job's heap state visits every stored row (a row's
//! strings may own memory) and gives back every allocation: at 1.8M rows
//! that is a tenth of a `lab run`, spent after the job and before the
//! report, on memory the process is about to return whole. With parking on
//! ([`park_dropped_state`], which `lab run` sets), a heap handle's tables
//! move here when the handle drops, and are freed by [`release_parked`]
//! (which the next run calls before it builds its job, so memory peaks as
//! before) or not at all when the process ends first.
//!
//! Only heap tables are parked: they are memory and nothing else. Whatever
//! else a job holds (RocksDB and its directory, files, writers) drops as
//! before.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

static PARKING: AtomicBool = AtomicBool::new(false);
static PARKED: Mutex<Vec<Box<dyn Send>>> = Mutex::new(Vec::new());

/// Parks the heap tables of handles dropped from now on (`true`), or frees
/// them as they drop (`false`, the default).
pub fn park_dropped_state(on: bool) {
    PARKING.store(on, Ordering::Relaxed);
}

/// Frees the parked tables.
pub fn release_parked() {
    let parked = std::mem::take(&mut *PARKED.lock().unwrap_or_else(|p| p.into_inner()));
    drop(parked);
}

/// Parks `tables` if parking is on; otherwise they drop here.
pub(crate) fn park<T: Send + 'static>(tables: T) {
    if PARKING.load(Ordering::Relaxed) {
        PARKED
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Box::new(tables));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn parked_tables_live_until_released() {
        let probe = Arc::new(());
        park_dropped_state(true);
        park(probe.clone());
        park_dropped_state(false);
        assert_eq!(Arc::strong_count(&probe), 2);
        park(probe.clone());
        assert_eq!(Arc::strong_count(&probe), 2, "not parked when off");
        release_parked();
        assert_eq!(Arc::strong_count(&probe), 1);
    }
}
