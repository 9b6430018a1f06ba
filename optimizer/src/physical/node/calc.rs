//! `Calc`: a filter and a projection, one row at a time (stateless).
//!
//! Adjacent filters and projections fuse into one Calc, and a Calc directly
//! above a table scan fuses into the read ([`over`]).

use super::build::{operator_stage, JobContext, Out};
use super::check::{self, Check};
use super::explain::{exprs, select_items, ExplainContext, ExplainNode};
use super::source::Source;
use super::PhysicalNode;
use crate::error::Result;
use crate::logical::Schema;
use crate::physical::display::{render, unique_names};
use operators::calc::CalcOperator;
use operators::changelog::ChangelogMode;
use operators::expr::{BinOp, Expr};

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Calc {
    pub predicate: Option<Expr>,
    pub projection: Option<Vec<Expr>>,
}

impl Calc {
    pub const TYPE_NAMES: &'static [&'static str] = &["stream-exec-calc_1"];
}

/// `predicate` and `projection` over `input`'s output, as one node: fused
/// into `input` when it is a Calc or a table scan, else a Calc above it.
pub fn over(
    input: PhysicalNode,
    predicate: Option<Expr>,
    projection: Option<Vec<Expr>>,
    schema: Schema,
) -> PhysicalNode {
    let unique_key = project_key(input.unique_key.as_ref(), projection.as_deref());
    let mut input = input;
    if !input.kind.is::<Source>() && !input.kind.is::<Calc>() {
        let parallelism = input.parallelism;
        return PhysicalNode::new(
            Calc {
                predicate,
                projection,
            },
            vec![input],
            schema,
            unique_key,
            parallelism,
        );
    }
    let (p0, q0) = if input.kind.is::<Source>() {
        let s = input.kind.get_mut::<Source>().expect("a source");
        (&mut s.predicate, &mut s.projection)
    } else {
        let c = input.kind.get_mut::<Calc>().expect("a calc");
        (&mut c.predicate, &mut c.projection)
    };
    // New predicate/projection are over the old projection's output.
    let pred = predicate.map(|e| match q0 {
        Some(q) => inline(&e, q),
        None => e,
    });
    let proj = match (projection, q0.take()) {
        (Some(p), Some(q)) => Some(p.iter().map(|e| inline(e, &q)).collect()),
        (Some(p), None) => Some(p),
        (None, q) => q,
    };
    *p0 = and(p0.take(), pred);
    *q0 = proj;
    input.schema = schema;
    input.unique_key = unique_key;
    input
}

/// The unique key `key` of an input through `projection`: each key
/// column's (first) position in the output, if every one is kept.
fn project_key(key: Option<&Vec<usize>>, projection: Option<&[Expr]>) -> Option<Vec<usize>> {
    match (key, projection) {
        (None, _) => None,
        (Some(k), None) => Some(k.clone()),
        (Some(k), Some(p)) => k
            .iter()
            .map(|c| p.iter().position(|e| *e == Expr::Column(*c)))
            .collect(),
    }
}

/// Replaces column references of `e` by the projection's expressions.
fn inline(e: &Expr, p: &[Expr]) -> Expr {
    e.replace_columns(&|i| p[i].clone())
}

fn and(a: Option<Expr>, b: Option<Expr>) -> Option<Expr> {
    match (a, b) {
        (Some(a), Some(b)) => Some(Expr::bin(BinOp::And, a, b)),
        (a, None) => a,
        (None, b) => b,
    }
}

impl super::NodeSpec for Calc {
    fn label(&self) -> String {
        "Calc".into()
    }

    fn type_name(&self) -> &'static str {
        Self::TYPE_NAMES[0]
    }

    fn input_count(&self) -> usize {
        1
    }

    fn changelog(&self, inputs: &[PhysicalNode]) -> ChangelogMode {
        inputs[0].changelog
    }

    fn changes_ordered_by_unique_key(&self, node: &PhysicalNode) -> bool {
        node.inputs[0].changes_ordered_by_unique_key()
    }

    /// Passes the need on, unless its filter reads columns outside its
    /// input's unique key while the input updates (see
    /// [`super::filter_drops_updates`]).
    fn require_update_before(&mut self, inputs: &[PhysicalNode], needed: bool) -> Option<bool> {
        let (input, key) = (&inputs[0], inputs[0].unique_key.as_ref());
        if !needed && super::filter_drops_updates(self.predicate.as_ref(), input.changelog, key) {
            return None;
        }
        Some(needed)
    }

    fn is_join_result(&self, node: &PhysicalNode) -> bool {
        node.inputs[0].is_join_result()
    }

    fn rederive(&mut self, inputs: &[PhysicalNode], unique_key: &mut Option<Vec<usize>>) {
        *unique_key = project_key(inputs[0].unique_key.as_ref(), self.projection.as_deref());
    }

    fn explain(&self, n: &PhysicalNode, ctx: &mut dyn ExplainContext) -> ExplainNode {
        let input = unique_names(&n.inputs[0].schema);
        let output = unique_names(&n.schema);
        let mut e = ExplainNode::new("Calc", n, ctx.identity(n));
        e.attrs.push(exprs("select", |s| match &self.projection {
            Some(p) => select_items(p, &input, &output, s),
            None => input.join(", "),
        }));
        if let Some(p) = &self.predicate {
            e.attrs.push(exprs("where", |s| render(p, &input, s)));
        }
        e
    }

    fn validate(&self, node: &PhysicalNode) -> Check {
        let types = node.inputs[0].schema.types();
        if let Some(p) = &self.predicate {
            check::predicate(&check::field(node, "predicate"), p, &types)?;
        }
        match &self.projection {
            Some(p) => {
                check::projection(&check::field(node, "projection"), p, &types, &node.schema)
            }
            None => check::schema_types(&node.schema, &types, "the input"),
        }
    }

    fn build(&self, node: &PhysicalNode, _id: usize, ctx: &mut dyn JobContext) -> Result<Out> {
        operator_stage(node, ctx, || {
            Ok(Box::new(CalcOperator::new(
                self.predicate.clone(),
                self.projection.clone(),
            )))
        })
    }
}
