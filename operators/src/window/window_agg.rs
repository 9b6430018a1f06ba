//! The window aggregate: Flink's `WindowAggregate` over a window TVF
//! (`SlicingWindowOperator`), one phase.
//!
//! Each record is added to the accumulator of its group key and its slice
//! (see [`super::assigner`]), kept in a value state keyed by `(group key,
//! slice end)`. A record is late, and dropped (counted as
//! `numLateRecordsDropped`), when the last window its slice belongs to has
//! fired: the operator's watermark is at least that window's end - 1, as
//! Flink's `isWindowFired` has it. Otherwise a timer is set for the first
//! window of the slice that has not fired.
//!
//! When the watermark passes a window's end - 1, each key with a timer
//! there merges the slices of the window and emits one `+I` row: the group
//! key, the aggregates, `window_start`, `window_end`. Windows fire in
//! order of their end; keys of one window in the order their timers were
//! set. A slice is deleted when the last window it belongs to has fired,
//! so after the final watermark the state is empty. Timers live in memory
//! (Flink keeps them in state; the lab counts the accumulators only).
//!
//! With per-window state ([`WindowAggregateOperator::per_window`],
//! the lab's `lab.window.slicing` = false) the operator does what a window
//! operator without slicing does (Flink's DataStream `WindowOperator`):
//! each record is added to the accumulator of every window it belongs to
//! that has not fired, keyed by `(group key, window end)`; a window emits
//! its own accumulator and deletes it. The late rule, the order of the
//! windows and the rows are the same (a window's keys come in the order
//! they first reached it, which slicing may not keep); the state holds a
//! record in up to `size / slide` windows of a HOP instead of one slice.
//!
//! Over a window aggregate's own windows ([`WindowAggregateOperator::attached`],
//! Flink's window-attached strategy: `GROUP BY window_start, window_end`
//! of a window aggregate's output) the time column is each row's
//! `window_end`: the row belongs to that one window, whose accumulator is
//! kept per (group key, window end) and fires as above. Such rows come
//! from an operator that emits a window when the watermark passes its end,
//! before that watermark goes on, so none is late here.
//!
//! As the global half of a two-phase window aggregate
//! (`GlobalWindowAggregate`, [`WindowAggregateOperator::with_partial_input`])
//! it reads the partial accumulators a [`super::local_window_agg`] emits
//! (group key, two slots per call, slice end) and merges them into the
//! slice, with the same late rule on the partial's slice.

use super::assigner::WindowSpec;
use super::late::LateRecords;
use crate::agg::functions::{self, AggKind, AggSpec, SLOTS};
use crate::changelog::Change;
use crate::operator::{OpResult, Operator};
use crate::state::{MapState, StateBackend, StateReport, ValueState};
use crate::value::{Row, Value};
use std::collections::{BTreeMap, HashSet};

pub struct WindowAggregateOperator {
    group_by: Vec<usize>,
    aggs: Vec<AggSpec>,
    time_col: usize,
    window: WindowSpec,
    /// (group key, slice end) -> accumulator slots; per-window state:
    /// (group key, window end).
    slices: ValueState,
    /// DISTINCT calls: (group key, slice or window end) -> {(call, value) -> count}.
    distinct: Option<MapState>,
    /// Window end -> keys with a timer there, in the order they were set.
    timers: BTreeMap<i64, (Vec<Row>, HashSet<Row>)>,
    watermark: i64,
    /// Input rows are partial accumulators (key, slots, slice end).
    partial: bool,
    /// Records behind the watermark: dropped, counted, kept for `--late`.
    late: LateRecords,
    /// State per (group key, window end) instead of per slice.
    per_window: bool,
    /// The time column is the row's window end (window-attached).
    attached: bool,
}

impl WindowAggregateOperator {
    pub fn new(
        backend: &StateBackend,
        scope: &str,
        group_by: Vec<usize>,
        aggs: Vec<AggSpec>,
        time_col: usize,
        window: WindowSpec,
    ) -> OpResult<WindowAggregateOperator> {
        Self::build(backend, scope, group_by, aggs, time_col, window, false)
    }

