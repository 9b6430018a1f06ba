//! The batch oracle: evaluates a [`LogicalPlan`] from scratch over the final
//! input tables, with plain loops and maps and none of the streaming
//! operators' code. Every strategy, materialised at the end of its input,
//! must equal what this computes (`optimizer/tests/equivalence.rs` holds
//! every strategy to it).
//!
//! Semantics (SQL's, as Flink's batch mode has them):
//! - `Filter` keeps a row only when its predicate is TRUE (NULL rejects).
//! - `Join` pairs rows whose join keys are all non-NULL and equal (NULL = NULL
//!   is not true) and whose residual is TRUE; `LEFT` adds each left row
//!   without a match, padded with NULLs to the right side's width. Key
//!   equality is [`Value`]'s equality, as hash-based operators see it
//!   (`-0.0` equals `0.0`; an `INT` 1 does not equal a `DOUBLE` 1.0: the
//!   binder casts join keys to one type).
//! - `Aggregate` groups by the group columns, NULL being a group value equal
//!   to NULL (as `GROUP BY` does); the output row is the group values, then
//!   one value per call. `COUNT(*)` counts rows, `COUNT(x)` non-NULL values;
//!   `SUM`, `MIN`, `MAX` and `AVG` ignore NULLs and give NULL when no
//!   non-NULL value remains. `SUM` of integers is an integer (wrapping on
//!   overflow, as Java's `long` does), of doubles a double; `AVG` of integers
//!   is the integer quotient truncated toward zero (Flink), of doubles the
//!   double quotient. A call's result is a double when its output type is
//!   `DOUBLE` or any input value is a double. `DISTINCT` dedupes the non-NULL
//!   argument values of that call; a `FILTER` column lets only rows where it
//!   is `TRUE` into that call.
//! - A global aggregate (no `GROUP BY`) over empty input yields one row
//!   (`COUNT` 0, every other function NULL), as SQL does. Streaming Flink
//!   differs here: it emits nothing for a global aggregate that never saw a
//!   record, and retracts its row (`-D`) when every input row has been
//!   retracted. Compare such cases with that in mind.
//!
//! Row order of every result is unspecified: compare with [`sorted`].

use crate::logical::{AggCall, AggFunc, LogicalPlan};
use hashbrown::HashMap;
use operators::changelog::{Change, RowKind};
use operators::expr::Expr;
use operators::value::{cmp_rows, DataType, Row, Value};
use operators::window::WindowSpec;

/// Evaluates `plan`; `tables` gives the rows of the catalog table a `Scan`
/// names (its `table`, not its alias). Returns the result multiset.
pub fn evaluate(plan: &LogicalPlan, tables: &dyn Fn(&str) -> Vec<Row>) -> Vec<Row> {
    evaluate_event_time(plan, tables, &Arrival::none())
}

/// How the rows of each table arrived, for the late rule of window
/// aggregates (see [`evaluate_event_time`]).
pub struct Arrival<'a> {
    /// The table's watermark expression over its rows, if it has one.
    pub watermark: &'a dyn Fn(&str) -> Option<Expr>,
    /// Rows per source batch (`lab.source.batch-size`).
    pub batch_size: usize,
    /// `pipeline.auto-watermark-interval` in ms, on the deterministic clock
    /// (one ms per row read).
    pub interval_ms: u64,
    /// The allowed lateness of legacy group windows (`GROUP BY TUMBLE(ts,
    /// ...)`) in ms, as the planner resolves it
    /// (`table.exec.emit.allow-lateness`, else `table.exec.state.ttl`); 0
    /// for none. Window TVFs ignore it.
    pub allow_lateness_ms: i64,
    /// Whether the job delivers a round's batches breadth-first
    /// (`lab.source.delivery`): then the round's batches all reach a
    /// two-input operator before either source's watermark after them.
    pub breadth_first: bool,
}

