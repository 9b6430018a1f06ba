//! A group aggregate with Flink 2.x's asynchronous state execution
//! (`table.exec.async-state.enabled`, Flink's `AsyncStateGroupAggFunction`):
//! records are still applied one at a time, in their order, so the
//! changelog is exactly the one-record-at-a-time changelog; only the state
//! accesses are batched. Each input batch's keys are read up front, the
//! distinct ones with one `MultiGet`, the records applied in order to the
//! rows read (a key's later record sees what its earlier one left), and
//! every key written once at the end in one `WriteBatch`
//! ([`ValueState::modify_in_order`]). Unlike mini-batch, nothing is folded:
//! a key with three records in a batch emits three changes.
//!
//! Counters: one read per distinct key per batch, and at most one write or
//! delete per distinct key per batch; against one record at a time, the
//! reads saved are the records minus the distinct keys of each batch.
//! On the heap (and with a TTL) the state applies the records one at a
//! time, as one record at a time does.

use super::fold::Fold;
use crate::changelog::Change;
use crate::operator::OpResult;
use crate::state::ValueState;
use crate::value::Value;

/// Applies `batch` to `state` in order, one record at a time, with the
/// batch's keys read and written together.
pub(crate) fn apply_batch(
    state: &mut ValueState,
    fold: &mut Fold,
    group_key: &[usize],
    key_buf: &mut Vec<Value>,
    batch: &[Change],
    out: &mut Vec<Change>,
) -> OpResult<()> {
    let results = match group_key {
        // A one-column key is read in place, without a copy.
        [k] => {
            let keys: Vec<&[Value]> = batch
                .iter()
                .map(|c| std::slice::from_ref(&c.row[*k]))
                .collect();
            state.modify_in_order(&keys, |i, slot| {
                fold.rows(keys[i], slot, std::iter::once(&batch[i]), out)
            })?
        }
        _ => {
            let width = group_key.len();
            key_buf.clear();
            for c in batch {
                key_buf.extend(group_key.iter().map(|&i| c.row[i].clone()));
            }
            let keys: Vec<&[Value]> = if width == 0 {
                vec![&[]; batch.len()]
            } else {
                key_buf.chunks(width).collect()
            };
            state.modify_in_order(&keys, |i, slot| {
                fold.rows(keys[i], slot, std::iter::once(&batch[i]), out)
            })?
        }
    };
    results.into_iter().collect()
}
