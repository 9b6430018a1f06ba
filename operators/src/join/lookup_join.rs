//! `LookupJoin`: joins each probe record with the rows a dimension table
//! holds for its key, Flink's `StreamExecLookupJoin` with its
//! `LookupJoinRunner` (synchronous lookups). Nothing is kept in state: per
//! probe record the operator looks its key up (through the partial cache
//! when there is one), keeps the rows that pass the filter on the
//! dimension table and the join condition, and emits each joined row with
//! the probe record's kind; a LEFT join emits the record padded with NULLs
//! when none is left. A retraction of the probe side is looked up again
//! and emitted as a retraction, as Flink does. A key with a NULL matches
//! nothing and is not looked up.
//!
//! Counters: `lookups` (probe records with a key), `lookup_cache_hits`,
//! `lookup_store_lookups` (lookups that went to the dimension table: every
//! lookup without a cache, the misses with one) and `lookup_store_rows`
//! (rows those returned).

use super::JoinType;
use crate::changelog::Change;
use crate::expr::Expr;
use crate::lookup::{DimensionTable, PartialCache, PartialCacheOptions};
use crate::operator::{OpError, OpResult, Operator};
use crate::value::{Row, Value};
use std::sync::Arc;

#[derive(Clone, Debug)]
pub struct LookupJoinSpec {
    /// `Inner` or `Left`.
    pub join_type: JoinType,
    /// The probe columns whose values are looked up, in the order of the
    /// dimension table's key.
    pub probe_keys: Vec<usize>,
    /// Constants the rest of the dimension table's key equals
    /// (`ON d.id = 1`), after the probe columns'.
    pub constant_key: Vec<Value>,
    /// Columns of a dimension row.
    pub dim_arity: usize,
    /// Keeps a looked-up row (over the dimension row's columns): Flink's
    /// Calc on the temporal table.
    pub dim_filter: Option<Expr>,
    /// The rest of the join condition, over the probe row then the
    /// dimension row.
    pub condition: Option<Expr>,
    /// The probe's processing-time column: the time of the cache.
    pub time_col: usize,
    /// `None`: every lookup goes to the dimension table.
    pub cache: Option<PartialCacheOptions>,
}

pub struct LookupJoinOperator {
    spec: LookupJoinSpec,
    table: Arc<DimensionTable>,
    cache: Option<PartialCache>,
    key: Vec<Value>,
    lookups: u64,
    hits: u64,
    store_lookups: u64,
    store_rows: u64,
}

impl LookupJoinOperator {
    pub fn new(spec: LookupJoinSpec, table: Arc<DimensionTable>) -> OpResult<LookupJoinOperator> {
        if !matches!(spec.join_type, JoinType::Inner | JoinType::Left) {
            return Err(OpError::Spec(format!(
                "a lookup join is INNER or LEFT, not {:?}",
                spec.join_type
            )));
        }
        if spec.probe_keys.is_empty() && spec.constant_key.is_empty() {
            return Err(OpError::Spec("a lookup join needs a lookup key".into()));
        }
        Ok(LookupJoinOperator {
            cache: spec.cache.map(PartialCache::new),
            spec,
            table,
            key: Vec::new(),
            lookups: 0,
            hits: 0,
            store_lookups: 0,
            store_rows: 0,
        })
    }

