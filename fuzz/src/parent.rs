//! The parent: hands batches of inputs to child processes (several at a
//! time), restarts a child after the input that killed it, and gathers
//! counts per category and the failures, each with its input (saved and,
//! if asked, minimised).

use crate::case::{Category, Input, CATEGORIES};
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How much to run.
#[derive(Clone, Debug)]
pub enum Amount {
    /// So many inputs of each category.
    Counts(Vec<(Category, u64)>),
    /// Until the time is up, the categories in turn by weight.
    For(Duration, Vec<(Category, u64)>),
    /// Saved cases.
    Replay(Vec<PathBuf>),
}

#[derive(Clone, Debug)]
pub struct Options {
    /// The `lab-fuzz` binary (a child is this binary with `child`).
    pub exe: PathBuf,
    pub seed: u64,
    pub amount: Amount,
    /// Children at a time.
    pub jobs: usize,
    /// Inputs per child.
    pub batch: u64,
    /// Time one input may take.
    pub budget: Duration,
    /// Stack of the thread each input runs on (and of every thread the
    /// lab starts in the child).
    pub stack: usize,
    /// Where failures are saved (`<category>/<name>/`), if anywhere.
    pub findings: Option<PathBuf>,
    pub minimize: bool,
    pub progress: bool,
    /// A scratch directory (children work under it).
    pub work: PathBuf,
}

/// What a category's inputs came to.
#[derive(Clone, Debug, Default)]
pub struct Counts {
    pub inputs: u64,
    pub ran: u64,
    pub checked: u64,
    /// Refused as bad input (exit code 2).
    pub refused: u64,
    /// Failed as an execution failure (exit code 3).
    pub failed_run: u64,
    /// Refused errors that say nowhere where (no line, path, flag, key).
    pub unplaced: u64,
    /// Stopped at the harness's row budget.
    pub stopped: u64,
    /// Panics, aborts, stack overflows, allocation failures, hangs.
    pub failures: u64,
    pub micros: u64,
}

/// One input that crashed or hung.
#[derive(Clone, Debug)]
pub struct Failure {
    pub category: Category,
    /// `seed S index I` or the case's path.
    pub origin: String,
    /// `panic`, `stack overflow`, `allocation`, `abort`, `hang`.
    pub kind: String,
    pub detail: String,
    pub input: Option<Input>,
    pub saved: Option<PathBuf>,
}

impl Failure {
    /// What identifies the bug: the kind, and a panic's location.
    pub fn signature(&self) -> String {
        match self.detail.rfind(" at ") {
            Some(i) if self.kind == "panic" => format!("panic{}", &self.detail[i..]),
            _ => self.kind.clone(),
        }
    }
}

#[derive(Debug, Default)]
pub struct Report {
    pub counts: BTreeMap<Category, Counts>,
    pub failures: Vec<Failure>,
    pub elapsed: Duration,
}

impl Report {
    pub fn total(&self) -> u64 {
        self.counts.values().map(|c| c.inputs).sum()
    }

    /// The counts as a table, a line per category and a total.
    pub fn table(&self) -> String {
        let mut s = format!(
            "{:<8} {:>9} {:>8} {:>8} {:>9} {:>7} {:>8} {:>8} {:>9} {:>9}\n",
            "category",
            "inputs",
            "ran",
            "checked",
            "refused",
            "exit 3",
            "no place",
            "stopped",
            "failures",
            "ms/input"
        );
        let mut total = Counts::default();
        for (c, n) in &self.counts {
            s += &row(c.name(), n);
            total.inputs += n.inputs;
            total.ran += n.ran;
            total.checked += n.checked;
            total.refused += n.refused;
            total.failed_run += n.failed_run;
            total.unplaced += n.unplaced;
            total.stopped += n.stopped;
            total.failures += n.failures;
            total.micros += n.micros;
        }
        s += &row("total", &total);
        s
    }
}

fn row(name: &str, n: &Counts) -> String {
    format!(
        "{:<8} {:>9} {:>8} {:>8} {:>9} {:>7} {:>8} {:>8} {:>9} {:>9.2}\n",
        name,
        n.inputs,
        n.ran,
        n.checked,
        n.refused,
        n.failed_run,
        n.unplaced,
        n.stopped,
        n.failures,
        n.micros as f64 / 1000.0 / n.inputs.max(1) as f64
    )
}

