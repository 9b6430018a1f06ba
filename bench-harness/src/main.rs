//! `lab`: the joinlab command line.
//!
//! - `lab run SCRIPT.sql [--set key=value]... [--param name=value]...
//!   [--changelog FILE] [--result FILE] [--late FILE]`
//! - `lab explain SCRIPT.sql [--set key=value]... [--param name=value]...`
//! - `lab campaign SPEC.toml [--quick] [--resume] [--out DIR]
//!   [--save-baseline NAME] [--baseline NAME]`: runs a campaign (the
//!   format is in `docs/campaigns.md`) and writes `results.csv`, charts
//!   and `index.md` to `reports/<name>/`
//! - `lab plot DIR`: redraws a campaign's charts and `index.md`
//! - `lab tune SCRIPT.sql --try key=v1,v2 [--try ...] [--repeats N]`:
//!   compares configurations of one script
//!
//! `campaign` and `tune` take `--engine flink [--flink-rest HOST:PORT]`
//! too, and a campaign's variants may name their engine.
//!
//! - `lab run SCRIPT.sql --engine flink [--flink-rest HOST:PORT]`, `lab
//!   compare SCRIPT.sql`, `lab export SCRIPT.sql -o DIR`, `lab flink
//!   install|start|status|stop`: Flink as a second engine (see `flink/`)
//!
//! Bad input (SQL, configuration, files, CSV rows) exits with code 2 and a
//! message that says what and where; a failure of execution (IO, RocksDB,
//! a full disk, a failed write to stdout or an output file: [`output`], a
//! Flink cluster that does not answer, a Flink job that fails) says
//! "execution failed" and exits with 3; `lab compare` exits with 1 when
//! the engines' results differ. The codes are in [`exit_code`].

use bench_harness::{campaign, exit_code, files, flink, output, summary, template};

// Small allocations dominate row processing; mimalloc makes them cheap
// (see `operators::alloc` for why not the `mimalloc` crate's allocator).
#[global_allocator]
static GLOBAL: operators::alloc::LabAllocator = operators::alloc::LabAllocator;

