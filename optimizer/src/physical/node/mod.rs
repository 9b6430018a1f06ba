//! The nodes of a physical plan, and what each kind of node is and does.
//!
//! A [`PhysicalNode`] is one operator of the streaming job before it runs:
//! its kind (a struct holding the operator's own settings), its inputs, and
//! what it produces: the schema, the changelog it emits (which of `+I`, `-U`,
//! `+U`, `-D`), the columns that identify a row (its unique key) and its
//! parallelism. The planner builds the tree, the rules rewrite it, and the
//! job builder, EXPLAIN and compiled plans walk it.
//!
//! Everything a kind of node means lives in its own module, behind
//! [`NodeSpec`]: how records reach each input (the exchange), the changelog
//! it emits over its inputs, whether it needs its inputs' update-before
//! rows, its state and TTLs, its EXPLAIN description, how a compiled plan
//! checks it, and how it instantiates its operators. The walks ask the node
//! and never match on its kind:
//!
//! ```text
//!                  PhysicalNode { kind: NodeKind, inputs, schema, changelog, unique_key, parallelism }
//!                                    |
//!        node_kinds! { Source(source::Source), Calc(calc::Calc), ..., MultiJoin(multi_join::MultiJoin) }
//!                                    |  kind.spec(): the one dispatch
//!                                    v
//!   NodeSpec: input_exchange  changelog  require_update_before  states  explain  validate  build
//!                 ^               ^                 ^              ^       ^         ^        ^
//!        job builder, EXPLAIN   planner, rules   changelog rule  compiled plans   EXPLAIN  job builder
//! ```
//!
//! A rule that rewrites one kind into another reaches the struct with
//! [`NodeKind::get`] (as a DataFusion rule downcasts an `ExecutionPlan`).
//!
//! Adding a kind of node: a module with its struct and `impl NodeSpec`, and
//! one line in [`node_kinds!`] below (see `docs/architecture.md`).

pub mod aggregate_calls;
pub mod build;
pub mod check;
pub mod explain;
pub mod state;

pub mod calc;
pub mod deduplicate;
pub mod delta_join;
pub mod expand;
pub mod group_aggregate;
pub mod group_window_aggregate;
pub mod interval_join;
pub mod join;
pub mod local_group_aggregate;
pub mod local_window_aggregate;
pub mod lookup_join;
pub mod multi_join;
pub mod rank;
pub mod sink_materializer;
pub mod source;
pub mod union;
pub mod window_aggregate;
pub mod window_attached;
pub mod window_deduplicate;
pub mod window_join;
pub mod window_rank;
pub mod window_table_function;

use crate::error::Result;
use crate::logical::Schema;
use build::{JobContext, Out};
use check::Invalid;
use explain::{ExplainContext, ExplainNode};
use operators::changelog::ChangelogMode;
use operators::exec::Exchange;
use operators::expr::Expr;
use state::StateSlot;

/// What a kind of node is and does. Each method has one caller that walks
/// the plan: the job builder, EXPLAIN, the planner's rules or compiled plans.
pub trait NodeSpec {
    /// Its name in messages (`Join`, `TableSourceScan(orders)`).
    fn label(&self) -> String;

    /// Flink's type name in a compiled plan (`stream-exec-join_1`).
    fn type_name(&self) -> &'static str;

    /// How many inputs it takes.
    fn input_count(&self) -> usize;

    /// How records reach input `i`: the one place the exchange is decided,
    /// for the job builder and EXPLAIN alike. By default a forward exchange
    /// at equal parallelism and contiguous chunks otherwise (a stateless
    /// operator); keyed operators hash on their key.
    fn input_exchange(&self, node: &PhysicalNode, i: usize) -> Exchange {
        if node.inputs[i].parallelism == node.parallelism {
            Exchange::Forward
        } else {
            Exchange::Rebalance
        }
    }

    /// The changelog it emits over these inputs.
    fn changelog(&self, inputs: &[PhysicalNode]) -> ChangelogMode;

    /// Whether the changes of each value of its unique key leave it in the
    /// order they happened (Flink's upsert key), so that an upsert sink on
    /// that key may take them as they come.
    fn changes_ordered_by_unique_key(&self, _node: &PhysicalNode) -> bool {
        false
    }

    /// Told whether its consumer needs update-before rows, records what it
    /// must emit and answers whether its inputs (`inputs`) must emit them:
    /// `Some(true)` they must, `Some(false)` they need not, `None` it
    /// cannot do without `-U` although its consumer needs none (Flink's
    /// changelog inference then plans the whole query with `-U`, see
    /// `physical/rules/update_before.rs`). By default the inputs must:
    /// operators that keep rows find what to retract by the `-U`.
    fn require_update_before(&mut self, _inputs: &[PhysicalNode], _needed: bool) -> Option<bool> {
        Some(true)
    }

    /// Re-derives what it took from its inputs when it was made (its
    /// unique key, its state layouts), after a rule replaced an input by
    /// one with another unique key. By default nothing: its unique key does
    /// not depend on its inputs.
    fn rederive(&mut self, _inputs: &[PhysicalNode], _unique_key: &mut Option<Vec<usize>>) {}

