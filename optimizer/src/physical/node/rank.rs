//! `Rank`: a Top-N (Flink's `StreamExecRank`), planned from `ROW_NUMBER()
//! OVER (PARTITION BY .. ORDER BY ..)` kept in `rank_start..=rank_end`
//! (`sql/rank.rs`). Hashed on the partition key (one subtask without
//! one). The strategy is chosen from the input's changelog when the node is
//! made, as Flink's `RankProcessStrategy` does:
//! - `AppendFastStrategy`: the input is insert-only; only the top rows are
//!   kept (`operators/src/rank/append_only_topn.rs`), with a heap cache of
//!   `table.exec.rank.topn-cache-size` rows; a Top-1 keeps one row per
//!   partition and emits a new winner as an update
//!   (`operators/src/rank/fast_top1.rs`, Flink's `FastTop1Function`);
//! - `UpdateFastStrategy[key]`: the input updates by a unique key that
//!   holds the partition key, and each sort column only moves its row up
//!   (Flink's monotonicity: an increasing column ordered DESC, a
//!   decreasing one ASC); the input's `-U` rows are not needed
//!   (`operators/src/rank/updatable_topn.rs`);
//! - `RetractStrategy`: any other input; every row is kept
//!   (`operators/src/rank/retractable_topn.rs`), and the input must emit
//!   `-U`.
//!
//! One state in compiled plans, `rankState`, with the TTL of
//! `table.exec.state.ttl`. It emits every kind, `-U` only when its
//! consumer needs it (`rules/update_before.rs`).

use super::build::{operator_stage, JobContext, Out};
use super::check::{self, Check};
use super::explain::{same, ExplainContext, ExplainNode};
use super::state::{StateSlot, StateTtl};
use super::PhysicalNode;
use crate::error::Result;
use crate::physical::display::{list, unique_names};
use operators::changelog::ChangelogMode;
use operators::exec::Exchange;
use operators::operator::Operator;
use operators::rank::append_only_topn::AppendOnlyTopN;
use operators::rank::fast_top1::FastTop1;
use operators::rank::retractable_topn::RetractableTopN;
use operators::rank::topn::{SortField, TopNSpec};
use operators::rank::updatable_topn::UpdatableTopN;
use operators::value::DataType;

/// How a Top-N processes its input (Flink's `RankProcessStrategy`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RankStrategy {
    AppendFast,
    /// The input's unique key the rows are kept by.
    UpdateFast(Vec<usize>),
    Retract,
}

