//! Running a script: statements in order, configuration, planning, jobs.
//!
//! `SET` statements change the configuration for the statements after
//! them; overrides given by the caller (`lab run --set`) are applied last,
//! so they win over the script. Each `INSERT` runs as its own job, in order.

use crate::catalog_view::CatalogView;
use crate::config::Config;
use crate::error::PlanError;
use crate::logical::{InsertStatement, Statement};
use crate::physical::compiled_plan;
use crate::physical::explain::explain;
use crate::physical::job::{backend_for, build_job, ConnectorSources, SourceProvider};
use crate::physical::{plan_insert, PhysicalPlan};
use crate::sql::{parse_script, Script};
use operators::changelog::Change;
use operators::exec::JobReport;
use operators::operator::OpError;
use std::path::Path;

/// A failure while running a script: bad input (exit code 2) or a
/// failure of execution (IO, RocksDB, a full disk: exit code 3).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Input(#[from] PlanError),
    /// Bad input the job met while running (a malformed row, a record an
    /// operator cannot take).
    #[error("{0}")]
    BadInput(OpError),
    #[error("execution failed: {0}")]
    Execution(String),
}

impl RunError {
    pub fn exit_code(&self) -> i32 {
        match self {
            RunError::Input(_) | RunError::BadInput(_) => 2,
            RunError::Execution(_) => 3,
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

/// What one statement of a script asks for.
#[derive(Clone, Debug)]
pub enum Action {
    Run(InsertStatement),
    Explain(InsertStatement),
    /// Write the plan of the INSERT to a file.
    Compile {
        path: String,
        if_not_exists: bool,
        insert: InsertStatement,
    },
    /// Run the plan in a file (skipped if missing and `if_exists`).
    Execute {
        path: String,
        if_exists: bool,
    },
}

/// Each action of `script` with the configuration in force for it.
pub fn configs_per_insert(
    script: &Script,
    overrides: &[(String, String)],
) -> Result<Vec<(Action, Config)>, PlanError> {
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
        let action = match s {
            Statement::Set { key, value } => {
                base.set(key, value)?;
                continue;
            }
            Statement::CreateTable(_) => continue,
            Statement::Insert(i) => Action::Run(i.clone()),
            Statement::Explain(i) => Action::Explain(i.clone()),
            Statement::CompilePlan {
                path,
                if_not_exists,
                insert,
            } => Action::Compile {
                path: path.clone(),
                if_not_exists: *if_not_exists,
                insert: insert.clone(),
            },
            Statement::ExecutePlan { path, if_exists } => Action::Execute {
                path: path.clone(),
                if_exists: *if_exists,
            },
        };
        out.push((action, apply_overrides(&base)?));
    }
    Ok(out)
}

/// Reads and rebuilds a compiled plan.
pub fn load_plan(path: &Path) -> Result<PhysicalPlan, PlanError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| PlanError::plan(format!("cannot read plan {}: {e}", path.display())))?;
    compiled_plan::load(&text, &path.display().to_string())
}

/// Writes the compiled plan of `plan` to `path`; with `if_not_exists` an
/// existing file is kept (and used by a later EXECUTE PLAN), as in Flink.
pub fn write_plan(
    plan: &PhysicalPlan,
    path: &Path,
    if_not_exists: bool,
) -> Result<bool, PlanError> {
    if path.exists() {
        if if_not_exists {
            return Ok(false);
        }
        return Err(PlanError::plan(format!(
            "plan file {} already exists; write COMPILE PLAN '...' IF NOT EXISTS FOR ... to keep it",
            path.display()
        )));
    }
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, compiled_plan::compile(plan))
        .and_then(|_| std::fs::rename(&tmp, path))
        .map_err(|e| PlanError::plan(format!("cannot write plan {}: {e}", path.display())))?;
    Ok(true)
}

/// Plans the one INSERT of a script (for `lab compile-plan`).
pub fn compile_script(
    sql: &str,
    overrides: &[(String, String)],
) -> Result<PhysicalPlan, PlanError> {
    let script = parse_script(sql)?;
    let mut plans = Vec::new();
    for (action, config) in configs_per_insert(&script, overrides)? {
        if let Action::Run(i) | Action::Explain(i) | Action::Compile { insert: i, .. } = action {
            plans.push(plan_insert(&i, &script.catalog, &config)?);
        }
    }
    match plans.len() {
        1 => Ok(plans.remove(0)),
        n => Err(PlanError::plan(format!(
            "compile-plan compiles a script with exactly one INSERT; this one has {n}"
        ))),
    }
}

/// Plans every INSERT of the script and returns EXPLAIN text for each.
pub fn explain_script(sql: &str, overrides: &[(String, String)]) -> Result<String, PlanError> {
    explain_script_in(sql, Path::new("."), overrides)
}

/// [`explain_script`] with plan files resolved against `base_dir`.
pub fn explain_script_in(
    sql: &str,
    base_dir: &Path,
    overrides: &[(String, String)],
) -> Result<String, PlanError> {
    let script = parse_script(sql)?;
    let mut out = String::new();
    for (action, config) in configs_per_insert(&script, overrides)? {
        let plan = match action {
            Action::Run(i) | Action::Explain(i) | Action::Compile { insert: i, .. } => {
                plan_insert(&i, &script.catalog, &config)?
            }
            Action::Execute { path, if_exists } => {
                let p = base_dir.join(path);
                if if_exists && !p.exists() {
                    continue;
                }
                load_plan(&p)?
            }
        };
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
        base_dir,
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
    base_dir: &Path,
    overrides: &[(String, String)],
    options: RunOptions,
    progress: &mut dyn FnMut(&str, u64),
) -> Result<Vec<InsertOutcome>, RunError> {
    let mut outcomes = Vec::new();
    for (action, config) in configs_per_insert(script, overrides)? {
        let plan = match action {
            Action::Explain(_) => continue,
            Action::Compile {
                path,
                if_not_exists,
                insert,
            } => {
                let plan = plan_insert(&insert, catalog, &config)?;
                write_plan(&plan, &base_dir.join(path), if_not_exists)?;
                continue;
            }
            Action::Run(insert) => plan_insert(&insert, catalog, &config)?,
            Action::Execute { path, if_exists } => {
                let p = base_dir.join(path);
                if if_exists && !p.exists() {
                    continue;
                }
                load_plan(&p)?
            }
        };
        let backend = backend_for(&config).map_err(|e| RunError::Execution(e.to_string()))?;
        let mut job = build_job(
            &plan,
            &config,
            sources,
            &backend,
            options.keep_changelog,
            options.materialize,
        )?;
        let sink = plan.sink.table.name.clone();
        if let Some(path) = crate::physical::job::sink_file(&plan.sink.table) {
            // Insert-only (the planner refuses updates into a file sink).
            let file = datasets::resolve_path(base_dir, &path.to_string_lossy());
            let writer =
                datasets::ResultCsvWriter::headless(&file, &plan.sink.table.schema.names())
                    .map_err(|e| RunError::Execution(format!("sink '{sink}': {e}")))?;
            job.set_sink_writer(Box::new(writer));
        }
        let report = job.run(&mut |n| progress(&sink, n)).map_err(|e| {
            if e.is_bad_input() {
                RunError::BadInput(e)
            } else {
                RunError::Execution(e.to_string())
            }
        })?;
        job.finish_sink()
            .map_err(|e| RunError::Execution(format!("sink '{sink}': {e}")))?;
        let changelog = if options.keep_changelog {
            job.sink().changelog().to_vec()
        } else {
            Vec::new()
        };
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
