//! `lab`'s exit codes, in one place (README "Bad input" says the same).
//!
//! - 0: done.
//! - 1: `lab compare` ran both engines and their results differ.
//! - 2: bad input: SQL, configuration, files, CSV rows, campaign specs,
//!   compiled plans, a statement Flink rejects; nothing was run, or the
//!   run stopped at the bad row.
//! - 3: execution failed: IO, a full disk, RocksDB, a write to standard
//!   output, a Flink cluster that does not answer or a Flink job that fails.

/// `lab compare`: the engines' results differ.
pub const RESULTS_DIFFER: u8 = 1;
/// What the user gave is wrong; the message says what and where.
pub const BAD_INPUT: u8 = 2;
/// The input was fine but running or writing failed.
pub const EXECUTION_FAILED: u8 = 3;