impl Arrival<'_> {
    /// No watermarks: nothing is late.
    pub fn none() -> Arrival<'static> {
        Arrival {
            watermark: &|_| None,
            batch_size: 1,
            interval_ms: 0,
            allow_lateness_ms: 0,
            breadth_first: false,
        }
    }

    /// The watermark in force when each row of `rows` (in arrival order)
    /// reached the operators: the last one the source emitted before the
    /// row's batch. After each batch of `batch_size` rows the source's
    /// watermark is the greatest its expression gave so far (NULL skipped);
    /// it is emitted when it advanced and `interval_ms` passed on the clock
    /// (rows read) since the last emission, or on the first emission, or
    /// after every batch when the interval is 0.
    pub fn watermarks_before(&self, table: &str, rows: &[Row]) -> Vec<i64> {
        let Some(expr) = (self.watermark)(table) else {
            return vec![i64::MIN; rows.len()];
        };
        let b = self.batch_size.max(1);
        let mut out = Vec::with_capacity(rows.len());
        let (mut current, mut emitted, mut emitted_at): (Option<i64>, Option<i64>, u64) =
            (None, None, 0);
        for (k, batch) in rows.chunks(b).enumerate() {
            out.extend(std::iter::repeat_n(
                emitted.unwrap_or(i64::MIN),
                batch.len(),
            ));
            for row in batch {
                if let Some(t) = expr.eval(row).as_ts() {
                    current = Some(current.map_or(t, |c| c.max(t)));
                }
            }
            let now = (k * b + batch.len()) as u64;
            if let Some(w) = current {
                let due = self.interval_ms == 0
                    || emitted.is_none()
                    || now - emitted_at >= self.interval_ms;
                if due && emitted.is_none_or(|e| w > e) {
                    emitted = Some(w);
                    emitted_at = now;
                }
            }
        }
        out
    }
}

impl Arrival<'_> {
    /// The watermark a two-input operator (the least of its inputs') had
    /// when each row of two tables reached it, the tables read as the job
    /// reads its sources: one batch of each in turn, the left first (or,
    /// breadth-first, both batches and then both watermarks), each
    /// source emitting its watermark after its batch by the rule of
    /// [`Arrival::watermarks_before`] on one clock (rows read from both),
    /// and the greatest watermark once it has no rows left.
    /// Also returns, per table, the watermark its own source had emitted
    /// before each row (what a one-input operator over it met).
    pub fn two_input_watermarks_before(
        &self,
        tables: [(&str, &[Row]); 2],
    ) -> ([Vec<i64>; 2], [Vec<i64>; 2]) {
        let b = self.batch_size.max(1);
        let exprs = tables.map(|(t, _)| (self.watermark)(t));
        let mut out: [Vec<i64>; 2] = [Vec::new(), Vec::new()];
        let mut own: [Vec<i64>; 2] = [Vec::new(), Vec::new()];
        let mut current: [Option<i64>; 2] = [None, None];
        let mut emitted: [Option<i64>; 2] = [None, None];
        let mut emitted_at = [0u64; 2];
        let mut done = [false; 2];
        let mut pos = [0usize; 2];
        let mut now = 0u64;
        // The job's rounds: depth-first, each source alone in turn;
        // breadth-first, both together ([`Arrival::breadth_first`]).
        let groups: &[&[usize]] = if self.breadth_first {
            &[&[0, 1]]
        } else {
            &[&[0], &[1]]
        };
        while !done.iter().all(|d| *d) {
            for group in groups {
                let least = emitted[0]
                    .unwrap_or(i64::MIN)
                    .min(emitted[1].unwrap_or(i64::MIN));
                let mut read = Vec::new();
                let mut ended = Vec::new();
                for &s in *group {
                    if done[s] {
                        continue;
                    }
                    let rows = tables[s].1;
                    let batch = &rows[pos[s]..(pos[s] + b).min(rows.len())];
                    if batch.is_empty() {
                        ended.push(s);
                        continue;
                    }
                    out[s].extend(std::iter::repeat_n(least, batch.len()));
                    own[s].extend(std::iter::repeat_n(
                        emitted[s].unwrap_or(i64::MIN),
                        batch.len(),
                    ));
                    if let Some(expr) = &exprs[s] {
                        for row in batch {
                            if let Some(t) = expr.eval(row).as_ts() {
                                current[s] = Some(current[s].map_or(t, |c| c.max(t)));
                            }
                        }
                    }
                    pos[s] += batch.len();
                    now += batch.len() as u64;
                    read.push(s);
                }
                // The watermarks after the group's rows, on the clock after
                // them; then the ended sources' greatest one.
                for s in read {
                    if let Some(w) = current[s] {
                        let due = self.interval_ms == 0
                            || emitted[s].is_none()
                            || now - emitted_at[s] >= self.interval_ms;
                        if due && emitted[s].is_none_or(|e| w > e) {
                            emitted[s] = Some(w);
                            emitted_at[s] = now;
                        }
                    }
                }
                for s in ended {
                    done[s] = true;
                    emitted[s] = Some(i64::MAX);
                }
            }
        }
        (out, own)
    }
}

