//! Instantiates physical plans as an executable [`Job`]: one plan per
//! INSERT, one sink each; the plans of a statement set share what
//! [`Reuse`] says they share (a table scanned by several of them is read
//! once, an identical sub-plan runs once).

use super::explain::describe;
use super::plan::{NodeKind, PhysicalNode, PhysicalPlan};
use super::reuse::Reuse;
use super::rules::delta_join;
use crate::config::{ClockKind, Config, StateBackendKind};
use crate::error::{PlanError, Result};
use crate::logical::TableDef;
use operators::agg::{GroupAggregateOperator, LocalAggregateOperator};
use operators::calc::CalcOperator;
use operators::changelog::Change;
use operators::exec::job::JobOptions;
use operators::exec::{ChangeSource, Exchange, Job, JobBuilder, StageId, Target};
use operators::expand::ExpandOperator;
use operators::join::{
    DeltaJoinOperator, DeltaJoinOptions, DeltaJoinSpec, JoinSpec, MiniBatchJoinOperator,
    MultiJoinOperator, MultiJoinSpec, RegularJoinOperator,
};
use operators::lookup::{IndexLookupStore, StoreWritingSource};
use operators::operator::Operator;
use operators::sink::SinkCollector;
use operators::sink_materializer::SinkUpsertMaterializer;
use operators::state::{BackendKind, StateBackend};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Opens the reader of a table.
pub trait SourceProvider {
    fn open(&self, table: &TableDef) -> Result<Box<dyn ChangeSource>>;
}

/// Opens tables through their connectors (`datasets`); relative paths
/// resolve against `base_dir` (the script's folder).
pub struct ConnectorSources {
    pub base_dir: PathBuf,
}

struct DatasetSource(Box<dyn datasets::Source>);

impl ChangeSource for DatasetSource {
    fn next_batch(
        &mut self,
        max: usize,
        out: &mut Vec<Change>,
    ) -> std::result::Result<usize, String> {
        self.0.next_batch(max, out).map_err(|e| e.to_string())
    }

    fn can_read_ahead(&self) -> bool {
        // Files and generators: their rows depend on nothing the job does.
        true
    }
}

impl SourceProvider for ConnectorSources {
    fn open(&self, table: &TableDef) -> Result<Box<dyn ChangeSource>> {
        let names = table.schema.names();
        let types = table.schema.types();
        let options = connector_options(table);
        let src = datasets::open_source(&table.name, &options, &names, &types, &self.base_dir)
            .map_err(|e| PlanError::validation(e.to_string()))?;
        Ok(Box::new(DatasetSource(src)))
    }
}

/// The options a table's connector reads: all but the lab's own `index.*`
/// options, which describe the table in the index-lookup store.
pub fn connector_options(table: &TableDef) -> std::collections::BTreeMap<String, String> {
    let mut options = table.options.clone();
    options.retain(|k, _| !k.starts_with("index."));
    options
}

/// A source with a fused Calc applied as it reads.
struct CalcSource {
    inner: Box<dyn ChangeSource>,
    calc: CalcOperator,
    buf: Vec<Change>,
}

impl ChangeSource for CalcSource {
    fn next_batch(
        &mut self,
        max: usize,
        out: &mut Vec<Change>,
    ) -> std::result::Result<usize, String> {
        // Returns the rows read (not kept), so a filtered-out batch is not end of input.
        self.buf.clear();
        let n = self.inner.next_batch(max, &mut self.buf)?;
        let batch = std::mem::take(&mut self.buf);
        self.calc
            .process(0, batch, out)
            .map_err(|e| e.to_string())?;
        Ok(n)
    }

    fn can_read_ahead(&self) -> bool {
        // A Calc is a pure function of its row.
        self.inner.can_read_ahead()
    }
}

/// The file a `filesystem` sink table writes (its `path`, as written).
pub fn sink_file(table: &TableDef) -> Option<PathBuf> {
    match datasets::validate_sink_options(&table.name, &table.options) {
        Ok(datasets::SinkKind::Filesystem { path }) => Some(path),
        _ => None,
    }
}

