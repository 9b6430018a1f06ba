//! Running a script: statements in order, configuration, planning, jobs.
//!
//! `SET` statements change the configuration for the statements after
//! them; overrides given by the caller (`lab run --set`) are applied last,
//! so they win over the script. Each `INSERT` runs as its own job, in order;
//! the `INSERT`s of a statement set run as one job with one sink each, which
//! reads a source they share once (Flink's source and sub-plan reuse). An
//! `EXPLAIN` prints its plan without running anything.

use crate::catalog_view::CatalogView;
use crate::config::{Config, StateBackendKind};
use crate::error::{ErrorKind, PlanError};
use crate::logical::{ExplainDetails, ExplainTarget, InsertStatement, Statement};
use crate::physical::compiled_plan;
use crate::physical::explain::{explain, Explained};
use crate::physical::job::{build_job, ConnectorSources, Runtime, SinkKeeps, SourceProvider};
use crate::physical::node::PhysicalNode;
use crate::physical::uid::{format_uid, node_ids};
use crate::physical::{plan_insert, plan_query, PhysicalPlan};
use crate::sql::{parse_script, Script};
use datasets::OutputMode;
use operators::changelog::Change;
use operators::checkpoint::{Checkpoint, CheckpointStore};
use operators::exec::{CheckpointConfig, SavepointConfig};
use operators::exec::{Job, JobReport, SinkReport, StageId};
use operators::operator::OpError;
use operators::sink::{ChangeWriter, RowWriter};
use operators::state::{BackendKind, StateBackend};
use std::path::Path;
use std::sync::Arc;

mod restart;

/// A failure while running a script: bad input (exit code 2) or a
/// failure of execution (IO, RocksDB, a full disk: exit code 3).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Input(PlanError),
    /// Bad input the job met while running (a malformed row, a record an
    /// operator cannot take).
    #[error("{0}")]
    BadInput(OpError),
    #[error("execution failed: {0}")]
    Execution(String),
}

/// A planning error is bad input, but for one that says the machine
/// failed ([`ErrorKind::Execution`]).
impl From<PlanError> for RunError {
    fn from(e: PlanError) -> RunError {
        match e.kind {
            ErrorKind::Execution => RunError::Execution(e.message),
            _ => RunError::Input(e),
        }
    }
}

impl RunError {
    pub fn exit_code(&self) -> i32 {
        match self {
            RunError::Input(_) | RunError::BadInput(_) => 2,
            RunError::Execution(_) => 3,
        }
    }
}

/// Opens the writer a sink streams its changelog to, given the sink
/// table's name and column names.
/// The file is opened as the [`OutputMode`] says: resumable in a run that
/// takes or resumes from checkpoints.
pub type ChangelogWriterFactory<'a> =
    dyn Fn(&str, &[String], OutputMode) -> Result<Box<dyn ChangeWriter>, String> + 'a;

/// Which checkpoint a run resumes from (`lab run --from-checkpoint`).
#[derive(Clone, Copy, Debug)]
pub enum FromCheckpoint<'a> {
    /// The newest completed one in `execution.checkpointing.dir`.
    Latest,
    /// A `chk-<id>` directory or its `_metadata` file.
    Path(&'a Path),
}

/// Opens the writer the late records of an INSERT stream to, given the
/// sink table's name and the window operator's input column names.
pub type LateWriterFactory<'a> = dyn Fn(&str, &[String]) -> Result<Box<dyn RowWriter>, String> + 'a;

