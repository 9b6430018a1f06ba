//! Slicing against the lab's per-window state (`lab.window.slicing`), on a
//! small fixed input with pinned counters: a HOP of 10 s sliding by 1 s
//! (size / slide = 10) over keys that come back every 10 s, so each key has
//! about one record in any window. The sliced operator keeps one
//! accumulator per (key, 1 s slice); per-window state one per (key, window),
//! each record in the 10 windows holding it. Both give the same rows; the
//! per-window operator's peak state entries are more than 5 times the
//! sliced one's, its state writes 10 times, and both end with none.

mod common;

use common::{run_mem, MemSources};
use operators::changelog::Change;
use operators::value::Value;
use optimizer::session::{InsertOutcome, RunOptions};

const SCRIPT: &str = "
CREATE TABLE ev (
  k  INT,
  v  BIGINT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'datagen');
CREATE TABLE out (k INT, ws TIMESTAMP(3), we TIMESTAMP(3), c BIGINT, s BIGINT)
  WITH ('connector' = 'blackhole');
INSERT INTO out SELECT k, window_start, window_end, COUNT(*), SUM(v)
FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '10' SECOND))
GROUP BY k, window_start, window_end;
";

/// 60 rows half a second apart (30 s of event time), in order, keys
/// 0..19 in turn: each key once every 10 s.
fn sources() -> MemSources {
    let t0 = 1_700_000_000_000i64;
    let changes = (0..60i64)
        .map(|i| {
            Change::insert(vec![
                Value::Int(i % 20),
                Value::Int(i),
                Value::Ts(t0 + i * 500),
            ])
        })
        .collect();
    let mut s = MemSources::default();
    s.0.insert("ev".into(), changes);
    s
}

fn run(slicing: bool, phase: &str, backend: &str, p: usize) -> InsertOutcome {
    let overrides = [
        ("lab.window.slicing", slicing.to_string()),
        ("table.optimizer.agg-phase-strategy", phase.to_string()),
        ("state.backend.type", backend.to_string()),
        ("parallelism.default", p.to_string()),
        ("lab.source.batch-size", "1".to_string()),
        ("lab.clock", "deterministic".to_string()),
        ("pipeline.auto-watermark-interval", "0 ms".to_string()),
    ];
    run_mem(SCRIPT, &sources(), &overrides, RunOptions::keep_all())
        .unwrap()
        .1
        .remove(0)
}

/// (peak entries, entries at the end, writes incl. deletes) of the stage
/// that keeps the window state.
fn window_state(o: &InsertOutcome) -> (i64, i64, u64) {
    let stage = o
        .report
        .stages
        .iter()
        .find(|s| !s.states.is_empty())
        .expect("a stage with window state");
    (
        stage.peak_state_entries,
        stage.state_entries(),
        stage.state_writes(),
    )
}

#[test]
fn per_window_state_keeps_more_entries_for_the_same_rows() {
    for phase in ["ONE_PHASE", "TWO_PHASE"] {
        for backend in ["hashmap", "rocksdb"] {
            let sliced = run(true, phase, backend, 1);
            let unsliced = run(false, phase, backend, 1);
            let rows = sliced.sink_report().result.clone().unwrap();
            // 20 keys x 30 s: each record in 10 windows, none late.
            assert_eq!(rows.len(), 60 * 10, "{phase} {backend}");
            assert_eq!(
                unsliced.sink_report().result.as_ref().unwrap(),
                &rows,
                "{phase} {backend}"
            );
            let (peak_s, end_s, writes_s) = window_state(&sliced);
            let (peak_u, end_u, writes_u) = window_state(&unsliced);
            assert_eq!((end_s, end_u), (0, 0), "{phase} {backend}");
            // Sliced: a record's slice lives until its last window fires,
            // 12 s after it (window, watermark delay): the records of the
            // last 12 s and the new one, 25. Per window: those records'
            // unfired windows, 6.4 each on average (all 10 for the first
            // 2 s, then one fewer a second).
            assert_eq!((peak_s, peak_u), (25, 160), "{phase} {backend}: peaks");
            assert!(
                peak_u >= 5 * peak_s,
                "{phase} {backend}: {peak_u} vs {peak_s}"
            );
            // Writes and deletes: once per record, or once per record
            // and window.
            assert_eq!(
                (writes_s, writes_u),
                (120, 1200),
                "{phase} {backend}: writes"
            );
        }
    }
}

