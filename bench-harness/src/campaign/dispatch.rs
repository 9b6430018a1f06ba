//! Running one variant of a campaign at one point on its engine, and what
//! each sink measured: the lab's `run_script`, or a Flink cluster through
//! [`crate::flink::campaign`] (opened once, before the first run, when a
//! variant runs on Flink). A variant with `sinks` runs only those INSERTs,
//! on either engine ([`crate::flink::rewrite::keep_sinks`]).

use super::args::CampaignArgs;
use super::machine;
use super::metrics::{csv_value, Sample, METRICS};
use super::spec::{Point, ScriptTemplate, Spec, Variant};
use super::CampaignError;
use crate::flink::campaign::{FlinkRunner, FlinkScriptRun};
use crate::flink::Engine;
use indicatif::ProgressBar;
use optimizer::config::Config;
use optimizer::session::{run_script, RunOptions};
use std::path::Path;

/// What one run measured for one sink: its metrics as `results.csv`
/// writes them, and the configuration it ran with.
pub(super) struct Measured {
    pub sink: String,
    pub engine: Engine,
    pub metrics: Vec<String>,
    pub config: Config,
}

/// `--flink-rest`, when a variant runs on Flink: a well-formed address
/// where a Flink REST API answers. Checked before the report directory is
/// made, so that a cluster that does not answer leaves nothing behind.
pub(super) fn check_flink_rest(spec: &Spec, args: &CampaignArgs) -> Result<(), CampaignError> {
    let on_flink = spec
        .variants
        .iter()
        .any(|v| v.engine.unwrap_or(args.engine) == Engine::Flink);
    if let (true, Some(address)) = (on_flink, &args.flink_rest) {
        crate::flink::rest::check_address(address)?;
        crate::flink::rest::Rest::new(address).overview()?;
    }
    Ok(())
}

/// The engines a campaign's variants run on: the lab's, and a Flink
/// cluster opened before the first run when a variant runs on Flink.
pub(super) struct Engines {
    default: Engine,
    flink: Option<FlinkRunner>,
    flink_sets: Vec<(String, String)>,
}

impl Engines {
    pub(super) fn open(
        spec: &Spec,
        args: &CampaignArgs,
        runs: bool,
        bar: &ProgressBar,
    ) -> Result<Engines, CampaignError> {
        let on_flink = |v: &Variant| v.engine.unwrap_or(args.engine) == Engine::Flink;
        if let Some(v) = spec
            .variants
            .iter()
            .find(|v| !v.flink_settings.is_empty() && !on_flink(v))
        {
            return Err(CampaignError::input(format!(
                "{}: variant '{}' runs on the lab but has Flink-only settings; give it \
                 engine = \"flink\" or run the campaign with --engine flink",
                spec.file.display(),
                v.name
            )));
        }
        let flink = if runs && spec.variants.iter().any(on_flink) {
            let mut say =
                |line: String| bar.suspend(|| crate::output::errln!("lab campaign: {line}"));
            Some(FlinkRunner::open(
                args.flink_rest.as_deref(),
                args.quiet,
                &mut say,
            )?)
        } else {
            None
        };
        Ok(Engines {
            default: args.engine,
            flink,
            flink_sets: args.flink_sets.clone(),
        })
    }