/// What the sink keeps of a run.
#[derive(Clone, Copy, Default)]
pub struct RunOptions<'a> {
    /// Every row the sink receives, in order, in memory
    /// ([`InsertOutcome::changelog`]).
    pub keep_changelog: bool,
    /// The materialised result table.
    pub materialize: bool,
    /// Every row the sink receives, in order, streamed to a writer this
    /// opens per INSERT; the writer comes back not completed
    /// ([`InsertOutcome::changelog_writer`]), so the caller decides when
    /// the run's files are complete.
    pub changelog_to: Option<&'a ChangelogWriterFactory<'a>>,
    /// The records the window operator drops as late, streamed to a
    /// writer this opens per INSERT with the operator's input columns
    /// (`lab run --late`); it comes back not completed
    /// ([`InsertOutcome::late_writer`]).
    pub late_to: Option<&'a LateWriterFactory<'a>>,
    /// Resume from a checkpoint: state, source positions and the committed
    /// part of every output file.
    pub from_checkpoint: Option<FromCheckpoint<'a>>,
    /// Take a savepoint during the run (and maybe stop there).
    pub take_savepoint: Option<TakeSavepoint<'a>>,
    /// Start from a savepoint (also `execution.savepoint.path`): the job
    /// may differ from the one that took it ([`Job::restore_savepoint`]).
    pub from_savepoint: Option<&'a Path>,
    /// Drop, and report, savepoint state the job does not claim
    /// (`--allow-non-restored-state`; also
    /// `execution.savepoint.ignore-unclaimed-state`).
    pub allow_non_restored_state: bool,
}

/// The savepoint a run takes (`lab run --stop-with-savepoint-after ROWS
/// --savepoint-dir DIR`, or `--savepoint-after ROWS` to go on).
#[derive(Clone, Copy, Debug)]
pub struct TakeSavepoint<'a> {
    pub dir: &'a Path,
    /// At the first barrier after this many input rows.
    pub after_rows: u64,
    /// Whether the run stops there (Flink's `stop --savepointPath`).
    pub stop: bool,
}

impl RunOptions<'_> {
    /// Keeps both in memory: what tests compare.
    pub fn keep_all() -> RunOptions<'static> {
        RunOptions {
            keep_changelog: true,
            materialize: true,
            changelog_to: None,
            late_to: None,
            from_checkpoint: None,
            take_savepoint: None,
            from_savepoint: None,
            allow_non_restored_state: false,
        }
    }
}

/// What one `INSERT` did. Its sink's figures are its own
/// ([`InsertOutcome::sink_report`], `changelog`); `report` is its job's,
/// shared by the INSERTs of a statement set (their input rows are read, and
/// counted, once).
pub struct InsertOutcome {
    pub sink: String,
    pub plan: PhysicalPlan,
    pub config: Config,
    /// The job's report.
    pub report: Arc<JobReport>,
    /// This INSERT's sink among the job's (`report.sinks`).
    pub sink_index: usize,
    /// For each of `plan.root.stage_nodes()`, its stage in `report.stages`.
    pub stages: Vec<usize>,
    /// Every row the sink received (empty unless asked for).
    pub changelog: Vec<Change>,
    /// The writer the changelog streamed to (`RunOptions::changelog_to`),
    /// to be completed by the caller.
    pub changelog_writer: Option<Box<dyn ChangeWriter>>,
    /// The writer the late records streamed to (`RunOptions::late_to`),
    /// to be completed by the caller.
    pub late_writer: Option<Box<dyn RowWriter>>,
}

impl InsertOutcome {
    /// What this INSERT's sink received.
    pub fn sink_report(&self) -> &SinkReport {
        &self.report.sinks[self.sink_index]
    }

    /// The sinks of this INSERT's job: several for a statement set.
    pub fn job_sinks(&self) -> Vec<&str> {
        self.report.sinks.iter().map(|s| s.name.as_str()).collect()
    }

    /// The reports of this INSERT's own operators, in `plan.root.stage_nodes()`
    /// order.
    pub fn plan_stages(&self) -> impl Iterator<Item = &operators::exec::StageReport> {
        self.stages.iter().map(|&i| &self.report.stages[i])
    }
}

