//! The legacy group window aggregate: Flink's `GroupWindowAggregate`
//! (`GROUP BY k, TUMBLE(ts, size)`, `HOP(ts, slide, size)`, `SESSION(ts,
//! gap)`), which runs Flink's table `WindowOperator` with the trigger its
//! `WindowEmitStrategy` builds. Unlike the window TVF aggregate it can
//! keep a window after it fired and fire it again.
//!
//! TUMBLE and HOP keep one accumulator per (group key, window), as the
//! `WindowOperator` does (no slices). A window `[start, end)` fires when
//! the watermark reaches `end - 1` (`window.maxTimestamp()`), and its state
//! is cleared when the watermark reaches its cleanup time `end - 1 +
//! lateness` (`WindowOperator.cleanupTime`). A record goes into each of
//! its windows whose cleanup time the watermark has not reached; when it
//! goes into none it is late: dropped, counted as `numLateRecordsDropped`
//! and kept for `--late`.
//!
//! With an allowed lateness (`produce_updates`, Flink's
//! `WindowEmitStrategy.produceUpdates`), a record that reaches a window
//! the watermark has already passed fires it at once: the event-time
//! trigger fires on a late element (`AfterEndOfWindow.onElement`, and the
//! late-fire trigger `ElementTriggers.every()` with a late-fire delay of
//! 0). The operator keeps each window's last emitted result
//! (`AggregateWindowOperator`'s `previousState`): the first firing emits
//! `+I`, a later one `-U old, +U new` when the result changed and nothing
//! when it did not. Without lateness a window fires once, as `+I`.
//!
//! SESSION takes no lateness (Flink sets it to 0: "retraction is not
//! supported") and merges sessions as the window TVF's session operator
//! does; this operator runs that one and adds the window properties.
//!
//! The output row: the group key, the calls, then Flink's window
//! properties `w$start`, `w$end`, `w$rowtime` (`end - 1`) and `w$proctime`
//! (NULL: an event-time window has none). Windows fire in order of their
//! time; keys of one time in the order their timers were set. Timers live
//! in memory (Flink keeps them in state; the lab counts the accumulators).

use super::assigner::WindowSpec;
use super::late::LateRecords;
use super::session_agg::SessionWindowAggregateOperator;
use super::window_agg::WindowAggregateOperator;
use crate::agg::functions::{self, AggSpec, SLOTS};
use crate::changelog::{Change, RowKind};
use crate::operator::{OpResult, Operator};
use crate::state::{MapState, StateBackend, StateReport, ValueState};
use crate::value::{Row, Value};
use std::collections::{BTreeMap, HashSet};

/// The group window operator: aligned windows kept per window, or a
/// session window aggregate with the window properties added.
pub enum GroupWindowAggregateOperator {
    Aligned(Box<AlignedGroupWindows>),
    Session(Box<SessionWindowAggregateOperator>),
}

/// TUMBLE and HOP windows with per-window state and allowed lateness.
pub struct AlignedGroupWindows {
    group_by: Vec<usize>,
    aggs: Vec<AggSpec>,
    time_col: usize,
    window: WindowSpec,
    /// Milliseconds a window is kept after it fired (0: cleared when it
    /// fires).
    lateness: i64,
    /// (group key, window end) -> accumulator slots.
    accs: ValueState,
    /// DISTINCT calls: (group key, window end) -> {(call, value) -> count}.
    distinct: Option<MapState>,
    /// With lateness: (group key, window end) -> the calls' results last
    /// emitted (Flink's `previousState`).
    previous: Option<ValueState>,
    /// (timer time, sequence) -> (group key, window end): a window fires
    /// at `end - 1` and is cleared at `end - 1 + lateness` (one timer when
    /// both are the same, as Flink's timer service keeps one per key,
    /// window and time).
    timers: BTreeMap<(i64, u64), (Row, i64)>,
    /// The timers set, by (group key, window end, time).
    timer_set: HashSet<(Row, i64, i64)>,
    next_timer: u64,
    watermark: i64,
    late: LateRecords,
}

