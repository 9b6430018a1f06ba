//! What an operator hands over at a barrier: its keyed states, by name,
//! in the canonical form every backend reads and writes.

use super::error::CheckpointError;
use crate::state::codec::encode_into;
use crate::state::{MapState, ValueState};
use crate::value::{Row, Value};
use std::collections::BTreeMap;

type Result<T> = std::result::Result<T, CheckpointError>;

/// One state's entries: `(key, user key) → row`; a value state has empty
/// user keys. Ordered by the encoded key and user key, each entry once.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StateImage {
    /// Whether the state is a map state.
    pub map: bool,
    /// Whether the state has a TTL: each row then ends with its write time
    /// (`operators/src/state/ttl.rs`), and it restores only into a state
    /// with a TTL (Flink refuses to turn a state's TTL on or off too).
    pub ttl: bool,
    pub entries: BTreeMap<Vec<u8>, (Row, Row, Row)>,
    /// Set when an incremental checkpoint left the entries in RocksDB's
    /// own files instead of copying them here; reading the checkpoint
    /// fills `entries` from those files and clears it.
    pub native: Option<NativeState>,
}

/// Where a state's entries are in the RocksDB files of an incremental
/// checkpoint (see [`super::native`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NativeState {
    pub column_family: String,
    /// The width of a map state's user keys (0 for a value state).
    pub ukey_arity: usize,
}

/// One RocksDB file of an incremental checkpoint (see [`super::native`]),
/// which the checkpoint's file lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NativeFile {
    /// Its name in the database directory (`000012.sst`, `CURRENT`, ...).
    pub name: String,
    /// Where it is, relative to the checkpoint's `chk-<id>` directory:
    /// `private/<name>` or `../shared/<run>-<name>`.
    pub stored: String,
    pub size: u64,
}

impl StateImage {
    pub(super) fn insert(&mut self, key: Row, ukey: Row, value: Row) {
        let mut k = Vec::new();
        encode_into(&key, &mut k);
        encode_into(&ukey, &mut k);
        self.entries.insert(k, (key, ukey, value));
    }
}

/// Every state of one operator (all its subtasks), by state name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OperatorImage {
    /// The layout of its states (the operator's kind, input and output row
    /// types and what it computes, as the planner describes them): a
    /// savepoint restores into an operator of the same layout only.
    pub schema: String,
    pub states: BTreeMap<String, StateImage>,
    /// Set by the executor for an incremental checkpoint on RocksDB: a
    /// state held in RocksDB is recorded by its column family, not copied.
    /// Not part of the file.
    pub by_reference: bool,
}

impl OperatorImage {
    pub fn is_empty(&self) -> bool {
        self.states
            .values()
            .all(|s| s.entries.is_empty() && s.native.is_none())
    }

    /// Adds every entry of value state `name` (a subtask's share; on
    /// RocksDB, where subtasks share a column family, all of them: an
    /// entry added twice is kept once). A state with a TTL first removes
    /// what expired, and hands over its rows with their write times.
    pub fn add_value(&mut self, name: &str, state: &mut ValueState) -> Result<()> {
        state.expire_due()?;
        let image = self.states.entry(name.to_string()).or_default();
        image.ttl = state.has_ttl();
        if let (true, Some(cf)) = (self.by_reference, state.column_family()) {
            image.native = Some(NativeState {
                column_family: cf.to_string(),
                ukey_arity: 0,
            });
            return Ok(());
        }
        for (k, v) in state.all_entries()? {
            image.insert(k, Vec::new(), v);
        }
        Ok(())
    }

    /// [`OperatorImage::add_value`] for a map state.
    pub fn add_map(&mut self, name: &str, state: &mut MapState) -> Result<()> {
        state.expire_due()?;
        let image = self.states.entry(name.to_string()).or_default();
        image.map = true;
        image.ttl = state.has_ttl();
        if let (true, Some((cf, ukey_arity))) = (self.by_reference, state.column_family()) {
            image.native = Some(NativeState {
                column_family: cf.to_string(),
                ukey_arity,
            });
            return Ok(());
        }
        for (k, u, v) in state.all_entries()? {
            image.insert(k, u, v);
        }
        Ok(())
    }

    /// Adds plain entries (state an operator keeps outside the backend).
    pub fn add_rows(&mut self, name: &str, rows: impl IntoIterator<Item = (Row, Row)>) {
        let image = self.states.entry(name.to_string()).or_default();
        for (k, v) in rows {
            image.insert(k, Vec::new(), v);
        }
    }

    /// The entries of state `name` whose key this subtask owns.
    pub fn entries<'a>(
        &'a self,
        name: &str,
        owns: &'a dyn Fn(&[Value]) -> bool,
    ) -> impl Iterator<Item = &'a (Row, Row, Row)> + 'a {
        self.states
            .get(name)
            .into_iter()
            .flat_map(|s| s.entries.values())
            .filter(move |(k, _, _)| owns(k))
    }

    /// Writes the owned entries of value state `name` into `state`.
    pub fn restore_value(
        &self,
        name: &str,
        state: &mut ValueState,
        owns: &dyn Fn(&[Value]) -> bool,
    ) -> Result<()> {
        self.check_kind(name, false, state.has_ttl())?;
        for (k, _, v) in self.entries(name, owns) {
            state.restore_entry(k, v.clone())?;
        }
        Ok(())
    }

    /// Writes the owned entries of map state `name` into `state`.
    pub fn restore_map(
        &self,
        name: &str,
        state: &mut MapState,
        owns: &dyn Fn(&[Value]) -> bool,
    ) -> Result<()> {
        self.check_kind(name, true, state.has_ttl())?;
        for (k, u, v) in self.entries(name, owns) {
            state.restore_entry(k, u, v.clone())?;
        }
        Ok(())
    }

    fn check_kind(&self, name: &str, map: bool, ttl: bool) -> Result<()> {
        let kind = |map: bool| if map { "map" } else { "value" };
        let with = |ttl: bool| if ttl { "with a TTL" } else { "without a TTL" };
        match self.states.get(name) {
            Some(s) if s.map != map => Err(CheckpointError::Unsupported(format!(
                "state '{name}' was checkpointed as a {} state and is restored as a {} state",
                kind(s.map),
                kind(map),
            ))),
            Some(s) if s.ttl != ttl => Err(CheckpointError::Unsupported(format!(
                "state '{name}' was checkpointed {} and is restored {} (table.exec.state.ttl or a STATE_TTL hint changed)",
                with(s.ttl),
                with(ttl),
            ))),
            _ => Ok(()),
        }
    }
}

/// Refuses a barrier that finds a mini-batch bundle open (the executor
/// closes every bundle first; an operator checks it did).
pub fn closed_bundle(buffered: usize) -> Result<()> {
    if buffered > 0 {
        return Err(CheckpointError::Unsupported(format!(
            "{buffered} record(s) in an open mini-batch bundle at a checkpoint barrier"
        )));
    }
    Ok(())
}
