//! `MultiJoin`: one operator for a chain of INNER and LEFT joins whose
//! inputs share a common join key. It keeps only its inputs, never an
//! intermediate result, and recomputes the join for a key when a record
//! arrives.
//!
//! # What it computes
//!
//! Inputs `in_0 .. in_{n-1}` (`n >= 2`), input `i` with join key columns
//! `keys[i]`. The output is the left-deep join
//!
//! ```text
//! R_0 = in_0
//! R_i = R_{i-1} ⋈_i in_i          for i = 1 .. n-1;   output = R_{n-1}
//! ```
//!
//! where `⋈_i` is INNER or LEFT (`join_types[i]`). A row `p` of `R_{i-1}`
//! matches a row `s` of `in_i` when the key of `s` equals the key of the
//! `in_0` row inside `p` (SQL equality: a key with a NULL equals nothing)
//! and `conditions[i]` is TRUE on `p ++ s` (columns of `in_0`, then `in_1`,
//! ...; a NULL or FALSE condition rejects). A LEFT join keeps a `p` that
//! matches nothing as `p ++ NULL_i` (all columns of `in_i` NULL); a later
//! condition that reads those columns sees NULLs, as in SQL. An output row
//! is the concatenation of all inputs' columns.
//!
//! The key equality is always taken against `in_0`, which is never padded.
//! An ON clause that equates the key with a LEFT-joined input's column
//! (`A LEFT JOIN B ON A.k = B.k JOIN C ON B.k = C.k`) must therefore also
//! carry that equality in `conditions[i]` (`B.k = C.k`), where a padded `B`
//! makes it NULL and rejects, as SQL does; `A.k = C.k` alone would match.
//!
//! Every row of every `R_i` holds a real `in_0` row (only LEFT joins pad,
//! and they pad on the right), so the join decomposes by key: writing
//! `in_i(K)` for the rows of `in_i` with key `K`, `R(K)` for the join of the
//! `in_i(K)`, the output is the sum of the `R(K)` over all non-NULL keys
//! `K`, plus one `r ++ NULL ++ ... ++ NULL` per `in_0` row `r` whose key has
//! a NULL when every join is LEFT (such a row matches nothing; under any
//! INNER join it disappears). Rows of the other inputs whose key has a NULL
//! never contribute.
//!
//! The promise (Flink's dynamic tables): at any point, the emitted
//! changelog, read as a multiset (`+I`/`+U` add a row, `-U`/`-D` take one
//! away), equals the output above over the input seen so far.
//!
//! # Why the emitted changes are exact
//!
//! A record adds or removes one copy of a row `r` of input `j`, with key
//! `K`; only `R(K)` can change. `R_{j-1}(K)` does not depend on `in_j`, and
//! extending a row through the inputs after `j` (call it `Ext`) depends only
//! on those inputs and works row by row: `Ext(A + B) = Ext(A) + Ext(B)`.
//! Hence
//!
//! ```text
//! ΔR(K) = Σ over p in R_{j-1}(K), with its multiplicity, of Ext(Δ(p ⋈_j in_j(K)))
//! ```
//!
//! For one prefix `p`: if `r` does not match `p`, nothing changes. If it
//! does, with `m` the number of rows of `in_j(K)` that match `p` before the
//! change (`r` itself included when it is retracted):
//!
//! | record | `p ⋈_j in_j` gains | `p ⋈_j in_j` loses |
//! |---|---|---|
//! | accumulate `r` | `p ++ r` | `p ++ NULL_j`, if `⋈_j` is LEFT and `m = 0` |
//! | retract `r` | `p ++ NULL_j`, if `⋈_j` is LEFT and `m = 1` | `p ++ r` |
//!
//! The operator emits exactly `Ext` of these rows, each as often as its
//! multiplicity, and nothing else; so the materialised output moves from
//! `R` before the record to `R` after it, and by induction over the records
//! it always equals the batch join. For `j = 0` the only prefix is the empty
//! one and `Ext(r)` is the whole change.
//!
//! Retractions must retract live rows (a retract-mode changelog, as every
//! join here assumes); an upsert stream that sends `+U` without the `-U`
//! must be normalised first.
//!
//! # Row kinds (as Flink's `StreamingMultiJoinOperator`)
//!
//! - A row that contains `r` carries `r`'s kind: `+I`/`+U` when `r` is
//!   accumulated, `-U`/`-D` when retracted. An all-INNER MultiJoin thus
//!   forwards its inputs' kinds. Flink does the same with LEFT joins (a
//!   `+U` on `in_0` whose row matches nothing emits `+U[a, NULL, ...]`), and
//!   its planner declares any MultiJoin with an outer join as producing
//!   every kind. This differs from the binary join
//!   ([`super::regular_join`]), which emits `+I`/`-D` for LEFT joins.
//! - A NULL-padded row that disappears or appears because `r` changed a
//!   prefix's match count (the `p ++ NULL_j` rows of the table above) is
//!   `-D` or `+I`.
//!
//! Order, per record: every retraction, then every accumulation, each group
//! in the order of the walk below. For one prefix this is Flink's order
//! (`-D` of the padded row before `+I`/`+U` of the joined one; `-U`/`-D` of
//! the joined row before `+I` of the padded one); where a key has several
//! prefixes Flink interleaves them, this operator groups them.
//! [`MultiJoinSpec::changelog_mode`] gives the kinds the operator may emit.
//!
//! # Mechanics
//!
//! State: one [`JoinSideState`] per input, named `input0`, `input1`, ...
//! (in state and in a checkpoint), in the input's layout (`layouts[i]`: one row per join key, join key →
//! {unique key → row}, or join key → {row → count}). Nothing else: no
//! intermediate result, and no per-row match counts on LEFT-joined sides
//! (a binary outer join stores them; here they are recounted). Rows whose
//! key has a NULL are not stored, since no lookup can reach them and their
//! output depends on the row alone.
//!
//! Per record `r` on input `j` with key `K`:
//! 1. *Prefix walk*: enumerate `R_{j-1}(K)` depth first. Depth 0 scans
//!    `in_0(K)`; a partial result reaching depth `d` scans `in_d(K)` and
//!    keeps the rows whose condition holds, or continues NULL-padded when
//!    none does and `⋈_d` is LEFT. Stored multiplicities (the
//!    `NoUniqueKey` counts) multiply. As in Flink's recursion, `in_d(K)` is
//!    scanned once per partial result that reaches depth `d`.
//! 2. For each prefix `p` that `r` matches: when `⋈_j` is LEFT, scan
//!    `in_j(K)` once more to count `p`'s matches `m` (the table above);
//!    extend `p ++ r`, and the padded row if its fate changes, through the
//!    inputs after `j` with the same walk.
//! 3. Add `r` to or retract it from `in_j`'s state; emit.
//!
//! Cost: each input's rows for the key are read from state at most once per
//! record and then filtered in memory for every partial result. Counter
//! `rows_visited` is the number of stored entries read (a `NoUniqueKey`
//! entry counts once whatever its count); it grows with the rows per key of
//! every input, and the in-memory walk with their product, which is where
//! MultiJoin loses to a chain of binary joins. The state counters of the
//! `input<i>` handles show the matching reads.

