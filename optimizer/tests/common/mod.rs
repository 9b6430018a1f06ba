//! Helpers shared by the optimizer's integration tests: in-memory sources
//! and running a script against them.
#![allow(dead_code)]

pub mod checkpoint_jobs;
pub mod events;
pub mod queries;

use operators::changelog::Change;
use operators::exec::ChangeSource;
use optimizer::error::PlanError;
use optimizer::logical::TableDef;
use optimizer::physical::job::SourceProvider;
use optimizer::session::{run_parsed, InsertOutcome, RunError, RunOptions};
use optimizer::sql::{parse_script, Script};
use std::collections::HashMap;
use std::path::Path;

/// Tables by name, each an input changelog.
#[derive(Default, Clone, Debug)]
pub struct MemSources(pub HashMap<String, Vec<Change>>);

impl SourceProvider for MemSources {
    fn open(&self, table: &TableDef) -> Result<Box<dyn ChangeSource>, PlanError> {
        let changes = self
            .0
            .get(&table.name)
            .cloned()
            .ok_or_else(|| PlanError::validation(format!("no test data for {}", table.name)))?;
        // Read ahead, as the connectors are: tests run that path.
        Ok(Box::new(datasets::VecSource::new(changes)))
    }
}

pub fn run_mem(
    sql: &str,
    sources: &MemSources,
    overrides: &[(&str, String)],
    options: RunOptions,
) -> Result<(Script, Vec<InsertOutcome>), RunError> {
    let script = parse_script(sql)?;
    let mut overrides: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    // RocksDB syncs files when it opens and closes; tests open hundreds of
    // small databases, so keep them in memory where the machine allows.
    if Path::new("/dev/shm").is_dir() && !overrides.iter().any(|(k, _)| k == "lab.state.dir") {
        overrides.insert(0, ("lab.state.dir".to_string(), "/dev/shm".to_string()));
    }
    let out = run_parsed(
        &script,
        &script.catalog,
        sources,
        Path::new("."),
        &overrides,
        options,
        &mut |_, _| {},
    )?;
    Ok((script, out))
}
