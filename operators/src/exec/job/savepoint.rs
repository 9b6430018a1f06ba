//! Savepoints: a checkpoint taken on request (after a number of input
//! rows, then stopping or going on) into a self-contained directory, and
//! restored into a job that may have changed, as Flink's
//! `StateAssignmentOperation` assigns a savepoint's state: by operator uid
//! and state name.
//!
//! Restoring a savepoint:
//! - an operator of the job whose uid the savepoint holds gets its state,
//!   each entry routed to the subtask that will receive its key (so the
//!   job may run at another parallelism), provided the state's layout is
//!   the one recorded (Flink refuses a state whose serializer is
//!   incompatible); an operator the savepoint does not hold starts empty;
//! - state of an operator (or a source position, or a sink's result) the
//!   job no longer has is refused, naming it, unless the run allows
//!   non-restored state, which drops it and reports what it dropped;
//! - sources are matched by name and resume at their positions; a new
//!   source starts from its beginning. Watermarks are not part of a
//!   savepoint (Flink's are not either): the sources emit them anew;
//! - a sink of the same table and row type takes back its result and its
//!   committed output files; another sink starts empty.

use super::checkpointing::{mismatch, PER_SOURCE};
use super::Job;
use crate::checkpoint::{store, Checkpoint, CheckpointError};
use crate::operator::{OpError, OpResult};
use std::path::PathBuf;
use std::time::Instant;

/// Which savepoint a run takes.
#[derive(Clone, Debug)]
pub struct SavepointConfig {
    /// Where its directory goes.
    pub dir: PathBuf,
    /// Taken at the first barrier after this many input rows (at the end
    /// of the input if it has fewer).
    pub after_rows: u64,
    /// Whether the run stops once it is taken (`flink stop`).
    pub stop: bool,
}

/// What a savepoint restore gave back to the caller.
#[derive(Clone, Debug, Default)]
pub struct SavepointRestore {
    /// Per sink of the job: the committed lengths of its output files, or
    /// `None` when the sink starts afresh.
    pub committed: Vec<Option<Vec<u64>>>,
    /// What was dropped (with non-restored state allowed).
    pub dropped: Vec<String>,
}

fn entries(image: &crate::checkpoint::OperatorImage) -> usize {
    image.states.values().map(|s| s.entries.len()).sum()
}

impl Job {
    /// Takes the savepoint `config` asks for during the next run.
    pub fn take_savepoint(&mut self, config: SavepointConfig) {
        self.savepoint = Some(config);
    }

    /// Writes the savepoint asked for, once.
    pub(super) fn write_savepoint(
        &mut self,
        id: u64,
        positions: &[u64],
        input_rows: u64,
        emitted: &[(Option<i64>, u64)],
        done: &[bool],
    ) -> OpResult<()> {
        let Some(config) = self.savepoint.take() else {
            return Ok(());
        };
        let t = Instant::now();
        let c = self.snapshot(id, positions, input_rows, emitted, done, false)?;
        let (path, _bytes) = store::write_savepoint(&config.dir, input_rows, &c)?;
        self.checkpoint_counts.time += t.elapsed();
        self.savepoint_taken = Some(path);
        Ok(())
    }

    /// Restores savepoint `c` (read from `shown`) into this freshly built
    /// job, which may differ from the one that took it (see the module
    /// documentation). Refused, naming what, for state the job cannot
    /// take: an operator whose state layout changed, or state the job no
    /// longer has unless `allow_non_restored`.
    pub fn restore_savepoint(
        &mut self,
        c: Checkpoint,
        shown: &str,
        allow_non_restored: bool,
    ) -> OpResult<SavepointRestore> {
        if c.source_names.len() != c.sources.len()
            || c.runtime.len() < 1 + PER_SOURCE * c.sources.len()
        {
            return Err(OpError::Checkpoint(CheckpointError::Corrupt {
                path: shown.to_string(),
                reason: "its source positions do not read".into(),
            }));
        }
        let mut dropped = Vec::new();
        let mut changed = Vec::new();
        // Operators, by uid.
        let mut restore = Vec::new();
        for (uid, image) in &c.operators {
            match self
                .stages
                .iter()
                .position(|s| s.uid.as_deref() == Some(uid.as_str()))
            {
                None => dropped.push(format!(
                    "operator '{uid}': state {} ({} entries)",
                    image.states.keys().cloned().collect::<Vec<_>>().join(", "),
                    entries(image)
                )),
                Some(s) if self.stages[s].schema != image.schema => changed.push(format!(
                    "operator '{uid}' changed its state layout: the savepoint holds `{}`, \
                     this job has `{}`",
                    image.schema, self.stages[s].schema
                )),
                Some(s) => restore.push((s, image)),
            }
        }
        if !changed.is_empty() {
            return Err(mismatch(shown, changed.join("; ")));
        }
        // Sources, by name.
        let mut resume = Checkpoint {
            id: c.id,
            ..Checkpoint::default()
        };
        resume.runtime.push(0);
        for name in &self.source_names {
            let at = c.source_names.iter().position(|n| n == name);
            let read = at.map_or(0, |i| c.sources[i]);
            resume.sources.push(read);
            resume.source_names.push(name.clone());
            // Not done, no watermark emitted: the source reads on from
            // its position and emits its watermarks anew.
            resume.runtime.extend([0; PER_SOURCE]);
            resume.runtime[0] += read as i64;
        }
        for (name, &read) in c.source_names.iter().zip(&c.sources) {
            if read > 0 && !self.source_names.contains(name) {
                dropped.push(format!("source '{name}': {read} row(s) read"));
            }
        }
        // Sinks, by position, if their table and row type are the same.
        let mut committed = Vec::new();
        for (k, sink) in self.sinks.iter_mut().enumerate() {
            match c.sinks.get(k) {
                Some(image) if image.schema == sink.schema => {
                    sink.collector.restore(image);
                    committed.push(Some(image.committed.clone()));
                }
                _ => committed.push(None),
            }
        }
        for (k, image) in c.sinks.iter().enumerate() {
            let kept = self.sinks.get(k).is_some_and(|s| s.schema == image.schema);
            if !kept && !image.rows.is_empty() {
                dropped.push(format!(
                    "sink '{}': {} result row(s)",
                    image.schema,
                    image.rows.len()
                ));
            }
        }
        if !dropped.is_empty() && !allow_non_restored {
            return Err(mismatch(
                shown,
                format!(
                    "it holds state this job does not have: {}; run with \
                     --allow-non-restored-state to drop it",
                    dropped.join("; ")
                ),
            ));
        }
        for (s, image) in restore {
            let image = image.clone();
            self.restore_stage(s, &image)?;
        }
        self.resume = Some(resume);
        self.non_restored.clone_from(&dropped);
        Ok(SavepointRestore { committed, dropped })
    }
}
