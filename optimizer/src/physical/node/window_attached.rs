//! The windows of a window-attached aggregate (Flink's
//! `WindowAttachedWindowingStrategy`): an aggregate over a window
//! aggregate's `window_start` and `window_end`, whose windows are its
//! input's own (`window_aggregate.rs`, `local_window_aggregate.rs`).

use crate::physical::display::name;

/// The input's window columns of a window-attached aggregate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AttachedWindow {
    /// The `window_start` column (`None` in the global half, whose partials
    /// carry the window end only).
    pub window_start: Option<usize>,
}

impl AttachedWindow {
    /// Flink's window description: `win_start=[s], win_end=[e]`, or
    /// `win_end=[$window_end]` in the global half.
    pub fn explain(&self, input: &[String], time_col: usize) -> String {
        match self.window_start {
            Some(s) => format!(
                "win_start=[{}], win_end=[{}]",
                name(input, s),
                name(input, time_col)
            ),
            None => "win_end=[$window_end]".to_string(),
        }
    }
}