use bench_harness::output::{errln, outln};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use operators::sink::ChangeWriter;
use optimizer::session::{
    compile_script, explain_script_in, run_script_explaining, write_plan, ChangelogWriterFactory,
    RunError, RunOptions,
};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "lab",
    version,
    about = "joinlab: a performance lab for streaming SQL joins and aggregations",
    after_help = "Exit codes: 0 success, 1 `lab compare` found different results, 2 bad input (says what\n\
                  and where), 3 a failed run or write (IO, RocksDB, a Flink cluster or job).\n\
                  Run `lab help <command>` for a command's flags and an example."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compiles the (single) INSERT of a script into a JSON plan whose state
    /// TTLs can be edited (Flink's COMPILE PLAN).
    #[command(after_help = "Example:\n  \
        lab compile-plan examples/orders_state_ttl.sql --out plan.json\n  \
        lab execute-plan plan.json")]
    CompilePlan {
        /// The Flink SQL script (one INSERT).
        script: PathBuf,
        /// Where to write the plan (JSON); refused if the file exists.
        #[arg(short = 'o', long = "out", alias = "output", value_name = "FILE")]
        out: PathBuf,
        /// Configuration `key=value` for planning (wins over the script's SET).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// Runs a compiled plan (Flink's EXECUTE PLAN) and prints the summary.
    #[command(after_help = "Example:\n  \
        lab execute-plan plan.json --set state.backend.type=rocksdb")]
    ExecutePlan {
        /// A plan written by `lab compile-plan` (or COMPILE PLAN).
        plan: PathBuf,
        /// Where state lives (`state.backend.type`, `lab.state.dir`); the plan carries everything else.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Prints no progress bar.
        #[arg(long)]
        quiet: bool,
    },
    /// Runs every INSERT of a Flink SQL script and prints a summary.
    #[command(after_help = "Examples:\n  \
        lab run examples/clicks_per_user.sql\n  \
        lab run examples/clicks_per_user.sql --set parallelism.default=4 --changelog out.csv\n  \
        lab run examples/demo_agg.sql --param rows=1000000 --param keys=10000 --param skew=1.2")]
    Run {
        /// The Flink SQL script (CREATE TABLE, SET, INSERT, ...).
        script: PathBuf,
        /// Configuration override `key=value` (wins over the script's SET).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Fills `${name}` in the script with `value` (templates as campaigns use them).
        #[arg(long = "param", value_name = "NAME=VALUE")]
        param: Vec<String>,
        /// Writes every row the sink receives as CSV (op column first).
        #[arg(long, value_name = "FILE")]
        changelog: Option<PathBuf>,
        /// Writes the sink's final materialised rows as CSV.
        #[arg(long, value_name = "FILE")]
        result: Option<PathBuf>,
        /// Writes the records the window operator drops as late as CSV, with
        /// its input's columns (the lab's form of Flink's late side output).
        #[arg(long, value_name = "FILE")]
        late: Option<PathBuf>,
        /// Resumes from a checkpoint: `latest` (the newest in
        /// execution.checkpointing.dir) or a chk-<id> directory; see
        /// docs/checkpoints.md.
        #[arg(long, value_name = "latest|PATH")]
        from_checkpoint: Option<String>,
        /// Takes a savepoint at the first barrier after ROWS input rows
        /// and stops (Flink's `flink stop --savepointPath`); needs
        /// --savepoint-dir. The summary prints its path.
        #[arg(
            long,
            value_name = "ROWS",
            requires = "savepoint_dir",
            conflicts_with = "savepoint_after"
        )]
        stop_with_savepoint_after: Option<u64>,
        /// Takes a savepoint at the first barrier after ROWS input rows
        /// and goes on; needs --savepoint-dir.
        #[arg(long, value_name = "ROWS", requires = "savepoint_dir")]
        savepoint_after: Option<u64>,
        /// Where a savepoint is written (a `savepoint-<rows>` directory).
        #[arg(long, value_name = "DIR")]
        savepoint_dir: Option<PathBuf>,
        /// Starts from a savepoint, into a job that may have changed: state
        /// is matched to operators by uid; see docs/checkpoints.md.
        #[arg(long, value_name = "PATH", conflicts_with = "from_checkpoint")]
        from_savepoint: Option<PathBuf>,
        /// With --from-savepoint: drops, and reports, state no operator of
        /// the job claims instead of refusing the savepoint.
        #[arg(long, requires = "from_savepoint")]
        allow_non_restored_state: bool,
        /// Prints no progress bar.
        #[arg(long)]
        quiet: bool,
        /// The engine: the lab's own, or a Flink cluster.
        #[arg(long, value_enum, default_value_t = flink::Engine::Lab)]
        engine: flink::Engine,
        /// The Flink cluster's REST address (default: `lab flink start`'s).
        #[arg(long, value_name = "HOST:PORT")]
        flink_rest: Option<String>,
    },
    /// Prints the plan of every statement as Flink's EXPLAIN CHANGELOG_MODE does.
    #[command(after_help = "Examples:\n  \
        lab explain examples/clicks_per_user.sql\n  \
        lab explain examples/demo_agg.sql --param rows=1000 --param keys=10 --param skew=1.0 \
        --set table.exec.mini-batch.enabled=true")]
    Explain {
        /// The Flink SQL script.
        script: PathBuf,
        /// Configuration override `key=value` (wins over the script's SET).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Fills `${name}` in the script with `value`.
        #[arg(long = "param", value_name = "NAME=VALUE")]
        param: Vec<String>,
    },
    /// Runs a campaign spec (every point × variant × repeat) and writes
    /// results.csv, charts (PNG, SVG) and index.md; the spec format is in
    /// docs/campaigns.md.
    #[command(after_help = "Examples:\n  \
        lab campaign campaigns/demo.toml --quick          # reports/demo/\n  \
        lab campaign campaigns/demo.toml --save-baseline before\n  \
        lab campaign campaigns/demo.toml --baseline before  # change per point against it\n  \
        lab campaign campaigns/lab-vs-flink.toml --quick    # variants on the lab and on Flink\n  \
        lab campaign campaigns/minibatch-agg.toml --quick --engine flink\n\n\
        A finished run already in the report directory is moved to its history/ folder first.\n\
        Flink variants run on --flink-rest, else on the local cluster of `lab flink start`, else\n\
        on a local cluster the campaign starts and stops itself.")]
    Campaign {
        /// The campaign spec (TOML).
        spec: PathBuf,
        /// Uses the spec's [quick] values (and one repeat unless it says otherwise).
        #[arg(long)]
        quick: bool,
        /// Continues an interrupted campaign: keeps its finished runs
        /// (results.csv.partial, or results.csv) and runs only the others.
        #[arg(long)]
        resume: bool,
        /// The report directory (default: reports/<name>/).
        #[arg(short = 'o', long = "out", alias = "output", value_name = "DIR")]
        out: Option<PathBuf>,
        /// Saves this run as baseline NAME (in <report>/baselines/NAME/).
        #[arg(long, value_name = "NAME")]
        save_baseline: Option<String>,
        /// Compares this run with baseline NAME: the change per point, variant
        /// and metric with its 95% interval.
        #[arg(long, value_name = "NAME")]
        baseline: Option<String>,
        /// Prints no progress bar.
        #[arg(long)]
        quiet: bool,
        /// The engine of variants that name none (`engine = ...` in the spec).
        #[arg(long, value_enum, default_value_t = flink::Engine::Lab)]
        engine: flink::Engine,
        /// The Flink cluster's REST address (default: the local cluster, started if none runs).
        #[arg(long, value_name = "HOST:PORT")]
        flink_rest: Option<String>,
        /// Configuration for every Flink run (a key the lab does not model).
        #[arg(long = "flink-set", value_name = "KEY=VALUE")]
        flink_set: Vec<String>,
    },
    /// Redraws a campaign's charts and index.md from its results.csv.
    #[command(after_help = "Example:\n  lab plot reports/demo")]
    Plot {
        /// A report directory written by `lab campaign`.
        dir: PathBuf,
    },
    /// Runs a script under each combination of --try values, interleaved
    /// after a warm-up run of each, and prints medians with min–max, ratios
    /// to the first with their 95% interval, and whether a difference is
    /// beyond noise.
    #[command(after_help = "Examples:\n  \
        lab tune examples/colors_local_global.sql \
        --try table.optimizer.agg-phase-strategy=ONE_PHASE,TWO_PHASE \\\n    \
        --set table.exec.mini-batch.enabled=true --set table.exec.mini-batch.allow-latency=5s \
        --set table.exec.mini-batch.size=5000\n  \
        lab tune examples/demo_agg.sql --param rows=1000000 --param keys=10000 --param skew=1.2 \\\n    \
        --try state.backend.type=hashmap,rocksdb --save-baseline before\n  \
        lab tune examples/demo_agg.sql --param rows=1000000 --param keys=10000 --param skew=1.2 \\\n    \
        --try state.backend.type=hashmap,rocksdb --engine flink --repeats 3\n\n\
        Baselines of a script are kept in reports/tune/<script name>/baselines/.")]
    Tune {
        /// The Flink SQL script.
        script: PathBuf,
        /// A configuration key and the values to try: `key=v1,v2,...`.
        #[arg(long = "try", value_name = "KEY=V1,V2,...", required = true)]
        tries: Vec<String>,
        /// Timed runs per variant (after one warm-up run of each).
        #[arg(long, default_value_t = 5)]
        repeats: u32,
        /// Configuration for every variant `key=value`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Fills `${name}` in the script with `value`.
        #[arg(long = "param", value_name = "NAME=VALUE")]
        param: Vec<String>,
        /// Saves the runs as baseline NAME of this script.
        #[arg(long, value_name = "NAME")]
        save_baseline: Option<String>,
        /// Compares the runs with baseline NAME of this script.
        #[arg(long, value_name = "NAME")]
        baseline: Option<String>,
        /// Prints no progress bar.
        #[arg(long)]
        quiet: bool,
        /// The engine every variant runs on.
        #[arg(long, value_enum, default_value_t = flink::Engine::Lab)]
        engine: flink::Engine,
        /// The Flink cluster's REST address (default: the local cluster, started if none runs).
        #[arg(long, value_name = "HOST:PORT")]
        flink_rest: Option<String>,
        /// Configuration for every Flink run (a key the lab does not model).
        #[arg(long = "flink-set", value_name = "KEY=VALUE")]
        flink_set: Vec<String>,
    },
    /// A local Flink: install, start, status, stop.
    #[command(after_help = "Examples:\n  \
        lab flink install\n  \
        lab flink start --taskmanagers 2 --slots 2\n  \
        lab flink status\n  \
        lab flink stop")]
    Flink {
        #[command(subcommand)]
        command: flink::FlinkCommand,
    },
    /// Runs a script on the lab and on Flink and compares results, changelogs,
    /// times and state per sink (exit code 1 when results differ).
    #[command(after_help = "Examples:\n  \
        lab compare examples/clicks_per_user.sql\n  \
        lab compare examples/tenant_multijoin_10way.sql --set parallelism.default=4 \
        --flink-rest flink-jm:8081")]
    Compare {
        /// The Flink SQL script.
        script: PathBuf,
        /// Configuration for both engines `key=value` (wins over the script's SET).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Configuration for Flink only (a key the lab does not model).
        #[arg(long = "flink-set", value_name = "KEY=VALUE")]
        flink_set: Vec<String>,
        /// A script parameter: replaces `${name}`.
        #[arg(long = "param", value_name = "NAME=VALUE")]
        params: Vec<String>,
        /// The Flink cluster's REST address (default: `lab flink start`'s).
        #[arg(long, value_name = "HOST:PORT")]
        flink_rest: Option<String>,
        /// Also writes the comparison as JSON.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Prints no progress bar.
        #[arg(long)]
        quiet: bool,
    },
    /// Writes a bundle that runs the script on any Flink 2.x cluster: the
    /// rewritten script, the materialised data and run.sh.
    #[command(after_help = "Examples:\n  \
        lab export examples/clicks_per_user.sql -o bundle/\n  \
        bundle/run.sh flink-jm:8081")]
    Export {
        /// The Flink SQL script.
        script: PathBuf,
        /// The bundle's folder (must not exist).
        #[arg(short = 'o', long = "out", alias = "output", value_name = "DIR")]
        output: PathBuf,
        /// Configuration `key=value` written into the bundle's script.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// A script parameter: replaces `${name}`.
        #[arg(long = "param", value_name = "NAME=VALUE")]
        params: Vec<String>,
    },
}

