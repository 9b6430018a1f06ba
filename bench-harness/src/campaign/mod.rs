//! Campaigns: a spec (`campaigns/<name>.toml`) sweeps script parameters and
//! configuration keys over variants; `lab campaign` runs every point ×
//! variant × repeat and writes `results.csv`, charts and `index.md` under
//! `reports/<name>/`; `lab plot` redraws them from `results.csv`; `lab tune`
//! compares configurations of one script without a spec.
//!
//! - [`spec`]: the spec format and its checks;
//! - [`metrics`]: the metrics, one definition for CSV, charts and tables;
//! - [`results`]: `results.csv` and its `.partial` file;
//! - [`runner`]: `lab campaign`;
//! - [`report`]: charts and `index.md` from `results.csv` (`lab plot`);
//! - [`tune`]: `lab tune`;
//! - [`machine`]: git revision, machine, peak RSS.

pub mod machine;
pub mod metrics;
pub mod report;
pub mod results;
pub mod runner;
pub mod spec;
pub mod tune;

use optimizer::session::RunError;

/// An error with the exit code `lab` returns for it: 2 for bad input (a
/// spec, a script, a configuration), 3 for a failed run or write.
#[derive(Debug)]
pub struct CampaignError {
    pub code: u8,
    pub message: String,
}

impl CampaignError {
    pub fn input(message: impl Into<String>) -> CampaignError {
        CampaignError {
            code: 2,
            message: message.into(),
        }
    }

    pub fn execution(message: impl std::fmt::Display) -> CampaignError {
        CampaignError {
            code: 3,
            message: format!("execution failed: {message}"),
        }
    }

    /// A failed run, with what was running.
    pub fn run(context: &str, e: RunError) -> CampaignError {
        CampaignError {
            code: e.exit_code() as u8,
            message: format!("{context}: {e}"),
        }
    }
}

impl std::fmt::Display for CampaignError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}
