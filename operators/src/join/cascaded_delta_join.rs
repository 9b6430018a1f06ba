//! `CascadedDeltaJoin`: a delta join one of whose inputs is itself a delta
//! join (Flink 2.2's cascaded delta join, `StreamingDeltaJoinOperator` with
//! a `DeltaJoinLookupChain` per direction). It keeps no join state: a record
//! of one input finds the rows of the other input it joins by looking up,
//! round after round, the tables that input is made of.
//!
//! # What is computed
//!
//! Each input direction has a [`LookupChain`]. For a record `x` of one
//! input (kind `+I` or `+U`), the chain towards the other input runs its
//! rounds in order: round `i` looks its table up in the
//! [`IndexLookupStore`] by the table's index key, whose values come from `x`
//! or from a row an earlier round found ([`KeySource`]), and passes each row
//! found through the round's [`SideCalc`]. Every combination of one row per
//! round, concatenated in the chain's `order`, is a row of the lower join if
//! the chain's `condition` holds (the lower join's equalities and residual);
//! the chain's `calc` (the Calc between the lower join and this one) makes
//! it a row of the other input. It joins `x` if the equi-keys match
//! (no NULL) and the residual holds over `left ++ right`, and is emitted
//! with `x`'s kind. A single-round chain with no condition and no calc is
//! the two-way delta join's lookup. `-U` emits nothing, `-D` is an error.
//!
//! The rounds find a superset of the rows to join: each round's index key
//! is equated (by the planner's preconditions) with columns of `x` or of an
//! earlier round's row, so a row of the other input that joins `x` is made
//! of table rows every round finds; the conditions then keep exactly the
//! joining ones. Why an upsert sink then holds the batch join is argued in
//! `optimizer/src/physical/rules/delta_join.rs`.
//!
//! # Mechanics
//!
//! - Caches (`table.exec.delta-join.cache-enabled`, `.left.cache-size`,
//!   `.right.cache-size`): one LRU per round, index key → rows; the rounds
//!   of the chain into the *left* input use the left size and count as
//!   `left_cache_*`, as the two-way join's left cache caches lookups into
//!   the left table. Entries are checked against the store's generation as
//!   in [`super::DeltaJoinOperator`], so the output does not depend on them.
//! - State: none ([`Operator::state_reports`] is empty).
//! - Counters: those of [`super::DeltaJoinOperator`], `lookups` summed over
//!   all rounds.

use super::delta_join::{CacheCounters, CachedRows, DuplicateCounter};
use super::{DeltaJoinOptions, SideCalc};
use crate::changelog::{Change, RowKind};
use crate::expr::Expr;
use crate::lookup::{IndexLookupStore, LruCache, TableId};
use crate::operator::{OpError, OpResult, Operator};
use crate::state::StateReport;
use crate::value::{DisplayRow, Row, Value};
use std::sync::Arc;

/// Where one value of a round's lookup key comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeySource {
    /// Column of the arriving record.
    Input(usize),
    /// Column of the row an earlier round found (after its calc).
    Round(usize, usize),
}

/// One lookup of a chain: `table` by its index key.
#[derive(Clone, Debug)]
pub struct LookupRound {
    pub table: TableId,
    /// The filter and projection between the table and the join.
    pub calc: SideCalc,
    /// One source per index key column, in index key order.
    pub key: Vec<KeySource>,
}

/// How a record of one input finds the rows of the other (Flink's
/// `DeltaJoinLookupChain`); see the module doc.
#[derive(Clone, Debug)]
pub struct LookupChain {
    pub rounds: Vec<LookupRound>,
    /// The rounds whose rows, concatenated in this order, make a row of
    /// the lower join (`[0]` for one round).
    pub order: Vec<usize>,
    /// The lower join's condition over that row.
    pub condition: Option<Expr>,
    /// The Calc between the lower join and this join.
    pub calc: SideCalc,
}