/// An error with the exit code it maps to.
struct Failure {
    code: u8,
    message: String,
}

impl Failure {
    fn input(message: impl Into<String>) -> Failure {
        Failure {
            code: exit_code::BAD_INPUT,
            message: message.into(),
        }
    }

    /// A failure of execution: the input was fine, running or writing failed.
    fn execution(message: impl std::fmt::Display) -> Failure {
        Failure {
            code: exit_code::EXECUTION_FAILED,
            message: format!("execution failed: {message}"),
        }
    }
}

impl From<output::OutputError> for Failure {
    fn from(e: output::OutputError) -> Failure {
        Failure::execution(e)
    }
}

impl From<campaign::CampaignError> for Failure {
    fn from(e: campaign::CampaignError) -> Failure {
        Failure {
            code: e.code,
            message: e.message,
        }
    }
}

impl From<flink::FlinkError> for Failure {
    fn from(e: flink::FlinkError) -> Failure {
        Failure {
            code: e.code,
            message: e.message,
        }
    }
}

impl From<RunError> for Failure {
    fn from(e: RunError) -> Failure {
        Failure {
            code: e.exit_code() as u8,
            message: e.to_string(),
        }
    }
}

/// `--set KEY=VALUE` flags, each checked as `SET` checks it; an error
/// names the flag.
fn parse_sets(sets: &[String]) -> Result<Vec<(String, String)>, Failure> {
    sets.iter()
        .map(|s| {
            let (k, v) = key_value("--set", s)?;
            optimizer::config::Config::new()
                .set(&k, &v)
                .map_err(|e| Failure::input(format!("--set '{s}': {}", e.message)))?;
            Ok((k, v))
        })
        .collect()
}