impl GroupWindowAggregateOperator {
    /// A TUMBLE or HOP group window aggregate. `lateness` > 0 makes it
    /// produce updates (late firings with `-U`/`+U`).
    pub fn new(
        backend: &StateBackend,
        scope: &str,
        group_by: Vec<usize>,
        aggs: Vec<AggSpec>,
        time_col: usize,
        window: WindowSpec,
        lateness: i64,
    ) -> OpResult<GroupWindowAggregateOperator> {
        if let WindowSpec::Session { gap } = window {
            return Ok(GroupWindowAggregateOperator::Session(Box::new(
                SessionWindowAggregateOperator::new(backend, scope, group_by, aggs, time_col, gap)?,
            )));
        }
        let accs = backend.value_state(scope, "group-window-accs", SLOTS * aggs.len())?;
        let distinct = if aggs.iter().any(|a| a.distinct) {
            Some(backend.map_state(scope, "group-window-distinct", 2, 1)?)
        } else {
            None
        };
        let previous = if lateness > 0 {
            Some(backend.value_state(scope, "group-window-previous", aggs.len())?)
        } else {
            None
        };
        Ok(GroupWindowAggregateOperator::Aligned(Box::new(
            AlignedGroupWindows {
                group_by,
                aggs,
                time_col,
                window,
                lateness: lateness.max(0),
                accs,
                distinct,
                previous,
                timers: BTreeMap::new(),
                timer_set: HashSet::new(),
                next_timer: 0,
                watermark: i64::MIN,
                late: LateRecords::default(),
            },
        )))
    }
}

/// Appends the window properties to a session's row (which ends with
/// its start and end).
fn session_properties(change: &mut Change) {
    let end = change.row.last().and_then(Value::as_ts).unwrap_or(0);
    change.row.push(Value::Ts(end.saturating_sub(1)));
    change.row.push(Value::Null);
}

impl AlignedGroupWindows {
    fn trigger_time(end: i64) -> i64 {
        end.saturating_sub(1)
    }

    fn cleanup_time(&self, end: i64) -> i64 {
        Self::trigger_time(end).saturating_add(self.lateness)
    }

    fn set_timer(&mut self, key: &Row, end: i64, time: i64) {
        if self.timer_set.insert((key.clone(), end, time)) {
            self.next_timer += 1;
            self.timers
                .insert((time, self.next_timer), (key.clone(), end));
        }
    }

    fn init(&self) -> Row {
        self.aggs
            .iter()
            .flat_map(|a| functions::init(a.kind))
            .collect()
    }

    fn state_key(key: &Row, end: i64) -> Row {
        let mut k = key.clone();
        k.push(Value::Ts(end));
        k
    }

    /// Emits the current result of `key`'s window ending at `end`: `+I`
    /// the first time, then `-U`/`+U` when it changed (with lateness).
    fn emit(&mut self, key: &Row, end: i64, out: &mut Vec<Change>) -> OpResult<()> {
        let k = Self::state_key(key, end);
        let Some(mut acc) = self.accs.get(&k)? else {
            return Ok(());
        };
        if let Some(map) = &mut self.distinct {
            let mut values = hashbrown::HashSet::new();
            WindowAggregateOperator::distinct_values(map, &k, false, &mut values)?;
            WindowAggregateOperator::apply_distinct(&self.aggs, &mut acc, &values);
        }
        let results: Row = self
            .aggs
            .iter()
            .enumerate()
            .map(|(i, a)| functions::result(a, &acc[..], SLOTS * i))
            .collect();
        let row = |results: &Row| {
            let mut r = key.clone();
            r.extend(results.iter().cloned());
            r.push(Value::Ts(self.window.window_start(end)));
            r.push(Value::Ts(end));
            r.push(Value::Ts(Self::trigger_time(end)));
            r.push(Value::Null);
            r
        };
        match &mut self.previous {
            None => out.push(Change::insert(row(&results))),
            Some(previous) => match previous.get(&k)? {
                Some(old) if old == results => {}
                Some(old) => {
                    out.push(Change::new(RowKind::UpdateBefore, row(&old)));
                    out.push(Change::new(RowKind::UpdateAfter, row(&results)));
                    previous.put(&k, results)?;
                }
                None => {
                    out.push(Change::insert(row(&results)));
                    previous.put(&k, results)?;
                }
            },
        }
        Ok(())
    }