    /// Per-window (unsliced) state: each record, or each partial of a
    /// slice, goes into the accumulator of every unfired window holding
    /// it. Its states are named apart from the slices' (`window-accs`,
    /// `window-accs-distinct`): the same keys mean other things.
    pub fn per_window(
        backend: &StateBackend,
        scope: &str,
        group_by: Vec<usize>,
        aggs: Vec<AggSpec>,
        time_col: usize,
        window: WindowSpec,
    ) -> OpResult<WindowAggregateOperator> {
        Self::build(backend, scope, group_by, aggs, time_col, window, true)
    }

    fn build(
        backend: &StateBackend,
        scope: &str,
        group_by: Vec<usize>,
        aggs: Vec<AggSpec>,
        time_col: usize,
        window: WindowSpec,
        per_window: bool,
    ) -> OpResult<WindowAggregateOperator> {
        let (accs, distinct) = if per_window {
            ("window-accs", "window-accs-distinct")
        } else {
            ("window-aggs", "window-distinct")
        };
        let slices = backend.value_state(scope, accs, SLOTS * aggs.len())?;
        let distinct = if aggs.iter().any(|a| a.distinct) {
            Some(backend.map_state(scope, distinct, 2, 1)?)
        } else {
            None
        };
        Ok(WindowAggregateOperator {
            distinct,
            group_by,
            aggs,
            time_col,
            window,
            slices,
            timers: BTreeMap::new(),
            watermark: i64::MIN,
            partial: false,
            late: LateRecords::default(),
            per_window,
            attached: false,
        })
    }

    /// Over a window aggregate's windows: the time column (of a record, or
    /// of a partial in the global half) is its window's end, and each
    /// window keeps its own accumulator. Build it with
    /// [`WindowAggregateOperator::per_window`].
    pub fn attached(mut self) -> WindowAggregateOperator {
        self.attached = true;
        self.per_window = true;
        self
    }

    /// The global half of a two-phase window aggregate: its input rows are
    /// the group key (its `group_by` columns, leading), two slots per
    /// call, and the slice end (its `time_col`).
    pub fn with_partial_input(mut self) -> WindowAggregateOperator {
        self.partial = true;
        self
    }

    /// Whether the window ending at `end` has fired at watermark `wm`.
    fn fired(end: i64, wm: i64) -> bool {
        wm >= end.saturating_sub(1)
    }

    fn set_timer(&mut self, end: i64, key: &Row) {
        let (order, set) = self.timers.entry(end).or_default();
        if set.insert(key.clone()) {
            order.push(key.clone());
        }
    }

    /// Adds one input row to the slots of every call.
    /// Whether a record of the slice ending at `slice` is late at
    /// watermark `wm`: the last window holding the slice has fired.
    pub(crate) fn is_late(window: &WindowSpec, slice: i64, wm: i64) -> bool {
        Self::fired(window.last_window_end(slice), wm)
    }

    pub(crate) fn accumulate(aggs: &[AggSpec], slots: &mut [Value], row: &[Value]) {
        for (i, a) in aggs.iter().enumerate() {
            if a.distinct || a.filter.is_some_and(|f| row[f] != Value::Bool(true)) {
                continue;
            }
            let s = SLOTS * i;
            match a.kind {
                AggKind::CountStar => functions::apply(a.kind, slots, s, &Value::Null, 1),
                kind => {
                    let v = &row[a.arg.expect("an argument")];
                    if v.is_null() {
                        continue;
                    }
                    match kind {
                        AggKind::Min | AggKind::Max => {
                            functions::apply_extreme(kind, slots, s, v, 1, true);
                        }
                        _ => functions::apply(kind, slots, s, v, 1),
                    }
                }
            }
        }
    }

