//! Earlier runs of a campaign are kept, never replaced or deleted: before
//! a new run (without `--resume`) writes to a report directory,
//!
//! - a finished run there (`results.csv`, `spec.toml`, `run.toml`,
//!   `index.md`, its charts) moves to `history/<when it finished>/`, a
//!   report directory of its own that `lab plot` can redraw;
//! - an unfinished one (`results.csv.partial` with its `spec.toml` and
//!   `run.toml`) moves to `history/<when it stopped>-unfinished/`.
//!
//! A move is several renames; the results file goes last, so a move cut
//! short by a kill leaves the results where they were, and the next run
//! finds the same target (named by the results file's time) without its
//! results file and completes the move into it.

use super::crash_point;
use super::report_data::{INDEX, RUN_INFO, SPEC_COPY};
use super::results::{PARTIAL, RESULTS};
use super::spec::Spec;
use super::CampaignError;
use std::path::{Path, PathBuf};

/// The folder of a report directory that holds its earlier runs.
pub const HISTORY: &str = "history";

/// Moves the finished run in `out` (if any) to `history/<timestamp>/`
/// and returns where it went.
pub fn keep_previous(out: &Path) -> Result<Option<PathBuf>, CampaignError> {
    let mut files: Vec<String> = vec![INDEX.to_string()];
    files.extend(chart_files(out));
    files.extend([SPEC_COPY.to_string(), RUN_INFO.to_string()]);
    move_run(out, RESULTS, "", &files)
}

/// Moves an unfinished run in `out` (its `results.csv.partial`) to
/// `history/<timestamp>-unfinished/` and returns where it went.
pub fn keep_unfinished(out: &Path) -> Result<Option<PathBuf>, CampaignError> {
    move_run(
        out,
        PARTIAL,
        "-unfinished",
        &[SPEC_COPY.to_string(), RUN_INFO.to_string()],
    )
}

/// Whether a move of the finished run in `out` to `history/` was cut
/// short (its target exists without the results file).
pub fn interrupted_move(out: &Path) -> bool {
    let results = out.join(RESULTS);
    results.exists() && {
        let target = out.join(HISTORY).join(stamp(&results));
        target.exists() && !target.join(RESULTS).exists()
    }
}

/// The UTC time `path` was last written, as a folder name.
fn stamp(path: &Path) -> String {
    let when = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .map(chrono::DateTime::<chrono::Utc>::from)
        .unwrap_or_else(|_| chrono::Utc::now());
    when.format("%Y-%m-%dT%H-%M-%SZ").to_string()
}

/// Moves `files` and then `main` from `out` to a new folder of
/// `history/` named by `main`'s time and `suffix`; nothing when `main` is
/// absent.
fn move_run(
    out: &Path,
    main: &str,
    suffix: &str,
    files: &[String],
) -> Result<Option<PathBuf>, CampaignError> {
    let main_path = out.join(main);
    if !main_path.exists() {
        return Ok(None);
    }
    let stamp = format!("{}{suffix}", stamp(&main_path));
    let history = out.join(HISTORY);
    // A folder of this name without `main` is a move cut short: finish it.
    let mut target = history.join(&stamp);
    let mut n = 2;
    while target.join(main).exists() {
        target = history.join(format!("{stamp}-{n}"));
        n += 1;
    }
    std::fs::create_dir_all(&target).map_err(|e| {
        CampaignError::execution(format!("cannot create {}: {e}", target.display()))
    })?;
    let mut moved = 0;
    for f in files.iter().map(String::as_str).chain([main]) {
        let from = out.join(f);
        if from.exists() {
            std::fs::rename(&from, target.join(f)).map_err(|e| {
                CampaignError::execution(format!(
                    "cannot move {} to {}: {e}",
                    from.display(),
                    target.display()
                ))
            })?;
            moved += 1;
            if moved == 1 {
                crash_point::reached("history");
            }
        }
    }
    Ok(Some(target))
}

/// The chart files of the run in `out`: those its `spec.toml` names, or
/// every PNG and SVG when the spec cannot be read.
fn chart_files(out: &Path) -> Vec<String> {
    if let Ok(spec) = Spec::load(&out.join(SPEC_COPY)) {
        return spec
            .charts
            .iter()
            .flat_map(|c| [format!("{}.png", c.slug), format!("{}.svg", c.slug)])
            .collect();
    }
    std::fs::read_dir(out)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .filter(|n| n.ends_with(".png") || n.ends_with(".svg"))
                .collect()
        })
        .unwrap_or_default()
}