use super::join_spec::JoinType;
use super::join_state::{JoinSideState, JoinStateLayout, Stored};
use crate::changelog::{Change, ChangelogMode, RowKind};
use crate::checkpoint::OperatorImage;
use crate::expr::Expr;
use crate::operator::{OpError, OpResult, Operator};
use crate::state::{StateBackend, StateReport};
use crate::value::{extend_copy, Row, Value};

/// What a [`MultiJoinOperator`] joins. Every vector has one entry per input.
#[derive(Clone, Debug)]
pub struct MultiJoinSpec {
    /// Columns per input.
    pub arities: Vec<usize>,
    /// The common join key's columns in each input (same length for all;
    /// equal values across inputs join).
    pub keys: Vec<Vec<usize>>,
    /// For input `i >= 1`: how it joins the inputs before it (`Inner` or
    /// `Left`). `join_types[0]` is ignored.
    pub join_types: Vec<JoinType>,
    /// For input `i >= 1`: the rest of its ON clause (non-equi conditions,
    /// equalities on other columns, and any key equality against an input
    /// other than 0, see the module doc), over the concatenation of inputs
    /// `0..=i`; `None` = TRUE. `conditions[0]` must be `None`.
    pub conditions: Vec<Option<Expr>>,
    /// Each input's state layout.
    pub layouts: Vec<JoinStateLayout>,
}

