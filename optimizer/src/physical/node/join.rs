//! `Join`: the binary regular join (INNER, LEFT, RIGHT or FULL), hashed on its join
//! keys, keeping both inputs in state; with mini-batch on it folds each
//! bundle per join key before joining.
//!
//! Each side's state layout follows its unique key (Flink's
//! `JoinInputSideSpec`): a side whose unique key lies in the join key keeps
//! one row per key, a side with another unique key a map keyed by it, a
//! side without one a multiset.

use super::build::{operator_stage, JobContext, Out};
use super::check::{self, Check};
use super::explain::{exprs, same, ExplainContext, ExplainNode};
use super::state::{StateSlot, StateTtl};
use super::{JoinRole, NodeSpec, PhysicalNode};
use crate::error::Result;
use crate::logical::Schema;
use crate::physical::display::{render, unique_names, Style};
use operators::changelog::ChangelogMode;
use operators::exec::Exchange;
use operators::expr::{BinOp, Expr};
use operators::join::JoinType;
use operators::join::{JoinSpec, JoinStateLayout, MiniBatchJoinOperator, RegularJoinOperator};
use operators::operator::Operator;
use operators::value::DataType;

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Join {
    pub join_type: JoinType,
    pub left_keys: Vec<usize>,
    pub right_keys: Vec<usize>,
    /// The rest of the ON condition, over the concatenated row.
    pub residual: Option<Expr>,
    pub left_layout: JoinStateLayout,
    pub right_layout: JoinStateLayout,
    /// Bundle size when mini-batch is on.
    pub mini_batch_size: Option<usize>,
    /// Flink's asynchronous state execution
    /// (`table.exec.async-state.enabled`; one record at a time only, see
    /// [`Join::async_state_applies`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub async_state: bool,
    /// Why this join was not fused into a MultiJoin, when one was asked for.
    pub note: Option<String>,
    /// Idle state retention of the left and right input.
    #[serde(skip, default)]
    pub ttl: [StateTtl; 2],
    /// What the query's hints said about this join (planning only).
    #[serde(skip, default)]
    pub hints: JoinHints,
}

/// What the planner knew of a join's place in the query, for the
/// MultiJoin rule (planning only: a compiled plan does not keep it, and
/// it is not part of what the join computes, so its `Debug` is empty and
/// identical joins named otherwise are still shared, see
/// `physical/reuse.rs`).
#[derive(Clone, Default, PartialEq)]
pub struct JoinHints {
    /// The left input is the join before it in a left-deep chain of joins
    /// (`a JOIN b JOIN c`), which the MultiJoin rule may fuse.
    pub left_in_chain: bool,
    /// The name a hint gives each input that reads a table directly.
    pub left_alias: Option<String>,
    pub right_alias: Option<String>,
    /// The inputs named by this join's `MULTI_JOIN` hints, lower-cased.
    pub multi_join: Vec<String>,
    /// The `STATE_TTL` entries of this join's hints.
    pub state_ttl: Vec<(String, u64)>,
}

impl std::fmt::Debug for JoinHints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JoinHints")
    }
}

impl Join {
    pub const TYPE_NAMES: &'static [&'static str] = &["stream-exec-join_1"];

    /// `join` of `l` and `r`: each side's state layout chosen from its
    /// unique key, the output's unique key derived from theirs.
    pub fn over(
        l: PhysicalNode,
        r: PhysicalNode,
        mut join: Join,
        schema: Schema,
        parallelism: usize,
    ) -> PhysicalNode {
        let inputs = vec![l, r];
        let mut unique_key = None;
        join.rederive(&inputs, &mut unique_key);
        PhysicalNode::new(join, inputs, schema, unique_key, parallelism)
    }

    /// Whether Flink plans this join with asynchronous state when
    /// `table.exec.async-state.enabled` is on (`StreamExecJoin` building
    /// `AsyncStateStreamingJoinOperator`): one record at a time, not
    /// mini-batch. (A MultiJoin, delta, interval, window or lookup join is
    /// another node.)
    pub fn async_state_applies(&self) -> bool {
        self.mini_batch_size.is_none()
    }
}

