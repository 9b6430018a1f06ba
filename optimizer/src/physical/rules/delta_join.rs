//! `DeltaJoinRule`: replaces a regular join by a delta join that keeps no
//! join state and looks rows up in the index-lookup store instead.
//!
//! ```text
//! before:
//!   Join(joinType=[InnerJoin], where=[=(k, k)])      -- keeps both inputs
//!   :- Exchange(hash[k]) -- TableSourceScan(orders)
//!   +- Exchange(hash[k]) -- TableSourceScan(customers)
//!
//! after (table.optimizer.delta-join.strategy = AUTO or FORCE, preconditions hold):
//!   DeltaJoin(joinType=[InnerJoin], where=[=(k, k)]) -- no join state
//!   :- Exchange(hash[k]) -- TableSourceScan(orders)      (also written to the store)
//!   +- Exchange(hash[k]) -- TableSourceScan(customers)   (also written to the store)
//! ```
//!
//! Preconditions, as Flink's (each failure is named for `FORCE` and noted
//! on the join for `AUTO`):
//! 1. an INNER join;
//! 2. both inputs read a table directly (no filter or projection between);
//! 3. both tables declare `'index.key'` and the index key is covered by the
//!    join's equality condition on that side;
//! 4. both sources are insert-only or upserts without deletes, and an
//!    upserting side's join key and residual columns lie in its primary key
//!    (so every version of a row joins the same rows);
//! 5. the sink is an upsert sink: lookups see the latest store, so a pair
//!    can be emitted twice, which only a keyed sink tolerates.
//!
//! Why an upsert sink then materialises the batch join: with no deletes,
//! every current pair is emitted at least once after both its rows are in
//! the store (by whichever side arrives second), and the last version
//! emitted for a pair key is its latest.

use super::super::plan::{NodeKind, PhysicalNode};
use crate::config::{Config, DeltaJoinStrategy};
use crate::error::{PlanError, Result};
use operators::join::JoinType;

/// The table's declared index key, as column positions.
pub fn index_key(node: &PhysicalNode) -> Option<Vec<usize>> {
    let NodeKind::Source { table, .. } = &node.kind else {
        return None;
    };
    let spec = table.options.get("index.key")?;
    spec.split(',')
        .map(|c| {
            table
                .schema
                .fields
                .iter()
                .position(|f| f.name.eq_ignore_ascii_case(c.trim()))
        })
        .collect()
}

/// Why a join cannot be a delta join, if it cannot.
fn failed_precondition(node: &PhysicalNode, sink_is_upsert: bool) -> Option<String> {
    let NodeKind::Join {
        join_type,
        left_keys,
        right_keys,
        residual,
        ..
    } = &node.kind
    else {
        return Some("not a binary join".into());
    };
    if *join_type != JoinType::Inner {
        return Some("delta join supports INNER joins only".into());
    }
    let la = node.inputs[0].schema.len();
    for (side, keys) in [(0, left_keys), (1, right_keys)] {
        let input = &node.inputs[side];
        let name = match &input.kind {
            NodeKind::Source {
                table,
                predicate: None,
                projection: None,
            } => &table.name,
            _ => {
                return Some(format!(
                    "the {} input is not a direct table scan",
                    ["left", "right"][side]
                ))
            }
        };
        let Some(index) = index_key(input) else {
            return Some(format!(
                "table '{name}' declares no valid 'index.key' option"
            ));
        };
        if !index.iter().all(|c| keys.contains(c)) {
            return Some(format!(
                "the index key of '{name}' is not covered by the join's equality condition"
            ));
        }
        if input.changelog.delete {
            return Some(format!("source '{name}' may delete rows; delta join needs insert-only or upsert-without-delete sources"));
        }
        if !input.is_insert_only() {
            let Some(pk) = &input.unique_key else {
                return Some(format!(
                    "source '{name}' updates rows but has no primary key"
                ));
            };
            if !keys.iter().all(|c| pk.contains(c)) {
                return Some(format!(
                    "the join key of updating source '{name}' is not part of its primary key"
                ));
            }
            if let Some(r) = residual {
                let mut cols = Vec::new();
                r.columns(&mut cols);
                let own = cols.iter().filter(|c| (**c >= la) == (side == 1)).map(|c| {
                    if side == 1 {
                        c - la
                    } else {
                        *c
                    }
                });
                if own.clone().any(|c| !pk.contains(&c)) {
                    return Some(format!(
                        "the join condition reads non-key columns of updating source '{name}'"
                    ));
                }
            }
        }
    }
    if !sink_is_upsert {
        return Some("the sink has no primary key; delta join can emit a pair twice and needs an upsert sink".into());
    }
    None
}

/// Rewrites eligible joins in place. `FORCE` fails on the first join that
/// cannot be a delta join; `AUTO` leaves it regular with a note.
pub fn apply(node: &mut PhysicalNode, sink_is_upsert: bool, config: &Config) -> Result<()> {
    let strategy = config.delta_join_strategy();
    if strategy == DeltaJoinStrategy::None {
        return Ok(());
    }
    for c in &mut node.inputs {
        apply(c, sink_is_upsert, config)?;
    }
    if !matches!(node.kind, NodeKind::Join { .. }) {
        return Ok(());
    }
    match failed_precondition(node, sink_is_upsert) {
        None => {
            if let NodeKind::Join {
                left_keys,
                right_keys,
                residual,
                ..
            } = &node.kind
            {
                node.kind = NodeKind::DeltaJoin {
                    left_keys: left_keys.clone(),
                    right_keys: right_keys.clone(),
                    residual: residual.clone(),
                    cache_enabled: config.delta_join_cache_enabled(),
                    left_cache_size: config.delta_join_left_cache_size(),
                    right_cache_size: config.delta_join_right_cache_size(),
                };
                node.changelog = node.inputs[0].changelog.union(node.inputs[1].changelog);
            }
            Ok(())
        }
        Some(why) if strategy == DeltaJoinStrategy::Force => Err(PlanError::plan(format!(
            "table.optimizer.delta-join.strategy = FORCE, but this join cannot be a delta join: {why}"
        ))),
        Some(why) => {
            if let NodeKind::Join { note, .. } = &mut node.kind {
                // Only worth saying where a delta join was plausible.
                if node.inputs.iter().all(|i| index_key(i).is_some()) {
                    *note = Some(format!("not a delta join: {why}"));
                }
            }
            Ok(())
        }
    }
}