/// The inputs of a window join (both sides windowed, joined on both
/// window columns) over two tables, or one read once, each side's late rows
/// dropped: a side that is a window TVF over a table keeps a row in a
/// window only when the window had not fired when the row reached the
/// join ([`Arrival::two_input_watermarks_before`]); a side that is a
/// window aggregate drops by its own late rule, with the watermarks its
/// table's source emitted on the job's one clock (a window aggregate emits
/// a window before its watermark moves on, so nothing of it is late at
/// the join). `None` when `plan` is not such a join.
fn window_join_sides(
    plan: &LogicalPlan,
    tables: &dyn Fn(&str) -> Vec<Row>,
    arrival: &Arrival,
) -> Option<(Vec<Row>, Vec<Row>)> {
    let LogicalPlan::Join {
        left,
        right,
        left_keys,
        right_keys,
        ..
    } = plan
    else {
        return None;
    };
    let (ls, le, _) = left.join_window_columns()?;
    let (rs, re, _) = right.join_window_columns()?;
    let pairs: Vec<(usize, usize)> = left_keys
        .iter()
        .copied()
        .zip(right_keys.iter().copied())
        .collect();
    if !pairs.contains(&(ls, rs)) || !pairs.contains(&(le, re)) {
        return None;
    }
    let (lt, rt) = (source_table(left)?, source_table(right)?);
    let (lrows, rrows) = (tables(&lt), tables(&rt));
    let ([lbefore, rbefore], [lown, rown]) = if lt == rt {
        // A self-join reads its table once (the planner reuses the scan):
        // both sides meet that source's watermarks.
        let before = arrival.watermarks_before(&lt, &lrows);
        ([before.clone(), before.clone()], [before.clone(), before])
    } else {
        arrival.two_input_watermarks_before([(&lt, lrows.as_slice()), (&rt, rrows.as_slice())])
    };
    let side = |input: &LogicalPlan, rows: Vec<Row>, before: Vec<i64>, own: Vec<i64>| {
        if let Some((_, time_col, window)) = windowed_table(input) {
            return on_time_windowed_rows(input, rows, &before, time_col, window, 0);
        }
        let Some(LogicalPlan::Aggregate {
            input: agg_input,
            group_by,
            aggs,
            ..
        }) = aggregate_below(input)
        else {
            return evaluate_event_time(input, tables, arrival);
        };
        let Some((_, time_col, window)) = windowed_table(agg_input) else {
            return evaluate_event_time(input, tables, arrival);
        };
        let windowed = match window {
            WindowSpec::Session { gap } => sessions(agg_input, group_by, rows, &own, time_col, gap),
            _ => on_time_windowed_rows(agg_input, rows, &own, time_col, window, 0),
        };
        above_window(input, aggregate(&windowed, group_by, aggs))
    };
    Some((
        side(left, lrows, lbefore, lown),
        side(right, rrows, rbefore, rown),
    ))
}

/// The aggregate under a plan's projections and filters, if any.
fn aggregate_below(plan: &LogicalPlan) -> Option<&LogicalPlan> {
    match plan {
        LogicalPlan::Project { input, .. } | LogicalPlan::Filter { input, .. } => {
            aggregate_below(input)
        }
        LogicalPlan::Aggregate { .. } => Some(plan),
        _ => None,
    }
}

/// The one table a plan reads, through anything with one input.
fn source_table(plan: &LogicalPlan) -> Option<String> {
    match plan {
        LogicalPlan::Scan { table, .. } => Some(table.clone()),
        LogicalPlan::Join { .. } | LogicalPlan::Union { .. } => None,
        other => source_table(other.children()[0]),
    }
}

