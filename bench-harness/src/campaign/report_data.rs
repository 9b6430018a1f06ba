//! What a campaign report directory holds and how it is read back: its
//! files (`spec.toml`, `run.toml`, `results.csv`, `index.md`) and the
//! results as records indexed by run ([`Data`]). Below the report's
//! drawing ([`super::report`]) and what draws beside it (the engines'
//! agreement, [`super::engines`]; baselines, [`super::baseline`]), so each
//! of them reads the same records without importing the others.

use super::metrics::{metric, Metric};
use super::results::{Table, RESULTS};
use super::spec::{Chart, Spec, LEADING_COLUMNS};
use super::CampaignError;
use crate::stats::{self, Ratio, Spread};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::path::Path;

pub const SPEC_COPY: &str = "spec.toml";
pub const RUN_INFO: &str = "run.toml";
pub const INDEX: &str = "index.md";

/// How the results were produced (`run.toml` of a report).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunInfo {
    pub command: String,
    pub quick: bool,
    /// When the run started (UTC, RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<String>,
    /// The baseline the run was compared with (`--baseline NAME`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
}

/// One row of `results.csv`, parsed.
pub(super) struct Record {
    pub(super) point: usize,
    pub(super) variant: String,
    pub(super) variant_index: usize,
    pub(super) repeat: u32,
    pub(super) sink: String,
    /// Per spec dimension.
    pub(super) params: Vec<String>,
    /// Per metric of [`super::metrics::METRICS`]; `None` when empty.
    pub(super) values: Vec<Option<f64>>,
    /// The run was too short to time ([`stats::too_short`]).
    pub(super) too_short: bool,
    /// `lab` or `flink` (results without the column ran on the lab).
    pub(super) engine: String,
}

pub(super) struct Data {
    pub(super) records: Vec<Record>,
    /// The records of each (point, variant, sink), by index: every lookup
    /// of the tables and charts is one hash probe, so drawing takes time
    /// in proportion to the rows, not to their product with the points.
    pub(super) by_run: HashMap<(usize, String, String), Vec<usize>>,
    /// Sinks in order of first appearance.
    pub(super) sinks: Vec<String>,
    /// (point id, its parameter values), by id.
    pub(super) points: Vec<(usize, Vec<String>)>,
    pub(super) revisions: Vec<String>,
    pub(super) machines: Vec<String>,
    pub(super) repeats: u32,
}

/// The distinct values, in order of first appearance.
pub(super) fn distinct(values: impl Iterator<Item = String>) -> Vec<String> {
    let mut seen = HashSet::new();
    values.filter(|v| seen.insert(v.clone())).collect()
}

