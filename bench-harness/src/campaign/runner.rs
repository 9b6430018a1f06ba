//! `lab campaign SPEC [--quick] [--resume] [--out DIR]`.
//!
//! 1. Checks the spec, the script and every point × variant (each is
//!    planned, as `lab explain` would) before anything runs, and locks the
//!    report directory ([`super::lock`]): a second campaign there is
//!    refused with the process that holds it.
//! 2. Runs every variant once on the first point, untimed (a warm-up), then,
//!    for each point and each repeat, every variant in turn (v1, v2, v1,
//!    v2, ...), so the variants of a comparison share the machine's state
//!    of the moment; appends a row per sink to `results.csv.partial`.
//! 3. Renames the partial file to `results.csv`, then draws the charts and
//!    `index.md` (written last) from it ([`super::report`]).
//!
//! Nothing the lab wrote is lost to a kill at any moment, and nothing is
//! deleted: every rewrite goes through a temporary file and a rename, so
//! the partial file or the complete one is always there. `--resume` keeps
//! the runs already in `results.csv.partial` (those with a row for every
//! sink) and runs only the others; when `results.csv` holds every run, it
//! runs nothing and only draws the charts if their step was cut short.
//!
//! A variant runs on its `engine` (default: `--engine`), the lab's or a
//! Flink cluster's ([`super::dispatch`]).
//!
//! Without `--resume`, a finished run already in the report directory is
//! moved to `history/` first, and so is an unfinished one
//! ([`super::history`]). `--baseline NAME` compares the new run with a
//! saved baseline and `--save-baseline NAME` saves it as one
//! ([`super::baseline`]). The kill points of the crash tests are in
//! [`super::crash_point`].

use super::args::CampaignArgs;
use super::baseline;
use super::crash_point;
use super::dispatch::{Engines, Measured};
use super::history;
use super::lock::ReportLock;
use super::machine::{self, Machine};
use super::report::{self, Rendered};
use super::report_data::{RunInfo, INDEX, RUN_INFO, SPEC_COPY};
use super::results::{write_table, RowWriter, Table, PARTIAL, RESULTS};
use super::spec::{Plan, Point, ScriptTemplate, Spec, Variant, LEADING_COLUMNS};
use super::CampaignError;
use crate::output::{self, errln, outln};
use indicatif::{ProgressBar, ProgressStyle};
use optimizer::session::explain_script;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One run: a point, a variant, a repeat (1-based).
type RunKey = (usize, String, u32);

/// Everything `lab campaign` checks before its first run (the spec's
/// script, and every point of both modes planned under every variant).
pub fn check_spec(spec: &Spec, quick: bool) -> Result<(), CampaignError> {
    let template = spec.load_script()?;
    preflight(spec, &template, &spec.plan(quick), quick).map(|_| ())
}