/// [`evaluate`] with the late rule of window aggregates: an aggregate
/// grouped by `window_start` and `window_end` of a window TVF over a table
/// counts a row in a window only when the window had not fired when the
/// row arrived: the watermark at its arrival
/// ([`Arrival::watermarks_before`]) was below the window's end - 1. (A
/// row all of whose windows had fired is the one the stream drops as
/// late.) A deduplication partitioned by a window TVF's `window_start`
/// and `window_end` keeps a row in a window by the same rule, and so does
/// a Top-N partitioned by them. A window TVF without any of these drops
/// nothing.
pub fn evaluate_event_time(
    plan: &LogicalPlan,
    tables: &dyn Fn(&str) -> Vec<Row>,
    arrival: &Arrival,
) -> Vec<Row> {
    let eval = |p: &LogicalPlan| evaluate_event_time(p, tables, arrival);
    match plan {
        LogicalPlan::Scan { table, .. } => tables(table),
        LogicalPlan::WindowTvf {
            input,
            time_col,
            window,
            ..
        } => {
            let mut out = Vec::new();
            for row in eval(input) {
                let Some(t) = row[*time_col].as_ts() else {
                    continue;
                };
                for (start, end) in window.windows_of(t) {
                    let mut r = row.clone();
                    r.extend([Value::Ts(start), Value::Ts(end), Value::Ts(end - 1)]);
                    out.push(r);
                }
            }
            out
        }
        LogicalPlan::Deduplicate {
            input,
            key,
            keep,
            order,
            ..
        } => {
            // A window deduplication first drops the late rows of its table.
            let windowed = input
                .window_columns()
                .filter(|(s, e, _)| key.contains(s) && key.contains(e))
                .and(windowed_table(input));
            let rows = match windowed {
                Some((table, time_col, window)) => {
                    on_time_windowed(input, &table, time_col, window, tables, arrival)
                }
                None => eval(input),
            };
            deduplicate(rows, key, *keep, *order)
        }
        LogicalPlan::Rank {
            input,
            partition_by,
            order,
            rank_start,
            rank_end,
            output_rank_number,
            ..
        } => {
            // A window Top-N over a window TVF first drops the late rows
            // of its table.
            let windowed = input
                .window_columns()
                .filter(|(s, e, _)| partition_by.contains(s) && partition_by.contains(e))
                .and(windowed_table(input));
            let rows = match windowed {
                Some((table, time_col, window)) => {
                    on_time_windowed(input, &table, time_col, window, tables, arrival)
                }
                None => eval(input),
            };
            top_n(
                rows,
                partition_by,
                order,
                (*rank_start, *rank_end),
                *output_rank_number,
            )
        }
        LogicalPlan::Filter { input, predicate } => eval(input)
            .into_iter()
            .filter(|row| predicate.is_true(row))
            .collect(),
        LogicalPlan::Project { input, exprs, .. } => eval(input)
            .iter()
            .map(|row| exprs.iter().map(|e| e.eval(row)).collect())
            .collect(),
        LogicalPlan::Join {
            left,
            right,
            kind,
            left_keys,
            right_keys,
            residual,
            ..
        } => {
            let (left_rows, right_rows) = match window_join_sides(plan, tables, arrival) {
                Some(sides) => sides,
                None => (eval(left), eval(right)),
            };
            let left_width = left.schema().len();
            let right_width = right.schema().len();
            let mut out = Vec::new();
            let mut right_matched = vec![false; right_rows.len()];
            for l in &left_rows {
                let mut matched = false;
                for (r, r_matched) in right_rows.iter().zip(right_matched.iter_mut()) {
                    if !keys_join(l, left_keys, r, right_keys) {
                        continue;
                    }
                    let joined: Row = l.iter().chain(r.iter()).cloned().collect();
                    if residual.as_ref().is_none_or(|p| p.is_true(&joined)) {
                        matched = true;
                        *r_matched = true;
                        out.push(joined);
                    }
                }
                if kind.keeps_left() && !matched {
                    let mut padded = l.clone();
                    padded.extend(std::iter::repeat_n(Value::Null, right_width));
                    out.push(padded);
                }
            }
            if kind.keeps_right() {
                for (r, _) in right_rows.iter().zip(&right_matched).filter(|(_, m)| !**m) {
                    let mut padded = vec![Value::Null; left_width];
                    padded.extend(r.iter().cloned());
                    out.push(padded);
                }
            }
            out
        }
        LogicalPlan::Union { left, right, .. } => {
            let mut rows = eval(left);
            rows.extend(eval(right));
            rows
        }
        LogicalPlan::Aggregate {
            input,
            group_by,
            aggs,
            ..
        } => {
            // A window aggregate first drops the late rows of its table; a
            // group window keeps a window for its allowed lateness after it
            // fired, and its final result counts the rows it took meanwhile.
            if let Some((table, time_col, window)) = windowed_table(input) {
                let lateness = if is_group_window(input) {
                    arrival.allow_lateness_ms
                } else {
                    0
                };
                if let WindowSpec::Session { gap } = window {
                    let rows = tables(&table);
                    let before = arrival.watermarks_before(&table, &rows);
                    let windowed = sessions(input, group_by, rows, &before, time_col, gap);
                    return aggregate(&windowed, group_by, aggs);
                }
                let rows = tables(&table);
                let before = arrival.watermarks_before(&table, &rows);
                let windowed =
                    on_time_windowed_rows(input, rows, &before, time_col, window, lateness);
                return aggregate(&windowed, group_by, aggs);
            }
            aggregate(&eval(input), group_by, aggs)
        }
    }
}

