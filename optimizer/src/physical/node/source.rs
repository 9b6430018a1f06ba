//! `TableSourceScan`: reads a table through its connector; a Calc directly
//! above the scan is fused into the read (filtered and projected as rows
//! are read).
//!
//! EXPLAIN shows the read as Flink does: a connector that takes a filter
//! and projection (`filesystem`, see [`pushes_down`]) lists them in the
//! scan's `filter=` and `project=`; any other gets a `Calc` over the scan.
//! Below a mini-batch operator a `MiniBatchAssigner` sits on the scan.

use super::build::{JobContext, Out};
use super::check::{self, Check};
use super::explain::{exprs, same, select_items, ExplainContext, ExplainNode, Role};
use super::PhysicalNode;
use crate::error::Result;
use crate::logical::{Schema, TableDef};
use crate::physical::display::{list, name, render, unique_names, Style};
use operators::calc::CalcOperator;
use operators::changelog::{Change, ChangelogMode};
use operators::exec::ChangeSource;
use operators::expr::Expr;
use operators::operator::{OpResult, Operator};
use operators::state::StateClock;
use operators::value::Value;

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Source {
    pub table: TableDef,
    /// The fused Calc's filter, over the table's columns.
    pub predicate: Option<Expr>,
    /// The fused Calc's projection, over the table's columns.
    pub projection: Option<Vec<Expr>>,
}

impl Source {
    pub const TYPE_NAMES: &'static [&'static str] = &["stream-exec-table-source-scan_1"];

    /// The scan of `table`, its columns named as the query names them.
    pub fn scan(table: &TableDef, schema: Schema) -> PhysicalNode {
        PhysicalNode::new(
            Source {
                table: table.clone(),
                predicate: None,
                projection: None,
            },
            vec![],
            schema,
            table.primary_key.clone(),
            1,
        )
    }

    /// Whether it reads the table as is (no filter or projection fused).
    pub fn is_plain(&self) -> bool {
        self.predicate.is_none() && self.projection.is_none()
    }

    /// The table's declared `'index.key'`, as column positions.
    pub fn index_key(&self) -> Option<Vec<usize>> {
        let spec = self.table.options.get("index.key")?;
        spec.split(',')
            .map(|c| {
                self.table
                    .schema
                    .fields
                    .iter()
                    .position(|f| f.name.eq_ignore_ascii_case(c.trim()))
            })
            .collect()
    }
}

/// Whether the table's connector takes a filter and projection into its
/// read (Flink's `SupportsFilterPushDown`/`SupportsProjectionPushDown`).
pub fn pushes_down(table: &TableDef) -> bool {
    // A table with computed columns or a watermark is read whole: its
    // WatermarkAssigner sees every row (the lab pushes neither into the read).
    !table.has_computed_columns()
        && table.watermark.is_none()
        && table
            .options
            .get("connector")
            .is_some_and(|c| c.trim().eq_ignore_ascii_case("filesystem"))
}

/// The columns a scan reads: for a connector that takes the projection,
/// those the fused filter and projection use (in table order), else all.
pub fn read_columns(
    table: &TableDef,
    predicate: Option<&Expr>,
    projection: Option<&[Expr]>,
) -> Vec<usize> {
    let width = table.schema.len();
    if !pushes_down(table) {
        return (0..width).collect();
    }
    let mut used = Vec::new();
    predicate.iter().for_each(|p| p.columns(&mut used));
    match projection {
        Some(p) => p.iter().for_each(|e| e.columns(&mut used)),
        None => used.extend(0..width),
    }
    used.sort_unstable();
    used.dedup();
    used
}

/// `-(ts, 5000:INTERVAL SECOND)` as the execution plan prints it: `(ts -
/// 5000:INTERVAL SECOND)`.
fn infix_watermark(prefix: &str) -> String {
    for op in ['-', '+'] {
        if let Some(args) = prefix
            .strip_prefix(op)
            .and_then(|r| r.strip_prefix('('))
            .and_then(|r| r.strip_suffix(')'))
        {
            if let Some((a, b)) = args.split_once(", ") {
                return format!("({a} {op} {b})");
            }
        }
    }
    prefix.to_string()
}