pub fn backend_for(config: &Config) -> Result<StateBackend> {
    let kind = match config.state_backend() {
        StateBackendKind::HashMap => BackendKind::Heap,
        StateBackendKind::RocksDb => BackendKind::RocksDb,
    };
    StateBackend::new(kind, config.state_dir().as_deref())
        .map_err(|e| PlanError::plan(e.to_string()))
}

/// Builds one job for `plans`, sink `k` for `plans[k]`. `keep_changelog`
/// keeps every sink row in memory; `materialize` makes the sinks keep the
/// result table. Also returns, per plan, the stage of each of its
/// `root.stage_nodes()` (shared stages appear under every plan that uses
/// them).
pub fn build_job(
    plans: &[PhysicalPlan],
    config: &Config,
    sources: &dyn SourceProvider,
    backend: &StateBackend,
    keep_changelog: bool,
    materialize: bool,
) -> Result<(Job, Vec<Vec<StageId>>)> {
    let mut b = JobBuilder::new();
    let reuse = Reuse::new(config);
    let mut ctx = BuildContext {
        sources,
        backend,
        config,
        counter: 0,
        store: None,
        reuse,
        shared: HashMap::new(),
        split_reads: split_reads(plans, &reuse),
        reads: HashMap::new(),
    };
    let mut stages = Vec::new();
    for plan in plans {
        let mut own = Vec::new();
        let out = add_node(&plan.root, &mut ctx, &mut b, &mut own)?;
        let print = match plan.sink.table.options.get("connector").map(String::as_str) {
            Some("print") => Some(
                plan.sink
                    .table
                    .options
                    .get("print-identifier")
                    .map(|p| format!("{p}> "))
                    .unwrap_or_default(),
            ),
            _ => None,
        };
        // (A filesystem sink's writer is set by whoever resolves its path.)
        let sink = SinkCollector::new(
            plan.sink.encoding.clone(),
            keep_changelog,
            materialize,
            print,
        );
        let id = b.add_sink(plan.sink.table.name.clone(), sink);
        connect(&mut b, out, Target::Sink(id), Exchange::Single);
        stages.push(own);
    }
    let bundle_latency = (config.mini_batch_enabled() && config.clock() == ClockKind::Processing)
        .then(|| config.mini_batch_allow_latency());
    let options = JobOptions {
        batch_size: config.source_batch_size(),
        bundle_latency,
        backend: backend.clone(),
        deterministic_clock: config.clock() == ClockKind::Deterministic,
    };
    Ok((b.build(options).map_err(PlanError::plan)?, stages))
}

/// The reads scanned by differing sources (another filter or projection):
/// read once, raw, each source's Calc a stage of its own. A read all of
/// whose scans are alike keeps its Calc in the read.
fn split_reads(plans: &[PhysicalPlan], reuse: &Reuse) -> HashSet<String> {
    fn walk(n: &PhysicalNode, reuse: &Reuse, seen: &mut HashMap<String, HashSet<String>>) {
        match &n.kind {
            NodeKind::Source { .. } => {
                if let Some(k) = reuse.scan_key(n) {
                    seen.entry(k).or_default().insert(format!("{:?}", n.kind));
                }
            }
            // Its inputs are read by the join alone.
            NodeKind::DeltaJoin { .. } => {}
            _ => n.inputs.iter().for_each(|c| walk(c, reuse, seen)),
        }
    }
    let mut seen = HashMap::new();
    plans.iter().for_each(|p| walk(&p.root, reuse, &mut seen));
    seen.into_iter()
        .filter(|(_, kinds)| kinds.len() > 1)
        .map(|(k, _)| k)
        .collect()
}

#[derive(Clone, Copy)]
enum Out {
    Source(usize),
    Stage(usize),
}

