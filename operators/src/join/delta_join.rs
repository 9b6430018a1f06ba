//! `DeltaJoin`: an INNER equi-join that keeps no join state. Each record
//! looks the *other input's source table* up in an [`IndexLookupStore`]
//! (Flink: the Apache Fluss table, queried by its index key) and emits the
//! pairs it finds, as Flink's `StreamingDeltaJoinOperator` /
//! `AsyncDeltaJoinRunner` do.
//!
//! # What is computed
//!
//! For a record `x` of one input with kind `+I` or `+U`: every row `y` the
//! store *currently* holds in the other table, passed through that side's
//! filter and projection ([`SideCalc`]), with the same join key gives
//! one output row `left ++ right` with `x`'s kind, if the residual condition
//! holds. The other table is queried by its index key, which the
//! equi-condition must cover (each index column is equated with a column of
//! `x`); equi-columns outside the index, and the residual condition, are
//! checked on the rows returned. A `-U` emits nothing, a `-D` is an error,
//! and a record whose join key contains NULL matches nothing.
//!
//! ## Why an upsert sink then holds the batch join
//!
//! Preconditions (Flink's; the operator checks those marked "checked"):
//! 1. the sources have no deletes: insert-only, or upsert changelogs
//!    without `-D` (checked);
//! 2. for a source with updates, the join key is part of its primary key
//!    (checked); and the residual condition reads only columns that never
//!    change for a primary key (its primary key columns, or any column of an
//!    insert-only source) — so the rows a primary key matches do not depend
//!    on its version (the planner's to ensure);
//! 3. every change is in the store before the join processes it (the source
//!    writes the store as it reads: [`StoreWritingSource`](super::StoreWritingSource));
//! 4. the sink is an upsert sink on the join's unique key, (left primary
//!    key, right primary key). (A table without a primary key is
//!    insert-only and its rows have no identity; the join is then only
//!    duplicate-free if no source runs ahead of the join.)
//!
//! Take final versions `l` and `r` that match, and let `t` be the moment the
//! join processes whichever of the two it processes last. At `t` both are in
//! the store and current (each was written before it was processed, and
//! neither has a later version), so that lookup finds the other and emits
//! `l ++ r`; no record of either primary key comes later, so this is the last
//! row the sink receives for the pair. Two primary keys that do not match in
//! the final tables never matched (2), so nothing was emitted for them.
//! Hence, once every written change has been processed, the sink holds
//! exactly the batch join of the final tables. Retractions are not needed:
//! a pair's old version is overwritten under the same sink key by its new
//! one. Between records the sink may hold pairs with rows the join has not
//! processed yet, and old versions until the new one comes.
//!
//! ## Duplicates
//!
//! A pair is emitted when the join processes either of its rows and the
//! other one is in the store. When both are written before the join
//! processes the first of them (the sources ran ahead of the join, or both
//! arrived in one batch), both lookups find each other and the same row is
//! emitted twice. An upsert sink overwrites it with itself; a retract sink
//! would count it twice, which is why Flink requires a downstream that
//! tolerates duplicates. An upsert that rewrites a row unchanged also
//! re-emits identical rows. The `duplicates` counter counts emitted rows
//! identical to a row this subtask emitted before; it keeps a set of 128-bit
//! fingerprints of emitted rows (16 bytes per distinct row). That set is a
//! measurement aid only — never read to compute output, not join state, not
//! reported as state — and is off with [`DeltaJoinOptions::count_duplicates`]
//! `= false`.
//!
//! # Mechanics
//!
//! - Lookup key: for each column of the other table's index key, the value
//!   of the equated column of `x`. One store lookup (a RocksDB prefix scan)
//!   per record, unless a cache answers.
//! - Caches (`table.exec.delta-join.cache-enabled`, `.left.cache-size`,
//!   `.right.cache-size`): one LRU per table, index key → rows, holding at
//!   most `size` keys. The *left* cache caches lookups *into the left table*
//!   (made by right records), as in Flink. An entry remembers the store
//!   generation of its key when it was read; it is a hit only while the
//!   store still reports that generation, otherwise it counts as a miss (and
//!   as `*_cache_stale`) and is reloaded. So the caches always agree with the
//!   store, and the output does not depend on whether or how large they are
//!   (the tests pin this). Flink's cache is kept current differently — the
//!   join upserts each record it processes into the cache of its own table —
//!   which lags the store by the records not yet processed; both satisfy the
//!   argument above.
//! - State: none. [`Operator::state_reports`] is empty: the caches are
//!   bounded, rebuildable from the store and not checkpointed (as in
//!   Flink); their size shows in the counters.
//! - Counters: `lookups` (store lookups made), `rows_returned` (rows those
//!   returned), `rows_visited` (candidate rows checked, from the store or a
//!   cache), `left_cache_hits`, `left_cache_misses`, `left_cache_stale`,
//!   `right_cache_*` likewise, `left_cache_entries`, `left_cache_rows`,
//!   `right_cache_entries`, `right_cache_rows` (current size), `duplicates`,
//!   `retractions_skipped` (`-U` records).
//!
//! Output order: per input record, its matches in the store's key order
//! (index key, then primary key or insertion order).

