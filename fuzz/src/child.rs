//! The child process: runs a batch of inputs one after another, each on a
//! thread with a small stack inside `catch_unwind`, and writes what
//! happened to a status file line by line. A panic is caught and recorded;
//! a stack overflow, an allocation failure or an abort kills the process,
//! and the parent learns which input did it from the last `start` line
//! without its `done`; an input that runs past its time budget is recorded
//! by a watchdog, which then aborts the process.
//!
//! Status lines: `start N`, `done N OUTCOME PLACED MICROS`, `panic N
//! MESSAGE`, `hang N MILLIS`; `N` numbers the batch's inputs from 0, and
//! OUTCOME is `ran`, `checked`, `refused2`/`refused3` (the exit code) or
//! `stopped`.

use crate::case::{Category, Input};
use crate::target::{self, Outcome, RowBudget};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What a child runs.
pub enum Batch {
    /// Inputs `from..from + count` of `category` seeded `seed`.
    Generated {
        category: Category,
        seed: u64,
        from: u64,
        count: u64,
    },
    /// Saved cases.
    Replay(Vec<PathBuf>),
}

impl Batch {
    fn len(&self) -> u64 {
        match self {
            Batch::Generated { count, .. } => *count,
            Batch::Replay(cases) => cases.len() as u64,
        }
    }

    fn input(&self, n: u64) -> Result<Input, String> {
        match self {
            Batch::Generated {
                category,
                seed,
                from,
                ..
            } => Ok(crate::gen::generate(*category, *seed, from + n)),
            Batch::Replay(cases) => Input::load(&cases[n as usize]),
        }
    }
}

/// Panics seen while the current input ran (any thread), as
/// `message at file:line:column`.
static PANICS: Mutex<Vec<String>> = Mutex::new(Vec::new());
/// The input running and since when, for the watchdog.
static CURRENT: Mutex<Option<(u64, Instant)>> = Mutex::new(None);

fn record_panics() {
    std::panic::set_hook(Box::new(|info| {
        if info.payload().is::<RowBudget>() {
            return;
        }
        let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
            s.to_string()
        } else if let Some(s) = info.payload().downcast_ref::<String>() {
            s.clone()
        } else {
            "(a panic without a message)".to_string()
        };
        let at = info
            .location()
            .map(|l| format!(" at {}:{}:{}", l.file(), l.line(), l.column()))
            .unwrap_or_default();
        let line: String = format!("{msg}{at}").replace(['\n', '\r'], " ");
        if let Ok(mut p) = PANICS.lock() {
            p.push(line);
        }
    }));
}

struct Status {
    file: std::fs::File,
}

impl Status {
    fn line(&mut self, text: &str) {
        // The parent reads these after a crash: written through at once.
        let _ = self.file.write_all(format!("{text}\n").as_bytes());
        let _ = self.file.flush();
    }
}

fn watchdog(status_path: PathBuf, budget: Duration) {
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(25));
        let over = CURRENT
            .lock()
            .ok()
            .and_then(|c| *c)
            .filter(|(_, since)| since.elapsed() > budget);
        if let Some((n, since)) = over {
            if let Ok(mut f) = std::fs::OpenOptions::new().append(true).open(&status_path) {
                let _ = writeln!(f, "hang {n} {}", since.elapsed().as_millis());
                let _ = f.flush();
            }
            std::process::abort();
        }
    });
}

/// Files every input's directory starts with: what the seeds read.
fn fixtures(dir: &Path) {
    let _ = std::fs::write(dir.join("clicks.csv"), crate::gen::seeds::clicks_csv());
}

fn outcome_word(o: &Outcome) -> String {
    match o {
        Outcome::Ran => "ran".into(),
        Outcome::CheckedOnly => "checked".into(),
        Outcome::Refused { code, .. } => format!("refused{code}"),
        Outcome::Stopped => "stopped".into(),
    }
}

/// Runs `batch` in `work` (a directory of this child's own), writing to
/// `status_path`; each input on a thread with `stack` bytes of stack and
/// at most `budget` of time.
pub fn run(batch: &Batch, work: &Path, status_path: &Path, budget: Duration, stack: usize) {
    record_panics();
    let Ok(file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(status_path)
    else {
        eprintln!("cannot open {}", status_path.display());
        std::process::exit(70);
    };
    let mut status = Status { file };
    watchdog(status_path.to_path_buf(), budget);
    for n in 0..batch.len() {
        status.line(&format!("start {n}"));
        if let Ok(mut c) = CURRENT.lock() {
            *c = Some((n, Instant::now()));
        }
        let started = Instant::now();
        let dir = work.join(format!("in{n}"));
        let _ = std::fs::remove_dir_all(&dir);
        let result = match batch.input(n) {
            Ok(input) => {
                let written = input.write_to(&dir);
                fixtures(&dir);
                match written {
                    Ok(()) => run_one(input, dir.clone(), stack),
                    Err(e) => Err(format!("harness: cannot write the input: {e}")),
                }
            }
            Err(e) => Err(format!("harness: {e}")),
        };
        let panics: Vec<String> = PANICS
            .lock()
            .map(|mut p| p.drain(..).collect())
            .unwrap_or_default();
        if let Ok(mut c) = CURRENT.lock() {
            *c = None;
        }
        let _ = std::fs::remove_dir_all(&dir);
        match (result, panics.first()) {
            (_, Some(p)) => status.line(&format!("panic {n} {p}")),
            (Err(e), None) => status.line(&format!("panic {n} {e}")),
            (Ok(o), None) => {
                let placed = match &o {
                    Outcome::Refused { message, .. } => target::has_place(message) as u8,
                    _ => 1,
                };
                status.line(&format!(
                    "done {n} {} {placed} {}",
                    outcome_word(&o),
                    started.elapsed().as_micros()
                ));
            }
        }
    }
}

/// One input on its own small-stack thread; `Err` for a panic that
/// reached the top.
fn run_one(input: Input, dir: PathBuf, stack: usize) -> Result<Outcome, String> {
    let handle = std::thread::Builder::new()
        .name("fuzz-input".into())
        .stack_size(stack)
        .spawn(move || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| target::run(&input, &dir)))
        });
    let joined = match handle {
        Ok(h) => h.join(),
        Err(e) => return Err(format!("harness: cannot start a thread: {e}")),
    };
    match joined {
        Ok(Ok(o)) => Ok(o),
        Ok(Err(payload)) if payload.is::<RowBudget>() => Ok(Outcome::Stopped),
        Ok(Err(_)) | Err(_) => Err("panicked".into()),
    }
}
