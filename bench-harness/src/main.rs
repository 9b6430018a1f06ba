//! `lab`: the joinlab command line.
//!
//! - `lab run SCRIPT.sql [--set key=value]... [--changelog FILE] [--result FILE]`
//! - `lab explain SCRIPT.sql [--set key=value]...`
//! - `lab campaign SPEC.toml [--quick] [--resume] [--out DIR]`: runs a
//!   campaign (see `campaign/spec.rs` for the format) and writes
//!   `results.csv`, charts and `index.md` to `reports/<name>/`
//! - `lab plot DIR`: redraws a campaign's charts and `index.md`
//! - `lab tune SCRIPT.sql --try key=v1,v2 [--try ...] [--repeats N]`:
//!   compares configurations of one script
//!
//! Bad input (SQL, configuration, files, CSV rows) exits with code 2 and a
//! message that says what and where; a failure of execution (IO, RocksDB,
//! a full disk) says "execution failed" and exits with 3.

mod campaign;
mod plot;
mod summary;

// Small allocations dominate row processing; mimalloc makes them cheap
// (see `operators::alloc` for why not the `mimalloc` crate's allocator).
#[global_allocator]
static GLOBAL: operators::alloc::LabAllocator = operators::alloc::LabAllocator;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use optimizer::session::{
    compile_script, explain_script_in, run_script, write_plan, RunError, RunOptions,
};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "lab",
    version,
    about = "joinlab: a performance lab for streaming SQL joins and aggregations"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compiles the (single) INSERT of a script into a JSON plan whose state
    /// TTLs can be edited (Flink's COMPILE PLAN).
    CompilePlan {
        script: PathBuf,
        /// Where to write the plan.
        #[arg(short, long, value_name = "FILE")]
        output: PathBuf,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// Runs a compiled plan (Flink's EXECUTE PLAN) and prints the summary.
    ExecutePlan {
        plan: PathBuf,
        /// Configuration for the run (backend, parallelism of execution, ...).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        #[arg(long)]
        quiet: bool,
    },
    /// Runs every INSERT of a Flink SQL script and prints a summary.
    Run {
        script: PathBuf,
        /// Configuration override `key=value` (wins over the script's SET).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Writes every row the sink receives as CSV (op column first).
        #[arg(long, value_name = "FILE")]
        changelog: Option<PathBuf>,
        /// Writes the sink's final materialised rows as CSV.
        #[arg(long, value_name = "FILE")]
        result: Option<PathBuf>,
        /// Prints no progress bar.
        #[arg(long)]
        quiet: bool,
    },
    /// Prints the physical plan of every INSERT with changelog modes.
    Explain {
        script: PathBuf,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// Runs a campaign spec (every point × variant × repeat) and writes
    /// results.csv, charts (PNG, SVG) and index.md.
    Campaign {
        spec: PathBuf,
        /// Uses the spec's [quick] values (and one repeat unless it says otherwise).
        #[arg(long)]
        quick: bool,
        /// Keeps the runs of an interrupted campaign (results.csv.partial).
        #[arg(long)]
        resume: bool,
        /// The report directory (default: reports/<name>/).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Prints no progress bar.
        #[arg(long)]
        quiet: bool,
    },
    /// Redraws a campaign's charts and index.md from its results.csv.
    Plot {
        /// A report directory written by `lab campaign`.
        dir: PathBuf,
    },
    /// Runs a script under each combination of --try values, interleaved,
    /// and prints medians with ratios to the first.
    Tune {
        script: PathBuf,
        /// A configuration key and the values to try: `key=v1,v2,...`.
        #[arg(long = "try", value_name = "KEY=V1,V2,...", required = true)]
        tries: Vec<String>,
        /// Runs per variant.
        #[arg(long, default_value_t = 3)]
        repeats: u32,
        /// Configuration for every variant `key=value`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Prints no progress bar.
        #[arg(long)]
        quiet: bool,
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
            code: 2,
            message: message.into(),
        }
    }

    fn execution(message: impl std::fmt::Display) -> Failure {
        Failure {
            code: 3,
            message: format!("execution failed: {message}"),
        }
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

impl From<RunError> for Failure {
    fn from(e: RunError) -> Failure {
        Failure {
            code: e.exit_code() as u8,
            message: e.to_string(),
        }
    }
}

fn parse_sets(sets: &[String]) -> Result<Vec<(String, String)>, Failure> {
    sets.iter()
        .map(|s| match s.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                Ok((k.trim().to_string(), v.trim().to_string()))
            }
            _ => Err(Failure::input(format!("--set '{s}': expected KEY=VALUE"))),
        })
        .collect()
}

