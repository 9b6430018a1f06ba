//! The changelog: row kinds, changes, changelog modes and sink encodings.
//!
//! A dynamic table is the sum of its changelog: `+I` and `+U` add a row,
//! `-U` and `-D` take one away. An operator's *changelog mode* is the set of
//! kinds it may emit; EXPLAIN prints it as Flink does (`[I,UB,UA,D]`).
//! A sink encodes the changelog for the outside world:
//!
//! | encoding | sends |
//! |---|---|
//! | append-only | `+I` only |
//! | retract | `+I`; an update as `-U` old then `+U` new; `-D` |
//! | upsert | `+I`/`+U` as one upsert per key; `-D` (no `-U`) |

use crate::value::{Row, Value};

use std::fmt;

/// The kind of one changelog row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RowKind {
    Insert,
    UpdateBefore,
    UpdateAfter,
    Delete,
}

impl RowKind {
    /// `+I`, `-U`, `+U`, `-D`: the short form Flink's sql-client prints.
    pub fn short(self) -> &'static str {
        match self {
            RowKind::Insert => "+I",
            RowKind::UpdateBefore => "-U",
            RowKind::UpdateAfter => "+U",
            RowKind::Delete => "-D",
        }
    }

    /// Parses `+I`, `-U`, `+U`, `-D` (also `I`, `UB`, `UA`, `D`).
    pub fn parse(s: &str) -> Option<RowKind> {
        match s.trim() {
            "+I" | "I" => Some(RowKind::Insert),
            "-U" | "UB" => Some(RowKind::UpdateBefore),
            "+U" | "UA" => Some(RowKind::UpdateAfter),
            "-D" | "D" => Some(RowKind::Delete),
            _ => None,
        }
    }

    /// True for `+I` and `+U`: the row is added to the table.
    pub fn is_accumulate(self) -> bool {
        matches!(self, RowKind::Insert | RowKind::UpdateAfter)
    }

    /// True for `-U` and `-D`: the row is taken away.
    pub fn is_retract(self) -> bool {
        !self.is_accumulate()
    }

    /// Index in `[+I, -U, +U, -D]`, for per-kind counters.
    pub fn index(self) -> usize {
        match self {
            RowKind::Insert => 0,
            RowKind::UpdateBefore => 1,
            RowKind::UpdateAfter => 2,
            RowKind::Delete => 3,
        }
    }

    pub const ALL: [RowKind; 4] = [
        RowKind::Insert,
        RowKind::UpdateBefore,
        RowKind::UpdateAfter,
        RowKind::Delete,
    ];
}

impl fmt::Display for RowKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.short())
    }
}

/// One changelog row.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Change {
    pub kind: RowKind,
    pub row: Row,
}

impl Change {
    pub fn new(kind: RowKind, row: Row) -> Change {
        Change { kind, row }
    }
    pub fn insert(row: Row) -> Change {
        Change::new(RowKind::Insert, row)
    }
    pub fn delete(row: Row) -> Change {
        Change::new(RowKind::Delete, row)
    }
    pub fn update_before(row: Row) -> Change {
        Change::new(RowKind::UpdateBefore, row)
    }
    pub fn update_after(row: Row) -> Change {
        Change::new(RowKind::UpdateAfter, row)
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]", self.kind, crate::value::DisplayRow(&self.row))
    }
}

/// The set of row kinds a stream may carry.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub struct ChangelogMode {
    pub insert: bool,
    pub update_before: bool,
    pub update_after: bool,
    pub delete: bool,
}

impl ChangelogMode {
    pub const INSERT_ONLY: ChangelogMode = ChangelogMode {
        insert: true,
        update_before: false,
        update_after: false,
        delete: false,
    };
    pub const ALL: ChangelogMode = ChangelogMode {
        insert: true,
        update_before: true,
        update_after: true,
        delete: true,
    };
    pub const UPSERT: ChangelogMode = ChangelogMode {
        insert: true,
        update_before: false,
        update_after: true,
        delete: true,
    };

    pub fn is_insert_only(&self) -> bool {
        !self.update_before && !self.update_after && !self.delete
    }