/// `src` read through a filter and projection (itself when there are none).
pub fn with_calc(
    src: Box<dyn ChangeSource>,
    predicate: &Option<Expr>,
    projection: &Option<Vec<Expr>>,
) -> Box<dyn ChangeSource> {
    if predicate.is_none() && projection.is_none() {
        return src;
    }
    Box::new(CalcSource {
        inner: src,
        calc: CalcOperator::new(predicate.clone(), projection.clone()),
        buf: Vec::new(),
    })
}

/// A source with a fused Calc applied as it reads.
struct CalcSource {
    inner: Box<dyn ChangeSource>,
    calc: CalcOperator,
    buf: Vec<Change>,
}

impl ChangeSource for CalcSource {
    fn next_batch(&mut self, max: usize, out: &mut Vec<Change>) -> OpResult<usize> {
        // Returns the rows read (not kept), so a filtered-out batch is not end of input.
        self.buf.clear();
        let n = self.inner.next_batch(max, &mut self.buf)?;
        let batch = std::mem::take(&mut self.buf);
        self.calc.process(0, batch, out)?;
        Ok(n)
    }

    fn can_read_ahead(&self) -> bool {
        // A Calc is a pure function of its row.
        self.inner.can_read_ahead()
    }

    fn watermark(&self) -> Option<i64> {
        self.inner.watermark()
    }

    fn has_watermark(&self) -> bool {
        self.inner.has_watermark()
    }

    fn is_unbounded(&self) -> bool {
        self.inner.is_unbounded()
    }
}

/// A table's read completed by its computed columns, keeping the
/// table's watermark: the greatest value its watermark expression gave
/// over the rows read so far (rows whose expression is NULL are skipped),
/// as Flink's `WatermarkAssigner` computes it after the scan. A
/// `PROCTIME()` column takes the lab's clock when the batch is read.
struct TimeAttributeSource {
    inner: Box<dyn ChangeSource>,
    row: Option<Vec<Expr>>,
    watermark: Option<Expr>,
    current: Option<i64>,
    /// The `PROCTIME()` columns and the clock that fills them.
    proctime: Vec<usize>,
    clock: StateClock,
}

impl ChangeSource for TimeAttributeSource {
    fn next_batch(
        &mut self,
        max: usize,
        out: &mut Vec<Change>,
    ) -> operators::operator::OpResult<usize> {
        let from = out.len();
        let n = self.inner.next_batch(max, out)?;
        let now = Value::Ts(self.clock.now() as i64);
        for change in &mut out[from..] {
            if let Some(exprs) = &self.row {
                change.row = Expr::project(exprs, &change.row);
            }
            for &c in &self.proctime {
                change.row[c] = now.clone();
            }
            if let Some(w) = &self.watermark {
                if let Some(t) = w.eval(&change.row).as_ts() {
                    self.current = Some(self.current.map_or(t, |c| c.max(t)));
                }
            }
        }
        Ok(n)
    }

    fn can_read_ahead(&self) -> bool {
        // Reading ahead would read the clock before the job sets it.
        self.proctime.is_empty() && self.inner.can_read_ahead()
    }

    fn watermark(&self) -> Option<i64> {
        self.current
    }

    fn has_watermark(&self) -> bool {
        self.watermark.is_some()
    }

    fn is_unbounded(&self) -> bool {
        self.inner.is_unbounded()
    }
}

/// `src` (a read of `table.physical()`) completed with the table's
/// computed columns (`PROCTIME()` ones from `clock`) and watermark; `src`
/// itself when it has neither.
pub fn with_time_attributes(
    src: Box<dyn ChangeSource>,
    table: &TableDef,
    clock: StateClock,
) -> Box<dyn ChangeSource> {
    let row = table.row_exprs();
    let watermark = table.watermark.as_ref().map(|w| w.expr.clone());
    if row.is_none() && watermark.is_none() {
        return src;
    }
    let proctime = table
        .computed
        .iter()
        .enumerate()
        .filter(|(_, c)| matches!(c, Some(Expr::ProcTime)))
        .map(|(i, _)| i)
        .collect();
    Box::new(TimeAttributeSource {
        inner: src,
        row,
        watermark,
        current: None,
        proctime,
        clock,
    })
}

