//! `delta_join`: replaces a regular join by a delta join that keeps no join
//! state and looks rows up in the index-lookup store instead.
//!
//! ```text
//! before:
//!   Join(joinType=[InnerJoin], where=[=(k, k)])      -- keeps both inputs
//!   :- Exchange(hash[k]) -- TableSourceScan(orders)
//!   +- Exchange(hash[k]) -- Calc(select=[k, id, *(v, 2) AS v2], where=[>(v, 2)])
//!                           +- TableSourceScan(customers)
//!
//! after (table.optimizer.delta-join.strategy = AUTO or FORCE, preconditions hold):
//!   DeltaJoin(joinType=[InnerJoin], where=[=(k, k)]) -- no join state
//!   :- Exchange(hash[k]) -- TableSourceScan(orders)      (also written to the store)
//!   +- Exchange(hash[k]) -- Calc(select=[k, id, *(v, 2) AS v2], where=[>(v, 2)])
//!                           +- TableSourceScan(customers) (also written to the store;
//!                              the lookups into it apply the Calc to the rows found)
//! ```
//!
//! Preconditions, as Flink 2.2's `DeltaJoinUtil.canConvertToDeltaJoin`
//! (each failure is named for `FORCE` and noted on the join for `AUTO`):
//! 1. an INNER join;
//! 2. both inputs read a table, through one filter and projection at most
//!    (Flink: one Calc between the source and the join), deterministic
//!    (no `PROCTIME()` column read);
//! 3. both tables declare `'index.key'` and the index key is covered by the
//!    join's equality condition on that side, taken through the projection
//!    (a key column the projection computes does not count);
//! 4. both sources are insert-only or upserts without deletes, and an
//!    upserting side's join key, filter and residual columns lie in its
//!    primary key (so every version of a row is kept or dropped alike and
//!    joins the same rows);
//! 5. the sink is an upsert sink keyed on the join's unique key, and the
//!    join's rows reach it through Calcs only: lookups see the latest
//!    store, so a pair can be emitted twice, which only a keyed sink
//!    tolerates (an aggregate or another join between would count the pair
//!    twice).
//!
//! Not yet: cascaded delta joins (Flink 2.2 turns a join whose input is a
//! delta join, through one Calc at most, into a delta join that looks the
//! lower join's tables up in a chain, `DeltaJoinLookupChain`); here the
//! upper join of `a JOIN b JOIN c` stays regular (its input is no scan).
//!
//! Why an upsert sink then materialises the batch join: with no deletes,
//! every current pair is emitted at least once after both its rows are in
//! the store (by whichever side arrives second), and the last version
//! emitted for a pair key is its latest. The filter and projection are
//! functions of the table row, so the stream side and the lookups see the
//! same rows of each version.

use super::{PhysicalRule, RuleContext};
use crate::config::{Config, DeltaJoinStrategy};
use crate::error::{PlanError, Result};
use crate::physical::node::calc::Calc;
use crate::physical::node::delta_join::{side_calc, DeltaJoin};
use crate::physical::node::join::Join;
use crate::physical::node::sink_materializer::SinkMaterializer;
use crate::physical::node::source::Source;
use crate::physical::node::PhysicalNode;
use operators::changelog::SinkEncoding;
use operators::expr::Expr;
use operators::join::JoinType;

pub struct DeltaJoinRule;

impl PhysicalRule for DeltaJoinRule {
    fn name(&self) -> &'static str {
        "delta_join"
    }

    fn optimize(&self, mut root: PhysicalNode, ctx: &RuleContext) -> Result<PhysicalNode> {
        // A query without a sink has none to absorb duplicates.
        let Some(sink) = ctx.sink else {
            return Ok(root);
        };
        // Duplicates a delta join may emit are harmless only to an upsert
        // sink on the join's own unique key (no materializer re-keys it).
        let sink_is_upsert = matches!(sink.encoding, SinkEncoding::Upsert { .. })
            && !root.kind.is::<SinkMaterializer>();
        let to_sink = if sink_is_upsert {
            Consumer::UpsertSink
        } else {
            Consumer::RetractSink
        };
        apply(&mut root, to_sink, ctx.config)?;
        Ok(root)
    }
}

/// Whether a scan's filter and projection give the same row for the same
/// table row every time, as a delta join's lookups must see the rows its
/// inputs saw: they read no `PROCTIME()` column.
fn is_deterministic(source: &Source) -> bool {
    let mut cols = Vec::new();
    source.predicate.iter().for_each(|p| p.columns(&mut cols));
    source
        .projection
        .iter()
        .flatten()
        .for_each(|e| e.columns(&mut cols));
    !cols
        .iter()
        .any(|&c| matches!(source.table.computed.get(c), Some(Some(Expr::ProcTime))))
}

/// The table's declared index key, when `node` scans a table.
fn index_key(node: &PhysicalNode) -> Option<Vec<usize>> {
    node.kind.get::<Source>()?.index_key()
}

/// What takes a node's rows on their way to the sink.
#[derive(Clone)]
enum Consumer {
    /// An upsert sink keyed on the node's unique key, through Calcs only.
    UpsertSink,
    /// A sink that keeps every row it is sent.
    RetractSink,
    /// A node that is not a Calc (its label).
    Node(String),
}

