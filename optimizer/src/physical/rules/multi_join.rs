//! `MultiJoinRule`: fuses a chain of joins on a common key into one
//! MultiJoin that keeps only its inputs.
//!
//! ```text
//! before (a left-deep chain of binary joins, each keeping both inputs,
//! so the chain also keeps every intermediate result):
//!   Join(t0.k = t2.k)
//!   :- Join(t0.k = t1.k)
//!   :  :- Scan(t0)
//!   :  +- Scan(t1)
//!   +- Scan(t2)
//!
//! after (table.optimizer.multi-join.enabled = true, or
//! /*+ MULTI_JOIN(t0, t1, t2) */):
//!   MultiJoin(commonKey=[k], joinTypes=[INNER, INNER])
//!   :- Exchange(hash[k]) -- Scan(t0)
//!   :- Exchange(hash[k]) -- Scan(t1)
//!   +- Exchange(hash[k]) -- Scan(t2)
//! ```
//!
//! Eligibility (as Flink's rule): INNER and LEFT joins whose equi-conditions
//! link each new input to the common key, directly or by transitivity
//! (`A.k = B.k AND B.k = C.k`). Walking the chain left to right, a join that
//! does not link to the current key closes the group; the group's result
//! becomes the first input of the next group, so inputs without one common
//! key split into several MultiJoins. A group needs at least three inputs
//! (two inputs keep no intermediate state anyway). The config key fuses
//! every eligible join and wins over hints; a `MULTI_JOIN` hint fuses the
//! named inputs only (aliases where tables are aliased). Joins left binary
//! carry a note EXPLAIN prints.
//!
//! Correctness: every row of a fused input with common-key value `v` can
//! only join rows with key `v`, so hashing each input on its key column puts
//! everything a result row needs in one subtask. Each input's ON condition
//! (its key equalities included, so a NULL-padded earlier input matches
//! nothing) is evaluated over the inputs before it, as the binary chain
//! does.

use super::super::plan::{NodeKind, PhysicalNode};
use super::super::planner::{binary_join, layout_for, plan_node};
use super::state_ttl;
use crate::catalog_view::CatalogView;
use crate::config::Config;
use crate::error::Result;
use crate::logical::{JoinKind, LogicalPlan, Schema};
use operators::changelog::ChangelogMode;
use operators::expr::{BinOp, Expr};
use operators::join::JoinType;

/// One join of a flattened left-deep chain; it joins input `i` (its index + 1).
struct ChainJoin {
    kind: JoinKind,
    /// Columns of the concatenation of inputs `0..i`.
    left_keys: Vec<usize>,
    /// Columns of input `i`.
    right_keys: Vec<usize>,
    /// Over the concatenation of inputs `0..=i`.
    residual: Option<Expr>,
    /// Schema of the join's output (inputs `0..=i`).
    schema: Schema,
    /// `STATE_TTL` entries of the join's hints.
    ttl_hints: Vec<(String, u64)>,
}

fn flatten<'a>(
    plan: &'a LogicalPlan,
    inputs: &mut Vec<&'a LogicalPlan>,
    joins: &mut Vec<ChainJoin>,
    hints: &mut Vec<String>,
) -> Result<()> {
    match plan {
        LogicalPlan::Join {
            left,
            right,
            kind,
            left_keys,
            right_keys,
            residual,
            schema,
            hints: h,
        } => {
            flatten(left, inputs, joins, hints)?;
            inputs.push(right);
            for hint in h
                .iter()
                .filter(|h| h.name.eq_ignore_ascii_case("MULTI_JOIN"))
            {
                for a in &hint.args {
                    let a = a.to_lowercase();
                    if !hints.contains(&a) {
                        hints.push(a);
                    }
                }
            }
            joins.push(ChainJoin {
                kind: *kind,
                left_keys: left_keys.clone(),
                right_keys: right_keys.clone(),
                residual: residual.clone(),
                schema: schema.clone(),
                ttl_hints: state_ttl::hinted(h)?,
            });
        }
        other => inputs.push(other),
    }
    Ok(())
}

