//! One input side's buffer in a mini-batch join: the records of an open
//! bundle, folded as they arrive, in the shape of the side's state layout
//! (Flink's `JoinKeyContainsUniqueKeyBundle`, `InputSideHasUniqueKeyBundle`
//! and `InputSideHasNoUniqueKeyBundle`).
//!
//! Semantics: folding never changes what the bundle adds to or takes away
//! from the side, only how many records say it. Per state entry (join key;
//! join key and unique key; join key and whole row) the folded records have
//! the same net effect as the raw ones, so joining the folded bundle
//! materialises to the same result as joining every raw record.
//!
//! Folding rules, applied when a record arrives (`A` = `+I`/`+U`, `R` =
//! `-U`/`-D`; "last" is the last record kept for the same entry):
//!
//! | layout | last | new | kept |
//! |---|---|---|---|
//! | unique key (both) | `A` | `A` | the new one |
//! | unique key (both) | `A` | `R` | neither (they cancel) |
//! | unique key (both) | `R` | `R` | the new one |
//! | unique key (both) | `R` | `A` | both: a retraction/accumulate pair |
//! | no unique key | any `R` (any `A`) of the same row | `A` (`R`) | neither |
//!
//! So a unique-key entry holds at most `[R]`, `[A]` or `[R, A]`: the
//! retraction of the row the state held before the bundle, then the row it
//! holds after. A no-unique-key entry holds copies of one row, all `A` or
//! all `R` (a signed count). Row kinds follow Flink where a join key covers
//! the unique key: `+I` followed by `+U` keeps the `+U` as `+I`, and after
//! `+I` and a retraction cancel, the key's next `+U` becomes `+I` (nothing
//! was there before). Unlike Flink, which folds no-unique-key rows by their
//! hash code, rows fold only when equal.
//!
//! Order: entries are drained grouped by join key, join keys in order of
//! first arrival, entries of one join key in order of first arrival (Flink
//! iterates hash maps; any order materialises to the same result, this one
//! is deterministic).

use super::join_state::JoinStateLayout;
use crate::changelog::{Change, RowKind};
use crate::state::heap::{new_map, Map};
use crate::value::{Row, Value};

/// The records buffered for one state entry, in arrival order after folding.
pub struct BundleEntry {
    pub join_key: Row,
    pub records: Vec<Change>,
}

/// All entries of one join key.
struct KeyGroup {
    join_key: Row,
    /// Unique key or whole row → position in `entries` (unused when the
    /// join key covers the unique key: one entry).
    index: Map<Row, usize>,
    entries: Vec<Vec<Change>>,
    /// `JoinKeyContainsUniqueKey` only: a `+I` and a retraction cancelled,
    /// so the key's state is as empty as before; a later `+U` becomes `+I`.
    inserted_and_cleared: bool,
}

impl KeyGroup {
    /// The position of the entry for `sub`, created if absent.
    fn entry(&mut self, sub: &[Value]) -> usize {
        match self.index.get(sub) {
            Some(&e) => e,
            None => {
                self.index.insert(sub.to_vec(), self.entries.len());
                self.entries.push(Vec::new());
                self.entries.len() - 1
            }
        }
    }
}

/// One side's open bundle.
pub struct JoinBundle {
    layout: JoinStateLayout,
    join_keys: Vec<usize>,
    groups: Vec<KeyGroup>,
    index: Map<Row, usize>,
    /// Raw records added since the last drain.
    count: usize,
    /// Records kept after folding.
    kept: usize,
    key_buf: Row,
    sub_buf: Row,
}

impl JoinBundle {
    /// A bundle for a side stored in `layout`, joined on `join_keys`.
    pub fn new(layout: JoinStateLayout, join_keys: Vec<usize>) -> JoinBundle {
        JoinBundle {
            layout,
            join_keys,
            groups: Vec::new(),
            index: new_map(),
            count: 0,
            kept: 0,
            key_buf: Vec::new(),
            sub_buf: Vec::new(),
        }
    }

    pub fn layout(&self) -> &JoinStateLayout {
        &self.layout
    }

    /// True when the layout pairs a retraction with the accumulate that
    /// follows it (the unique-key layouts).
    pub fn pairs_updates(&self) -> bool {
        !matches!(self.layout, JoinStateLayout::NoUniqueKey)
    }

    /// Raw records added since the last drain.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Records kept after folding.
    pub fn kept(&self) -> usize {
        self.kept
    }