impl LookupChain {
    /// The two-way lookup of `table` through `calc`, keyed by `key`.
    pub fn binary(table: TableId, calc: SideCalc, key: Vec<KeySource>) -> LookupChain {
        LookupChain {
            rounds: vec![LookupRound { table, calc, key }],
            order: vec![0],
            condition: None,
            calc: SideCalc::default(),
        }
    }
}

/// What a cascaded delta join joins.
#[derive(Clone, Debug)]
pub struct CascadedDeltaJoinSpec {
    /// `left[left_keys[i]] = right[right_keys[i]]` for every `i`.
    pub left_keys: Vec<usize>,
    pub right_keys: Vec<usize>,
    /// Evaluated over `left ++ right`.
    pub residual: Option<Expr>,
    /// Widths of the left and right input rows.
    pub widths: [usize; 2],
    /// `chains[0]`: how left records find right rows; `chains[1]` the
    /// reverse.
    pub chains: [LookupChain; 2],
    /// Whether each input may carry updates (the planner checks that its
    /// join key and conditions read only primary key columns).
    pub updates_allowed: [bool; 2],
    /// Each input's name, for errors.
    pub names: [String; 2],
}

struct Round {
    table: TableId,
    calc: SideCalc,
    key: Vec<KeySource>,
    cache: Option<LruCache<Row, CachedRows>>,
}

/// The cascaded delta join; see the module doc.
pub struct CascadedDeltaJoinOperator {
    store: Arc<IndexLookupStore>,
    /// Per input: the rounds of the chain towards the other input.
    rounds: [Vec<Round>; 2],
    order: [Vec<usize>; 2],
    condition: [Option<Expr>; 2],
    calc: [SideCalc; 2],
    keys: [Vec<usize>; 2],
    residual: Option<Expr>,
    updates_allowed: [bool; 2],
    names: [String; 2],
    /// Per input whose tables are looked up (0 = left).
    cache_counters: [CacheCounters; 2],
    dup: Option<DuplicateCounter>,
    lookups: u64,
    rows_returned: u64,
    rows_visited: u64,
    retractions_skipped: u64,
}

impl CascadedDeltaJoinOperator {
    /// Fails when a key or round does not fit the store's tables, the
    /// equi-condition is empty or uneven, or caching is on with size 0.
    pub fn new(
        store: Arc<IndexLookupStore>,
        spec: CascadedDeltaJoinSpec,
        options: DeltaJoinOptions,
    ) -> OpResult<CascadedDeltaJoinOperator> {
        let err = |m: String| Err(OpError::Spec(format!("cascaded delta join: {m}")));
        if spec.left_keys.is_empty() || spec.left_keys.len() != spec.right_keys.len() {
            return err(format!(
                "needs an equi-condition with as many left as right keys, got {:?} = {:?}",
                spec.left_keys, spec.right_keys
            ));
        }
        for (side, keys) in [&spec.left_keys, &spec.right_keys].into_iter().enumerate() {
            if let Some(&c) = keys.iter().find(|&&c| c >= spec.widths[side]) {
                return err(format!(
                    "join key column {c} does not exist in the {} columns of input '{}'",
                    spec.widths[side], spec.names[side]
                ));
            }
        }
        if options.cache_enabled && (options.left_cache_size == 0 || options.right_cache_size == 0)
        {
            return err(
                "table.exec.delta-join.left.cache-size and .right.cache-size must be \
                 positive when table.exec.delta-join.cache-enabled is true"
                    .into(),
            );
        }
        let mut rounds: [Vec<Round>; 2] = [Vec::new(), Vec::new()];
        for (side, chain) in spec.chains.iter().enumerate() {
            if chain.rounds.is_empty() {
                return err(format!("the chain from input {side} has no round"));
            }
            let mut widths = Vec::new();
            for (i, r) in chain.rounds.iter().enumerate() {
                let schema = store.schema(r.table)?;
                if r.key.len() != schema.index_key.len() {
                    return err(format!(
                        "round {} looks '{}' up by {} values, its index key has {}",
                        i + 1,
                        schema.name,
                        r.key.len(),
                        schema.index_key.len()
                    ));
                }
                for k in &r.key {
                    let fits = match *k {
                        KeySource::Input(c) => c < spec.widths[side],
                        KeySource::Round(j, c) => j < i && c < widths[j],
                    };
                    if !fits {
                        return err(format!(
                            "round {} of the chain from input '{}' takes its key from {k:?}, \
                             which it has not got",
                            i + 1,
                            spec.names[side]
                        ));
                    }
                }
                widths.push(r.calc.width(schema.arity));
                // Lookups into the left input's tables are made by right
                // records (side 1) and sized by the left cache.
                let size = if side == 1 {
                    options.left_cache_size
                } else {
                    options.right_cache_size
                };
                rounds[side].push(Round {
                    table: r.table,
                    calc: r.calc.clone(),
                    key: r.key.clone(),
                    cache: options.cache_enabled.then(|| LruCache::new(size)),
                });
            }
            let mut order = chain.order.clone();
            order.sort_unstable();
            if order != (0..chain.rounds.len()).collect::<Vec<_>>() {
                return err(format!(
                    "the chain from input '{}' orders its {} rounds as {:?}",
                    spec.names[side],
                    chain.rounds.len(),
                    chain.order
                ));
            }
        }
        let [c0, c1] = spec.chains;
        Ok(CascadedDeltaJoinOperator {
            store,
            rounds,
            order: [c0.order, c1.order],
            condition: [c0.condition, c1.condition],
            calc: [c0.calc, c1.calc],
            keys: [spec.left_keys, spec.right_keys],
            residual: spec.residual,
            updates_allowed: spec.updates_allowed,
            names: spec.names,
            cache_counters: [CacheCounters::default(); 2],
            dup: options.count_duplicates.then(DuplicateCounter::new),
            lookups: 0,
            rows_returned: 0,
            rows_visited: 0,
            retractions_skipped: 0,
        })
    }

