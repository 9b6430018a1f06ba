//! Running a script: statements in order, configuration, planning, jobs.
//!
//! `SET` statements change the configuration for the statements after
//! them; overrides given by the caller (`lab run --set`) are applied last,
//! so they win over the script. Each `INSERT` runs as its own job, in order.

use crate::catalog_view::CatalogView;
use crate::config::Config;
use crate::error::PlanError;
use crate::logical::{InsertStatement, Statement};
use crate::physical::explain::explain;
use crate::physical::job::{backend_for, build_job, ConnectorSources, SourceProvider};
use crate::physical::{plan_insert, PhysicalPlan};
use crate::sql::{parse_script, Script};
use operators::changelog::Change;
use operators::exec::JobReport;
use std::path::Path;

/// A failure while running a script: bad input (exit code 2) or an
/// execution failure (exit code 1).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Input(#[from] PlanError),
    /// A source could not read its input: bad input too.
    #[error("{0}")]
    Source(String),
    #[error("execution failed: {0}")]
    Execution(String),
}

impl RunError {
    pub fn exit_code(&self) -> i32 {
        match self {
            RunError::Input(_) | RunError::Source(_) => 2,
            RunError::Execution(_) => 1,
        }
    }
}

/// What the sink keeps of a run.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    /// Every row the sink receives, in order.
    pub keep_changelog: bool,
    /// The materialised result table.
    pub materialize: bool,
}

impl RunOptions {
    /// Keeps both: what tests compare.
    pub fn keep_all() -> RunOptions {
        RunOptions {
            keep_changelog: true,
            materialize: true,
        }
    }
}

/// What one `INSERT` did.
pub struct InsertOutcome {
    pub sink: String,
    pub plan: PhysicalPlan,
    pub config: Config,
    pub report: JobReport,
    /// Every row the sink received (empty unless asked for).
    pub changelog: Vec<Change>,
}

/// The configuration in force for each statement of `script`.
pub fn configs_per_insert(
    script: &Script,
    overrides: &[(String, String)],
) -> Result<Vec<(InsertStatement, Config, bool)>, PlanError> {
    let mut base = Config::default();
    let mut out = Vec::new();
    let apply_overrides = |c: &Config| -> Result<Config, PlanError> {
        let mut c = c.clone();
        for (k, v) in overrides {
            c.set(k, v)?;
        }
        Ok(c)
    };
    // Overrides are checked even for a script without INSERT.
    apply_overrides(&base)?;
    for s in &script.statements {
        match s {
            Statement::Set { key, value } => base.set(key, value)?,
            Statement::Insert(i) => out.push((i.clone(), apply_overrides(&base)?, false)),
            Statement::Explain(i) => out.push((i.clone(), apply_overrides(&base)?, true)),
            Statement::CreateTable(_) => {}
        }
    }
    Ok(out)
}

/// Plans every INSERT of the script and returns EXPLAIN text for each.
pub fn explain_script(sql: &str, overrides: &[(String, String)]) -> Result<String, PlanError> {
    let script = parse_script(sql)?;
    let mut out = String::new();
    for (insert, config, _) in configs_per_insert(&script, overrides)? {
        let plan = plan_insert(&insert, &script.catalog, &config)?;
        out.push_str(&explain(&plan));
    }
    Ok(out)
}

/// Runs every INSERT of a script read from `base_dir` (for relative paths).
pub fn run_script(
    sql: &str,
    base_dir: &Path,
    overrides: &[(String, String)],
    options: RunOptions,
    progress: &mut dyn FnMut(&str, u64),
) -> Result<Vec<InsertOutcome>, RunError> {
    let script = parse_script(sql)?;
    let sources = ConnectorSources {
        base_dir: base_dir.to_path_buf(),
    };
    run_parsed(
        &script,
        &script.catalog,
        &sources,
        overrides,
        options,
        progress,
    )
}

/// Runs a parsed script with the given table readers (tests pass in-memory ones).
pub fn run_parsed(
    script: &Script,
    catalog: &dyn CatalogView,
    sources: &dyn SourceProvider,
    overrides: &[(String, String)],
    options: RunOptions,
    progress: &mut dyn FnMut(&str, u64),
) -> Result<Vec<InsertOutcome>, RunError> {
    let mut outcomes = Vec::new();
    for (insert, config, explain_only) in configs_per_insert(script, overrides)? {
        let plan = plan_insert(&insert, catalog, &config)?;
        if explain_only {
            continue;
        }
        let backend = backend_for(&config)?;
        let mut job = build_job(
            &plan,
            &config,
            sources,
            &backend,
            options.keep_changelog,
            options.materialize,
        )?;
        let sink = insert.sink.clone();
        let report = job.run(&mut |n| progress(&sink, n)).map_err(|e| match e {
            operators::operator::OpError::Source(m) => RunError::Source(m),
            e => RunError::Execution(e.to_string()),
        })?;
        let changelog = job.sink().changelog().to_vec();
        outcomes.push(InsertOutcome {
            sink,
            plan,
            config,
            report,
            changelog,
        });
    }
    Ok(outcomes)
}
