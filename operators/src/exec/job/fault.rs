//! Injected faults (`lab.fault.*`): an operator fails when a given number
//! of records has reached it in this run, as a task crashes in Flink, so a
//! restart strategy and recovery from the latest checkpoint can be tried
//! and measured. The executor fails the stage before it processes the
//! batch that would take it past the count; nothing of that batch reaches
//! the operator.

use super::Job;
use crate::changelog::Change;
use crate::operator::{OpError, OpResult};

/// Where and when to fail.
#[derive(Clone, Debug)]
pub(super) struct Fault {
    pub stage: usize,
    pub after_records: u64,
    /// Records that reached the stage so far.
    pub seen: u64,
}

impl Job {
    /// Fails the stage whose name or uid is `operator` (its name: the
    /// operator's EXPLAIN line, matched from its start, e.g.
    /// `GroupAggregate`) once `after_records` records have reached it.
    /// Returns the stage's name, or the names to choose from when none
    /// matches.
    pub fn inject_fault(
        &mut self,
        operator: &str,
        after_records: u64,
    ) -> Result<String, Vec<String>> {
        let found = self
            .stages
            .iter()
            .position(|s| s.uid.as_deref() == Some(operator) || s.name.starts_with(operator));
        let Some(stage) = found else {
            return Err(self.stages.iter().map(|s| s.name.clone()).collect());
        };
        self.fault = Some(Fault {
            stage,
            after_records,
            seen: 0,
        });
        Ok(self.stages[stage].name.clone())
    }

    /// Counts the records of `batches` reaching stage `s`; fails the job
    /// when they take the stage past the injected fault's count. Without a
    /// fault on `s` it counts nothing.
    pub(super) fn check_fault(&mut self, s: usize, batches: &[Vec<Change>]) -> OpResult<()> {
        let Some(f) = &mut self.fault else {
            return Ok(());
        };
        if f.stage != s {
            return Ok(());
        }
        f.seen += batches.iter().map(|b| b.len() as u64).sum::<u64>();
        if f.seen < f.after_records {
            return Ok(());
        }
        let after = f.after_records;
        self.fault = None;
        Err(OpError::Fault(format!(
            "injected fault (lab.fault.*): {} failed at record {after}",
            self.stages[s].name
        )))
    }
}