/// The rows of `input` (projections and filters over a window TVF of
/// `table`), each once per window it reached before the window fired: the
/// watermark at its arrival ([`Arrival::watermarks_before`]) was below the
/// window's end - 1. What a window aggregate or deduplication takes in.
fn on_time_windowed(
    input: &LogicalPlan,
    table: &str,
    time_col: usize,
    window: WindowSpec,
    tables: &dyn Fn(&str) -> Vec<Row>,
    arrival: &Arrival,
) -> Vec<Row> {
    let rows = tables(table);
    let before = arrival.watermarks_before(table, &rows);
    on_time_windowed_rows(input, rows, &before, time_col, window, 0)
}

/// [`on_time_windowed`] over a table's `rows` and the watermark each met;
/// a window takes rows for `lateness` ms after its end - 1 (a group
/// window's allowed lateness, 0 for window TVFs).
fn on_time_windowed_rows(
    input: &LogicalPlan,
    rows: Vec<Row>,
    before: &[i64],
    time_col: usize,
    window: WindowSpec,
    lateness: i64,
) -> Vec<Row> {
    let mut windowed = Vec::new();
    for (row, &wm) in rows.into_iter().zip(before) {
        let Some(t) = row[time_col].as_ts() else {
            continue;
        };
        for (start, end) in window.windows_of(t) {
            if wm < end.saturating_sub(1).saturating_add(lateness) {
                let mut r = row.clone();
                r.extend([Value::Ts(start), Value::Ts(end), Value::Ts(end - 1)]);
                windowed.push(r);
            }
        }
    }
    above_window(input, windowed)
}

