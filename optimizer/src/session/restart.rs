//! Restart strategies (`restart-strategy.*`), as Flink's: a run whose
//! execution fails (an injected fault, `lab.fault.*`; an IO or RocksDB
//! error) starts again from the latest completed checkpoint, or from the
//! start when there is none, after the strategy's delay, as many times as
//! it allows. Bad input is never retried: it would fail the same way.
//!
//! An injected fault strikes once, in the first attempt (a transient
//! failure, as a lost machine); what a restart meets again is a failure
//! that persists.
//!
//! A restarted attempt resumes as `--from-checkpoint latest` does, so its
//! output files end as an uninterrupted run's. What the outcome holds in
//! memory is stitched the same way: each failed attempt's changelog up to
//! what the checkpoint it left committed, then the next attempt's.

use super::{checkpointing, run_job, FromCheckpoint, InsertOutcome, RunError, RunOptions};
use crate::config::Config;
use crate::physical::job::SourceProvider;
use crate::physical::PhysicalPlan;
use crate::sql::Script;
use operators::changelog::Change;
use operators::checkpoint::Checkpoint;
use std::path::Path;

/// Rows each sink had received when the checkpoint a run starts from was
/// taken (none: the run starts from the beginning).
fn committed_rows(from: Option<FromCheckpoint>, config: &Config, sinks: usize) -> Vec<u64> {
    let path = match from {
        None => return vec![0; sinks],
        Some(FromCheckpoint::Path(p)) => p.to_path_buf(),
        Some(FromCheckpoint::Latest) => match checkpointing(config).map(|c| c.store.latest()) {
            Some(Ok(p)) => p,
            _ => return vec![0; sinks],
        },
    };
    let file = if path.is_dir() {
        path.join("_metadata")
    } else {
        path
    };
    let read = std::fs::read(&file)
        .ok()
        .and_then(|b| Checkpoint::decode(&b).ok());
    let mut rows: Vec<u64> = read
        .map(|c| c.sinks.iter().map(|s| s.counts.iter().sum()).collect())
        .unwrap_or_default();
    rows.resize(sinks, 0);
    rows
}

/// [`run_job`] under the configured restart strategy.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_restarting(
    script: &Script,
    plans: Vec<PhysicalPlan>,
    compiled: bool,
    config: Config,
    sources: &dyn SourceProvider,
    base_dir: &Path,
    options: RunOptions<'_>,
    progress: &mut dyn FnMut(&str, u64),
) -> Result<Vec<InsertOutcome>, RunError> {
    let (attempts, delay) = config.restart_strategy().unwrap_or_default();
    // A transient fault: it strikes the first attempt only.
    let mut fault = config.fault();
    let sinks = plans.len();
    let mut options = options;
    // What the failed attempts' sinks received that a checkpoint kept.
    let mut kept: Vec<Vec<Change>> = vec![Vec::new(); sinks];
    let mut restarts = 0u32;
    loop {
        let start = committed_rows(options.from_checkpoint, &config, sinks);
        let mut failed: Vec<Vec<Change>> = Vec::new();
        let attempt = run_job(
            script,
            plans.clone(),
            compiled,
            config.clone(),
            sources,
            base_dir,
            options,
            progress,
            fault.take().as_ref(),
            restarts,
            &mut failed,
        );
        match attempt {
            Ok(mut outcomes) => {
                for (o, before) in outcomes.iter_mut().zip(kept) {
                    if !before.is_empty() {
                        let rest = std::mem::replace(&mut o.changelog, before);
                        o.changelog.extend(rest);
                    }
                }
                return Ok(outcomes);
            }
            Err(RunError::Execution(e)) if restarts < attempts => {
                let latest = checkpointing(&config).and_then(|c| c.store.latest().ok());
                let resume = latest.is_some().then_some(FromCheckpoint::Latest);
                let done = committed_rows(resume, &config, sinks);
                for (k, rows) in failed.into_iter().enumerate() {
                    if resume.is_none() {
                        kept[k].clear();
                        continue;
                    }
                    let n = done[k].saturating_sub(start[k]) as usize;
                    kept[k].extend(rows.into_iter().take(n));
                }
                restarts += 1;
                progress(&format!("restart {restarts} after: {e}"), 0);
                std::thread::sleep(delay);
                options.from_checkpoint = resume;
            }
            Err(RunError::Execution(e)) if restarts > 0 => {
                return Err(RunError::Execution(format!(
                    "{e} (after {restarts} restart(s) by restart-strategy.type = fixed-delay)"
                )))
            }
            Err(e) => return Err(e),
        }
    }
}