/// Runs the campaign and returns its report directory.
pub fn run_campaign(args: &CampaignArgs) -> Result<PathBuf, CampaignError> {
    let spec = Spec::load(&args.spec)?;
    let template = spec.load_script()?;
    let plan = spec.plan(args.quick);
    let scripts = preflight(&spec, &template, &plan, args.quick)?;

    let out = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("reports").join(&spec.name));
    if let Some(name) = &args.save_baseline {
        baseline::check_name("--save-baseline", name)?;
    }
    if let Some(name) = &args.baseline {
        baseline::check_name("--baseline", name)?;
        if !out.exists() {
            // Refused before the report directory is made.
            baseline::require(&out, name)?;
        }
    }
    if !args.resume {
        // (With --resume there may be nothing left to run on Flink.)
        super::dispatch::check_flink_rest(&spec, args)?;
    }
    std::fs::create_dir_all(&out)
        .map_err(|e| CampaignError::execution(format!("cannot create {}: {e}", out.display())))?;
    // From here on this process is the only writer of `out`.
    let lock = ReportLock::acquire(&out, &machine::command_line())?;
    if let Some(owner) = &lock.taken_over_from {
        errln!(
            "lab campaign: took over {} from {owner}, which ended without releasing it",
            ReportLock::path(&out).display()
        );
    }
    crate::files::sweep_temporaries(&out);
    if let Some(name) = &args.baseline {
        baseline::require(&out, name)?;
    }
    let header = spec.columns();
    let partial = out.join(PARTIAL);
    let results = out.join(RESULTS);

    // What is done already.
    let mut kept: Vec<Vec<String>> = Vec::new();
    if args.resume {
        if history::interrupted_move(&out) {
            // A run without --resume started moving the finished run to
            // history/ and was killed: finish what it began.
            if let Some(kept_in) = history::keep_previous(&out)? {
                outln!(
                    "lab campaign: the previous run's results are kept in {}",
                    kept_in.display()
                )?;
            }
        }
        if results.exists() {
            finished_rows(&spec, &plan, &scripts, &header, &results)?;
            return resume_finished(args, &out, &results, &partial);
        }
        if partial.exists() {
            kept = resumable_rows(&spec, &plan, &scripts, &header, &partial)?;
        } else {
            errln!(
                "lab campaign: nothing to resume (no {} or {} in {}); running everything",
                PARTIAL,
                RESULTS,
                out.display()
            );
        }
    }
    let done: std::collections::HashSet<RunKey> = kept.iter().map(|r| run_key(r)).collect();
    let variants = &spec.variants;
    let total = plan.points.len() * variants.len() * plan.repeats as usize;
    let todo = total - done.len();
    outln!(
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
    )?;
    if !args.resume {
        if let Some(kept_in) = history::keep_previous(&out)? {
            outln!(
                "lab campaign: the previous run's results are kept in {}",
                kept_in.display()
            )?;
        }
        if let Some(kept_in) = history::keep_unfinished(&out)? {
            outln!(
                "lab campaign: the runs of an unfinished earlier run ({PARTIAL}) are kept in {}; \
                 use --resume to continue a run instead of starting over",
                kept_in.display()
            )?;
        }
    }
    write_file(&out.join(SPEC_COPY), &spec.text)?;
    let info = RunInfo {
        command: machine::command_line(),
        quick: args.quick,
        started: Some(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
        baseline: args.baseline.clone(),
    };
    write_file(
        &out.join(RUN_INFO),
        &toml::to_string(&info).map_err(|e| CampaignError::execution(e.to_string()))?,
    )?;
    let mut writer = RowWriter::replace(&partial, &header, &kept)?;

    let machine = Machine::detect();
    let revision = machine::git_revision();
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
    let mut runs_done = 0;
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
                    writer.write(&row).inspect_err(|_| bar.abandon())?;
                }
                bar.inc(1);
                runs_done += 1;
                crash_point::run_done(runs_done);
            }
        }
    }
    bar.finish_and_clear();
    drop(writer);
    // A cluster the campaign started stops before the report is drawn.
    drop(engines);

    finalize(&spec, &header, &partial, &results)?;
    crash_point::reached("results");
    let rendered = report::render(&out)?;
    print_finished(&out, &results, &rendered)?;
    if let Some(name) = &args.save_baseline {
        outln!("{}", baseline::save(&out, name)?)?;
    }
    drop(lock);
    Ok(out)
}

/// What a finished campaign prints: where its files are, the summary per
/// point, the change against a baseline, warnings.
fn print_finished(out: &Path, results: &Path, rendered: &Rendered) -> Result<(), CampaignError> {
    for w in &rendered.warnings {
        errln!("warning: {w}");
    }
    outln!(
        "wrote {} ({} rows), {} chart(s) as PNG and SVG, {}",
        results.display(),
        rendered.rows,
        rendered.charts,
        out.join(INDEX).display()
    )?;
    output::out(&format!("\n{}", rendered.summary))?;
    if let Some(changes) = &rendered.changes {
        output::out(&format!("\n{changes}"))?;
    }
    Ok(())
}

