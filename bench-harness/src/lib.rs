//! The library behind `lab` (see `main.rs`): campaigns, charts, the Flink
//! engine and the output helpers, usable in-process (the fuzz harness in
//! `fuzz/` drives campaign specs and `lab plot` through it).

pub mod campaign;
pub mod exit_code;
pub mod files;
pub mod flink;
pub mod numbers;
pub mod output;
pub mod plot;
pub mod stats;
pub mod summary;
pub mod template;
