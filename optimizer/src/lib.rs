//! The optimizer: SQL front end, logical plan, configuration, hints, rules
//! that choose physical operators, EXPLAIN, and the batch oracle.

pub mod catalog_view;
pub mod config;
pub mod error;
pub mod logical;
pub mod logical_rewrite;
pub mod lookup_options;
pub mod oracle;
pub mod physical;
pub mod session;
pub mod sql;
