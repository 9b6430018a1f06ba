//! Checkpoint barriers and resuming from a checkpoint.
//!
//! The executor is batch-synchronous, so a barrier needs no alignment: it
//! is taken between two rounds of source batches, when every record read
//! so far has gone through the whole graph. At the barrier the executor
//! closes every bundle (as Flink flushes a mini-batch at a barrier), asks
//! each subtask for its state ([`Operator::snapshot_state`]), each sink
//! for its result and committed output lengths, and writes them with the
//! rows read per source and its own clock and watermarks. Resuming does
//! the reverse before the first batch: each subtask takes back the keys
//! it owns (routed as its input exchange routes them), and each source
//! skips the batches it had delivered (their batches are the same on every
//! run, so it lands exactly on the checkpoint's position).

use super::{Feed, Job, SourceBatch, Target};
use crate::checkpoint::{native, Checkpoint, CheckpointError, CheckpointStore, OperatorImage};
use crate::exec::Exchange;
use crate::expr::stable_hash;
use crate::operator::{OpError, OpResult};
use crate::value::Value;
use std::time::Instant;

/// Where checkpoints go and how often one is taken.
#[derive(Clone, Debug)]
pub struct CheckpointConfig {
    pub store: CheckpointStore,
    /// A checkpoint at the first barrier after this many more input rows
    /// (`execution.checkpointing.interval` on the deterministic clock).
    pub every_rows: u64,
    /// `execution.checkpointing.incremental`: on RocksDB, keep its own
    /// files and share unchanged ones ([`crate::checkpoint::native`]);
    /// the heap backend takes full checkpoints, as Flink's does.
    pub incremental: bool,
}

/// Per source in [`Checkpoint::runtime`]: done, has emitted, watermark, at.
pub(super) const PER_SOURCE: usize = 4;

pub(super) fn mismatch(path: &str, reason: String) -> OpError {
    OpError::Checkpoint(CheckpointError::Mismatch {
        path: path.to_string(),
        reason,
    })
}

impl Job {
    /// Takes a checkpoint every `config.every_rows` input rows.
    pub fn enable_checkpoints(&mut self, config: CheckpointConfig) {
        self.checkpointing = Some(config);
    }

    /// Restores checkpoint `c` (read from `shown`) into this freshly built
    /// job: operator state now, source positions when the run starts.
    /// Refused, with the reason, for a checkpoint of another job.
    pub fn restore(&mut self, c: Checkpoint, shown: &str) -> OpResult<()> {
        if c.sources.len() != self.sources.len() || c.sinks.len() != self.sinks.len() {
            return Err(mismatch(
                shown,
                format!(
                    "it has {} source(s) and {} sink(s), the job {} and {}",
                    c.sources.len(),
                    c.sinks.len(),
                    self.sources.len(),
                    self.sinks.len()
                ),
            ));
        }
        let expected = 1
            + PER_SOURCE * c.sources.len()
            + self
                .stages
                .iter()
                .map(|s| 1 + s.input_watermarks.len())
                .sum::<usize>();
        if c.runtime.len() != expected {
            return Err(mismatch(shown, "its operator graph differs".into()));
        }
        for uid in c.operators.keys() {
            if !self.stages.iter().any(|s| s.uid.as_deref() == Some(uid)) {
                return Err(mismatch(
                    shown,
                    format!("it holds state of operator '{uid}', which this job does not have"),
                ));
            }
        }
        for s in 0..self.stages.len() {
            let Some(image) = self.stages[s]
                .uid
                .as_ref()
                .and_then(|u| c.operators.get(u))
                .cloned()
            else {
                continue;
            };
            self.restore_stage(s, &image)?;
        }
        for (sink, image) in self.sinks.iter_mut().zip(&c.sinks) {
            sink.collector.restore(image);
        }
        let mut at = 1 + PER_SOURCE * c.sources.len();
        for st in &mut self.stages {
            st.watermark = c.runtime[at];
            at += 1;
            for w in &mut st.input_watermarks {
                *w = c.runtime[at];
                at += 1;
            }
        }
        self.resume = Some(c);
        Ok(())
    }

    /// The exchange a stage's input comes through (the first that says).
    fn input_exchange(&self, s: usize) -> Option<Exchange> {
        self.sources
            .iter()
            .flat_map(|x| &x.outputs)
            .chain(self.stages.iter().flat_map(|x| &x.outputs))
            .find(|(t, _)| matches!(t, Target::Stage(t, _) if *t == s))
            .map(|(_, e)| e.clone())
    }

    /// Gives each subtask of stage `s` the keys of `image` it owns.
    pub(super) fn restore_stage(&mut self, s: usize, image: &OperatorImage) -> OpResult<()> {
        let p = self.stages[s].subtasks.len();
        let hashed = matches!(self.input_exchange(s), Some(Exchange::Hash(_)));
        if p > 1 && !hashed && !image.is_empty() {
            return Err(OpError::Spec(format!(
                "cannot restore the state of {}: its input is not partitioned by key",
                self.stages[s].name
            )));
        }
        let name = self.stages[s].name.clone();
        for (i, op) in self.stages[s].subtasks.iter_mut().enumerate() {
            let owns = move |key: &[Value]| p == 1 || (stable_hash(key) % p as u64) as usize == i;
            op.restore_state(image, &owns)
                .map_err(|e| naming(e, "restore", &name))?;
        }
        Ok(())
    }

