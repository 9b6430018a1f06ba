//! The session window aggregate: Flink's `WindowAggregate` over
//! `SESSION(...)` (`UnslicingWindowOperator` with its merging window set),
//! one phase only, as Flink plans it.
//!
//! Sessions are kept per group key (the operator's key; a `PARTITION BY`
//! is among the group keys, see the planner). A record at `t` proposes the
//! window `[t, t + gap)`; every session of its key that window touches
//! (`start <= other.end && end >= other.start`, Flink's `TimeWindow`
//! intersection, so touching windows merge) is merged with it into their
//! cover. The accumulators of the merged sessions are merged into the one
//! of the earliest (its state namespace stays), the others are deleted.
//! A record that merges with nothing and whose own window has fired
//! (watermark at least `t + gap - 1`) is late: dropped and counted as
//! `numLateRecordsDropped`, as Flink's `isWindowLate` has it. A record
//! that joins an open session is never late.
//!
//! A session fires when the watermark reaches its end - 1: one `+I` with
//! the group key, the aggregates, `window_start`, `window_end`; sessions
//! in order of their end, ties in the order their end was last set. Its
//! accumulator is deleted then, so state is empty after the final
//! watermark. The session bounds and timers live in memory (Flink keeps
//! them in state; the lab counts the accumulators only).

use super::late::LateRecords;
use super::window_agg::WindowAggregateOperator;
use crate::agg::functions::{self, AggSpec, SLOTS};
use crate::changelog::Change;
use crate::operator::{OpResult, Operator};
use crate::state::{MapState, StateBackend, StateReport, ValueState};
use crate::value::{Row, Value};
use std::collections::{BTreeMap, HashMap};

/// An open session of one key: its end, the namespace of its
/// accumulator, and the sequence number of its timer.
#[derive(Clone, Copy)]
struct Session {
    end: i64,
    namespace: i64,
    timer: u64,
}

pub struct SessionWindowAggregateOperator {
    group_by: Vec<usize>,
    aggs: Vec<AggSpec>,
    time_col: usize,
    gap: i64,
    /// (group key, namespace) -> accumulator slots.
    accs: ValueState,
    /// DISTINCT calls: (group key, namespace) -> {(call, value) -> count}.
    distinct: Option<MapState>,
    /// Group key -> its open sessions by start (disjoint, not touching).
    sessions: HashMap<Row, BTreeMap<i64, Session>>,
    /// (end, sequence) -> (group key, session start).
    timers: BTreeMap<(i64, u64), (Row, i64)>,
    next_timer: u64,
    watermark: i64,
    /// Records behind the watermark: dropped, counted, kept for `--late`.
    late: LateRecords,
}

impl SessionWindowAggregateOperator {
    pub fn new(
        backend: &StateBackend,
        scope: &str,
        group_by: Vec<usize>,
        aggs: Vec<AggSpec>,
        time_col: usize,
        gap: i64,
    ) -> OpResult<SessionWindowAggregateOperator> {
        let accs = backend.value_state(scope, "session-aggs", SLOTS * aggs.len())?;
        let distinct = if aggs.iter().any(|a| a.distinct) {
            Some(backend.map_state(scope, "session-distinct", 2, 1)?)
        } else {
            None
        };
        Ok(SessionWindowAggregateOperator {
            distinct,
            group_by,
            aggs,
            time_col,
            gap,
            accs,
            sessions: HashMap::new(),
            timers: BTreeMap::new(),
            next_timer: 0,
            watermark: i64::MIN,
            late: LateRecords::default(),
        })
    }

    fn fired(end: i64, wm: i64) -> bool {
        wm >= end.saturating_sub(1)
    }

    fn init(&self) -> Row {
        self.aggs
            .iter()
            .flat_map(|a| functions::init(a.kind))
            .collect()
    }

    fn timer(&mut self) -> u64 {
        self.next_timer += 1;
        self.next_timer
    }

    fn state_key(key: &Row, namespace: i64) -> Row {
        let mut k = key.clone();
        k.push(Value::Ts(namespace));
        k
    }

