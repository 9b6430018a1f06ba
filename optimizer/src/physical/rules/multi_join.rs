//! `multi_join`: fuses a chain of joins on a common key into one
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
//! named inputs only (aliases where tables are aliased). A RIGHT or FULL
//! join closes the group and stays binary (Flink's MultiJoin joins INNER
//! and LEFT only). Joins left binary carry a note EXPLAIN prints.
//!
//! The planner marks each join whose left input is the join before it in
//! the query's left-deep chain (`JoinHints::left_in_chain`) and keeps what
//! the query's hints said of it; the rule walks those chains.
//!
//! Correctness: every row of a fused input with common-key value `v` can
//! only join rows with key `v`, so hashing each input on its key column puts
//! everything a result row needs in one subtask. Each input's ON condition
//! (its key equalities included, so a NULL-padded earlier input matches
//! nothing) is evaluated over the inputs before it, as the binary chain
//! does.

use super::{PhysicalRule, RuleContext};
use crate::config::Config;
use crate::error::Result;
use crate::logical::Schema;
use crate::physical::node::join::Join;
use crate::physical::node::multi_join::MultiJoin;
use crate::physical::node::PhysicalNode;
use crate::physical::state_ttl;
use operators::expr::{BinOp, Expr};
use operators::join::JoinType;

pub struct MultiJoinRule;

impl PhysicalRule for MultiJoinRule {
    fn name(&self) -> &'static str {
        "multi_join"
    }

    fn optimize(&self, root: PhysicalNode, ctx: &RuleContext) -> Result<PhysicalNode> {
        Ok(fuse(root, ctx.config))
    }
}

/// Fuses every chain of joins below and at `node`.
fn fuse(mut node: PhysicalNode, config: &Config) -> PhysicalNode {
    if node.kind.is::<Join>() {
        return fuse_chain(node, config);
    }
    let keys: Vec<Option<Vec<usize>>> = node.inputs.iter().map(|c| c.unique_key.clone()).collect();
    node.inputs = std::mem::take(&mut node.inputs)
        .into_iter()
        .map(|c| fuse(c, config))
        .collect();
    // An input that became (or holds) a MultiJoin may have another unique
    // key, which this node's own may follow.
    if node
        .inputs
        .iter()
        .zip(&keys)
        .any(|(c, k)| c.unique_key != *k)
    {
        node.rederive();
    }
    node
}

/// One join of a flattened left-deep chain; it joins input `i` (its index
/// + 1) to the inputs before it.
struct ChainJoin {
    join: Join,
    /// Schema of the join's output (inputs `0..=i`).
    schema: Schema,
    parallelism: usize,
}

/// The chain of joins ending at `top`: its inputs, left to right, and its
/// joins (join `k` adds input `k + 1`).
fn flatten(top: PhysicalNode) -> (Vec<PhysicalNode>, Vec<ChainJoin>) {
    let mut inputs = Vec::new();
    let mut joins = Vec::new();
    let mut cur = top;
    loop {
        let join = cur
            .kind
            .get::<Join>()
            .expect("a chain is made of joins")
            .clone();
        let right = cur.inputs.pop().expect("a join's right input");
        let left = cur.inputs.pop().expect("a join's left input");
        inputs.push(right);
        let more = join.hints.left_in_chain && left.kind.is::<Join>();
        joins.push(ChainJoin {
            join,
            schema: cur.schema,
            parallelism: cur.parallelism,
        });
        if !more {
            inputs.push(left);
            break;
        }
        cur = left;
    }
    inputs.reverse();
    joins.reverse();
    (inputs, joins)
}