fn connect(b: &mut JobBuilder, from: Out, target: Target, exchange: Exchange) {
    match from {
        Out::Source(s) => b.connect_source(s, target, exchange),
        Out::Stage(s) => b.connect_stage(s, target, exchange),
    }
}

/// Adds `node` as a stage of `node.parallelism` subtasks made by `make`,
/// fed by its one input.
fn one_input_stage(
    node: &PhysicalNode,
    ctx: &mut BuildContext<'_>,
    b: &mut JobBuilder,
    stages: &mut Vec<StageId>,
    mut make: impl FnMut() -> operators::operator::OpResult<Box<dyn Operator>>,
) -> Result<Out> {
    let up = add_node(&node.inputs[0], ctx, b, stages)?;
    let subtasks = (0..node.parallelism)
        .map(|_| make())
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| PlanError::plan(e.to_string()))?;
    let s = b.add_stage(describe(node), subtasks);
    stages.push(s);
    connect(b, up, Target::Stage(s, 0), node.input_exchange(0));
    Ok(Out::Stage(s))
}

/// What building a job needs besides the builder.
struct BuildContext<'a> {
    sources: &'a dyn SourceProvider,
    backend: &'a StateBackend,
    config: &'a Config,
    /// Node ids, for state scopes.
    counter: usize,
    /// The index-lookup store, created for the first delta join.
    store: Option<Arc<IndexLookupStore>>,
    reuse: Reuse,
    /// Sub-plans built so far: their output and stages, by reuse key.
    shared: HashMap<String, (Out, Vec<StageId>)>,
    /// Reads whose sources differ (see [`split_reads`]), and the source
    /// each was given.
    split_reads: HashSet<String>,
    reads: HashMap<String, usize>,
}

/// Adds `node`'s sub-plan (or finds the identical one already added),
/// appending its stages to `stages` in `stage_nodes()` order.
fn add_node(
    node: &PhysicalNode,
    ctx: &mut BuildContext<'_>,
    b: &mut JobBuilder,
    stages: &mut Vec<StageId>,
) -> Result<Out> {
    let Some(key) = ctx.reuse.sub_plan_key(node) else {
        return add_new_node(node, ctx, b, stages);
    };
    if let Some((out, own)) = ctx.shared.get(&key) {
        stages.extend(own);
        return Ok(*out);
    }
    let from = stages.len();
    let out = add_new_node(node, ctx, b, stages)?;
    ctx.shared.insert(key, (out, stages[from..].to_vec()));
    Ok(out)
}

/// A read shared with sources that filter or project differently: the
/// raw read, and this source's Calc as a stage over it.
fn split_read(
    node: &PhysicalNode,
    key: String,
    ctx: &mut BuildContext<'_>,
    b: &mut JobBuilder,
) -> Result<Out> {
    let NodeKind::Source {
        table,
        predicate,
        projection,
    } = &node.kind
    else {
        unreachable!("a source")
    };
    let source = match ctx.reads.get(&key) {
        Some(&s) => s,
        None => {
            let s = b.add_source(ctx.sources.open(table)?);
            ctx.reads.insert(key, s);
            s
        }
    };
    if predicate.is_none() && projection.is_none() {
        return Ok(Out::Source(source));
    }
    let calc = CalcOperator::new(predicate.clone(), projection.clone());
    let name = describe(node);
    let name = name.rsplit(" -> ").next().unwrap_or(&name).to_string();
    let s = b.add_stage(name, vec![Box::new(calc) as Box<dyn Operator>]);
    connect(
        b,
        Out::Source(source),
        Target::Stage(s, 0),
        Exchange::Forward,
    );
    Ok(Out::Stage(s))
}