use super::join_spec::{JoinSpec, JoinType};
use crate::changelog::{Change, RowKind};
use crate::expr::Expr;
use crate::lookup::{Generation, IndexLookupStore, LruCache, TableId};
use crate::operator::{OpError, OpResult, Operator};
use crate::state::StateReport;
use crate::value::{DisplayRow, Row, Value};
use std::hash::BuildHasher;
use std::sync::Arc;

/// What a delta join joins: the store tables behind its inputs and the
/// equi- and residual conditions over `left ++ right`. The input rows of a
/// side are rows of its table passed through the side's [`SideCalc`]
/// (Flink 2.2's calc between the source and the delta join); the rows a
/// lookup returns pass through the same calc before they are joined.
#[derive(Clone, Debug)]
pub struct DeltaJoinSpec {
    pub left_table: TableId,
    pub right_table: TableId,
    /// The filter and projection between each table and the join.
    pub left_calc: SideCalc,
    pub right_calc: SideCalc,
    /// `left[left_keys[i]] = right[right_keys[i]]` for every `i`.
    pub left_keys: Vec<usize>,
    pub right_keys: Vec<usize>,
    /// Evaluated over `left ++ right`.
    pub residual: Option<Expr>,
}

impl DeltaJoinSpec {
    /// The delta join of a regular join's spec; only INNER joins qualify.
    pub fn from_join_spec(
        spec: &JoinSpec,
        left_table: TableId,
        right_table: TableId,
    ) -> OpResult<DeltaJoinSpec> {
        if spec.join_type != JoinType::Inner {
            return Err(OpError::Spec(format!(
                "delta join supports INNER joins only, not {:?}",
                spec.join_type
            )));
        }
        Ok(DeltaJoinSpec {
            left_table,
            right_table,
            left_calc: SideCalc::default(),
            right_calc: SideCalc::default(),
            left_keys: spec.left_keys.clone(),
            right_keys: spec.right_keys.clone(),
            residual: spec.residual.clone(),
        })
    }
}

/// A deterministic filter and projection over a table's rows, between the
/// table and the delta join (none: the table's rows as they are).
#[derive(Clone, Debug, Default)]
pub struct SideCalc {
    pub predicate: Option<Expr>,
    pub projection: Option<Vec<Expr>>,
}

impl SideCalc {
    /// The row the join sees for table row `row`, if the filter keeps it.
    pub(super) fn apply(&self, row: &[Value]) -> Option<Row> {
        if let Some(p) = &self.predicate {
            if !p.is_true(row) {
                return None;
            }
        }
        Some(match &self.projection {
            Some(exprs) => Expr::project(exprs, row),
            None => row.to_vec(),
        })
    }

    /// Neither a filter nor a projection.
    pub fn is_identity(&self) -> bool {
        self.predicate.is_none() && self.projection.is_none()
    }

    /// The table column output column `c` passes on unchanged, if any.
    pub fn source_column(&self, c: usize) -> Option<usize> {
        match &self.projection {
            None => Some(c),
            Some(p) => match p.get(c)? {
                Expr::Column(t) => Some(*t),
                _ => None,
            },
        }
    }

    /// How many columns the join sees of a table with `arity` columns.
    pub fn width(&self, arity: usize) -> usize {
        self.projection.as_ref().map_or(arity, |p| p.len())
    }
}