    /// The rows of round `i` of the chain from input `side` under `key`,
    /// from the round's cache if current, else from the store.
    fn fetch(&mut self, side: usize, i: usize, key: &Row) -> OpResult<Arc<Vec<Row>>> {
        let round = &mut self.rounds[side][i];
        let Some(cache) = &mut round.cache else {
            self.lookups += 1;
            let rows = self.store.lookup(round.table, key)?;
            self.rows_returned += rows.len() as u64;
            return Ok(Arc::new(rows));
        };
        let counters = &mut self.cache_counters[1 - side];
        if let Some(entry) = cache.get(key.as_slice()) {
            if entry.generation == self.store.generation(round.table, key)? {
                counters.hits += 1;
                return Ok(entry.rows.clone());
            }
            counters.stale += 1;
        }
        counters.misses += 1;
        self.lookups += 1;
        let (generation, rows) = self.store.lookup_versioned(round.table, key)?;
        self.rows_returned += rows.len() as u64;
        let rows = Arc::new(rows);
        cache.put(
            key.clone(),
            CachedRows {
                generation,
                rows: rows.clone(),
            },
        );
        Ok(rows)
    }

    /// The rows of the other input that `row` (of input `side`) may join:
    /// one row per round, each round keyed by `row` or earlier rounds.
    fn candidates(&mut self, side: usize, row: &[Value]) -> OpResult<Vec<Vec<Row>>> {
        let mut partial: Vec<Vec<Row>> = vec![Vec::new()];
        for i in 0..self.rounds[side].len() {
            let mut next = Vec::new();
            for picked in partial {
                let key: Row = self.rounds[side][i]
                    .key
                    .iter()
                    .map(|k| match *k {
                        KeySource::Input(c) => row[c].clone(),
                        KeySource::Round(j, c) => picked[j][c].clone(),
                    })
                    .collect();
                if key.iter().any(Value::is_null) {
                    continue;
                }
                for raw in self.fetch(side, i, &key)?.iter() {
                    self.rows_visited += 1;
                    if let Some(found) = self.rounds[side][i].calc.apply(raw) {
                        let mut more = picked.clone();
                        more.push(found);
                        next.push(more);
                    }
                }
            }
            partial = next;
        }
        Ok(partial)
    }