/// `--flink-set KEY=VALUE` flags: keys for Flink alone, which the lab does
/// not model, so only their shape is checked here (Flink checks the rest).
fn parse_flink_sets(sets: &[String]) -> Result<Vec<(String, String)>, Failure> {
    sets.iter().map(|s| key_value("--flink-set", s)).collect()
}

fn key_value(flag: &str, s: &str) -> Result<(String, String), Failure> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(Failure::input(format!("{flag} '{s}': expected KEY=VALUE"))),
    }
}

fn read_script(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path)
        .map_err(|e| Failure::input(format!("cannot read script {}: {e}", path.display())))
}

/// Reads a script and fills its `${name}` templates from `--param` flags.
fn read_template(path: &Path, params: &[String]) -> Result<String, Failure> {
    let params = template::parse_params(params).map_err(Failure::input)?;
    let text = read_script(path)?;
    template::fill_script(&path.display().to_string(), &text, &params).map_err(Failure::input)
}

/// `FILE` for one INSERT; `FILE` with `-<sink>` before the extension for several.
fn output_path(base: &Path, sink: &str, many: bool) -> PathBuf {
    if !many {
        return base.to_path_buf();
    }
    let stem = base.file_stem().and_then(|s| s.to_str()).unwrap_or("out");
    let name = match base.extension().and_then(|e| e.to_str()) {
        Some(ext) => format!("{stem}-{sink}.{ext}"),
        None => format!("{stem}-{sink}"),
    };
    base.with_file_name(name)
}