impl MultiJoinSpec {
    /// Number of inputs.
    pub fn inputs(&self) -> usize {
        self.arities.len()
    }

    /// Columns of an output row: the sum of the inputs' arities.
    pub fn output_arity(&self) -> usize {
        self.arities.iter().sum()
    }

    /// Position of input `i`'s first column in an output row.
    pub fn offset(&self, i: usize) -> usize {
        self.arities[..i].iter().sum()
    }

    fn is_left(&self, i: usize) -> bool {
        i > 0 && self.join_types[i] == JoinType::Left
    }

    /// The row kinds the operator may emit, given each input's changelog
    /// mode: every kind its inputs carry (rows that contain the record carry
    /// its kind), plus `-D` for padded rows that vanish when a LEFT-joined
    /// input accumulates and `+I` for those that appear when it retracts.
    /// (Flink's planner declares `[I,UB,UA,D]` for any MultiJoin with an
    /// outer join.)
    pub fn changelog_mode(&self, inputs: &[ChangelogMode]) -> ChangelogMode {
        let mut mode = inputs
            .iter()
            .fold(ChangelogMode::default(), |a, b| a.union(*b));
        for (i, m) in inputs.iter().enumerate() {
            if i < self.inputs() && self.is_left(i) {
                mode.delete |= m.insert || m.update_after;
                mode.insert |= m.update_before || m.delete;
            }
        }
        mode
    }

    /// Checks the spec, naming the first problem found.
    pub fn validate(&self) -> Result<(), String> {
        let n = self.arities.len();
        if n < 2 {
            return Err(format!("MultiJoin needs at least 2 inputs, got {n}"));
        }
        for (what, len) in [
            ("keys", self.keys.len()),
            ("join_types", self.join_types.len()),
            ("conditions", self.conditions.len()),
            ("layouts", self.layouts.len()),
        ] {
            if len != n {
                return Err(format!(
                    "MultiJoin has {n} inputs (arities) but {len} entries in {what}"
                ));
            }
        }
        let key_len = self.keys[0].len();
        if key_len == 0 {
            return Err("MultiJoin needs a common join key; input 0 has no key columns".into());
        }
        for i in 0..n {
            let arity = self.arities[i];
            if i > 0 && !matches!(self.join_types[i], JoinType::Inner | JoinType::Left) {
                return Err(format!(
                    "MultiJoin input {i}: join type {:?} is not supported (INNER and LEFT only)",
                    self.join_types[i]
                ));
            }
            if self.keys[i].len() != key_len {
                return Err(format!(
                    "MultiJoin inputs must share one join key: input 0 has {key_len} key columns, input {i} has {}",
                    self.keys[i].len()
                ));
            }
            if let Some(&c) = self.keys[i].iter().find(|&&c| c >= arity) {
                return Err(format!(
                    "MultiJoin input {i}: key column {c} is out of range (arity {arity})"
                ));
            }
            if let JoinStateLayout::HasUniqueKey(uk) = &self.layouts[i] {
                if uk.is_empty() {
                    return Err(format!("MultiJoin input {i}: HasUniqueKey with no columns"));
                }
                if let Some(&c) = uk.iter().find(|&&c| c >= arity) {
                    return Err(format!(
                        "MultiJoin input {i}: unique key column {c} is out of range (arity {arity})"
                    ));
                }
            }
            match (&self.conditions[i], i) {
                (Some(_), 0) => {
                    return Err(
                        "MultiJoin: conditions[0] must be None (a filter on input 0 belongs before the join)"
                            .into(),
                    )
                }
                (Some(cond), _) => {
                    let width = self.offset(i) + arity;
                    let mut cols = Vec::new();
                    cond.columns(&mut cols);
                    if let Some(c) = cols.into_iter().find(|&c| c >= width) {
                        return Err(format!(
                            "MultiJoin input {i}: condition reads column {c}, but it sees only the {width} columns of inputs 0..={i}"
                        ));
                    }
                }
                (None, _) => {}
            }
        }
        Ok(())
    }
}

