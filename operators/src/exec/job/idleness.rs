//! Idle sources and the watermark of a stage with idle inputs.
//!
//! A source with a watermark that read no rows for longer than
//! [`JobOptions::source_idle_timeout_ms`] on the lab's clock is idle (Flink's
//! `table.exec.source.idle-timeout`, as its `WatermarkAssignerOperator`
//! marks its output idle): it tells its consumers, and they take the least
//! watermark of their other inputs, so a silent source no longer holds back
//! a join's or a union's watermark. Only an unbounded source
//! ([`ChangeSource::is_unbounded`]) can be silent: the job reads every other
//! source in each round until it ends. It is checked once a round; when it
//! reads rows again it is active again before they go downstream.
//!
//! A stage follows Flink's `StatusWatermarkValve`, with one channel per
//! input (every upstream subtask has the same watermark here):
//! - an idle input's watermarks are ignored;
//! - the stage's watermark is the least over its aligned inputs: active
//!   ones whose watermark is not behind the stage's (an input active again
//!   is not aligned until its watermark catches up, so it does not hold
//!   back the others meanwhile);
//! - when its last active input goes idle, the stage flushes: its watermark
//!   moves to the greatest of its inputs' if that input was aligned; then
//!   the stage is idle and tells its consumers; it is active again, and
//!   tells them, when one input is.
//!
//! A source that ends sends the greatest watermark as before, active again
//! first if it was idle. Rows an idle source reads later can be behind a
//! watermark that moved on without it: they are late, and the operators
//! drop and count them as late as any other (Flink does the same).
//! Statuses are not checkpointed: a resumed run starts with every source
//! and input active.
//!
//! [`JobOptions::source_idle_timeout_ms`]: super::JobOptions::source_idle_timeout_ms

use super::{ChangeSource, Job, Outputs, Stage, Target};
use crate::operator::OpResult;

/// Per source: what its idleness depends on.
pub(super) struct SourceActivity {
    /// May read nothing without having ended ([`ChangeSource::is_unbounded`]).
    pub(super) unbounded: bool,
    /// Only a source with a watermark goes idle.
    has_watermark: bool,
    /// The clock (ms) when it last read rows; the job's start before.
    last_rows_at: u64,
    idle: bool,
}

impl SourceActivity {
    pub(super) fn new(source: &dyn ChangeSource) -> SourceActivity {
        SourceActivity {
            unbounded: source.is_unbounded(),
            has_watermark: source.has_watermark(),
            last_rows_at: 0,
            idle: false,
        }
    }

    /// It read rows at `now`; whether it was idle (and is active again).
    pub(super) fn read_rows(&mut self, now: u64) -> bool {
        self.last_rows_at = now;
        std::mem::replace(&mut self.idle, false)
    }

    /// It read nothing at `now`; whether it goes idle now: it has a
    /// watermark, the timeout is on (> 0) and more than that has passed
    /// since its last rows.
    pub(super) fn goes_idle(&mut self, now: u64, timeout_ms: u64) -> bool {
        let idle = timeout_ms > 0
            && self.has_watermark
            && !self.idle
            && now.saturating_sub(self.last_rows_at) > timeout_ms;
        self.idle |= idle;
        idle
    }

    /// It ends; whether it was idle (and must be active again to send its
    /// last watermark).
    pub(super) fn ends(&mut self) -> bool {
        std::mem::replace(&mut self.idle, false)
    }
}

impl Stage {
    /// The least watermark of its aligned inputs (active, not behind the
    /// stage's own); `None` when there is none.
    pub(super) fn least_active_watermark(&self) -> Option<i64> {
        self.input_watermarks
            .iter()
            .zip(&self.input_idle)
            .filter(|(w, idle)| !**idle && **w >= self.watermark)
            .map(|(w, _)| *w)
            .min()
    }
}

impl Job {
    /// Tells each of `outputs` that its producer went idle (`true`) or is
    /// active again.
    pub(super) fn push_idleness_all(&mut self, outputs: &Outputs, idle: bool) -> OpResult<()> {
        for (target, _) in outputs {
            self.push_idleness(*target, idle)?;
        }
        Ok(())
    }

    /// Input `port` of a stage goes idle or active again (see the module
    /// doc); a stage whose status changes tells its consumers.
    fn push_idleness(&mut self, target: Target, idle: bool) -> OpResult<()> {
        let Target::Stage(s, port) = target else {
            return Ok(());
        };
        let stage = &mut self.stages[s];
        if stage.input_idle[port] == idle {
            return Ok(());
        }
        stage.input_idle[port] = idle;
        if !idle {
            if !std::mem::replace(&mut stage.idle, false) {
                return Ok(());
            }
            let targets = std::mem::take(&mut self.stages[s].outputs);
            let r = self.push_idleness_all(&targets, false);
            self.stages[s].outputs = targets;
            return r;
        }
        if stage.input_idle.iter().all(|i| *i) {
            // The last active input: flush to the greatest watermark, if
            // that input was aligned, then the stage is idle.
            let was_aligned = stage.input_watermarks[port] >= stage.watermark;
            let greatest = stage.input_watermarks.iter().copied().max();
            if let (true, Some(w)) = (was_aligned, greatest) {
                self.advance_watermark(s, w)?;
            }
            self.stages[s].idle = true;
            let targets = std::mem::take(&mut self.stages[s].outputs);
            let r = self.push_idleness_all(&targets, true);
            self.stages[s].outputs = targets;
            return r;
        }
        match stage.least_active_watermark() {
            Some(least) => self.advance_watermark(s, least),
            None => Ok(()),
        }
    }
}