    pub fn contains(&self, kind: RowKind) -> bool {
        match kind {
            RowKind::Insert => self.insert,
            RowKind::UpdateBefore => self.update_before,
            RowKind::UpdateAfter => self.update_after,
            RowKind::Delete => self.delete,
        }
    }

    pub fn union(self, o: ChangelogMode) -> ChangelogMode {
        ChangelogMode {
            insert: self.insert || o.insert,
            update_before: self.update_before || o.update_before,
            update_after: self.update_after || o.update_after,
            delete: self.delete || o.delete,
        }
    }
}

impl fmt::Display for ChangelogMode {
    /// `[I,UB,UA,D]`, the form of Flink's `changelogMode=` in EXPLAIN.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if self.insert {
            parts.push("I");
        }
        if self.update_before {
            parts.push("UB");
        }
        if self.update_after {
            parts.push("UA");
        }
        if self.delete {
            parts.push("D");
        }
        write!(f, "[{}]", parts.join(","))
    }
}

/// How a sink encodes the changelog it receives.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SinkEncoding {
    /// Only `+I` allowed.
    AppendOnly,
    /// Every kind, `-U` before `+U`.
    Retract,
    /// Keyed by the given column indices; `-U` is sent only where a
    /// filter above updates needs it, and deletes its key.
    Upsert { key: Vec<usize> },
}

/// Counts of changelog rows by kind, indexed by [`RowKind::index`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KindCounts(pub [u64; 4]);

impl KindCounts {
    pub fn add(&mut self, kind: RowKind) {
        self.0[kind.index()] += 1;
    }
    pub fn get(&self, kind: RowKind) -> u64 {
        self.0[kind.index()]
    }
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
    pub fn merge(&mut self, o: &KindCounts) {
        for i in 0..4 {
            self.0[i] += o.0[i];
        }
    }
}

/// A materialised table: rows with multiplicities, as a sink sees it after
/// applying a changelog. Negative counts are kept while a retraction races
/// ahead of its row, so the final sum does not depend on arrival order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Multiset {
    counts: hashbrown::HashMap<Row, i64>,
}

impl Multiset {
    pub fn new() -> Multiset {
        Multiset::default()
    }

    pub fn add(&mut self, row: Row, n: i64) {
        use hashbrown::hash_map::Entry;
        match self.counts.entry(row) {
            Entry::Occupied(mut e) => {
                *e.get_mut() += n;
                if *e.get() == 0 {
                    // Zero entries go, so equal tables compare equal.
                    e.remove();
                }
            }
            Entry::Vacant(e) => {
                if n != 0 {
                    e.insert(n);
                }
            }
        }
    }

    pub fn apply(&mut self, change: &Change) {
        let n = if change.kind.is_accumulate() { 1 } else { -1 };
        self.add(change.row.clone(), n);
    }

    /// Every row with its count (non-zero), in canonical row order.
    pub fn entries(&self) -> Vec<(Row, i64)> {
        let mut e: Vec<(Row, i64)> = self.counts.iter().map(|(r, c)| (r.clone(), *c)).collect();
        e.sort_by(|a, b| crate::value::cmp_rows(&a.0, &b.0));
        e
    }

    pub fn count(&self, row: &[Value]) -> i64 {
        self.counts.get(row).copied().unwrap_or(0)
    }

    /// Every row repeated by its (positive) count, sorted; negative counts
    /// are an error of the producer and are returned separately.
    pub fn sorted_rows(&self) -> Vec<Row> {
        let mut rows = Vec::new();
        for (r, c) in &self.counts {
            for _ in 0..(*c).max(0) {
                rows.push(r.clone());
            }
        }
        rows.sort_by(|a, b| crate::value::cmp_rows(a, b));
        rows
    }

    /// Rows whose count is negative: retractions of rows never added.
    pub fn negative(&self) -> Vec<(Row, i64)> {
        self.counts
            .iter()
            .filter(|(_, c)| **c < 0)
            .map(|(r, c)| (r.clone(), *c))
            .collect()
    }

    pub fn len(&self) -> usize {
        self.counts.values().map(|c| (*c).max(0) as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
