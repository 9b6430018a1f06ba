//! The lab's fuzz harness: hostile input of six kinds (SQL scripts, CSV
//! files, configuration values, campaign specs, compiled plans, results
//! files for `lab plot`), generated from grammars and mutated from the
//! shipped examples ([`gen`]), run in process against the same entry
//! points `lab` calls ([`target`]).
//!
//! A failure is a panic, an abort, a stack overflow, an allocation the
//! harness refuses (over 1 GiB at once or 4 GiB live), or an input that
//! runs past its time budget; an error with exit code 2 or 3 is the
//! expected answer to bad input. Inputs run in child processes, a batch
//! each ([`child`]), each input on a thread with a small stack, so that
//! recursion that input depth can drive is found as an overflow of that
//! stack and not of the harness; the parent restarts a child after the
//! input that killed it ([`parent`]). Inputs are seeded: a seed and an
//! index name one input, on any machine. Failures are saved (minimised,
//! [`minimize`]) as cases: a folder of the input's files. The corpus
//! (`fuzz/corpus/`) holds one per crash site found; `tests/fuzz.rs`
//! replays it and runs a bounded campaign; `scripts/fuzz.sh` runs a long
//! one. See `docs/fuzzing.md`.

pub mod case;
pub mod child;
pub mod gen;
pub mod guard;
pub mod minimize;
pub mod mutate;
pub mod parent;
pub mod rng;
pub mod target;

use case::{Category, CATEGORIES};

/// Stack of the thread an input runs on, in KiB: a quarter of the
/// smallest stack the lab runs on (a spawned thread's 2 MiB), so that a
/// recursion input can drive shows up here with room to spare, and the
/// deepest input the lab accepts (see `optimizer/src/sql/nesting.rs`)
/// still fits.
pub const STACK_KIB: usize = 512;

/// How the inputs of a run are shared among the categories, by default.
pub const WEIGHTS: &str = "sql=40,csv=15,config=15,spec=10,plan=12,results=8";

/// `sql=40,csv=15,...` as (category, weight); a category left out gets 0.
pub fn parse_weights(text: &str) -> Result<Vec<(Category, u64)>, String> {
    let mut out = Vec::new();
    for part in text.split(',').filter(|p| !p.trim().is_empty()) {
        let (name, w) = part
            .split_once('=')
            .ok_or_else(|| format!("--weights '{part}': expected CATEGORY=WEIGHT"))?;
        let c = Category::from_name(name.trim()).ok_or_else(|| {
            format!(
                "--weights: unknown category '{name}' (one of {})",
                CATEGORIES.map(|c| c.name()).join(", ")
            )
        })?;
        let w: u64 = w
            .trim()
            .parse()
            .map_err(|_| format!("--weights '{part}': expected a whole number"))?;
        out.push((c, w));
    }
    if out.iter().all(|(_, w)| *w == 0) {
        return Err("--weights: every weight is 0".into());
    }
    Ok(out)
}

/// `total` inputs split by `weights`.
pub fn split_counts(total: u64, weights: &[(Category, u64)]) -> Vec<(Category, u64)> {
    let sum: u64 = weights.iter().map(|(_, w)| w).sum::<u64>().max(1);
    let mut out: Vec<(Category, u64)> =
        weights.iter().map(|&(c, w)| (c, total * w / sum)).collect();
    let given: u64 = out.iter().map(|(_, n)| n).sum();
    if let Some(first) = out.iter_mut().find(|(_, n)| *n > 0) {
        first.1 += total - given;
    }
    out
}

/// Children at a time by default: the cores, at most 4.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 4)
}

/// A report as text: the counts per category, then every failure.
pub fn describe(report: &parent::Report) -> String {
    let mut s = format!(
        "{} inputs in {:.1} s\n{}",
        report.total(),
        report.elapsed.as_secs_f64(),
        report.table()
    );
    for f in &report.failures {
        s += &format!(
            "FAILURE {} ({}, {}): {}{}\n",
            f.kind,
            f.category.name(),
            f.origin,
            f.detail.chars().take(600).collect::<String>(),
            f.saved
                .as_ref()
                .map(|p| format!("\n  saved as {}", p.display()))
                .unwrap_or_default()
        );
    }
    s
}