/// Flink's `table.exec.delta-join.*` options, plus the duplicate counter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeltaJoinOptions {
    /// `table.exec.delta-join.cache-enabled` (default `true`).
    pub cache_enabled: bool,
    /// `table.exec.delta-join.left.cache-size`: index keys of the left
    /// table cached (default 10000; must be > 0 when caching).
    pub left_cache_size: usize,
    /// `table.exec.delta-join.right.cache-size` (default 10000).
    pub right_cache_size: usize,
    /// Count `duplicates` (keeps a fingerprint set; see the module doc).
    pub count_duplicates: bool,
}

impl Default for DeltaJoinOptions {
    fn default() -> DeltaJoinOptions {
        DeltaJoinOptions {
            cache_enabled: true,
            left_cache_size: 10_000,
            right_cache_size: 10_000,
            count_duplicates: true,
        }
    }
}

impl DeltaJoinOptions {
    /// No caches.
    pub fn uncached() -> DeltaJoinOptions {
        DeltaJoinOptions {
            cache_enabled: false,
            ..DeltaJoinOptions::default()
        }
    }

    /// Caches of `left` and `right` index keys.
    pub fn cached(left: usize, right: usize) -> DeltaJoinOptions {
        DeltaJoinOptions {
            cache_enabled: true,
            left_cache_size: left,
            right_cache_size: right,
            ..DeltaJoinOptions::default()
        }
    }
}

/// How records of one input probe the other input's table.
struct Probe {
    /// This input's table (for error messages and the update check).
    table: TableId,
    /// Join key positions in this input's rows.
    keys: Vec<usize>,
    /// Positions in this input's rows giving the other table's index key,
    /// in index key order.
    lookup: Vec<usize>,
    /// Whether this input may carry updates: its table's primary key holds
    /// every join key column.
    updates_allowed: bool,
    name: String,
}

pub(super) struct CachedRows {
    pub(super) generation: Generation,
    pub(super) rows: Arc<Vec<Row>>,
}

#[derive(Default, Clone, Copy)]
pub(super) struct CacheCounters {
    pub(super) hits: u64,
    pub(super) misses: u64,
    pub(super) stale: u64,
}

/// Fingerprints of emitted rows, for the `duplicates` counter only.
pub(super) struct DuplicateCounter {
    seen: hashbrown::HashSet<u128, foldhash::fast::FixedState>,
    h1: foldhash::fast::FixedState,
    h2: foldhash::fast::FixedState,
    duplicates: u64,
}

impl DuplicateCounter {
    pub(super) fn new() -> DuplicateCounter {
        DuplicateCounter {
            seen: hashbrown::HashSet::with_hasher(foldhash::fast::FixedState::with_seed(7)),
            h1: foldhash::fast::FixedState::with_seed(0x0123_4567_89ab_cdef),
            h2: foldhash::fast::FixedState::with_seed(0xfedc_ba98_7654_3210),
            duplicates: 0,
        }
    }

    pub(super) fn record(&mut self, row: &[Value]) {
        let fp = ((self.h1.hash_one(row) as u128) << 64) | self.h2.hash_one(row) as u128;
        if !self.seen.insert(fp) {
            self.duplicates += 1;
        }
    }

    pub(super) fn count(&self) -> u64 {
        self.duplicates
    }
}

/// The delta join; see the module doc.
pub struct DeltaJoinOperator {
    store: Arc<IndexLookupStore>,
    /// Per input (0 = left, 1 = right): how its records probe the other table.
    probes: [Probe; 2],
    /// Per table (0 = left table, 1 = right table): the cache of lookups into it.
    caches: [Option<LruCache<Row, CachedRows>>; 2],
    /// Per table: the calc its looked-up rows pass through.
    calcs: [SideCalc; 2],
    cache_counters: [CacheCounters; 2],
    residual: Option<Expr>,
    dup: Option<DuplicateCounter>,
    key_buf: Row,
    joined_buf: Row,
    lookups: u64,
    rows_returned: u64,
    rows_visited: u64,
    retractions_skipped: u64,
}