    /// Clears the state of `key`'s window ending at `end`.
    fn clear(&mut self, key: &Row, end: i64) -> OpResult<()> {
        let k = Self::state_key(key, end);
        self.accs.delete(&k)?;
        if let Some(previous) = &mut self.previous {
            previous.delete(&k)?;
        }
        if let Some(map) = &mut self.distinct {
            let mut values = hashbrown::HashSet::new();
            WindowAggregateOperator::distinct_values(map, &k, true, &mut values)?;
        }
        Ok(())
    }

    fn process_row(&mut self, row: Row, out: &mut Vec<Change>) -> OpResult<()> {
        let Some(t) = row[self.time_col].as_ts() else {
            // A NULL time belongs to no window.
            return Ok(());
        };
        let key: Row = self.group_by.iter().map(|&c| row[c].clone()).collect();
        // Windows whose cleanup time has passed drop the record
        // (`WindowOperator.isWindowLate`).
        let windows: Vec<i64> = self
            .window
            .windows_of(t)
            .into_iter()
            .map(|(_, end)| end)
            .filter(|&end| self.cleanup_time(end) > self.watermark)
            .collect();
        if windows.is_empty() {
            self.late.drop_row(row);
            return Ok(());
        }
        for &end in &windows {
            let k = Self::state_key(&key, end);
            if let Some(map) = &mut self.distinct {
                WindowAggregateOperator::add_distinct(&self.aggs, map, &k, &row)?;
            }
            let init = self.init();
            let aggs = &self.aggs;
            self.accs.modify(&k, |slot| {
                WindowAggregateOperator::accumulate(aggs, slot.get_or_insert(init), &row);
            })?;
        }
        for end in windows {
            if Self::trigger_time(end) <= self.watermark {
                // A late element within the lateness fires the window.
                self.emit(&key, end, out)?;
            } else {
                self.set_timer(&key, end, Self::trigger_time(end));
            }
            let cleanup = self.cleanup_time(end);
            self.set_timer(&key, end, cleanup);
        }
        Ok(())
    }

    fn on_watermark(&mut self, watermark: i64, out: &mut Vec<Change>) -> OpResult<()> {
        self.watermark = self.watermark.max(watermark);
        while let Some(entry) = self.timers.first_entry() {
            let time = entry.key().0;
            if time > self.watermark {
                break;
            }
            let (key, end) = entry.remove();
            self.timer_set.remove(&(key.clone(), end, time));
            if time == Self::trigger_time(end) {
                self.emit(&key, end, out)?;
            }
            if time == self.cleanup_time(end) {
                self.clear(&key, end)?;
            }
        }
        Ok(())
    }
}

impl Operator for GroupWindowAggregateOperator {
    fn process(&mut self, input: usize, batch: Vec<Change>, out: &mut Vec<Change>) -> OpResult<()> {
        match self {
            GroupWindowAggregateOperator::Aligned(o) => {
                for change in batch {
                    o.process_row(change.row, out)?;
                }
                Ok(())
            }
            GroupWindowAggregateOperator::Session(o) => o.process(input, batch, out),
        }
    }

    fn on_watermark(&mut self, watermark: i64, out: &mut Vec<Change>) -> OpResult<()> {
        match self {
            GroupWindowAggregateOperator::Aligned(o) => o.on_watermark(watermark, out),
            GroupWindowAggregateOperator::Session(o) => {
                let from = out.len();
                o.on_watermark(watermark, out)?;
                out[from..].iter_mut().for_each(session_properties);
                Ok(())
            }
        }
    }