/// What one statement of a script asks for.
#[derive(Clone, Debug)]
pub enum Action {
    /// Run the INSERTs as one job: one INSERT, or a statement set.
    Run(Vec<InsertStatement>),
    Explain {
        details: ExplainDetails,
        target: ExplainTarget,
    },
    /// Write the plan of the INSERT to a file.
    Compile {
        path: String,
        if_not_exists: bool,
        insert: InsertStatement,
    },
    /// Run the plan in a file (skipped if missing and `if_exists`).
    Execute { path: String, if_exists: bool },
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
    for (i, s) in script.statements.iter().enumerate() {
        let action = match s {
            Statement::Set { key, value } => {
                let (line, column) = script.positions.get(i).copied().unwrap_or((0, 0));
                base.set(key, value).map_err(|e| e.at(line, column))?;
                continue;
            }
            Statement::CreateTable(_) => continue,
            Statement::Insert(i) => Action::Run(vec![i.clone()]),
            Statement::StatementSet(set) => Action::Run(set.clone()),
            Statement::Explain { details, target } => Action::Explain {
                details: *details,
                target: target.clone(),
            },
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

/// Plans an INSERT; a planning error points at the statement.
fn plan_located(
    insert: &InsertStatement,
    catalog: &dyn CatalogView,
    config: &Config,
) -> Result<PhysicalPlan, PlanError> {
    plan_insert(insert, catalog, config).map_err(|e| match &insert.at {
        Some(l) => e.at(l.line, l.column),
        None => e,
    })
}

/// A connector's option error ("table 't': option ...") found when the
/// job opens its sources, placed at the `CREATE TABLE` of that table.
fn at_table_definition(script: &Script, e: PlanError) -> PlanError {
    if e.location.is_some() {
        return e;
    }
    let defined = script.statements.iter().zip(&script.positions).find(|(s, _)| {
        matches!(s, Statement::CreateTable(t) if e.message.starts_with(&format!("table '{}':", t.name)))
    });
    match defined {
        Some((_, &(line, column))) => e.at(line, column),
        None => e,
    }
}

/// Reads and rebuilds a compiled plan.
pub fn load_plan(path: &Path) -> Result<PhysicalPlan, PlanError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| PlanError::plan(format!("cannot read plan {}: {e}", path.display())))?;
    compiled_plan::load(&text, &path.display().to_string())
}

/// Writes the compiled plan of `plan` to `path`; with `if_not_exists` an
/// existing file is kept (and used by a later EXECUTE PLAN), as in Flink.
pub fn write_plan(plan: &PhysicalPlan, path: &Path, if_not_exists: bool) -> Result<bool, RunError> {
    if path.exists() {
        if if_not_exists {
            return Ok(false);
        }
        return Err(RunError::Input(PlanError::plan(format!(
            "plan file {} already exists; write COMPILE PLAN '...' IF NOT EXISTS FOR ... to keep it",
            path.display()
        ))));
    }
    // Written under a temporary name and renamed: a plan file is complete
    // or absent, and a failed write (a full disk) leaves no temporary file
    // (a killed writer's is removed here by the next).
    if let Some(dir) = path.parent() {
        operators::debris::sweep_temp_files(if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        });
    }
    let tmp = operators::debris::temp_file_for(path);
    std::fs::write(&tmp, compiled_plan::compile(plan))
        .and_then(|_| std::fs::rename(&tmp, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            RunError::Execution(format!("cannot write plan {}: {e}", path.display()))
        })?;
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
        let inserts = match action {
            Action::Run(set)
            | Action::Explain {
                target: ExplainTarget::StatementSet(set),
                ..
            } => set,
            Action::Explain {
                target: ExplainTarget::Insert(i),
                ..
            }
            | Action::Compile { insert: i, .. } => vec![i],
            Action::Explain { .. } | Action::Execute { .. } => continue,
        };
        for i in &inserts {
            plans.push(plan_located(i, &script.catalog, &config)?);
        }
    }
    match plans.len() {
        1 => Ok(plans.remove(0)),
        n => Err(PlanError::plan(format!(
            "compile-plan compiles a script with exactly one INSERT; this one has {n}"
        ))),
    }
}

