//! The physical plan tree.

use super::rules::state_ttl::StateTtl;
use crate::logical::{Schema, TableDef};
use operators::agg::AggSpec;
use operators::changelog::{ChangelogMode, SinkEncoding};
use operators::expr::Expr;
use operators::join::JoinStateLayout;
use operators::join::JoinType;

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum NodeKind {
    /// Reads a table; a Calc directly above it is fused into the read.
    Source {
        table: TableDef,
        predicate: Option<Expr>,
        projection: Option<Vec<Expr>>,
    },
    Calc {
        predicate: Option<Expr>,
        projection: Option<Vec<Expr>>,
    },
    GroupAggregate {
        group_by: Vec<usize>,
        aggs: Vec<AggSpec>,
        agg_names: Vec<String>,
        generate_update_before: bool,
        input_insert_only: bool,
        /// Bundle size in mini-batch mode.
        mini_batch: Option<usize>,
        /// The global half of a local-global aggregate: its input is
        /// `LocalGroupAggregate` partials keyed by the leading columns.
        global: bool,
        /// The strategy and why, for EXPLAIN.
        strategy: String,
        /// Idle state retention of all its state (in a compiled plan: the
        /// node's `state` entries).
        #[serde(skip, default)]
        ttl: StateTtl,
    },
    /// Folds each bundle into one partial accumulator per key (stateless).
    LocalGroupAggregate {
        group_by: Vec<usize>,
        aggs: Vec<AggSpec>,
        agg_names: Vec<String>,
        bundle_size: usize,
    },
    /// Emits each input row several times, once per projection (the
    /// split-distinct rewrite with several distinct columns).
    Expand { projections: Vec<Vec<Expr>> },
    Join {
        join_type: JoinType,
        left_keys: Vec<usize>,
        right_keys: Vec<usize>,
        residual: Option<Expr>,
        left_layout: JoinStateLayout,
        right_layout: JoinStateLayout,
        /// Bundle size when mini-batch is on.
        mini_batch: Option<usize>,
        /// Why this join was not fused into a MultiJoin, when one was asked for.
        note: Option<String>,
        /// Idle state retention of the left and right input.
        #[serde(skip, default)]
        ttl: [StateTtl; 2],
    },
    /// An INNER join that keeps no state and looks the other side up in
    /// the index-lookup store.
    DeltaJoin {
        left_keys: Vec<usize>,
        right_keys: Vec<usize>,
        residual: Option<Expr>,
        cache_enabled: bool,
        left_cache_size: usize,
        right_cache_size: usize,
    },
    /// Keys an updating result by the sink's primary key (Flink's
    /// `SinkUpsertMaterializer`), when the query's unique key differs.
    SinkMaterializer {
        primary_key: Vec<usize>,
        /// Idle state retention of its state.
        #[serde(skip, default)]
        ttl: StateTtl,
    },
    /// One join over N inputs sharing a common key; keeps only the inputs.
    MultiJoin {
        /// Common key columns per input.
        keys: Vec<Vec<usize>>,
        /// Per input (index 0 unused): how it joins the inputs before it.
        join_types: Vec<JoinType>,
        /// Per input (index 0 unused): its ON condition over inputs 0..=i.
        conditions: Vec<Option<Expr>>,
        layouts: Vec<JoinStateLayout>,
        /// What asked for it (config key or hint).
        reason: String,
        /// Idle state retention per input.
        #[serde(skip, default)]
        ttls: Vec<StateTtl>,
    },
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct PhysicalNode {
    pub kind: NodeKind,
    pub inputs: Vec<PhysicalNode>,
    pub schema: Schema,
    /// What the node emits.
    pub changelog: ChangelogMode,
    /// Column positions that identify a row of the node's output, if known.
    pub unique_key: Option<Vec<usize>>,
    pub parallelism: usize,
}

impl PhysicalNode {
    pub fn is_insert_only(&self) -> bool {
        self.changelog.is_insert_only()
    }
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct SinkPlan {
    pub table: TableDef,
    pub encoding: SinkEncoding,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct PhysicalPlan {
    pub root: PhysicalNode,
    pub sink: SinkPlan,
}

impl PhysicalNode {
    /// The nodes that became stages, in the order the job builder added
    /// them (children first), so they pair up with a run's stage reports.
    pub fn stage_nodes(&self) -> Vec<&PhysicalNode> {
        let mut out = Vec::new();
        self.collect_stages(&mut out);
        out
    }

    fn collect_stages<'a>(&'a self, out: &mut Vec<&'a PhysicalNode>) {
        if let NodeKind::Source { .. } = self.kind {
            return;
        }
        for c in &self.inputs {
            c.collect_stages(out);
        }
        out.push(self);
    }

    /// Whether this node's output is a join result (looking through Calcs).
    pub fn is_join_result(&self) -> bool {
        match &self.kind {
            NodeKind::Join { .. } | NodeKind::MultiJoin { .. } | NodeKind::DeltaJoin { .. } => true,
            NodeKind::Calc { .. } => self.inputs[0].is_join_result(),
            _ => false,
        }
    }
}

impl PhysicalNode {
    /// How records reach input `i` of this node: the one place the exchange
    /// is decided, for the job builder and EXPLAIN alike.
    ///
    /// Stateless stages take a forward exchange at equal parallelism and
    /// contiguous chunks otherwise; keyed operators hash on their key. A
    /// local aggregate closes bundles per subtask, so every version of one
    /// input row must reach the same subtask (or a retraction could overtake
    /// its row): an updating single reader is hashed on its unique key (or,
    /// with none, on the group key, which keeps the order but not the
    /// spread).
    pub fn input_exchange(&self, i: usize) -> operators::exec::Exchange {
        use operators::exec::Exchange;
        let child = &self.inputs[i];
        let same_parallelism = child.parallelism == self.parallelism;
        match &self.kind {
            NodeKind::GroupAggregate { group_by, .. } if group_by.is_empty() => Exchange::Single,
            NodeKind::GroupAggregate { group_by, .. } => Exchange::Hash(group_by.clone()),
            NodeKind::LocalGroupAggregate { group_by, .. } => {
                if same_parallelism {
                    Exchange::Forward
                } else if child.is_insert_only() {
                    Exchange::Rebalance
                } else {
                    match &child.unique_key {
                        Some(k) if !k.is_empty() => Exchange::Hash(k.clone()),
                        _ => Exchange::Hash(group_by.clone()),
                    }
                }
            }
            NodeKind::Join {
                left_keys,
                right_keys,
                ..
            }
            | NodeKind::DeltaJoin {
                left_keys,
                right_keys,
                ..
            } => Exchange::Hash(if i == 0 {
                left_keys.clone()
            } else {
                right_keys.clone()
            }),
            NodeKind::MultiJoin { keys, .. } => Exchange::Hash(keys[i].clone()),
            NodeKind::SinkMaterializer { primary_key, .. } => Exchange::Hash(primary_key.clone()),
            NodeKind::Calc { .. } | NodeKind::Expand { .. } | NodeKind::Source { .. } => {
                if same_parallelism {
                    Exchange::Forward
                } else {
                    Exchange::Rebalance
                }
            }
        }
    }
}
