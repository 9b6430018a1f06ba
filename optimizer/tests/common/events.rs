//! Out-of-order event streams for the window property tests.

use super::MemSources;
use operators::changelog::Change;
use operators::value::{cmp_rows, Row, Value};
use optimizer::session::InsertOutcome;
use proptest::prelude::*;
use std::ops::Range;

/// Table `ev` of rows `(k, v[, id], ts)`: keys 0..4, a value from
/// `values` (NULL one time in ten), times that drift forward about a
/// second per row and jump back up to 15 s now and then: out of order,
/// some of them late. With `with_id`, `id` is the row's position.
pub fn out_of_order(values: Range<i64>, with_id: bool) -> impl Strategy<Value = MemSources> {
    (
        prop::collection::vec(
            (
                0i64..4,
                prop::option::weighted(0.9, values),
                0i64..1500,
                any::<bool>(),
            ),
            0..60,
        ),
        0i64..15_000,
    )
        .prop_map(move |(rows, lateness)| {
            let mut t = 1_700_000_000_000i64;
            let changes = rows
                .into_iter()
                .enumerate()
                .map(|(id, (k, v, step, back))| {
                    t += step;
                    let ts = if back { t - lateness } else { t };
                    let mut row = vec![Value::Int(k), v.map_or(Value::Null, Value::Int)];
                    if with_id {
                        row.push(Value::Int(id as i64));
                    }
                    row.push(Value::Ts(ts));
                    Change::insert(row)
                })
                .collect();
            let mut s = MemSources::default();
            s.0.insert("ev".into(), changes);
            s
        })
}

/// `rows` in the order of `cmp_rows`, for comparing results as multisets.
pub fn sorted(mut rows: Vec<Row>) -> Vec<Row> {
    rows.sort_by(|x, y| cmp_rows(x, y));
    rows
}

/// Holds every state of `outcome`'s job to 0 entries after the final
/// watermark, and returns the records dropped as late by the stages
/// `counted` picks by name.
pub fn drained_and_dropped(
    sink: &str,
    outcome: &InsertOutcome,
    counted: impl Fn(&str) -> bool,
) -> Result<u64, TestCaseError> {
    let mut dropped = 0;
    for stage in &outcome.report.stages {
        for s in &stage.states {
            prop_assert_eq!(
                s.metrics.entries,
                0,
                "{}: state {} of {} not empty after the final watermark",
                sink,
                s.name,
                stage.name
            );
        }
        if counted(&stage.name) {
            dropped += stage.counter("numLateRecordsDropped");
        }
    }
    Ok(dropped)
}