/// `--resume` of a campaign whose runs are all in `results.csv`: nothing
/// runs again. Charts and `index.md` are drawn when their step was cut
/// short (no `index.md`, which is written last), the spec's text changed
/// (a chart added) or a different `--baseline` is asked for; otherwise
/// nothing changes.
fn resume_finished(
    args: &CampaignArgs,
    out: &Path,
    results: &Path,
    partial: &Path,
) -> Result<PathBuf, CampaignError> {
    if partial.exists() {
        errln!(
            "warning: {} is left alone: {} holds every run of this campaign",
            partial.display(),
            results.display()
        );
    }
    let info_path = out.join(RUN_INFO);
    let mut info: Option<RunInfo> = std::fs::read_to_string(&info_path)
        .ok()
        .and_then(|t| toml::from_str(&t).ok());
    let baseline_changed = args.baseline.is_some()
        && info.as_ref().and_then(|i| i.baseline.as_ref()) != args.baseline.as_ref();
    if baseline_changed {
        let info = info.get_or_insert_with(|| RunInfo {
            command: machine::command_line(),
            quick: args.quick,
            started: None,
            baseline: None,
        });
        info.baseline = args.baseline.clone();
        write_file(
            &info_path,
            &toml::to_string(&*info).map_err(|e| CampaignError::execution(e.to_string()))?,
        )?;
    }
    // The spec matched the results (same points, variants and columns);
    // a spec.toml that differs (charts changed, or taken by a move to
    // history/ cut short) is replaced and the report redrawn.
    let spec_copy = out.join(SPEC_COPY);
    let spec = Spec::load(&args.spec)?;
    let spec_changed = std::fs::read_to_string(&spec_copy).ok().as_deref() != Some(&spec.text);
    if spec_changed {
        write_file(&spec_copy, &spec.text)?;
    }
    if out.join(INDEX).exists() && !baseline_changed && !spec_changed {
        outln!(
            "lab campaign: nothing to resume: {} holds every run of this campaign and its \
             report ({}) is complete",
            results.display(),
            out.join(INDEX).display()
        )?;
    } else {
        outln!(
            "lab campaign: every run is in {}; drawing the charts and index.md",
            results.display()
        )?;
        let rendered = report::render(out)?;
        print_finished(out, results, &rendered)?;
    }
    if let Some(name) = &args.save_baseline {
        outln!("{}", baseline::save(out, name)?)?;
    }
    Ok(out.to_path_buf())
}

/// Renders the script of every point, checks it parses and has an INSERT,
/// opens its generated tables (where sweep values land) and plans it under
/// every variant, and checks the charts' sinks. Returns each point's
/// script and sinks. The points of the other mode (`--quick` or not) are
/// checked too: a spec is checked whole before anything runs. An error
/// points at the spec line of the sweep value or the variant it comes
/// from, when one is to blame ([`blame`]).
fn preflight(
    spec: &Spec,
    template: &ScriptTemplate,
    plan: &Plan,
    quick: bool,
) -> Result<Vec<(String, Vec<String>)>, CampaignError> {
    let mut out = Vec::new();
    for point in &plan.points {
        out.push(check_point(spec, template, point)?);
    }
    for point in spec.plan(!quick).points {
        if !plan.points.iter().any(|p| p.values == point.values) {
            check_point(spec, template, &point)?;
        }
    }
    Ok(out)
}

/// The checks of [`preflight`] for one point.
fn check_point(
    spec: &Spec,
    template: &ScriptTemplate,
    point: &Point,
) -> Result<(String, Vec<String>), CampaignError> {
    let sql = template.render(spec, point);
    let sinks = template
        .inspect(&sql)
        .map_err(|e| blame(spec, template, point, None, e))?;
    if sinks.is_empty() {
        return Err(CampaignError::input(at_point(
            spec,
            template,
            point,
            "the script has no INSERT: a campaign measures INSERT statements",
        )));
    }
    for variant in &spec.variants {
        let mut overrides = spec.overrides(variant, point);
        if super::dispatch::needs_checkpoint_dir(&overrides) {
            let dir = optimizer::config::CHECKPOINTING_DIR;
            overrides.push((dir.to_string(), "(per run)".to_string()));
        }
        explain_script(&sql, &overrides)
            .map_err(|e| blame(spec, template, point, Some(variant), e.to_string()))?;
    }
    spec.check_variant_sinks(&sinks)?;
    spec.check_chart_sinks(&sinks)?;
    Ok((sql, sinks))
}

/// `what`, said of the script at `point`.
fn at_point(spec: &Spec, template: &ScriptTemplate, point: &Point, what: &str) -> String {
    let label = spec.point_label(point);
    if label.is_empty() {
        format!("{}: {what}", template.path.display())
    } else {
        format!("{} with {label}: {what}", template.path.display())
    }
}