/// The rows of a SESSION window aggregate's input, each with the
/// `window_start` and `window_end` of its session, from scratch: rows in
/// arrival order, each with the watermark it met (`before`). Sessions are
/// per group key (the aggregate's keys other than the window's). Before a
/// row, every open session whose end - 1 the watermark reached closes;
/// the row's `[t, t + gap)` then joins the open sessions of its key it
/// touches (their cover), or opens one, unless that window's end - 1 is
/// already reached: then the row is late and dropped.
fn sessions(
    input: &LogicalPlan,
    group_by: &[usize],
    rows: Vec<Row>,
    before: &[i64],
    time_col: usize,
    gap: i64,
) -> Vec<Row> {
    let LogicalPlan::Project { exprs, .. } = input else {
        return Vec::new();
    };
    let width = rows.first().map_or(0, Vec::len);
    let window_col = |k: usize| {
        group_by
            .iter()
            .copied()
            .find(|&g| exprs[g] == Expr::Column(width + k))
    };
    let (Some(start_col), Some(end_col)) = (window_col(0), window_col(1)) else {
        return Vec::new();
    };
    let keys: Vec<usize> = group_by
        .iter()
        .copied()
        .filter(|&g| g != start_col && g != end_col)
        .collect();
    // Per key: open sessions as (start, end, rows); closed ones as rows.
    type Open = Vec<(i64, i64, Vec<Row>)>;
    let mut open: Vec<(Row, Open)> = Vec::new();
    let mut out = Vec::new();
    let close = |rows: Vec<Row>, start: i64, end: i64, out: &mut Vec<Row>| {
        for mut r in rows {
            r[start_col] = Value::Ts(start);
            r[end_col] = Value::Ts(end);
            out.push(r);
        }
    };
    for (row, &wm) in rows.into_iter().zip(before) {
        for (_, sessions) in open.iter_mut() {
            let (fired, live): (Open, Open) = std::mem::take(sessions)
                .into_iter()
                .partition(|(_, end, _)| wm >= end.saturating_sub(1));
            *sessions = live;
            for (start, end, rows) in fired {
                close(rows, start, end, &mut out);
            }
        }
        let Some(t) = row[time_col].as_ts() else {
            continue;
        };
        let mut padded = row;
        padded.extend([Value::Null, Value::Null, Value::Null]);
        let Some(projected) = above_window(input, vec![padded]).pop() else {
            continue;
        };
        let key: Row = keys.iter().map(|&k| projected[k].clone()).collect();
        let i = match open.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                open.push((key, Vec::new()));
                open.len() - 1
            }
        };
        let sessions = &mut open[i].1;
        let (mut start, mut end) = (t, t.saturating_add(gap));
        let (touched, rest): (Open, Open) = std::mem::take(sessions)
            .into_iter()
            .partition(|(s, e, _)| *s <= end && *e >= start);
        *sessions = rest;
        if touched.is_empty() && wm >= end.saturating_sub(1) {
            continue;
        }
        let mut members = vec![projected];
        for (s, e, rows) in touched {
            start = start.min(s);
            end = end.max(e);
            members.extend(rows);
        }
        sessions.push((start, end, members));
    }
    for (_, sessions) in open {
        for (start, end, rows) in sessions {
            close(rows, start, end, &mut out);
        }
    }
    out
}

/// Evaluates the projections and filters between an aggregate and its
/// window TVF over `rows`, the TVF's output.
fn above_window(plan: &LogicalPlan, rows: Vec<Row>) -> Vec<Row> {
    match plan {
        LogicalPlan::Project { input, exprs, .. } => above_window(input, rows)
            .iter()
            .map(|row| exprs.iter().map(|e| e.eval(row)).collect())
            .collect(),
        LogicalPlan::Filter { input, predicate } => above_window(input, rows)
            .into_iter()
            .filter(|row| predicate.is_true(row))
            .collect(),
        _ => rows,
    }
}

/// `ROW_NUMBER() = 1` per key, numbered from scratch: the rows in arrival
/// order (the input's order), sorted stably by the time column on rowtime
/// (by arrival on processing time), the first of each key kept; keep-last
/// numbers them in reverse. Ties on rowtime go to the earliest row for
/// keep-first and the latest for keep-last, as the streaming operator's
/// strict and non-strict comparisons do.
fn deduplicate(
    rows: Vec<Row>,
    key: &[usize],
    keep: operators::rank::deduplicate::Keep,
    order: operators::rank::deduplicate::DedupOrder,
) -> Vec<Row> {
    use operators::rank::deduplicate::{DedupOrder, Keep};
    let mut numbered: Vec<(usize, Row)> = rows.into_iter().enumerate().collect();
    if keep == Keep::LastRow {
        numbered.reverse();
    }
    if let DedupOrder::RowTime(c) = order {
        let time = |r: &Row| r[c].as_ts().unwrap_or(i64::MIN);
        match keep {
            Keep::FirstRow => numbered.sort_by_key(|(_, r)| time(r)),
            Keep::LastRow => numbered.sort_by_key(|(_, r)| std::cmp::Reverse(time(r))),
        }
    }
    let mut seen: HashMap<Vec<Value>, ()> = HashMap::new();
    let mut out = Vec::new();
    for (_, row) in numbered {
        let k: Vec<Value> = key.iter().map(|&i| row[i].clone()).collect();
        if seen.insert(k, ()).is_none() {
            out.push(row);
        }
    }
    out
}