impl Data {
    pub(super) fn new(spec: &Spec, table: &Table, path: &Path) -> Result<Data, CampaignError> {
        let col = |name: &str| {
            table.col(name).ok_or_else(|| {
                CampaignError::input(format!(
                    "{}: no column '{name}'; is it the results.csv of this campaign?",
                    path.display()
                ))
            })
        };
        let lead: Vec<usize> = LEADING_COLUMNS
            .iter()
            .map(|c| col(c))
            .collect::<Result<_, _>>()?;
        let dims: Vec<usize> = spec
            .dims
            .iter()
            .map(|d| col(&d.name))
            .collect::<Result<_, _>>()?;
        let metric_cols: Vec<Option<usize>> = super::metrics::METRICS
            .iter()
            .map(|m| table.col(m.name))
            .collect();
        let (rev, cores, model, engine) = (
            table.col("git_revision"),
            table.col("machine_cores"),
            table.col("machine_model"),
            table.col("engine"),
        );
        let mut records = Vec::new();
        for (i, row) in table.rows.iter().enumerate() {
            let line = i + 2;
            let bad =
                |what: &str| CampaignError::input(format!("{}:{line}: {what}", path.display()));
            let point = row[lead[1]]
                .parse()
                .map_err(|_| bad("the point is not a number"))?;
            let repeat = row[lead[3]]
                .parse()
                .map_err(|_| bad("the repeat is not a number"))?;
            let variant = row[lead[2]].clone();
            let variant_index = spec.variant_index(&variant).ok_or_else(|| {
                bad(&format!(
                    "variant '{variant}' is not a variant of spec.toml"
                ))
            })?;
            let mut values = Vec::new();
            for (m, c) in super::metrics::METRICS.iter().zip(&metric_cols) {
                let text = c.map_or("", |c| row[c].as_str());
                values.push(if text.is_empty() {
                    None
                } else {
                    // The lab writes finite numbers; NaN or inf is an edit.
                    match text.parse::<f64>() {
                        Ok(v) if v.is_finite() => Some(v),
                        Ok(_) => {
                            return Err(bad(&format!(
                                "{} = '{text}' is not a finite number",
                                m.name
                            )))
                        }
                        Err(_) => {
                            return Err(bad(&format!("{} = '{text}' is not a number", m.name)))
                        }
                    }
                });
            }
            let of = |name: &str| metric(name).and_then(|m| values[metric_index(m)]);
            let too_short = match (of("wall_ms"), of("source_wait_ms")) {
                (Some(wall), wait) => stats::too_short(wall, wait.unwrap_or(0.0)),
                (None, _) => false,
            };
            records.push(Record {
                point,
                variant,
                variant_index,
                repeat,
                sink: row[lead[4]].clone(),
                params: dims.iter().map(|&c| row[c].clone()).collect(),
                values,
                too_short,
                engine: engine.map_or("lab".to_string(), |c| row[c].clone()),
            });
        }
        records.sort_by_key(|r| (r.point, r.repeat, r.variant_index));
        let sinks = distinct(records.iter().map(|r| r.sink.clone()));
        let mut points: Vec<(usize, Vec<String>)> = Vec::new();
        let mut seen = HashSet::new();
        let mut by_run: HashMap<(usize, String, String), Vec<usize>> = HashMap::new();
        for (i, r) in records.iter().enumerate() {
            if seen.insert(r.point) {
                points.push((r.point, r.params.clone()));
            }
            by_run
                .entry((r.point, r.variant.clone(), r.sink.clone()))
                .or_default()
                .push(i);
        }
        let revisions = distinct(
            table
                .rows
                .iter()
                .map(|r| rev.map_or("unknown".to_string(), |c| r[c].clone())),
        );
        let machines = distinct(table.rows.iter().map(|r| {
            let cores = cores.map_or("?".to_string(), |c| r[c].clone());
            let model = model.map_or("unknown".to_string(), |c| r[c].clone());
            format!("{cores} cores, {model}")
        }));
        let repeats = records.iter().map(|r| r.repeat).max().unwrap_or(0);
        Ok(Data {
            records,
            by_run,
            sinks,
            points,
            revisions,
            machines,
            repeats,
        })
    }

    pub(super) fn sink_of(&self, chart: &Chart) -> String {
        chart
            .sink
            .clone()
            .or_else(|| self.sinks.first().cloned())
            .unwrap_or_default()
    }

    /// The engine `variant` ran on (`lab` or `flink`), if it ran.
    pub(super) fn engine_of(&self, variant: &str) -> Option<&str> {
        self.records
            .iter()
            .find(|r| r.variant == variant)
            .map(|r| r.engine.as_str())
    }

    /// The runs of one point, variant and sink: (repeat, value of `metric`).
    pub(super) fn runs(
        &self,
        point: usize,
        variant: &str,
        sink: &str,
        metric: &Metric,
    ) -> Vec<(u32, f64)> {
        let mi = metric_index(metric);
        self.run_records(point, variant, sink)
            .filter_map(|r| r.values[mi].map(|v| (r.repeat, v)))
            .collect()
    }

    /// The records of one point, variant and sink.
    pub(super) fn run_records(
        &self,
        point: usize,
        variant: &str,
        sink: &str,
    ) -> impl Iterator<Item = &Record> {
        self.by_run
            .get(&(point, variant.to_string(), sink.to_string()))
            .into_iter()
            .flatten()
            .map(|&i| &self.records[i])
    }