/// The EXPLAIN text of one statement: its INSERTs planned as one job.
fn explain_inserts(
    inserts: &[InsertStatement],
    catalog: &dyn CatalogView,
    config: &Config,
    details: ExplainDetails,
) -> Result<String, PlanError> {
    let plans = inserts
        .iter()
        .map(|i| plan_located(i, catalog, config))
        .collect::<Result<Vec<_>, _>>()?;
    let items: Vec<Explained> = inserts
        .iter()
        .zip(&plans)
        .map(|(i, p)| Explained::insert(Some(&i.query), p))
        .collect();
    Ok(explain(&items, details, config))
}

/// The EXPLAIN text an `EXPLAIN` statement prints.
pub fn explain_target(
    target: &ExplainTarget,
    catalog: &dyn CatalogView,
    config: &Config,
    details: ExplainDetails,
) -> Result<String, PlanError> {
    match target {
        ExplainTarget::Insert(i) => {
            explain_inserts(std::slice::from_ref(i), catalog, config, details)
        }
        ExplainTarget::StatementSet(set) => explain_inserts(set, catalog, config, details),
        ExplainTarget::Query(q) => {
            let plan = plan_query(q, catalog, config)?;
            Ok(explain(&[Explained::query(q, &plan)], details, config))
        }
    }
}

/// Plans every statement of the script and returns EXPLAIN text for each
/// (`lab explain`): one block per statement, as `EXPLAIN CHANGELOG_MODE`
/// prints it (with the details an `EXPLAIN` statement asks for besides).
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
    let catalog = &script.catalog;
    let changelog = ExplainDetails {
        changelog_mode: true,
        ..ExplainDetails::default()
    };
    let mut blocks = Vec::new();
    for (action, config) in configs_per_insert(&script, overrides)? {
        let text = match action {
            Action::Run(set) => explain_inserts(&set, catalog, &config, changelog)?,
            Action::Explain { details, target } => {
                let details = ExplainDetails {
                    changelog_mode: true,
                    ..details
                };
                explain_target(&target, catalog, &config, details)?
            }
            Action::Compile { insert, .. } => {
                explain_inserts(std::slice::from_ref(&insert), catalog, &config, changelog)?
            }
            Action::Execute { path, if_exists } => {
                let p = base_dir.join(path);
                if if_exists && !p.exists() {
                    continue;
                }
                let plan = load_plan(&p)?;
                explain(&[Explained::insert(None, &plan)], changelog, &config)
            }
        };
        blocks.push(text);
    }
    Ok(blocks.join("\n"))
}

/// Runs every INSERT of a script read from `base_dir` (for relative
/// paths); `EXPLAIN` statements print nothing (see
/// [`run_script_explaining`]).
pub fn run_script(
    sql: &str,
    base_dir: &Path,
    overrides: &[(String, String)],
    options: RunOptions<'_>,
    progress: &mut dyn FnMut(&str, u64),
) -> Result<Vec<InsertOutcome>, RunError> {
    run_script_explaining(sql, base_dir, overrides, options, progress, &mut |_| {})
}

/// [`run_script`], handing the text of each `EXPLAIN` statement to
/// `explained` when its turn comes.
pub fn run_script_explaining(
    sql: &str,
    base_dir: &Path,
    overrides: &[(String, String)],
    options: RunOptions<'_>,
    progress: &mut dyn FnMut(&str, u64),
    explained: &mut dyn FnMut(&str),
) -> Result<Vec<InsertOutcome>, RunError> {
    let script = parse_script(sql)?;
    let sources = ConnectorSources {
        base_dir: base_dir.to_path_buf(),
    };
    run_parsed_explaining(
        &script,
        &script.catalog,
        &sources,
        base_dir,
        overrides,
        options,
        progress,
        explained,
    )
}

/// Runs a parsed script with the given table readers (tests pass in-memory ones).
pub fn run_parsed(
    script: &Script,
    catalog: &dyn CatalogView,
    sources: &dyn SourceProvider,
    base_dir: &Path,
    overrides: &[(String, String)],
    options: RunOptions<'_>,
    progress: &mut dyn FnMut(&str, u64),
) -> Result<Vec<InsertOutcome>, RunError> {
    run_parsed_explaining(
        script,
        catalog,
        sources,
        base_dir,
        overrides,
        options,
        progress,
        &mut |_| {},
    )
}

