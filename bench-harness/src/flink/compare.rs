//! `lab compare SCRIPT`: the same script on the lab and on Flink, side by
//! side.
//!
//! Per sink: whether the final results are equal (as multisets of rows; the
//! first rows only one engine has when not), changelog rows by kind, input
//! rows, wall time and throughput, and state (the lab's; Flink's from its
//! final checkpoint when checkpointing is on, see [`super::checkpoint`]).
//! `--flink-set` gives Flink keys the lab does not model (e.g. Flink 2.3's
//! `table.exec.sink.require-on-conflict`, or
//! `execution.checkpointing.interval`). A script's `EXPLAIN` statements
//! print both plans, section by section: the lab's, then Flink's. The
//! comparison is also written as JSON with `--json FILE`. Exit code 1 when
//! any sink's results differ.

use super::run::{run_on_flink, FlinkOutcome, FlinkRun};
use super::{write_atomic, FlinkError};
use crate::numbers::{self, Unit};
use operators::changelog::{KindCounts, RowKind};
use operators::value::{cmp_rows, DisplayRow};
use operators::Row;
use optimizer::session::{run_script_explaining, InsertOutcome, RunOptions};
use std::fmt::Write as _;
use std::path::Path;

/// How one sink compares.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SinkComparison {
    pub sink: String,
    /// An upsert sink (a primary key): no `-U` reaches it.
    pub keyed: bool,
    pub results_equal: bool,
    pub lab_result_rows: usize,
    pub flink_result_rows: usize,
    /// `[+I, -U, +U, -D]`.
    pub lab_counts: [u64; 4],
    pub flink_counts: [u64; 4],
    pub lab_input_rows: u64,
    pub flink_input_rows: u64,
    pub lab_wall_ms: f64,
    pub flink_wall_ms: f64,
    pub lab_state_entries: i64,
    pub lab_state_bytes: i64,
    /// Flink's state in the job's final checkpoint (checkpointing on).
    pub flink_checkpointed_state_bytes: Option<u64>,
    /// Rows only the lab's result has (at most 5 shown).
    pub only_lab: Vec<String>,
    /// Rows only Flink's result has (at most 5 shown).
    pub only_flink: Vec<String>,
    pub flink_job_id: String,
    pub flink_taskmanagers: usize,
    /// The subtasks each TaskManager ran (by its REST id).
    pub flink_subtasks_per_taskmanager: std::collections::BTreeMap<String, u64>,
}

pub struct CompareArgs<'a> {
    pub script: &'a Path,
    pub sets: &'a [(String, String)],
    /// Configuration for Flink only (keys the lab does not model).
    pub flink_sets: &'a [(String, String)],
    pub params: &'a [(String, String)],
    pub rest: Option<&'a str>,
    pub json: Option<&'a Path>,
    pub quiet: bool,
}

