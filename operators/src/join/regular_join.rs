//! `Join`: the binary regular join, INNER, LEFT, RIGHT and FULL, one record
//! at a time.
//!
//! Semantics: both inputs are kept in state (see [`super::join_state`]), so
//! at any point the emitted changelog materialises to the batch join of the
//! inputs seen so far: an accumulated row joins every stored row of the
//! other side with the same key that satisfies the residual condition, and
//! a retracted row retracts exactly those pairs. On an outer side (left for
//! LEFT, right for RIGHT, both for FULL) a row's number of matches
//! ("associations") decides when its NULL-padded row appears (no matches)
//! and disappears (first match).
//!
//! Emission follows Flink's `StreamingJoinOperator` (the synchronous one):
//! an INNER join forwards the input's row kind; an outer join emits `+I`
//! and `-D`, except a retraction on a side that is not outer, which keeps
//! its kind. Order per input record (`pad` = the row with NULLs for the
//! other side, in left-right order):
//! - accumulate: for each matched row of the other side, if that side is
//!   outer and the row had no match yet, `-D[pad(other)]`; then, if nothing
//!   matches and the input side is outer, `+I[pad(row)]`, else the joined
//!   rows;
//! - retract: if nothing matches and the input side is outer,
//!   `-D[pad(row)]`; else the joined rows (`-D` on an outer input side, the
//!   input kind otherwise), then, if the other side is outer, for each
//!   matched row that loses its last match `+I[pad(other)]`.
//!
//! Rows whose join key contains NULL match nothing (SQL equality).
//!
//! Mechanics: each record's key is read off the row and the record joined
//! by [`super::join_core`], which the mini-batch join shares.
//!
//! Asynchronous state execution ([`RegularJoinOperator::with_async_state`],
//! [`super::join_async_state`]): still one record at a time, with each
//! input batch's keys loaded for both sides at once and the changed
//! entries written together at the end; the changelog is the same.

use super::join_async_state;
use super::join_core::JoinCore;
use super::join_spec::JoinSpec;
use crate::changelog::Change;
use crate::checkpoint::OperatorImage;
use crate::operator::{OpResult, Operator};
use crate::state::{StateBackend, StateReport};
use crate::value::Value;

pub struct RegularJoinOperator {
    core: JoinCore,
    /// Join key columns of the left and the right input.
    keys: [Vec<usize>; 2],
    key_buf: Vec<Value>,
    async_state: bool,
}

impl RegularJoinOperator {
    pub fn new(
        backend: &StateBackend,
        scope: &str,
        spec: JoinSpec,
    ) -> OpResult<RegularJoinOperator> {
        let keys = [spec.left_keys.clone(), spec.right_keys.clone()];
        Ok(RegularJoinOperator {
            core: JoinCore::new(backend, scope, spec)?,
            keys,
            key_buf: Vec::new(),
            async_state: false,
        })
    }

    /// One record at a time with Flink's asynchronous state execution
    /// (`table.exec.async-state.enabled`): each input batch's join keys
    /// are read for both sides up front and the changes written at the
    /// end ([`super::join_async_state`]). On the heap and with a TTL it
    /// changes nothing.
    pub fn with_async_state(mut self) -> RegularJoinOperator {
        self.async_state = true;
        self
    }
}

impl Operator for RegularJoinOperator {
    fn process(&mut self, input: usize, batch: Vec<Change>, out: &mut Vec<Change>) -> OpResult<()> {
        if self.async_state {
            return join_async_state::apply_batch(
                &mut self.core,
                &self.keys[input],
                input,
                batch,
                out,
            );
        }
        let keys = &self.keys[input];
        let mut key = std::mem::take(&mut self.key_buf);
        let mut result = Ok(());
        for c in batch {
            key.clear();
            key.extend(keys.iter().map(|&i| c.row[i].clone()));
            // The record's row goes into state (when accumulated) rather
            // than a copy of it.
            result = self.core.join_one_owned(input, &key, c, out);
            if result.is_err() {
                break;
            }
        }
        self.key_buf = key;
        result
    }

    fn state_reports(&self) -> Vec<StateReport> {
        self.core.state_reports()
    }

    fn snapshot_state(&mut self, image: &mut OperatorImage) -> OpResult<()> {
        self.core.snapshot(image)
    }

    fn restore_state(
        &mut self,
        image: &OperatorImage,
        owns: &dyn Fn(&[Value]) -> bool,
    ) -> OpResult<()> {
        self.core.restore(image, owns)
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("rows_visited", self.core.rows_visited)]
    }
}