impl RankStrategy {
    /// As Flink's EXPLAIN prints it.
    pub fn describe(&self) -> String {
        match self {
            RankStrategy::AppendFast => "AppendFastStrategy".into(),
            RankStrategy::UpdateFast(key) => format!(
                "UpdateFastStrategy[{}]",
                key.iter()
                    .map(|k| k.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            RankStrategy::Retract => "RetractStrategy".into(),
        }
    }
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Rank {
    pub partition_key: Vec<usize>,
    pub order: Vec<SortField>,
    pub rank_start: u64,
    pub rank_end: u64,
    pub output_rank_number: bool,
    pub strategy: RankStrategy,
    /// Whether `-U` rows are emitted (set by the update-before rule).
    pub generate_update_before: bool,
    /// `table.exec.rank.topn-cache-size` (the append-only and updatable
    /// strategies' heap cache, in rows).
    pub cache_size: u64,
    /// Idle state retention of its state.
    #[serde(skip, default)]
    pub ttl: StateTtl,
}

/// What a planner tells [`Rank::over`].
pub struct RankSettings {
    pub partition_key: Vec<usize>,
    pub order: Vec<SortField>,
    pub rank_start: u64,
    pub rank_end: u64,
    pub output_rank_number: bool,
    pub cache_size: u64,
    pub ttl: StateTtl,
    pub parallelism: usize,
    /// The input's unique key when each sort column only moves a row up
    /// (Flink's `UpdateFastStrategy` condition), if it holds.
    pub monotonic_unique_key: Option<Vec<usize>>,
}

impl Rank {
    pub const TYPE_NAMES: &'static [&'static str] = &["stream-exec-rank_1"];

    pub fn over(input: PhysicalNode, s: RankSettings) -> PhysicalNode {
        let strategy = if input.is_insert_only() {
            RankStrategy::AppendFast
        } else {
            match s.monotonic_unique_key {
                Some(key) if s.partition_key.iter().all(|p| key.contains(p)) => {
                    RankStrategy::UpdateFast(key)
                }
                _ => RankStrategy::Retract,
            }
        };
        let mut schema = input.schema.clone();
        if s.output_rank_number {
            schema.fields.push(crate::logical::Field {
                name: "w0$o0".into(),
                qualifier: None,
                data_type: DataType::BigInt,
                nullable: false,
            });
        }
        let top1 = (s.rank_start, s.rank_end) == (1, 1);
        let unique = Self::unique_key(&input, &s.partition_key, s.output_rank_number, top1);
        PhysicalNode::new(
            Rank {
                partition_key: s.partition_key,
                order: s.order,
                rank_start: s.rank_start,
                rank_end: s.rank_end,
                output_rank_number: s.output_rank_number,
                strategy,
                generate_update_before: true,
                cache_size: s.cache_size,
                ttl: s.ttl,
            },
            vec![input],
            schema,
            unique,
            s.parallelism,
        )
    }

    /// The partition key and the rank when the rank is output; else the
    /// input's unique key if it holds the partition key (a row then stays
    /// in one partition).
    /// Flink's `getRankUniqueKeys`: a Top-1 (`ROW_NUMBER`, rank 1 only)
    /// keeps one row per partition, so its partition key is unique;
    /// otherwise the partition key with the rank, or the input's unique
    /// key if it holds the partition key.
    fn unique_key(
        input: &PhysicalNode,
        partition: &[usize],
        rank: bool,
        top1: bool,
    ) -> Option<Vec<usize>> {
        if top1 {
            return Some(partition.to_vec());
        }
        if rank {
            let mut k = partition.to_vec();
            k.push(input.schema.len());
            return Some(k);
        }
        input
            .unique_key
            .clone()
            .filter(|k| partition.iter().all(|p| k.contains(p)))
    }

    fn spec(&self, arity: usize) -> TopNSpec {
        TopNSpec {
            partition_key: self.partition_key.clone(),
            order: self.order.clone(),
            rank_start: self.rank_start,
            rank_end: self.rank_end,
            output_rank_number: self.output_rank_number,
            generate_update_before: self.generate_update_before,
            ttl_enabled: self.ttl.ms > 0,
            arity,
        }
    }
}

impl super::NodeSpec for Rank {
    fn label(&self) -> String {
        "Rank".into()
    }

    fn type_name(&self) -> &'static str {
        Self::TYPE_NAMES[0]
    }

    fn input_count(&self) -> usize {
        1
    }

    fn input_exchange(&self, _node: &PhysicalNode, _i: usize) -> Exchange {
        if self.partition_key.is_empty() {
            Exchange::Single
        } else {
            Exchange::Hash(self.partition_key.clone())
        }
    }

    fn changelog(&self, _inputs: &[PhysicalNode]) -> ChangelogMode {
        ChangelogMode {
            insert: true,
            update_before: self.generate_update_before,
            update_after: true,
            delete: true,
        }
    }

    fn changes_ordered_by_unique_key(&self, _node: &PhysicalNode) -> bool {
        true
    }

    /// The retract strategy finds the row to retract by the input's `-U`.
    fn require_update_before(&mut self, _inputs: &[PhysicalNode], needed: bool) -> Option<bool> {
        self.generate_update_before = needed;
        Some(self.strategy == RankStrategy::Retract)
    }

    fn rederive(&mut self, inputs: &[PhysicalNode], unique_key: &mut Option<Vec<usize>>) {
        let input = &inputs[0];
        if let RankStrategy::UpdateFast(key) = &self.strategy {
            if input.unique_key.as_ref() != Some(key) {
                self.strategy = RankStrategy::Retract;
            }
        }
        let top1 = (self.rank_start, self.rank_end) == (1, 1);
        *unique_key = Self::unique_key(input, &self.partition_key, self.output_rank_number, top1);
    }

    fn states(&self) -> Vec<StateSlot> {
        vec![StateSlot::new("rankState", &self.ttl)]
    }

    fn set_state_ttls(&mut self, ttls: Vec<StateTtl>) {
        if let Some(t) = ttls.into_iter().next() {
            self.ttl = t;
        }
    }

    /// `Rank(strategy=[AppendFastStrategy], rankType=[ROW_NUMBER],
    /// rankRange=[rankStart=1, rankEnd=3], partitionBy=[a], orderBy=[c
    /// DESC], select=[a, b, c, w0$o0])`.
    fn explain(&self, n: &PhysicalNode, ctx: &mut dyn ExplainContext) -> ExplainNode {
        let names = unique_names(&n.inputs[0].schema);
        let mut e = ExplainNode::new("Rank", n, ctx.identity(n));
        e.attrs.push(same("strategy", self.strategy.describe()));
        e.attrs.push(same("rankType", "ROW_NUMBER"));
        e.attrs.push(same(
            "rankRange",
            format!("rankStart={}, rankEnd={}", self.rank_start, self.rank_end),
        ));
        e.attrs
            .push(same("partitionBy", list(&names, &self.partition_key)));
        let order: Vec<String> = self
            .order
            .iter()
            .map(|f| {
                let dir = if f.descending { "DESC" } else { "ASC" };
                format!("{} {dir}", names[f.column])
            })
            .collect();
        e.attrs.push(same("orderBy", order.join(", ")));
        let mut select = names.clone();
        if self.output_rank_number {
            select.push("w0$o0".into());
        }
        e.attrs.push(same("select", select.join(", ")));
        if !matches!(self.strategy, RankStrategy::Retract) {
            e.lab.push(("cacheSize", self.cache_size.to_string()));
        }
        e.lab.push(("stateTtl", self.ttl.describe()));
        e
    }

    fn validate(&self, node: &PhysicalNode) -> Check {
        let input = &node.inputs[0];
        let arity = input.schema.len();
        check::columns(
            &check::field(node, "partition_key"),
            &self.partition_key,
            arity,
            "the input",
        )?;
        check_order_and_range(
            node,
            &self.order,
            (self.rank_start, self.rank_end),
            "a Top-N",
        )?;
        if self.cache_size < 1 {
            return Err(check::invalid(
                check::field(node, "cache_size"),
                "the cache size must be at least 1",
            ));
        }
        match &self.strategy {
            RankStrategy::AppendFast if !input.is_insert_only() => {
                return Err(check::invalid(
                    check::field(node, "strategy"),
                    "AppendFastStrategy takes an insert-only input",
                ))
            }
            RankStrategy::UpdateFast(key) => {
                check::columns(&check::field(node, "strategy"), key, arity, "the input")?;
                if input.unique_key.as_ref() != Some(key) {
                    return Err(check::invalid(
                        check::field(node, "strategy"),
                        "UpdateFastStrategy's key is not the input's unique key",
                    ));
                }
            }
            _ => {}
        }
        let mut types = input.schema.types();
        if self.output_rank_number {
            types.push(DataType::BigInt);
        }
        check::schema_types(&node.schema, &types, "the input and its rank")
    }

    fn build(&self, node: &PhysicalNode, id: usize, ctx: &mut dyn JobContext) -> Result<Out> {
        let scope = format!("{id}-Rank");
        let backend = ctx.backend().clone();
        backend.set_ttl(&scope, "*", self.ttl.duration());
        let spec = self.spec(node.inputs[0].schema.len());
        operator_stage(node, ctx, || {
            let op: Box<dyn Operator> = match &self.strategy {
                // Flink 2.x's `StreamExecRank` runs a Top-1 as
                // `FastTop1Function`: a new winner is an update.
                RankStrategy::AppendFast if (self.rank_start, self.rank_end) == (1, 1) => Box::new(
                    FastTop1::new(&backend, &scope, spec.clone(), self.cache_size)?,
                ),
                RankStrategy::AppendFast => Box::new(AppendOnlyTopN::new(
                    &backend,
                    &scope,
                    spec.clone(),
                    self.cache_size,
                )?),
                RankStrategy::UpdateFast(key) => Box::new(UpdatableTopN::new(
                    &backend,
                    &scope,
                    spec.clone(),
                    key.clone(),
                    self.cache_size,
                )?),
                RankStrategy::Retract => {
                    Box::new(RetractableTopN::new(&backend, &scope, spec.clone())?)
                }
            };
            Ok(op)
        })
    }
}

/// What a Top-N and a window Top-N (`what`) check alike: order columns of
/// the input, at least one, and a rank range that starts at 1 or later
/// and is not empty.
pub(super) fn check_order_and_range(
    node: &PhysicalNode,
    order: &[SortField],
    (rank_start, rank_end): (u64, u64),
    what: &str,
) -> Check {
    let arity = node.inputs[0].schema.len();
    let order: Vec<usize> = order.iter().map(|f| f.column).collect();
    check::columns(&check::field(node, "order"), &order, arity, "the input")?;
    if order.is_empty() {
        return Err(check::invalid(
            check::field(node, "order"),
            format!("{what} needs an ORDER BY column"),
        ));
    }
    if rank_start < 1 || rank_end < rank_start {
        return Err(check::invalid(
            check::field(node, "rank_end"),
            format!("the rank range {rank_start}..={rank_end} is empty or starts before 1"),
        ));
    }
    Ok(())
}
