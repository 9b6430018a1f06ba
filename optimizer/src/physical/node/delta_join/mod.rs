//! `DeltaJoin`: an INNER join that keeps no join state. Its two inputs are
//! table scans (each with a deterministic filter and projection at most)
//! that also write what they read into the index-lookup store
//! (as a Fluss table is written ahead of the jobs that read its changelog);
//! each arriving row looks the other side up there, through an LRU cache
//! per side. An input may instead be a two-way delta join (through one Calc
//! at most): a cascaded delta join, whose records look that join's tables
//! up in a chain (`delta_join/chain.rs`). When a join becomes a delta join:
//! `physical/rules/delta_join.rs`.

pub mod chain;

use super::build::{operator_error, JobContext, Out};
use super::check::{self, Check};
use super::explain::{exprs, same, ExplainContext, ExplainNode};
use super::join::{check_binary, join_condition, ordered_by_unique_key};
use super::source::{with_calc, Source};
use super::{JoinRole, PhysicalNode};
use crate::error::{PlanError, Result};
use crate::physical::display::unique_names;
use chain::{chain, explain_chain, side_of, Side};
use operators::changelog::ChangelogMode;
use operators::exec::Exchange;
use operators::expr::Expr;
use operators::join::StoreWritingSource;
use operators::join::{
    CascadedDeltaJoinOperator, CascadedDeltaJoinSpec, DeltaJoinOperator, DeltaJoinOptions,
    DeltaJoinSpec, LookupChain, LookupRound, SideCalc,
};
use operators::lookup::{IndexLookupStore, TableId};
use operators::operator::Operator;
use std::sync::Arc;

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct DeltaJoin {
    pub left_keys: Vec<usize>,
    pub right_keys: Vec<usize>,
    pub residual: Option<Expr>,
    pub cache_enabled: bool,
    pub left_cache_size: usize,
    pub right_cache_size: usize,
    /// Batches each input writes into the store ahead of the join
    /// (`lab.delta-join.source-read-ahead`).
    pub source_read_ahead: usize,
}

/// The filter and projection a scan applies to its table's rows.
pub fn side_calc(source: &Source) -> SideCalc {
    SideCalc {
        predicate: source.predicate.clone(),
        projection: source.projection.clone(),
    }
}

/// The most batches a delta join's sources may write ahead (they hold
/// them in memory).
pub const MAX_READ_AHEAD: usize = 1 << 16;

impl DeltaJoin {
    pub const TYPE_NAMES: &'static [&'static str] = &["stream-exec-delta-join_1"];
}

impl super::NodeSpec for DeltaJoin {
    fn label(&self) -> String {
        "DeltaJoin".into()
    }

