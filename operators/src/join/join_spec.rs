//! What a binary join joins: its type, the equi-keys of both inputs, the
//! residual condition, and how each side's state is laid out. The regular,
//! mini-batch and delta joins take it (the delta join INNER only); MultiJoin
//! takes one type per input (INNER or LEFT, as Flink's).

use super::join_state::JoinStateLayout;
use crate::expr::Expr;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum JoinType {
    Inner,
    Left,
    Right,
    Full,
}

impl JoinType {
    /// True when the left input's rows are kept without a match (LEFT, FULL).
    pub fn left_is_outer(self) -> bool {
        matches!(self, JoinType::Left | JoinType::Full)
    }

    /// True when the right input's rows are kept without a match (RIGHT, FULL).
    pub fn right_is_outer(self) -> bool {
        matches!(self, JoinType::Right | JoinType::Full)
    }
}

#[derive(Clone, Debug)]
pub struct JoinSpec {
    pub join_type: JoinType,
    pub left_keys: Vec<usize>,
    pub right_keys: Vec<usize>,
    pub left_arity: usize,
    pub right_arity: usize,
    /// Evaluated over `left ++ right`.
    pub residual: Option<Expr>,
    pub left_layout: JoinStateLayout,
    pub right_layout: JoinStateLayout,
}