/// The exchange into a two-input join keyed on equalities: input `i`
/// hashed on its side's keys (the regular, delta, interval and window
/// joins all read their inputs so).
pub fn hash_on_side_keys(left_keys: &[usize], right_keys: &[usize], i: usize) -> Exchange {
    Exchange::Hash(if i == 0 { left_keys } else { right_keys }.to_vec())
}

/// How a join input keeps its rows: by the unique key it has, if any.
pub fn layout_for(n: &PhysicalNode, keys: &[usize]) -> JoinStateLayout {
    match &n.unique_key {
        Some(u) if u.iter().all(|c| keys.contains(c)) => JoinStateLayout::JoinKeyContainsUniqueKey,
        Some(u) => JoinStateLayout::HasUniqueKey(u.clone()),
        None => JoinStateLayout::NoUniqueKey,
    }
}

/// The changelog a join emits for inputs with these changelogs: an inner
/// join forwards its inputs' kinds; an outer join emits `+I` and `-D`, and
/// `-U` where a side that is not outer retracts with it.
fn join_changelog(join_type: JoinType, l: ChangelogMode, r: ChangelogMode) -> ChangelogMode {
    match join_type {
        JoinType::Inner => l.union(r),
        _ => ChangelogMode {
            insert: true,
            update_before: (!join_type.left_is_outer() && l.update_before)
                || (!join_type.right_is_outer() && r.update_before),
            update_after: false,
            delete: true,
        },
    }
}

/// Whether the join's unique key holds the join key of either side: then
/// every change of one key value is joined on one subtask and leaves in
/// order. Otherwise an update that changes the join key is retracted on
/// one subtask and re-added on another, and the two can reach the sink in
/// either order (Flink keeps an input's upsert key through a join only if
/// it contains the join key, for the same reason).
pub fn ordered_by_unique_key(
    node: &PhysicalNode,
    left_keys: &[usize],
    right_keys: &[usize],
) -> bool {
    let Some(key) = &node.unique_key else {
        return false;
    };
    let holds = |cols: &[usize], offset: usize| cols.iter().all(|c| key.contains(&(c + offset)));
    holds(left_keys, 0) || holds(right_keys, node.inputs[0].schema.len())
}

/// Flink's name of a join type.
pub fn join_type_name(t: JoinType) -> &'static str {
    match t {
        JoinType::Inner => "InnerJoin",
        JoinType::Left => "LeftOuterJoin",
        JoinType::Right => "RightOuterJoin",
        JoinType::Full => "FullOuterJoin",
    }
}

/// `=(l, r)` per key pair and the residual, over the join's output names.
pub fn join_condition(
    out: &[String],
    left_width: usize,
    left_keys: &[usize],
    right_keys: &[usize],
    residual: Option<&Expr>,
    style: Style,
) -> String {
    let mut e: Option<Expr> = None;
    for (l, r) in left_keys.iter().zip(right_keys) {
        let eq = Expr::bin(BinOp::Eq, Expr::col(*l), Expr::col(left_width + r));
        e = Some(match e {
            None => eq,
            Some(prev) => Expr::bin(BinOp::And, prev, eq),
        });
    }
    if let Some(r) = residual {
        e = Some(match e {
            None => r.clone(),
            Some(prev) => Expr::bin(BinOp::And, prev, r.clone()),
        });
    }
    e.map(|e| render(&e, out, style))
        .unwrap_or_else(|| "true".to_string())
}

/// Checks the keys, the residual and the output of a join of two inputs.
pub fn check_binary(
    node: &PhysicalNode,
    left_keys: &[usize],
    right_keys: &[usize],
    residual: Option<&Expr>,
) -> Check {
    let (l, r) = (&node.inputs[0].schema, &node.inputs[1].schema);
    check::key_pairs(
        node,
        ("left_keys", left_keys, l),
        ("right_keys", right_keys, r),
    )?;
    check_join_output(node, residual)
}