/// A batch of work for one child.
#[derive(Clone, Debug)]
enum Job {
    Generated {
        category: Category,
        from: u64,
        count: u64,
    },
    Replay(Vec<PathBuf>),
}

impl Job {
    fn len(&self) -> u64 {
        match self {
            Job::Generated { count, .. } => *count,
            Job::Replay(c) => c.len() as u64,
        }
    }

    /// The part of the job after its first `n` inputs.
    fn after(&self, n: u64) -> Option<Job> {
        if n >= self.len() {
            return None;
        }
        Some(match self {
            Job::Generated {
                category,
                from,
                count,
            } => Job::Generated {
                category: *category,
                from: from + n,
                count: count - n,
            },
            Job::Replay(c) => Job::Replay(c[n as usize..].to_vec()),
        })
    }

    fn category(&self, n: u64) -> Category {
        match self {
            Job::Generated { category, .. } => *category,
            Job::Replay(c) => Input::load(&c[n as usize])
                .map(|i| i.category)
                .unwrap_or(Category::Sql),
        }
    }
}

/// A timed run's state: the next index per category, the weights, the
/// end, and whose turn it is.
struct Timed {
    next: BTreeMap<Category, u64>,
    weights: Vec<(Category, u64)>,
    end: Instant,
    turn: u64,
}

/// Where the jobs come from.
struct Queue {
    fixed: VecDeque<Job>,
    timed: Option<Timed>,
}

impl Queue {
    fn next(&mut self, batch: u64) -> Option<Job> {
        if let Some(j) = self.fixed.pop_front() {
            return Some(j);
        }
        let Timed {
            next,
            weights,
            end,
            turn,
        } = self.timed.as_mut()?;
        if Instant::now() >= *end {
            return None;
        }
        let total: u64 = weights.iter().map(|(_, w)| w).sum();
        let mut t = *turn % total.max(1);
        *turn += 1;
        let category = weights
            .iter()
            .find(|(_, w)| {
                if t < *w {
                    true
                } else {
                    t -= w;
                    false
                }
            })
            .map(|(c, _)| *c)?;
        let from = next.entry(category).or_insert(0);
        let job = Job::Generated {
            category,
            from: *from,
            count: batch,
        };
        *from += batch;
        Some(job)
    }
}

struct Shared {
    queue: Mutex<Queue>,
    report: Mutex<Report>,
    bar: ProgressBar,
}

