//! `update_before`: decides, top-down, which nodes must emit update-before
//! (`-U`) rows, and recomputes every node's changelog bottom-up.
//!
//! ```text
//! before (every aggregate emits -U, as if every consumer needed it):
//!   Sink(table=[per_user], PRIMARY KEY (user_id))        -- an upsert sink
//!   +- GroupAggregate(groupBy=[user_id], ..., changelogMode=[I,UB,UA])
//!
//! after (an upsert sink keyed on the aggregate's key replaces rows by key):
//!   Sink(table=[per_user], PRIMARY KEY (user_id))
//!   +- GroupAggregate(groupBy=[user_id], ..., changelogMode=[I,UA])
//! ```
//!
//! Each node says what its inputs must emit given what its consumer needs
//! (`NodeSpec::require_update_before`): a Calc passes the need on; an
//! aggregate, a join or a materializer, which find the rows to retract by
//! their `-U`, need it from their inputs whatever their consumer does. The
//! plan is not right without this rule (changelog modes would be stale),
//! so it cannot be switched off.

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
        let needed = ctx
            .sink
            .is_none_or(|s| !matches!(s.encoding, SinkEncoding::Upsert { .. }));
        assign(&mut root, needed);
        Ok(root)
    }
}

fn assign(node: &mut PhysicalNode, needed: bool) {
    let inputs_need = node.kind.spec_mut().require_update_before(needed);
    for c in &mut node.inputs {
        assign(c, inputs_need);
    }
    node.changelog = node.spec().changelog(&node.inputs);
}