/// Whether `path` is something written to in place (a device, a pipe),
/// not a file replaced whole.
fn is_stream(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// The files a run writes, and the checkpoint it resumes from.
#[derive(Clone, Copy, Default)]
struct RunFiles<'a> {
    changelog: Option<&'a Path>,
    result: Option<&'a Path>,
    late: Option<&'a Path>,
    from_checkpoint: Option<&'a str>,
    take_savepoint: Option<optimizer::session::TakeSavepoint<'a>>,
    from_savepoint: Option<&'a Path>,
    allow_non_restored_state: bool,
}

fn run(
    script: &Path,
    set: &[String],
    param: &[String],
    files: RunFiles<'_>,
    quiet: bool,
) -> Result<(), Failure> {
    let sql = read_template(script, param)?;
    run_sql(&sql, script, set, files, quiet)
}

/// Runs `sql` as if read from `script` (relative paths resolve beside it).
fn run_sql(
    sql: &str,
    script: &Path,
    set: &[String],
    files: RunFiles<'_>,
    quiet: bool,
) -> Result<(), Failure> {
    let RunFiles {
        changelog,
        result,
        late,
        from_checkpoint,
        take_savepoint,
        from_savepoint,
        allow_non_restored_state,
    } = files;
    let from_checkpoint = from_checkpoint.map(|f| match f {
        "latest" => optimizer::session::FromCheckpoint::Latest,
        path => optimizer::session::FromCheckpoint::Path(Path::new(path)),
    });
    let overrides = parse_sets(set)?;
    let base_dir = script.parent().map(Path::to_path_buf).unwrap_or_default();
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::new_spinner();
        b.set_style(
            ProgressStyle::with_template("{spinner} {msg} {pos} rows read ({per_sec}, {elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        b
    };
    let mut progress = |sink: &str, n: u64| {
        if n % 65536 < 4096 {
            bar.set_message(format!("INSERT INTO {sink}:"));
            bar.set_position(n);
        }
    };
    // An EXPLAIN statement prints its plan when its turn comes. A failed
    // write is not lost: the summary, written to the same stdout after the
    // files, fails the same way and reports it.
    let mut explained = |text: &str| {
        bar.suspend(|| {
            let _ = output::out(text);
        })
    };
    // One file per sink when the script writes several (a script that
    // does not parse fails in the run, with its location).
    let many = optimizer::sql::parse_script(sql).is_ok_and(|s| s.runs() > 1);
    if many {
        // `/dev/stdout-<sink>` is no place for a file.
        for (flag, path) in [
            ("--changelog", changelog),
            ("--result", result),
            ("--late", late),
        ] {
            if let Some(p) = path.filter(|p| is_stream(p)) {
                return Err(Failure {
                    code: exit_code::BAD_INPUT,
                    message: format!(
                        "{flag} {}: the script writes several sinks, one file each, \
                         and this is not a regular file to name them after",
                        p.display()
                    ),
                });
            }
        }
    }
    // The changelog streams to its file as the sink receives it (memory
    // does not grow with its length), under a temporary name until the
    // whole script has run.
    let open_changelog = |sink: &str, columns: &[String], mode: datasets::OutputMode| {
        let path = output_path(changelog.unwrap_or(Path::new("")), sink, many);
        datasets::ChangelogCsvWriter::create_in(&path, columns, mode)
            .map(|w| Box::new(w) as Box<dyn ChangeWriter>)
            .map_err(|e| e.to_string())
    };
    // The late records stream the same way, from the window operator.
    let open_late = |sink: &str, columns: &[String]| {
        let path = output_path(late.unwrap_or(Path::new("")), sink, many);
        datasets::ResultCsvWriter::create(&path, columns)
            .map(|w| Box::new(w) as Box<dyn operators::sink::RowWriter>)
            .map_err(|e| e.to_string())
    };
    // The process ends after the report: a job's heap state is set aside
    // when it finishes rather than freed row by row before the report.
    operators::state::heap_parking::park_dropped_state(true);
    let outcomes = run_script_explaining(
        sql,
        &base_dir,
        &overrides,
        RunOptions {
            keep_changelog: false,
            materialize: result.is_some(),
            changelog_to: changelog.map(|_| &open_changelog as &ChangelogWriterFactory),
            late_to: late.map(|_| &open_late as &optimizer::session::LateWriterFactory),
            from_checkpoint,
            take_savepoint,
            from_savepoint,
            allow_non_restored_state,
        },
        &mut progress,
        &mut explained,
    );
    bar.finish_and_clear();
    let mut outcomes = outcomes.map_err(|e| {
        let mut f = Failure::from(e);
        if f.code == exit_code::EXECUTION_FAILED
            && (changelog.is_some() || result.is_some() || late.is_some())
        {
            f.message.push_str(if late.is_some() {
                "; no --changelog, --result or --late file was written"
            } else {
                "; no --changelog or --result file was written"
            });
        }
        f
    })?;
    // The files are completed first, so that a failed write to stdout
    // costs none of them. Each is complete or not there at all; when one
    // fails, those completed before it are kept and the error names them.
    let mut written: Vec<Vec<String>> = vec![Vec::new(); outcomes.len()];
    let mut failed: Option<String> = None;
    'files: for (o, done) in outcomes.iter_mut().zip(&mut written) {
        let columns = o.plan.sink.table.schema.names();
        if let (Some(path), Some(w)) = (changelog, o.changelog_writer.take()) {
            let p = output_path(path, &o.sink, many);
            match w.finish() {
                Ok(()) => done.push(format!("  changelog written to {}", p.display())),
                Err(e) => {
                    failed = Some(e.to_string());
                    break 'files;
                }
            }
        }
        if late.is_some() && o.late_writer.is_none() {
            done.push(format!(
                "  no late records file for {}: none of its operators drops late records \
                 (a window aggregate, a window deduplication or a window Top-N over a window TVF do)",
                o.sink
            ));
        }
        if let (Some(path), Some(w)) = (late, o.late_writer.take()) {
            let p = output_path(path, &o.sink, many);
            match w.finish() {
                Ok(()) => done.push(format!("  late records written to {}", p.display())),
                Err(e) => {
                    failed = Some(e.to_string());
                    break 'files;
                }
            }
        }
        if let Some(path) = result {
            let p = output_path(path, &o.sink, many);
            let rows = o.sink_report().result.as_deref().unwrap_or_default();
            match datasets::csv_write::write_result_csv(&p, &columns, rows) {
                Ok(()) => done.push(format!("  result written to {}", p.display())),
                Err(e) => {
                    failed = Some(e.to_string());
                    break 'files;
                }
            }
        }
    }
    let printed = (|| {
        outln!("joinlab run {}", script.display())?;
        for (o, done) in outcomes.iter().zip(&written) {
            output::out(&summary::render(o))?;
            for line in done {
                outln!("{line}")?;
            }
        }
        Ok::<(), output::OutputError>(())
    })();
    let kept: Vec<&str> = written
        .iter()
        .flatten()
        .filter_map(|l| l.split_once(" written to ").map(|(_, p)| p))
        .collect();
    let error = match (failed, printed) {
        (Some(e), _) if kept.is_empty() => format!("{e}; no output file was written"),
        (Some(e), _) => format!(
            "{e}; the output files written before it are complete and kept: {}",
            kept.join(", ")
        ),
        (None, Err(e)) if !kept.is_empty() => {
            format!("{e}; the output files are complete: {}", kept.join(", "))
        }
        (None, Err(e)) => e.to_string(),
        (None, Ok(())) => return Ok(()),
    };
    Err(Failure::execution(error))
}

