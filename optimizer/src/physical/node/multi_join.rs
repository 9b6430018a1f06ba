//! `MultiJoin`: one join over N inputs that share a common key, keeping
//! only its inputs in state (a chain of binary joins also keeps every
//! intermediate result). Each input is hashed on its common-key column,
//! so everything one result row needs meets on one subtask; input `i`
//! joins the inputs before it by its own ON condition. When joins are
//! fused into one: `physical/rules/multi_join.rs`.

use super::build::{operator_stage, JobContext, Out};
use super::check::{self, Check};
use super::explain::{exprs, flink_type, same, ExplainContext, ExplainNode};
use super::join::layout_for;
use super::state::{StateSlot, StateTtl};
use super::{JoinRole, NodeSpec, PhysicalNode};
use crate::error::Result;
use crate::logical::Schema;
use crate::physical::display::{list, render, unique_names};
use operators::changelog::ChangelogMode;
use operators::exec::Exchange;
use operators::expr::Expr;
use operators::join::JoinType;
use operators::join::{JoinStateLayout, MultiJoinOperator, MultiJoinSpec};
use operators::value::DataType;

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct MultiJoin {
    /// Common key columns per input.
    pub keys: Vec<Vec<usize>>,
    /// Per input (index 0 unused): how it joins the inputs before it.
    pub join_types: Vec<JoinType>,
    /// Per input (index 0 unused): its ON condition over inputs 0..=i.
    pub conditions: Vec<Option<Expr>>,
    pub layouts: Vec<JoinStateLayout>,
    /// What asked for it (config key or hint).
    pub reason: String,
    /// Idle state retention per input.
    #[serde(skip, default)]
    pub ttls: Vec<StateTtl>,
}

impl MultiJoin {
    pub const TYPE_NAMES: &'static [&'static str] = &["stream-exec-multi-join_1"];

    /// `join` over `members`: each input's state layout chosen from its
    /// unique key and common key, the output's unique key the members'
    /// together (when each has one).
    pub fn over(
        members: Vec<PhysicalNode>,
        mut join: MultiJoin,
        schema: Schema,
        parallelism: usize,
    ) -> PhysicalNode {
        let mut unique_key = None;
        join.rederive(&members, &mut unique_key);
        PhysicalNode::new(join, members, schema, unique_key, parallelism)
    }
}

impl NodeSpec for MultiJoin {
    fn label(&self) -> String {
        "MultiJoin".into()
    }