/// The N-way join over a common key; see the module doc.
pub struct MultiJoinOperator {
    spec: MultiJoinSpec,
    sides: Vec<JoinSideState>,
    rows_visited: u64,
    scratch: WalkScratch,
    buffers: RecordBuffers,
}

impl MultiJoinOperator {
    /// Creates the operator and its state `input0`, `input1`, ... under
    /// `scope`. Fails on an invalid spec (see [`MultiJoinSpec::validate`]).
    pub fn new(
        backend: &StateBackend,
        scope: &str,
        spec: MultiJoinSpec,
    ) -> OpResult<MultiJoinOperator> {
        spec.validate().map_err(OpError::Spec)?;
        let sides = (0..spec.inputs())
            .map(|i| {
                JoinSideState::new(
                    backend,
                    scope,
                    &format!("input{i}"),
                    spec.layouts[i].clone(),
                    false,
                    spec.arities[i],
                )
            })
            .collect::<OpResult<Vec<_>>>()?;
        let scratch = WalkScratch::new(spec.inputs());
        Ok(MultiJoinOperator {
            spec,
            sides,
            rows_visited: 0,
            scratch,
            buffers: RecordBuffers::default(),
        })
    }

    pub fn spec(&self) -> &MultiJoinSpec {
        &self.spec
    }

    fn process_one(&mut self, j: usize, change: Change, out: &mut Vec<Change>) -> OpResult<()> {
        let spec = &self.spec;
        let n = spec.inputs();
        let Change { kind, row } = change;
        if row.len() != spec.arities[j] {
            return Err(OpError::Spec(format!(
                "MultiJoin input {j}: row has {} columns, expected {}",
                row.len(),
                spec.arities[j]
            )));
        }
        let RecordBuffers {
            key,
            prefixes,
            counts,
            p,
            retractions,
            accumulations,
        } = &mut self.buffers;
        key.clear();
        key.extend(spec.keys[j].iter().map(|&c| row[c].clone()));
        if key.iter().any(Value::is_null) {
            // Matches nothing: only an input-0 row shows, padded, and only
            // when every join is LEFT.
            if j == 0 && (1..n).all(|i| spec.is_left(i)) {
                let mut padded = row;
                padded.resize(spec.output_arity(), Value::Null);
                out.push(Change::new(kind, padded));
            }
            return Ok(());
        }

        let accumulate = kind.is_accumulate();
        let mut walk = Walk {
            spec,
            sides: &mut self.sides,
            key,
            visited: &mut self.rows_visited,
            scratch: self.scratch.for_record(),
        };
        // The prefixes (inputs `0..j`), each in a buffer kept from record
        // to record, extended in place below.
        let plen = spec.offset(j);
        counts.clear();
        if j == 0 {
            if prefixes.is_empty() {
                prefixes.push(Row::new());
            }
            prefixes[0].clear();
            counts.push(1);
        } else {
            p.clear();
            walk.extend(0, j, p, 1, &mut Prefixes { prefixes, counts })?;
        }

        let condition = spec.conditions[j].as_ref();
        for (p, &count) in prefixes.iter_mut().zip(counts.iter()) {
            extend_copy(p, &row);
            if let Some(cond) = condition {
                if !cond.is_true(p) {
                    continue;
                }
            }
            if spec.is_left(j) {
                p.truncate(plen);
                let m = walk.match_count(j, p)?;
                let pad = match (accumulate, m) {
                    (true, 0) => Some(RowKind::Delete),
                    (false, 1) => Some(RowKind::Insert),
                    _ => None,
                };
                if let Some(pad_kind) = pad {
                    p.resize(plen + spec.arities[j], Value::Null);
                    let target = if pad_kind == RowKind::Delete {
                        &mut *retractions
                    } else {
                        &mut *accumulations
                    };
                    walk.extend(
                        j + 1,
                        n,
                        p,
                        count,
                        &mut Emit {
                            target,
                            kind: pad_kind,
                        },
                    )?;
                    p.truncate(plen);
                }
                extend_copy(p, &row);
            }
            let target = if accumulate {
                &mut *accumulations
            } else {
                &mut *retractions
            };
            walk.extend(j + 1, n, p, count, &mut Emit { target, kind })?;
        }

        if accumulate {
            // The record's row itself goes into state.
            self.sides[j].add_owned(key, row, 0)?;
        } else {
            self.sides[j].retract(key, &row)?;
        }
        out.append(retractions);
        out.append(accumulations);
        Ok(())
    }
}

