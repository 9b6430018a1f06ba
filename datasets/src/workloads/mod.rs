//! Seeded workload connectors for the lab's example queries.
//!
//! Semantics. Each connector generates a bounded, deterministic stream with
//! the shape one of Flink's tuning examples needs, usable from SQL as
//! `CREATE TABLE ... WITH ('connector' = '<name>', ...)`:
//!
//! | connector | columns | changelog | shape |
//! |---|---|---|---|
//! | [`uv`] | `day INT, user_id BIGINT, flag STRING` | insert-only | split distinct: one hot day, Zipf users |
//! | [`colors`] | `color STRING, id BIGINT` | insert-only | local-global: one hot colour |
//! | [`tenant`] | `tenant_id BIGINT, row_id BIGINT, payload STRING [, c1..cK BIGINT]` | `+I`, then `-U`/`+U` updates when `update-ratio > 0` | one input of the N-way MultiJoin benchmark, keyed by `(tenant_id, row_id)` |
//! | [`nexmark`] | Nexmark's `person`, `auction` or `bid` (`'nexmark.table'`) | insert-only | the Nexmark benchmark's events, as its reference generator makes them |
//! | [`orders`] | `order_id BIGINT, customer_id BIGINT, amount BIGINT` | insert-only | order lines whose orders stay open for a while (state TTL) |
//!
//! Every connector checks its options (an unknown key lists the allowed
//! ones; a bad value says what was expected) and the declared columns,
//! which must match the produced ones by position, name and type (the error
//! lists the expected schema). The same options give the same rows on every
//! run and platform: each connector draws from [`crate::LabRng`] streams
//! under its `seed` (default 0) and uses fixed sampling formulas
//! (`draw.rs`), never `rand`'s version-dependent range helpers.

mod draw;
mod options;

pub mod colors;
pub mod nexmark;
pub mod orders;
pub mod tenant;
pub mod uv;

use std::collections::BTreeMap;

use operators::{ChangelogMode, DataType};

pub use colors::ColorsSource;
pub use nexmark::NexmarkSource;
pub use orders::OrdersSource;
pub use tenant::TenantSource;
pub use uv::UvSource;

use crate::error::DatasetError;
use operators::exec::ChangeSource;

/// The workload connectors' names.
pub const CONNECTORS: [&str; 5] = [
    colors::CONNECTOR,
    nexmark::CONNECTOR,
    orders::CONNECTOR,
    tenant::CONNECTOR,
    uv::CONNECTOR,
];

/// Opens a workload source, or `None` when `connector` is not a workload
/// connector. Errors carry no table name; [`crate::open_source`] adds it.
pub fn open(
    connector: &str,
    options: &BTreeMap<String, String>,
    column_names: &[String],
    types: &[DataType],
) -> Option<Result<Box<dyn ChangeSource>, DatasetError>> {
    fn boxed<S: ChangeSource + 'static>(
        s: Result<S, DatasetError>,
    ) -> Result<Box<dyn ChangeSource>, DatasetError> {
        s.map(|s| Box::new(s) as Box<dyn ChangeSource>)
    }
    Some(match connector {
        uv::CONNECTOR => boxed(UvSource::new(options, column_names, types)),
        colors::CONNECTOR => boxed(ColorsSource::new(options, column_names, types)),
        tenant::CONNECTOR => boxed(TenantSource::new(options, column_names, types)),
        orders::CONNECTOR => boxed(OrdersSource::new(options, column_names, types)),
        nexmark::CONNECTOR => boxed(NexmarkSource::new(options, column_names, types)),
        _ => return None,
    })
}

/// The row kinds a workload connector may emit with these options, or
/// `None` when `connector` is not a workload connector: `[I,UB,UA]` for a
/// `tenant` table with updates, insert-only otherwise. Options that do not
/// parse count as their defaults (opening the source reports them).
pub fn changelog_mode(
    connector: &str,
    options: &BTreeMap<String, String>,
) -> Option<ChangelogMode> {
    if !CONNECTORS.contains(&connector) {
        return None;
    }
    let with_updates = connector == tenant::CONNECTOR
        && options
            .get("update-ratio")
            .and_then(|r| r.trim().parse::<f64>().ok())
            .is_some_and(|r| r > 0.0);
    Some(if with_updates {
        ChangelogMode {
            insert: true,
            update_before: true,
            update_after: true,
            delete: false,
        }
    } else {
        ChangelogMode::INSERT_ONLY
    })
}
