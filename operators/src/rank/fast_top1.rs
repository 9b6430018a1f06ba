//! Top-1 over an insert-only input (Flink's `FastTop1Function`, which
//! Flink 2.x runs for `AppendFastStrategy` with `rn = 1` / `rn <= 1`):
//! one row per partition key, replaced by a row whose sort key is
//! strictly better, so a tie keeps the row that came first (`ROW_NUMBER`).
//!
//! What it emits: `+I` of a partition's first row; then, for a better row,
//! `-U` of the row it replaces (when `-U` is asked for) and `+U` of the new
//! one: the partition key is the result's unique key, so a new winner is
//! an update, not the `-D`/`+I` pair of [`super::append_only_topn`]. With
//! the rank output it is always 1. Nothing is ever deleted.
//!
//! State, per partition key: `Top1-Rank-State`, the winning row. Flink
//! keeps winners in an LRU cache of `table.exec.rank.topn-cache-size`
//! partitions and writes them to the state when evicted or at a
//! checkpoint; the lab writes each new winner through (so a checkpoint
//! holds the state alone, and a restored operator starts with an empty
//! cache) and reads a partition from the state
//! only when it is not in the cache (off with a TTL: the state decides
//! what has expired).
//!
//! Counters: rows processed, rows that became a winner, cache requests
//! and hits (Flink's `topn.cache.hitRate`).

use super::topn::{Emitter, TopNSpec};
use crate::changelog::{Change, RowKind};
use crate::checkpoint::OperatorImage;
use crate::lookup::LruCache;
use crate::operator::{OpError, OpResult, Operator};
use crate::state::{StateBackend, StateReport, ValueState};
use crate::value::{Row, Value};
use std::cmp::Ordering;

pub struct FastTop1 {
    spec: TopNSpec,
    winners: ValueState,
    cache: LruCache<Row, Row>,
    key_buf: Row,
    processed: u64,
    entered: u64,
    requests: u64,
    hits: u64,
}

impl FastTop1 {
    /// A Top-1: the spec's range must be `1..=1`; `cache_size` partitions'
    /// winners are kept on the heap.
    pub fn new(
        backend: &StateBackend,
        scope: &str,
        spec: TopNSpec,
        cache_size: u64,
    ) -> OpResult<FastTop1> {
        spec.check().map_err(OpError::Spec)?;
        if (spec.rank_start, spec.rank_end) != (1, 1) {
            return Err(OpError::Spec(format!(
                "a Top-1 keeps rank 1 only, not {}..={}",
                spec.rank_start, spec.rank_end
            )));
        }
        let capacity = if spec.ttl_enabled {
            0
        } else {
            cache_size.max(1) as usize
        };
        Ok(FastTop1 {
            winners: backend.value_state(scope, "Top1-Rank-State", spec.arity)?,
            spec,
            cache: LruCache::new(capacity),
            key_buf: Row::new(),
            processed: 0,
            entered: 0,
            requests: 0,
            hits: 0,
        })
    }

    /// The current winner of the partition in `key_buf`.
    fn winner(&mut self) -> OpResult<Option<Row>> {
        self.requests += 1;
        if let Some(row) = self.cache.get(&self.key_buf) {
            self.hits += 1;
            return Ok(Some(row.clone()));
        }
        Ok(self.winners.get(&self.key_buf)?)
    }

    fn one(&mut self, row: Row, out: &mut Vec<Change>) -> OpResult<()> {
        self.processed += 1;
        let previous = self.winner()?;
        let better = match &previous {
            None => true,
            Some(p) => {
                let (new, old) = (self.spec.sort_key(&row), self.spec.sort_key(p));
                self.spec.compare(&new, &old) == Ordering::Less
            }
        };
        if !better {
            if let Some(p) = previous {
                self.cache.put(self.key_buf.clone(), p);
            }
            return Ok(());
        }
        self.entered += 1;
        self.winners.put(&self.key_buf, row.clone())?;
        let mut emit = Emitter {
            spec: &self.spec,
            out,
        };
        match &previous {
            None => emit.insert_at(&row, 1),
            Some(p) => {
                emit.update_before_at(p, 1);
                emit.update_after_at(&row, 1);
            }
        }
        self.cache.put(self.key_buf.clone(), row);
        Ok(())
    }
}

