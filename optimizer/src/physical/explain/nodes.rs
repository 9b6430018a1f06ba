//! The plan EXPLAIN prints, one function per node kind.
//!
//! The lab's physical plan is turned into Flink's shape before it is
//! printed: a Calc fused into a source read is shown as Flink shows it (a
//! `Calc` over the `TableSourceScan`, or pushed into the scan's `project=`
//! and `filter=` for a connector that takes them, see [`pushes_down`]); a
//! `MiniBatchAssigner` sits on each source below a mini-batch operator; the
//! SinkUpsertMaterializer is folded into its `Sink` (`upsertMaterialize`);
//! keyed exchanges are nodes. Each node carries Flink's attributes in both
//! expression forms, the lab's own attributes (strategy and why, state TTL
//! and where it came from, mini-batch size, caches) for the physical plan,
//! and an identity: nodes with the same identity are one node of the job
//! ([`Reuse`]).

use super::expr::{render, Style};
use super::names::{list, name, unique_names};
use crate::config::Config;
use crate::logical::TableDef;
use crate::physical::plan::{NodeKind, PartialFinal, PhysicalNode, PhysicalPlan};
use crate::physical::reuse::{pushes_down, read_columns, Reuse};
use operators::agg::{AggKind, AggSpec};
use operators::changelog::ChangelogMode;
use operators::exec::Exchange;
use operators::expr::Expr;
use operators::join::regular_join::JoinType;
use operators::join::JoinStateLayout;
use operators::value::DataType;

/// One attribute, in the physical plan's and the execution plan's form.
#[derive(Clone, Debug)]
pub(crate) struct Attr {
    pub key: &'static str,
    pub prefix: String,
    pub infix: String,
}

fn same(key: &'static str, value: impl Into<String>) -> Attr {
    let value = value.into();
    Attr {
        key,
        prefix: value.clone(),
        infix: value,
    }
}

/// An attribute holding expressions: rendered in both forms by `f`.
fn exprs(key: &'static str, f: impl Fn(Style) -> String) -> Attr {
    Attr {
        key,
        prefix: f(Style::Prefix),
        infix: f(Style::Infix),
    }
}

/// What a node is in the job graph (for the JSON execution plan).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// Reads a table.
    Source(String),
    Operator,
    /// How records reach the consumer: `HASH`, `GLOBAL`.
    Exchange(&'static str),
    /// Writes a table.
    Sink(String),
}

#[derive(Clone, Debug)]
pub(crate) struct ExplainNode {
    pub name: &'static str,
    pub attrs: Vec<Attr>,
    /// The lab's own attributes (physical plan only).
    pub lab: Vec<(&'static str, String)>,
    /// `None` for a sink (`changelogMode=[NONE]`).
    pub changelog: Option<ChangelogMode>,
    /// Flink's plan advice for this node (`PLAN_ADVICE`).
    pub advice: Option<String>,
    pub parallelism: usize,
    pub role: Role,
    /// Nodes with equal identities are one node of the job.
    pub identity: String,
    pub inputs: Vec<ExplainNode>,
}

impl ExplainNode {
    fn new(name: &'static str, n: &PhysicalNode, identity: String) -> ExplainNode {
        ExplainNode {
            name,
            attrs: Vec::new(),
            lab: Vec::new(),
            changelog: Some(n.changelog),
            advice: None,
            parallelism: n.parallelism,
            role: Role::Operator,
            identity,
            inputs: Vec::new(),
        }
    }

    /// `Name(key=[value], ...)` in the execution plan's form.
    pub fn exec_line(&self) -> String {
        let attrs: Vec<String> = self
            .attrs
            .iter()
            .map(|a| format!("{}=[{}]", a.key, a.infix))
            .collect();
        format!("{}({})", self.name, attrs.join(", "))
    }

    /// The physical plan's line: Flink's attributes, then the lab's, then
    /// the changelog mode when asked for; `advice` first when it has some.
    pub fn physical_line(&self, changelog: bool, advice: Option<usize>) -> String {
        let mut attrs: Vec<String> = Vec::new();
        if let Some(a) = advice {
            attrs.push(format!("advice=[{a}]"));
        }
        attrs.extend(
            self.attrs
                .iter()
                .map(|a| format!("{}=[{}]", a.key, a.prefix)),
        );
        attrs.extend(self.lab.iter().map(|(k, v)| format!("{k}=[{v}]")));
        if changelog {
            attrs.push(match self.changelog {
                Some(m) => format!("changelogMode={m}"),
                None => "changelogMode=[NONE]".to_string(),
            });
        }
        format!("{}({})", self.name, attrs.join(", "))
    }
}

/// Turns physical plans into EXPLAIN nodes.
pub(crate) struct Builder<'a> {
    config: Option<&'a Config>,
    reuse: Option<Reuse>,
    /// Numbers identities that are shared with nothing.
    unique: usize,
}