    fn type_name(&self) -> &'static str {
        Self::TYPE_NAMES[0]
    }

    fn input_count(&self) -> usize {
        2
    }

    fn input_exchange(&self, _node: &PhysicalNode, i: usize) -> Exchange {
        super::join::hash_on_side_keys(&self.left_keys, &self.right_keys, i)
    }

    fn changelog(&self, inputs: &[PhysicalNode]) -> ChangelogMode {
        inputs[0].changelog.union(inputs[1].changelog)
    }

    fn changes_ordered_by_unique_key(&self, node: &PhysicalNode) -> bool {
        ordered_by_unique_key(node, &self.left_keys, &self.right_keys)
    }

    fn is_join_result(&self, _node: &PhysicalNode) -> bool {
        true
    }

    fn join_role(&self) -> Option<JoinRole> {
        Some(JoinRole::LooksUp)
    }

    fn reads_own_inputs(&self) -> bool {
        true
    }

    fn explain(&self, n: &PhysicalNode, ctx: &mut dyn ExplainContext) -> ExplainNode {
        let out = unique_names(&n.schema);
        let lw = n.inputs[0].schema.len();
        let mut e = ExplainNode::new("DeltaJoin", n, ctx.identity(n));
        e.attrs.push(same("joinType", "InnerJoin"));
        e.attrs.push(exprs("where", |s| {
            join_condition(
                &out,
                lw,
                &self.left_keys,
                &self.right_keys,
                self.residual.as_ref(),
                s,
            )
        }));
        if let (Ok(l), Ok(r)) = (side_of(&n.inputs[0]), side_of(&n.inputs[1])) {
            if l.is_cascade() || r.is_cascade() {
                // Flink prints the lookup chains of a cascaded delta join.
                let text = |this: &Side, i: usize, other: &Side, keys: [&[usize]; 2]| {
                    chain(keys[0], keys[1], other)
                        .map(|c| explain_chain(this, &n.inputs[i], other, &c))
                        .unwrap_or_default()
                };
                let (lk, rk) = (&self.left_keys[..], &self.right_keys[..]);
                e.attrs.push(same("leftToRight", text(&l, 0, &r, [lk, rk])));
                e.attrs.push(same("rightToLeft", text(&r, 1, &l, [rk, lk])));
            }
        }
        e.attrs.push(same("select", out.join(", ")));
        e.lab.push((
            "cache",
            if self.cache_enabled {
                format!(
                    "left={}, right={}",
                    self.left_cache_size, self.right_cache_size
                )
            } else {
                "off".to_string()
            },
        ));
        e
    }

    fn validate(&self, node: &PhysicalNode) -> Check {
        // The key pairs first: the chains below index one side's keys by
        // the other's positions.
        check_binary(
            node,
            &self.left_keys,
            &self.right_keys,
            self.residual.as_ref(),
        )?;
        let mut sides = Vec::new();
        for (i, input) in node.inputs.iter().enumerate() {
            let side = side_of(input).map_err(|why| {
                check::invalid(
                    "",
                    format!("input {i} {why}, and a delta join reads only those"),
                )
            })?;
            sides.push(side);
        }
        for (side, (this, other)) in [
            (&self.left_keys, &self.right_keys),
            (&self.right_keys, &self.left_keys),
        ]
        .into_iter()
        .enumerate()
        {
            if let Err(why) = chain(this, other, &sides[1 - side]) {
                return Err(check::invalid(
                    check::field(node, ["right_keys", "left_keys"][side]),
                    why,
                ));
            }
        }
        for (field, size) in [
            ("left_cache_size", self.left_cache_size),
            ("right_cache_size", self.right_cache_size),
        ] {
            if size == 0 {
                return Err(check::invalid(
                    check::field(node, field),
                    "a cache holds at least 1 entry",
                ));
            }
        }
        if self.source_read_ahead > MAX_READ_AHEAD {
            return Err(check::invalid(
                check::field(node, "source_read_ahead"),
                format!(
                    "{} batches is more than the {MAX_READ_AHEAD} a source may write ahead",
                    self.source_read_ahead
                ),
            ));
        }
        Ok(())
    }

    fn build(&self, node: &PhysicalNode, _id: usize, ctx: &mut dyn JobContext) -> Result<Out> {
        let store = ctx.lookup_store()?;
        let sides = node
            .inputs
            .iter()
            .map(side_of)
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|why| PlanError::plan(format!("a delta join input {why}")))?;
        let options = DeltaJoinOptions {
            cache_enabled: self.cache_enabled,
            left_cache_size: self.left_cache_size,
            right_cache_size: self.right_cache_size,
            count_duplicates: true,
        };
        if sides.iter().any(Side::is_cascade) {
            return self.build_cascaded(node, &sides, store, options, ctx);
        }
        let mut tables = Vec::new();
        let mut inputs = Vec::new();
        let mut calcs = Vec::new();
        for child in &node.inputs {
            let (id, out) = self.scan_input(child, &store, ctx)?;
            inputs.push(out);
            tables.push(id);
            calcs.push(side_calc(child.kind.get::<Source>().expect("a scan")));
        }
        let right_calc = calcs.pop().unwrap_or_default();
        let left_calc = calcs.pop().unwrap_or_default();
        let spec = DeltaJoinSpec {
            left_table: tables[0],
            right_table: tables[1],
            left_calc,
            right_calc,
            left_keys: self.left_keys.clone(),
            right_keys: self.right_keys.clone(),
            residual: self.residual.clone(),
        };
        let subtasks = (0..node.parallelism)
            .map(|_| {
                DeltaJoinOperator::new(store.clone(), spec.clone(), options.clone())
                    .map(|o| Box::new(o) as Box<dyn Operator>)
            })
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(operator_error)?;
        Ok(ctx.add_stage(node, subtasks, inputs))
    }
}