impl Operator for FastTop1 {
    fn process(
        &mut self,
        _input: usize,
        batch: Vec<Change>,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        for c in batch {
            if c.kind != RowKind::Insert {
                return Err(OpError::Record(format!(
                    "an append-only Top-1 takes an insert-only input, got {c}"
                )));
            }
            self.spec.checked_partition_of(&c.row, &mut self.key_buf)?;
            self.one(c.row, out)?;
        }
        Ok(())
    }

    fn state_reports(&self) -> Vec<StateReport> {
        vec![self.winners.report()]
    }

    fn snapshot_state(&mut self, image: &mut OperatorImage) -> OpResult<()> {
        Ok(image.add_value("Top1-Rank-State", &mut self.winners)?)
    }

    fn restore_state(
        &mut self,
        image: &OperatorImage,
        owns: &dyn Fn(&[Value]) -> bool,
    ) -> OpResult<()> {
        Ok(image.restore_value("Top1-Rank-State", &mut self.winners, owns)?)
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("rows_processed", self.processed),
            ("rows_entered_top", self.entered),
            ("cache_requests", self.requests),
            ("cache_hits", self.hits),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rank::topn::SortField;
    use crate::value::Value;

    fn op(generate_update_before: bool, output_rank_number: bool) -> FastTop1 {
        FastTop1::new(
            &StateBackend::heap(),
            "t",
            TopNSpec {
                partition_key: vec![0],
                order: vec![SortField {
                    column: 1,
                    descending: true,
                }],
                rank_start: 1,
                rank_end: 1,
                output_rank_number,
                generate_update_before,
                ttl_enabled: false,
                arity: 3,
            },
            2,
        )
        .unwrap()
    }

    fn row(k: &str, price: i64, id: i64) -> Row {
        vec![Value::str(k), Value::Int(price), Value::Int(id)]
    }

    fn run(o: &mut FastTop1, rows: Vec<Row>) -> Vec<String> {
        let mut out = Vec::new();
        o.process(0, rows.into_iter().map(Change::insert).collect(), &mut out)
            .unwrap();
        out.iter().map(|c| c.to_string()).collect()
    }

    /// `FastTop1FunctionTest`'s shape: a better row is an update of the
    /// partition's row; an equal or worse one changes nothing.
    #[test]
    fn a_better_row_updates_the_winner_and_a_tie_keeps_the_first() {
        let mut o = op(true, false);
        let got = run(
            &mut o,
            vec![
                row("a", 5, 1),
                row("b", 1, 2),
                row("a", 5, 3),
                row("a", 3, 4),
                row("a", 7, 5),
                row("c", 2, 6),
                row("b", 9, 7),
            ],
        );
        assert_eq!(
            got,
            [
                "+I[a, 5, 1]",
                "+I[b, 1, 2]",
                "-U[a, 5, 1]",
                "+U[a, 7, 5]",
                "+I[c, 2, 6]",
                "-U[b, 1, 2]",
                "+U[b, 9, 7]",
            ]
        );
        assert_eq!(o.winners.metrics().entries, 3);
        // Three partitions in a cache of two: `b`, evicted by `c`, was read
        // back from the state.
        assert_eq!(
            o.counters()[2..],
            [("cache_requests", 7), ("cache_hits", 3)]
        );
    }

    #[test]
    fn without_update_before_and_with_the_rank() {
        let mut o = op(false, true);
        let got = run(&mut o, vec![row("a", 5, 1), row("a", 6, 2)]);
        assert_eq!(got, ["+I[a, 5, 1, 1]", "+U[a, 6, 2, 1]"]);
    }
}