impl DeltaJoinOperator {
    /// A delta join reading `store`. Fails when the join is not an equi-join,
    /// a key column does not exist, a table's index key is not covered by
    /// the equi-condition, or caching is on with a cache size of 0.
    pub fn new(
        store: Arc<IndexLookupStore>,
        spec: DeltaJoinSpec,
        options: DeltaJoinOptions,
    ) -> OpResult<DeltaJoinOperator> {
        let left = store.schema(spec.left_table)?;
        let right = store.schema(spec.right_table)?;
        let err = |m: String| Err(OpError::Spec(format!("delta join: {m}")));
        if spec.left_keys.is_empty() || spec.left_keys.len() != spec.right_keys.len() {
            return err(format!(
                "needs an equi-condition with as many left as right keys, got {:?} = {:?}",
                spec.left_keys, spec.right_keys
            ));
        }
        let widths = [
            spec.left_calc.width(left.arity),
            spec.right_calc.width(right.arity),
        ];
        for ((keys, schema), width) in [(&spec.left_keys, &left), (&spec.right_keys, &right)]
            .into_iter()
            .zip(widths)
        {
            if let Some(&c) = keys.iter().find(|&&c| c >= width) {
                return err(format!(
                    "join key column {c} does not exist in the {width} columns read of table '{}'",
                    schema.name
                ));
            }
        }
        for (calc, schema) in [(&spec.left_calc, &left), (&spec.right_calc, &right)] {
            let mut cols = Vec::new();
            calc.predicate.iter().for_each(|p| p.columns(&mut cols));
            calc.projection
                .iter()
                .flatten()
                .for_each(|e| e.columns(&mut cols));
            if let Some(c) = cols.into_iter().find(|&c| c >= schema.arity) {
                return err(format!(
                    "the calc over table '{}' reads column {c} of {}",
                    schema.name, schema.arity
                ));
            }
        }
        if let Some(r) = &spec.residual {
            let mut cols = Vec::new();
            r.columns(&mut cols);
            if let Some(c) = cols.into_iter().find(|&c| c >= widths[0] + widths[1]) {
                return err(format!(
                    "the residual condition reads column {c} of a {}-column joined row",
                    widths[0] + widths[1]
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
        // The lookup key into `other`: for each of its index columns, the
        // column of `this` input it is equated with (through the other
        // side's projection: a key column that is a table column as is).
        let lookup_cols = |this_keys: &[usize],
                           other_keys: &[usize],
                           other_calc: &SideCalc,
                           other: &crate::lookup::TableSchema|
         -> OpResult<Vec<usize>> {
            other
                .index_key
                .iter()
                .map(|c| {
                    other_keys
                        .iter()
                        .position(|k| other_calc.source_column(*k) == Some(*c))
                        .map(|j| this_keys[j])
                        .ok_or_else(|| {
                            OpError::Spec(format!(
                                "delta join: the index key {:?} of table '{}' is not covered by \
                                 the join's equi-condition on its columns {:?}",
                                other.index_key, other.name, other_keys
                            ))
                        })
                })
                .collect()
        };
        let updates_allowed =
            |keys: &[usize], calc: &SideCalc, schema: &crate::lookup::TableSchema| {
                schema.primary_key.as_ref().is_some_and(|pk| {
                    keys.iter()
                        .all(|k| calc.source_column(*k).is_some_and(|t| pk.contains(&t)))
                })
            };
        let probes = [
            Probe {
                table: spec.left_table,
                keys: spec.left_keys.clone(),
                lookup: lookup_cols(&spec.left_keys, &spec.right_keys, &spec.right_calc, &right)?,
                updates_allowed: updates_allowed(&spec.left_keys, &spec.left_calc, &left),
                name: left.name.clone(),
            },
            Probe {
                table: spec.right_table,
                keys: spec.right_keys.clone(),
                lookup: lookup_cols(&spec.right_keys, &spec.left_keys, &spec.left_calc, &left)?,
                updates_allowed: updates_allowed(&spec.right_keys, &spec.right_calc, &right),
                name: right.name.clone(),
            },
        ];
        let caches = if options.cache_enabled {
            [
                Some(LruCache::new(options.left_cache_size)),
                Some(LruCache::new(options.right_cache_size)),
            ]
        } else {
            [None, None]
        };
        Ok(DeltaJoinOperator {
            store,
            probes,
            caches,
            calcs: [spec.left_calc, spec.right_calc],
            cache_counters: [CacheCounters::default(); 2],
            residual: spec.residual,
            dup: options.count_duplicates.then(DuplicateCounter::new),
            key_buf: Vec::new(),
            joined_buf: Vec::new(),
            lookups: 0,
            rows_returned: 0,
            rows_visited: 0,
            retractions_skipped: 0,
        })
    }

    /// The rows of table `t` (0 = left, 1 = right) under index key
    /// `self.key_buf`, from the cache if current, else from the store.
    fn fetch(&mut self, t: usize) -> OpResult<Arc<Vec<Row>>> {
        let table = self.probes[t].table;
        let key = &self.key_buf;
        let Some(cache) = &mut self.caches[t] else {
            self.lookups += 1;
            let rows = self.store.lookup(table, key)?;
            self.rows_returned += rows.len() as u64;
            return Ok(Arc::new(rows));
        };
        let counters = &mut self.cache_counters[t];
        if let Some(entry) = cache.get(key.as_slice()) {
            let current = self.store.generation(table, key)?;
            if entry.generation == current {
                counters.hits += 1;
                return Ok(entry.rows.clone());
            }
            counters.stale += 1;
        }
        counters.misses += 1;
        self.lookups += 1;
        let (generation, rows) = self.store.lookup_versioned(table, key)?;
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

    fn process_one(&mut self, side: usize, change: Change, out: &mut Vec<Change>) -> OpResult<()> {
        let probe = &self.probes[side];
        let row = &change.row;
        match change.kind {
            RowKind::Delete => {
                return Err(OpError::Record(format!(
                    "delta join input '{}' got -D[{}]: the sources of a delta join must not \
                     delete",
                    probe.name,
                    DisplayRow(row)
                )))
            }
            RowKind::UpdateBefore | RowKind::UpdateAfter if !probe.updates_allowed => {
                return Err(OpError::Record(format!(
                    "delta join input '{}' got {}[{}]: an input with updates needs its join \
                     key {:?} inside its primary key",
                    probe.name,
                    change.kind,
                    DisplayRow(row),
                    probe.keys
                )))
            }
            RowKind::UpdateBefore => {
                self.retractions_skipped += 1;
                return Ok(());
            }
            RowKind::Insert | RowKind::UpdateAfter => {}
        }
        if probe.keys.iter().any(|&k| row[k].is_null()) {
            return Ok(());
        }
        self.key_buf.clear();
        self.key_buf
            .extend(probe.lookup.iter().map(|&c| row[c].clone()));
        let other = 1 - side;
        let candidates = self.fetch(other)?;
        let input_is_left = side == 0;
        let (this_keys, other_keys) = (&self.probes[side].keys, &self.probes[other].keys);
        let calc = &self.calcs[other];
        for raw in candidates.iter() {
            self.rows_visited += 1;
            let owned: Row;
            let cand: &[Value] = if calc.is_identity() {
                raw
            } else {
                match calc.apply(raw) {
                    Some(r) => {
                        owned = r;
                        &owned
                    }
                    None => continue,
                }
            };
            if !this_keys
                .iter()
                .zip(other_keys)
                .all(|(&a, &b)| row[a] == cand[b])
            {
                continue;
            }
            self.joined_buf.clear();
            if input_is_left {
                self.joined_buf.extend_from_slice(row);
                self.joined_buf.extend_from_slice(cand);
            } else {
                self.joined_buf.extend_from_slice(cand);
                self.joined_buf.extend_from_slice(row);
            }
            if let Some(p) = &self.residual {
                if !p.is_true(&self.joined_buf) {
                    continue;
                }
            }
            if let Some(d) = &mut self.dup {
                d.record(&self.joined_buf);
            }
            out.push(Change::new(change.kind, self.joined_buf.clone()));
        }
        Ok(())
    }
}

impl Operator for DeltaJoinOperator {
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

    /// None: a delta join keeps no join state (see the module doc).
    fn state_reports(&self) -> Vec<StateReport> {
        Vec::new()
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let [l, r] = self.cache_counters;
        let size = |t: usize| match &self.caches[t] {
            Some(c) => (
                c.len() as u64,
                c.values().map(|e| e.rows.len() as u64).sum::<u64>(),
            ),
            None => (0, 0),
        };
        let (le, lr) = size(0);
        let (re, rr) = size(1);
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
            ("duplicates", self.dup.as_ref().map_or(0, |d| d.duplicates)),
            ("retractions_skipped", self.retractions_skipped),
        ]
    }
}