/// Checks a two-input join's residual condition and output row (its
/// inputs' columns, left then right).
pub fn check_join_output(node: &PhysicalNode, residual: Option<&Expr>) -> Check {
    let (l, r) = (&node.inputs[0].schema, &node.inputs[1].schema);
    let types: Vec<DataType> = l.types().into_iter().chain(r.types()).collect();
    if let Some(e) = residual {
        check::predicate(&check::field(node, "residual"), e, &types)?;
    }
    check::schema_types(&node.schema, &types, "the join of its inputs")
}

impl NodeSpec for Join {
    fn label(&self) -> String {
        "Join".into()
    }

    fn type_name(&self) -> &'static str {
        Self::TYPE_NAMES[0]
    }

    fn input_count(&self) -> usize {
        2
    }

    fn input_exchange(&self, _node: &PhysicalNode, i: usize) -> Exchange {
        hash_on_side_keys(&self.left_keys, &self.right_keys, i)
    }

    fn changelog(&self, inputs: &[PhysicalNode]) -> ChangelogMode {
        join_changelog(self.join_type, inputs[0].changelog, inputs[1].changelog)
    }

    fn changes_ordered_by_unique_key(&self, node: &PhysicalNode) -> bool {
        ordered_by_unique_key(node, &self.left_keys, &self.right_keys)
    }

    /// Flink's upsert-key rule (`StreamPhysicalJoin.inputUniqueKeyContainsJoinKey`
    /// in `FlinkChangelogModeInferenceProgram`): when its consumer needs no
    /// `-U`, neither do its inputs if every updating input's unique key
    /// holds its join key. Each version of such a row then has the same
    /// join key, so its `+U` overwrites the old version in this join's
    /// state (keyed by that unique key) and joins the same rows; the joined
    /// `+U` rows overwrite the old ones in the upsert sink. Otherwise (an
    /// updating input without such a key) the query is planned with `-U`.
    ///
    /// Two more conditions than Flink's, without which the result would
    /// differ from the batch join (and which Flink's operator shares): the
    /// residual condition reads only unique-key columns of an updating
    /// input (else a `+U` the residual no longer matches leaves the old
    /// pair in the sink), and the other side of an updating input is not
    /// outer (else that side's match counts grow with each `+U` and a later
    /// `-D` does not bring its NULL-padded row back). And not in mini-batch:
    /// its bundles cancel a `+U` with a later `-D` of the same key as if
    /// nothing had been there before, which holds only after a `-U`.
    fn require_update_before(&mut self, inputs: &[PhysicalNode], needed: bool) -> Option<bool> {
        if needed {
            return Some(true);
        }
        if self.mini_batch_size.is_some() {
            return None;
        }
        let la = inputs[0].schema.len();
        let mut residual_cols = Vec::new();
        if let Some(r) = &self.residual {
            r.columns(&mut residual_cols);
        }
        let outer = [
            self.join_type.left_is_outer(),
            self.join_type.right_is_outer(),
        ];
        for (side, keys) in [(0, &self.left_keys), (1, &self.right_keys)] {
            let input = &inputs[side];
            if !(input.changelog.update_after || input.changelog.update_before) {
                continue;
            }
            let key = input.unique_key.as_ref()?;
            if !keys.iter().all(|c| key.contains(c)) || outer[1 - side] {
                return None;
            }
            let own = residual_cols
                .iter()
                .filter(|&&c| (c >= la) == (side == 1))
                .map(|&c| if side == 1 { c - la } else { c });
            if own.clone().any(|c| !key.contains(&c)) {
                return None;
            }
        }
        Some(false)
    }

    /// The layouts follow the inputs' unique keys; the output is unique on
    /// the left's key when the right's lies in its join key (each left row
    /// joins at most one right row) and no left column is padded with NULLs
    /// (INNER, LEFT), else on both keys together.
    fn rederive(&mut self, inputs: &[PhysicalNode], unique_key: &mut Option<Vec<usize>>) {
        let (l, r) = (&inputs[0], &inputs[1]);
        self.left_layout = layout_for(l, &self.left_keys);
        self.right_layout = layout_for(r, &self.right_keys);
        let la = l.schema.len();
        *unique_key = match (&l.unique_key, &r.unique_key) {
            (Some(lk), Some(rk))
                if !self.join_type.right_is_outer()
                    && rk.iter().all(|c| self.right_keys.contains(c)) =>
            {
                Some(lk.clone())
            }
            (Some(lk), Some(rk)) => Some(
                lk.iter()
                    .copied()
                    .chain(rk.iter().map(|c| c + la))
                    .collect(),
            ),
            _ => None,
        };
    }

    fn is_join_result(&self, _node: &PhysicalNode) -> bool {
        true
    }

    fn join_role(&self) -> Option<JoinRole> {
        Some(JoinRole::KeepsInputs)
    }

    fn states(&self) -> Vec<StateSlot> {
        vec![
            StateSlot::new("leftState", &self.ttl[0]),
            StateSlot::new("rightState", &self.ttl[1]),
        ]
    }

    fn set_state_ttls(&mut self, ttls: Vec<StateTtl>) {
        for (slot, t) in self.ttl.iter_mut().zip(ttls) {
            *slot = t;
        }
    }

    fn is_mini_batch(&self) -> bool {
        self.mini_batch_size.is_some()
    }

    fn explain(&self, n: &PhysicalNode, ctx: &mut dyn ExplainContext) -> ExplainNode {
        let out = unique_names(&n.schema);
        let lw = n.inputs[0].schema.len();
        let mut e = ExplainNode::new("Join", n, ctx.identity(n));
        e.attrs
            .push(same("joinType", join_type_name(self.join_type)));
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
        e.attrs
            .push(same("leftInputSpec", self.left_layout.describe()));
        e.attrs
            .push(same("rightInputSpec", self.right_layout.describe()));
        if let Some(size) = self.mini_batch_size {
            e.attrs.push(same("miniBatch", "true"));
            e.lab.push(("miniBatchSize", size.to_string()));
        }
        if self.async_state {
            e.lab.push(("asyncState", "true".to_string()));
        }
        e.lab.push((
            "stateTtl",
            format!(
                "left={}, right={}",
                self.ttl[0].describe(),
                self.ttl[1].describe()
            ),
        ));
        if let Some(note) = &self.note {
            e.lab.push(("note", note.clone()));
        }
        e
    }

    fn validate(&self, node: &PhysicalNode) -> Check {
        check_binary(
            node,
            &self.left_keys,
            &self.right_keys,
            self.residual.as_ref(),
        )?;
        if let Some(size) = self.mini_batch_size {
            check::bundle_size(&check::field(node, "mini_batch_size"), size)?;
        }
        for (field, layout, side, keys) in [
            ("left_layout", &self.left_layout, 0, &self.left_keys),
            ("right_layout", &self.right_layout, 1, &self.right_keys),
        ] {
            let want = layout_for(&node.inputs[side], keys);
            if *layout != want {
                return Err(check::invalid(
                    check::field(node, field),
                    format!(
                        "is {layout:?}, but the input's unique key ({:?}) makes it {want:?}",
                        node.inputs[side].unique_key
                    ),
                ));
            }
        }
        Ok(())
    }

    fn build(&self, node: &PhysicalNode, id: usize, ctx: &mut dyn JobContext) -> Result<Out> {
        let spec = JoinSpec {
            join_type: self.join_type,
            left_keys: self.left_keys.clone(),
            right_keys: self.right_keys.clone(),
            left_arity: node.inputs[0].schema.len(),
            right_arity: node.inputs[1].schema.len(),
            residual: self.residual.clone(),
            left_layout: self.left_layout.clone(),
            right_layout: self.right_layout.clone(),
        };
        let scope = format!("{id}-Join");
        let backend = ctx.backend().clone();
        backend.set_ttl(&scope, "left", self.ttl[0].duration());
        backend.set_ttl(&scope, "right", self.ttl[1].duration());
        operator_stage(node, ctx, || {
            Ok(match self.mini_batch_size {
                Some(size) => Box::new(MiniBatchJoinOperator::new(
                    &backend,
                    &scope,
                    spec.clone(),
                    size,
                )?) as Box<dyn Operator>,
                None => {
                    let o = RegularJoinOperator::new(&backend, &scope, spec.clone())?;
                    Box::new(if self.async_state {
                        o.with_async_state()
                    } else {
                        o
                    })
                }
            })
        })
    }
}
