//! A window TVF without an aggregate over it (Flink's
//! `WindowTableFunction`): each insert goes out once per window its time
//! falls in, with `window_start`, `window_end` and `window_time` (the end
//! - 1 ms) appended. Stateless; it drops nothing.

use super::assigner::WindowSpec;
use crate::changelog::Change;
use crate::operator::{OpResult, Operator};
use crate::value::Value;

pub struct WindowTableFunctionOperator {
    time_col: usize,
    window: WindowSpec,
}

impl WindowTableFunctionOperator {
    pub fn new(time_col: usize, window: WindowSpec) -> WindowTableFunctionOperator {
        WindowTableFunctionOperator { time_col, window }
    }
}

impl Operator for WindowTableFunctionOperator {
    fn process(
        &mut self,
        _input: usize,
        batch: Vec<Change>,
        out: &mut Vec<Change>,
    ) -> OpResult<()> {
        for change in batch {
            let Some(t) = change.row[self.time_col].as_ts() else {
                continue;
            };
            for (start, end) in self.window.windows_of(t) {
                let mut row = change.row.clone();
                row.extend([Value::Ts(start), Value::Ts(end), Value::Ts(end - 1)]);
                out.push(Change::new(change.kind, row));
            }
        }
        Ok(())
    }
}
