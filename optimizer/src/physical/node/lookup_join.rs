//! `LookupJoin`: joins each record of its one input (the probe) with the
//! rows a lookup table holds for its key, Flink's `StreamExecLookupJoin`
//! (`JOIN dim FOR SYSTEM_TIME AS OF o.pt AS d ON o.k = d.id`). The table
//! is not an input of the job: when the job is built it is read once
//! through its connector into an in-memory index on the lookup key
//! (`operators/src/lookup/dimension.rs`, the lab's stand-in for a JDBC or
//! HBase table), which every subtask shares; the operator
//! (`operators/src/join/lookup_join.rs`) looks each probe key up there,
//! through a partial cache when the table's `lookup.cache` is `PARTIAL`.
//!
//! It keeps no state, so its input needs no exchange (a forward, or a
//! rebalance between parallelisms) and the probe's changelog passes
//! through: each change is joined and emitted with its kind.
//!
//! EXPLAIN as Flink's `CommonPhysicalLookupJoin` prints it:
//! `LookupJoin(table=[default_catalog.default_database.dim],
//! joinType=[InnerJoin], lookup=[id=k], where=[(age > 20)],
//! joinCondition=[(len <= age)], select=[k, len, pt, id, name, age])`:
//! `where` filters the looked-up rows (conditions on the table's columns
//! only), `joinCondition` is the rest of the ON condition.

use super::build::{operator_error, operator_stage, JobContext, Out};
use super::check::{self, Check};
use super::explain::{exprs, qualified, same, ExplainContext, ExplainNode};
use super::join::join_type_name;
use super::{JoinRole, NodeSpec, PhysicalNode};
use crate::error::{PlanError, Result};
use crate::logical::TableDef;
use crate::physical::display::{render, unique_names, uniquify};
use operators::changelog::{ChangelogMode, RowKind};
use operators::expr::Expr;
use operators::join::{JoinType, LookupJoinOperator, LookupJoinSpec};
use operators::lookup::{DimensionTable, PartialCacheOptions};
use operators::value::{DataType, Value};
use std::sync::Arc;

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct LookupJoin {
    /// The table looked up, as declared.
    pub table: TableDef,
    /// `Inner` or `Left`.
    pub join_type: JoinType,
    /// Probe columns equal to the table's `lookup_keys`, pair by pair.
    pub probe_keys: Vec<usize>,
    pub lookup_keys: Vec<usize>,
    /// Table columns equal to a constant (`ON d.id = 1`): the rest of the
    /// lookup key.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constant_keys: Vec<(usize, Value)>,
    /// Keeps a looked-up row: the conditions on the table's columns only,
    /// over its columns (Flink's Calc on the temporal table).
    pub table_filter: Option<Expr>,
    /// The rest of the ON condition, over the probe's columns then the
    /// table's.
    pub condition: Option<Expr>,
    /// The probe's processing-time attribute (`FOR SYSTEM_TIME AS OF`).
    pub time_col: usize,
    /// The partial cache (`lookup.cache = 'PARTIAL'`), if any.
    pub cache: Option<PartialCacheOptions>,
}

impl LookupJoin {
    pub const TYPE_NAMES: &'static [&'static str] = &["stream-exec-lookup-join_1"];

    /// The output is unique on the probe's unique key when each probe row
    /// finds at most one row: the table's primary key is among the lookup
    /// keys.
    pub fn unique_key(&self, probe: &PhysicalNode) -> Option<Vec<usize>> {
        let pk = self.table.primary_key.as_ref()?;
        pk.iter()
            .all(|c| self.key_columns().contains(c))
            .then(|| probe.unique_key.clone())
            .flatten()
    }
}

impl LookupJoin {
    /// The table's columns a lookup gives: those equal to probe columns,
    /// then those equal to constants.
    pub fn key_columns(&self) -> Vec<usize> {
        self.lookup_keys
            .iter()
            .copied()
            .chain(self.constant_keys.iter().map(|(c, _)| *c))
            .collect()
    }
}