fn main() -> ExitCode {
    // Output goes through `output`, where a closed pipe ends the output
    // quietly; a stray write that still panics on one ends the same way.
    std::panic::set_hook(Box::new(|info| {
        let msg = info.to_string();
        if msg.contains("Broken pipe") {
            std::process::exit(0);
        }
        output::err(&format!("{msg}\n"));
    }));
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // Help, version or a usage error: clap's own words and code, but a
        // failed write of them is an error too.
        Err(e) => {
            if let Err(w) = e.print() {
                errln!("error: {}", output::OutputError(w));
                return ExitCode::from(exit_code::EXECUTION_FAILED);
            }
            return ExitCode::from(e.exit_code().clamp(0, 255) as u8);
        }
    };
    let outcome = match &cli.command {
        Command::Run {
            script,
            set,
            param,
            changelog,
            result,
            late,
            from_checkpoint,
            stop_with_savepoint_after,
            savepoint_after,
            savepoint_dir,
            from_savepoint,
            allow_non_restored_state,
            quiet,
            engine,
            flink_rest,
        } => match engine {
            flink::Engine::Lab => run(
                script,
                set,
                param,
                RunFiles {
                    changelog: changelog.as_deref(),
                    result: result.as_deref(),
                    late: late.as_deref(),
                    from_checkpoint: from_checkpoint.as_deref(),
                    take_savepoint: savepoint_dir.as_deref().and_then(|dir| {
                        let (after_rows, stop) = match (stop_with_savepoint_after, savepoint_after)
                        {
                            (Some(n), _) => (*n, true),
                            (None, Some(n)) => (*n, false),
                            (None, None) => return None,
                        };
                        Some(optimizer::session::TakeSavepoint {
                            dir,
                            after_rows,
                            stop,
                        })
                    }),
                    from_savepoint: from_savepoint.as_deref(),
                    allow_non_restored_state: *allow_non_restored_state,
                },
                *quiet,
            ),
            flink::Engine::Flink => (|| {
                if from_savepoint.is_some() || savepoint_dir.is_some() {
                    return Err(Failure::input(
                        "savepoint options are the lab's; they are not passed to Flink",
                    ));
                }
                if from_checkpoint.is_some() {
                    return Err(Failure::input(
                        "--from-checkpoint resumes the lab's own checkpoints; it is not \
                         passed to Flink",
                    ));
                }
                if late.is_some() {
                    return Err(Failure::input(
                        "--late is the lab's: Flink SQL has no side output for late records",
                    ));
                }
                let sets = parse_sets(set)?;
                let sql = read_template(script, param)?;
                let report = flink::run::run_on_flink(
                    flink_rest.as_deref(),
                    &flink::run::FlinkRun {
                        script,
                        sql: &sql,
                        sets: &sets,
                        params: &[],
                        rows: changelog.is_some() || result.is_some(),
                        quiet: *quiet,
                        only_sinks: None,
                    },
                )?;
                flink::run::print_report(
                    script,
                    &report,
                    changelog.as_deref(),
                    result.as_deref(),
                    &output_path,
                )?;
                Ok(())
            })(),
        },
        Command::Flink { command } => flink::dispatch(command).map_err(Failure::from),
        Command::Compare {
            script,
            set,
            flink_set,
            params,
            flink_rest,
            json,
            quiet,
        } => (|| {
            let sets = parse_sets(set)?;
            let flink_sets = parse_flink_sets(flink_set)?;
            let params = template::parse_params(params).map_err(Failure::input)?;
            let equal = flink::compare::compare(&flink::compare::CompareArgs {
                script,
                sets: &sets,
                flink_sets: &flink_sets,
                params: &params,
                rest: flink_rest.as_deref(),
                json: json.as_deref(),
                quiet: *quiet,
            })?;
            if equal {
                Ok(())
            } else {
                Err(Failure {
                    code: exit_code::RESULTS_DIFFER,
                    message: "the results differ".to_string(),
                })
            }
        })(),
        Command::Export {
            script,
            output,
            set,
            params,
        } => (|| {
            let sets = parse_sets(set)?;
            let params = template::parse_params(params).map_err(Failure::input)?;
            let msg = flink::export::export(&flink::export::ExportArgs {
                script,
                out: output,
                sets: &sets,
                params: &params,
            })?;
            outln!("{msg}")?;
            Ok(())
        })(),
        Command::Explain { script, set, param } => (|| {
            let overrides = parse_sets(set)?;
            let sql = read_template(script, param)?;
            let base = script.parent().map(Path::to_path_buf).unwrap_or_default();
            let text = explain_script_in(&sql, &base, &overrides)
                .map_err(|e| Failure::input(e.to_string()))?;
            output::out(&text)?;
            Ok(())
        })(),
        Command::CompilePlan { script, out, set } => (|| {
            let overrides = parse_sets(set)?;
            let sql = read_script(script)?;
            let plan =
                compile_script(&sql, &overrides).map_err(|e| Failure::input(e.to_string()))?;
            // An existing file is refused (bad input); a failed write is
            // a failure of execution.
            write_plan(&plan, out, false)?;
            outln!("plan written to {}", out.display()).map_err(|e| {
                Failure::execution(format_args!("{e}; the plan {} is complete", out.display()))
            })?;
            Ok(())
        })(),
        Command::ExecutePlan { plan, set, quiet } => {
            let dir = plan.parent().map(Path::to_path_buf).unwrap_or_default();
            let name = plan
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let sql = format!("EXECUTE PLAN '{}';", name.replace('\'', "''"));
            let script_path = dir.join("(execute-plan)");
            run_sql(&sql, &script_path, set, RunFiles::default(), *quiet)
        }
        Command::Campaign {
            spec,
            quick,
            resume,
            out,
            save_baseline,
            baseline,
            quiet,
            engine,
            flink_rest,
            flink_set,
        } => (|| {
            campaign::runner::run_campaign(&campaign::args::CampaignArgs {
                spec: spec.clone(),
                quick: *quick,
                resume: *resume,
                out: out.clone(),
                quiet: *quiet,
                save_baseline: save_baseline.clone(),
                baseline: baseline.clone(),
                engine: *engine,
                flink_rest: flink_rest.clone(),
                flink_sets: parse_flink_sets(flink_set)?,
            })?;
            Ok(())
        })(),
        Command::Plot { dir } => (|| {
            let _lock = if dir.is_dir() {
                Some(campaign::lock::ReportLock::acquire(
                    dir,
                    &format!("lab plot {}", dir.display()),
                )?)
            } else {
                None
            };
            if _lock.is_some() {
                files::sweep_temporaries(dir);
            }
            let r = campaign::report::render(dir)?;
            for w in &r.warnings {
                errln!("warning: {w}");
            }
            outln!(
                "redrew {} chart(s) and index.md in {} from {} rows",
                r.charts,
                dir.display(),
                r.rows
            )?;
            Ok(())
        })(),
        Command::Tune {
            script,
            tries,
            repeats,
            set,
            param,
            save_baseline,
            baseline,
            quiet,
            engine,
            flink_rest,
            flink_set,
        } => (|| {
            let sets = parse_sets(set)?;
            let params = template::parse_params(param).map_err(Failure::input)?;
            let flink_sets = parse_flink_sets(flink_set)?;
            let text = campaign::tune::tune(&campaign::tune::TuneArgs {
                script,
                tries,
                sets: &sets,
                params: &params,
                repeats: *repeats,
                quiet: *quiet,
                save_baseline: save_baseline.as_deref(),
                baseline: baseline.as_deref(),
                engine: *engine,
                flink_rest: flink_rest.as_deref(),
                flink_sets: &flink_sets,
            })?;
            output::out(&text)?;
            Ok(())
        })(),
    };
    match outcome {
        // A warning that could not be written is a failed output too.
        Ok(()) if output::stderr_failed() => ExitCode::from(exit_code::EXECUTION_FAILED),
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            errln!("error: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}