fn read_script(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path)
        .map_err(|e| Failure::input(format!("cannot read script {}: {e}", path.display())))
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

fn run(
    script: &Path,
    set: &[String],
    changelog: Option<&Path>,
    result: Option<&Path>,
    quiet: bool,
) -> Result<(), Failure> {
    let sql = read_script(script)?;
    run_sql(&sql, script, set, changelog, result, quiet)
}

/// Runs `sql` as if read from `script` (relative paths resolve beside it).
fn run_sql(
    sql: &str,
    script: &Path,
    set: &[String],
    changelog: Option<&Path>,
    result: Option<&Path>,
    quiet: bool,
) -> Result<(), Failure> {
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
    let outcomes = run_script(
        sql,
        &base_dir,
        &overrides,
        RunOptions {
            keep_changelog: changelog.is_some(),
            materialize: result.is_some(),
        },
        &mut progress,
    );
    bar.finish_and_clear();
    let outcomes = outcomes?;
    let many = outcomes.len() > 1;
    println!("joinlab run {}", script.display());
    for o in &outcomes {
        print!("{}", summary::render(o));
        let columns = o.plan.sink.table.schema.names();
        if let Some(path) = changelog {
            let p = output_path(path, &o.sink, many);
            datasets::csv_write::write_changelog_csv(&p, &columns, &o.changelog)
                .map_err(Failure::execution)?;
            println!("  changelog written to {}", p.display());
        }
        if let Some(path) = result {
            let p = output_path(path, &o.sink, many);
            datasets::csv_write::write_result_csv(
                &p,
                &columns,
                o.report.result.as_deref().unwrap_or_default(),
            )
            .map_err(Failure::execution)?;
            println!("  result written to {}", p.display());
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    // `lab run ... | head` should end quietly, not panic on a closed pipe.
    std::panic::set_hook(Box::new(|info| {
        let msg = info.to_string();
        if msg.contains("Broken pipe") {
            std::process::exit(0);
        }
        eprintln!("{msg}");
    }));
    let cli = Cli::parse();
    let outcome = match &cli.command {
        Command::Run {
            script,
            set,
            changelog,
            result,
            quiet,
        } => run(script, set, changelog.as_deref(), result.as_deref(), *quiet),
        Command::Explain { script, set } => (|| {
            let overrides = parse_sets(set)?;
            let sql = read_script(script)?;
            let base = script.parent().map(Path::to_path_buf).unwrap_or_default();
            let text = explain_script_in(&sql, &base, &overrides)
                .map_err(|e| Failure::input(e.to_string()))?;
            print!("{text}");
            Ok(())
        })(),
        Command::CompilePlan {
            script,
            output,
            set,
        } => (|| {
            let overrides = parse_sets(set)?;
            let sql = read_script(script)?;
            let plan =
                compile_script(&sql, &overrides).map_err(|e| Failure::input(e.to_string()))?;
            write_plan(&plan, output, false).map_err(|e| Failure::input(e.to_string()))?;
            println!("plan written to {}", output.display());
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
            run_sql(&sql, &script_path, set, None, None, *quiet)
        }
        Command::Campaign {
            spec,
            quick,
            resume,
            out,
            quiet,
        } => campaign::runner::run_campaign(&campaign::runner::CampaignArgs {
            spec: spec.clone(),
            quick: *quick,
            resume: *resume,
            out: out.clone(),
            quiet: *quiet,
        })
        .map(|_| ())
        .map_err(Failure::from),
        Command::Plot { dir } => campaign::report::render(dir)
            .map(|r| {
                for w in &r.warnings {
                    eprintln!("warning: {w}");
                }
                println!(
                    "redrew {} chart(s) and index.md in {} from {} rows",
                    r.charts,
                    dir.display(),
                    r.rows
                );
            })
            .map_err(Failure::from),
        Command::Tune {
            script,
            tries,
            repeats,
            set,
            quiet,
        } => (|| {
            let sets = parse_sets(set)?;
            let text = campaign::tune::tune(&campaign::tune::TuneArgs {
                script,
                tries,
                sets: &sets,
                repeats: *repeats,
                quiet: *quiet,
            })?;
            print!("{text}");
            Ok(())
        })(),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("error: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}