    fn type_name(&self) -> &'static str {
        Self::TYPE_NAMES[0]
    }

    fn input_count(&self) -> usize {
        self.keys.len()
    }

    fn input_exchange(&self, _node: &PhysicalNode, i: usize) -> Exchange {
        Exchange::Hash(self.keys[i].clone())
    }

    fn changelog(&self, inputs: &[PhysicalNode]) -> ChangelogMode {
        let all_inner = self.join_types.iter().all(|t| *t == JoinType::Inner);
        if all_inner && inputs.iter().all(|m| m.is_insert_only()) {
            ChangelogMode::INSERT_ONLY
        } else {
            ChangelogMode::ALL
        }
    }

    fn changes_ordered_by_unique_key(&self, node: &PhysicalNode) -> bool {
        let Some(key) = &node.unique_key else {
            return false;
        };
        self.keys[0].iter().all(|c| key.contains(c))
    }

    fn rederive(&mut self, inputs: &[PhysicalNode], unique_key: &mut Option<Vec<usize>>) {
        self.layouts = inputs
            .iter()
            .zip(&self.keys)
            .map(|(m, k)| layout_for(m, k))
            .collect();
        let mut offset = 0;
        let mut parts = Vec::new();
        for m in inputs {
            parts.push(
                m.unique_key
                    .as_ref()
                    .map(|u| u.iter().map(|c| c + offset).collect::<Vec<_>>()),
            );
            offset += m.schema.len();
        }
        *unique_key = parts
            .into_iter()
            .collect::<Option<Vec<_>>>()
            .map(|p| p.concat());
    }

    fn is_join_result(&self, _node: &PhysicalNode) -> bool {
        true
    }

    fn join_role(&self) -> Option<JoinRole> {
        Some(JoinRole::KeepsInputs)
    }

    fn states(&self) -> Vec<StateSlot> {
        (0..self.keys.len())
            .map(|i| {
                StateSlot::new(
                    format!("input{i}State"),
                    &self.ttls.get(i).cloned().unwrap_or_default(),
                )
            })
            .collect()
    }

    fn set_state_ttls(&mut self, ttls: Vec<StateTtl>) {
        self.ttls = ttls;
    }

    fn explain(&self, n: &PhysicalNode, ctx: &mut dyn ExplainContext) -> ExplainNode {
        let out = unique_names(&n.schema);
        let types: Vec<&str> = self.join_types[1..]
            .iter()
            .map(|t| match t {
                JoinType::Inner => "INNER",
                JoinType::Left => "LEFT",
                JoinType::Right => "RIGHT",
                JoinType::Full => "FULL",
            })
            .collect();
        let unique_keys: Vec<String> = n
            .inputs
            .iter()
            .map(|i| match &i.unique_key {
                Some(k) => format!("({})", list(&unique_names(&i.schema), k)),
                None => "noUniqueKey".to_string(),
            })
            .collect();
        let row_type: Vec<String> = n
            .schema
            .fields
            .iter()
            .zip(&out)
            .map(|(f, name)| {
                format!(
                    "{}{} {name}",
                    flink_type(f.data_type),
                    if f.nullable { "" } else { " NOT NULL" }
                )
            })
            .collect();
        let specs: Vec<String> = n
            .inputs
            .iter()
            .zip(&self.layouts)
            .map(|(i, l)| match l {
                JoinStateLayout::HasUniqueKey(k) => {
                    format!("HasUniqueKey({})", list(&unique_names(&i.schema), k))
                }
                other => other.describe().to_string(),
            })
            .collect();
        let mut e = ExplainNode::new("MultiJoin", n, ctx.identity(n));
        e.attrs
            .push(same("commonJoinKey", list(&out, &self.keys[0])));
        e.attrs.push(same("joinTypes", types.join(", ")));
        e.attrs
            .push(same("inputUniqueKeys", unique_keys.join(", ")));
        e.attrs.push(exprs("joinConditions", |s| {
            self.conditions[1..]
                .iter()
                .map(|c| {
                    c.as_ref()
                        .map(|c| render(c, &out, s))
                        .unwrap_or_else(|| "true".into())
                })
                .collect::<Vec<_>>()
                .join(", ")
        }));
        e.attrs.push(same("select", out.join(",")));
        e.attrs.push(same(
            "rowType",
            format!("RecordType({})", row_type.join(", ")),
        ));
        e.lab
            .push(("strategy", format!("MultiJoin: {}", self.reason)));
        e.lab.push(("inputSpecs", specs.join(", ")));
        e.lab.push((
            "stateTtl",
            self.ttls
                .iter()
                .enumerate()
                .map(|(i, t)| format!("input{i}={}", t.describe()))
                .collect::<Vec<_>>()
                .join(", "),
        ));
        e
    }

    fn validate(&self, node: &PhysicalNode) -> Check {
        let n = node.inputs.len();
        if n < 2 {
            return Err(check::invalid(
                check::field(node, "keys"),
                format!("a MultiJoin joins at least 2 inputs, not {n}"),
            ));
        }
        let key_width = self.keys[0].len();
        let mut types: Vec<DataType> = Vec::new();
        for (i, (input, keys)) in node.inputs.iter().zip(&self.keys).enumerate() {
            let at = check::field(node, &format!("keys[{i}]"));
            if keys.is_empty() || keys.len() != key_width {
                return Err(check::invalid(
                    at,
                    format!(
                        "has {} column(s); every input's common key has the {} of input 0 (at least 1)",
                        keys.len(),
                        key_width
                    ),
                ));
            }
            check::columns(&at, keys, input.schema.len(), &format!("input {i}"))?;
            types.extend(input.schema.types());
        }
        check::length(
            &check::field(node, "join_types"),
            self.join_types.len(),
            n,
            "one per input",
        )?;
        check::length(
            &check::field(node, "conditions"),
            self.conditions.len(),
            n,
            "one per input",
        )?;
        check::length(
            &check::field(node, "layouts"),
            self.layouts.len(),
            n,
            "one per input",
        )?;
        let mut width = 0;
        for (i, input) in node.inputs.iter().enumerate() {
            width += input.schema.len();
            if let Some(c) = &self.conditions[i] {
                let at = check::field(node, &format!("conditions[{i}]"));
                if i == 0 {
                    return Err(check::invalid(at, "input 0 joins nothing before it: null"));
                }
                check::predicate(&at, c, &types[..width])?;
            }
            let want = layout_for(input, &self.keys[i]);
            if self.layouts[i] != want {
                return Err(check::invalid(
                    check::field(node, &format!("layouts[{i}]")),
                    format!(
                        "is {:?}, but input {i}'s unique key ({:?}) makes it {want:?}",
                        self.layouts[i], input.unique_key
                    ),
                ));
            }
        }
        check::schema_types(&node.schema, &types, "the join of its inputs")
    }

    fn build(&self, node: &PhysicalNode, id: usize, ctx: &mut dyn JobContext) -> Result<Out> {
        let spec = MultiJoinSpec {
            arities: node.inputs.iter().map(|c| c.schema.len()).collect(),
            keys: self.keys.clone(),
            join_types: self.join_types.clone(),
            conditions: self.conditions.clone(),
            layouts: self.layouts.clone(),
        };
        let scope = format!("{id}-MultiJoin");
        let backend = ctx.backend().clone();
        for (i, t) in self.ttls.iter().enumerate() {
            backend.set_ttl(&scope, &format!("input{i}"), t.duration());
        }
        operator_stage(node, ctx, || {
            Ok(Box::new(MultiJoinOperator::new(
                &backend,
                &scope,
                spec.clone(),
            )?))
        })
    }
}
