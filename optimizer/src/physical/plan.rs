//! The physical plan tree.

use crate::logical::{Schema, TableDef};
use operators::agg::AggSpec;
use operators::changelog::{ChangelogMode, SinkEncoding};
use operators::expr::Expr;
use operators::join::regular_join::JoinType;
use operators::join::JoinStateLayout;

#[derive(Clone, Debug)]
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
    },
    Join {
        join_type: JoinType,
        left_keys: Vec<usize>,
        right_keys: Vec<usize>,
        residual: Option<Expr>,
        left_layout: JoinStateLayout,
        right_layout: JoinStateLayout,
    },
}

#[derive(Clone, Debug)]
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

#[derive(Clone, Debug)]
pub struct SinkPlan {
    pub table: TableDef,
    pub encoding: SinkEncoding,
}

#[derive(Clone, Debug)]
pub struct PhysicalPlan {
    pub root: PhysicalNode,
    pub sink: SinkPlan,
}
