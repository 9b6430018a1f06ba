//! `Deduplicate`: the first or last row of each key by a time attribute
//! (Flink's `StreamExecDeduplicate`), planned from `ROW_NUMBER() OVER
//! (PARTITION BY key ORDER BY time) = 1` (`sql/rank.rs`). Hashed on the
//! key; one state, `deduplicateState`, with the TTL of
//! `table.exec.state.ttl`. Keep-first on processing time is insert-only;
//! every other variant updates, with `-U` only when its consumer needs it
//! (`rules/update_before.rs`). With `table.exec.mini-batch.*` on it is the
//! mini-batch variant (one emission per key and bundle). The operator:
//! `operators/src/rank/deduplicate.rs`.

use super::build::{operator_stage, JobContext, Out};
use super::check::{self, Check};
use super::explain::{same, ExplainContext, ExplainNode};
use super::state::{StateSlot, StateTtl};
use super::PhysicalNode;
use crate::error::Result;
use crate::physical::display::{list, unique_names};
use operators::changelog::ChangelogMode;
use operators::exec::Exchange;
use operators::rank::deduplicate::{self as op, DedupOrder, DeduplicateSpec, Keep};

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Deduplicate {
    pub key: Vec<usize>,
    pub keep: Keep,
    pub order: DedupOrder,
    /// Whether `-U` rows are emitted (set by the update-before rule).
    pub generate_update_before: bool,
    /// Mini-batch: the bundle size (`table.exec.mini-batch.size`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mini_batch_size: Option<usize>,
    /// Idle state retention of its state.
    #[serde(skip, default)]
    pub ttl: StateTtl,
}

impl Deduplicate {
    pub const TYPE_NAMES: &'static [&'static str] = &["stream-exec-deduplicate_1"];

    pub fn over(
        input: PhysicalNode,
        key: Vec<usize>,
        keep: Keep,
        order: DedupOrder,
        mini_batch_size: Option<usize>,
        ttl: StateTtl,
        parallelism: usize,
    ) -> PhysicalNode {
        let schema = input.schema.clone();
        let unique = Some(key.clone());
        PhysicalNode::new(
            Deduplicate {
                key,
                keep,
                order,
                generate_update_before: true,
                mini_batch_size,
                ttl,
            },
            vec![input],
            schema,
            unique,
            parallelism,
        )
    }

    fn insert_only(&self) -> bool {
        self.keep == Keep::FirstRow && self.order == DedupOrder::ProcTime
    }
}

impl super::NodeSpec for Deduplicate {
    fn label(&self) -> String {
        "Deduplicate".into()
    }

    fn type_name(&self) -> &'static str {
        Self::TYPE_NAMES[0]
    }

    fn input_count(&self) -> usize {
        1
    }

    fn input_exchange(&self, _node: &PhysicalNode, _i: usize) -> Exchange {
        if self.key.is_empty() {
            Exchange::Single
        } else {
            Exchange::Hash(self.key.clone())
        }
    }

    fn changelog(&self, _inputs: &[PhysicalNode]) -> ChangelogMode {
        let updates = !self.insert_only();
        ChangelogMode {
            insert: true,
            update_before: updates && self.generate_update_before,
            update_after: updates,
            delete: false,
        }
    }

    fn changes_ordered_by_unique_key(&self, _node: &PhysicalNode) -> bool {
        true
    }

    /// Its input is insert-only: nothing to ask of it.
    fn require_update_before(&mut self, _inputs: &[PhysicalNode], needed: bool) -> Option<bool> {
        self.generate_update_before = needed;
        Some(false)
    }

    fn is_mini_batch(&self) -> bool {
        self.mini_batch_size.is_some()
    }

    fn states(&self) -> Vec<StateSlot> {
        vec![StateSlot::new("deduplicateState", &self.ttl)]
    }

    fn set_state_ttls(&mut self, ttls: Vec<StateTtl>) {
        if let Some(t) = ttls.into_iter().next() {
            self.ttl = t;
        }
    }

    /// `Deduplicate(keep=[FirstRow], key=[a], order=[PROCTIME])`.
    fn explain(&self, n: &PhysicalNode, ctx: &mut dyn ExplainContext) -> ExplainNode {
        let names = unique_names(&n.inputs[0].schema);
        let mut e = ExplainNode::new("Deduplicate", n, ctx.identity(n));
        let keep = match self.keep {
            Keep::FirstRow => "FirstRow",
            Keep::LastRow => "LastRow",
        };
        let order = match self.order {
            DedupOrder::ProcTime => "PROCTIME",
            DedupOrder::RowTime(_) => "ROWTIME",
        };
        e.attrs.push(same("keep", keep));
        e.attrs.push(same("key", list(&names, &self.key)));
        e.attrs.push(same("order", order));
        if let Some(size) = self.mini_batch_size {
            e.lab.push(("miniBatchSize", size.to_string()));
        }
        e.lab.push(("stateTtl", self.ttl.describe()));
        e
    }

    fn validate(&self, node: &PhysicalNode) -> Check {
        let input = &node.inputs[0];
        let arity = input.schema.len();
        if let Some(size) = self.mini_batch_size {
            check::bundle_size(&check::field(node, "mini_batch_size"), size)?;
        }
        check::columns(&check::field(node, "key"), &self.key, arity, "the input")?;
        if let DedupOrder::RowTime(c) = self.order {
            check::columns(&check::field(node, "order"), &[c], arity, "the input")?;
            if !input.schema.fields[c].data_type.is_timestamp() {
                return Err(check::invalid(
                    check::field(node, "order"),
                    format!("the rowtime column {c} is not a timestamp"),
                ));
            }
        }
        if !input.is_insert_only() {
            return Err(check::invalid(
                check::field(node, "keep"),
                "a deduplication takes an insert-only input",
            ));
        }
        check::schema_types(&node.schema, &input.schema.types(), "the input")
    }

    fn build(&self, node: &PhysicalNode, id: usize, ctx: &mut dyn JobContext) -> Result<Out> {
        let scope = format!("{id}-Deduplicate");
        let backend = ctx.backend().clone();
        backend.set_ttl(&scope, "*", self.ttl.duration());
        let spec = DeduplicateSpec {
            key: self.key.clone(),
            keep: self.keep,
            order: self.order,
            generate_update_before: self.generate_update_before,
            generate_insert: true,
            ttl_enabled: self.ttl.ms > 0,
            arity: node.schema.len(),
        };
        operator_stage(node, ctx, || {
            let o = op::Deduplicate::new(&backend, &scope, spec.clone())?;
            Ok(Box::new(match self.mini_batch_size {
                Some(size) => o.with_mini_batch(size),
                None => o,
            }))
        })
    }
}
