//! `ROW_NUMBER() OVER (PARTITION BY .. ORDER BY ..)` filtered to its first
//! rows, as Flink runs it: deduplication (`rn = 1` ordered by a time
//! attribute) in [`deduplicate`].

pub mod deduplicate;
