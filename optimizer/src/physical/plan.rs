//! The physical plan of one INSERT: its tree of nodes (see [`super::node`])
//! and the sink it writes.

use crate::logical::TableDef;
use operators::changelog::SinkEncoding;

pub use super::node::{NodeKind, PhysicalNode};

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