/// A record's buffers, kept by the operator from record to record: its
/// join key, the prefixes the walk found (with their multiplicities), the
/// partial result the prefix walk extends, and the record's retractions
/// and accumulations until they are emitted in that order.
#[derive(Default)]
struct RecordBuffers {
    key: Row,
    prefixes: Vec<Row>,
    counts: Vec<i64>,
    p: Row,
    retractions: Vec<Change>,
    accumulations: Vec<Change>,
}

/// Where a walk puts each complete row it reaches, with its multiplicity.
trait Sink {
    fn take(&mut self, row: &[Value], count: i64);
}

/// Prefixes, each copied into the next of the buffers (the `n`-th prefix
/// into buffer `n`, `n` being the number of counts so far).
struct Prefixes<'a> {
    prefixes: &'a mut Vec<Row>,
    counts: &'a mut Vec<i64>,
}

impl Sink for Prefixes<'_> {
    fn take(&mut self, row: &[Value], count: i64) {
        let n = self.counts.len();
        if n == self.prefixes.len() {
            self.prefixes.push(Row::with_capacity(row.len()));
        }
        let p = &mut self.prefixes[n];
        p.clear();
        extend_copy(p, row);
        self.counts.push(count);
    }
}

/// Output rows: each row as often as its multiplicity, with `kind`.
struct Emit<'a> {
    target: &'a mut Vec<Change>,
    kind: RowKind,
}

impl Sink for Emit<'_> {
    fn take(&mut self, row: &[Value], count: i64) {
        for _ in 0..count {
            let mut out = Row::with_capacity(row.len());
            extend_copy(&mut out, row);
            self.target.push(Change::new(self.kind, out));
        }
    }
}

/// The join walk over the inputs' state for one key. Each input's rows
/// for the key are read from state once per record and then filtered in
/// memory for every partial result, so a walk costs one state scan per
/// input instead of one per partial result (which on RocksDB is a seek).
struct Walk<'a> {
    spec: &'a MultiJoinSpec,
    sides: &'a mut [JoinSideState],
    key: &'a [Value],
    visited: &'a mut u64,
    scratch: &'a mut WalkScratch,
}

/// The walk's buffers, kept by the operator from record to record so a
/// walk allocates nothing but the rows it emits: per input, its rows under
/// the record's key (read once per record into buffers reused), and per
/// depth, which of them match the partial result being extended (indices,
/// not copies of the rows).
struct WalkScratch {
    rows: Vec<Vec<Stored>>,
    read: Vec<bool>,
    kept: Vec<Vec<usize>>,
}

impl WalkScratch {
    fn new(inputs: usize) -> WalkScratch {
        WalkScratch {
            rows: (0..inputs).map(|_| Vec::new()).collect(),
            read: vec![false; inputs],
            kept: (0..inputs).map(|_| Vec::new()).collect(),
        }
    }

    /// Ready for a new record (another key): nothing read yet.
    fn for_record(&mut self) -> &mut WalkScratch {
        self.read.fill(false);
        self
    }
}