    /// Adds the values of the DISTINCT calls of `row` (those its filter
    /// lets through, NULL skipped) to the distinct map of `key`.
    pub(crate) fn add_distinct(
        aggs: &[AggSpec],
        map: &mut MapState,
        key: &[Value],
        row: &[Value],
    ) -> OpResult<()> {
        for (i, a) in aggs.iter().enumerate() {
            if !a.distinct || a.filter.is_some_and(|f| row[f] != Value::Bool(true)) {
                continue;
            }
            let v = match a.arg {
                Some(c) => row[c].clone(),
                None => Value::Int(0),
            };
            if v.is_null() {
                continue;
            }
            map.modify(key, &[Value::Int(i as i64), v], |slot| {
                let n = slot.get_or_insert_with(|| vec![Value::Int(0)]);
                n[0] = Value::Int(n[0].as_int().unwrap_or(0) + 1);
            })?;
        }
        Ok(())
    }

    /// Applies each distinct value once to the slots of its call.
    pub(crate) fn apply_distinct(
        aggs: &[AggSpec],
        acc: &mut [Value],
        values: &hashbrown::HashSet<(i64, Value)>,
    ) {
        // In a fixed order: a DOUBLE sum does not depend on hashing.
        let mut values: Vec<&(i64, Value)> = values.iter().collect();
        values.sort_by(|(i, v), (j, w)| {
            i.cmp(j).then_with(|| {
                crate::value::cmp_rows(std::slice::from_ref(v), std::slice::from_ref(w))
            })
        });
        for (i, v) in values {
            let a = &aggs[*i as usize];
            let s = SLOTS * *i as usize;
            match a.kind {
                AggKind::CountStar => functions::apply(a.kind, acc, s, &Value::Null, 1),
                AggKind::Min | AggKind::Max => {
                    functions::apply_extreme(a.kind, acc, s, v, 1, true);
                }
                kind => functions::apply(kind, acc, s, v, 1),
            }
        }
    }

    /// The distinct (call, value) pairs of `key`, deleting them when asked.
    pub(crate) fn distinct_values(
        map: &mut MapState,
        key: &[Value],
        delete: bool,
        into: &mut hashbrown::HashSet<(i64, Value)>,
    ) -> OpResult<()> {
        for (ukey, _) in map.entries(key)? {
            if let [Value::Int(i), v] = ukey.as_slice() {
                into.insert((*i, v.clone()));
            }
            if delete {
                map.delete(key, &ukey)?;
            }
        }
        Ok(())
    }

    /// Adds a record (or a partial) to the accumulator of `key` (the group
    /// key and a slice end, or a window end), and its distinct values.
    fn add(&mut self, key: &[Value], row: &[Value]) -> OpResult<()> {
        let init = self.init();
        let aggs = &self.aggs;
        let (partial, g) = (self.partial, self.group_by.len());
        if let Some(map) = &mut self.distinct {
            Self::add_distinct(aggs, map, key, row)?;
        }
        self.slices.modify(key, |slot| {
            let acc = slot.get_or_insert(init);
            if partial {
                for (i, a) in aggs.iter().enumerate() {
                    let p = g + SLOTS * i..g + SLOTS * (i + 1);
                    functions::merge(a.kind, &mut acc[..], SLOTS * i, &row[p]);
                }
            } else {
                Self::accumulate(aggs, acc, row);
            }
        })?;
        Ok(())
    }

    fn init(&self) -> Row {
        self.aggs
            .iter()
            .flat_map(|a| functions::init(a.kind))
            .collect()
    }

    /// Emits the row of `key`'s window ending at `end` from `acc`.
    fn emit(&self, end: i64, key: Row, acc: &[Value], out: &mut Vec<Change>) {
        let mut row = key;
        for (i, a) in self.aggs.iter().enumerate() {
            row.push(functions::result(a, acc, SLOTS * i));
        }
        row.push(Value::Ts(self.window.window_start(end)));
        row.push(Value::Ts(end));
        out.push(Change::insert(row));
    }

