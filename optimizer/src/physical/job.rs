//! Instantiates physical plans as an executable [`Job`]: one plan per
//! INSERT, one sink each; the plans of a statement set share what
//! [`Reuse`] says they share (a table scanned by several of them is read
//! once, an identical sub-plan runs once).

use super::explain::describe;
use super::node::build::{JobContext, Out};
use super::node::source::Source;
use super::plan::{PhysicalNode, PhysicalPlan};
use super::reuse::Reuse;
use crate::config::ClockKind;
use crate::error::{PlanError, Result};
use crate::logical::TableDef;
use operators::exec::job::JobOptions;
use operators::exec::{ChangeSource, Exchange, Job, JobBuilder, StageId, Target};
use operators::lookup::IndexLookupStore;
use operators::operator::{Emission, Operator};
use operators::sink::SinkCollector;
use operators::state::StateBackend;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
/// options, which describe the table in the index-lookup store, and the
/// `lookup.*` options of a lookup join's cache (`lookup_options.rs`).
pub fn connector_options(table: &TableDef) -> std::collections::BTreeMap<String, String> {
    let mut options = table.options.clone();
    options.retain(|k, _| !k.starts_with("index.") && !crate::lookup_options::is_lookup_option(k));
    options
}

/// The file a `filesystem` sink table writes (its `path`, as written).
pub fn sink_file(table: &TableDef) -> Option<PathBuf> {
    match datasets::validate_sink_options(&table.name, &table.options) {
        Ok(datasets::SinkKind::Filesystem { path }) => Some(path),
        _ => None,
    }
}

/// Where a job runs: what reads its tables and keeps its state. (What it
/// runs with is in its plans: [`super::plan::JobSettings`].)
pub struct Runtime<'a> {
    pub sources: &'a dyn SourceProvider,
    pub backend: &'a StateBackend,
    /// Where the index-lookup store of delta joins lives (`None`: the
    /// system temp dir).
    pub state_dir: Option<&'a Path>,
}

/// What the sinks of a job keep of the rows they receive.
#[derive(Clone, Copy, Debug, Default)]
pub struct SinkKeeps {
    /// Every change, in memory.
    pub changelog: bool,
    /// The materialised result.
    pub result: bool,
    /// Every change, streamed to a writer set after the job is built.
    pub changelog_written: bool,
}

/// Builds one job for `plans`, sink `k` for `plans[k]`, with the settings
/// they were planned with (the plans of one job share them); `keeps` says
/// what their sinks keep (a sink that keeps nothing but kinds lets its
/// plan's root emit kinds only). Also returns, per plan, the stage of each of its
/// `root.stage_nodes()` (shared stages appear under every plan that uses
/// them).
pub fn build_job(
    plans: &[PhysicalPlan],
    runtime: &Runtime,
    keeps: SinkKeeps,
) -> Result<(Job, Vec<Vec<StageId>>)> {
    let SinkKeeps {
        changelog: keep_changelog,
        result: materialize,
        changelog_written,
    } = keeps;
    let Some(settings) = plans.first().map(|p| &p.settings) else {
        return Err(PlanError::plan("a job runs at least one plan"));
    };
    if plans.iter().any(|p| p.settings != *settings) {
        return Err(PlanError::plan(
            "the plans of one job must be planned with the same settings",
        ));
    }
    let reuse = Reuse::new(settings);
    let split_reads = split_reads(plans, &reuse);
    let mut graph = JobGraph {
        b: JobBuilder::new(),
        sources: runtime.sources,
        backend: runtime.backend,
        state_dir: runtime.state_dir.map(Path::to_path_buf),
        counter: 0,
        store: None,
        reuse,
        shared: HashMap::new(),
        split_reads,
        reads: HashMap::new(),
        source_names: HashMap::new(),
        stages: Vec::new(),
        kinds_only_root: None,
    };
    let shared_roots = shared_roots(plans, &graph.reuse);
    let mut stages = Vec::new();
    for (k, plan) in plans.iter().enumerate() {
        graph.stages.clear();
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
        // The root feeds this sink alone (not a sub-plan another plan
        // reads) and the sink keeps nothing but kinds: no changelog, no
        // result, no printing, no file (whose writer is set later), no
        // changelog written as it arrives (its writer too).
        let counts_only = !keep_changelog
            && !changelog_written
            && !materialize
            && print.is_none()
            && sink_file(&plan.sink.table).is_none();
        graph.kinds_only_root =
            (counts_only && !shared_roots[k]).then_some(&plan.root as *const PhysicalNode);
        let out = graph.add_node(&plan.root)?;
        graph.kinds_only_root = None;
        // (A filesystem sink's writer is set by whoever resolves its path.)
        let sink = SinkCollector::new(
            plan.sink.encoding.clone(),
            keep_changelog,
            materialize,
            print,
        );
        let id = graph.b.add_sink(plan.sink.table.name.clone(), sink);
        graph.connect(out, Target::Sink(id), Exchange::Single);
        stages.push(std::mem::take(&mut graph.stages));
    }
    let options = JobOptions {
        batch_size: settings.source_batch_size,
        bundle_latency: settings.bundle_latency(),
        backend: runtime.backend.clone(),
        deterministic_clock: settings.clock == ClockKind::Deterministic,
        watermark_interval_ms: settings.watermark_interval.as_millis() as u64,
        source_idle_timeout_ms: settings.source_idle_timeout.as_millis() as u64,
        breadth_first: settings.breadth_first_delivery,
    };
    Ok((graph.b.build(options).map_err(PlanError::plan)?, stages))
}

