//! Named baselines, as criterion keeps them: `--save-baseline NAME` copies
//! a finished run's `results.csv`, `spec.toml` and `run.toml` to
//! `baselines/NAME/` in the report directory; `--baseline NAME` compares a
//! new run with it, per point, variant and metric of the tables:
//! `change: -12% [-15%, -9%]`, the median now over the median then with a
//! 95% bootstrap interval (the two sides ran in separate sessions, so each
//! is resampled on its own), and says "no change detected" when the
//! interval contains 0.

use super::cells;
use super::metrics::Metric;
use super::report_data::{self, Data, RUN_INFO, SPEC_COPY};
use super::results::RESULTS;
use super::spec::Spec;
use super::CampaignError;
use crate::stats::{self, Ratio};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The folder of a report directory that holds its baselines.
pub const BASELINES: &str = "baselines";

/// Where baseline `name` of the report in `out` lives.
pub fn dir(out: &Path, name: &str) -> PathBuf {
    out.join(BASELINES).join(name)
}

/// A baseline name: letters, digits, `_`, `-`, `.` (it names a folder).
pub fn check_name(flag: &str, name: &str) -> Result<(), CampaignError> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if ok {
        Ok(())
    } else {
        Err(CampaignError::input(format!(
            "{flag} '{name}': expected a name of letters, digits, '_', '-' or '.'"
        )))
    }
}

/// The names of the baselines saved in `out`, sorted.
fn saved(out: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(out.join(BASELINES))
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter(|e| e.path().join(RESULTS).exists())
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Puts back baseline `name` when a `--save-baseline` that replaced it
/// was killed between moving the old one aside (`.NAME.old`) and moving
/// the new one in.
fn recover(out: &Path, name: &str) -> Result<(), CampaignError> {
    let target = dir(out, name);
    let old = out.join(BASELINES).join(format!(".{name}.old"));
    if !target.exists() && old.join(RESULTS).exists() {
        std::fs::rename(&old, &target).map_err(|e| {
            CampaignError::execution(format!(
                "cannot put back baseline {} from {}: {e}",
                target.display(),
                old.display()
            ))
        })?;
    }
    Ok(())
}

/// Checks, before anything runs, that baseline `name` exists in `out`.
pub fn require(out: &Path, name: &str) -> Result<(), CampaignError> {
    check_name("--baseline", name)?;
    recover(out, name)?;
    if dir(out, name).join(RESULTS).exists() {
        return Ok(());
    }
    let names = saved(out);
    Err(CampaignError::input(format!(
        "--baseline {name}: no baseline '{name}' in {}; {}",
        out.join(BASELINES).display(),
        if names.is_empty() {
            "save one first with --save-baseline NAME".to_string()
        } else {
            format!("saved baselines: {}", names.join(", "))
        }
    )))
}

/// Copies the finished run in `out` to baseline `name`; an earlier
/// baseline of that name is replaced, which the returned message says.
pub fn save(out: &Path, name: &str) -> Result<String, CampaignError> {
    let target = dir(out, name);
    let tmp = out.join(BASELINES).join(format!(".{name}.tmp"));
    let old = out.join(BASELINES).join(format!(".{name}.old"));
    let io = |what: &str, p: &Path, e: std::io::Error| {
        CampaignError::execution(format!("cannot {what} {}: {e}", p.display()))
    };
    recover(out, name)?;
    for p in [&tmp, &old] {
        if p.exists() {
            std::fs::remove_dir_all(p).map_err(|e| io("remove", p, e))?;
        }
    }
    std::fs::create_dir_all(&tmp).map_err(|e| io("create", &tmp, e))?;
    for f in [RESULTS, SPEC_COPY, RUN_INFO] {
        let from = out.join(f);
        if from.exists() {
            std::fs::copy(&from, tmp.join(f)).map_err(|e| io("copy", &from, e))?;
        }
    }
    let replaced = target.exists();
    if replaced {
        std::fs::rename(&target, &old).map_err(|e| io("move", &target, e))?;
        super::crash_point::reached("baseline");
    }
    std::fs::rename(&tmp, &target).map_err(|e| io("write", &target, e))?;
    if replaced {
        std::fs::remove_dir_all(&old).map_err(|e| io("remove", &old, e))?;
        Ok(format!(
            "replaced baseline '{name}' with this run ({})",
            target.display()
        ))
    } else {
        Ok(format!(
            "saved this run as baseline '{name}' ({})",
            target.display()
        ))
    }
}

/// Baseline `name` of the report in `out`: its spec and results.
pub(super) fn load(out: &Path, name: &str) -> Result<(Spec, Data), CampaignError> {
    require(out, name)?;
    let (spec, _, _, data) = report_data::load(&dir(out, name))?;
    Ok((spec, data))
}

/// One line of a comparison.
pub struct ChangeRow {
    pub point: String,
    pub variant: String,
    pub metric: String,
    /// Now over then; `None` with the reason in `note`.
    pub ratio: Option<(Ratio, &'static Metric)>,
    pub note: String,
}

impl ChangeRow {
    fn change(&self) -> String {
        self.ratio
            .as_ref()
            .map_or_else(String::new, |(r, _)| cells::change(r))
    }

    fn verdict(&self) -> String {
        match &self.ratio {
            Some((r, m)) => cells::change_verdict(r, m).to_string(),
            None => self.note.clone(),
        }
    }
}

/// A run compared with a baseline.
pub struct Changes {
    pub name: String,
    pub rows: Vec<ChangeRow>,
}

impl Changes {
    /// For the terminal: a block per point, aligned.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "change against baseline '{}' (median now over median then [95% interval]):",
            self.name
        );
        let wv = self.rows.iter().map(|r| r.variant.chars().count()).max();
        let wm = self.rows.iter().map(|r| r.metric.chars().count()).max();
        let wc = self.rows.iter().map(|r| r.change().chars().count()).max();
        let (wv, wm, wc) = (wv.unwrap_or(0), wm.unwrap_or(0), wc.unwrap_or(0));
        let mut point = None;
        for r in &self.rows {
            if point != Some(&r.point) {
                let _ = writeln!(s, "{}", r.point);
                point = Some(&r.point);
            }
            let line = format!(
                "  {:<wv$}  {:<wm$}  {:<wc$}  {}",
                r.variant,
                r.metric,
                r.change(),
                r.verdict()
            );
            let _ = writeln!(s, "{}", line.trim_end());
        }
        s
    }

    /// For `index.md`: one table.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "Median now over median then, with its 95% bootstrap interval.\n"
        );
        let _ = writeln!(s, "| point | variant | metric | change | |");
        let _ = writeln!(s, "|---|---|---|---:|---|");
        for r in &self.rows {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                r.point.replace('|', "\\|"),
                r.variant,
                r.metric,
                r.change().trim_start_matches("change: "),
                r.verdict()
            );
        }
        s
    }
}