/// At parallelism 4 the peak is over the four subtasks at once: the same
/// figures, whichever subtask holds a key.
#[test]
fn the_peak_is_over_all_subtasks() {
    for slicing in [true, false] {
        let one = window_state(&run(slicing, "ONE_PHASE", "hashmap", 1));
        let four = window_state(&run(slicing, "ONE_PHASE", "hashmap", 4));
        assert_eq!(one, four, "slicing {slicing}");
    }
}

/// EXPLAIN names the lab's strategy only when it is not the default, on
/// the one-phase aggregate and on the global half of a two-phase one.
#[test]
fn explain_shows_per_window_state() {
    let explain = |slicing: &str, phase: &str| {
        let sets = [
            ("lab.window.slicing".to_string(), slicing.to_string()),
            (
                "table.optimizer.agg-phase-strategy".to_string(),
                phase.to_string(),
            ),
        ];
        optimizer::session::explain_script(SCRIPT, &sets).unwrap()
    };
    for phase in ["ONE_PHASE", "TWO_PHASE"] {
        assert!(!explain("true", phase).contains("slicing="), "{phase}");
        let text = explain("false", phase);
        let line = text
            .lines()
            .find(|l| l.contains("slicing=[false]"))
            .unwrap_or_else(|| panic!("{phase}: {text}"));
        let op = if phase == "ONE_PHASE" {
            "WindowAggregate("
        } else {
            "GlobalWindowAggregate("
        };
        assert!(
            line.trim_start_matches([' ', '+', '-']).starts_with(op),
            "{line}"
        );
    }
}

/// A compiled plan keeps the strategy (`per_window`, written only when
/// set) and refuses it on a window that has no slices to give up.
#[test]
fn compiled_plans_keep_per_window_state_and_refuse_it_on_a_tumble() {
    use optimizer::physical::compiled_plan;
    let sets = [
        ("lab.window.slicing".to_string(), "false".to_string()),
        (
            "table.optimizer.agg-phase-strategy".to_string(),
            "ONE_PHASE".to_string(),
        ),
    ];
    let json = compiled_plan::compile(&optimizer::session::compile_script(SCRIPT, &sets).unwrap());
    assert!(json.contains("\"per_window\": true"), "{json}");
    let sliced = compiled_plan::compile(&optimizer::session::compile_script(SCRIPT, &[]).unwrap());
    assert!(!sliced.contains("per_window"));
    let back = compiled_plan::load(&json, "p.json").unwrap();
    assert_eq!(compiled_plan::compile(&back), json);
    let mut plan: serde_json::Value = serde_json::from_str(&json).unwrap();
    let node = plan["nodes"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|n| n["type"] == "stream-exec-window-aggregate_1")
        .expect("a window aggregate");
    node["spec"]["kind"]["WindowAggregate"]["window"] =
        serde_json::json!({"Tumble": {"size": 10000}});
    let tumble = serde_json::to_string_pretty(&plan).unwrap();
    let err = compiled_plan::load(&tumble, "p.json")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("per_window") && err.contains("only a HOP or CUMULATE window aggregate"),
        "{err}"
    );
}

/// A HOP or CUMULATE window that puts each row in more windows than the
/// lab runs (optimizer/src/sql/window_tvf.rs) is refused, with the count.
#[test]
fn a_window_with_too_many_windows_per_row_is_refused() {
    for (call, n) in [
        (
            "HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '4294967296' SECOND)",
            "4294967296",
        ),
        (
            "CUMULATE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '200000' SECOND)",
            "200000",
        ),
    ] {
        let script = SCRIPT.replace(
            "HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '10' SECOND)",
            call,
        );
        let e = optimizer::session::explain_script(&script, &[])
            .err()
            .unwrap_or_else(|| panic!("{call}: planned"));
        let m = e.to_string();
        assert!(
            m.contains(&format!("each row in {n} windows")) && m.contains("at most 100000"),
            "{m}"
        );
    }
    // Exactly the most is fine.
    let most = SCRIPT.replace("INTERVAL '10' SECOND", "INTERVAL '100000' SECOND");
    optimizer::session::explain_script(&most, &[]).unwrap();
}