impl super::NodeSpec for Source {
    fn label(&self) -> String {
        format!("TableSourceScan({})", self.table.name)
    }

    fn type_name(&self) -> &'static str {
        Self::TYPE_NAMES[0]
    }

    fn input_count(&self) -> usize {
        0
    }

    fn changelog(&self, _inputs: &[PhysicalNode]) -> ChangelogMode {
        datasets::source_changelog_mode(&self.table.options)
    }

    fn changes_ordered_by_unique_key(&self, _node: &PhysicalNode) -> bool {
        true
    }

    /// As a Calc over the scan: a fused filter on non-key columns of an
    /// updating table needs the `-U`.
    fn require_update_before(&mut self, _inputs: &[PhysicalNode], needed: bool) -> Option<bool> {
        let changelog = datasets::source_changelog_mode(&self.table.options);
        let key = self.table.primary_key.as_ref();
        if !needed && super::filter_drops_updates(self.predicate.as_ref(), changelog, key) {
            return None;
        }
        Some(needed)
    }

    /// A table read: `Calc` over `[MiniBatchAssigner over] TableSourceScan`.
    fn explain(&self, n: &PhysicalNode, ctx: &mut dyn ExplainContext) -> ExplainNode {
        let table = &self.table;
        let (predicate, projection) = (self.predicate.as_ref(), self.projection.as_deref());
        let width = table.schema.len();
        let table_names = unique_names(&table.schema);
        let read = read_columns(table, predicate, projection);
        let narrowed = read.len() < width;
        let mut digest = vec![
            "default_catalog".to_string(),
            "default_database".to_string(),
            table.name.clone(),
        ];
        if pushes_down(table) {
            if let Some(p) = predicate {
                digest.push(format!(
                    "filter=[{}]",
                    render(p, &table_names, Style::Prefix)
                ));
            }
            if narrowed {
                digest.push(format!("project=[{}]", list(&table_names, &read)));
                digest.push("metadata=[]".to_string());
            }
        }
        let read_names: Vec<String> = read.iter().map(|&c| table_names[c].clone()).collect();
        let scan_identity = ctx.scan_identity(n);
        let mut scan = ExplainNode::new("TableSourceScan", n, scan_identity.clone());
        scan.role = Role::Source(table.name.clone());
        scan.parallelism = n.parallelism;
        scan.attrs
            .push(same("table", format!("[{}]", digest.join(", "))));
        let physical = table.physical();
        let time = table.has_computed_columns() || table.watermark.is_some();
        if time {
            scan.attrs
                .push(same("fields", physical.schema.names().join(", ")));
        } else {
            scan.attrs.push(same("fields", read_names.join(", ")));
        }
        let mut top = scan;
        if let Some(row) = table.row_exprs() {
            let physical_names = unique_names(&physical.schema);
            let mut calc =
                ExplainNode::new("Calc", n, format!("COMPUTED|{row:?}|{}", top.identity));
            calc.attrs.push(exprs("select", |s| {
                select_items(&row, &physical_names, &table_names, s)
            }));
            calc.inputs.push(top);
            top = calc;
        }
        if let Some(w) = &table.watermark {
            let mut wa = ExplainNode::new(
                "WatermarkAssigner",
                n,
                format!("WA|{}|{}", w.text, top.identity),
            );
            wa.attrs
                .push(same("rowtime", table_names[w.rowtime].clone()));
            wa.attrs.push(exprs("watermark", |style| match style {
                Style::Prefix => w.text.clone(),
                Style::Infix => infix_watermark(&w.text),
            }));
            wa.inputs.push(top);
            top = wa;
        }
        if ctx.under_mini_batch() {
            let interval = ctx.mini_batch_interval_ms();
            let mut mba = ExplainNode::new(
                "MiniBatchAssigner",
                n,
                format!("MBA|{interval}|{scan_identity}"),
            );
            mba.attrs.push(same("interval", format!("{interval}ms")));
            mba.attrs.push(same("mode", "ProcTime"));
            mba.inputs.push(top);
            top = mba;
        }
        // Table column -> position in the read.
        let mut map = vec![0; width];
        for (i, &c) in read.iter().enumerate() {
            map[c] = i;
        }
        let remap = |e: &Expr| e.replace_columns(&|c| Expr::Column(map[c]));
        let predicate = predicate.map(remap);
        let projection: Vec<Expr> = match projection {
            Some(p) => p.iter().map(remap).collect(),
            None => (0..width).map(|c| Expr::col(map[c])).collect(),
        };
        let output = unique_names(&n.schema);
        let identity_projection = projection.len() == read.len()
            && projection
                .iter()
                .enumerate()
                .all(|(i, e)| *e == Expr::col(i) && read_names[i] == name(&output, i));
        if predicate.is_none() && identity_projection {
            return top;
        }
        let mut calc = ExplainNode::new(
            "Calc",
            n,
            format!("CALC|{predicate:?}|{projection:?}|{}", top.identity),
        );
        calc.attrs.push(exprs("select", |s| {
            select_items(&projection, &read_names, &output, s)
        }));
        if let Some(p) = &predicate {
            calc.attrs
                .push(exprs("where", |s| render(p, &read_names, s)));
        }
        calc.inputs.push(top);
        calc
    }

    fn validate(&self, node: &PhysicalNode) -> Check {
        let table = &self.table;
        let types = table.schema.types();
        let width = types.len();
        if let Some(pk) = &table.primary_key {
            check::columns(
                &check::field(node, "table.primary_key"),
                pk,
                width,
                "the table",
            )?;
        }
        if !table.computed.is_empty() {
            let at = check::field(node, "table.computed");
            check::length(&at, table.computed.len(), width, "the table's columns")?;
            let physical = table.physical().schema.types();
            for (i, c) in table.computed.iter().enumerate() {
                if let Some(e) = c {
                    let at = format!("{at}[{i}]");
                    let t = check::expr_type(&at, e, &physical)?;
                    if !check::fits(t, types[i]) {
                        return Err(check::invalid(
                            at,
                            format!("computes {t:?}, but the column is {}", types[i]),
                        ));
                    }
                }
            }
        }
        if let Some(w) = &table.watermark {
            let at = check::field(node, "table.watermark");
            check::columns(&format!("{at}.rowtime"), &[w.rowtime], width, "the table")?;
            let t = check::expr_type(&format!("{at}.expr"), &w.expr, &types)?;
            if !types[w.rowtime].is_timestamp() || !t.is_some_and(|t| t.is_timestamp()) {
                return Err(check::invalid(
                    at,
                    "the rowtime column and the watermark expression must be timestamps",
                ));
            }
        }
        if let Some(p) = &self.predicate {
            check::predicate(&check::field(node, "predicate"), p, &types)?;
        }
        match &self.projection {
            Some(p) => {
                check::projection(&check::field(node, "projection"), p, &types, &node.schema)
            }
            None => check::schema_types(&node.schema, &types, "the table"),
        }
    }

    fn build(&self, node: &PhysicalNode, _id: usize, ctx: &mut dyn JobContext) -> Result<Out> {
        let calc = || CalcOperator::new(self.predicate.clone(), self.projection.clone());
        if let Some(read) = ctx.shared_read(node)? {
            if self.is_plain() {
                return Ok(read);
            }
            let calc: Box<dyn Operator> = Box::new(calc());
            return Ok(ctx.add_read_calc(node, calc, read));
        }
        let mut src = ctx.open(&self.table)?;
        if !self.is_plain() {
            src = Box::new(CalcSource {
                inner: src,
                calc: calc(),
                buf: Vec::new(),
            });
        }
        Ok(ctx.add_source(&self.table.name, src))
    }
}