    /// Per-window state: the window's own accumulator, emitted and deleted.
    fn fire_window(&mut self, end: i64, key: Row, out: &mut Vec<Change>) -> OpResult<()> {
        let mut full = key.clone();
        full.push(Value::Ts(end));
        let Some(mut acc) = self.slices.get(&full)? else {
            return Ok(());
        };
        if let Some(map) = &mut self.distinct {
            let mut distinct = hashbrown::HashSet::new();
            Self::distinct_values(map, &full, true, &mut distinct)?;
            Self::apply_distinct(&self.aggs, &mut acc, &distinct);
        }
        self.slices.delete(&full)?;
        self.emit(end, key, &acc, out);
        Ok(())
    }

    fn fire(&mut self, end: i64, key: Row, out: &mut Vec<Change>) -> OpResult<()> {
        if self.per_window {
            return self.fire_window(end, key, out);
        }
        let mut merged: Option<Row> = None;
        let mut later = false;
        let mut full = key.clone();
        full.push(Value::Null);
        let k = full.len() - 1;
        let mut distinct = hashbrown::HashSet::new();
        for slice in self.window.slices_of_window(end) {
            full[k] = Value::Ts(slice);
            let Some(slots) = self.slices.get(&full)? else {
                continue;
            };
            if let Some(map) = &mut self.distinct {
                let expires = self.window.last_window_end(slice) <= end;
                Self::distinct_values(map, &full, expires, &mut distinct)?;
            }
            let acc = merged.get_or_insert_with(|| self.init());
            for (i, a) in self.aggs.iter().enumerate() {
                let r = SLOTS * i..SLOTS * (i + 1);
                functions::merge(a.kind, &mut acc[..], SLOTS * i, &slots[r]);
            }
            if self.window.last_window_end(slice) <= end {
                self.slices.delete(&full)?;
            } else {
                later = true;
            }
        }
        if let Some(mut acc) = merged {
            Self::apply_distinct(&self.aggs, &mut acc, &distinct);
            self.emit(end, key.clone(), &acc, out);
        }
        if later {
            if let Some(next) = self.window.next_window_end(end) {
                self.set_timer(next, &key);
            }
        }
        Ok(())
    }
}

impl Operator for WindowAggregateOperator {
    fn process(
        &mut self,
        _input: usize,
        batch: Vec<Change>,
        _out: &mut Vec<Change>,
    ) -> OpResult<()> {
        for change in batch {
            let row = change.row;
            let Some(t) = row[self.time_col].as_ts() else {
                // A NULL time belongs to no window.
                continue;
            };
            if self.attached {
                if Self::fired(t, self.watermark) {
                    self.late.drop_row(row);
                    continue;
                }
                let mut key: Row = self.group_by.iter().map(|&c| row[c].clone()).collect();
                self.set_timer(t, &key);
                key.push(Value::Ts(t));
                self.add(&key, &row)?;
                continue;
            }
            let slice = if self.partial {
                t
            } else {
                self.window.slice_end(t)
            };
            if Self::fired(self.window.last_window_end(slice), self.watermark) {
                self.late.drop_row(row);
                continue;
            }
            let mut key: Row = self.group_by.iter().map(|&c| row[c].clone()).collect();
            let mut first = self.window.first_window_end(slice);
            while Self::fired(first, self.watermark) {
                first = self
                    .window
                    .next_window_end(first)
                    .expect("an unfired window holds the slice");
            }
            if !self.per_window {
                self.set_timer(first, &key);
                key.push(Value::Ts(slice));
                self.add(&key, &row)?;
                continue;
            }
            // Every unfired window of the slice, each with its own timer.
            let last = self.window.last_window_end(slice);
            let mut end = first;
            loop {
                self.set_timer(end, &key);
                key.push(Value::Ts(end));
                self.add(&key, &row)?;
                key.pop();
                match self.window.next_window_end(end) {
                    Some(next) if next <= last => end = next,
                    _ => break,
                }
            }
        }
        Ok(())
    }

    fn on_watermark(&mut self, watermark: i64, out: &mut Vec<Change>) -> OpResult<()> {
        self.watermark = self.watermark.max(watermark);
        while let Some(entry) = self.timers.first_entry() {
            let end = *entry.key();
            if !Self::fired(end, self.watermark) {
                break;
            }
            let (keys, _) = entry.remove();
            for key in keys {
                self.fire(end, key, out)?;
            }
        }
        Ok(())
    }