/// Per plan: whether its root is a sub-plan that also occurs elsewhere
/// in the job (its stage is shared, so it feeds more than this sink).
fn shared_roots(plans: &[PhysicalPlan], reuse: &Reuse) -> Vec<bool> {
    fn walk(n: &PhysicalNode, reuse: &Reuse, seen: &mut HashMap<String, usize>) {
        if let Some(k) = reuse.sub_plan_key(n) {
            *seen.entry(k).or_default() += 1;
        }
        n.inputs.iter().for_each(|c| walk(c, reuse, seen));
    }
    let mut seen = HashMap::new();
    plans.iter().for_each(|p| walk(&p.root, reuse, &mut seen));
    plans
        .iter()
        .map(|p| reuse.sub_plan_key(&p.root).is_some_and(|k| seen[&k] > 1))
        .collect()
}

/// The reads scanned by differing sources (another filter or projection):
/// read once, raw, each source's Calc a stage of its own. A read all of
/// whose scans are alike keeps its Calc in the read.
fn split_reads(plans: &[PhysicalPlan], reuse: &Reuse) -> HashSet<String> {
    fn walk(n: &PhysicalNode, reuse: &Reuse, seen: &mut HashMap<String, HashSet<String>>) {
        if n.kind.is::<Source>() {
            if let Some(k) = reuse.scan_key(n) {
                seen.entry(k).or_default().insert(format!("{:?}", n.kind));
            }
        } else if !n.spec().reads_own_inputs() {
            n.inputs.iter().for_each(|c| walk(c, reuse, seen));
        }
    }
    let mut seen = HashMap::new();
    plans.iter().for_each(|p| walk(&p.root, reuse, &mut seen));
    seen.into_iter()
        .filter(|(_, kinds)| kinds.len() > 1)
        .map(|(k, _)| k)
        .collect()
}

/// The job under construction: the graph, what is shared, and the stages
/// of the plan being added. Each node adds itself
/// ([`super::node::NodeSpec::build`]) through the [`JobContext`] below.
struct JobGraph<'a> {
    b: JobBuilder,
    sources: &'a dyn SourceProvider,
    backend: &'a StateBackend,
    /// Where the index-lookup store lives (`None`: the system temp dir).
    state_dir: Option<PathBuf>,
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
    /// Reads added per table, to name each source.
    source_names: HashMap<String, usize>,
    /// The stages of the plan being added, in `stage_nodes()` order.
    stages: Vec<StageId>,
    /// The root of the plan being added when its output goes only to a
    /// sink that counts kinds (compared by address: that node, no other).
    kinds_only_root: Option<*const PhysicalNode>,
}