fn add_new_node(
    node: &PhysicalNode,
    ctx: &mut BuildContext<'_>,
    b: &mut JobBuilder,
    stages: &mut Vec<StageId>,
) -> Result<Out> {
    ctx.counter += 1;
    let id = ctx.counter;
    let backend = ctx.backend;
    let err = |e: operators::operator::OpError| PlanError::plan(e.to_string());
    match &node.kind {
        NodeKind::Source {
            table,
            predicate,
            projection,
        } => {
            if let Some(key) = ctx.reuse.scan_key(node) {
                if ctx.split_reads.contains(&key) {
                    return split_read(node, key, ctx, b);
                }
            }
            let mut src = ctx.sources.open(table)?;
            if predicate.is_some() || projection.is_some() {
                src = Box::new(CalcSource {
                    inner: src,
                    calc: CalcOperator::new(predicate.clone(), projection.clone()),
                    buf: Vec::new(),
                });
            }
            Ok(Out::Source(b.add_source(src)))
        }
        NodeKind::Calc {
            predicate,
            projection,
        } => one_input_stage(node, ctx, b, stages, || {
            Ok(Box::new(CalcOperator::new(
                predicate.clone(),
                projection.clone(),
            )))
        }),
        NodeKind::GroupAggregate {
            group_by,
            aggs,
            generate_update_before,
            input_insert_only,
            mini_batch,
            global,
            ttl,
            ..
        } => {
            let scope = format!("{id}-GroupAggregate");
            backend.set_ttl(&scope, "*", Duration::from_millis(ttl.ms));
            one_input_stage(node, ctx, b, stages, || {
                let o = GroupAggregateOperator::new(
                    backend,
                    &scope,
                    group_by.clone(),
                    aggs.clone(),
                    *input_insert_only,
                    *generate_update_before,
                )?;
                let o = match mini_batch {
                    Some(size) => o.with_mini_batch(*size),
                    None => o,
                };
                let o = if *global { o.with_partial_input() } else { o };
                Ok(Box::new(o))
            })
        }
        NodeKind::SinkMaterializer { primary_key, ttl } => {
            let scope = format!("{id}-SinkMaterializer");
            backend.set_ttl(&scope, "*", Duration::from_millis(ttl.ms));
            one_input_stage(node, ctx, b, stages, || {
                let arity = node.schema.len();
                let o = SinkUpsertMaterializer::new(backend, &scope, primary_key.clone(), arity)?;
                Ok(Box::new(o))
            })
        }
        NodeKind::LocalGroupAggregate {
            group_by,
            aggs,
            bundle_size,
            ..
        } => one_input_stage(node, ctx, b, stages, || {
            let o = LocalAggregateOperator::new(group_by.clone(), aggs.clone(), *bundle_size)?;
            Ok(Box::new(o))
        }),
        NodeKind::MultiJoin {
            keys,
            join_types,
            conditions,
            layouts,
            ttls,
            ..
        } => {
            let mut ups = Vec::new();
            for child in &node.inputs {
                ups.push(add_node(child, ctx, b, stages)?);
            }
            let spec = MultiJoinSpec {
                arities: node.inputs.iter().map(|c| c.schema.len()).collect(),
                keys: keys.clone(),
                join_types: join_types.clone(),
                conditions: conditions.clone(),
                layouts: layouts.clone(),
            };
            let scope = format!("{id}-MultiJoin");
            for (i, t) in ttls.iter().enumerate() {
                backend.set_ttl(&scope, &format!("input{i}"), Duration::from_millis(t.ms));
            }
            let subtasks = (0..node.parallelism)
                .map(|_| {
                    MultiJoinOperator::new(backend, &scope, spec.clone())
                        .map(|o| Box::new(o) as Box<dyn Operator>)
                })
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(err)?;
            let s = b.add_stage(describe(node), subtasks);
            stages.push(s);
            for (i, up) in ups.into_iter().enumerate() {
                connect(b, up, Target::Stage(s, i), node.input_exchange(i));
            }
            Ok(Out::Stage(s))
        }
        NodeKind::DeltaJoin {
            left_keys,
            right_keys,
            residual,
            cache_enabled,
            left_cache_size,
            right_cache_size,
        } => {
            let store = match &ctx.store {
                Some(s) => s.clone(),
                None => {
                    let s = Arc::new(
                        IndexLookupStore::open(ctx.config.state_dir().as_deref())
                            .map_err(|e| PlanError::plan(e.to_string()))?,
                    );
                    ctx.store = Some(s.clone());
                    s
                }
            };
            let mut tables = Vec::new();
            let mut ups = Vec::new();
            for child in &node.inputs {
                let NodeKind::Source { table, .. } = &child.kind else {
                    return Err(PlanError::plan("a delta join input must be a table scan"));
                };
                let index = delta_join::index_key(child).ok_or_else(|| {
                    PlanError::plan(format!("table '{}' has no index key", table.name))
                })?;
                let id = store
                    .create_table(
                        &table.name,
                        table.schema.len(),
                        index,
                        table.primary_key.clone(),
                    )
                    .map_err(|e| PlanError::plan(e.to_string()))?;
                // The source writes what it reads into the store, one batch
                // ahead of the join, as a Fluss table is written ahead of
                // the job that reads its changelog.
                let src = StoreWritingSource::new(ctx.sources.open(table)?, store.clone(), id)
                    .with_read_ahead(ctx.config.delta_join_read_ahead());
                ups.push(Out::Source(b.add_source(Box::new(src))));
                tables.push(id);
            }
            let spec = DeltaJoinSpec {
                left_table: tables[0],
                right_table: tables[1],
                left_keys: left_keys.clone(),
                right_keys: right_keys.clone(),
                residual: residual.clone(),
            };
            let options = DeltaJoinOptions {
                cache_enabled: *cache_enabled,
                left_cache_size: *left_cache_size,
                right_cache_size: *right_cache_size,
                count_duplicates: true,
            };
            let subtasks = (0..node.parallelism)
                .map(|_| {
                    DeltaJoinOperator::new(store.clone(), spec.clone(), options.clone())
                        .map(|o| Box::new(o) as Box<dyn Operator>)
                })
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(err)?;
            let s = b.add_stage(describe(node), subtasks);
            stages.push(s);
            connect(b, ups[0], Target::Stage(s, 0), node.input_exchange(0));
            connect(b, ups[1], Target::Stage(s, 1), node.input_exchange(1));
            Ok(Out::Stage(s))
        }
        NodeKind::Expand { projections } => one_input_stage(node, ctx, b, stages, || {
            Ok(Box::new(ExpandOperator::new(projections.clone())))
        }),
        NodeKind::Join {
            join_type,
            left_keys,
            right_keys,
            residual,
            left_layout,
            right_layout,
            mini_batch,
            ttl,
            ..
        } => {
            let l = add_node(&node.inputs[0], ctx, b, stages)?;
            let r = add_node(&node.inputs[1], ctx, b, stages)?;
            let spec = JoinSpec {
                join_type: *join_type,
                left_keys: left_keys.clone(),
                right_keys: right_keys.clone(),
                left_arity: node.inputs[0].schema.len(),
                right_arity: node.inputs[1].schema.len(),
                residual: residual.clone(),
                left_layout: left_layout.clone(),
                right_layout: right_layout.clone(),
            };
            let scope = format!("{id}-Join");
            backend.set_ttl(&scope, "left", Duration::from_millis(ttl[0].ms));
            backend.set_ttl(&scope, "right", Duration::from_millis(ttl[1].ms));
            let subtasks = (0..node.parallelism)
                .map(|_| match mini_batch {
                    Some(size) => MiniBatchJoinOperator::new(backend, &scope, spec.clone(), *size)
                        .map(|o| Box::new(o) as Box<dyn Operator>),
                    None => RegularJoinOperator::new(backend, &scope, spec.clone())
                        .map(|o| Box::new(o) as Box<dyn Operator>),
                })
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(err)?;
            let s = b.add_stage(describe(node), subtasks);
            stages.push(s);
            connect(b, l, Target::Stage(s, 0), node.input_exchange(0));
            connect(b, r, Target::Stage(s, 1), node.input_exchange(1));
            Ok(Out::Stage(s))
        }
    }
}