impl NodeSpec for LookupJoin {
    fn label(&self) -> String {
        format!("LookupJoin({})", self.table.name)
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

    fn is_join_result(&self, _node: &PhysicalNode) -> bool {
        true
    }

    fn join_role(&self) -> Option<JoinRole> {
        Some(JoinRole::LooksUpTable)
    }

    fn explain(&self, n: &PhysicalNode, ctx: &mut dyn ExplainContext) -> ExplainNode {
        let probe = unique_names(&n.inputs[0].schema);
        let dim = self.table.schema.names();
        let out = uniquify(probe.iter().cloned().chain(dim.iter().cloned()));
        let mut e = ExplainNode::new("LookupJoin", n, ctx.identity(n));
        e.attrs.push(same("table", qualified(&self.table.name)));
        e.attrs
            .push(same("joinType", join_type_name(self.join_type)));
        let mut pairs: Vec<(usize, Expr)> = self
            .lookup_keys
            .iter()
            .zip(&self.probe_keys)
            .map(|(&d, &p)| (d, Expr::col(p)))
            .chain(
                self.constant_keys
                    .iter()
                    .map(|(d, v)| (*d, Expr::lit(v.clone()))),
            )
            .collect();
        pairs.sort_by_key(|(d, _)| *d);
        e.attrs.push(exprs("lookup", |s| {
            pairs
                .iter()
                .map(|(d, e)| format!("{}={}", dim[*d], render(e, &probe, s)))
                .collect::<Vec<_>>()
                .join(", ")
        }));
        if let Some(f) = &self.table_filter {
            e.attrs.push(exprs("where", |s| render(f, &dim, s)));
        }
        if let Some(c) = &self.condition {
            e.attrs.push(exprs("joinCondition", |s| render(c, &out, s)));
        }
        e.attrs.push(same("select", out.join(", ")));
        if let Some(c) = &self.cache {
            let rows = if c.max_rows == usize::MAX {
                "unbounded".to_string()
            } else {
                c.max_rows.to_string()
            };
            e.lab.push(("cache", format!("PARTIAL, maxRows={rows}")));
        }
        e
    }

    fn validate(&self, node: &PhysicalNode) -> Check {
        let probe = node.inputs[0].schema.types();
        let dim = self.table.schema.types();
        if !matches!(self.join_type, JoinType::Inner | JoinType::Left) {
            return Err(check::invalid(
                check::field(node, "join_type"),
                "a lookup join is INNER or LEFT",
            ));
        }
        if self.probe_keys.is_empty() && self.constant_keys.is_empty() {
            return Err(check::invalid(
                check::field(node, "probe_keys"),
                "a lookup join needs at least one key",
            ));
        }
        for (i, (c, _)) in self.constant_keys.iter().enumerate() {
            check::column(
                &format!("{}[{i}]", check::field(node, "constant_keys")),
                *c,
                dim.len(),
                "the table",
            )?;
        }
        check::length(
            &check::field(node, "lookup_keys"),
            self.lookup_keys.len(),
            self.probe_keys.len(),
            "probe_keys",
        )?;
        check::columns(
            &check::field(node, "probe_keys"),
            &self.probe_keys,
            probe.len(),
            "the input",
        )?;
        check::columns(
            &check::field(node, "lookup_keys"),
            &self.lookup_keys,
            dim.len(),
            "the table",
        )?;
        check::column(
            &check::field(node, "time_col"),
            self.time_col,
            probe.len(),
            "the input",
        )?;
        if !probe[self.time_col].is_timestamp() {
            return Err(check::invalid(
                check::field(node, "time_col"),
                format!(
                    "column {} is {}, not a timestamp",
                    self.time_col, probe[self.time_col]
                ),
            ));
        }
        if let Some(f) = &self.table_filter {
            check::predicate(&check::field(node, "table_filter"), f, &dim)?;
        }
        let types: Vec<DataType> = probe.into_iter().chain(dim).collect();
        if let Some(c) = &self.condition {
            check::predicate(&check::field(node, "condition"), c, &types)?;
        }
        if self.cache.is_some_and(|c| c.max_rows == 0) {
            return Err(check::invalid(
                check::field(node, "cache.max_rows"),
                "a partial cache keeps at least one key",
            ));
        }
        check::schema_types(&node.schema, &types, "the input and the table's columns")
    }

    fn build(&self, node: &PhysicalNode, _id: usize, ctx: &mut dyn JobContext) -> Result<Out> {
        let table = Arc::new(read_table(&self.table, &self.key_columns(), ctx)?);
        let spec = LookupJoinSpec {
            join_type: self.join_type,
            probe_keys: self.probe_keys.clone(),
            constant_key: self.constant_keys.iter().map(|(_, v)| v.clone()).collect(),
            dim_arity: self.table.schema.len(),
            dim_filter: self.table_filter.clone(),
            condition: self.condition.clone(),
            time_col: self.time_col,
            cache: self.cache,
        };
        operator_stage(node, ctx, || {
            Ok(Box::new(LookupJoinOperator::new(
                spec.clone(),
                table.clone(),
            )?))
        })
    }
}

/// Reads the whole table through its connector and indexes it on `key`.
/// A lookup table is bounded and insert-only: its rows are what a lookup
/// finds, for the whole run.
fn read_table(def: &TableDef, key: &[usize], ctx: &mut dyn JobContext) -> Result<DimensionTable> {
    let mut source = ctx.open(def)?;
    if source.is_unbounded() {
        return Err(PlanError::validation(format!(
            "table '{}' is unbounded: a lookup join reads a bounded table (its rows are loaded once)",
            def.name
        )));
    }
    let mut rows = Vec::new();
    let mut batch = Vec::new();
    loop {
        batch.clear();
        let read = source
            .next_batch(4096, &mut batch)
            .map_err(operator_error)?;
        for c in batch.drain(..) {
            if c.kind != RowKind::Insert {
                return Err(PlanError::validation(format!(
                    "table '{}' emits {} rows: a lookup join reads an insert-only table",
                    def.name, c.kind
                )));
            }
            rows.push(c.row);
        }
        if read == 0 {
            break;
        }
    }
    Ok(DimensionTable::build(rows, key))
}
