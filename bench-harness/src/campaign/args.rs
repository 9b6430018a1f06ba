//! What `lab campaign` is asked to do: the spec, the mode, where the report
//! goes, the baseline and the engine. Its own module so that both the runner
//! and the per-run dispatch read it without importing each other.

use crate::flink::Engine;
use std::path::PathBuf;

pub struct CampaignArgs {
    pub spec: PathBuf,
    pub quick: bool,
    pub resume: bool,
    /// Default: `reports/<name>/` under the current directory.
    pub out: Option<PathBuf>,
    pub quiet: bool,
    /// Saves the finished run as this baseline.
    pub save_baseline: Option<String>,
    /// Compares the run with this saved baseline.
    pub baseline: Option<String>,
    /// The engine of variants that name none.
    pub engine: Engine,
    /// The Flink cluster's REST address (default: the local cluster).
    pub flink_rest: Option<String>,
    /// Configuration for every Flink run (keys the lab does not model).
    pub flink_sets: Vec<(String, String)>,
}