/// Runs both engines and prints the comparison; `Ok(false)` when results differ.
pub fn compare(a: &CompareArgs) -> Result<bool, FlinkError> {
    let text = std::fs::read_to_string(a.script).map_err(|e| {
        FlinkError::input(format!("cannot read script {}: {e}", a.script.display()))
    })?;
    let sql = super::rewrite::fill_params(&text, a.params)?;
    let base_dir = a.script.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut lab_explains = Vec::new();
    let lab = run_script_explaining(
        &sql,
        &base_dir,
        a.sets,
        RunOptions::keep_all(),
        &mut |_, _| {},
        &mut |text| lab_explains.push(text.to_string()),
    )
    .map_err(|e| FlinkError {
        code: e.exit_code() as u8,
        message: e.to_string(),
    })?;
    let flink_sets: Vec<(String, String)> = a.sets.iter().chain(a.flink_sets).cloned().collect();
    let flink = run_on_flink(
        a.rest,
        &FlinkRun {
            script: a.script,
            sql: &sql,
            sets: &flink_sets,
            params: &[],
            rows: true,
            quiet: a.quiet,
            only_sinks: None,
        },
    )?;
    let mut comparisons = Vec::new();
    for l in &lab {
        let f = flink
            .outcomes
            .iter()
            .find(|f| f.sink.name == l.sink)
            .ok_or_else(|| {
                FlinkError::execution(format!("Flink ran no job for the sink '{}'", l.sink))
            })?;
        comparisons.push(compare_sink(l, f));
    }
    crate::output::outln!(
        "joinlab compare {} (lab vs Flink {} at {})",
        a.script.display(),
        flink.flink_version,
        flink.rest
    )?;
    if !flink.dropped_keys.is_empty() {
        crate::output::outln!(
            "  (lab-only keys not sent to Flink: {})",
            flink.dropped_keys.join(", ")
        )?;
    }
    for (i, lab_plan) in lab_explains.iter().enumerate() {
        let flink_plan = flink.explains.get(i).map(String::as_str).unwrap_or("");
        crate::output::out(&render_explains(i + 1, lab_plan, flink_plan))?;
    }
    for c in &comparisons {
        crate::output::out(&render(c))?;
    }
    if let Some(path) = a.json {
        let json = serde_json::to_string_pretty(&comparisons).expect("serialises");
        write_atomic(path, json.as_bytes())
            .map_err(|e| FlinkError::execution(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(comparisons.iter().all(|c| c.results_equal))
}

fn counts(k: &KindCounts) -> [u64; 4] {
    [
        k.get(RowKind::Insert),
        k.get(RowKind::UpdateBefore),
        k.get(RowKind::UpdateAfter),
        k.get(RowKind::Delete),
    ]
}

/// Rows of `a` not in `b`, as multisets (both sorted).
fn minus(a: &[Row], b: &[Row]) -> Vec<Row> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() {
        if j >= b.len() {
            out.extend(a[i..].iter().cloned());
            break;
        }
        match cmp_rows(&a[i], &b[j]) {
            std::cmp::Ordering::Less => {
                out.push(a[i].clone());
                i += 1;
            }
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                i += 1;
                j += 1;
            }
        }
    }
    out
}

fn compare_sink(l: &InsertOutcome, f: &FlinkOutcome) -> SinkComparison {
    let mut lab_rows = l.sink_report().result.clone().unwrap_or_default();
    let mut flink_rows = f.result.clone().unwrap_or_default();
    lab_rows.sort_by(|a, b| cmp_rows(a, b));
    flink_rows.sort_by(|a, b| cmp_rows(a, b));
    let only_lab = minus(&lab_rows, &flink_rows);
    let only_flink = minus(&flink_rows, &lab_rows);
    let show = |rows: &[Row]| {
        rows.iter()
            .take(5)
            .map(|r| DisplayRow(r).to_string())
            .collect()
    };
    SinkComparison {
        sink: l.sink.clone(),
        keyed: f.sink.key.is_some(),
        results_equal: only_lab.is_empty() && only_flink.is_empty(),
        lab_result_rows: lab_rows.len(),
        flink_result_rows: flink_rows.len(),
        lab_counts: counts(&l.sink_report().counts),
        flink_counts: counts(&f.captured.counts),
        lab_input_rows: l.report.input_rows,
        flink_input_rows: f.job.input_rows,
        lab_wall_ms: l.report.wall.as_secs_f64() * 1e3,
        flink_wall_ms: f.job.wall.as_secs_f64() * 1e3,
        lab_state_entries: l.report.state_entries(),
        lab_state_bytes: l.report.state_bytes(),
        flink_checkpointed_state_bytes: f.job.checkpointed_bytes(),
        only_lab: show(&only_lab),
        only_flink: show(&only_flink),
        flink_job_id: f.job.job_id.clone(),
        flink_taskmanagers: f.job.taskmanagers().len(),
        flink_subtasks_per_taskmanager: f.job.taskmanagers(),
    }
}

fn rate(rows: u64, ms: f64) -> String {
    let r = rows as f64 / (ms / 1e3).max(1e-9);
    if r >= 1e6 {
        format!("{:.2} M rows/s", r / 1e6)
    } else if r >= 1e3 {
        format!("{:.1} k rows/s", r / 1e3)
    } else {
        format!("{r:.0} rows/s")
    }
}

/// One sink's comparison as text.
pub fn render(c: &SinkComparison) -> String {
    let mut s = String::new();
    if c.results_equal {
        let _ = writeln!(
            s,
            "sink {}: results EQUAL ({} rows)",
            c.sink, c.lab_result_rows
        );
    } else {
        let _ = writeln!(
            s,
            "sink {}: results DIFFER (lab {} rows, Flink {} rows)",
            c.sink, c.lab_result_rows, c.flink_result_rows
        );
        for r in &c.only_lab {
            let _ = writeln!(s, "  only on the lab:  {r}");
        }
        for r in &c.only_flink {
            let _ = writeln!(s, "  only on Flink:    {r}");
        }
    }
    let _ = writeln!(s, "  {:<18} {:>16} {:>16}", "", "lab", "flink");
    for (i, k) in ["+I", "-U", "+U", "-D"].iter().enumerate() {
        let _ = writeln!(
            s,
            "  {:<18} {:>16} {:>16}",
            format!("changelog {k}"),
            c.lab_counts[i],
            c.flink_counts[i]
        );
    }
    let _ = writeln!(
        s,
        "  {:<18} {:>16} {:>16}",
        "changelog rows",
        c.lab_counts.iter().sum::<u64>(),
        c.flink_counts.iter().sum::<u64>()
    );
    let _ = writeln!(
        s,
        "  {:<18} {:>16} {:>16}",
        "input rows", c.lab_input_rows, c.flink_input_rows
    );
    let _ = writeln!(
        s,
        "  {:<18} {:>16} {:>16}",
        "wall time",
        numbers::format(c.lab_wall_ms, Unit::Millis),
        numbers::format(c.flink_wall_ms, Unit::Millis)
    );
    let _ = writeln!(
        s,
        "  {:<18} {:>16} {:>16}",
        "throughput",
        rate(c.lab_input_rows, c.lab_wall_ms),
        rate(c.flink_input_rows, c.flink_wall_ms)
    );
    let _ = writeln!(
        s,
        "  {:<18} {:>16} {:>16}",
        "state entries", c.lab_state_entries, "n/a"
    );
    let _ = writeln!(
        s,
        "  {:<18} {:>16} {:>16}",
        "state bytes",
        c.lab_state_bytes,
        c.flink_checkpointed_state_bytes
            .map_or("n/a".to_string(), |b| format!("{b} (ckpt)"))
    );
    let _ = writeln!(
        s,
        "  (Flink: job {}, on {} TaskManager(s); wall time from the job's start to its sinks' end \
         of input; state: the lab's live state, Flink's final checkpoint when checkpointing is \
         on)",
        c.flink_job_id, c.flink_taskmanagers
    );
    s
}

/// The `n`-th EXPLAIN statement's plans, section by section (`== ... ==`):
/// the lab's, then Flink's, so the same section of both sits together.
pub fn render_explains(n: usize, lab: &str, flink: &str) -> String {
    let lab_sections = sections(lab);
    let flink_sections = sections(flink);
    let mut s =
        format!("EXPLAIN statement {n}, section by section: the lab's plan, then Flink's\n");
    let mut titles: Vec<&str> = lab_sections.iter().map(|(t, _)| *t).collect();
    for (t, _) in &flink_sections {
        if !titles.contains(t) {
            titles.push(t);
        }
    }
    for title in titles {
        let body = |secs: &[(&str, String)]| {
            secs.iter()
                .find(|(t, _)| *t == title)
                .map_or("  (not printed)\n".to_string(), |(_, b)| b.clone())
        };
        if !title.is_empty() {
            let _ = writeln!(s, "{title}");
        }
        let _ = write!(s, "-- lab\n{}", body(&lab_sections));
        let _ = write!(s, "-- Flink\n{}", body(&flink_sections));
        s.push('\n');
    }
    s
}

/// A plan's sections: each `== title ==` line and the lines under it
/// (blank lines at the ends dropped).
fn sections(plan: &str) -> Vec<(&str, String)> {
    let mut out: Vec<(&str, String)> = Vec::new();
    for line in plan.lines() {
        let t = line.trim();
        if t.starts_with("==") && t.ends_with("==") && t.len() > 4 {
            out.push((t, String::new()));
            continue;
        }
        if out.is_empty() {
            out.push(("", String::new()));
        }
        let body = &mut out.last_mut().expect("one section").1;
        if !(line.trim().is_empty() && body.is_empty()) {
            body.push_str(line);
            body.push('\n');
        }
    }
    for (_, body) in &mut out {
        while body.ends_with("\n\n") {
            body.pop();
        }
    }
    out.retain(|(t, b)| !t.is_empty() || !b.trim().is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use operators::Value;

    #[test]
    fn explains_section_by_section() {
        let lab = "== Abstract Syntax Tree ==\nA\n\n== Optimized Execution Plan ==\nLab\n";
        let flink = "== Abstract Syntax Tree ==\nA'\n\n== Optimized Physical Plan ==\nP\n\n\
                     == Optimized Execution Plan ==\nFlink\n";
        let text = render_explains(1, lab, flink);
        assert_eq!(
            text,
            "EXPLAIN statement 1, section by section: the lab's plan, then Flink's\n\
             == Abstract Syntax Tree ==\n-- lab\nA\n-- Flink\nA'\n\n\
             == Optimized Execution Plan ==\n-- lab\nLab\n-- Flink\nFlink\n\n\
             == Optimized Physical Plan ==\n-- lab\n  (not printed)\n-- Flink\nP\n\n"
        );
    }

    #[test]
    fn multiset_difference() {
        let r = |v: i64| vec![Value::Int(v)];
        let a = vec![r(1), r(1), r(2), r(4)];
        let b = vec![r(1), r(2), r(3)];
        assert_eq!(minus(&a, &b), vec![r(1), r(4)]);
        assert_eq!(minus(&b, &a), vec![r(3)]);
        assert!(minus(&a, &a).is_empty());
    }
}