    /// Adds one record of `key` at time `t`.
    fn add(&mut self, key: Row, t: i64, row: Row) -> OpResult<()> {
        let (start, end) = (t, t.saturating_add(self.gap));
        let open = self.sessions.entry(key.clone()).or_default();
        // The sessions the new window touches: starts at most its end,
        // ends at least its start (ends grow with starts: they are disjoint).
        let touched: Vec<(i64, Session)> = open
            .range(..=end)
            .rev()
            .take_while(|(_, s)| s.end >= start)
            .map(|(&st, &s)| (st, s))
            .collect();
        if touched.is_empty() && Self::fired(end, self.watermark) {
            if open.is_empty() {
                self.sessions.remove(&key);
            }
            self.late.drop_row(row);
            return Ok(());
        }
        let namespace;
        match touched.as_slice() {
            [] => {
                namespace = t;
                let timer = self.timer();
                self.timers.insert((end, timer), (key.clone(), start));
                let open = self.sessions.get_mut(&key).expect("entered above");
                open.insert(
                    start,
                    Session {
                        end,
                        namespace,
                        timer,
                    },
                );
            }
            [(s0, only)] if *s0 <= start && only.end >= end => {
                // Inside one session: nothing moves.
                namespace = only.namespace;
            }
            _ => {
                let merged_start = touched
                    .iter()
                    .map(|(s, _)| *s)
                    .min()
                    .expect("some")
                    .min(start);
                let merged_end = touched
                    .iter()
                    .map(|(_, s)| s.end)
                    .max()
                    .expect("some")
                    .max(end);
                // The earliest session keeps its accumulator.
                let (_, keep) = *touched.last().expect("some");
                namespace = keep.namespace;
                let mut into = self.accs.get(&Self::state_key(&key, namespace))?;
                for (st, s) in &touched {
                    self.timers.remove(&(s.end, s.timer));
                    self.sessions
                        .get_mut(&key)
                        .expect("entered above")
                        .remove(st);
                    if s.namespace == namespace {
                        continue;
                    }
                    let k = Self::state_key(&key, s.namespace);
                    if let Some(slots) = self.accs.get(&k)? {
                        let acc = into.get_or_insert_with(|| self.init());
                        for (i, a) in self.aggs.iter().enumerate() {
                            let r = SLOTS * i..SLOTS * (i + 1);
                            functions::merge(a.kind, &mut acc[..], SLOTS * i, &slots[r]);
                        }
                        self.accs.delete(&k)?;
                    }
                    if let Some(map) = &mut self.distinct {
                        let into = Self::state_key(&key, namespace);
                        for (ukey, n) in map.entries(&k)? {
                            let add = n[0].as_int().unwrap_or(0);
                            map.modify(&into, &ukey, |slot| {
                                let c = slot.get_or_insert_with(|| vec![Value::Int(0)]);
                                c[0] = Value::Int(c[0].as_int().unwrap_or(0) + add);
                            })?;
                            map.delete(&k, &ukey)?;
                        }
                    }
                }
                if let Some(acc) = into {
                    self.accs.put(&Self::state_key(&key, namespace), acc)?;
                }
                let timer = self.timer();
                self.timers
                    .insert((merged_end, timer), (key.clone(), merged_start));
                self.sessions.get_mut(&key).expect("entered above").insert(
                    merged_start,
                    Session {
                        end: merged_end,
                        namespace,
                        timer,
                    },
                );
            }
        }
        if let Some(map) = &mut self.distinct {
            WindowAggregateOperator::add_distinct(
                &self.aggs,
                map,
                &Self::state_key(&key, namespace),
                &row,
            )?;
        }
        let init = self.init();
        let aggs = &self.aggs;
        self.accs
            .modify(&Self::state_key(&key, namespace), |slot| {
                WindowAggregateOperator::accumulate(aggs, slot.get_or_insert(init), &row);
            })?;
        Ok(())
    }

    fn fire(&mut self, key: Row, start: i64, out: &mut Vec<Change>) -> OpResult<()> {
        let Some(open) = self.sessions.get_mut(&key) else {
            return Ok(());
        };
        let Some(session) = open.remove(&start) else {
            return Ok(());
        };
        if open.is_empty() {
            self.sessions.remove(&key);
        }
        let k = Self::state_key(&key, session.namespace);
        if let Some(mut acc) = self.accs.get(&k)? {
            self.accs.delete(&k)?;
            if let Some(map) = &mut self.distinct {
                let mut values = hashbrown::HashSet::new();
                WindowAggregateOperator::distinct_values(map, &k, true, &mut values)?;
                WindowAggregateOperator::apply_distinct(&self.aggs, &mut acc, &values);
            }
            let mut row = key;
            for (i, a) in self.aggs.iter().enumerate() {
                row.push(functions::result(a, &acc[..], SLOTS * i));
            }
            row.push(Value::Ts(start));
            row.push(Value::Ts(session.end));
            out.push(Change::insert(row));
        }
        Ok(())
    }
}

impl Operator for SessionWindowAggregateOperator {
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
            let key: Row = self.group_by.iter().map(|&c| row[c].clone()).collect();
            self.add(key, t, row)?;
        }
        Ok(())
    }

    fn on_watermark(&mut self, watermark: i64, out: &mut Vec<Change>) -> OpResult<()> {
        self.watermark = self.watermark.max(watermark);
        while let Some(entry) = self.timers.first_entry() {
            if !Self::fired(entry.key().0, self.watermark) {
                break;
            }
            let (key, start) = entry.remove();
            self.fire(key, start, out)?;
        }
        Ok(())
    }

    fn state_reports(&self) -> Vec<StateReport> {
        let mut r = vec![self.accs.report()];
        r.extend(self.distinct.as_ref().map(MapState::report));
        r
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![self.late.counter()]
    }

    fn keep_late(&mut self) -> bool {
        self.late.keep();
        true
    }

    fn take_late(&mut self, late: &mut Vec<Row>) {
        self.late.take(late);
    }
}
