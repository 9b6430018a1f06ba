//! `lab-fuzz`: the lab's fuzz harness (see `docs/fuzzing.md`).
//!
//! - `lab-fuzz run --inputs N | --duration 1h [--seed S] [--jobs J]
//!   [--findings DIR]`: generated inputs of every category; prints counts
//!   per category and each failure; exits 1 when there is one.
//! - `lab-fuzz replay CASE...`: saved cases (a case folder, or a folder of
//!   them such as `fuzz/corpus`).
//! - `lab-fuzz show CATEGORY SEED INDEX [--out DIR]`: one generated input.

use clap::{Parser, Subcommand};
use fuzz::case::{cases_under, Category, Input, CATEGORIES};
use fuzz::child::{self, Batch};
use fuzz::parent::{self, Amount, Options};
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// The system allocator, refusing what no fuzz input should take: one
/// block over 1 GiB, or over 4 GiB live. A refusal is an allocation
/// failure (the process aborts with "memory allocation of N bytes
/// failed"), which the parent reports as a failure of the input.
struct Bounded;

const MAX_BLOCK: usize = 1 << 30;
const MAX_LIVE: usize = 4 << 30;
static LIVE: AtomicUsize = AtomicUsize::new(0);

fn admit(size: usize) -> bool {
    size <= MAX_BLOCK && LIVE.fetch_add(size, Ordering::Relaxed) + size <= MAX_LIVE || {
        if size <= MAX_BLOCK {
            LIVE.fetch_sub(size, Ordering::Relaxed);
        }
        false
    }
}