/// Runs everything `opts` asks for and returns the counts and failures.
pub fn run(opts: &Options) -> Report {
    let start = Instant::now();
    let (queue, total) = match &opts.amount {
        Amount::Counts(counts) => {
            let mut fixed = VecDeque::new();
            for &(category, n) in counts {
                let mut from = 0;
                while from < n {
                    let count = opts.batch.min(n - from);
                    fixed.push_back(Job::Generated {
                        category,
                        from,
                        count,
                    });
                    from += count;
                }
            }
            // Interleave the categories: a slow one does not end alone.
            let mut v: Vec<Job> = fixed.into();
            v.sort_by_key(|j| match j {
                Job::Generated { from, category, .. } => (*from, category.id()),
                Job::Replay(_) => (0, 0),
            });
            let total = counts.iter().map(|(_, n)| n).sum();
            (
                Queue {
                    fixed: v.into(),
                    timed: None,
                },
                Some(total),
            )
        }
        Amount::For(d, weights) => (
            Queue {
                fixed: VecDeque::new(),
                timed: Some(Timed {
                    next: BTreeMap::new(),
                    weights: weights.clone(),
                    end: start + *d,
                    turn: 0,
                }),
            },
            None,
        ),
        Amount::Replay(cases) => (
            Queue {
                fixed: cases.iter().map(|c| Job::Replay(vec![c.clone()])).collect(),
                timed: None,
            },
            Some(cases.len() as u64),
        ),
    };
    let bar = if !opts.progress {
        ProgressBar::hidden()
    } else if let Some(t) = total {
        let b = ProgressBar::new(t);
        b.set_style(
            ProgressStyle::with_template(
                "{bar:30.cyan/blue} {pos}/{len} inputs ({per_sec}, ETA {eta}) {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b
    } else {
        let b = ProgressBar::new_spinner();
        b.set_style(
            ProgressStyle::with_template("{spinner} {pos} inputs ({per_sec}, {elapsed}) {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        b
    };
    let shared = Shared {
        queue: Mutex::new(queue),
        report: Mutex::new(Report::default()),
        bar,
    };
    let _ = std::fs::create_dir_all(&opts.work);
    std::thread::scope(|s| {
        for w in 0..opts.jobs.max(1) {
            let shared = &shared;
            s.spawn(move || worker(opts, shared, w));
        }
    });
    shared.bar.finish_and_clear();
    let mut report = shared.report.into_inner().unwrap_or_default();
    for c in CATEGORIES {
        if matches!(opts.amount, Amount::Replay(_)) {
            continue;
        }
        report.counts.entry(c).or_default();
    }
    report
        .counts
        .retain(|_, n| n.inputs > 0 || !matches!(opts.amount, Amount::Replay(_)));
    save_failures(opts, &mut report.failures);
    report.elapsed = start.elapsed();
    report
}

fn worker(opts: &Options, shared: &Shared, w: usize) {
    let dir = opts.work.join(format!("worker{w}"));
    loop {
        let Some(job) = shared
            .queue
            .lock()
            .ok()
            .and_then(|mut q| q.next(opts.batch))
        else {
            return;
        };
        let mut pending = Some(job);
        while let Some(job) = pending.take() {
            pending = run_child(opts, shared, &dir, &job);
        }
    }
}

fn child_command(opts: &Options, job: &Job, dir: &Path, status: &Path) -> Command {
    let mut cmd = Command::new(&opts.exe);
    cmd.arg("child")
        .arg("--status")
        .arg(status)
        .arg("--work")
        .arg(dir.join("inputs"))
        .arg("--budget-ms")
        .arg(opts.budget.as_millis().to_string())
        .arg("--stack")
        .arg(opts.stack.to_string());
    match job {
        Job::Generated {
            category,
            from,
            count,
        } => {
            cmd.args(["--category", category.name()])
                .arg("--seed")
                .arg(opts.seed.to_string())
                .arg("--from")
                .arg(from.to_string())
                .arg("--count")
                .arg(count.to_string());
        }
        Job::Replay(cases) => {
            cmd.arg("--replay").args(cases);
        }
    }
    // Every thread the lab starts in the child gets the small stack too
    // (the executor's, rayon's); the child's own directory is its working
    // directory (relative state directories land there).
    cmd.env("RUST_MIN_STACK", opts.stack.to_string())
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    cmd
}

/// Runs one child on `job`; returns the rest of the job if the child died
/// before its end.
fn run_child(opts: &Options, shared: &Shared, dir: &Path, job: &Job) -> Option<Job> {
    let _ = std::fs::remove_dir_all(dir);
    if std::fs::create_dir_all(dir).is_err() {
        return None;
    }
    let status = dir.join("status.txt");
    let stderr_path = dir.join("stderr.txt");
    let Ok(stderr) = std::fs::File::create(&stderr_path) else {
        return None;
    };
    let mut cmd = child_command(opts, job, dir, &status);
    cmd.stderr(stderr);
    let exit = match cmd.spawn() {
        Ok(mut child) => {
            // The child's watchdog ends a hang; this is the backstop.
            let limit = opts.budget * (job.len() as u32 + 2) + Duration::from_secs(60);
            let started = Instant::now();
            loop {
                match child.try_wait() {
                    Ok(Some(s)) => break Some(s),
                    Ok(None) if started.elapsed() > limit => {
                        let _ = child.kill();
                        let _ = child.wait();
                        break None;
                    }
                    Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                    Err(_) => break None,
                }
            }
        }
        Err(e) => {
            eprintln!("cannot start {}: {e}", opts.exe.display());
            std::process::exit(70);
        }
    };
    let text = std::fs::read_to_string(&status).unwrap_or_default();
    let mut last_start: Option<u64> = None;
    let mut finished = 0u64;
    let mut hang: Option<(u64, String)> = None;
    let mut report = shared.report.lock().unwrap_or_else(|e| e.into_inner());
    for line in text.lines() {
        let mut parts = line.splitn(3, ' ');
        let (word, n) = (
            parts.next().unwrap_or(""),
            parts.next().and_then(|n| n.parse::<u64>().ok()),
        );
        let Some(n) = n else { continue };
        let rest = parts.next().unwrap_or("");
        match word {
            "start" => last_start = Some(n),
            "done" => {
                let c = report.counts.entry(job.category(n)).or_default();
                c.inputs += 1;
                let f: Vec<&str> = rest.split(' ').collect();
                match f.first().copied().unwrap_or("") {
                    "ran" => c.ran += 1,
                    "checked" => c.checked += 1,
                    "stopped" => c.stopped += 1,
                    "refused2" => c.refused += 1,
                    _ => c.failed_run += 1,
                }
                if f.get(1) == Some(&"0") {
                    c.unplaced += 1;
                }
                c.micros += f.get(2).and_then(|m| m.parse::<u64>().ok()).unwrap_or(0);
                finished = n + 1;
                shared.bar.inc(1);
            }
            "panic" => {
                let c = report.counts.entry(job.category(n)).or_default();
                c.inputs += 1;
                c.failures += 1;
                report
                    .failures
                    .push(failure(opts, job, n, "panic", rest.to_string()));
                finished = n + 1;
                shared.bar.inc(1);
            }
            "hang" => hang = Some((n, format!("no end after {rest} ms"))),
            _ => {}
        }
    }
    let died = match exit {
        Some(s) if s.success() => None,
        _ => last_start.filter(|&n| n >= finished),
    };
    if let Some(n) = died {
        let tail = tail_of(&stderr_path);
        let (kind, detail) = match &hang {
            Some((h, d)) if *h == n => ("hang", d.clone()),
            _ if tail.contains("has overflowed its stack") => ("stack overflow", tail.clone()),
            _ if tail.contains("memory allocation of") => ("allocation", tail.clone()),
            _ => (
                "abort",
                format!(
                    "{} {}",
                    exit.map(|s| s.to_string()).unwrap_or("killed".into()),
                    tail
                ),
            ),
        };
        let c = report.counts.entry(job.category(n)).or_default();
        c.inputs += 1;
        c.failures += 1;
        report.failures.push(failure(opts, job, n, kind, detail));
        shared.bar.inc(1);
        shared
            .bar
            .set_message(format!("{} failure(s)", report.failures.len()));
        return job.after(n + 1);
    }
    if !report.failures.is_empty() {
        shared
            .bar
            .set_message(format!("{} failure(s)", report.failures.len()));
    }
    // A child that ended early without a crash (cannot happen unless it
    // was killed between inputs): the rest again.
    if exit.is_none_or(|s| !s.success()) {
        return job.after(finished.max(last_start.map_or(0, |s| s + 1)));
    }
    None
}

fn tail_of(path: &Path) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let from = text.len().saturating_sub(2000);
    String::from_utf8_lossy(&text[from..])
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join(" | ")
}

fn failure(opts: &Options, job: &Job, n: u64, kind: &str, detail: String) -> Failure {
    let (origin, input) = match job {
        Job::Generated { category, from, .. } => (
            format!("seed {} index {}", opts.seed, from + n),
            // A generator bug must not take the parent down.
            std::panic::catch_unwind(|| crate::gen::generate(*category, opts.seed, from + n)).ok(),
        ),
        Job::Replay(cases) => (
            cases[n as usize].display().to_string(),
            Input::load(&cases[n as usize]).ok(),
        ),
    };
    Failure {
        category: job.category(n),
        origin,
        kind: kind.to_string(),
        detail,
        input,
        saved: None,
    }
}

/// Saves each failure of a generated input under `findings` (minimised if
/// asked), one case per signature and category.
fn save_failures(opts: &Options, failures: &mut [Failure]) {
    let Some(root) = &opts.findings else { return };
    let mut seen = std::collections::HashSet::new();
    for f in failures.iter_mut() {
        if matches!(opts.amount, Amount::Replay(_)) {
            continue;
        }
        let Some(input) = f.input.clone() else {
            continue;
        };
        if !seen.insert((f.category, f.signature())) {
            continue;
        }
        let input = if opts.minimize {
            crate::minimize::minimize(opts, &input, &f.signature())
        } else {
            input
        };
        let name = format!(
            "{}-{}",
            f.kind.replace(' ', "-"),
            f.origin.replace("seed ", "s").replace(" index ", "-i")
        );
        let note = format!(
            "{} ({}), found by lab-fuzz with {}.\n{}\nReplay: cargo run --release -p fuzz --bin lab-fuzz -- replay <this folder>\n",
            f.kind,
            f.category.name(),
            f.origin,
            f.detail
        );
        if let Ok(p) = input.save(root, &name, &note) {
            f.saved = Some(p);
        }
    }
}

/// Runs `cases` (saved cases) and returns their report.
pub fn replay(opts: &Options, cases: Vec<PathBuf>) -> Report {
    let mut o = opts.clone();
    o.amount = Amount::Replay(cases);
    o.findings = None;
    run(&o)
}
