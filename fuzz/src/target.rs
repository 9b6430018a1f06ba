//! Running one input against the lab's entry points, in process: what
//! `lab explain`, `lab run`, `--set`, `--try`, `lab campaign` (its checks
//! before the first run), `lab execute-plan` and `lab plot` call. An input
//! gets an outcome (ran, refused with an error, only checked); a panic is
//! left to unwind to the caller ([`crate::child`]), which counts it as a
//! failure.

use crate::case::{Category, Input};
use crate::guard;
use bench_harness::campaign::spec::Spec;
use bench_harness::campaign::{report, runner, tune, CampaignError};
use optimizer::config::Config;
use optimizer::error::PlanError;
use optimizer::session::{explain_script_in, run_script, InsertOutcome, RunError, RunOptions};
use std::path::Path;

/// What the lab made of an input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Ran (or, for specs and reports, passed every check and was drawn).
    Ran,
    /// Passed its checks but was not run: too big for a fuzz input, or it
    /// names a path outside its directory ([`guard`]).
    CheckedOnly,
    /// Refused with an error and the exit code `lab` gives it.
    Refused { code: u8, message: String },
    /// Stopped by the harness after [`MAX_ROWS_READ`] rows.
    Stopped,
}

/// Rows a run may read before the harness stops it (by unwinding from
/// the progress callback with [`RowBudget`]).
pub const MAX_ROWS_READ: u64 = 2_000_000;

/// The payload of the unwind that stops a run at [`MAX_ROWS_READ`]; not a
/// failure.
pub struct RowBudget;

fn refused_plan(e: PlanError) -> Outcome {
    Outcome::Refused {
        code: 2,
        message: e.to_string(),
    }
}

fn refused_run(e: RunError) -> Outcome {
    Outcome::Refused {
        code: e.exit_code() as u8,
        message: e.to_string(),
    }
}

fn refused_campaign(e: CampaignError) -> Outcome {
    Outcome::Refused {
        code: e.code,
        message: e.message,
    }
}

fn refused(message: impl Into<String>) -> Outcome {
    Outcome::Refused {
        code: 2,
        message: message.into(),
    }
}

/// `Ok(text)`, or the error `lab` gives a file that is not UTF-8.
fn text<'a>(input: &'a Input, name: &str) -> Result<&'a str, Outcome> {
    let bytes = input.file(name).unwrap_or_default();
    std::str::from_utf8(bytes).map_err(|e| {
        refused(format!(
            "cannot read {name}: stream did not contain valid UTF-8: {e}"
        ))
    })
}

macro_rules! tryo {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(o) => return o,
        }
    };
}

/// Runs `input`, whose files are already in `dir` (with the fixtures).
pub fn run(input: &Input, dir: &Path) -> Outcome {
    match input.category {
        Category::Sql => sql(input, dir),
        Category::Csv => csv(input, dir),
        Category::Config => config(input, dir),
        Category::Spec => spec(input, dir),
        Category::Plan => plan(input, dir),
        Category::Results => results(dir),
    }
}

fn progress() -> impl FnMut(&str, u64) {
    |_: &str, n: u64| {
        if n > MAX_ROWS_READ {
            std::panic::panic_any(RowBudget);
        }
    }
}

/// `lab run --result result.csv --changelog changelog.csv`: the run, then
/// its files.
fn run_and_write(sql: &str, dir: &Path, overrides: &[(String, String)]) -> Outcome {
    let outcomes = match run_script(sql, dir, overrides, RunOptions::keep_all(), &mut progress()) {
        Ok(o) => o,
        Err(e) => return refused_run(e),
    };
    write_outputs(&outcomes, dir)
}

fn write_outputs(outcomes: &[InsertOutcome], dir: &Path) -> Outcome {
    for (k, o) in outcomes.iter().enumerate() {
        let columns = o.plan.sink.table.schema.names();
        let rows = o.sink_report().result.as_deref().unwrap_or_default();
        if let Err(e) = datasets::csv_write::write_result_csv(
            &dir.join(format!("result{k}.csv")),
            &columns,
            rows,
        ) {
            return Outcome::Refused {
                code: 3,
                message: e.to_string(),
            };
        }
        if let Err(e) = datasets::csv_write::write_changelog_csv(
            &dir.join(format!("changelog{k}.csv")),
            &columns,
            &o.changelog,
        ) {
            return Outcome::Refused {
                code: 3,
                message: e.to_string(),
            };
        }
    }
    Outcome::Ran
}

/// Whether a script is small enough to run and stays in its directory.
fn runnable(sql: &str) -> bool {
    if !guard::paths_safe(sql) {
        return false;
    }
    match optimizer::sql::parse_script(sql) {
        Ok(script) => guard::small_tables(
            script.catalog.tables().iter().map(|t| &t.options),
            guard::joins(sql),
        ),
        Err(_) => true,
    }
}

/// `lab explain script.sql`, then `lab run script.sql`.
fn sql(input: &Input, dir: &Path) -> Outcome {
    let raw = tryo!(text(input, "script.sql"));
    let sql = match bench_harness::template::fill_script("script.sql", raw, &[]) {
        Ok(s) => s,
        Err(e) => return refused(e),
    };
    explain_then_run(&sql, dir, &[])
}

fn explain_then_run(sql: &str, dir: &Path, overrides: &[(String, String)]) -> Outcome {
    if let Err(e) = explain_script_in(sql, dir, overrides) {
        return refused_plan(e);
    }
    if !runnable(sql) {
        return Outcome::CheckedOnly;
    }
    run_and_write(sql, dir, overrides)
}

