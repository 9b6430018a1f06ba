//! The optimizer's rules: passes over the physical tree, in one ordered
//! list.
//!
//! The planner translates the logical plan node by node into the plainest
//! physical tree (one-phase aggregates, binary joins, Calcs fused into
//! their reads; see `physical/planner.rs`); each rule then rewrites the
//! whole tree, as DataFusion's `PhysicalOptimizer` runs its rules. A rule
//! reads the configuration and the sink it plans for from the
//! [`RuleContext`]; it never calls back into the planner. Each rule's
//! module shows the plan before and after it.
//!
//! [`PhysicalOptimizer::new`] lists the rules in the order they run, with
//! why each runs where it does. `lab.optimizer.disabled-rules` switches
//! optional rules off by name (to see a plan without one); the rules the
//! plan is not right without cannot be switched off.

pub mod agg_strategy;
pub mod delta_join;
pub mod multi_join;
pub mod sink_upsert_materializer;
pub mod split_distinct;
pub mod update_before;
pub mod window_agg_phase;

use super::node::PhysicalNode;
use super::plan::SinkPlan;
use crate::config::{Config, LAB_OPTIMIZER_DISABLED_RULES};
use crate::error::{PlanError, Result};

/// What a rule may read besides the tree.
pub struct RuleContext<'a> {
    pub config: &'a Config,
    /// The sink the plan writes (`None` for `EXPLAIN SELECT`, a query
    /// without a sink, as a retract sink would take it).
    pub sink: Option<&'a SinkPlan>,
}

/// One pass over the physical tree.
pub trait PhysicalRule {
    /// Its name (for `lab.optimizer.disabled-rules`).
    fn name(&self) -> &'static str;

    /// Whether the plan computes the right result without it, so that it
    /// may be switched off.
    fn optional(&self) -> bool {
        true
    }

    /// Rewrites `root` into a tree that computes the same result.
    fn optimize(&self, root: PhysicalNode, ctx: &RuleContext) -> Result<PhysicalNode>;
}

/// The rules, in the order they run.
pub struct PhysicalOptimizer {
    rules: Vec<Box<dyn PhysicalRule>>,
}

impl Default for PhysicalOptimizer {
    fn default() -> PhysicalOptimizer {
        PhysicalOptimizer::new()
    }
}

impl PhysicalOptimizer {
    /// Every rule, in order.
    pub fn new() -> PhysicalOptimizer {
        let rules: Vec<Box<dyn PhysicalRule>> = vec![
            // First: it replaces one aggregate by two (partial and final),
            // and every rule after it must see both halves.
            Box::new(split_distinct::SplitDistinctAggregate),
            // After the split, so that each half of a split aggregate gets
            // phases of its own (Flink runs both halves local-global).
            Box::new(agg_strategy::LocalGlobalAggregate),
            // Window aggregates: their own phases (Flink's window rule
            // needs no mini-batch); nothing after it rewrites them.
            Box::new(window_agg_phase::WindowAggPhase),
            // Before the sink rule, which keys the result by the sink's
            // primary key unless the query's unique key already is it:
            // fusing joins changes that unique key.
            Box::new(multi_join::MultiJoinRule),
            // Once the tree's shape and unique keys are settled: checks
            // the sink can take what the tree emits and keys the result by
            // the sink's primary key where the query's key differs.
            Box::new(sink_upsert_materializer::SinkUpsertMaterializerRule),
            // After the sink rule: a delta join may emit a pair twice,
            // which only an upsert sink keyed on the join's own unique key
            // absorbs, and the sink rule decides how the sink is keyed.
            // (Joins fused into a MultiJoin are no longer candidates.)
            Box::new(delta_join::DeltaJoinRule),
            // Last: which nodes must emit update-before rows depends on
            // every consumer above them, so the tree must be final.
            Box::new(update_before::UpdateBefore),
        ];
        PhysicalOptimizer { rules }
    }

    /// Every rule but those `lab.optimizer.disabled-rules` names.
    pub fn from_config(config: &Config) -> Result<PhysicalOptimizer> {
        let names: Vec<String> = config
            .optimizer_disabled_rules()
            .iter()
            .map(|n| n.to_string())
            .collect();
        PhysicalOptimizer::new().without(&names)
    }

    /// This optimizer without the rules named `names`; an unknown or
    /// required rule is an error.
    pub fn without(mut self, names: &[String]) -> Result<PhysicalOptimizer> {
        for n in names {
            let Some(rule) = self.rules.iter().find(|r| r.name() == n) else {
                return Err(PlanError::config(format!(
                    "'{LAB_OPTIMIZER_DISABLED_RULES}' names no rule '{n}'; the rules are {}",
                    self.names().join(", ")
                )));
            };
            if !rule.optional() {
                return Err(PlanError::config(format!(
                    "'{LAB_OPTIMIZER_DISABLED_RULES}': rule '{n}' cannot be switched off: \
                     the plan is not right without it"
                )));
            }
        }
        self.rules.retain(|r| !names.iter().any(|n| n == r.name()));
        Ok(self)
    }

    /// The names of its rules, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.rules.iter().map(|r| r.name()).collect()
    }

    /// Runs every rule over `root`, in order.
    pub fn optimize(&self, root: PhysicalNode, ctx: &RuleContext) -> Result<PhysicalNode> {
        self.rules
            .iter()
            .try_fold(root, |root, r| r.optimize(root, ctx))
    }
}