/// `ROW_NUMBER()` kept in `range` per partition: rows sorted stably by
/// `order` (ascending NULL first, descending NULL last), so rows with equal
/// sort keys keep the order they came in. That is the streaming Top-N's
/// numbering for an insert-only input; over an updating input, rows with
/// equal sort keys are numbered by their history, so compare such inputs
/// with sort keys unique per partition.
fn top_n(
    rows: Vec<Row>,
    partition_by: &[usize],
    order: &[operators::rank::topn::SortField],
    (start, end): (u64, u64),
    output_rank_number: bool,
) -> Vec<Row> {
    let mut partitions: HashMap<Vec<Value>, Vec<Row>> = HashMap::new();
    let mut keys = Vec::new();
    for row in rows {
        let k: Vec<Value> = partition_by.iter().map(|&i| row[i].clone()).collect();
        partitions
            .entry(k.clone())
            .or_insert_with(|| {
                keys.push(k);
                Vec::new()
            })
            .push(row);
    }
    let mut out = Vec::new();
    for k in keys {
        let mut rows = partitions.remove(&k).unwrap_or_default();
        rows.sort_by(|a, b| {
            for f in order {
                let o = a[f.column].total_cmp(&b[f.column]);
                let o = if f.descending { o.reverse() } else { o };
                if o != std::cmp::Ordering::Equal {
                    return o;
                }
            }
            std::cmp::Ordering::Equal
        });
        for (i, mut row) in rows.into_iter().enumerate() {
            let rank = i as u64 + 1;
            if rank < start || rank > end {
                continue;
            }
            if output_rank_number {
                row.push(Value::Int(rank as i64));
            }
            out.push(row);
        }
    }
    out
}

/// The table, time column and window of the window TVF an aggregate's
/// input (projections and filters) reads, when it reads one over a scan.
fn windowed_table(plan: &LogicalPlan) -> Option<(String, usize, operators::window::WindowSpec)> {
    match plan {
        LogicalPlan::Project { input, .. } | LogicalPlan::Filter { input, .. } => {
            windowed_table(input)
        }
        LogicalPlan::WindowTvf {
            input,
            time_col,
            window,
            ..
        } => match input.as_ref() {
            LogicalPlan::Scan { table, .. } => Some((table.clone(), *time_col, *window)),
            _ => None,
        },
        _ => None,
    }
}

/// Whether an aggregate's input (projections and filters) reads a legacy
/// group window.
fn is_group_window(plan: &LogicalPlan) -> bool {
    match plan {
        LogicalPlan::Project { input, .. } | LogicalPlan::Filter { input, .. } => {
            is_group_window(input)
        }
        LogicalPlan::WindowTvf { group_window, .. } => *group_window,
        _ => false,
    }
}

/// [`evaluate`] over a map from table name to rows; a table missing from
/// the map is empty.
pub fn evaluate_tables(
    plan: &LogicalPlan,
    tables: &std::collections::HashMap<String, Vec<Row>>,
) -> Vec<Row> {
    evaluate(plan, &|name| tables.get(name).cloned().unwrap_or_default())
}

/// True when every key pair is non-NULL and equal.
fn keys_join(l: &[Value], left_keys: &[usize], r: &[Value], right_keys: &[usize]) -> bool {
    left_keys.iter().zip(right_keys).all(|(&i, &j)| {
        let (a, b) = (&l[i], &r[j]);
        !a.is_null() && !b.is_null() && a == b
    })
}

/// Groups `rows` by the `group_by` columns (first-seen order) and computes
/// each call per group.
fn aggregate(rows: &[Row], group_by: &[usize], aggs: &[AggCall]) -> Vec<Row> {
    let mut order: Vec<Row> = Vec::new();
    let mut groups: HashMap<Row, Vec<&Row>> = HashMap::new();
    for row in rows {
        let key: Row = group_by.iter().map(|&i| row[i].clone()).collect();
        groups
            .entry(key)
            .or_insert_with_key(|k| {
                order.push(k.clone());
                Vec::new()
            })
            .push(row);
    }
    if group_by.is_empty() && rows.is_empty() {
        // SQL: a global aggregate over nothing still yields one row.
        order.push(Vec::new());
        groups.insert(Vec::new(), Vec::new());
    }
    order
        .into_iter()
        .map(|key| {
            let members = &groups[&key];
            let mut out = key.clone();
            out.extend(aggs.iter().map(|call| aggregate_call(call, members)));
            out
        })
        .collect()
}

