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
//! Why an upsert sink then materialises the batch join: with no deletes,
//! every current pair is emitted at least once after both its rows are in
//! the store (by whichever side arrives second), and the last version
//! emitted for a pair key is its latest. The filter and projection are
//! functions of the table row, so the stream side and the lookups see the
//! same rows of each version.
//!
//! Cascaded (Flink 2.2's `DeltaJoinLookupChain`): a join one or both of
//! whose inputs is a two-way join of table scans, through one Calc at most,
//! becomes a delta join when those joins become ones too; a record looks a
//! table scan input up as above, and a lower join's tables one after the
//! other, each by its index key (both sides lower joins: Flink's bushy
//! cascade):
//!
//! ```text
//! before (orders JOIN customers ON customer_id, nation_id JOIN nations ON nation_id):
//!   Join(where=[=(nation_id0, nation_id1)])          -- keeps both inputs, the
//!   :- Exchange(hash[nation_id0])                       left one a join result
//!   :  +- Join(where=[AND(=(customer_id, customer_id0), =(nation_id, nation_id0))])
//!   :     :- Exchange(hash[..]) -- TableSourceScan(orders)     ('index.key' customer_id)
//!   :     +- Exchange(hash[..]) -- TableSourceScan(customers)  ('index.key' nation_id)
//!   +- Exchange(hash[nation_id]) -- TableSourceScan(nations)   ('index.key' nation_id)
//!
//! after (tables named without their catalog and database here):
//!   DeltaJoin(where=[=(nation_id0, nation_id1)], leftToRight=[Binary],
//!     rightToLeft=[[{round=[1], sourceTables=[nations], lookupTable=[customers],
//!                    lookupKeys=[nation_id=nation_id]},
//!                   {round=[2], sourceTables=[customers], lookupTable=[orders],
//!                    lookupKeys=[customer_id=customer_id], remaining=[(nation_id = nation_id0)]}]])
//!   :- Exchange(hash[nation_id0])
//!   :  +- DeltaJoin(where=[AND(=(customer_id, customer_id0), =(nation_id, nation_id0))])
//!   :     :- ... TableSourceScan(orders)     (each scan writes the store)
//!   :     +- ... TableSourceScan(customers)
//!   +- Exchange(hash[nation_id]) -- TableSourceScan(nations)
//! ```
//!
//! Further preconditions of the cascade (`node/delta_join/chain.rs`; each failure
//! is named as above, and `AUTO` leaves both joins regular):
//! 6. the lower join is an INNER join of two table scans meeting 1-4
//!    itself (a cascade over a cascade is not supported yet);
//! 7. round 1: the index key of one of its tables is covered by this join's
//!    equalities; round 2: the index key of the other by the lower join's
//!    equalities with the first (or this join's);
//! 8. when its tables update, this join's key on it, the Calc's filter and
//!    this join's residual on it read only primary key columns;
//! 9. the lower join's rows reach this join through a Calc at most, and
//!    this join's rows the upsert sink (5, with this join in between: a
//!    duplicate pair below makes duplicate rows above, which the same sink
//!    absorbs).
//!
//! Why the cascade is exact: take final versions `a`, `b`, `c` that join
//! (`c` the other side's row). By the two-way argument the lower join's last
//! row for the pair key of `a` and `b` is `a ++ b`, emitted once both are
//! in the store; the rows of one pair key take one path (their join keys
//! are stable, 4 and 8), so this join processes them in emission order,
//! `a ++ b` last, at `T1`. Let `T2` be when it processes `c`. If `T1` is
//! later, `c` is in the store and current then, so the lookup emits the
//! triple. If `T2` is later, `a` and `b` were written before `T1` and are
//! current at `T2`; round 1 finds one of them by this join's equalities
//! and round 2 the other by the lower join's, so the chain emits the
//! triple. Either way it is the last row for the triple's key: a later
//! one would come from a later row of the lower join for the pair key or a
//! later version of `c`, and neither exists. A triple that does not join in
//! the final tables never joined (every condition reads stable columns),
//! so nothing else is left.

