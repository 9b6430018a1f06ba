//! `ROW_NUMBER() OVER (PARTITION BY .. ORDER BY ..)` filtered to its first
//! rows, as Flink runs it: deduplication (`rn = 1` ordered by a time
//! attribute) in [`deduplicate`], Top-N (`rn <= N` ordered by anything) in
//! [`fast_top1`] (insert-only input, `N = 1`), [`append_only_topn`]
//! (insert-only input), [`updatable_topn`] (updates
//! that only move rows up) and [`retractable_topn`] (any input), over what
//! they share in [`topn`].

pub mod append_only_topn;
pub mod deduplicate;
pub mod fast_top1;
pub mod retractable_topn;
pub mod topn;
pub mod updatable_topn;
