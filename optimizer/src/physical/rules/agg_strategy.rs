//! `AggStrategyRule`: one phase or two (local-global), one record at a
//! time or mini-batch, for a group aggregate.
//!
//! ```text
//! before (mini-batch off, or a function that cannot merge):
//!   GroupAggregate(groupBy=[color], select=[color, SUM(id)])
//!   +- Exchange(hash[color])
//!
//! after, with table.exec.mini-batch.enabled = true and
//! table.optimizer.agg-phase-strategy = AUTO or TWO_PHASE:
//!   GlobalGroupAggregate(groupBy=[color], select=[color, SUM(id)])
//!   +- Exchange(hash[color])
//!      +- LocalGroupAggregate(groupBy=[color], select=[color, SUM(id)])
//! ```
//!
//! Flink's rules: two phases need mini-batch (the local aggregate folds one
//! bundle) and functions that can merge partial accumulators; `AUTO` takes
//! two phases whenever both hold, `TWO_PHASE` asks for them (and falls back,
//! saying why, when they do not hold), `ONE_PHASE` never.

use crate::config::{AggPhaseStrategy, Config};
use operators::agg::core::not_mergeable;
use operators::agg::AggSpec;

/// The strategy chosen for one aggregate, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct AggStrategy {
    /// Bundle size when mini-batch is on.
    pub mini_batch: Option<usize>,
    pub two_phase: bool,
    /// Which key or precondition decided it, for EXPLAIN.
    pub reason: String,
}

pub fn choose(config: &Config, aggs: &[AggSpec], input_insert_only: bool) -> AggStrategy {
    let phase = config.agg_phase_strategy();
    if !config.mini_batch_enabled() {
        let reason = match phase {
            AggPhaseStrategy::TwoPhase => {
                "ONE_PHASE: TWO_PHASE needs table.exec.mini-batch.enabled = true".to_string()
            }
            _ => "ONE_PHASE: table.exec.mini-batch.enabled = false".to_string(),
        };
        return AggStrategy {
            mini_batch: None,
            two_phase: false,
            reason,
        };
    }
    let size = config.mini_batch_size().max(1) as usize;
    let (two_phase, reason) = match phase {
        AggPhaseStrategy::OnePhase => (
            false,
            "ONE_PHASE: table.optimizer.agg-phase-strategy = ONE_PHASE".to_string(),
        ),
        _ => match not_mergeable(aggs, input_insert_only) {
            Some(why) => (false, format!("ONE_PHASE: {why}")),
            None => (
                true,
                format!(
                    "TWO_PHASE: table.optimizer.agg-phase-strategy = {}, mini-batch on, every function can merge",
                    phase.as_str()
                ),
            ),
        },
    };
    AggStrategy {
        mini_batch: Some(size),
        two_phase,
        reason,
    }
}
