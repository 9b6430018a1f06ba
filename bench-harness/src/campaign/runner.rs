//! `lab campaign SPEC [--quick] [--resume] [--out DIR]`.
//!
//! 1. Checks the spec, the script and every point × variant (each is
//!    planned, as `lab explain` would) before anything runs.
//! 2. Runs every variant once on the first point, untimed (a warm-up), then,
//!    for each point and each repeat, every variant in turn (v1, v2, v1,
//!    v2, ...), so the variants of a comparison share the machine's state
//!    of the moment; appends a row per sink to `results.csv.partial`.
//! 3. Renames the partial file to `results.csv`, then draws the charts and
//!    `index.md` from it ([`super::report`]).
//!
//! `--resume` keeps the runs already in `results.csv.partial` (those with
//! a row for every sink) and runs only the others.
//!
//! A variant runs on its `engine` (default: `--engine`), the lab's or a
//! Flink cluster's ([`super::dispatch`]).
//!
//! A finished run already in the report directory is moved to `history/`
//! first ([`super::history`]): a re-run never replaces earlier results.
//! `--baseline NAME` compares the new run with a saved baseline and
//! `--save-baseline NAME` saves it as one ([`super::baseline`]).

use super::baseline;
use super::dispatch::{Engines, Measured};
use super::history;
use super::machine::{self, Machine};
use super::report::{self, RunInfo};
use super::results::{RowWriter, Table, PARTIAL, RESULTS};
use super::spec::{Plan, Point, ScriptTemplate, Spec, Variant, LEADING_COLUMNS};
use super::CampaignError;
use crate::flink::Engine;
use indicatif::{ProgressBar, ProgressStyle};
use optimizer::session::explain_script;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub struct CampaignArgs {
    pub spec: PathBuf,
    pub quick: bool,
    pub resume: bool,
    /// Default: `reports/<name>/` under the current directory.
    pub out: Option<PathBuf>,
    pub quiet: bool,
    /// Saves the finished run as this baseline.
    pub save_baseline: Option<String>,
    /// Compares the run with this saved baseline.
    pub baseline: Option<String>,
    /// The engine of variants that name none.
    pub engine: Engine,
    /// The Flink cluster's REST address (default: the local cluster).
    pub flink_rest: Option<String>,
    /// Configuration for every Flink run (keys the lab does not model).
    pub flink_sets: Vec<(String, String)>,
}

/// One run: a point, a variant, a repeat (1-based).
type RunKey = (usize, String, u32);

