//! How plans print what they hold: expressions in Flink's two forms and
//! column names made unique as Calcite makes them. Shared by the node
//! descriptions ([`super::node`]), EXPLAIN and error messages.

pub mod expr;
pub mod names;

pub use expr::{render, Style};
pub use names::{field_names, list, name, unique_names, uniquify};