    /// Whether its output is a join's result (looking through Calcs), for
    /// the run summary's split of join state into inputs and intermediate
    /// results.
    fn is_join_result(&self, _node: &PhysicalNode) -> bool {
        false
    }

    /// The kind of join it is, if any, for the run summary.
    fn join_role(&self) -> Option<JoinRole> {
        None
    }

    /// Its states in Flink's naming, each with its TTL (empty: stateless).
    fn states(&self) -> Vec<StateSlot> {
        Vec::new()
    }

    /// Sets the TTL of each of [`NodeSpec::states`], in order (a compiled
    /// plan's `state` entries).
    fn set_state_ttls(&mut self, _ttls: Vec<state::StateTtl>) {}

    /// Whether it folds mini-batch bundles (the sources below it then get
    /// a `MiniBatchAssigner` in EXPLAIN).
    fn is_mini_batch(&self) -> bool {
        false
    }

    /// Whether its operator drops input records behind the watermark as
    /// late and hands them, with its input's columns, to `lab run --late`
    /// (the lab's form of Flink's late side output).
    fn writes_late_records(&self) -> bool {
        false
    }

    /// Whether its inputs are read by it alone, never shared with another
    /// consumer (a delta join's table scans).
    fn reads_own_inputs(&self) -> bool {
        false
    }

    /// Its EXPLAIN node, without its inputs (the walk adds them).
    fn explain(&self, node: &PhysicalNode, ctx: &mut dyn ExplainContext) -> ExplainNode;

    /// Folds itself into the sink's EXPLAIN node, as Flink prints a
    /// `SinkUpsertMaterializer` as the sink's `upsertMaterialize`; `false`
    /// when it is a node of its own.
    fn fold_into_sink(&self, _sink: &mut ExplainNode) -> bool {
        false
    }

    /// Checks a node read from a compiled plan against its inputs (column
    /// positions, arities, key lists, expression types); the error names
    /// the field under the node's `spec.kind`.
    fn validate(&self, node: &PhysicalNode) -> std::result::Result<(), Invalid>;

    /// Instantiates its operators (one per subtask) as a stage of the job,
    /// fed by its inputs. `id` numbers the node within the job (it scopes
    /// the operators' state).
    fn build(&self, node: &PhysicalNode, id: usize, ctx: &mut dyn JobContext) -> Result<Out>;
}

/// Which kind of join a node is, for the run summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinRole {
    /// Keeps its inputs in state (binary join, MultiJoin).
    KeepsInputs,
    /// Keeps no join state and looks rows up in the index-lookup store.
    LooksUp,
    /// Looks each record's key up in a lookup table (a lookup join).
    LooksUpTable,
}

/// Reaches a kind's struct inside a [`NodeKind`] (implemented for every
/// kind by [`node_kinds!`]).
pub trait Kind: Sized {
    fn of(kind: &NodeKind) -> Option<&Self>;
    fn of_mut(kind: &mut NodeKind) -> Option<&mut Self>;
}

/// The registry: every kind of node, its serialised name (the variant,
/// which compiled plans write as `spec.kind`) and its struct.
macro_rules! node_kinds {
    ($($variant:ident($module:ident::$ty:ident)),* $(,)?) => {
        /// One kind of node and its settings.
        #[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
        pub enum NodeKind {
            $($variant($module::$ty)),*
        }

        impl NodeKind {
            /// What the node is and does: the one place that dispatches on
            /// the kind.
            pub fn spec(&self) -> &dyn NodeSpec {
                match self {
                    $(NodeKind::$variant(n) => n),*
                }
            }

            pub fn spec_mut(&mut self) -> &mut dyn NodeSpec {
                match self {
                    $(NodeKind::$variant(n) => n),*
                }
            }

            /// The name a compiled plan writes the kind under (`spec.kind`).
            pub fn variant(&self) -> &'static str {
                match self {
                    $(NodeKind::$variant(_) => stringify!($variant)),*
                }
            }

        }

        /// Every compiled-plan type name a kind of node may have.
        pub fn type_names() -> Vec<&'static str> {
            [$($module::$ty::TYPE_NAMES),*].concat()
        }

        $(
            impl From<$module::$ty> for NodeKind {
                fn from(n: $module::$ty) -> NodeKind {
                    NodeKind::$variant(n)
                }
            }

            impl Kind for $module::$ty {
                #[allow(unreachable_patterns)]
                fn of(kind: &NodeKind) -> Option<&Self> {
                    match kind {
                        NodeKind::$variant(n) => Some(n),
                        _ => None,
                    }
                }

                #[allow(unreachable_patterns)]
                fn of_mut(kind: &mut NodeKind) -> Option<&mut Self> {
                    match kind {
                        NodeKind::$variant(n) => Some(n),
                        _ => None,
                    }
                }
            }
        )*
    };
}

