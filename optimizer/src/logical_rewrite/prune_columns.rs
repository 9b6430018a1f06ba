//! Each join input carries only the columns read above it, as Flink's
//! logical optimization leaves it (Calcite's `ProjectJoinTransposeRule`,
//! and for a `filesystem` table the projection pushed into its scan).
//!
//! ```text
//! before (10-way LEFT chain, only tenant_id and payload selected):
//!   Project(tenant_id, payload, payload0, payload1)
//!   +- Join(tenant_id = tenant_id1, LEFT)
//!      :- Join(tenant_id = tenant_id0, LEFT)
//!      :  :- Scan(t0: tenant_id, row_id, payload)
//!      :  +- Scan(t1: tenant_id, row_id, payload)
//!      +- Scan(t2: tenant_id, row_id, payload)
//! after:
//!   Project(tenant_id, payload, payload0, payload1)
//!   +- Join(tenant_id = tenant_id1, LEFT)
//!      :- Project(tenant_id, payload, payload0)
//!      :  +- Join(tenant_id = tenant_id0, LEFT)
//!      :     :- Project(tenant_id, payload) -- Scan(t0)
//!      :     +- Project(tenant_id, payload) -- Scan(t1)
//!      +- Project(tenant_id, payload) -- Scan(t2)
//! ```
//!
//! Walking down from the sink, which reads every column of the query:
//! a projection keeps the expressions read above it and reads what they
//! read; a filter reads its predicate's columns too; a join reads its keys
//! and condition's columns (and a lookup join its time attribute), and each
//! of its inputs that produces more columns than that gets a projection to
//! them. A projection over a table scan is fused into the read (and shown
//! as the scan's `project=` where the connector takes it, see
//! `physical/node/source.rs`). Every other node (aggregates, windows,
//! unions, deduplications, Top-Ns, and joins of two windowed inputs)
//! keeps its inputs whole, as they were bound; joins below them are
//! pruned for what those nodes read.
//!
//! Where the MultiJoin rule may fuse a chain (`table.optimizer.multi-join.enabled`,
//! or a `MULTI_JOIN` hint on the join's SELECT), the join before a join is
//! not projected: the rule fuses joins that follow each other directly,
//! and Flink's MultiJoin reads its inputs pruned, with nothing between.
//!
//! Exact: a dropped column is read by nothing above it. A projection that
//! drops a unique key's column makes the join keep the input without one
//! (`NoUniqueKey`), as Flink's does.

use super::map_inputs;
use crate::logical::{unique_names, Field, LogicalPlan, Schema};
use operators::expr::Expr;

/// Which joins the MultiJoin rule (`physical/rules/multi_join.rs`) may fuse.
#[derive(Clone, Copy, Debug)]
pub struct MultiJoinFusing {
    /// `table.optimizer.multi-join.enabled`, the rule not disabled.
    pub every_join: bool,
    /// Those of a SELECT with a `MULTI_JOIN` hint (the rule not disabled).
    pub hinted_joins: bool,
}

/// The plan with every join input pruned to what is read above it.
pub fn apply(plan: LogicalPlan, fusing: MultiJoinFusing) -> LogicalPlan {
    let all: Vec<usize> = (0..plan.schema().len()).collect();
    Pruner { fusing }.prune(plan, &all).0
}

struct Pruner {
    fusing: MultiJoinFusing,
}

/// Where each column of a node's output went: `map[c]` is its position in
/// the pruned node's output, `None` when nothing reads it.
type ColumnMap = Vec<Option<usize>>;

fn identity(width: usize) -> ColumnMap {
    (0..width).map(Some).collect()
}

fn moved(map: &ColumnMap, c: usize) -> usize {
    map[c].unwrap_or_else(|| unreachable!("column {c} is read, so it was kept"))
}

fn remap(e: &Expr, map: &ColumnMap) -> Expr {
    e.replace_columns(&|c| Expr::Column(moved(map, c)))
}

fn sorted(mut cols: Vec<usize>) -> Vec<usize> {
    cols.sort_unstable();
    cols.dedup();
    cols
}