/// `lab run script.sql --result ... --changelog ...` reading `input.csv`.
fn csv(input: &Input, dir: &Path) -> Outcome {
    let sql = tryo!(text(input, "script.sql"));
    run_and_write(sql, dir, &[])
}

/// `SET` lines go into the script; `--set` and `--try` are checked as
/// `lab run` and `lab tune` check them, then the script runs with them
/// (under `lab tune` when the `--try` values make a few variants).
fn config(input: &Input, dir: &Path) -> Outcome {
    let lines = tryo!(text(input, "config.txt"));
    let script = tryo!(text(input, "script.sql"));
    let mut overrides = Vec::new();
    let mut tries = Vec::new();
    let mut sets = String::new();
    for line in lines.lines() {
        if let Some(flag) = line.strip_prefix("--set ") {
            // As `lab run` reads `--set KEY=VALUE`.
            let Some((k, v)) = flag.split_once('=').filter(|(k, _)| !k.trim().is_empty()) else {
                return refused(format!("--set '{flag}': expected KEY=VALUE"));
            };
            let (k, v) = (k.trim().to_string(), v.trim().to_string());
            if let Err(e) = Config::new().set(&k, &v) {
                return refused(format!("--set '{flag}': {}", e.message));
            }
            overrides.push((k, v));
        } else if let Some(flag) = line.strip_prefix("--try ") {
            if let Err(e) = tune::parse_try(flag) {
                return refused_campaign(e);
            }
            tries.push(flag.to_string());
        } else {
            sets.push_str(line);
            sets.push('\n');
        }
    }
    let sql = format!("{sets}{script}");
    let safe = guard::paths_safe(lines);
    if !tries.is_empty() {
        let path = dir.join("tuned.sql");
        if std::fs::write(&path, &sql).is_err() {
            return refused("cannot write tuned.sql");
        }
        let variants: usize = tries
            .iter()
            .map(|t| t.split(',').count())
            .fold(1usize, |a, n| a.saturating_mul(n));
        // A tune of many variants is honest work; one of a few, or one
        // refused for too many, takes milliseconds.
        if safe && runnable(&sql) && (variants <= 3 || variants > 1000) {
            return match tune::tune(&tune::TuneArgs {
                script: &path,
                tries: &tries,
                sets: &overrides,
                params: &[],
                repeats: 1,
                quiet: true,
                save_baseline: None,
                baseline: None,
                engine: bench_harness::flink::Engine::Lab,
                flink_rest: None,
                flink_sets: &[],
            }) {
                Ok(_) => Outcome::Ran,
                Err(e) => refused_campaign(e),
            };
        }
        for t in &tries {
            if let Ok((k, values)) = tune::parse_try(t) {
                overrides.push((k, values[0].clone()));
            }
        }
    }
    if !safe {
        return match explain_script_in(&sql, dir, &overrides) {
            Ok(_) => Outcome::CheckedOnly,
            Err(e) => refused_plan(e),
        };
    }
    explain_then_run(&sql, dir, &overrides)
}

/// The checks `lab campaign spec.toml` makes before its first run, for
/// both modes.
fn spec(input: &Input, dir: &Path) -> Outcome {
    let path = dir.join("spec.toml");
    let spec = match Spec::load(&path) {
        Ok(s) => s,
        Err(e) => return refused_campaign(e),
    };
    let _ = input;
    let points = spec.plan(false).points.len() + spec.plan(true).points.len();
    if points * spec.variants.len().max(1) > 2000 {
        // Checking that many points is honest work (the campaign asked
        // for as many runs).
        return match spec.load_script() {
            Ok(_) => Outcome::CheckedOnly,
            Err(e) => refused_campaign(e),
        };
    }
    match runner::check_spec(&spec, false) {
        Ok(()) => Outcome::Ran,
        Err(e) => refused_campaign(e),
    }
}

/// `lab execute-plan plan.json`: the plan loaded and explained, then run.
fn plan(input: &Input, dir: &Path) -> Outcome {
    let json = tryo!(text(input, "plan.json"));
    let sql = "EXECUTE PLAN 'plan.json';";
    if let Err(e) = explain_script_in(sql, dir, &[]) {
        return refused_plan(e);
    }
    let small = match serde_json::from_str::<serde_json::Value>(json) {
        Ok(doc) => {
            let tables = guard::plan_options(&doc);
            guard::small_tables(tables.iter(), tables.len().saturating_sub(1))
        }
        Err(_) => false,
    };
    if !small || !guard::paths_safe(json) {
        return Outcome::CheckedOnly;
    }
    run_and_write(sql, dir, &[])
}

/// `lab plot DIR`.
fn results(dir: &Path) -> Outcome {
    match report::render(dir) {
        Ok(_) => Outcome::Ran,
        Err(e) => refused_campaign(e),
    }
}

/// Whether an error message says where: a line, a file position, a JSON
/// path, a flag or a key (the issue counts those that do not).
pub fn has_place(message: &str) -> bool {
    let bytes = message.as_bytes();
    let file_position = bytes
        .windows(3)
        .any(|w| w[0] == b':' && w[1].is_ascii_digit())
        && message.contains(':');
    message.contains("line ")
        || message.contains("nodes[")
        || message.contains("edges[")
        || message.contains("sink.")
        || message.contains("--set")
        || message.contains("--try")
        || message.contains("option '")
        || message.contains("key '")
        || file_position
}