node_kinds! {
    Source(source::Source),
    Calc(calc::Calc),
    GroupAggregate(group_aggregate::GroupAggregate),
    LocalGroupAggregate(local_group_aggregate::LocalGroupAggregate),
    Expand(expand::Expand),
    Join(join::Join),
    DeltaJoin(delta_join::DeltaJoin),
    SinkMaterializer(sink_materializer::SinkMaterializer),
    MultiJoin(multi_join::MultiJoin),
    WindowAggregate(window_aggregate::WindowAggregate),
    LocalWindowAggregate(local_window_aggregate::LocalWindowAggregate),
    WindowTableFunction(window_table_function::WindowTableFunction),
    Union(union::Union),
    Deduplicate(deduplicate::Deduplicate),
    WindowDeduplicate(window_deduplicate::WindowDeduplicate),
    Rank(rank::Rank),
    WindowRank(window_rank::WindowRank),
    IntervalJoin(interval_join::IntervalJoin),
    WindowJoin(window_join::WindowJoin),
    GroupWindowAggregate(group_window_aggregate::GroupWindowAggregate),
    LookupJoin(lookup_join::LookupJoin),
}

impl NodeKind {
    /// The kind's struct, if the node is of kind `T`.
    pub fn get<T: Kind>(&self) -> Option<&T> {
        T::of(self)
    }

    pub fn get_mut<T: Kind>(&mut self) -> Option<&mut T> {
        T::of_mut(self)
    }

    pub fn is<T: Kind>(&self) -> bool {
        T::of(self).is_some()
    }
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct PhysicalNode {
    pub kind: NodeKind,
    pub inputs: Vec<PhysicalNode>,
    pub schema: Schema,
    /// What the node emits.
    pub changelog: ChangelogMode,
    /// Column positions that identify a row of the node's output, if known.
    pub unique_key: Option<Vec<usize>>,
    pub parallelism: usize,
}

impl PhysicalNode {
    /// A node of `kind` over `inputs`, emitting the changelog its kind
    /// derives from them.
    pub fn new(
        kind: impl Into<NodeKind>,
        inputs: Vec<PhysicalNode>,
        schema: Schema,
        unique_key: Option<Vec<usize>>,
        parallelism: usize,
    ) -> PhysicalNode {
        let kind = kind.into();
        let changelog = kind.spec().changelog(&inputs);
        PhysicalNode {
            kind,
            inputs,
            schema,
            changelog,
            unique_key,
            parallelism,
        }
    }

    pub fn spec(&self) -> &dyn NodeSpec {
        self.kind.spec()
    }

    /// Re-derives the unique key, state layouts and changelog from the
    /// inputs (see [`NodeSpec::rederive`]).
    pub fn rederive(&mut self) {
        let mut unique_key = self.unique_key.take();
        self.kind.spec_mut().rederive(&self.inputs, &mut unique_key);
        self.unique_key = unique_key;
        self.changelog = self.kind.spec().changelog(&self.inputs);
    }

    pub fn is_insert_only(&self) -> bool {
        self.changelog.is_insert_only()
    }

    /// How records reach input `i` (see [`NodeSpec::input_exchange`]).
    pub fn input_exchange(&self, i: usize) -> Exchange {
        self.spec().input_exchange(self, i)
    }

    /// Whether this node's output is a join result (looking through Calcs).
    pub fn is_join_result(&self) -> bool {
        self.spec().is_join_result(self)
    }

    /// Whether the changes of each unique-key value leave in order (see
    /// [`NodeSpec::changes_ordered_by_unique_key`]).
    pub fn changes_ordered_by_unique_key(&self) -> bool {
        self.unique_key.is_some() && self.spec().changes_ordered_by_unique_key(self)
    }

    /// The node's name in messages.
    pub fn label(&self) -> String {
        self.spec().label()
    }

    /// The nodes that became stages, in the order the job builder added
    /// them (children first), so they pair up with a run's stage reports.
    /// A table read is not a stage.
    pub fn stage_nodes(&self) -> Vec<&PhysicalNode> {
        let mut out = Vec::new();
        self.collect_stages(&mut out);
        out
    }

    fn collect_stages<'a>(&'a self, out: &mut Vec<&'a PhysicalNode>) {
        if self.kind.is::<source::Source>() {
            return;
        }
        for c in &self.inputs {
            c.collect_stages(out);
        }
        out.push(self);
    }
}

/// Whether a filter over a changelog with updates can drop the `+U` of a
/// row whose older version passed, so that without the `-U` the older
/// version would stay in an upsert sink (Flink's `isNonUpsertKeyCondition`,
/// FLINK-9528): it reads a column outside the unique key `key` (or there
/// is none). A filter on key columns only treats every version of a key
/// alike.
pub fn filter_drops_updates(
    predicate: Option<&Expr>,
    changelog: ChangelogMode,
    key: Option<&Vec<usize>>,
) -> bool {
    let Some(p) = predicate else {
        return false;
    };
    if !(changelog.update_after || changelog.update_before) {
        return false;
    }
    let mut cols = Vec::new();
    p.columns(&mut cols);
    !key.is_some_and(|k| cols.iter().all(|c| k.contains(c)))
}