    fn state_reports(&self) -> Vec<StateReport> {
        let mut r = vec![self.slices.report()];
        r.extend(self.distinct.as_ref().map(MapState::report));
        r
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![self.late.counter()]
    }

    /// The global half drops partial accumulators, not records: its local
    /// half keeps the records instead.
    fn keep_late(&mut self) -> bool {
        if !self.partial {
            self.late.keep();
        }
        !self.partial
    }

    fn take_late(&mut self, late: &mut Vec<Row>) {
        self.late.take(late);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::DataType;

    fn op(per_window: bool) -> WindowAggregateOperator {
        let call = |kind, arg, distinct| AggSpec {
            kind,
            arg,
            distinct,
            filter: None,
            result_type: DataType::Int,
        };
        let aggs = vec![
            call(AggKind::CountStar, None, false),
            call(AggKind::Sum, Some(1), false),
            call(AggKind::Count, Some(1), true),
        ];
        let build = if per_window {
            WindowAggregateOperator::per_window
        } else {
            WindowAggregateOperator::new
        };
        let hop = WindowSpec::Hop { size: 4, slide: 1 };
        build(&StateBackend::heap(), "t", vec![0], aggs, 2, hop).unwrap()
    }

    fn batch(rows: &[(&str, i64, i64)]) -> Vec<Change> {
        rows.iter()
            .map(|&(k, v, t)| Change::insert(vec![Value::str(k), Value::Int(v), Value::Ts(t)]))
            .collect()
    }

    fn entries(o: &WindowAggregateOperator) -> i64 {
        o.state_reports().iter().map(|r| r.metrics.entries).sum()
    }

    /// Per-window state emits what slicing emits, in the same order, drops
    /// the same late record, and holds each record once per open window.
    #[test]
    fn per_window_state_emits_what_slices_emit() {
        let mut runs = Vec::new();
        for per_window in [false, true] {
            let mut o = op(per_window);
            let mut out = Vec::new();
            let rows = [("a", 1, 0), ("a", 1, 1), ("b", 5, 2)];
            o.process(0, batch(&rows), &mut out).unwrap();
            let before = entries(&o);
            // Fires the windows ending at 1 to 4.
            o.on_watermark(3, &mut out).unwrap();
            // t = 1 is in the windows ending at 2..=5: the last has not
            // fired. t = 0 is only in fired ones: late.
            o.process(0, batch(&[("a", 7, 1), ("a", 9, 0)]), &mut out)
                .unwrap();
            o.on_watermark(i64::MAX, &mut out).unwrap();
            assert_eq!(entries(&o), 0, "per_window {per_window}");
            assert_eq!(o.counters(), vec![("numLateRecordsDropped", 1)]);
            runs.push((before, out));
        }
        let (sliced, unsliced) = (&runs[0], &runs[1]);
        let mut a = sliced.1.clone();
        let mut b = unsliced.1.clone();
        a.sort_by(|x, y| crate::value::cmp_rows(&x.row, &y.row));
        b.sort_by(|x, y| crate::value::cmp_rows(&x.row, &y.row));
        assert_eq!(a, b);
        // a's window [1, 5): its records at 1, the second one after the
        // watermark: COUNT 2, SUM 8, 2 distinct.
        let w = |k: &str, c, s, d, end| {
            Change::insert(vec![
                Value::str(k),
                Value::Int(c),
                Value::Int(s),
                Value::Int(d),
                Value::Ts(end - 4),
                Value::Ts(end),
            ])
        };
        assert!(a.contains(&w("a", 2, 8, 2, 5)), "{a:?}");
        assert!(a.contains(&w("a", 1, 1, 1, 1)), "{a:?}");
        // Three slices, each with its distinct values, against the
        // windows: a's records in the windows ending at 1..=5, b's at
        // 3..=6.
        assert_eq!((sliced.0, unsliced.0), (3 + 3, 9 + 9));
    }
}
