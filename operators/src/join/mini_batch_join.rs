//! `MiniBatchJoin`: the binary regular join, INNER, LEFT, RIGHT and FULL, fed a folded
//! bundle of each input at a time (Flink's `MiniBatchStreamingJoinOperator`).
//!
//! Semantics: the same as [`super::regular_join`]. Both inputs are kept in
//! state, and at every bundle boundary the emitted changelog materialises to
//! the batch join of the inputs seen so far: every row of one side paired
//! with every row of the other that has the same (non-NULL) key and
//! satisfies the residual condition, and each row of an outer side (left
//! for LEFT, right for RIGHT, both for FULL) without such a partner once,
//! padded with NULLs. Between boundaries
//! nothing is emitted for records still buffered. What differs from the
//! one-record-at-a-time join is only which changelog rows say it, and fewer
//! of them:
//! - records that cancel within a bundle emit nothing: `+I` then `-D` of
//!   one row; on a side with a unique key, successive updates of that key
//!   reduce to the retraction of the row held before the bundle and the
//!   row held after it ("three updates of one key emit only the last");
//!   without a unique key, equal rows are counted and opposite copies
//!   cancel (see [`super::join_bundle`] for the exact folding rules);
//! - a retraction directly followed by its accumulate (the `-U`/`+U` of one
//!   key left after folding) is joined as one update: when the other side
//!   is outer, an outer row that the old row matched and the new row
//!   matches again keeps its NULL-padded row retracted, so the
//!   `+I[left+NULL]`/`-D[left+NULL]` that the regular join emits between
//!   the `-U` and the `+U` (Flink's `isSuppress`) are not emitted. An outer
//!   row that the old row matched and the new one does not (the residual
//!   condition can tell them apart) still gets its `+I[left+NULL]`, and one
//!   that only the new row matches its `-D[left+NULL]`: Flink's operator
//!   assumes both rows have the same matches, which is only true for a
//!   pure equi-join, and would lose or keep a padded row there. On the
//!   outer input itself the pair still emits `-D[old+NULL]`/`+I[new+NULL]`
//!   (or the joined rows): those are different rows, not redundant ones.
//!
//! Emission per record is that of Flink's `StreamingJoinOperator`, as in
//! the regular join (INNER forwards the input's row kind; an outer join
//! emits `+I` and `-D`, except that a retraction on a non-outer side keeps
//! its kind), so
//! a bundle of one record emits exactly what the regular join emits.
//!
//! Mechanics:
//! - each input is buffered in a [`JoinBundle`] shaped like the side's state
//!   layout and folded as records arrive;
//! - a bundle closes when the records buffered on both sides together reach
//!   the bundle size (`table.exec.mini-batch.size`; raw records, before
//!   folding, as Flink's `CountCoBundleTrigger` counts), when the executor's
//!   latency trigger calls [`Operator::finish_bundle`], and at end of input;
//! - on close the folded right bundle is joined first, then the left one,
//!   for INNER, LEFT and FULL joins; for a RIGHT join the left one first:
//!   Flink's orders (`MiniBatchInnerJoinStreamOperator`,
//!   `MiniBatchLeftOuterJoinStreamOperator`, `MiniBatchFullOuterJoinStreamOperator`,
//!   `MiniBatchRightOuterJoinStreamOperator`), which spare an outer row that
//!   arrives with its first match the padded `+I`/`-D` pair;
//! - within a side, entries go by join key in order of first arrival (Flink
//!   iterates hash maps; this order is deterministic); each record goes
//!   through the regular join's logic against the state, a pair through the
//!   same logic with the suppression above (both in [`super::join_core`]).
//!
//! State accesses per pair: one scan of the other side's rows under the key
//! (shared by the two records, the residual evaluated for each), no
//! retraction from the input side's state (the accumulate overwrites the
//! same entry), and no association update for outer rows both records
//! match (their count of matches is unchanged). A single record costs what
//! it costs in the regular join.
//!
//! Counters: `rows_visited` (other-side rows scanned), `bundles` (closed
//! non-empty bundles), `bundle_records` (records buffered), `folded_records`
//! (records that folding removed), `update_pairs` (retraction/accumulate
//! pairs joined as one), `suppressed_rows` (NULL-padded rows not emitted).
//!
//! Rows whose join key contains NULL match nothing (SQL equality).

