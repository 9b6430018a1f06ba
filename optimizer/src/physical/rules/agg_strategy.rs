//! `local_global_aggregate`: one phase or two (local-global) for each group
//! aggregate, and why.
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
//! saying why, when they do not hold), `ONE_PHASE` never. Whether an
//! aggregate runs in mini-batch mode is the planner's (it carries the
//! bundle size from `table.exec.mini-batch.size`); this rule decides the
//! phases and writes the reason EXPLAIN shows as `strategy`.

use super::{PhysicalRule, RuleContext};
use crate::config::{AggPhaseStrategy, Config};
use crate::error::Result;
use crate::physical::node::group_aggregate::GroupAggregate;
use crate::physical::node::local_group_aggregate::LocalGroupAggregate;
use crate::physical::node::PhysicalNode;
use operators::agg::core::not_mergeable;
use operators::agg::AggSpec;

pub struct LocalGlobalAggregate;

/// The phases chosen for one aggregate, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct AggStrategy {
    pub two_phase: bool,
    /// Which key or precondition decided it, for EXPLAIN.
    pub reason: String,
}

/// The phases of an aggregate of `aggs` (mini-batch on or not) under
/// `config`.
pub fn choose(
    config: &Config,
    mini_batch: bool,
    aggs: &[AggSpec],
    input_insert_only: bool,
) -> AggStrategy {
    let phase = config.agg_phase_strategy();
    if !mini_batch {
        let reason = match phase {
            AggPhaseStrategy::TwoPhase => {
                "ONE_PHASE: TWO_PHASE needs table.exec.mini-batch.enabled = true".to_string()
            }
            _ => "ONE_PHASE: table.exec.mini-batch.enabled = false".to_string(),
        };
        return AggStrategy {
            two_phase: false,
            reason,
        };
    }
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
    AggStrategy { two_phase, reason }
}

impl PhysicalRule for LocalGlobalAggregate {
    fn name(&self) -> &'static str {
        "local_global_aggregate"
    }

    fn optimize(&self, root: PhysicalNode, ctx: &RuleContext) -> Result<PhysicalNode> {
        Ok(rewrite(root, ctx.config))
    }
}

fn rewrite(mut node: PhysicalNode, config: &Config) -> PhysicalNode {
    node.inputs = std::mem::take(&mut node.inputs)
        .into_iter()
        .map(|c| rewrite(c, config))
        .collect();
    let Some(agg) = node.kind.get_mut::<GroupAggregate>() else {
        return node;
    };
    if agg.global {
        return node;
    }
    let strategy = choose(
        config,
        agg.mini_batch_size.is_some(),
        &agg.aggs,
        agg.input_insert_only,
    );
    agg.strategy = strategy.reason;
    if !strategy.two_phase {
        return node;
    }
    let g = agg.group_by.len();
    let local = LocalGroupAggregate {
        group_by: std::mem::replace(&mut agg.group_by, (0..g).collect()),
        aggs: agg.aggs.clone(),
        agg_names: agg.agg_names.clone(),
        mini_batch_size: agg.mini_batch_size.unwrap_or(1),
        partial_final: agg.partial_final,
    };
    agg.global = true;
    let child = node.inputs.pop().expect("an aggregate has one input");
    node.inputs = vec![LocalGroupAggregate::over(
        child,
        local,
        config.parallelism(),
    )];
    node
}