use super::{PhysicalRule, RuleContext};
use crate::config::{Config, DeltaJoinStrategy};
use crate::error::{PlanError, Result};
use crate::physical::node::calc::Calc;
use crate::physical::node::delta_join::chain::{chain, side_of, Cascade, Side};
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
    /// A join that cannot be a delta join (why not).
    Join(String),
    /// A node that is not a Calc or a join (its label).
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
    let sides = [&node.inputs[0], &node.inputs[1]].map(side_of);
    for (side, keys) in [(0, left_keys), (1, right_keys)] {
        let input = &node.inputs[side];
        let this = ["left", "right"][side];
        let cascade = match &sides[side] {
            Err(why) => return Some(format!("the {this} input {why}")),
            Ok(Side::Scan(_)) => None,
            Ok(Side::Cascade(c)) => Some(c),
        };
        if let Some(c) = cascade {
            let side_ok = sides[side].as_ref().expect("checked above");
            if let Some(why) = cascade_failure(c, side_ok, keys, residual.as_ref(), la, side) {
                return Some(format!("the {this} input is a join, and {why}"));
            }
            let other_keys = [left_keys, right_keys][1 - side];
            if let Err(why) = chain(other_keys, keys, side_ok) {
                return Some(why);
            }
            continue;
        }
        let Some(source) = input.kind.get::<Source>() else {
            return Some(format!("the {this} input is not a table scan"));
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
        // A regular join would join a duplicate pair twice.
        Consumer::Join(why) => Some(format!(
            "its rows reach a join that cannot be a delta join ({why})"
        )),
        Consumer::Node(label) => Some(format!(
            "its rows reach the sink through a {label}; delta join can emit a pair twice, which only an upsert sink taking its rows directly absorbs"
        )),
    }
}

/// Why a join below (through one Calc at most) cannot be looked up
/// through: it cannot be a delta join itself, or, when its tables update,
/// this join's key, residual or the Calc between read columns that change
/// between versions of a row. `keys` and `side` are this join's on it.
fn cascade_failure(
    c: &Cascade,
    side: &Side,
    keys: &[usize],
    residual: Option<&Expr>,
    left_width: usize,
    side_index: usize,
) -> Option<String> {
    if c.lower.kind.is::<Join>() {
        if let Some(why) = failed_precondition(c.lower, &Consumer::UpsertSink) {
            return Some(format!("it cannot be a delta join itself: {why}"));
        }
    }
    let lower_insert_only = c.lower.inputs.iter().all(|i| i.is_insert_only());
    if lower_insert_only {
        return None;
    }
    if !keys
        .iter()
        .all(|&k| side.stable(k) && side.table_column(k).is_some())
    {
        return Some(
            "this join's key on it is not part of the primary keys of its updating tables".into(),
        );
    }
    if !side.filter_stable() {
        return Some(
            "the filter between them reads columns outside the primary keys of its updating tables"
                .into(),
        );
    }
    if let Some(r) = residual {
        let mut cols = Vec::new();
        r.columns(&mut cols);
        let own = cols
            .into_iter()
            .filter(|c| (*c >= left_width) == (side_index == 1))
            .map(|c| if side_index == 1 { c - left_width } else { c });
        if !own.into_iter().all(|c| side.stable(c)) {
            return Some(
                "this join's condition reads non-key columns of its updating tables".into(),
            );
        }
    }
    None
}

/// Rewrites eligible joins in place. `FORCE` fails on the first join that
/// cannot be a delta join; `AUTO` leaves it regular with a note.
fn apply(node: &mut PhysicalNode, to_sink: Consumer, config: &Config) -> Result<()> {
    let strategy = config.delta_join_strategy();
    if strategy == DeltaJoinStrategy::None {
        return Ok(());
    }
    // A Calc hands its input's rows on as they come, and so does a join
    // that becomes a delta join (a duplicate pair below makes duplicate
    // rows above, which the same upsert sink absorbs); any other node does
    // not (an aggregate would count a duplicate pair, a regular join join
    // it twice). Whether a join becomes one is known before its inputs
    // are rewritten: a join input counts as the delta join it would be.
    let below = if node.kind.is::<Calc>() {
        to_sink.clone()
    } else if node.kind.is::<Join>() {
        match failed_precondition(node, &to_sink) {
            None => to_sink.clone(),
            Some(why) => Consumer::Join(why),
        }
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
            let plausible = node.inputs.iter().all(|i| {
                side_of(i).is_ok_and(|s| s.scans().iter().all(|n| index_key(n).is_some()))
            });
            if let Some(join) = node.kind.get_mut::<Join>() {
                if plausible {
                    join.note = Some(format!("not a delta join: {why}"));
                }
            }
            Ok(())
        }
    }
}