    fn join_one(&mut self, change: Change, out: &mut Vec<Change>) {
        let s = &self.spec;
        self.key.clear();
        self.key
            .extend(s.probe_keys.iter().map(|&c| change.row[c].clone()));
        self.key.extend(s.constant_key.iter().cloned());
        let mut matched = false;
        if !self.key.iter().any(Value::is_null) {
            self.lookups += 1;
            let now = change.row[s.time_col].as_ts().unwrap_or(0);
            let cached = self.cache.as_mut().and_then(|c| c.get(&self.key, now));
            let rows: &[Row] = match cached {
                Some(rows) => {
                    self.hits += 1;
                    rows
                }
                None => {
                    let rows = self.table.lookup(&self.key);
                    self.store_lookups += 1;
                    self.store_rows += rows.len() as u64;
                    if let Some(c) = self.cache.as_mut() {
                        c.put(self.key.clone(), rows, now);
                    }
                    rows
                }
            };
            for dim in rows {
                if s.dim_filter.as_ref().is_some_and(|f| !f.is_true(dim)) {
                    continue;
                }
                let mut joined = Vec::with_capacity(change.row.len() + dim.len());
                joined.extend(change.row.iter().cloned());
                joined.extend(dim.iter().cloned());
                if s.condition.as_ref().is_some_and(|c| !c.is_true(&joined)) {
                    continue;
                }
                matched = true;
                out.push(Change::new(change.kind, joined));
            }
        }
        if !matched && s.join_type == JoinType::Left {
            let mut padded = change.row;
            padded.extend(std::iter::repeat_n(Value::Null, s.dim_arity));
            out.push(Change::new(change.kind, padded));
        }
    }
}

impl Operator for LookupJoinOperator {
    fn process(
        &mut self,
        _input: usize,
        batch: Vec<Change>,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        out.reserve(batch.len());
        for change in batch {
            self.join_one(change, out);
        }
        Ok(())
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("lookups", self.lookups),
            ("lookup_cache_hits", self.hits),
            ("lookup_store_lookups", self.store_lookups),
            ("lookup_store_rows", self.store_rows),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changelog::RowKind;

    fn table() -> Arc<DimensionTable> {
        Arc::new(DimensionTable::build(
            vec![
                vec![Value::Int(1), Value::Int(10)],
                vec![Value::Int(2), Value::Int(20)],
            ],
            &[0],
        ))
    }

    fn spec(join_type: JoinType, cache: Option<PartialCacheOptions>) -> LookupJoinSpec {
        LookupJoinSpec {
            join_type,
            probe_keys: vec![0],
            constant_key: Vec::new(),
            dim_arity: 2,
            dim_filter: None,
            condition: None,
            time_col: 1,
            cache,
        }
    }

    fn probe(kind: RowKind, k: Option<i64>) -> Change {
        let k = k.map(Value::Int).unwrap_or(Value::Null);
        Change::new(kind, vec![k, Value::Int(0)])
    }

    #[test]
    fn left_join_pads_misses_and_keeps_kinds() {
        let mut op = LookupJoinOperator::new(spec(JoinType::Left, None), table()).unwrap();
        let mut out = Vec::new();
        let batch = vec![
            probe(RowKind::Insert, Some(1)),
            probe(RowKind::Insert, Some(3)),
            probe(RowKind::Delete, Some(1)),
            probe(RowKind::Insert, None),
        ];
        op.process(0, batch, &mut out).unwrap();
        let kinds: Vec<RowKind> = out.iter().map(|c| c.kind).collect();
        assert_eq!(
            kinds,
            [
                RowKind::Insert,
                RowKind::Insert,
                RowKind::Delete,
                RowKind::Insert
            ]
        );
        assert_eq!(out[0].row[3], Value::Int(10));
        assert_eq!(out[1].row[3], Value::Null);
        assert_eq!(out[3].row.len(), 4);
        assert_eq!(op.counters()[0], ("lookups", 3));
    }

    #[test]
    fn the_cache_answers_repeated_keys() {
        let cache = PartialCacheOptions {
            max_rows: 10,
            expire_after_write_ms: None,
            expire_after_access_ms: None,
            cache_missing_key: true,
        };
        let mut op = LookupJoinOperator::new(spec(JoinType::Inner, Some(cache)), table()).unwrap();
        let mut out = Vec::new();
        let batch = (0..4)
            .map(|i| probe(RowKind::Insert, Some(1 + i % 2)))
            .collect();
        op.process(0, batch, &mut out).unwrap();
        assert_eq!(out.len(), 4);
        assert_eq!(
            op.counters(),
            [
                ("lookups", 4),
                ("lookup_cache_hits", 2),
                ("lookup_store_lookups", 2),
                ("lookup_store_rows", 2)
            ]
        );
    }
}