    fn process_one(&mut self, side: usize, change: Change, out: &mut Vec<Change>) -> OpResult<()> {
        let row = &change.row;
        let name = &self.names[side];
        match change.kind {
            RowKind::Delete => {
                return Err(OpError::Record(format!(
                    "delta join input '{name}' got -D[{}]: the sources of a delta join must \
                     not delete",
                    DisplayRow(row)
                )))
            }
            RowKind::UpdateBefore | RowKind::UpdateAfter if !self.updates_allowed[side] => {
                return Err(OpError::Record(format!(
                    "delta join input '{name}' got {}[{}]: an input with updates needs its join \
                     key inside its primary key",
                    change.kind,
                    DisplayRow(row)
                )))
            }
            RowKind::UpdateBefore => {
                self.retractions_skipped += 1;
                return Ok(());
            }
            RowKind::Insert | RowKind::UpdateAfter => {}
        }
        if self.keys[side].iter().any(|&k| row[k].is_null()) {
            return Ok(());
        }
        let other = 1 - side;
        let mut joined = Vec::new();
        for picked in self.candidates(side, row)? {
            let mut lower: Row = Vec::new();
            for &i in &self.order[side] {
                lower.extend_from_slice(&picked[i]);
            }
            if let Some(c) = &self.condition[side] {
                if !c.is_true(&lower) {
                    continue;
                }
            }
            let Some(cand) = self.calc[side].apply(&lower) else {
                continue;
            };
            let matches = self.keys[side]
                .iter()
                .zip(&self.keys[other])
                .all(|(&a, &b)| !cand[b].is_null() && row[a] == cand[b]);
            if !matches {
                continue;
            }
            joined.clear();
            if side == 0 {
                joined.extend_from_slice(row);
                joined.extend_from_slice(&cand);
            } else {
                joined.extend_from_slice(&cand);
                joined.extend_from_slice(row);
            }
            if let Some(p) = &self.residual {
                if !p.is_true(&joined) {
                    continue;
                }
            }
            if let Some(d) = &mut self.dup {
                d.record(&joined);
            }
            out.push(Change::new(change.kind, joined.clone()));
        }
        Ok(())
    }
}

impl Operator for CascadedDeltaJoinOperator {
    fn process(&mut self, input: usize, batch: Vec<Change>, out: &mut Vec<Change>) -> OpResult<()> {
        if input > 1 {
            return Err(OpError::Spec(format!(
                "delta join has inputs 0 and 1, got a batch for input {input}"
            )));
        }
        for c in batch {
            self.process_one(input, c, out)?;
        }
        Ok(())
    }

    /// None: the lookups read the store, not join state.
    fn state_reports(&self) -> Vec<StateReport> {
        Vec::new()
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let [l, r] = self.cache_counters;
        // Side 1's rounds look into the left input's tables.
        let size = |side: usize| {
            self.rounds[side]
                .iter()
                .filter_map(|r| r.cache.as_ref())
                .fold((0, 0), |(e, n), c| {
                    (
                        e + c.len() as u64,
                        n + c.values().map(|v| v.rows.len() as u64).sum::<u64>(),
                    )
                })
        };
        let (le, lr) = size(1);
        let (re, rr) = size(0);
        vec![
            ("lookups", self.lookups),
            ("rows_returned", self.rows_returned),
            ("rows_visited", self.rows_visited),
            ("left_cache_hits", l.hits),
            ("left_cache_misses", l.misses),
            ("left_cache_stale", l.stale),
            ("right_cache_hits", r.hits),
            ("right_cache_misses", r.misses),
            ("right_cache_stale", r.stale),
            ("left_cache_entries", le),
            ("left_cache_rows", lr),
            ("right_cache_entries", re),
            ("right_cache_rows", rr),
            ("duplicates", self.dup.as_ref().map_or(0, |d| d.count())),
            ("retractions_skipped", self.retractions_skipped),
        ]
    }
}