/// Runs the campaign and returns its report directory.
pub fn run_campaign(args: &CampaignArgs) -> Result<PathBuf, CampaignError> {
    let spec = Spec::load(&args.spec)?;
    let template = spec.load_script()?;
    let plan = spec.plan(args.quick);
    let scripts = preflight(&spec, &template, &plan)?;

    let out = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("reports").join(&spec.name));
    if let Some(name) = &args.save_baseline {
        baseline::check_name("--save-baseline", name)?;
    }
    if let Some(name) = &args.baseline {
        baseline::require(&out, name)?;
    }
    std::fs::create_dir_all(&out)
        .map_err(|e| CampaignError::execution(format!("cannot create {}: {e}", out.display())))?;
    let header = spec.columns();
    let partial = out.join(PARTIAL);
    let results = out.join(RESULTS);

    // What is done already.
    let mut kept: Vec<Vec<String>> = Vec::new();
    if args.resume {
        if partial.exists() {
            kept = resumable_rows(&spec, &plan, &scripts, &header, &partial)?;
        } else {
            eprintln!(
                "lab campaign: nothing to resume ({} does not exist); running everything",
                partial.display()
            );
        }
    } else if partial.exists() {
        eprintln!(
            "lab campaign: discarding {} of an earlier run (use --resume to continue it)",
            partial.display()
        );
    }
    let done: std::collections::HashSet<RunKey> = kept.iter().map(|r| run_key(r)).collect();
    if let Some(kept_in) = history::keep_previous(&out)? {
        println!(
            "lab campaign: the previous run's results are kept in {}",
            kept_in.display()
        );
    }
    write_file(&out.join(report::SPEC_COPY), &spec.text)?;
    let info = RunInfo {
        command: machine::command_line(),
        quick: args.quick,
        started: Some(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
        baseline: args.baseline.clone(),
    };
    write_file(
        &out.join(report::RUN_INFO),
        &toml::to_string(&info).map_err(|e| CampaignError::execution(e.to_string()))?,
    )?;
    let mut writer = RowWriter::create(&partial, &header, &kept)?;

    let machine = Machine::detect();
    let revision = machine::git_revision();
    let variants = &spec.variants;
    let total = plan.points.len() * variants.len() * plan.repeats as usize;
    let todo = total - done.len();
    println!(
        "campaign {}: {} point(s) × {} variant(s) × {} repeat(s) = {total} runs{}; report in {}",
        spec.name,
        plan.points.len(),
        variants.len(),
        plan.repeats,
        if done.is_empty() {
            String::new()
        } else {
            format!(" ({} done, {todo} to run)", done.len())
        },
        out.display()
    );
    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::new(todo as u64);
        b.set_style(
            ProgressStyle::with_template(
                "{bar:30.cyan/blue} {pos}/{len} runs, {elapsed} elapsed, ETA {eta} | {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b
    };

    let mut engines = Engines::open(&spec, args, todo > 0, &bar)?;
    // One untimed run per variant on the first point: a process's first
    // runs pay for starting thread pools and touching fresh memory, which
    // would land on whichever variant happens to run first.
    if let (Some(point), true) = (plan.points.first(), todo > 0) {
        for variant in variants {
            bar.set_message(format!("warm-up run of variant {}", variant.name));
            engines
                .run(&spec, &template, &scripts[0].0, variant, point)
                .map_err(|e| {
                    bar.abandon();
                    e.within(&run_context(&spec, point, variant, 0))
                })?;
        }
    }

    let n_points = plan.points.len();
    for (pi, point) in plan.points.iter().enumerate() {
        let sql = &scripts[pi].0;
        for repeat in 1..=plan.repeats {
            for variant in variants {
                if done.contains(&(point.id, variant.name.clone(), repeat)) {
                    continue;
                }
                bar.set_message(format!(
                    "{pi}/{n_points} points done; point {} ({}), variant {}, repeat {repeat}/{}",
                    point.id,
                    spec.point_label(point),
                    variant.name,
                    plan.repeats
                ));
                let measured = engines
                    .run(&spec, &template, sql, variant, point)
                    .map_err(|e| {
                        bar.abandon();
                        e.within(&run_context(&spec, point, variant, repeat))
                    })?;
                for m in &measured {
                    let row = result_row(&spec, point, variant, repeat, m, &machine, &revision);
                    writer.write(&row)?;
                }
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();
    drop(writer);
    // A cluster the campaign started stops before the report is drawn.
    drop(engines);

    finalize(&spec, &partial, &results)?;
    let rendered = report::render(&out)?;
    println!(
        "wrote {} ({} rows), {} chart(s) as PNG and SVG, {}",
        results.display(),
        rendered.rows,
        rendered.charts,
        out.join(report::INDEX).display()
    );
    print!("\n{}", rendered.summary);
    if let Some(changes) = &rendered.changes {
        print!("\n{changes}");
    }
    for w in &rendered.warnings {
        eprintln!("warning: {w}");
    }
    if let Some(name) = &args.save_baseline {
        println!("{}", baseline::save(&out, name)?);
    }
    Ok(out)
}

/// Renders the script of every point, checks it parses and has an INSERT,
/// plans it under every variant, and checks the charts' sinks. Returns
/// each point's script and sinks.
fn preflight(
    spec: &Spec,
    template: &ScriptTemplate,
    plan: &Plan,
) -> Result<Vec<(String, Vec<String>)>, CampaignError> {
    let mut out = Vec::new();
    for point in &plan.points {
        let sql = template.render(spec, point);
        let at = |what: String| {
            let label = spec.point_label(point);
            if label.is_empty() {
                format!("{}: {what}", template.path.display())
            } else {
                format!("{} with {label}: {what}", template.path.display())
            }
        };
        let sinks = template
            .inspect(&sql)
            .map_err(|e| CampaignError::input(at(e)))?;
        if sinks.is_empty() {
            return Err(CampaignError::input(at(
                "the script has no INSERT: a campaign measures INSERT statements".to_string(),
            )));
        }
        for variant in &spec.variants {
            explain_script(&sql, &spec.overrides(variant, point)).map_err(|e| {
                CampaignError::input(at(format!("variant '{}': {e}", variant.name)))
            })?;
        }
        spec.check_variant_sinks(&sinks)?;
        spec.check_chart_sinks(&sinks)?;
        out.push((sql, sinks));
    }
    Ok(out)
}

/// Where a run failed; repeat 0 is the warm-up run.
fn run_context(spec: &Spec, point: &Point, variant: &Variant, repeat: u32) -> String {
    let run = if repeat == 0 {
        "warm-up run".to_string()
    } else {
        format!("repeat {repeat}")
    };
    format!(
        "point {} ({}), variant '{}', {run}",
        point.id,
        spec.point_label(point),
        variant.name
    )
}

fn run_key(row: &[String]) -> RunKey {
    (
        row[1].parse().unwrap_or(0),
        row[2].clone(),
        row[3].parse().unwrap_or(0),
    )
}

/// The rows of `results.csv.partial` that `--resume` keeps: those of runs
/// with a row for every sink. Fails when the file is from another spec or
/// another mode (columns or points differ).
fn resumable_rows(
    spec: &Spec,
    plan: &Plan,
    scripts: &[(String, Vec<String>)],
    header: &[String],
    partial: &Path,
) -> Result<Vec<Vec<String>>, CampaignError> {
    let Some(table) = Table::read_partial(partial)? else {
        return Ok(Vec::new());
    };
    let mismatch = |why: String| {
        CampaignError::input(format!(
            "cannot resume from {}: {why}; it was written by another spec, mode (--quick) or \
             lab version; run without --resume to start over",
            partial.display()
        ))
    };
    if table.header != header {
        return Err(mismatch(
            "its columns differ from this campaign's".to_string(),
        ));
    }
    let n_dims = spec.dims.len();
    let mut by_run: HashMap<RunKey, Vec<Vec<String>>> = HashMap::new();
    let mut order: Vec<RunKey> = Vec::new();
    for row in table.rows {
        let key = run_key(&row);
        let (pid, variant, repeat) = &key;
        let point = plan
            .points
            .iter()
            .find(|p| p.id == *pid)
            .ok_or_else(|| mismatch(format!("point {pid} is not a point of this campaign")))?;
        if row[0] != spec.name
            || row[LEADING_COLUMNS.len()..LEADING_COLUMNS.len() + n_dims] != point.values[..]
            || spec.variant_index(variant).is_none()
            || *repeat < 1
            || *repeat > plan.repeats
        {
            return Err(mismatch(format!(
                "its row for point {pid}, variant '{variant}', repeat {repeat} does not match \
                 this campaign's points, variants and repeats"
            )));
        }
        if !by_run.contains_key(&key) {
            order.push(key.clone());
        }
        by_run.entry(key).or_default().push(row);
    }
    let mut kept = Vec::new();
    for key in order {
        let rows = &by_run[&key];
        let pi = plan.points.iter().position(|p| p.id == key.0).unwrap_or(0);
        // A variant with `sinks` runs only those.
        let only = spec
            .variant_index(&key.1)
            .and_then(|v| spec.variants[v].sinks.as_ref());
        let sinks: Vec<&String> = scripts[pi]
            .1
            .iter()
            .filter(|s| only.is_none_or(|o| o.contains(s)))
            .collect();
        let row_sinks: Vec<&String> = rows.iter().map(|r| &r[4]).collect();
        if row_sinks == sinks {
            kept.extend(rows.iter().cloned());
        }
    }
    Ok(kept)
}

fn result_row(
    spec: &Spec,
    point: &Point,
    variant: &Variant,
    repeat: u32,
    m: &Measured,
    machine: &Machine,
    revision: &str,
) -> Vec<String> {
    let mut row = vec![
        spec.name.clone(),
        point.id.to_string(),
        variant.name.clone(),
        repeat.to_string(),
        m.sink.clone(),
    ];
    row.extend(point.values.iter().cloned());
    row.extend(m.metrics.iter().cloned());
    row.extend(
        optimizer::config::keys()
            .iter()
            .map(|k| m.config.get(k.name).unwrap_or_default()),
    );
    row.push(revision.to_string());
    row.push(machine.cores.to_string());
    row.push(machine.model.clone());
    row.push(m.engine.name().to_string());
    row
}

/// Puts the rows in run order (point, repeat, variant; a resumed campaign
/// appended its runs after the kept ones) and renames the partial file to
/// `results.csv`.
fn finalize(spec: &Spec, partial: &Path, results: &Path) -> Result<(), CampaignError> {
    let table = Table::read(partial)?;
    let sort_key = |r: &Vec<String>| {
        let (p, v, rep) = run_key(r);
        (p, rep, spec.variant_index(&v).unwrap_or(usize::MAX))
    };
    let sorted = table
        .rows
        .windows(2)
        .all(|w| sort_key(&w[0]) <= sort_key(&w[1]));
    if !sorted {
        let mut rows = table.rows.clone();
        rows.sort_by_key(sort_key);
        let tmp = partial.with_extension("partial.tmp");
        drop(RowWriter::create(&tmp, &table.header, &rows)?);
        std::fs::rename(&tmp, partial).map_err(|e| {
            CampaignError::execution(format!("cannot rename {}: {e}", tmp.display()))
        })?;
    }
    std::fs::rename(partial, results).map_err(|e| {
        CampaignError::execution(format!(
            "cannot rename {} to {}: {e}",
            partial.display(),
            results.display()
        ))
    })
}

fn write_file(path: &Path, text: &str) -> Result<(), CampaignError> {
    std::fs::write(path, text)
        .map_err(|e| CampaignError::execution(format!("cannot write {}: {e}", path.display())))
}