/// [`run_parsed`], handing each `EXPLAIN` statement's text to `explained`.
#[allow(clippy::too_many_arguments)]
pub fn run_parsed_explaining(
    script: &Script,
    catalog: &dyn CatalogView,
    sources: &dyn SourceProvider,
    base_dir: &Path,
    overrides: &[(String, String)],
    options: RunOptions<'_>,
    progress: &mut dyn FnMut(&str, u64),
    explained: &mut dyn FnMut(&str),
) -> Result<Vec<InsertOutcome>, RunError> {
    let mut outcomes = Vec::new();
    let mut jobs = 0;
    for (action, config) in configs_per_insert(script, overrides)? {
        let compiled = matches!(action, Action::Execute { .. });
        let plans = match action {
            Action::Explain { details, target } => {
                explained(&explain_target(&target, catalog, &config, details)?);
                continue;
            }
            Action::Compile {
                path,
                if_not_exists,
                insert,
            } => {
                let plan = plan_located(&insert, catalog, &config)?;
                write_plan(&plan, &base_dir.join(path), if_not_exists)?;
                continue;
            }
            Action::Run(set) => set
                .iter()
                .map(|i| plan_located(i, catalog, &config))
                .collect::<Result<Vec<_>, _>>()?,
            Action::Execute { path, if_exists } => {
                let p = base_dir.join(path);
                if if_exists && !p.exists() {
                    continue;
                }
                vec![load_plan(&p)?]
            }
        };
        jobs += 1;
        let snapshots = checkpointing(&config).is_some()
            || options.from_checkpoint.is_some()
            || options.take_savepoint.is_some()
            || options.from_savepoint.is_some()
            || config.savepoint_path().is_some();
        if jobs > 1 && snapshots {
            return Err(RunError::Input(PlanError::unsupported(
                "checkpoints are taken of a script that runs one job (one INSERT or one \
                 statement set); this one runs several"
                    .to_string(),
            )));
        }
        outcomes.extend(restart::run_restarting(
            script, plans, compiled, config, sources, base_dir, options, progress,
        )?);
    }
    Ok(outcomes)
}

/// The state backend `config` asks for (`state.backend.type`,
/// `lab.state.dir`, the `state.backend.rocksdb.*` options); one that cannot open (RocksDB, its directory) is a
/// failure of execution, not bad input.
pub fn backend_for(config: &Config) -> Result<StateBackend, RunError> {
    let kind = match config.state_backend() {
        StateBackendKind::HashMap => BackendKind::Heap,
        StateBackendKind::RocksDb => BackendKind::RocksDb,
    };
    StateBackend::new_with(
        kind,
        config.state_dir().as_deref(),
        &config.rocksdb_options(),
    )
    .map_err(|e| RunError::Execution(e.to_string()))
}

/// Gives each stateful stage of `plans` its planned uid
/// ([`crate::physical::uid`]).
fn set_uids(job: &mut Job, plans: &[PhysicalPlan], stages: &[Vec<StageId>], format: &str) {
    let ids = node_ids(plans.iter().map(|p| &p.root));
    for (plan, stages) in plans.iter().zip(stages) {
        for (node, &s) in plan.root.stage_nodes().into_iter().zip(stages) {
            let id = ids.get(&(node as *const PhysicalNode));
            if let (Some(&id), false) = (id, node.spec().states().is_empty()) {
                job.set_uid(s, format_uid(format, id, node.spec().type_name()));
            }
        }
    }
}

