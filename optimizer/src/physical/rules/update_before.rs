//! `update_before`: decides, top-down, which nodes must emit update-before
//! (`-U`) rows, and recomputes every node's changelog bottom-up, as
//! Flink's `FlinkChangelogModeInferenceProgram` satisfies the
//! `UpdateKindTrait` its sink asks for.
//!
//! ```text
//! before (every aggregate emits -U, as if every consumer needed it):
//!   Sink(table=[per_user], PRIMARY KEY (user_id))        -- an upsert sink
//!   +- GroupAggregate(groupBy=[user_id], ..., changelogMode=[I,UB,UA])
//!
//! after (an upsert sink keyed on the aggregate's key replaces rows by key):
//!   Sink(table=[per_user], PRIMARY KEY (user_id))
//!   +- GroupAggregate(groupBy=[user_id], ..., changelogMode=[I,UA])
//!
//! and through a join whose updating inputs' unique keys hold their join
//! keys (Flink's upsert-key rule):
//!   Sink(table=[per_user], PRIMARY KEY (user_id))
//!   +- Join(joinType=[InnerJoin], where=[=(user_id, user_id0)], ..., changelogMode=[I,UA])
//!      :- GroupAggregate(groupBy=[user_id], ..., changelogMode=[I,UA])
//!      +- GroupAggregate(groupBy=[user_id], ..., changelogMode=[I,UA])
//! ```
//!
//! Each node says what its inputs must emit given what its consumer needs
//! (`NodeSpec::require_update_before`): a Calc passes the need on; an
//! aggregate or a materializer, which find the rows to retract by their
//! `-U`, need it from their inputs whatever their consumer does; a join
//! needs it unless its updating inputs' unique keys hold its join keys.
//!
//! An upsert sink asks for no `-U` first; if a node cannot do without them
//! (a join whose updating input lacks such a key, a filter on columns
//! outside its input's unique key), the whole query is planned again with
//! `-U` everywhere, as Flink's sink falls back from `ONLY_UPDATE_AFTER` to
//! `BEFORE_AND_AFTER`. The plan is not right without this rule (changelog
//! modes would be stale), so it cannot be switched off.

use super::{PhysicalRule, RuleContext};
use crate::error::Result;
use crate::physical::node::PhysicalNode;
use operators::changelog::SinkEncoding;

pub struct UpdateBefore;

impl PhysicalRule for UpdateBefore {
    fn name(&self) -> &'static str {
        "update_before"
    }

    fn optional(&self) -> bool {
        false
    }

    fn optimize(&self, mut root: PhysicalNode, ctx: &RuleContext) -> Result<PhysicalNode> {
        // A query without a sink is explained as a retract sink takes it.
        let upsert = ctx
            .sink
            .is_some_and(|s| matches!(s.encoding, SinkEncoding::Upsert { .. }));
        if upsert {
            let mut without = root.clone();
            if assign(&mut without, false).is_some() {
                return Ok(without);
            }
        }
        assign(&mut root, true);
        Ok(root)
    }
}

/// Assigns the need top-down; `None` if a node cannot meet it.
fn assign(node: &mut PhysicalNode, needed: bool) -> Option<()> {
    let inputs_need = node
        .kind
        .spec_mut()
        .require_update_before(&node.inputs, needed);
    // With `-U` needed, every node can emit them.
    let inputs_need = if needed {
        inputs_need.unwrap_or(true)
    } else {
        inputs_need?
    };
    for c in &mut node.inputs {
        assign(c, inputs_need)?;
    }
    node.changelog = node.spec().changelog(&node.inputs);
    Some(())
}