use super::join_bundle::JoinBundle;
use super::join_core::JoinCore;
use super::join_spec::{JoinSpec, JoinType};
use crate::changelog::Change;
use crate::operator::{OpResult, Operator};
use crate::state::{StateBackend, StateReport};

pub struct MiniBatchJoinOperator {
    core: JoinCore,
    bundles: [JoinBundle; 2],
    bundle_size: usize,
    buffered: usize,
    bundles_closed: u64,
    bundle_records: u64,
    folded_records: u64,
    update_pairs: u64,
}

impl MiniBatchJoinOperator {
    /// A mini-batch join whose bundles close every `bundle_size` records
    /// (both inputs together; at least 1). State names and layouts are those
    /// of [`super::RegularJoinOperator`].
    pub fn new(
        backend: &StateBackend,
        scope: &str,
        spec: JoinSpec,
        bundle_size: usize,
    ) -> OpResult<MiniBatchJoinOperator> {
        let bundles = [
            JoinBundle::new(spec.left_layout.clone(), spec.left_keys.clone()),
            JoinBundle::new(spec.right_layout.clone(), spec.right_keys.clone()),
        ];
        Ok(MiniBatchJoinOperator {
            core: JoinCore::new(backend, scope, spec)?,
            bundles,
            bundle_size: bundle_size.max(1),
            buffered: 0,
            bundles_closed: 0,
            bundle_records: 0,
            folded_records: 0,
            update_pairs: 0,
        })
    }

    pub fn spec(&self) -> &JoinSpec {
        &self.core.spec
    }

    pub fn bundle_size(&self) -> usize {
        self.bundle_size
    }

    /// Records buffered in the open bundle (both sides, before folding).
    pub fn buffered(&self) -> usize {
        self.buffered
    }

    /// Joins both folded bundles (right, then left) and empties them.
    fn close_bundle(&mut self, out: &mut Vec<Change>) -> OpResult<()> {
        if self.buffered == 0 {
            return Ok(());
        }
        self.buffered = 0;
        self.bundles_closed += 1;
        let order = if self.core.spec.join_type == JoinType::Right {
            [0, 1]
        } else {
            [1, 0]
        };
        for side in order {
            let bundle = &mut self.bundles[side];
            self.folded_records += (bundle.len() - bundle.kept()) as u64;
            let pairs = bundle.pairs_updates();
            for entry in bundle.drain() {
                let key = &entry.join_key;
                // The bundle's records are the operator's: an accumulated
                // row that is not half of a pair goes into state itself.
                let mut records = entry.records.into_iter().peekable();
                while let Some(c) = records.next() {
                    let pair = pairs
                        && c.kind.is_retract()
                        && records.peek().is_some_and(|n| n.kind.is_accumulate());
                    if pair {
                        let n = records.next().expect("peeked");
                        self.update_pairs += 1;
                        self.core.join(side, key, Some(&c), Some(&n), out)?;
                    } else {
                        self.core.join_one_owned(side, key, c, out)?;
                    }
                }
            }
        }
        Ok(())
    }
}

impl Operator for MiniBatchJoinOperator {
    fn process(&mut self, input: usize, batch: Vec<Change>, out: &mut Vec<Change>) -> OpResult<()> {
        for c in batch {
            self.bundles[input].add(c);
            self.buffered += 1;
            self.bundle_records += 1;
            if self.buffered >= self.bundle_size {
                self.close_bundle(out)?;
            }
        }
        Ok(())
    }

    fn finish_bundle(&mut self, out: &mut Vec<Change>) -> OpResult<()> {
        self.close_bundle(out)
    }

    fn buffered(&self) -> usize {
        self.buffered
    }

    fn state_reports(&self) -> Vec<StateReport> {
        self.core.state_reports()
    }

    fn snapshot_state(&mut self, image: &mut crate::checkpoint::OperatorImage) -> OpResult<()> {
        crate::checkpoint::image::closed_bundle(self.buffered)?;
        self.core.snapshot(image)
    }

    fn restore_state(
        &mut self,
        image: &crate::checkpoint::OperatorImage,
        owns: &dyn Fn(&[crate::value::Value]) -> bool,
    ) -> OpResult<()> {
        self.core.restore(image, owns)
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("rows_visited", self.core.rows_visited),
            ("bundles", self.bundles_closed),
            ("bundle_records", self.bundle_records),
            ("folded_records", self.folded_records),
            ("update_pairs", self.update_pairs),
            ("suppressed_rows", self.core.suppressed_rows),
        ]
    }
}
