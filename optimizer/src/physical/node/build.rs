//! What a node's builder may ask of the job builder around it.
//!
//! Each kind of node instantiates its own operators
//! ([`super::NodeSpec::build`], as RisingWave's `from_proto` builders do):
//! it asks the [`JobContext`] for its inputs (built first, or shared with an
//! identical sub-plan), the state backend and the table readers, and adds
//! one stage of `parallelism` operators fed through its exchanges. The job
//! builder (`physical/job.rs`) implements the context: it owns the job
//! graph, sharing and the index-lookup store.

use super::PhysicalNode;
use crate::error::{PlanError, Result};
use crate::logical::TableDef;
use operators::exec::ChangeSource;
use operators::lookup::IndexLookupStore;
use operators::operator::{Emission, OpError, OpResult, Operator};
use operators::state::StateBackend;
use std::sync::Arc;

/// Where a built node's output comes from: a table read or a stage.
#[derive(Clone, Copy, Debug)]
pub enum Out {
    Source(usize),
    Stage(usize),
}

pub trait JobContext {
    /// Builds input `i` of `node` (or finds the identical sub-plan built
    /// already) and returns its output.
    fn input(&mut self, node: &PhysicalNode, i: usize) -> Result<Out>;

    /// The backend the operators keep their state in.
    fn backend(&self) -> &StateBackend;

    /// A reader of the table.
    fn open(&self, table: &TableDef) -> Result<Box<dyn ChangeSource>>;

    /// Adds a read of table `table` to the job.
    fn add_source(&mut self, table: &str, source: Box<dyn ChangeSource>) -> Out;

    /// The whole-row read of `node`'s table when the job shares it with
    /// scans that filter or project otherwise (each applies its own Calc
    /// over it); `None` when the scan reads on its own.
    fn shared_read(&mut self, node: &PhysicalNode) -> Result<Option<Out>>;

    /// Adds the Calc a scan applies over a shared read (a stage that is
    /// not one of the plan's nodes).
    fn add_read_calc(&mut self, node: &PhysicalNode, calc: Box<dyn Operator>, read: Out) -> Out;

    /// Adds `node`'s stage of `subtasks`, input `i` fed by `inputs[i]`
    /// through `node.input_exchange(i)`.
    fn add_stage(
        &mut self,
        node: &PhysicalNode,
        subtasks: Vec<Box<dyn Operator>>,
        inputs: Vec<Out>,
    ) -> Out;

    /// The job's index-lookup store (opened for the first delta join).
    fn lookup_store(&mut self) -> Result<Arc<IndexLookupStore>>;

    /// How `node`'s operators are to emit: [`Emission::KindsOnly`] when
    /// their output goes only to a sink that counts kinds (the job builder
    /// knows the sinks; the executor checks the choice). An operator that
    /// cannot emit kinds only builds rows anyway, which is always correct.
    fn emission(&self, node: &PhysicalNode) -> Emission;
}

/// The error of an operator that could not be created.
pub fn operator_error(e: OpError) -> PlanError {
    PlanError::plan(e.to_string())
}

/// Builds `node`'s inputs, then its stage of `node.parallelism` operators
/// made by `make`: what every node that runs one operator per subtask does.
pub fn operator_stage(
    node: &PhysicalNode,
    ctx: &mut dyn JobContext,
    mut make: impl FnMut() -> OpResult<Box<dyn Operator>>,
) -> Result<Out> {
    let inputs = (0..node.inputs.len())
        .map(|i| ctx.input(node, i))
        .collect::<Result<Vec<_>>>()?;
    let subtasks = (0..node.parallelism)
        .map(|_| make())
        .collect::<OpResult<Vec<_>>>()
        .map_err(operator_error)?;
    Ok(ctx.add_stage(node, subtasks, inputs))
}