// SAFETY: every block comes from `System` with the caller's layout; the
// counter only decides whether to ask for it.
unsafe impl GlobalAlloc for Bounded {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !admit(layout.size()) {
            return std::ptr::null_mut();
        }
        let p = System.alloc(layout);
        if p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !admit(layout.size()) {
            return std::ptr::null_mut();
        }
        let p = System.alloc_zeroed(layout);
        if p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() && !admit(new_size - layout.size()) {
            return std::ptr::null_mut();
        }
        let p = System.realloc(ptr, layout, new_size);
        if p.is_null() {
            if new_size > layout.size() {
                LIVE.fetch_sub(new_size - layout.size(), Ordering::Relaxed);
            }
        } else if new_size < layout.size() {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Bounded = Bounded;

#[derive(Parser)]
#[command(name = "lab-fuzz", about = "The lab's fuzz harness (docs/fuzzing.md)")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(clap::Args, Clone)]
struct Common {
    /// Child processes at a time (default: the cores, at most 4).
    #[arg(long)]
    jobs: Option<usize>,
    /// Time one input may take before it counts as a hang, in seconds.
    #[arg(long, default_value_t = 20)]
    budget: u64,
    /// Stack of the thread each input runs on, in KiB.
    #[arg(long, default_value_t = fuzz::STACK_KIB)]
    stack_kib: usize,
    /// Prints no progress bar.
    #[arg(long)]
    quiet: bool,
}

#[derive(Subcommand)]
enum Cmd {
    /// Generated inputs of every category.
    Run {
        /// Inputs in all (split across the categories by --weights).
        #[arg(long, conflicts_with = "duration")]
        inputs: Option<u64>,
        /// Runs until this much time has passed: `3600`, `90s`, `30m`, `1h`.
        #[arg(long)]
        duration: Option<String>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Share of each category: `sql=40,csv=15,...`.
        #[arg(long, default_value = fuzz::WEIGHTS)]
        weights: String,
        /// Inputs per child process.
        #[arg(long, default_value_t = 500)]
        batch: u64,
        /// Saves each failure (minimised) here as a case.
        #[arg(long, value_name = "DIR")]
        findings: Option<PathBuf>,
        /// Saves failures as found, without minimising them.
        #[arg(long)]
        no_minimize: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Runs saved cases (case folders, or folders of them).
    Replay {
        cases: Vec<PathBuf>,
        #[command(flatten)]
        common: Common,
    },
    /// Writes one generated input to a folder (or lists its files).
    Show {
        category: String,
        seed: u64,
        index: u64,
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// A child process (started by `run` and `replay`).
    #[command(hide = true)]
    Child {
        #[arg(long)]
        status: PathBuf,
        #[arg(long)]
        work: PathBuf,
        #[arg(long)]
        budget_ms: u64,
        #[arg(long)]
        stack: usize,
        #[arg(long)]
        category: Option<String>,
        #[arg(long, default_value_t = 0)]
        seed: u64,
        #[arg(long, default_value_t = 0)]
        from: u64,
        #[arg(long, default_value_t = 0)]
        count: u64,
        #[arg(long, num_args = 1..)]
        replay: Vec<PathBuf>,
    },
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (n, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = n
        .parse()
        .map_err(|_| format!("--duration '{s}': expected e.g. 3600, 90s, 30m, 1h"))?;
    let secs = match unit.trim() {
        "" | "s" => n,
        "m" | "min" => n * 60,
        "h" => n * 3600,
        _ => {
            return Err(format!(
                "--duration '{s}': expected e.g. 3600, 90s, 30m, 1h"
            ))
        }
    };
    Ok(Duration::from_secs(secs))
}

/// The scratch directory of this run, `lab-fuzz-<pid>-work` in the
/// temporary directory; those of runs that were killed go first.
fn work_dir() -> PathBuf {
    let tmp = std::env::temp_dir();
    operators::debris::sweep_dirs(&tmp, "lab-fuzz-");
    tmp.join(format!("lab-fuzz-{}-work", std::process::id()))
}

fn options(common: &Common, amount: Amount) -> Options {
    Options {
        exe: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("lab-fuzz")),
        seed: 1,
        amount,
        jobs: common.jobs.unwrap_or_else(fuzz::default_jobs),
        batch: 500,
        budget: Duration::from_secs(common.budget.max(1)),
        stack: common.stack_kib * 1024,
        findings: None,
        minimize: false,
        progress: !common.quiet,
        work: work_dir(),
    }
}

fn finish(opts: &Options, report: &parent::Report) -> ExitCode {
    let _ = std::fs::remove_dir_all(&opts.work);
    print!("{}", fuzz::describe(report));
    if report.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Cmd::Child {
            status,
            work,
            budget_ms,
            stack,
            category,
            seed,
            from,
            count,
            replay,
        } => {
            let batch = match category.as_deref().and_then(Category::from_name) {
                Some(category) => Batch::Generated {
                    category,
                    seed,
                    from,
                    count,
                },
                None => Batch::Replay(replay),
            };
            let _ = std::fs::create_dir_all(&work);
            child::run(
                &batch,
                &work,
                &status,
                Duration::from_millis(budget_ms),
                stack,
            );
            ExitCode::SUCCESS
        }
        Cmd::Run {
            inputs,
            duration,
            seed,
            weights,
            batch,
            findings,
            no_minimize,
            common,
        } => {
            let weights = match fuzz::parse_weights(&weights) {
                Ok(w) => w,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            let amount = match (inputs, duration) {
                (_, Some(d)) => match parse_duration(&d) {
                    Ok(d) => Amount::For(d, weights),
                    Err(e) => {
                        eprintln!("error: {e}");
                        return ExitCode::from(2);
                    }
                },
                (n, None) => Amount::Counts(fuzz::split_counts(n.unwrap_or(10_000), &weights)),
            };
            let mut opts = options(&common, amount);
            opts.seed = seed;
            opts.batch = batch.max(1);
            opts.findings = findings;
            opts.minimize = !no_minimize;
            let report = parent::run(&opts);
            finish(&opts, &report)
        }
        Cmd::Replay { cases, common } => {
            let mut all = Vec::new();
            for c in cases {
                // Children work in their own directories: absolute paths.
                let c = std::path::absolute(&c).unwrap_or(c);
                if Input::load(&c).is_ok() {
                    all.push(c);
                } else {
                    all.extend(cases_under(&c));
                }
            }
            let opts = options(&common, Amount::Replay(Vec::new()));
            let report = parent::replay(&opts, all);
            finish(&opts, &report)
        }
        Cmd::Show {
            category,
            seed,
            index,
            out,
        } => {
            let Some(c) = Category::from_name(&category) else {
                eprintln!(
                    "error: unknown category '{category}' (one of {})",
                    CATEGORIES.map(|c| c.name()).join(", ")
                );
                return ExitCode::from(2);
            };
            let input = fuzz::gen::generate(c, seed, index);
            match out {
                Some(dir) => {
                    if let Err(e) = input.write_to(&dir) {
                        eprintln!("error: {}: {e}", dir.display());
                        return ExitCode::from(3);
                    }
                }
                None => {
                    for (name, bytes) in &input.files {
                        println!("=== {name} ({} bytes)", bytes.len());
                        println!(
                            "{}",
                            String::from_utf8_lossy(&bytes[..bytes.len().min(4000)])
                        );
                    }
                }
            }
            ExitCode::SUCCESS
        }
    }
}