    /// Runs `variant` at `point` and measures every sink.
    pub(super) fn run(
        &mut self,
        spec: &Spec,
        template: &ScriptTemplate,
        sql: &str,
        variant: &Variant,
        point: &Point,
    ) -> Result<Vec<Measured>, RunFailure> {
        let overrides = spec.overrides(variant, point);
        let engine = variant.engine.unwrap_or(self.default);
        let sql = match &variant.sinks {
            Some(only) => crate::flink::rewrite::keep_sinks(sql, only)
                .map_err(|e| RunFailure(CampaignError::input(e.message)))?,
            None => sql.to_string(),
        };
        let base_dir = template.path.parent().unwrap_or(Path::new(""));
        match engine {
            Engine::Lab => {
                let mut overrides = overrides;
                let scratch = checkpoint_scratch(&mut overrides)?;
                machine::reset_peak_rss();
                let outcomes = run_script(
                    &sql,
                    base_dir,
                    &overrides,
                    RunOptions::default(),
                    &mut |_, _| {},
                )
                .map_err(|e| {
                    RunFailure(CampaignError {
                        code: e.exit_code() as u8,
                        message: e.to_string(),
                    })
                })?;
                let rss = machine::peak_rss_kb();
                drop(scratch);
                Ok(outcomes
                    .iter()
                    .map(|o| {
                        let sample = Sample {
                            report: &o.report,
                            sink: o.sink_report(),
                            peak_rss_kb: rss,
                        };
                        Measured {
                            sink: o.sink.clone(),
                            engine,
                            metrics: METRICS
                                .iter()
                                .map(|m| csv_value(m.value(&sample)))
                                .collect(),
                            config: shown_config(&o.config),
                        }
                    })
                    .collect())
            }
            Engine::Flink => {
                let flink_sets: Vec<(String, String)> = self
                    .flink_sets
                    .iter()
                    .chain(&variant.flink_settings)
                    .cloned()
                    .collect();
                let runner = self.flink.as_mut().ok_or_else(|| {
                    RunFailure(CampaignError::execution("no Flink cluster was opened"))
                })?;
                let outcomes = runner
                    .run(&FlinkScriptRun {
                        script: &template.path,
                        sql: &sql,
                        sets: &overrides,
                        flink_sets: &flink_sets,
                        only_sinks: None,
                    })
                    .map_err(|e| RunFailure(e.into()))?;
                let configs = lab_configs(&sql, &overrides);
                Ok(outcomes
                    .iter()
                    .map(|o| Measured {
                        sink: o.sink.name.clone(),
                        engine,
                        metrics: METRICS
                            .iter()
                            .map(|m| csv_value(m.flink_value(o)))
                            .collect(),
                        config: configs
                            .iter()
                            .find(|(s, _)| *s == o.sink.name)
                            .map(|(_, c)| c.clone())
                            .unwrap_or_default(),
                    })
                    .collect())
            }
        }
    }
}

/// A campaign variant that takes checkpoints (`execution.checkpointing.interval`)
/// without a directory gets one of its own per run, removed after it, so
/// runs neither share nor leave checkpoints behind.
fn checkpoint_scratch(
    overrides: &mut Vec<(String, String)>,
) -> Result<Option<tempfile::TempDir>, RunFailure> {
    use optimizer::config::CHECKPOINTING_DIR;
    if !needs_checkpoint_dir(overrides) {
        return Ok(None);
    }
    let tmp = std::env::temp_dir();
    let dir =
        operators::debris::owned_temp_dir(&tmp, "joinlab-campaign-checkpoints-").map_err(|e| {
            RunFailure(CampaignError::execution(format!(
                "cannot create a checkpoint directory under {}: {e}",
                tmp.display()
            )))
        })?;
    overrides.push((CHECKPOINTING_DIR.into(), dir.path().display().to_string()));
    Ok(Some(dir))
}

/// Whether a lab run with `overrides` takes checkpoints without saying
/// where ([`checkpoint_scratch`] gives it a directory).
pub(super) fn needs_checkpoint_dir(overrides: &[(String, String)]) -> bool {
    use optimizer::config::{CHECKPOINTING_DIR, CHECKPOINTING_INTERVAL};
    let set = |k: &str| overrides.iter().any(|(n, _)| n == k);
    set(CHECKPOINTING_INTERVAL) && !set(CHECKPOINTING_DIR)
}

/// A run's configuration as `results.csv` shows it: a per-run checkpoint
/// directory ([`checkpoint_scratch`]) is not a setting anyone chose.
fn shown_config(config: &optimizer::config::Config) -> optimizer::config::Config {
    let mut c = config.clone();
    let scratch = c
        .get(optimizer::config::CHECKPOINTING_DIR)
        .is_some_and(|d| d.contains("joinlab-campaign-checkpoints-"));
    if scratch {
        let _ = c.set(optimizer::config::CHECKPOINTING_DIR, "(per run)");
    }
    c
}

/// A failed run; [`RunFailure::within`] says which.
pub(super) struct RunFailure(CampaignError);

impl RunFailure {
    pub(super) fn within(self, context: &str) -> CampaignError {
        CampaignError {
            code: self.0.code,
            message: format!("{context}: {}", self.0.message),
        }
    }
}

/// The configuration the lab derives for each INSERT of `sql` (by sink):
/// what a Flink run's `cfg:` columns show.
fn lab_configs(sql: &str, overrides: &[(String, String)]) -> Vec<(String, Config)> {
    let Ok(script) = optimizer::sql::parse_script(sql) else {
        return Vec::new();
    };
    let Ok(actions) = optimizer::session::configs_per_insert(&script, overrides) else {
        return Vec::new();
    };
    actions
        .into_iter()
        .flat_map(|(a, c)| match a {
            optimizer::session::Action::Run(inserts) => inserts
                .into_iter()
                .map(|i| (i.sink, c.clone()))
                .collect::<Vec<_>>(),
            _ => Vec::new(),
        })
        .collect()
}