/// Records the state layout of each stateful stage of `plans` (its
/// kind, input and output row types and its description) and each sink's
/// table and row type: what a savepoint restore checks.
fn set_schemas(job: &mut Job, plans: &[PhysicalPlan], stages: &[Vec<StageId>]) {
    let types = |s: &crate::logical::Schema| {
        s.types()
            .iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (k, (plan, stages)) in plans.iter().zip(stages).enumerate() {
        for (node, &s) in plan.root.stage_nodes().into_iter().zip(stages) {
            if node.spec().states().is_empty() {
                continue;
            }
            let inputs: Vec<String> = node
                .inputs
                .iter()
                .map(|i| format!("[{}]", types(&i.schema)))
                .collect();
            job.set_state_schema(
                s,
                format!(
                    "{} {} -> [{}] {}",
                    node.spec().type_name(),
                    inputs.join(" "),
                    types(&node.schema),
                    without_aliases(&crate::physical::explain::describe(node))
                ),
            );
        }
        let table = &plan.sink.table;
        job.set_sink_schema(k, format!("{}({})", table.name, types(&table.schema)));
    }
}

/// A node's description without its output names (` AS cnt`): renaming
/// an output column leaves the state as it was, as Flink's row
/// serializers do not know field names.
fn without_aliases(description: &str) -> String {
    let mut out = String::with_capacity(description.len());
    let mut rest = description;
    while let Some(at) = rest.find(" AS ") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 4..];
        let end = after.find([',', ']', ')']).unwrap_or(after.len());
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// Where and how often `config` asks for checkpoints, if it does.
fn checkpointing(config: &Config) -> Option<CheckpointConfig> {
    let interval = config.checkpointing_interval();
    let dir = config.checkpointing_dir()?;
    (!interval.is_zero()).then(|| CheckpointConfig {
        store: CheckpointStore::new(dir, config.checkpointing_num_retained()),
        every_rows: interval.as_millis().max(1) as u64,
        incremental: config.checkpointing_incremental(),
    })
}

/// Reads the checkpoint a run resumes from; a missing or corrupt one is
/// bad input, refused before anything is opened or written.
fn read_checkpoint(
    from: FromCheckpoint<'_>,
    config: &Config,
) -> Result<(Checkpoint, String), RunError> {
    let path = match from {
        FromCheckpoint::Path(p) => p.to_path_buf(),
        FromCheckpoint::Latest => {
            let Some(dir) = config.checkpointing_dir() else {
                return Err(RunError::Input(PlanError::config(format!(
                    "--from-checkpoint latest needs '{}' set to the checkpoint directory",
                    crate::config::CHECKPOINTING_DIR
                ))));
            };
            CheckpointStore::new(dir, 1)
                .latest()
                .map_err(|e| checkpoint_error(e.into()))?
        }
    };
    let c = operators::checkpoint::store::read(&path).map_err(|e| checkpoint_error(e.into()))?;
    Ok((c, path.display().to_string()))
}

fn checkpoint_error(e: OpError) -> RunError {
    if e.is_bad_input() {
        RunError::BadInput(e)
    } else {
        RunError::Execution(e.to_string())
    }
}

/// Where an INSERT's late records go: a stage's writer, a writer no stage
/// took (its file stays empty), or nowhere (no operator of the INSERT
/// drops late records: no file).
#[derive(Default)]
enum Late {
    Stage(StageId),
    Unused(Box<dyn RowWriter>),
    #[default]
    None,
}

/// Opens the late-record writer of `plan` and hands it to the stage of
/// its operator that writes late records
/// ([`crate::physical::node::NodeSpec::writes_late_records`]). A plan with
/// several such operators is refused.
fn keep_late(
    job: &mut Job,
    plan: &PhysicalPlan,
    stages: &[StageId],
    open: &LateWriterFactory<'_>,
) -> Result<Late, RunError> {
    let sink = &plan.sink.table.name;
    let windows: Vec<(StageId, &PhysicalNode)> = plan
        .root
        .stage_nodes()
        .into_iter()
        .zip(stages.iter().copied())
        .filter(|(n, _)| n.spec().writes_late_records())
        .map(|(n, s)| (s, n))
        .collect();
    if windows.len() > 1 {
        return Err(RunError::Input(PlanError::unsupported(format!(
            "--late: INSERT INTO {sink} has {} window operators; the lab writes the late records of one",
            windows.len()
        ))));
    }
    // Without such an operator nothing is dropped as late: no file.
    let Some(&(s, node)) = windows.first() else {
        return Ok(Late::None);
    };
    let writer = open(sink, &node.inputs[0].schema.names())
        .map_err(|e| RunError::Execution(format!("late records of sink '{sink}': {e}")))?;
    Ok(match job.keep_late(s, writer) {
        Ok(()) => Late::Stage(s),
        Err(w) => Late::Unused(w),
    })
}

/// Runs the plans as one job (one sink each), with the settings they were
/// planned with; the session's `config` chooses only where state lives,
/// the operators' uids (`compiled`: the plans come from a compiled plan)
/// and checkpoints.
///
/// `fault`: the operator to fail and when (`lab.fault.*`); `restarts`: how
/// many times the run was restarted before this attempt, for its report;
/// `failed`: where a failed run leaves what each sink received (when the
/// changelog is kept), for the restart strategy to keep what was committed.
#[allow(clippy::too_many_arguments)]
fn run_job(
    script: &Script,
    plans: Vec<PhysicalPlan>,
    compiled: bool,
    config: Config,
    sources: &dyn SourceProvider,
    base_dir: &Path,
    options: RunOptions<'_>,
    progress: &mut dyn FnMut(&str, u64),
    fault: Option<&(String, u64)>,
    restarts: u32,
    failed: &mut Vec<Vec<Change>>,
) -> Result<Vec<InsertOutcome>, RunError> {
    // The heap state an earlier job of the process set aside goes before
    // this job's is built (`operators::state::heap_parking`).
    operators::state::heap_parking::release_parked();
    // A state directory that cannot be created is a failure of the disk,
    // not of the script.
    let backend = backend_for(&config)?;
    let state_dir = config.state_dir();
    let runtime = Runtime {
        sources,
        backend: &backend,
        state_dir: state_dir.as_deref(),
    };
    let (mut job, stages) = build_job(
        &plans,
        &runtime,
        SinkKeeps {
            changelog: options.keep_changelog,
            result: options.materialize,
            changelog_written: options.changelog_to.is_some(),
        },
    )
    .map_err(|e| at_table_definition(script, e))?;
    if config.uid_generation().applies(compiled) {
        set_uids(&mut job, &plans, &stages, config.uid_format());
    }
    set_schemas(&mut job, &plans, &stages);
    if let Some((operator, after)) = fault {
        job.inject_fault(operator, *after).map_err(|names| {
            RunError::Input(PlanError::config(format!(
                "'{}' = '{operator}' names no operator of the job; its operators: {}",
                crate::config::LAB_FAULT_OPERATOR,
                names.join("; ")
            )))
        })?;
    }
    let checkpoints = checkpointing(&config);
    let from_savepoint = options
        .from_savepoint
        .map(Path::to_path_buf)
        .or_else(|| config.savepoint_path());
    if from_savepoint.is_some() && options.from_checkpoint.is_some() {
        return Err(RunError::Input(PlanError::config(
            "a run starts from a checkpoint or from a savepoint, not both".to_string(),
        )));
    }
    // Output files commit at checkpoints; a resumed run cuts each back to
    // what its checkpoint committed (in sink order: the file sink's rows,
    // then the changelog).
    let mut committed: Vec<std::vec::IntoIter<u64>> = vec![Vec::new().into_iter(); plans.len()];
    let resumable = checkpoints.is_some()
        || options.from_checkpoint.is_some()
        || options.take_savepoint.is_some()
        || from_savepoint.is_some();
    if resumable && options.late_to.is_some() {
        return Err(RunError::Input(PlanError::unsupported(
            "--late is not yet written exactly once across checkpoints; run without \
             checkpoints to keep late records"
                .to_string(),
        )));
    }
    if let Some(from) = options.from_checkpoint {
        let (c, path) = read_checkpoint(from, &config)?;
        for (k, s) in c.sinks.iter().enumerate().take(plans.len()) {
            committed[k] = s.committed.clone().into_iter();
        }
        job.restore(c, &path).map_err(checkpoint_error)?;
    }
    if let Some(path) = &from_savepoint {
        let c = operators::checkpoint::store::read(path).map_err(|e| checkpoint_error(e.into()))?;
        let allow = options.allow_non_restored_state || config.savepoint_ignore_unclaimed_state();
        let restored = job
            .restore_savepoint(c, &path.display().to_string(), allow)
            .map_err(checkpoint_error)?;
        for (k, files) in restored.committed.into_iter().enumerate().take(plans.len()) {
            committed[k] = files.unwrap_or_default().into_iter();
        }
    }
    if let Some(t) = options.take_savepoint {
        job.take_savepoint(SavepointConfig {
            dir: t.dir.to_path_buf(),
            after_rows: t.after_rows,
            stop: t.stop,
        });
    }
    let mut mode = |k: usize| {
        if resumable {
            OutputMode::Resumable {
                from: committed[k].next(),
            }
        } else {
            OutputMode::Atomic
        }
    };
    if let Some(c) = checkpoints {
        job.enable_checkpoints(c);
    }
    let mut late_writers = Vec::new();
    for (k, plan) in plans.iter().enumerate() {
        if let Some(path) = crate::physical::job::sink_file(&plan.sink.table) {
            // Insert-only (the planner refuses updates into a file sink).
            let sink = &plan.sink.table.name;
            let file = datasets::resolve_path(base_dir, &path.to_string_lossy());
            let writer = datasets::ResultCsvWriter::headless_in(
                &file,
                &plan.sink.table.schema.names(),
                mode(k),
            )
            .map_err(|e| RunError::Execution(format!("sink '{sink}': {e}")))?;
            job.set_sink_writer(k, Box::new(writer))
                .map_err(|e| PlanError::plan(format!("sink '{sink}': {e}")))?;
        }
        if let Some(open) = options.late_to {
            late_writers.push(keep_late(&mut job, plan, &stages[k], open)?);
        }
        if let Some(open) = options.changelog_to {
            let sink = &plan.sink.table.name;
            let writer = open(sink, &plan.sink.table.schema.names(), mode(k))
                .map_err(|e| RunError::Execution(format!("changelog of sink '{sink}': {e}")))?;
            job.set_changelog_writer(k, writer)
                .map_err(|e| PlanError::plan(format!("sink '{sink}': {e}")))?;
        }
    }
    let label = plans
        .iter()
        .map(|p| p.sink.table.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let mut report = match job.run(&mut |n| progress(&label, n)) {
        Ok(r) => r,
        Err(e) => {
            if options.keep_changelog {
                *failed = (0..plans.len())
                    .map(|k| job.sink(k).changelog().to_vec())
                    .collect();
            }
            return Err(if e.is_bad_input() {
                RunError::BadInput(e)
            } else {
                RunError::Execution(e.to_string())
            });
        }
    };
    report.restarts = restarts;
    for (k, plan) in plans.iter().enumerate() {
        job.finish_sink(k)
            .map_err(|e| RunError::Execution(format!("sink '{}': {e}", plan.sink.table.name)))?;
    }
    let report = Arc::new(report);
    Ok(plans
        .into_iter()
        .zip(stages)
        .enumerate()
        .map(|(k, (plan, stages))| InsertOutcome {
            sink: plan.sink.table.name.clone(),
            changelog: if options.keep_changelog {
                job.sink(k).changelog().to_vec()
            } else {
                Vec::new()
            },
            changelog_writer: job.take_changelog_writer(k),
            late_writer: match late_writers.get_mut(k).map(std::mem::take) {
                Some(Late::Stage(s)) => job.take_late_writer(s),
                Some(Late::Unused(w)) => Some(w),
                Some(Late::None) | None => None,
            },
            plan,
            config: config.clone(),
            report: report.clone(),
            sink_index: k,
            stages,
        })
        .collect())
}
