//! What the Top-N operators share: the spec the planner fixes, the sort
//! key's order, and how rows are emitted with or without their rank (as
//! Flink's `AbstractTopNFunction`).
//!
//! A Top-N keeps, per partition key, the rows ranked `rank_start..=rank_end`
//! by the sort key (`ROW_NUMBER`: rows with equal sort keys are ranked in
//! the order they came). The strategies differ in what their input may
//! carry and so in what they keep: [`super::append_only_topn`] (insert-only
//! input, only the top rows) and [`super::retractable_topn`] (any input,
//! every row).

use crate::changelog::{Change, RowKind};
use crate::operator::{OpError, OpResult};
use crate::value::{Row, Value};
use std::cmp::Ordering;

/// One `ORDER BY` column: ascending sorts NULL first, descending NULL last
/// (Flink's defaults).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SortField {
    pub column: usize,
    pub descending: bool,
}

/// A Top-N as the planner fixed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopNSpec {
    pub partition_key: Vec<usize>,
    pub order: Vec<SortField>,
    /// 1-based and inclusive, `rank_start <= rank_end`.
    pub rank_start: u64,
    pub rank_end: u64,
    /// Whether each output row ends with its rank (a BIGINT).
    pub output_rank_number: bool,
    pub generate_update_before: bool,
    /// Whether the state has a TTL (the append-only heap cache is then off).
    pub ttl_enabled: bool,
    /// The input row's arity.
    pub arity: usize,
}

impl TopNSpec {
    /// The sort key of `row`.
    pub fn sort_key(&self, row: &[Value]) -> Row {
        self.order.iter().map(|f| row[f.column].clone()).collect()
    }

    /// Checks that `row` has the input's arity (a record from elsewhere, a
    /// loaded plan's input, is not trusted), then fills `buf` with its
    /// partition key: what every strategy does first with a record.
    pub fn checked_partition_of(&self, row: &[Value], buf: &mut Row) -> OpResult<()> {
        if row.len() != self.arity {
            return Err(OpError::Record(format!(
                "a Top-N row has {} column(s), expected {}",
                row.len(),
                self.arity
            )));
        }
        self.partition_of(row, buf);
        Ok(())
    }

    /// The partition key of `row`.
    pub fn partition_of(&self, row: &[Value], buf: &mut Row) {
        buf.clear();
        buf.extend(self.partition_key.iter().map(|&i| row[i].clone()));
    }

    /// Orders two sort keys as the `ORDER BY` says.
    pub fn compare(&self, a: &[Value], b: &[Value]) -> Ordering {
        for ((x, y), f) in a.iter().zip(b).zip(&self.order) {
            let o = x.total_cmp(y);
            let o = if f.descending { o.reverse() } else { o };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    }

    pub fn in_rank_end(&self, rank: u64) -> bool {
        rank <= self.rank_end
    }

    pub fn in_rank_range(&self, rank: u64) -> bool {
        rank >= self.rank_start && rank <= self.rank_end
    }

    /// Whether the strategies take their ranked path: the rank is output,
    /// or the range starts after 1 (the unranked path cannot skip rows).
    pub fn ranked(&self) -> bool {
        self.output_rank_number || self.rank_start > 1
    }

    /// Checks the spec against the input's arity.
    pub fn check(&self) -> Result<(), String> {
        if self.rank_start < 1 || self.rank_end < self.rank_start {
            return Err(format!(
                "the rank range {}..={} is empty or starts before 1",
                self.rank_start, self.rank_end
            ));
        }
        if self.order.is_empty() {
            return Err("a Top-N needs an ORDER BY column".into());
        }
        let columns = self
            .partition_key
            .iter()
            .chain(self.order.iter().map(|f| &f.column));
        for &c in columns {
            if c >= self.arity {
                return Err(format!(
                    "column {c} is not among the {} input columns",
                    self.arity
                ));
            }
        }
        Ok(())
    }
}

/// Emits the changes of a Top-N, with the rank appended when asked and
/// only inside the rank range (Flink's `collect*` helpers).
pub struct Emitter<'a> {
    pub spec: &'a TopNSpec,
    pub out: &'a mut Vec<Change>,
}

impl Emitter<'_> {
    fn ranked(&mut self, kind: RowKind, row: &[Value], rank: u64) {
        if !self.spec.in_rank_range(rank) {
            return;
        }
        let mut r = row.to_vec();
        if self.spec.output_rank_number {
            r.push(Value::Int(rank as i64));
        }
        self.out.push(Change::new(kind, r));
    }

    pub fn insert_at(&mut self, row: &[Value], rank: u64) {
        self.ranked(RowKind::Insert, row, rank);
    }

    pub fn delete_at(&mut self, row: &[Value], rank: u64) {
        self.ranked(RowKind::Delete, row, rank);
    }

    pub fn update_before_at(&mut self, row: &[Value], rank: u64) {
        if self.spec.generate_update_before {
            self.ranked(RowKind::UpdateBefore, row, rank);
        }
    }

    pub fn update_after_at(&mut self, row: &[Value], rank: u64) {
        self.ranked(RowKind::UpdateAfter, row, rank);
    }

    /// An unranked insert (the unranked path emits only inside the range).
    pub fn insert(&mut self, row: &[Value]) {
        self.out.push(Change::new(RowKind::Insert, row.to_vec()));
    }

    pub fn delete(&mut self, row: &[Value]) {
        self.out.push(Change::new(RowKind::Delete, row.to_vec()));
    }
}

/// A list of rows stored as one state row: the rows one after another.
pub fn flatten(rows: &[Row]) -> Row {
    rows.iter().flatten().cloned().collect()
}

/// The rows of a state row made by [`flatten`]; `None` when its length is
/// not a multiple of `arity`.
pub fn unflatten(flat: &[Value], arity: usize) -> Option<Vec<Row>> {
    if arity == 0 || !flat.len().is_multiple_of(arity) {
        return None;
    }
    Some(flat.chunks(arity).map(<[Value]>::to_vec).collect())
}
