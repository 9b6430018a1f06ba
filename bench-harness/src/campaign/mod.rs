//! Campaigns: a spec (`campaigns/<name>.toml`) sweeps script parameters and
//! configuration keys over variants; `lab campaign` runs every point ×
//! variant × repeat and writes `results.csv`, charts and `index.md` under
//! `reports/<name>/`; `lab plot` redraws them from `results.csv`; `lab tune`
//! compares configurations of one script without a spec.
//!
//! - [`spec`]: the spec format and its checks (`docs/campaigns.md`);
//! - [`metrics`]: the metrics, one definition for CSV, charts and tables;
//! - [`results`]: `results.csv` and its `.partial` file;
//! - [`runner`]: `lab campaign`, with its arguments ([`args`]);
//! - [`dispatch`]: one run of a variant, on the lab or on Flink;
//! - [`report`]: charts and `index.md` from `results.csv` (`lab plot`),
//!   read back by [`report_data`];
//! - [`cells`]: how spread, ratios and changes are written;
//! - [`engines`]: a campaign's variants on the lab against their twins on
//!   Flink (`index.md`'s "Lab and Flink");
//! - [`history`]: earlier runs kept under `history/`;
//! - [`lock`]: one campaign at a time per report directory;
//! - [`crash_point`]: the kill points of the crash-safety tests;
//! - [`baseline`]: `--save-baseline` and `--baseline`;
//! - [`tune`]: `lab tune`;
//! - [`machine`]: git revision, machine, peak RSS.

pub mod args;
pub mod baseline;
pub mod cells;
pub mod crash_point;
pub mod dispatch;
pub mod engines;
pub mod history;
pub mod lock;
pub mod machine;
pub mod metrics;
pub mod report;
pub mod report_data;
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
            code: crate::exit_code::BAD_INPUT,
            message: message.into(),
        }
    }

    pub fn execution(message: impl std::fmt::Display) -> CampaignError {
        CampaignError {
            code: crate::exit_code::EXECUTION_FAILED,
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

impl From<crate::output::OutputError> for CampaignError {
    fn from(e: crate::output::OutputError) -> CampaignError {
        CampaignError::execution(e.to_string())
    }
}

impl From<crate::flink::FlinkError> for CampaignError {
    fn from(e: crate::flink::FlinkError) -> CampaignError {
        CampaignError {
            code: e.code,
            message: e.message,
        }
    }
}

impl std::fmt::Display for CampaignError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}
