//! Operators: rows and the changelog, state backends, every join and
//! aggregate operator, and the parallel executor.

pub mod changelog;
pub mod expr;
pub mod value;

pub use changelog::{Change, ChangelogMode, RowKind};
pub use value::{DataType, Row, Value};
pub mod agg;
pub mod alloc;
pub mod calc;
pub mod checkpoint;
pub mod debris;
pub mod exec;
pub mod expand;
pub mod join;
pub mod lookup;
pub mod operator;
pub mod rank;
pub mod sink;
pub mod sink_materializer;
pub mod state;
pub mod string_fns;
pub mod window;
