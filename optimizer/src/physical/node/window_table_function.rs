//! `WindowTableFunction`: a window TVF whose rows are not aggregated: each
//! row goes out once per window its time falls in, with `window_start`,
//! `window_end` and `window_time` appended (`operators/src/window/tvf.rs`).

use super::build::{operator_stage, JobContext, Out};
use super::check::{self, Check};
use super::explain::{same, ExplainContext, ExplainNode};
use super::PhysicalNode;
use crate::error::Result;
use crate::physical::display::{name, unique_names};
use operators::changelog::ChangelogMode;
use operators::value::DataType;
use operators::window::{WindowSpec, WindowTableFunctionOperator};

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct WindowTableFunction {
    pub window: WindowSpec,
    pub time_col: usize,
}

impl WindowTableFunction {
    pub const TYPE_NAMES: &'static [&'static str] = &["stream-exec-window-table-function_1"];
}

impl super::NodeSpec for WindowTableFunction {
    fn label(&self) -> String {
        "WindowTableFunction".into()
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

    fn require_update_before(&mut self, _inputs: &[PhysicalNode], needed: bool) -> Option<bool> {
        Some(needed)
    }

    fn explain(&self, n: &PhysicalNode, ctx: &mut dyn ExplainContext) -> ExplainNode {
        let input = unique_names(&n.inputs[0].schema);
        let mut e = ExplainNode::new("WindowTableFunction", n, ctx.identity(n));
        e.attrs.push(same(
            "window",
            self.window
                .explain(&format!("time_col=[{}]", name(&input, self.time_col))),
        ));
        e
    }

    fn validate(&self, node: &PhysicalNode) -> Check {
        let mut types = node.inputs[0].schema.types();
        check::column(
            &check::field(node, "time_col"),
            self.time_col,
            types.len(),
            "the input",
        )?;
        let t = types[self.time_col];
        if !t.is_timestamp() {
            return Err(check::invalid(
                check::field(node, "time_col"),
                format!("the time column is {t}, not a timestamp"),
            ));
        }
        types.extend([DataType::Timestamp, DataType::Timestamp, t]);
        check::schema_types(&node.schema, &types, "the window table function")
    }

    fn build(&self, node: &PhysicalNode, _id: usize, ctx: &mut dyn JobContext) -> Result<Out> {
        operator_stage(node, ctx, || {
            Ok(Box::new(WindowTableFunctionOperator::new(
                self.time_col,
                self.window,
            )))
        })
    }
}