impl Walk<'_> {
    /// Extends the partial result `buf` (inputs `0..depth`, present `count`
    /// times) through inputs `depth..to`, pushing each result with its
    /// multiplicity into `found`. `buf` is restored before returning.
    fn extend<S: Sink>(
        &mut self,
        depth: usize,
        to: usize,
        buf: &mut Row,
        count: i64,
        found: &mut S,
    ) -> OpResult<()> {
        if depth == to {
            found.take(buf, count);
            return Ok(());
        }
        let len = buf.len();
        // Each depth is on the walk's stack at most once: its index list
        // is taken out while deeper depths use theirs, then put back.
        let kept = self.scan(depth, buf)?;
        if kept.is_empty() && self.spec.is_left(depth) {
            buf.resize(len + self.spec.arities[depth], Value::Null);
            self.extend(depth + 1, to, buf, count, found)?;
            buf.truncate(len);
        }
        for &i in &kept {
            let m = &self.scratch.rows[depth][i];
            extend_copy(buf, &m.row);
            let times = m.count;
            self.extend(depth + 1, to, buf, count * times, found)?;
            buf.truncate(len);
        }
        self.scratch.kept[depth] = kept;
        Ok(())
    }

    /// How many stored rows of input `depth` (with multiplicity) match the
    /// partial result `buf`.
    fn match_count(&mut self, depth: usize, buf: &mut Row) -> OpResult<i64> {
        let kept = self.scan(depth, buf)?;
        let rows = &self.scratch.rows[depth];
        let m = kept.iter().map(|&i| rows[i].count).sum();
        self.scratch.kept[depth] = kept;
        Ok(m)
    }

    /// Which stored rows of input `depth` under the key match the partial
    /// result `buf` (inputs `0..depth`), as indices into
    /// `scratch.rows[depth]`; the list is the depth's buffer, taken out.
    fn scan(&mut self, depth: usize, buf: &mut Row) -> OpResult<Vec<usize>> {
        let scratch = &mut *self.scratch;
        if !scratch.read[depth] {
            let visited = &mut *self.visited;
            self.sides[depth].matches_into(
                self.key,
                |_| {
                    *visited += 1;
                    true
                },
                &mut scratch.rows[depth],
            )?;
            scratch.read[depth] = true;
        }
        let rows = &scratch.rows[depth];
        let mut kept = std::mem::take(&mut scratch.kept[depth]);
        kept.clear();
        match self.spec.conditions[depth].as_ref() {
            None => kept.extend(0..rows.len()),
            Some(cond) => {
                let len = buf.len();
                for (i, s) in rows.iter().enumerate() {
                    extend_copy(buf, &s.row);
                    if cond.is_true(buf) {
                        kept.push(i);
                    }
                    buf.truncate(len);
                }
            }
        }
        Ok(kept)
    }
}

impl Operator for MultiJoinOperator {
    fn process(&mut self, input: usize, batch: Vec<Change>, out: &mut Vec<Change>) -> OpResult<()> {
        if input >= self.spec.inputs() {
            return Err(OpError::Spec(format!(
                "MultiJoin has {} inputs; got a batch for input {input}",
                self.spec.inputs()
            )));
        }
        for change in batch {
            self.process_one(input, change, out)?;
        }
        Ok(())
    }

    fn state_reports(&self) -> Vec<StateReport> {
        self.sides.iter().map(JoinSideState::report).collect()
    }

    /// Each input's state under its state name (`input0`, `input1`, ...),
    /// keyed by the common join key every input is hashed on. The walk's
    /// buffers hold nothing between records.
    fn snapshot_state(&mut self, image: &mut OperatorImage) -> OpResult<()> {
        for (i, side) in self.sides.iter_mut().enumerate() {
            side.snapshot(&format!("input{i}"), image)?;
        }
        Ok(())
    }

    fn restore_state(
        &mut self,
        image: &OperatorImage,
        owns: &dyn Fn(&[Value]) -> bool,
    ) -> OpResult<()> {
        for (i, side) in self.sides.iter_mut().enumerate() {
            side.restore(&format!("input{i}"), image, owns)?;
        }
        Ok(())
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("rows_visited", self.rows_visited)]
    }
}