impl JobGraph<'_> {
    /// Adds a source named after its table (`t`, then `t#2` for a second
    /// read of it): what a savepoint matches sources by.
    fn add_named_source(&mut self, table: &str, source: Box<dyn ChangeSource>) -> usize {
        let s = self.b.add_source(source);
        let n = self.source_names.entry(table.to_string()).or_insert(0);
        *n += 1;
        let name = match *n {
            1 => table.to_string(),
            n => format!("{table}#{n}"),
        };
        self.b.name_source(s, name);
        s
    }

    fn connect(&mut self, from: Out, target: Target, exchange: Exchange) {
        match from {
            Out::Source(s) => self.b.connect_source(s, target, exchange),
            Out::Stage(s) => self.b.connect_stage(s, target, exchange),
        }
    }

    /// Adds `node`'s sub-plan (or finds the identical one already added),
    /// appending its stages in `stage_nodes()` order.
    fn add_node(&mut self, node: &PhysicalNode) -> Result<Out> {
        let Some(key) = self.reuse.sub_plan_key(node) else {
            return self.add_new_node(node);
        };
        if let Some((out, own)) = self.shared.get(&key) {
            self.stages.extend(own);
            return Ok(*out);
        }
        let from = self.stages.len();
        let out = self.add_new_node(node)?;
        self.shared.insert(key, (out, self.stages[from..].to_vec()));
        Ok(out)
    }

    fn add_new_node(&mut self, node: &PhysicalNode) -> Result<Out> {
        self.counter += 1;
        let id = self.counter;
        node.spec().build(node, id, self)
    }
}

impl JobContext for JobGraph<'_> {
    fn input(&mut self, node: &PhysicalNode, i: usize) -> Result<Out> {
        self.add_node(&node.inputs[i])
    }

    fn backend(&self) -> &StateBackend {
        self.backend
    }

    fn open(&self, table: &TableDef) -> Result<Box<dyn ChangeSource>> {
        let src = self.sources.open(&table.physical())?;
        Ok(super::node::source::with_time_attributes(
            src,
            table,
            self.backend.clock(),
        ))
    }

    fn add_source(&mut self, table: &str, source: Box<dyn ChangeSource>) -> Out {
        Out::Source(self.add_named_source(table, source))
    }

    fn shared_read(&mut self, node: &PhysicalNode) -> Result<Option<Out>> {
        let (Some(key), Some(source)) = (self.reuse.scan_key(node), node.kind.get::<Source>())
        else {
            return Ok(None);
        };
        if !self.split_reads.contains(&key) {
            return Ok(None);
        }
        let read = match self.reads.get(&key) {
            Some(&s) => s,
            None => {
                let s = self.add_named_source(&source.table.name, self.open(&source.table)?);
                self.reads.insert(key, s);
                s
            }
        };
        Ok(Some(Out::Source(read)))
    }

    fn add_read_calc(&mut self, node: &PhysicalNode, calc: Box<dyn Operator>, read: Out) -> Out {
        let name = describe(node);
        let name = name.rsplit(" -> ").next().unwrap_or(&name).to_string();
        let s = self.b.add_stage(name, vec![calc]);
        self.connect(read, Target::Stage(s, 0), Exchange::Forward);
        Out::Stage(s)
    }

    fn add_stage(
        &mut self,
        node: &PhysicalNode,
        subtasks: Vec<Box<dyn Operator>>,
        inputs: Vec<Out>,
    ) -> Out {
        let s = self.b.add_stage(describe(node), subtasks);
        self.b.set_emission(s, self.emission(node));
        self.stages.push(s);
        for (i, up) in inputs.into_iter().enumerate() {
            self.connect(up, Target::Stage(s, i), node.input_exchange(i));
        }
        Out::Stage(s)
    }

    fn emission(&self, node: &PhysicalNode) -> Emission {
        match self.kinds_only_root {
            Some(root) if std::ptr::eq(root, node) => Emission::KindsOnly,
            _ => Emission::Rows,
        }
    }

    fn lookup_store(&mut self) -> Result<Arc<IndexLookupStore>> {
        if let Some(s) = &self.store {
            return Ok(s.clone());
        }
        let s = Arc::new(
            IndexLookupStore::open(self.state_dir.as_deref())
                .map_err(|e| PlanError::execution(e.to_string()))?,
        );
        self.store = Some(s.clone());
        Ok(s)
    }
}
