//! Instantiates a physical plan as an executable [`Job`].

use super::explain::describe;
use super::plan::{NodeKind, PhysicalNode, PhysicalPlan};
use super::rules::delta_join;
use crate::config::{ClockKind, Config, StateBackendKind};
use crate::error::{PlanError, Result};
use crate::logical::TableDef;
use operators::agg::{GroupAggregateOperator, LocalAggregateOperator};
use operators::calc::CalcOperator;
use operators::changelog::Change;
use operators::exec::job::JobOptions;
use operators::exec::{ChangeSource, Exchange, Job, JobBuilder, Target};
use operators::expand::ExpandOperator;
use operators::join::{
    DeltaJoinOperator, DeltaJoinOptions, DeltaJoinSpec, JoinSpec, MiniBatchJoinOperator,
    MultiJoinOperator, MultiJoinSpec, RegularJoinOperator,
};
use operators::lookup::{IndexLookupStore, StoreWritingSource};
use operators::operator::{OpResult, Operator};
use operators::sink::SinkCollector;
use operators::sink_materializer::SinkUpsertMaterializer;
use operators::state::{BackendKind, StateBackend, StateResult};
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

impl SourceProvider for ConnectorSources {
    fn open(&self, table: &TableDef) -> Result<Box<dyn ChangeSource>> {
        let names = table.schema.names();
        let types = table.schema.types();
        let options = connector_options(table);
        datasets::open_source(&table.name, &options, &names, &types, &self.base_dir)
            .map_err(|e| PlanError::validation(e.to_string()))
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
}

/// The file a `filesystem` sink table writes (its `path`, as written).
pub fn sink_file(table: &TableDef) -> Option<PathBuf> {
    match datasets::validate_sink_options(&table.name, &table.options) {
        Ok(datasets::SinkKind::Filesystem { path }) => Some(path),
        _ => None,
    }
}

pub fn backend_for(config: &Config) -> StateResult<StateBackend> {
    let kind = match config.state_backend() {
        StateBackendKind::HashMap => BackendKind::Heap,
        StateBackendKind::RocksDb => BackendKind::RocksDb,
    };
    StateBackend::new(kind, config.state_dir().as_deref())
}

/// Builds the job. `keep_changelog` keeps every sink row in memory;
/// `materialize` makes the sink keep the result table.
pub fn build_job(
    plan: &PhysicalPlan,
    config: &Config,
    sources: &dyn SourceProvider,
    backend: &StateBackend,
    keep_changelog: bool,
    materialize: bool,
) -> Result<Job> {
    let mut b = JobBuilder::new();
    let mut ctx = BuildContext {
        sources,
        backend,
        config,
        counter: 0,
        store: None,
    };
    let out = add_node(&plan.root, &mut ctx, &mut b)?;
    connect(&mut b, out, Target::Sink, Exchange::Single);
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
    let bundle_latency = (config.mini_batch_enabled() && config.clock() == ClockKind::Processing)
        .then(|| config.mini_batch_allow_latency());
    let options = JobOptions {
        batch_size: config.source_batch_size(),
        bundle_latency,
        backend: backend.clone(),
        deterministic_clock: config.clock() == ClockKind::Deterministic,
    };
    b.build(sink, options).map_err(PlanError::plan)
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
    mut make: impl FnMut() -> operators::operator::OpResult<Box<dyn Operator>>,
) -> Result<Out> {
    let up = add_node(&node.inputs[0], ctx, b)?;
    let subtasks = (0..node.parallelism)
        .map(|_| make())
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| PlanError::plan(e.to_string()))?;
    let s = b.add_stage(describe(node), subtasks);
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
}

fn add_node(node: &PhysicalNode, ctx: &mut BuildContext<'_>, b: &mut JobBuilder) -> Result<Out> {
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
        } => one_input_stage(node, ctx, b, || {
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
            one_input_stage(node, ctx, b, || {
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
            one_input_stage(node, ctx, b, || {
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
        } => one_input_stage(node, ctx, b, || {
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
                ups.push(add_node(child, ctx, b)?);
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
            connect(b, ups[0], Target::Stage(s, 0), node.input_exchange(0));
            connect(b, ups[1], Target::Stage(s, 1), node.input_exchange(1));
            Ok(Out::Stage(s))
        }
        NodeKind::Expand { projections } => one_input_stage(node, ctx, b, || {
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
            let l = add_node(&node.inputs[0], ctx, b)?;
            let r = add_node(&node.inputs[1], ctx, b)?;
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
            connect(b, l, Target::Stage(s, 0), node.input_exchange(0));
            connect(b, r, Target::Stage(s, 1), node.input_exchange(1));
            Ok(Out::Stage(s))
        }
    }
}