    /// Before the first batch of a resumed run: skips each source's
    /// delivered batches and sets the executor's clock and watermarks.
    /// Returns the input rows read so far.
    pub(super) fn resume_at(
        &mut self,
        c: &Checkpoint,
        feeds: &mut [Feed],
        batch_size: usize,
        emitted: &mut [(Option<i64>, u64)],
        done: &mut [bool],
    ) -> OpResult<u64> {
        for (s, feed) in feeds.iter_mut().enumerate() {
            let target = c.sources[s];
            let mut read = 0u64;
            while read < target {
                let batch: SourceBatch = feed.next(batch_size);
                let (n, _, _) = batch?;
                if n == 0 {
                    break;
                }
                read += n as u64;
            }
            if read != target {
                return Err(mismatch(
                    "the checkpoint",
                    format!("source {s} has {read} row(s) where the checkpoint read {target}"),
                ));
            }
            let r = &c.runtime[1 + PER_SOURCE * s..1 + PER_SOURCE * (s + 1)];
            done[s] = r[0] != 0;
            emitted[s] = ((r[1] != 0).then_some(r[2]), r[3] as u64);
        }
        let input_rows = c.runtime[0] as u64;
        self.options.backend.clock().set(input_rows);
        Ok(input_rows)
    }

    /// The barrier: closes every bundle, then writes checkpoint `id`.
    pub(super) fn checkpoint(
        &mut self,
        id: u64,
        positions: &[u64],
        input_rows: u64,
        emitted: &[(Option<i64>, u64)],
        done: &[bool],
    ) -> OpResult<()> {
        let Some(config) = self.checkpointing.clone() else {
            return Ok(());
        };
        let t = Instant::now();
        let incremental =
            config.incremental && self.options.backend.kind() == crate::state::BackendKind::RocksDb;
        let mut c = self.snapshot(id, positions, input_rows, emitted, done, incremental)?;
        let (bytes, full) = if incremental {
            let tmp = config.store.begin(id)?;
            let staged = tmp.join("db");
            self.options
                .backend
                .create_native_checkpoint(&staged)
                .map_err(CheckpointError::State)?;
            let shared = native::share(&staged, &tmp, &mut self.shared_files)?;
            c.files = shared.files;
            let meta = config.store.finish(&tmp, &c)?;
            (meta + shared.new_bytes, meta + shared.all_bytes)
        } else {
            let bytes = config.store.write(&c)?;
            (bytes, bytes)
        };
        let k = &mut self.checkpoint_counts;
        k.taken += 1;
        k.bytes += bytes;
        k.last_bytes = bytes;
        k.last_full_bytes = full;
        k.incremental = incremental;
        k.time += t.elapsed();
        Ok(())
    }

    /// Closes every bundle and takes the job's state as checkpoint `id`:
    /// what a checkpoint and a savepoint both write. `by_reference`: states
    /// held in RocksDB are recorded by their column family, for an
    /// incremental checkpoint to add RocksDB's files.
    pub(super) fn snapshot(
        &mut self,
        id: u64,
        positions: &[u64],
        input_rows: u64,
        emitted: &[(Option<i64>, u64)],
        done: &[bool],
        by_reference: bool,
    ) -> OpResult<Checkpoint> {
        self.flush_all()?;
        let mut c = Checkpoint {
            id,
            sources: positions.to_vec(),
            source_names: self.source_names.clone(),
            ..Checkpoint::default()
        };
        c.runtime.push(input_rows as i64);
        for (&(w, at), &d) in emitted.iter().zip(done) {
            c.runtime
                .extend([d as i64, w.is_some() as i64, w.unwrap_or(0), at as i64]);
        }
        for st in &self.stages {
            c.runtime.push(st.watermark);
            c.runtime.extend(&st.input_watermarks);
        }
        for st in &mut self.stages {
            let mut image = OperatorImage {
                schema: st.schema.clone(),
                by_reference,
                ..OperatorImage::default()
            };
            for op in st.subtasks.iter_mut() {
                op.snapshot_state(&mut image)
                    .map_err(|e| naming(e, "checkpoint", &st.name))?;
            }
            if !image.states.is_empty() {
                let uid = st.uid.clone().unwrap_or_else(|| st.name.clone());
                c.operators.insert(uid, image);
            }
        }
        for sink in &mut self.sinks {
            let mut image = sink.collector.snapshot()?;
            image.schema = sink.schema.clone();
            c.sinks.push(image);
        }
        Ok(c)
    }
}

/// An operator's refusal, naming the operator.
pub(super) fn naming(e: OpError, what: &str, stage: &str) -> OpError {
    match e {
        OpError::Spec(m) | OpError::Checkpoint(CheckpointError::Unsupported(m)) => {
            OpError::Spec(format!("{what} of {stage}: {m}"))
        }
        e => e,
    }
}