    pub(super) fn values(&self, point: usize, variant: &str, sink: &str, m: &Metric) -> Vec<f64> {
        self.runs(point, variant, sink, m)
            .into_iter()
            .map(|(_, v)| v)
            .collect()
    }

    /// Median and min–max of `metric` for one point, variant and sink.
    pub(super) fn spread(
        &self,
        point: usize,
        variant: &str,
        sink: &str,
        metric: &Metric,
    ) -> Option<Spread> {
        Spread::of(&self.values(point, variant, sink, metric))
    }

    /// Whether a run of this point, variant and sink was too short to time.
    pub(super) fn too_short(&self, point: usize, variant: &str, sink: &str) -> bool {
        self.run_records(point, variant, sink).any(|r| r.too_short)
    }

    /// `variant` over `base` at one point, runs paired by repeat.
    pub(super) fn ratio(
        &self,
        point: usize,
        base: &str,
        variant: &str,
        sink: &str,
        m: &Metric,
    ) -> Option<Ratio> {
        let a = self.runs(point, base, sink, m);
        let b = self.runs(point, variant, sink, m);
        let by_repeat: HashMap<u32, f64> = b.iter().copied().collect();
        let paired: Vec<(f64, f64)> = a
            .iter()
            .filter_map(|(ra, va)| by_repeat.get(ra).map(|vb| (*va, *vb)))
            .collect();
        if paired.len() == a.len() && paired.len() == b.len() {
            let (xa, xb): (Vec<f64>, Vec<f64>) = paired.into_iter().unzip();
            stats::ratio_paired(&xa, &xb)
        } else {
            let xa: Vec<f64> = a.iter().map(|(_, v)| *v).collect();
            let xb: Vec<f64> = b.iter().map(|(_, v)| *v).collect();
            stats::ratio_independent(&xa, &xb)
        }
    }

    /// Runs, of every point, variant and sink, that were too short to time.
    pub(super) fn short_runs(&self) -> usize {
        self.records.iter().filter(|r| r.too_short).count()
    }
}

pub(super) fn metric_index(m: &Metric) -> usize {
    super::metrics::METRICS
        .iter()
        .position(|x| x.name == m.name)
        .unwrap_or(0)
}

/// A point's parameters as `dim=value, ...`.
pub(super) fn point_label(spec: &Spec, params: &[String]) -> String {
    spec.dims
        .iter()
        .zip(params)
        .map(|(d, v)| format!("{}={v}", d.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A report directory's spec, run information and results.
pub(super) fn load(dir: &Path) -> Result<(Spec, Option<RunInfo>, Table, Data), CampaignError> {
    let spec_path = dir.join(SPEC_COPY);
    if !spec_path.exists() {
        return Err(CampaignError::input(format!(
            "{} has no {SPEC_COPY}: expected a report directory written by `lab campaign`",
            dir.display()
        )));
    }
    let spec = Spec::load(&spec_path)?;
    let results_path = dir.join(RESULTS);
    if !results_path.exists() {
        let partial = dir.join(super::results::PARTIAL);
        let hint = if partial.exists() {
            format!(
                "; {} is from a campaign that did not finish: finish it with \
                 `lab campaign SPEC --resume --out {}`",
                partial.display(),
                dir.display()
            )
        } else {
            String::new()
        };
        return Err(CampaignError::input(format!(
            "{} has no {RESULTS}{hint}",
            dir.display()
        )));
    }
    let info_path = dir.join(RUN_INFO);
    let info: Option<RunInfo> = if info_path.exists() {
        let text = std::fs::read_to_string(&info_path).map_err(|e| {
            CampaignError::input(format!("cannot read {}: {e}", info_path.display()))
        })?;
        Some(toml::from_str(&text).map_err(|e| {
            CampaignError::input(format!("{}: {}", info_path.display(), e.message()))
        })?)
    } else {
        None
    };
    let table = Table::read(&results_path)?;
    let data = Data::new(&spec, &table, &results_path)?;
    Ok((spec, info, table, data))
}