    /// Adds one record, folding it into what the bundle holds.
    pub fn add(&mut self, mut change: Change) {
        self.count += 1;
        self.key_buf.clear();
        self.key_buf
            .extend(self.join_keys.iter().map(|&i| change.row[i].clone()));
        let g = match self.index.get(self.key_buf.as_slice()) {
            Some(&g) => g,
            None => {
                self.index.insert(self.key_buf.clone(), self.groups.len());
                self.groups.push(KeyGroup {
                    join_key: self.key_buf.clone(),
                    index: new_map(),
                    entries: Vec::new(),
                    inserted_and_cleared: false,
                });
                self.groups.len() - 1
            }
        };
        let group = &mut self.groups[g];
        let e = match &self.layout {
            // One entry per join key.
            JoinStateLayout::JoinKeyContainsUniqueKey => {
                if group.entries.is_empty() {
                    group.entries.push(Vec::new());
                }
                0
            }
            JoinStateLayout::HasUniqueKey(uk) => {
                self.sub_buf.clear();
                self.sub_buf
                    .extend(uk.iter().map(|&i| change.row[i].clone()));
                group.entry(&self.sub_buf)
            }
            JoinStateLayout::NoUniqueKey => group.entry(&change.row),
        };
        let records = &mut group.entries[e];
        let before = records.len();
        match &self.layout {
            JoinStateLayout::JoinKeyContainsUniqueKey => {
                let cleared = std::mem::take(&mut group.inserted_and_cleared);
                if cleared && change.kind == RowKind::UpdateAfter {
                    change.kind = RowKind::Insert;
                }
                if fold_unique(records, change, true) {
                    group.inserted_and_cleared = true;
                }
            }
            JoinStateLayout::HasUniqueKey(_) => {
                fold_unique(records, change, false);
            }
            JoinStateLayout::NoUniqueKey => fold_counted(records, change),
        }
        self.kept = self.kept + records.len() - before;
    }

    /// Takes every entry out (see the module doc for the order) and empties
    /// the bundle.
    pub fn drain(&mut self) -> Vec<BundleEntry> {
        let mut out = Vec::with_capacity(self.kept);
        for group in self.groups.drain(..) {
            for records in group.entries {
                if !records.is_empty() {
                    out.push(BundleEntry {
                        join_key: group.join_key.clone(),
                        records,
                    });
                }
            }
        }
        self.index.clear();
        self.count = 0;
        self.kept = 0;
        out
    }
}

/// Folds `change` into the records of one unique-key entry. Returns true
/// when an `+I` and a retraction cancelled (`join_key_covers_uk` only).
fn fold_unique(records: &mut Vec<Change>, mut change: Change, join_key_covers_uk: bool) -> bool {
    let mut inserted_and_cleared = false;
    match records.last().map(|c| c.kind) {
        Some(last) if last.is_accumulate() => {
            records.pop();
            if change.kind.is_retract() {
                inserted_and_cleared = join_key_covers_uk && last == RowKind::Insert;
                return inserted_and_cleared;
            }
            if join_key_covers_uk && last == RowKind::Insert && change.kind == RowKind::UpdateAfter
            {
                change.kind = RowKind::Insert;
            }
        }
        Some(_) if change.kind.is_retract() => {
            records.pop();
        }
        _ => {}
    }
    records.push(change);
    inserted_and_cleared
}

/// Folds `change` into the copies of one row: it cancels the last copy of
/// the opposite sign, if any.
fn fold_counted(records: &mut Vec<Change>, change: Change) {
    let acc = change.kind.is_accumulate();
    match records.iter().rposition(|c| c.kind.is_accumulate() != acc) {
        Some(i) => {
            records.remove(i);
        }
        None => records.push(change),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64, k: i64, v: i64) -> Row {
        vec![Value::Int(id), Value::Int(k), Value::Int(v)]
    }

    fn kinds(entries: &[BundleEntry]) -> Vec<Vec<(RowKind, i64)>> {
        entries
            .iter()
            .map(|e| {
                e.records
                    .iter()
                    .map(|c| (c.kind, c.row[2].as_int().unwrap()))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn unique_key_updates_keep_the_first_retraction_and_the_last_accumulate() {
        let mut b = JoinBundle::new(JoinStateLayout::HasUniqueKey(vec![0]), vec![1]);
        for v in 0..3 {
            b.add(Change::update_before(row(1, 7, v)));
            b.add(Change::update_after(row(1, 7, v + 1)));
        }
        assert_eq!((b.len(), b.kept()), (6, 2));
        let e = b.drain();
        assert_eq!(
            kinds(&e),
            vec![vec![(RowKind::UpdateBefore, 0), (RowKind::UpdateAfter, 3)]]
        );
        assert!(b.is_empty());
    }

    #[test]
    fn join_key_covering_unique_key_rewrites_kinds_like_flink() {
        let mut b = JoinBundle::new(JoinStateLayout::JoinKeyContainsUniqueKey, vec![1]);
        b.add(Change::insert(row(1, 7, 0)));
        b.add(Change::update_after(row(1, 7, 1)));
        assert_eq!(kinds(&b.drain()), vec![vec![(RowKind::Insert, 1)]]);
        b.add(Change::insert(row(1, 7, 0)));
        b.add(Change::delete(row(1, 7, 0)));
        b.add(Change::update_after(row(1, 7, 2)));
        assert_eq!(kinds(&b.drain()), vec![vec![(RowKind::Insert, 2)]]);
    }

    #[test]
    fn counted_rows_cancel_only_equal_rows() {
        let mut b = JoinBundle::new(JoinStateLayout::NoUniqueKey, vec![1]);
        b.add(Change::insert(row(1, 7, 0)));
        b.add(Change::insert(row(1, 7, 0)));
        b.add(Change::delete(row(1, 7, 1)));
        b.add(Change::delete(row(1, 7, 0)));
        b.add(Change::insert(row(2, 8, 5)));
        b.add(Change::delete(row(2, 8, 5)));
        assert_eq!(b.kept(), 2);
        assert_eq!(
            kinds(&b.drain()),
            vec![vec![(RowKind::Insert, 0)], vec![(RowKind::Delete, 1)]]
        );
    }
}