/// The change of every point, variant and metric of `metrics` from the
/// baseline to this run; points match by their parameter values.
pub(super) fn compare(
    spec: &Spec,
    data: &Data,
    base_spec: &Spec,
    base: &Data,
    metrics: &[(String, &'static Metric)],
) -> Result<Vec<ChangeRow>, String> {
    let dims: Vec<&str> = spec.dims.iter().map(|d| d.name.as_str()).collect();
    let base_dims: Vec<&str> = base_spec.dims.iter().map(|d| d.name.as_str()).collect();
    if dims != base_dims {
        return Err(format!(
            "its sweep dimensions ({}) differ from this campaign's ({}): nothing to compare",
            base_dims.join(", "),
            dims.join(", ")
        ));
    }
    let many_sinks = data.sinks.len() > 1;
    let base_points: std::collections::HashMap<&Vec<String>, usize> =
        base.points.iter().rev().map(|(i, p)| (p, *i)).collect();
    let mut rows = Vec::new();
    for (id, params) in &data.points {
        let label = report_data::point_label(spec, params);
        let point = if label.is_empty() {
            format!("point {id}")
        } else {
            format!("point {id}: {label}")
        };
        let base_id = base_points.get(params).copied();
        for v in &spec.variants {
            for (sink, m) in metrics {
                let now = data.values(*id, &v.name, sink, m);
                if now.is_empty() {
                    continue;
                }
                let then = base_id
                    .map(|b| base.values(b, &v.name, sink, m))
                    .unwrap_or_default();
                let ratio = stats::ratio_independent(&then, &now);
                let note = if base_id.is_none() {
                    "the baseline has no run of this point"
                } else if then.is_empty() {
                    "the baseline has no run of this variant"
                } else {
                    "no ratio: the baseline's median is 0"
                };
                rows.push(ChangeRow {
                    point: point.clone(),
                    variant: v.name.clone(),
                    metric: if many_sinks {
                        format!("{sink}: {}", m.axis_label())
                    } else {
                        m.axis_label()
                    },
                    ratio: ratio.map(|r| (r, *m)),
                    note: note.to_string(),
                });
            }
        }
    }
    Ok(rows)
}
