//! The regular join with Flink 2.x's asynchronous state execution
//! (`table.exec.async-state.enabled`, Flink's
//! `AsyncStateStreamingJoinOperator`): records are still joined one at a
//! time, in their order, so the changelog is exactly the
//! one-record-at-a-time changelog; only the state accesses are batched.
//!
//! For each input batch the distinct join keys it touches are loaded for
//! both sides at once into a per-batch image
//! ([`crate::state::rocksdb::StateImage`]): the input side's own state
//! (where its rows go) and the other side's (which its rows join, and
//! whose associations an outer join changes), a value-state layout with
//! one `MultiGet`, a map layout with one sorted pass of a single
//! iterator. The records are then joined in order against the images (a
//! later record of a key sees what earlier ones left, the other side's
//! association changes included), and at the end every changed entry of
//! both sides is written in one `WriteBatch`. A key holding NULL joins
//! nothing, so the other side does not load it.
//!
//! Counters: per batch and side, one read per distinct key of a value
//! state, and a scan's reads (one per entry met, one for a key without
//! entries) per distinct key of a map state; one write or delete per
//! changed entry. On the heap and with a TTL the join goes one record at
//! a time, as without asynchronous state (as the group aggregate does).

use super::join_core::JoinCore;
use crate::changelog::Change;
use crate::operator::OpResult;
use crate::state::heap::fixed_state;
use crate::state::rocksdb::ImageWrites;
use crate::value::{Row, Value};

/// Joins `batch` of input `side` (join key columns `key_cols`) one record
/// at a time against per-batch images of both sides' state.
pub(crate) fn apply_batch(
    core: &mut JoinCore,
    key_cols: &[usize],
    side: usize,
    batch: Vec<Change>,
    out: &mut Vec<Change>,
) -> OpResult<()> {
    let keys: Vec<Row> = batch
        .iter()
        .map(|c| key_cols.iter().map(|&i| c.row[i].clone()).collect())
        .collect();
    {
        let sides = core.sides_mut();
        if sides.iter().all(|s| s.keeps_images()) {
            // The distinct keys in order of first use.
            let mut seen: hashbrown::HashSet<&[Value], _> =
                hashbrown::HashSet::with_capacity_and_hasher(keys.len(), fixed_state());
            let distinct: Vec<&[Value]> = keys
                .iter()
                .map(Vec::as_slice)
                .filter(|k| seen.insert(k))
                .collect();
            let joinable: Vec<&[Value]> = distinct
                .iter()
                .copied()
                .filter(|k| !k.iter().any(Value::is_null))
                .collect();
            sides[side].begin_batch(&distinct)?;
            sides[1 - side].begin_batch(&joinable)?;
        }
    }
    let mut result = Ok(());
    for (c, key) in batch.into_iter().zip(&keys) {
        result = core.join_one_owned(side, key, c, out);
        if result.is_err() {
            break;
        }
    }
    let sides = core.sides_mut();
    match result {
        Ok(()) => {
            let mut writes = ImageWrites::new();
            sides[side].end_batch(&mut writes)?;
            sides[1 - side].end_batch(&mut writes)?;
            Ok(writes.commit()?)
        }
        Err(e) => {
            sides[0].discard_batch();
            sides[1].discard_batch();
            Err(e)
        }
    }
}