/// Whether the node folds bundles (so its sources get a MiniBatchAssigner).
fn is_mini_batch(n: &PhysicalNode) -> bool {
    matches!(
        n.kind,
        NodeKind::GroupAggregate {
            mini_batch: Some(_),
            ..
        } | NodeKind::LocalGroupAggregate { .. }
            | NodeKind::Join {
                mini_batch: Some(_),
                ..
            }
    )
}

/// `[[default_catalog, default_database, t]]`'s table part.
pub(crate) fn qualified(table: &str) -> String {
    format!("default_catalog.default_database.{table}")
}

fn flink_type(t: DataType) -> &'static str {
    match t {
        DataType::Boolean => "BOOLEAN",
        DataType::Int => "INTEGER",
        DataType::BigInt => "BIGINT",
        DataType::Double => "DOUBLE",
        DataType::String => "VARCHAR(2147483647)",
    }
}

/// `select=[...]` items: each expression, `AS` its output name unless it
/// is the input column of that name.
fn select_items(exprs: &[Expr], input: &[String], output: &[String], style: Style) -> String {
    exprs
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let text = render(e, input, style);
            let out = name(output, i);
            match e {
                Expr::Column(c) if name(input, *c) == out => text,
                _ => format!("{text} AS {out}"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Replaces column `c` by `map[c]`.
fn remap(e: &Expr, map: &[usize]) -> Expr {
    e.map_columns(&|c| map[c])
}

/// A call's name as Flink prints it: `_RETRACT` when its input retracts.
fn func_name(a: &AggSpec, retract: bool) -> String {
    format!("{}{}", a.kind.name(), if retract { "_RETRACT" } else { "" })
}

/// `COUNT(DISTINCT x) FILTER f` without the `AS` part.
fn call_text(a: &AggSpec, args: &[String], retract: bool) -> String {
    let arg = match a.arg {
        None => "*".to_string(),
        Some(c) => format!(
            "{}{}",
            if a.distinct { "DISTINCT " } else { "" },
            name(args, c)
        ),
    };
    let filter = a
        .filter
        .map(|f| format!(" FILTER {}", name(args, f)))
        .unwrap_or_default();
    format!("{}({arg}){filter}", func_name(a, retract))
}

/// The accumulator names of a local aggregate's calls, as Flink names
/// them: `count1$0` for `COUNT(*)`, `sum$1`, `(sum$2, count$3)` for `AVG`.
fn partial_names(aggs: &[AggSpec]) -> Vec<String> {
    let mut slot = 0;
    let mut next = |what: &str| {
        let s = format!("{what}${slot}");
        slot += 1;
        s
    };
    aggs.iter()
        .map(|a| match a.kind {
            AggKind::CountStar => next("count1"),
            AggKind::Count => next("count"),
            AggKind::Sum => next("sum"),
            AggKind::Min => next("min"),
            AggKind::Max => next("max"),
            AggKind::Avg => {
                let s = next("sum");
                let c = next("count");
                format!("({s}, {c})")
            }
        })
        .collect()
}

fn partial_final(pf: &Option<PartialFinal>) -> Option<Attr> {
    pf.map(|p| {
        same(
            "partialFinalType",
            match p {
                PartialFinal::Partial => "PARTIAL",
                PartialFinal::Final => "FINAL",
            },
        )
    })
}

fn join_type(t: JoinType) -> &'static str {
    match t {
        JoinType::Inner => "InnerJoin",
        JoinType::Left => "LeftOuterJoin",
    }
}

/// `=(l, r)` per key pair and the residual, over the join's output names.
fn join_condition(
    out: &[String],
    left_width: usize,
    left_keys: &[usize],
    right_keys: &[usize],
    residual: Option<&Expr>,
    style: Style,
) -> String {
    let mut e: Option<Expr> = None;
    for (l, r) in left_keys.iter().zip(right_keys) {
        let eq = Expr::bin(
            operators::expr::BinOp::Eq,
            Expr::col(*l),
            Expr::col(left_width + r),
        );
        e = Some(match e {
            None => eq,
            Some(prev) => Expr::bin(operators::expr::BinOp::And, prev, eq),
        });
    }
    if let Some(r) = residual {
        e = Some(match e {
            None => r.clone(),
            Some(prev) => Expr::bin(operators::expr::BinOp::And, prev, r.clone()),
        });
    }
    e.map(|e| render(&e, out, style))
        .unwrap_or_else(|| "true".to_string())
}

impl<'a> Builder<'a> {
    /// A builder for a job run under `config`.
    pub fn new(config: &'a Config) -> Builder<'a> {
        Builder {
            config: Some(config),
            reuse: Some(Reuse::new(config)),
            unique: 0,
        }
    }

    /// A builder for one node's description (no job around it).
    pub fn plain() -> Builder<'a> {
        Builder {
            config: None,
            reuse: None,
            unique: 0,
        }
    }

    fn unique(&mut self) -> String {
        self.unique += 1;
        format!("#{}", self.unique)
    }

    fn identity(&mut self, n: &PhysicalNode) -> String {
        match self.reuse.and_then(|r| r.sub_plan_key(n)) {
            Some(k) => k,
            None => self.unique(),
        }
    }

    /// The sink of `plan` over its query.
    pub fn sink(&mut self, plan: &PhysicalPlan) -> ExplainNode {
        let root = &plan.root;
        let mut sink = ExplainNode::new("Sink", root, self.unique());
        sink.changelog = None;
        sink.role = Role::Sink(plan.sink.table.name.clone());
        sink.attrs
            .push(same("table", qualified(&plan.sink.table.name)));
        sink.attrs
            .push(same("fields", unique_names(&root.schema).join(", ")));
        // Flink folds the materializer into its sink node and says so there.
        if let NodeKind::SinkMaterializer { ttl, .. } = &root.kind {
            sink.attrs.push(same("upsertMaterialize", "true"));
            sink.lab.push(("stateTtl", ttl.describe()));
            sink.inputs.push(self.input(root, 0, false));
        } else {
            sink.inputs.push(self.node(root, false));
        }
        sink
    }

    /// A query without a sink (`EXPLAIN SELECT`).
    pub fn query(&mut self, root: &PhysicalNode) -> ExplainNode {
        self.node(root, false)
    }

    /// Input `i` of `parent`, under an `Exchange` when it is keyed.
    fn input(&mut self, parent: &PhysicalNode, i: usize, under_mini_batch: bool) -> ExplainNode {
        let child = &parent.inputs[i];
        let node = self.node(child, under_mini_batch || is_mini_batch(parent));
        let (dist, ship) = match parent.input_exchange(i) {
            Exchange::Single => ("single".to_string(), "GLOBAL"),
            Exchange::Hash(k) => (
                format!("hash[{}]", list(&unique_names(&child.schema), &k)),
                "HASH",
            ),
            // Flink prints neither: they are chained (or rebalanced).
            Exchange::Forward | Exchange::Rebalance => return node,
        };
        let mut x = ExplainNode::new("Exchange", child, format!("X|{dist}|{}", node.identity));
        x.attrs.push(same("distribution", dist));
        x.role = Role::Exchange(ship);
        x.parallelism = parent.parallelism;
        x.inputs.push(node);
        x
    }

    fn inputs(&mut self, n: &PhysicalNode, under_mini_batch: bool) -> Vec<ExplainNode> {
        (0..n.inputs.len())
            .map(|i| self.input(n, i, under_mini_batch))
            .collect()
    }

    /// The node (and its inputs).
    pub fn node(&mut self, n: &PhysicalNode, under_mini_batch: bool) -> ExplainNode {
        let mut e = match &n.kind {
            NodeKind::Source {
                table,
                predicate,
                projection,
            } => {
                return self.source(
                    n,
                    table,
                    predicate.as_ref(),
                    projection.as_deref(),
                    under_mini_batch,
                )
            }
            NodeKind::Calc {
                predicate,
                projection,
            } => self.calc(n, predicate.as_ref(), projection.as_deref()),
            NodeKind::GroupAggregate { .. } => self.group_aggregate(n),
            NodeKind::LocalGroupAggregate { .. } => self.local_aggregate(n),
            NodeKind::Expand { projections } => self.expand(n, projections),
            NodeKind::Join { .. } => self.join(n),
            NodeKind::DeltaJoin { .. } => self.delta_join(n),
            NodeKind::MultiJoin { .. } => self.multi_join(n),
            // Only ever the root, folded into the sink; alone (EXPLAIN of a
            // node) it shows as the operator the lab runs.
            NodeKind::SinkMaterializer { primary_key, ttl } => {
                let mut e = ExplainNode::new("SinkMaterializer", n, self.identity(n));
                e.attrs
                    .push(same("pk", list(&unique_names(&n.schema), primary_key)));
                e.lab.push(("stateTtl", ttl.describe()));
                e
            }
        };
        if matches!(n.kind, NodeKind::DeltaJoin { .. }) {
            // Its inputs are the tables it looks up, read by the join alone.
            let id = e.identity.clone();
            e.inputs = (0..n.inputs.len())
                .map(|i| {
                    let mut x = self.input(n, i, under_mini_batch);
                    mark_private(&mut x, &format!("{id}|input{i}"));
                    x
                })
                .collect();
        } else {
            e.inputs = self.inputs(n, under_mini_batch);
        }
        e
    }

    /// A table read: `Calc` over `[MiniBatchAssigner over] TableSourceScan`.
    fn source(
        &mut self,
        n: &PhysicalNode,
        table: &TableDef,
        predicate: Option<&Expr>,
        projection: Option<&[Expr]>,
        under_mini_batch: bool,
    ) -> ExplainNode {
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
        let scan_identity = match self.reuse.and_then(|r| r.scan_key(n)) {
            Some(k) => format!("SCAN|{k}"),
            None => self.unique(),
        };
        let mut scan = ExplainNode::new("TableSourceScan", n, scan_identity.clone());
        scan.role = Role::Source(table.name.clone());
        scan.parallelism = n.parallelism;
        scan.attrs
            .push(same("table", format!("[{}]", digest.join(", "))));
        scan.attrs.push(same("fields", read_names.join(", ")));
        let mut top = scan;
        if under_mini_batch {
            let interval = self
                .config
                .map(|c| c.mini_batch_allow_latency().as_millis())
                .unwrap_or(0);
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
        let predicate = predicate.map(|p| remap(p, &map));
        let projection: Vec<Expr> = match projection {
            Some(p) => p.iter().map(|e| remap(e, &map)).collect(),
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

    fn calc(
        &mut self,
        n: &PhysicalNode,
        predicate: Option<&Expr>,
        projection: Option<&[Expr]>,
    ) -> ExplainNode {
        let input = unique_names(&n.inputs[0].schema);
        let output = unique_names(&n.schema);
        let mut e = ExplainNode::new("Calc", n, self.identity(n));
        e.attrs.push(exprs("select", |s| match projection {
            Some(p) => select_items(p, &input, &output, s),
            None => input.join(", "),
        }));
        if let Some(p) = predicate {
            e.attrs.push(exprs("where", |s| render(p, &input, s)));
        }
        e
    }

    fn group_aggregate(&mut self, n: &PhysicalNode) -> ExplainNode {
        let NodeKind::GroupAggregate {
            group_by,
            aggs,
            input_insert_only,
            mini_batch,
            global,
            strategy,
            ttl,
            partial_final: pf,
            ..
        } = &n.kind
        else {
            unreachable!("a group aggregate")
        };
        let input = unique_names(&n.inputs[0].schema);
        let output = unique_names(&n.schema);
        let g = group_by.len();
        let retract = !input_insert_only;
        let calls: Vec<String> = if *global {
            // Arguments are the local aggregate's accumulators.
            partial_names(aggs)
                .iter()
                .zip(aggs)
                .enumerate()
                .map(|(i, (acc, a))| {
                    format!(
                        "{}({acc}) AS {}",
                        func_name(a, retract),
                        name(&output, g + i)
                    )
                })
                .collect()
        } else {
            aggs.iter()
                .enumerate()
                .map(|(i, a)| {
                    format!(
                        "{} AS {}",
                        call_text(a, &input, retract),
                        name(&output, g + i)
                    )
                })
                .collect()
        };
        let op = if *global {
            "GlobalGroupAggregate"
        } else {
            "GroupAggregate"
        };
        let mut e = ExplainNode::new(op, n, self.identity(n));
        let keys = list(&input, group_by);
        if g > 0 {
            e.attrs.push(same("groupBy", keys.clone()));
        }
        e.attrs.extend(partial_final(pf));
        let mut select: Vec<String> = (0..g).map(|i| name(&output, i)).collect();
        select.extend(calls);
        e.attrs.push(same("select", select.join(", ")));
        if let Some(size) = mini_batch {
            e.lab.push(("miniBatchSize", size.to_string()));
        }
        e.lab.push(("strategy", strategy.clone()));
        e.lab.push(("stateTtl", ttl.describe()));
        let mergeable = operators::agg::core::not_mergeable(aggs, *input_insert_only).is_none();
        if !*global && pf.is_none() && mergeable {
            e.advice = self.config.and_then(two_phase_advice);
        }
        e
    }

    fn local_aggregate(&mut self, n: &PhysicalNode) -> ExplainNode {
        let NodeKind::LocalGroupAggregate {
            group_by,
            aggs,
            bundle_size,
            partial_final: pf,
            ..
        } = &n.kind
        else {
            unreachable!("a local aggregate")
        };
        let input = unique_names(&n.inputs[0].schema);
        let retract = !n.inputs[0].is_insert_only();
        let mut select: Vec<String> = group_by.iter().map(|&c| name(&input, c)).collect();
        for (a, acc) in aggs.iter().zip(partial_names(aggs)) {
            select.push(format!("{} AS {acc}", call_text(a, &input, retract)));
        }
        if retract && !aggs.iter().any(|a| a.kind == AggKind::CountStar) {
            // Flink counts the records of each group to know when it empties.
            let slot: usize = aggs
                .iter()
                .map(|a| if a.kind == AggKind::Avg { 2 } else { 1 })
                .sum();
            select.push(format!("COUNT_RETRACT(*) AS count1${slot}"));
        }
        let mut e = ExplainNode::new("LocalGroupAggregate", n, self.identity(n));
        if !group_by.is_empty() {
            e.attrs.push(same("groupBy", list(&input, group_by)));
        }
        e.attrs.extend(partial_final(pf));
        e.attrs.push(same("select", select.join(", ")));
        e.lab.push(("miniBatchSize", bundle_size.to_string()));
        e
    }

    fn expand(&mut self, n: &PhysicalNode, projections: &[Vec<Expr>]) -> ExplainNode {
        let input = unique_names(&n.inputs[0].schema);
        let output = unique_names(&n.schema);
        let mut e = ExplainNode::new("Expand", n, self.identity(n));
        e.attrs.push(exprs("projects", |s| {
            projections
                .iter()
                .map(|p| format!("{{{}}}", select_items(p, &input, &output, s)))
                .collect::<Vec<_>>()
                .join(", ")
        }));
        e
    }

    fn join(&mut self, n: &PhysicalNode) -> ExplainNode {
        let NodeKind::Join {
            join_type: jt,
            left_keys,
            right_keys,
            residual,
            left_layout,
            right_layout,
            mini_batch,
            note,
            ttl,
        } = &n.kind
        else {
            unreachable!("a join")
        };
        let out = unique_names(&n.schema);
        let lw = n.inputs[0].schema.len();
        let mut e = ExplainNode::new("Join", n, self.identity(n));
        e.attrs.push(same("joinType", join_type(*jt)));
        e.attrs.push(exprs("where", |s| {
            join_condition(&out, lw, left_keys, right_keys, residual.as_ref(), s)
        }));
        e.attrs.push(same("select", out.join(", ")));
        e.attrs.push(same("leftInputSpec", left_layout.describe()));
        e.attrs
            .push(same("rightInputSpec", right_layout.describe()));
        if let Some(size) = mini_batch {
            e.attrs.push(same("miniBatch", "true"));
            e.lab.push(("miniBatchSize", size.to_string()));
        }
        e.lab.push((
            "stateTtl",
            format!("left={}, right={}", ttl[0].describe(), ttl[1].describe()),
        ));
        if let Some(note) = note {
            e.lab.push(("note", note.clone()));
        }
        e
    }

    fn delta_join(&mut self, n: &PhysicalNode) -> ExplainNode {
        let NodeKind::DeltaJoin {
            left_keys,
            right_keys,
            residual,
            cache_enabled,
            left_cache_size,
            right_cache_size,
        } = &n.kind
        else {
            unreachable!("a delta join")
        };
        let out = unique_names(&n.schema);
        let lw = n.inputs[0].schema.len();
        let mut e = ExplainNode::new("DeltaJoin", n, self.identity(n));
        e.attrs.push(same("joinType", "InnerJoin"));
        e.attrs.push(exprs("where", |s| {
            join_condition(&out, lw, left_keys, right_keys, residual.as_ref(), s)
        }));
        e.attrs.push(same("select", out.join(", ")));
        e.lab.push((
            "cache",
            if *cache_enabled {
                format!("left={left_cache_size}, right={right_cache_size}")
            } else {
                "off".to_string()
            },
        ));
        e
    }

    fn multi_join(&mut self, n: &PhysicalNode) -> ExplainNode {
        let NodeKind::MultiJoin {
            keys,
            join_types,
            conditions,
            layouts,
            reason,
            ttls,
        } = &n.kind
        else {
            unreachable!("a multi-join")
        };
        let out = unique_names(&n.schema);
        let types: Vec<&str> = join_types[1..]
            .iter()
            .map(|t| match t {
                JoinType::Inner => "INNER",
                JoinType::Left => "LEFT",
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
            .zip(layouts)
            .map(|(i, l)| match l {
                JoinStateLayout::HasUniqueKey(k) => {
                    format!("HasUniqueKey({})", list(&unique_names(&i.schema), k))
                }
                other => other.describe().to_string(),
            })
            .collect();
        let mut e = ExplainNode::new("MultiJoin", n, self.identity(n));
        e.attrs.push(same("commonJoinKey", list(&out, &keys[0])));
        e.attrs.push(same("joinTypes", types.join(", ")));
        e.attrs
            .push(same("inputUniqueKeys", unique_keys.join(", ")));
        e.attrs.push(exprs("joinConditions", |s| {
            conditions[1..]
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
        e.lab.push(("strategy", format!("MultiJoin: {reason}")));
        e.lab.push(("inputSpecs", specs.join(", ")));
        e.lab.push((
            "stateTtl",
            ttls.iter()
                .enumerate()
                .map(|(i, t)| format!("input{i}={}", t.describe()))
                .collect::<Vec<_>>()
                .join(", "),
        ));
        e
    }
}

/// Makes `node`'s subtree shared with nothing but copies of itself.
fn mark_private(node: &mut ExplainNode, prefix: &str) {
    node.identity = format!("{prefix}|{}", node.identity);
    for (i, c) in node.inputs.iter_mut().enumerate() {
        mark_private(c, &format!("{prefix}|{i}"));
    }
}

/// Flink's advice for a one-phase aggregate that could run in two phases
/// (its `GroupAggregationAnalyzer`): the settings that would allow it.
fn two_phase_advice(config: &Config) -> Option<String> {
    use crate::config::{
        AggPhaseStrategy, AGG_PHASE_STRATEGY, MINI_BATCH_ALLOW_LATENCY, MINI_BATCH_ENABLED,
        MINI_BATCH_SIZE,
    };
    let mut tuning: Vec<String> = Vec::new();
    if config.agg_phase_strategy() == AggPhaseStrategy::OnePhase {
        tuning.push(format!("'{AGG_PHASE_STRATEGY}' to 'AUTO'"));
    }
    if !config.mini_batch_enabled() {
        tuning.push(format!("'{MINI_BATCH_ENABLED}' to 'true'"));
    }
    if config.mini_batch_allow_latency().is_zero() {
        tuning.push(format!(
            "'{MINI_BATCH_ALLOW_LATENCY}' to a positive long value"
        ));
    }
    if config.mini_batch_size() <= 0 {
        tuning.push(format!("'{MINI_BATCH_SIZE}' to a positive long value"));
    }
    if tuning.is_empty() {
        return None;
    }
    Some(format!(
        "[ADVICE] You might want to enable local-global two-phase optimization by configuring ({}).",
        tuning.join(", ")
    ))
}

/// One line describing a node, as the execution plan prints it (also the
/// stage name in run summaries and the description in compiled plans).
pub fn describe(node: &PhysicalNode) -> String {
    let mut b = Builder::plain();
    let e = b.node(node, false);
    match &node.kind {
        // A read: the scan, and the Calc applied as it reads.
        NodeKind::Source { .. } => {
            let mut lines = Vec::new();
            let mut cur = Some(&e);
            while let Some(n) = cur {
                lines.push(n.exec_line());
                cur = n.inputs.first();
            }
            lines.reverse();
            lines.join(" -> ")
        }
        _ => e.exec_line(),
    }
}
