//! Seeded workload generators and CSV read/write for the lab's connectors.
//!
//! Semantics: a table's `WITH` options choose where its rows come from or go
//! to, with Flink's connector and option names. [`open_source`] turns a
//! source table's options into a source (the executor's
//! `operators::exec::ChangeSource`) that yields changelog rows in batches: the `filesystem` connector reads CSV ([`CsvSource`]; plain `csv`
//! rows are all `+I`, `changelog-csv` carries the row kind in its first
//! field) and the `datagen` connector generates a bounded, seeded, optionally
//! Zipf-skewed stream ([`DatagenSource`]); the workload connectors `uv`,
//! `colors`, `tenant`, `orders` and `nexmark` ([`workloads`]) generate the seeded,
//! skewed inputs of Flink's tuning examples. [`validate_sink_options`]
//! checks a sink table's options. [`ChangelogCsvWriter`] and [`ResultCsvWriter`] write
//! changelogs and results atomically (a file at the target path is always
//! complete).
//!
//! Everything is deterministic: the same options and seed give the same rows
//! on every run and platform ([`rng::LabRng`] fixes the algorithm).
//! Bad input of any kind is a [`DatasetError`] that names the file, line and
//! column, or the table and option, and what was expected; never a panic.
//! A source's error reaches the executor whole, as bad input or, for IO, a
//! failure to read (`operators::operator::SourceError`).

pub mod csv_read;
pub mod csv_write;
pub mod datagen;
pub mod error;
pub mod rng;
pub mod source;
pub mod workloads;
pub mod zipf;

pub use csv_read::{read_all, CsvOptions, CsvSource};
pub use csv_write::{
    write_changelog_csv, write_result_csv, ChangelogCsvWriter, OutputMode, ResultCsvWriter,
};
pub use datagen::DatagenSource;
pub use error::DatasetError;
pub use rng::LabRng;
pub use source::{
    open_source, resolve_path, source_changelog_mode, validate_sink_options, SinkKind, VecSource,
};
pub use workloads::{ColorsSource, NexmarkSource, OrdersSource, TenantSource, UvSource};
pub use zipf::Zipf;