fn alias(plan: &LogicalPlan) -> Option<String> {
    match plan {
        LogicalPlan::Scan { alias, .. } => Some(alias.to_lowercase()),
        _ => None,
    }
}

fn join_type(k: JoinKind) -> JoinType {
    match k {
        JoinKind::Inner => JoinType::Inner,
        JoinKind::Left => JoinType::Left,
    }
}

/// Plans a join (and the left-deep chain below it).
pub fn plan_join_chain(
    plan: &LogicalPlan,
    catalog: &dyn CatalogView,
    config: &Config,
) -> Result<PhysicalNode> {
    let mut inputs = Vec::new();
    let mut joins = Vec::new();
    let mut hinted = Vec::new();
    flatten(plan, &mut inputs, &mut joins, &mut hinted)?;
    let n = inputs.len();
    let planned: Vec<PhysicalNode> = inputs
        .iter()
        .map(|i| plan_node(i, catalog, config))
        .collect::<Result<_>>()?;
    let mut offsets = vec![0usize; n + 1];
    for i in 0..n {
        offsets[i + 1] = offsets[i] + planned[i].schema.len();
    }
    let by_config = config.multi_join_enabled();
    let aliases: Vec<Option<String>> = inputs.iter().map(|p| alias(p)).collect();
    let named = |i: usize| aliases[i].as_ref().is_some_and(|a| hinted.contains(a));
    let eligible = |i: usize| by_config || named(i);
    let wanted = by_config || !hinted.is_empty();
    let reason = if by_config {
        "table.optimizer.multi-join.enabled = true".to_string()
    } else {
        format!("MULTI_JOIN({}) hint", hinted.join(", "))
    };

    let mut planned: Vec<Option<PhysicalNode>> = planned.into_iter().map(Some).collect();
    let mut result = planned[0].take().expect("first input");
    let mut p = 1;
    while p < n {
        // The longest run of joins p..=q linked to one common key.
        let mut best: Option<(usize, Vec<usize>)> = None;
        let group_may_start = p > 1 || eligible(0);
        if wanted && group_may_start {
            for (&l, &r) in joins[p - 1].left_keys.iter().zip(&joins[p - 1].right_keys) {
                let mut class = vec![l, offsets[p] + r];
                let mut q = p;
                if !eligible(p) {
                    break;
                }
                while q + 1 < n && eligible(q + 1) {
                    let j = &joins[q];
                    let link = j
                        .left_keys
                        .iter()
                        .zip(&j.right_keys)
                        .find(|(l2, _)| class.contains(l2));
                    match link {
                        Some((_, r2)) => {
                            class.push(offsets[q + 1] + r2);
                            q += 1;
                        }
                        None => break,
                    }
                }
                if best.as_ref().is_none_or(|(bq, _)| q > *bq) {
                    best = Some((q, class));
                }
            }
        }
        match best {
            Some((q, class)) if q > p => {
                // MultiJoin over (result so far, inputs p..=q).
                let mut members = vec![result];
                for (i, slot) in planned.iter_mut().enumerate().take(q + 1).skip(p) {
                    members.push(
                        slot.take()
                            .unwrap_or_else(|| unreachable!("input {i} planned once")),
                    );
                }
                // Member 0 is a table only when the group starts the chain.
                let mut member_aliases = vec![if p == 1 { aliases[0].clone() } else { None }];
                member_aliases.extend(aliases[p..=q].iter().cloned());
                result = multi_join_node(
                    members,
                    &joins[p - 1..q],
                    &class,
                    &offsets,
                    p,
                    &joins[q - 1].schema,
                    config,
                    &reason,
                    &member_aliases,
                );
                p = q + 1;
            }
            _ => {
                let j = &joins[p - 1];
                let note = (wanted && (eligible(p) || by_config)).then(|| {
                    "MultiJoin needs at least three inputs linked by one common key; this join stays binary".to_string()
                });
                let right = planned[p].take().expect("input planned once");
                result = binary_join(
                    result,
                    right,
                    join_type(j.kind),
                    j.left_keys.clone(),
                    j.right_keys.clone(),
                    j.residual.clone(),
                    j.schema.clone(),
                    config,
                    note,
                    [
                        // The left input is a table only for the first join.
                        state_ttl::ttl_for(
                            if p == 1 { aliases[0].as_deref() } else { None },
                            &j.ttl_hints,
                            config,
                        ),
                        state_ttl::ttl_for(aliases[p].as_deref(), &j.ttl_hints, config),
                    ],
                );
                p += 1;
            }
        }
    }
    Ok(result)
}

