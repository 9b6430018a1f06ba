//! `DeltaJoin`: an INNER join that keeps no join state. Its two inputs are
//! table scans (each with a deterministic filter and projection at most)
//! that also write what they read into the index-lookup store
//! (as a Fluss table is written ahead of the jobs that read its changelog);
//! each arriving row looks the other side up there, through an LRU cache
//! per side. When a join becomes a delta join: `physical/rules/delta_join.rs`.

use super::build::{operator_error, JobContext, Out};
use super::check::{self, Check};
use super::explain::{exprs, same, ExplainContext, ExplainNode};
use super::join::{check_binary, join_condition, ordered_by_unique_key};
use super::source::{with_calc, Source};
use super::{JoinRole, PhysicalNode};
use crate::error::{PlanError, Result};
use crate::physical::display::unique_names;
use operators::changelog::ChangelogMode;
use operators::exec::Exchange;
use operators::expr::Expr;
use operators::join::StoreWritingSource;
use operators::join::{DeltaJoinOperator, DeltaJoinOptions, DeltaJoinSpec, SideCalc};
use operators::operator::Operator;

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
        for (side, input) in node.inputs.iter().enumerate() {
            let Some(source) = input.kind.get::<Source>() else {
                return Err(check::invalid(
                    "",
                    format!(
                        "input {side} is not a table scan (with a filter and projection \
                         at most), which is all a delta join reads"
                    ),
                ));
            };
            let keys = if side == 0 {
                &self.left_keys
            } else {
                &self.right_keys
            };
            let calc = side_calc(source);
            let keys: Vec<usize> = keys.iter().filter_map(|&k| calc.source_column(k)).collect();
            let covered = source
                .index_key()
                .is_some_and(|k| k.iter().all(|c| keys.contains(c)));
            if !covered {
                return Err(check::invalid(
                    check::field(node, ["left_keys", "right_keys"][side]),
                    format!(
                        "table '{}' has no 'index.key' covered by the join key",
                        source.table.name
                    ),
                ));
            }
        }
        check_binary(
            node,
            &self.left_keys,
            &self.right_keys,
            self.residual.as_ref(),
        )?;
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
        let mut tables = Vec::new();
        let mut inputs = Vec::new();
        let mut calcs = Vec::new();
        for child in &node.inputs {
            let Some(source) = child.kind.get::<Source>() else {
                return Err(PlanError::plan("a delta join input must be a table scan"));
            };
            let table = &source.table;
            let index = source.index_key().ok_or_else(|| {
                PlanError::plan(format!("table '{}' has no index key", table.name))
            })?;
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
            inputs.push(ctx.add_source(&table.name, src));
            tables.push(id);
            calcs.push(side_calc(source));
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
        let options = DeltaJoinOptions {
            cache_enabled: self.cache_enabled,
            left_cache_size: self.left_cache_size,
            right_cache_size: self.right_cache_size,
            count_duplicates: true,
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