impl DeltaJoin {
    /// Adds the read of table scan `child`, which writes what it reads
    /// into the store's table for it.
    fn scan_input(
        &self,
        child: &PhysicalNode,
        store: &Arc<IndexLookupStore>,
        ctx: &mut dyn JobContext,
    ) -> Result<(TableId, Out)> {
        let Some(source) = child.kind.get::<Source>() else {
            return Err(PlanError::plan("a delta join input must be a table scan"));
        };
        let table = &source.table;
        let index = source
            .index_key()
            .ok_or_else(|| PlanError::plan(format!("table '{}' has no index key", table.name)))?;
        let id = store
            .create_table(
                &table.name,
                table.schema.len(),
                index,
                table.primary_key.clone(),
            )
            .map_err(|e| PlanError::plan(e.to_string()))?;
        // The source writes what it reads into the store, one batch
        // ahead of the join, as a Fluss table is written ahead of the
        // job that reads its changelog; the join reads it through the
        // side's filter and projection, and applies them to what it
        // looks up.
        let src = StoreWritingSource::new(ctx.open(table)?, store.clone(), id)
            .with_read_ahead(self.source_read_ahead);
        let src = with_calc(Box::new(src), &source.predicate, &source.projection);
        Ok((id, ctx.add_source(&table.name, src)))
    }

    /// A delta join with a delta join below: the lower join is built as
    /// it is (its scans write the store), and each side's records look the
    /// other side's tables up in a chain.
    fn build_cascaded(
        &self,
        node: &PhysicalNode,
        sides: &[Side],
        store: Arc<IndexLookupStore>,
        options: DeltaJoinOptions,
        ctx: &mut dyn JobContext,
    ) -> Result<Out> {
        let mut inputs = Vec::new();
        let mut tables: Vec<Vec<TableId>> = Vec::new();
        for (i, (child, side)) in node.inputs.iter().zip(sides).enumerate() {
            match side {
                Side::Scan(_) => {
                    let (id, out) = self.scan_input(child, &store, ctx)?;
                    inputs.push(out);
                    tables.push(vec![id]);
                }
                Side::Cascade(_) => {
                    inputs.push(ctx.input(node, i)?);
                    let ids = side
                        .scans()
                        .iter()
                        .map(|s| {
                            let name = &s.kind.get::<Source>().expect("a scan").table.name;
                            store.table_id(name).ok_or_else(|| {
                                PlanError::plan(format!(
                                    "the delta join below did not create table '{name}'"
                                ))
                            })
                        })
                        .collect::<Result<Vec<_>>>()?;
                    tables.push(ids);
                }
            }
        }
        let keys = [&self.left_keys, &self.right_keys];
        let mut chains = Vec::new();
        for side in 0..2 {
            let other = 1 - side;
            let c = chain(keys[side], keys[other], &sides[other]).map_err(PlanError::plan)?;
            let scans = sides[other].scans();
            let rounds = c
                .rounds
                .iter()
                .map(|(s, key)| LookupRound {
                    table: tables[other][*s],
                    calc: side_calc(scans[*s].kind.get::<Source>().expect("a scan")),
                    key: key.clone(),
                })
                .collect();
            chains.push(LookupChain {
                rounds,
                order: c.order,
                condition: c.condition,
                calc: c.calc,
            });
        }
        let right_chain = chains.pop().expect("two chains");
        let left_chain = chains.pop().expect("two chains");
        // The rule lets an updating input through only when its join key
        // is the same for every version of a row.
        let updates_allowed = [0, 1].map(|s| keys[s].iter().all(|&k| sides[s].stable(k)));
        let names = [0, 1].map(|s| {
            sides[s]
                .scans()
                .iter()
                .map(|n| n.kind.get::<Source>().expect("a scan").table.name.clone())
                .collect::<Vec<_>>()
                .join(" JOIN ")
        });
        let spec = CascadedDeltaJoinSpec {
            left_keys: self.left_keys.clone(),
            right_keys: self.right_keys.clone(),
            residual: self.residual.clone(),
            widths: [node.inputs[0].schema.len(), node.inputs[1].schema.len()],
            chains: [left_chain, right_chain],
            updates_allowed,
            names,
        };
        let subtasks = (0..node.parallelism)
            .map(|_| {
                CascadedDeltaJoinOperator::new(store.clone(), spec.clone(), options.clone())
                    .map(|o| Box::new(o) as Box<dyn Operator>)
            })
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(operator_error)?;
        Ok(ctx.add_stage(node, subtasks, inputs))
    }
}