/// Fuses the chain of joins ending at `top` (and every chain below it).
fn fuse_chain(top: PhysicalNode, config: &Config) -> PhysicalNode {
    let (inputs, joins) = flatten(top);
    let planned: Vec<PhysicalNode> = inputs.into_iter().map(|i| fuse(i, config)).collect();
    let n = planned.len();
    let mut hinted: Vec<String> = Vec::new();
    for j in &joins {
        for a in &j.join.hints.multi_join {
            if !hinted.contains(a) {
                hinted.push(a.clone());
            }
        }
    }
    let mut offsets = vec![0usize; n + 1];
    for i in 0..n {
        offsets[i + 1] = offsets[i] + planned[i].schema.len();
    }
    let by_config = config.multi_join_enabled();
    let mut aliases: Vec<Option<String>> = vec![joins[0].join.hints.left_alias.clone()];
    aliases.extend(joins.iter().map(|j| j.join.hints.right_alias.clone()));
    let named = |i: usize| aliases[i].as_ref().is_some_and(|a| hinted.contains(a));
    let eligible = |i: usize| by_config || named(i);
    let wanted = by_config || !hinted.is_empty();
    // Join `k` adds input `k + 1`; MultiJoin takes INNER and LEFT joins only.
    let fusible = |k: usize| matches!(joins[k].join.join_type, JoinType::Inner | JoinType::Left);
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
            let first = &joins[p - 1].join;
            for (&l, &r) in first.left_keys.iter().zip(&first.right_keys) {
                let mut class = vec![l, offsets[p] + r];
                let mut q = p;
                if !eligible(p) || !fusible(p - 1) {
                    break;
                }
                while q + 1 < n && eligible(q + 1) && fusible(q) {
                    let j = &joins[q].join;
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
                    config,
                    &reason,
                    &member_aliases,
                );
                p = q + 1;
            }
            _ => {
                let j = &joins[p - 1];
                let note = (wanted && (eligible(p) || by_config)).then(|| {
                    if fusible(p - 1) {
                        "MultiJoin needs at least three inputs linked by one common key; this join stays binary".to_string()
                    } else {
                        format!(
                            "MultiJoin supports INNER and LEFT joins only; this {} stays binary",
                            join_type_sql(j.join.join_type)
                        )
                    }
                });
                let right = planned[p].take().expect("input planned once");
                let join = Join {
                    note,
                    ..j.join.clone()
                };
                result = Join::over(result, right, join, j.schema.clone(), j.parallelism);
                p += 1;
            }
        }
    }
    result
}

/// A join type as SQL writes it.
fn join_type_sql(t: JoinType) -> &'static str {
    match t {
        JoinType::Inner => "INNER JOIN",
        JoinType::Left => "LEFT JOIN",
        JoinType::Right => "RIGHT JOIN",
        JoinType::Full => "FULL OUTER JOIN",
    }
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
        let mut cond = j.join.residual.clone();
        for (l, r) in j.join.left_keys.iter().zip(&j.join.right_keys) {
            let eq = Expr::bin(BinOp::Eq, Expr::col(*l), Expr::col(offset + r));
            cond = Some(match cond {
                Some(c) => Expr::bin(BinOp::And, eq, c),
                None => eq,
            });
        }
        join_types.push(j.join.join_type);
        conditions.push(cond);
    }
    // Every join's STATE_TTL hints apply to the MultiJoin's inputs.
    let mut ttl_hints: Vec<(String, u64)> = Vec::new();
    for j in joins {
        for (k, ms) in &j.join.hints.state_ttl {
            if !ttl_hints.iter().any(|(x, _)| x == k) {
                ttl_hints.push((k.clone(), *ms));
            }
        }
    }
    let ttls = member_aliases
        .iter()
        .map(|a| state_ttl::ttl_for(a.as_deref(), &ttl_hints, config))
        .collect();
    let schema = joins.last().expect("a group has joins").schema.clone();
    MultiJoin::over(
        members,
        MultiJoin {
            keys,
            join_types,
            conditions,
            layouts: Vec::new(),
            reason: reason.to_string(),
            ttls,
        },
        schema,
        config.parallelism(),
    )
}