impl Pruner {
    /// `plan` producing at least its `required` columns (sorted), and where
    /// each of its columns went.
    fn prune(&self, plan: LogicalPlan, required: &[usize]) -> (LogicalPlan, ColumnMap) {
        match plan {
            LogicalPlan::Project {
                input,
                exprs,
                schema,
            } => {
                let width = exprs.len();
                let mut map = vec![None; width];
                let (mut kept, mut fields) = (Vec::new(), Vec::new());
                for (i, &c) in required.iter().enumerate() {
                    map[c] = Some(i);
                    kept.push(exprs[c].clone());
                    fields.push(schema.fields[c].clone());
                }
                let mut reads = Vec::new();
                kept.iter().for_each(|e| e.columns(&mut reads));
                let (input, inner) = self.prune(*input, &sorted(reads));
                let exprs = kept.iter().map(|e| remap(e, &inner)).collect();
                let plan = LogicalPlan::Project {
                    input: Box::new(input),
                    exprs,
                    schema: Schema { fields },
                };
                (plan, map)
            }
            LogicalPlan::Filter { input, predicate } => {
                let mut reads = required.to_vec();
                predicate.columns(&mut reads);
                let (input, map) = self.prune(*input, &sorted(reads));
                let predicate = remap(&predicate, &map);
                let plan = LogicalPlan::Filter {
                    input: Box::new(input),
                    predicate,
                };
                (plan, map)
            }
            LogicalPlan::Join {
                ref left,
                ref right,
                ..
            } if left.join_window_columns().is_some() && right.join_window_columns().is_some() => {
                // A window join's inputs are windows as bound; the planner
                // recognises (or refuses) it by their window columns.
                self.keep_whole(plan)
            }
            LogicalPlan::Join {
                left,
                right,
                kind,
                left_keys,
                right_keys,
                residual,
                schema,
                hints,
                mut lookup,
            } => {
                let nl = left.schema().len();
                let nr = right.schema().len();
                let mut reads = required.to_vec();
                reads.extend(&left_keys);
                reads.extend(right_keys.iter().map(|r| r + nl));
                if let Some(r) = &residual {
                    r.columns(&mut reads);
                }
                if let Some(l) = &lookup {
                    reads.push(l.time_col);
                }
                let reads = sorted(reads);
                let left_reads: Vec<usize> = reads.iter().copied().filter(|&c| c < nl).collect();
                let fusible = self.fusing.every_join
                    || (self.fusing.hinted_joins
                        && hints
                            .iter()
                            .any(|h| h.name.eq_ignore_ascii_case("MULTI_JOIN")));
                let (left, lmap) = if fusible && matches!(*left, LogicalPlan::Join { .. }) {
                    self.prune(*left, &left_reads)
                } else {
                    self.prune_input(*left, &left_reads)
                };
                // A lookup join's table stays a table scan (it is looked up).
                let (right, rmap) = if lookup.is_some() {
                    (*right, identity(nr))
                } else {
                    let right_reads: Vec<usize> =
                        reads.iter().filter(|&&c| c >= nl).map(|c| c - nl).collect();
                    self.prune_input(*right, &right_reads)
                };
                let new_nl = left.schema().len();
                let mut map: ColumnMap = lmap.clone();
                map.extend(rmap.iter().map(|m| m.map(|x| x + new_nl)));
                // The join's column types and padding, named as its inputs
                // name them now (a projected input's `k0` stays `k0`).
                let input_names: Vec<&String> = left
                    .schema()
                    .fields
                    .iter()
                    .chain(&right.schema().fields)
                    .map(|f| &f.name)
                    .collect();
                let mut fields: Vec<Option<Field>> = vec![None; input_names.len()];
                for (c, m) in map.iter().enumerate() {
                    if let Some(p) = m {
                        fields[*p] = Some(Field {
                            name: input_names[*p].clone(),
                            ..schema.fields[c].clone()
                        });
                    }
                }
                let fields = fields
                    .into_iter()
                    .map(|f| {
                        f.unwrap_or_else(|| unreachable!("every kept column was a join column"))
                    })
                    .collect();
                if let Some(l) = &mut lookup {
                    l.time_col = moved(&lmap, l.time_col);
                }
                let plan = LogicalPlan::Join {
                    left: Box::new(left),
                    right: Box::new(right),
                    kind,
                    left_keys: left_keys.iter().map(|&c| moved(&lmap, c)).collect(),
                    right_keys: right_keys.iter().map(|&c| moved(&rmap, c)).collect(),
                    residual: residual.as_ref().map(|r| remap(r, &map)),
                    schema: Schema { fields },
                    hints,
                    lookup,
                };
                (plan, map)
            }
            LogicalPlan::Scan { .. } => {
                let width = plan.schema().len();
                (plan, identity(width))
            }
            other => self.keep_whole(other),
        }
    }

    /// `plan` as it is, reading all of its inputs (pruned below for that).
    fn keep_whole(&self, plan: LogicalPlan) -> (LogicalPlan, ColumnMap) {
        let width = plan.schema().len();
        let plan = map_inputs(plan, &mut |input| {
            let all: Vec<usize> = (0..input.schema().len()).collect();
            self.prune(input, &all).0
        });
        (plan, identity(width))
    }

    /// A join input pruned to its `required` columns: projected to exactly
    /// them when it would produce more.
    fn prune_input(&self, plan: LogicalPlan, required: &[usize]) -> (LogicalPlan, ColumnMap) {
        let width = plan.schema().len();
        let (plan, map) = self.prune(plan, required);
        if plan.schema().len() <= required.len() {
            return (plan, map);
        }
        let exprs: Vec<Expr> = required
            .iter()
            .map(|&c| Expr::Column(moved(&map, c)))
            .collect();
        // Named as the input shows them (`k0`, not `k AS k0`), as Calcite's
        // projection of a join's columns is.
        let names = unique_names(plan.schema());
        let fields = required
            .iter()
            .map(|&c| Field {
                name: names[moved(&map, c)].clone(),
                ..plan.schema().fields[moved(&map, c)].clone()
            })
            .collect();
        let mut projected = vec![None; width];
        for (i, &c) in required.iter().enumerate() {
            projected[c] = Some(i);
        }
        let plan = LogicalPlan::Project {
            input: Box::new(plan),
            exprs,
            schema: Schema { fields },
        };
        (plan, projected)
    }
}