/// Why a join cannot be a delta join, if it cannot.
fn failed_precondition(node: &PhysicalNode, to_sink: &Consumer) -> Option<String> {
    let Some(Join {
        join_type,
        left_keys,
        right_keys,
        residual,
        ..
    }) = node.kind.get::<Join>()
    else {
        return Some("not a binary join".into());
    };
    let sql_name = match join_type {
        JoinType::Inner => None,
        JoinType::Left => Some("LEFT"),
        JoinType::Right => Some("RIGHT"),
        JoinType::Full => Some("FULL OUTER"),
    };
    if let Some(name) = sql_name {
        return Some(format!(
            "delta join supports INNER joins only, and this is a {name} join"
        ));
    }
    let la = node.inputs[0].schema.len();
    for (side, keys) in [(0, left_keys), (1, right_keys)] {
        let input = &node.inputs[side];
        let Some(source) = input.kind.get::<Source>() else {
            return Some(format!(
                "the {} input is not a table scan (with a filter and projection at most)",
                ["left", "right"][side]
            ));
        };
        let name = &source.table.name;
        let calc = side_calc(source);
        if !is_deterministic(source) {
            return Some(format!(
                "the filter or projection over '{name}' is not deterministic"
            ));
        }
        let Some(index) = index_key(input) else {
            return Some(format!(
                "table '{name}' declares no valid 'index.key' option"
            ));
        };
        // The join key in the table's columns (a key column the projection
        // computes cannot be looked up).
        let table_keys: Vec<usize> = keys.iter().filter_map(|&k| calc.source_column(k)).collect();
        if !index.iter().all(|c| table_keys.contains(c)) {
            return Some(format!(
                "the index key of '{name}' is not covered by the join's equality condition"
            ));
        }
        // The table columns an output column of the scan reads.
        let reads = |c: usize| -> Vec<usize> {
            let mut cols = Vec::new();
            match &source.projection {
                Some(p) => p[c].columns(&mut cols),
                None => cols.push(c),
            }
            cols
        };
        if input.changelog.delete {
            return Some(format!("source '{name}' may delete rows; delta join needs insert-only or upsert-without-delete sources"));
        }
        if !input.is_insert_only() {
            let Some(pk) = &input.unique_key else {
                return Some(format!(
                    "source '{name}' updates rows but has no primary key"
                ));
            };
            if !keys
                .iter()
                .all(|&c| calc.source_column(c).is_some_and(|t| pk.contains(&t)))
            {
                return Some(format!(
                    "the join key of updating source '{name}' is not part of its primary key"
                ));
            }
            let mut filtered = Vec::new();
            source
                .predicate
                .iter()
                .for_each(|p| p.columns(&mut filtered));
            if filtered.iter().any(|c| !pk.contains(c)) {
                return Some(format!(
                    "the filter over updating source '{name}' reads columns outside its primary key"
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
                if own.flat_map(reads).any(|c| !pk.contains(&c)) {
                    return Some(format!(
                        "the join condition reads non-key columns of updating source '{name}'"
                    ));
                }
            }
        }
    }
    match to_sink {
        Consumer::UpsertSink => None,
        Consumer::RetractSink => Some("the sink has no primary key; delta join can emit a pair twice and needs an upsert sink".into()),
        Consumer::Node(label) => Some(format!(
            "its rows reach the sink through a {label}; delta join can emit a pair twice, which only an upsert sink taking its rows directly absorbs"
        )),
    }
}

/// Rewrites eligible joins in place. `FORCE` fails on the first join that
/// cannot be a delta join; `AUTO` leaves it regular with a note.
fn apply(node: &mut PhysicalNode, to_sink: Consumer, config: &Config) -> Result<()> {
    let strategy = config.delta_join_strategy();
    if strategy == DeltaJoinStrategy::None {
        return Ok(());
    }
    // A Calc hands its input's rows on as they come; any other node does
    // not (an aggregate would count a duplicate pair, a join join it).
    let below = if node.kind.is::<Calc>() {
        to_sink.clone()
    } else {
        Consumer::Node(node.label())
    };
    for c in &mut node.inputs {
        apply(c, below.clone(), config)?;
    }
    let Some(join) = node.kind.get::<Join>() else {
        return Ok(());
    };
    match failed_precondition(node, &to_sink) {
        None => {
            let delta = DeltaJoin {
                left_keys: join.left_keys.clone(),
                right_keys: join.right_keys.clone(),
                residual: join.residual.clone(),
                cache_enabled: config.delta_join_cache_enabled(),
                left_cache_size: config.delta_join_left_cache_size(),
                right_cache_size: config.delta_join_right_cache_size(),
                source_read_ahead: config.delta_join_read_ahead(),
            };
            node.kind = delta.into();
            node.changelog = node.spec().changelog(&node.inputs);
            Ok(())
        }
        Some(why) if strategy == DeltaJoinStrategy::Force => Err(PlanError::plan(format!(
            "table.optimizer.delta-join.strategy = FORCE, but this join cannot be a delta join: {why}"
        ))),
        Some(why) => {
            // Only worth saying where a delta join was plausible.
            let plausible = node.inputs.iter().all(|i| index_key(i).is_some());
            if let Some(join) = node.kind.get_mut::<Join>() {
                if plausible {
                    join.note = Some(format!("not a delta join: {why}"));
                }
            }
            Ok(())
        }
    }
}