/// One aggregate call over the rows of one group.
fn aggregate_call(call: &AggCall, rows: &[&Row]) -> Value {
    let counted: Vec<&Row> = rows
        .iter()
        .copied()
        .filter(|row| call.filter.is_none_or(|f| row[f] == Value::Bool(true)))
        .collect();
    if call.func == AggFunc::CountStar {
        return Value::Int(counted.len() as i64);
    }
    let arg = call
        .arg
        .unwrap_or_else(|| panic!("{} without an argument", call.func.name()));
    let mut values: Vec<Value> = Vec::new();
    for row in &counted {
        let v = &row[arg];
        if v.is_null() || (call.distinct && values.contains(v)) {
            continue;
        }
        values.push(v.clone());
    }
    let as_double = call.output_type == DataType::Double
        || values.iter().any(|v| matches!(v, Value::Double(_)));
    match call.func {
        AggFunc::CountStar | AggFunc::Count => Value::Int(values.len() as i64),
        _ if values.is_empty() => Value::Null,
        AggFunc::Min => values
            .into_iter()
            .reduce(|a, b| if b.total_cmp(&a).is_lt() { b } else { a })
            .unwrap_or(Value::Null),
        AggFunc::Max => values
            .into_iter()
            .reduce(|a, b| if b.total_cmp(&a).is_gt() { b } else { a })
            .unwrap_or(Value::Null),
        AggFunc::Sum if as_double => Value::Double(double_sum(&values)),
        AggFunc::Sum => Value::Int(int_sum(&values)),
        AggFunc::Avg if as_double => Value::Double(double_sum(&values) / values.len() as f64),
        AggFunc::Avg => Value::Int(int_sum(&values).wrapping_div(values.len() as i64)),
    }
}

fn double_sum(values: &[Value]) -> f64 {
    values.iter().filter_map(Value::as_f64).sum()
}

fn int_sum(values: &[Value]) -> i64 {
    values
        .iter()
        .filter_map(Value::as_int)
        .fold(0i64, i64::wrapping_add)
}

/// Materialises an input changelog: `+I`/`+U` add a row, `-U`/`-D` remove
/// one equal row (a retraction of a row not present is ignored). Rows come
/// out in first-seen order.
pub fn final_table(changes: &[Change]) -> Vec<Row> {
    let mut order: Vec<Row> = Vec::new();
    let mut counts: HashMap<Row, usize> = HashMap::new();
    for change in changes {
        if change.kind.is_accumulate() {
            *counts.entry(change.row.clone()).or_insert_with_key(|r| {
                order.push(r.clone());
                0
            }) += 1;
        } else if let Some(n) = counts.get_mut(&change.row) {
            *n = n.saturating_sub(1);
        }
    }
    order
        .into_iter()
        .flat_map(|row| {
            let n = counts[&row];
            std::iter::repeat_n(row, n)
        })
        .collect()
}

/// Materialises a changelog as an upsert sink keyed by the `key` columns
/// does: `+I`/`+U` put the row under its key (replacing the previous one),
/// `-D` deletes the key (if present), `-U` is ignored. Rows come out in the
/// order their keys were (last) inserted.
pub fn upsert_table(changes: &[Change], key: &[usize]) -> Vec<Row> {
    let mut slots: Vec<Option<Row>> = Vec::new();
    let mut index: HashMap<Row, usize> = HashMap::new();
    for change in changes {
        let k: Row = key.iter().map(|&i| change.row[i].clone()).collect();
        match change.kind {
            RowKind::Insert | RowKind::UpdateAfter => match index.get(&k) {
                Some(&slot) => slots[slot] = Some(change.row.clone()),
                None => {
                    index.insert(k, slots.len());
                    slots.push(Some(change.row.clone()));
                }
            },
            RowKind::Delete => {
                if let Some(slot) = index.remove(&k) {
                    slots[slot] = None;
                }
            }
            RowKind::UpdateBefore => {}
        }
    }
    slots.into_iter().flatten().collect()
}

/// `rows` sorted with [`cmp_rows`], so that two results compare as
/// multisets with `==`.
pub fn sorted(mut rows: Vec<Row>) -> Vec<Row> {
    rows.sort_by(|a, b| cmp_rows(a, b));
    rows
}
