//! Earlier runs of a campaign are kept, never replaced: before a new run
//! writes to a report directory that holds a finished one, that run's
//! files (`results.csv`, `spec.toml`, `run.toml`, `index.md`, its charts)
//! move to `history/<when it finished>/` there, a report directory of its
//! own that `lab plot` can redraw.

use super::report::{INDEX, RUN_INFO, SPEC_COPY};
use super::results::RESULTS;
use super::spec::Spec;
use super::CampaignError;
use std::path::{Path, PathBuf};

/// The folder of a report directory that holds its earlier runs.
pub const HISTORY: &str = "history";

/// Moves the finished run in `out` (if any) to `history/<timestamp>/`
/// and returns where it went.
pub fn keep_previous(out: &Path) -> Result<Option<PathBuf>, CampaignError> {
    let results = out.join(RESULTS);
    if !results.exists() {
        return Ok(None);
    }
    let finished = std::fs::metadata(&results)
        .and_then(|m| m.modified())
        .map(chrono::DateTime::<chrono::Utc>::from)
        .unwrap_or_else(|_| chrono::Utc::now());
    let stamp = finished.format("%Y-%m-%dT%H-%M-%SZ").to_string();
    let history = out.join(HISTORY);
    let mut target = history.join(&stamp);
    let mut n = 2;
    while target.exists() {
        target = history.join(format!("{stamp}-{n}"));
        n += 1;
    }
    std::fs::create_dir_all(&target).map_err(|e| {
        CampaignError::execution(format!("cannot create {}: {e}", target.display()))
    })?;
    let mut files: Vec<String> = [RESULTS, SPEC_COPY, RUN_INFO, INDEX]
        .iter()
        .map(|s| s.to_string())
        .collect();
    files.extend(chart_files(out));
    for f in files {
        let from = out.join(&f);
        if from.exists() {
            std::fs::rename(&from, target.join(&f)).map_err(|e| {
                CampaignError::execution(format!(
                    "cannot move {} to {}: {e}",
                    from.display(),
                    target.display()
                ))
            })?;
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