    fn state_reports(&self) -> Vec<StateReport> {
        match self {
            GroupWindowAggregateOperator::Aligned(o) => {
                let mut r = vec![o.accs.report()];
                r.extend(o.distinct.as_ref().map(MapState::report));
                r.extend(o.previous.as_ref().map(ValueState::report));
                r
            }
            GroupWindowAggregateOperator::Session(o) => o.state_reports(),
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        match self {
            GroupWindowAggregateOperator::Aligned(o) => vec![o.late.counter()],
            GroupWindowAggregateOperator::Session(o) => o.counters(),
        }
    }

    fn keep_late(&mut self) -> bool {
        match self {
            GroupWindowAggregateOperator::Aligned(o) => {
                o.late.keep();
                true
            }
            GroupWindowAggregateOperator::Session(o) => o.keep_late(),
        }
    }

    fn take_late(&mut self, late: &mut Vec<Row>) {
        match self {
            GroupWindowAggregateOperator::Aligned(o) => o.late.take(late),
            GroupWindowAggregateOperator::Session(o) => o.take_late(late),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agg::functions::AggKind;
    use crate::value::DataType;

    fn op(
        backend: &StateBackend,
        window: WindowSpec,
        lateness: i64,
    ) -> GroupWindowAggregateOperator {
        let call = |kind, arg, distinct| AggSpec {
            kind,
            arg,
            distinct,
            filter: None,
            result_type: DataType::Int,
        };
        let aggs = vec![
            call(AggKind::Count, Some(1), true),
            call(AggKind::Sum, Some(1), false),
        ];
        GroupWindowAggregateOperator::new(backend, "t", vec![0], aggs, 2, window, lateness).unwrap()
    }

    fn rec(k: &str, v: i64, t: i64) -> Vec<Change> {
        vec![Change::insert(vec![
            Value::str(k),
            Value::Int(v),
            Value::Ts(t),
        ])]
    }

    fn entries(o: &GroupWindowAggregateOperator) -> i64 {
        o.state_reports().iter().map(|r| r.metrics.entries).sum()
    }

    fn row(kind: RowKind, k: &str, d: i64, s: i64, end: i64) -> Change {
        Change::new(
            kind,
            vec![
                Value::str(k),
                Value::Int(d),
                Value::Int(s),
                Value::Ts(end - 5),
                Value::Ts(end),
                Value::Ts(end - 1),
                Value::Null,
            ],
        )
    }

    /// A record behind a fired window within the lateness fires it again
    /// as `-U`/`+U`; one past its cleanup time is dropped; the state is
    /// empty after the final watermark. On both backends.
    #[test]
    fn late_firing_updates_the_window_until_its_cleanup() {
        let dir = tempfile::tempdir().unwrap();
        for backend in [
            StateBackend::heap(),
            StateBackend::rocksdb(Some(dir.path())).unwrap(),
        ] {
            let mut o = op(&backend, WindowSpec::Tumble { size: 5 }, 10);
            let mut out = Vec::new();
            o.process(0, rec("a", 2, 1), &mut out).unwrap();
            o.on_watermark(4, &mut out).unwrap();
            assert_eq!(out, vec![row(RowKind::Insert, "a", 1, 2, 5)]);
            out.clear();
            // Late within the lateness: fires at once.
            o.process(0, rec("a", 3, 2), &mut out).unwrap();
            assert_eq!(
                out,
                vec![
                    row(RowKind::UpdateBefore, "a", 1, 2, 5),
                    row(RowKind::UpdateAfter, "a", 2, 5, 5)
                ]
            );
            out.clear();
            // A NULL value changes neither call: nothing is emitted.
            let null = vec![Change::insert(vec![
                Value::str("a"),
                Value::Null,
                Value::Ts(3),
            ])];
            o.process(0, null, &mut out).unwrap();
            assert!(out.is_empty(), "{out:?}");
            // The cleanup time of [0, 5) is 14.
            o.on_watermark(14, &mut out).unwrap();
            assert!(out.is_empty());
            assert_eq!(entries(&o), 0);
            o.process(0, rec("a", 9, 4), &mut out).unwrap();
            assert!(out.is_empty());
            assert_eq!(o.counters(), vec![("numLateRecordsDropped", 1)]);
            o.on_watermark(i64::MAX, &mut out).unwrap();
            assert_eq!(entries(&o), 0);
        }
    }

    /// Without lateness a window fires once and a record behind it is late.
    #[test]
    fn without_lateness_a_window_fires_once() {
        let mut o = op(
            &StateBackend::heap(),
            WindowSpec::Hop { size: 5, slide: 5 },
            0,
        );
        let mut out = Vec::new();
        o.process(0, rec("a", 2, 1), &mut out).unwrap();
        o.on_watermark(4, &mut out).unwrap();
        o.process(0, rec("a", 3, 2), &mut out).unwrap();
        o.on_watermark(i64::MAX, &mut out).unwrap();
        assert_eq!(out, vec![row(RowKind::Insert, "a", 1, 2, 5)]);
        assert_eq!(o.counters(), vec![("numLateRecordsDropped", 1)]);
        assert_eq!(entries(&o), 0);
    }
}