/// Builds the MultiJoin node. `members[0]` is the chain's result up to input
/// `first - 1`; `members[k]` (k >= 1) is chain input `first + k - 1`, joined
/// by `joins[k - 1]`. `class` holds the common key's global columns.
#[allow(clippy::too_many_arguments)]
fn multi_join_node(
    members: Vec<PhysicalNode>,
    joins: &[ChainJoin],
    class: &[usize],
    offsets: &[usize],
    first: usize,
    schema: &Schema,
    config: &Config,
    reason: &str,
    member_aliases: &[Option<String>],
) -> PhysicalNode {
    // Global column ranges of each member.
    let mut ranges = vec![(0, offsets[first])];
    for k in 1..members.len() {
        let i = first + k - 1;
        ranges.push((offsets[i], offsets[i + 1]));
    }
    let keys: Vec<Vec<usize>> = ranges
        .iter()
        .map(|(lo, hi)| {
            let c = class
                .iter()
                .find(|c| **c >= *lo && **c < *hi)
                .expect("each member has a common key column");
            vec![c - lo]
        })
        .collect();
    let mut join_types = vec![JoinType::Inner];
    let mut conditions = vec![None];
    for (k, j) in joins.iter().enumerate() {
        let offset = ranges[k + 1].0;
        let mut cond = j.residual.clone();
        for (l, r) in j.left_keys.iter().zip(&j.right_keys) {
            let eq = Expr::bin(BinOp::Eq, Expr::col(*l), Expr::col(offset + r));
            cond = Some(match cond {
                Some(c) => Expr::bin(BinOp::And, eq, c),
                None => eq,
            });
        }
        join_types.push(join_type(j.kind));
        conditions.push(cond);
    }
    let layouts = members
        .iter()
        .zip(&keys)
        .map(|(m, k)| layout_for(m, k))
        .collect();
    // Every join's STATE_TTL hints apply to the MultiJoin's inputs.
    let mut ttl_hints: Vec<(String, u64)> = Vec::new();
    for j in joins {
        for (k, ms) in &j.ttl_hints {
            if !ttl_hints.iter().any(|(x, _)| x == k) {
                ttl_hints.push((k.clone(), *ms));
            }
        }
    }
    let ttls = member_aliases
        .iter()
        .map(|a| state_ttl::ttl_for(a.as_deref(), &ttl_hints, config))
        .collect();
    let all_inner = join_types.iter().all(|t| *t == JoinType::Inner);
    let changelog = if all_inner && members.iter().all(|m| m.is_insert_only()) {
        ChangelogMode::INSERT_ONLY
    } else {
        ChangelogMode::ALL
    };
    let unique_key = members
        .iter()
        .zip(&ranges)
        .map(|(m, (lo, _))| {
            m.unique_key
                .as_ref()
                .map(|u| u.iter().map(|c| c + lo).collect::<Vec<_>>())
        })
        .collect::<Option<Vec<_>>>()
        .map(|parts| parts.concat());
    PhysicalNode {
        kind: NodeKind::MultiJoin {
            keys,
            join_types,
            conditions,
            layouts,
            reason: reason.to_string(),
            ttls,
        },
        inputs: members,
        schema: schema.clone(),
        changelog,
        unique_key,
        parallelism: config.parallelism(),
    }
}
