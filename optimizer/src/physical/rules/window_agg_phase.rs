//! `window_agg_phase`: one phase or two for each window aggregate.
//!
//! ```text
//! before (table.optimizer.agg-phase-strategy = ONE_PHASE):
//!   WindowAggregate(groupBy=[k], window=[TUMBLE(time_col=[ts], size=[10 s])], select=[k, COUNT(*) AS c, ...])
//!   +- Exchange(hash[k])
//!
//! after, with AUTO (the default) or TWO_PHASE:
//!   GlobalWindowAggregate(groupBy=[k], window=[TUMBLE(slice_end=[$slice_end], size=[10 s])], select=[k, COUNT(count1$0) AS c, ...])
//!   +- Exchange(hash[k])
//!      +- LocalWindowAggregate(groupBy=[k], window=[TUMBLE(time_col=[ts], size=[10 s])], select=[k, COUNT(*) AS count1$0, ..., slice_end('w$) AS $slice_end])
//! ```
//!
//! Flink's rule (`TwoStageOptimizedWindowAggregateRule`): a window
//! aggregate needs no mini-batch for two phases, since its local half
//! buffers until the watermark; `AUTO` and `TWO_PHASE` take two phases
//! and `ONE_PHASE` one. An aggregate with a DISTINCT call stays one phase
//! (the lab's local half keeps no distinct values). A SESSION window
//! aggregate stays one phase whatever the strategy. With the lab's
//! per-window state (`lab.window.slicing` = false) the local half still
//! folds slices, which is what it ships; the global half keeps the
//! per-window state, adding each partial to every window of its slice.

use super::{PhysicalRule, RuleContext};
use crate::config::AggPhaseStrategy;
use crate::error::Result;
use crate::physical::node::local_window_aggregate::LocalWindowAggregate;
use crate::physical::node::window_aggregate::WindowAggregate;
use crate::physical::node::PhysicalNode;

pub struct WindowAggPhase;

impl PhysicalRule for WindowAggPhase {
    fn name(&self) -> &'static str {
        "window_agg_phase"
    }

    fn optimize(&self, root: PhysicalNode, ctx: &RuleContext) -> Result<PhysicalNode> {
        if ctx.config.agg_phase_strategy() == AggPhaseStrategy::OnePhase {
            return Ok(root);
        }
        Ok(rewrite(root, ctx.config.parallelism()))
    }
}

fn rewrite(mut node: PhysicalNode, parallelism: usize) -> PhysicalNode {
    node.inputs = std::mem::take(&mut node.inputs)
        .into_iter()
        .map(|c| rewrite(c, parallelism))
        .collect();
    let Some(agg) = node.kind.get_mut::<WindowAggregate>() else {
        return node;
    };
    // Session windows are one phase in Flink (its tuning page: the
    // aggregation optimizations apply to every window TVF aggregation but
    // SESSION's): a local half cannot know the sessions.
    if agg.global || !agg.window.is_aligned() || agg.aggs.iter().any(|a| a.distinct) {
        return node;
    }
    let g = agg.group_by.len();
    let local = LocalWindowAggregate {
        group_by: std::mem::replace(&mut agg.group_by, (0..g).collect()),
        aggs: agg.aggs.clone(),
        window: agg.window,
        time_col: agg.time_col,
        attached: agg.attached,
    };
    agg.time_col = g + 2 * agg.aggs.len();
    agg.global = true;
    if let Some(a) = &mut agg.attached {
        // The partials carry the window end only.
        a.window_start = None;
    }
    let child = node.inputs.pop().expect("a window aggregate has one input");
    node.inputs = vec![LocalWindowAggregate::over(child, local, parallelism)];
    node
}