/// The error of a point (and variant) that failed its checks with
/// `message`, placed at the spec line to blame: the sweep value without
/// which the point passes (another value of that dimension makes it
/// pass), else the variant without which it passes, else the script.
/// Runs only on failure; each try is a parse and a plan.
fn blame(
    spec: &Spec,
    template: &ScriptTemplate,
    point: &Point,
    variant: Option<&Variant>,
    message: String,
) -> CampaignError {
    let passes = |p: &Point, v: Option<&Variant>| {
        let sql = template.render(spec, p);
        template.inspect(&sql).is_ok()
            && v.is_none_or(|v| explain_script(&sql, &spec.overrides(v, p)).is_ok())
    };
    let context = at_point(spec, template, point, "")
        .trim_end_matches(": ")
        .to_string();
    for (d, dim) in spec.dims.iter().enumerate() {
        let value = &point.values[d];
        let mut other = point.clone();
        for alt in spec.all_values(d).into_iter().filter(|a| a != value) {
            other.values[d] = alt;
            if passes(&other, variant) {
                return spec.value_error(
                    d,
                    value,
                    format!(
                        "sweep value {} = {value}: {message} (in {context})",
                        dim.name
                    ),
                );
            }
        }
    }
    if let Some(v) = variant {
        if spec
            .variants
            .iter()
            .any(|o| o.name != v.name && passes(point, Some(o)))
        {
            return spec
                .variant_error(v, format!("variant '{}': {message} (in {context})", v.name));
        }
        return CampaignError::input(at_point(
            spec,
            template,
            point,
            &format!("variant '{}': {message}", v.name),
        ));
    }
    CampaignError::input(at_point(spec, template, point, &message))
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
    complete_runs(spec, plan, scripts, header, partial, table)
}

/// Checks that `results.csv` holds every run of this campaign (`--resume`
/// of a finished campaign runs nothing).
fn finished_rows(
    spec: &Spec,
    plan: &Plan,
    scripts: &[(String, Vec<String>)],
    header: &[String],
    results: &Path,
) -> Result<(), CampaignError> {
    let table = Table::read(results)?;
    let rows = complete_runs(spec, plan, scripts, header, results, table)?;
    let runs: std::collections::HashSet<RunKey> = rows.iter().map(|r| run_key(r)).collect();
    let total = plan.points.len() * spec.variants.len() * plan.repeats as usize;
    if runs.len() != total {
        return Err(CampaignError::input(format!(
            "cannot resume: {} holds a finished run with {} of this campaign's {total} runs \
             (was the spec changed?); run without --resume: the finished run is kept under \
             history/ and every run is made again",
            results.display(),
            runs.len()
        )));
    }
    Ok(())
}

/// The rows of `table` (read from `path`) that belong to runs with a row
/// for every sink; fails when a row is not one of this campaign's runs.
fn complete_runs(
    spec: &Spec,
    plan: &Plan,
    scripts: &[(String, Vec<String>)],
    header: &[String],
    path: &Path,
    table: Table,
) -> Result<Vec<Vec<String>>, CampaignError> {
    let mismatch = |why: String| {
        CampaignError::input(format!(
            "cannot resume from {}: {why}; it was written by another spec, mode (--quick) or \
             lab version; run without --resume to start over (its runs are kept under history/)",
            path.display()
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
/// `results.csv`. Each step is a rename: a kill leaves the partial file or
/// the complete one.
fn finalize(
    spec: &Spec,
    header: &[String],
    partial: &Path,
    results: &Path,
) -> Result<(), CampaignError> {
    let table = Table::read(partial)?;
    if table.header != header {
        return Err(CampaignError::execution(format!(
            "{} changed while the campaign ran (its columns differ)",
            partial.display()
        )));
    }
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
        write_table(partial, &table.header, &rows)?;
    }
    crash_point::reached("finalize");
    std::fs::rename(partial, results).map_err(|e| {
        CampaignError::execution(format!(
            "cannot rename {} to {}: {e}",
            partial.display(),
            results.display()
        ))
    })
}

fn write_file(path: &Path, text: &str) -> Result<(), CampaignError> {
    crate::files::write_atomic(path, text.as_bytes()).map_err(CampaignError::execution)
}
