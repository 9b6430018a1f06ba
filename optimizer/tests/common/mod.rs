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

/// Runs `sql` over `sources` with `overrides` ([`run_mem`], every change
/// kept) and evaluates each INSERT's query with the batch oracle over the
/// sources' final tables: the outcomes and, per INSERT, the oracle's rows
/// sorted.
pub fn run_mem_with_oracle(
    sql: &str,
    sources: &MemSources,
    overrides: &[(&str, String)],
) -> Result<(Vec<InsertOutcome>, Vec<Vec<operators::value::Row>>), String> {
    use optimizer::logical::Statement;
    let (script, outcomes) =
        run_mem(sql, sources, overrides, RunOptions::keep_all()).map_err(|e| e.to_string())?;
    let tables: HashMap<String, Vec<operators::value::Row>> = sources
        .0
        .iter()
        .map(|(k, v)| (k.clone(), optimizer::oracle::final_table(v)))
        .collect();
    let expected = script
        .statements
        .iter()
        .filter_map(|s| match s {
            Statement::Insert(i) => {
                let mut rows = optimizer::oracle::evaluate(&i.query, &|t: &str| {
                    tables.get(t).cloned().unwrap_or_default()
                });
                rows.sort_by(|x, y| operators::value::cmp_rows(x, y));
                Some(rows)
            }
            _ => None,
        })
        .collect();
    Ok((outcomes, expected))
}

/// `sql` over `sources` in source batches of `batch`, with and without
/// asynchronous state (`table.exec.async-state.enabled`), on both backends
/// at parallelism 1 and 4: each sink holds the oracle's rows and the two
/// changelogs are identical (same changes, same order).
pub fn async_state_is_exact(
    sql: &str,
    sources: &MemSources,
    batch: usize,
) -> Result<(), proptest::test_runner::TestCaseError> {
    use proptest::prop_assert_eq;
    use proptest::test_runner::TestCaseError;
    let run =
        |o: &[(&str, String)]| run_mem_with_oracle(sql, sources, o).map_err(TestCaseError::fail);
    for backend in ["hashmap", "rocksdb"] {
        for p in [1usize, 4] {
            let base = vec![
                ("state.backend.type", backend.to_string()),
                ("parallelism.default", p.to_string()),
                ("lab.source.batch-size", batch.to_string()),
            ];
            let mut with_async = base.clone();
            with_async.push(("table.exec.async-state.enabled", "true".to_string()));
            let (one, expected) = run(&base)?;
            let (batched, _) = run(&with_async)?;
            prop_assert_eq!(one.len(), batched.len());
            for ((o, a), want) in one.iter().zip(&batched).zip(&expected) {
                prop_assert_eq!(
                    a.sink_report().result.as_ref().unwrap(),
                    want,
                    "{} differs from the oracle ({}, p {}, batch {})",
                    a.sink,
                    backend,
                    p,
                    batch
                );
                prop_assert_eq!(
                    &a.changelog,
                    &o.changelog,
                    "{}: async state changed the changelog ({}, p {}, batch {})",
                    a.sink,
                    backend,
                    p,
                    batch
                );
            }
        }
    }
    Ok(())
}
