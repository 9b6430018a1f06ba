//! A node's state as plans name it: each state with its idle-state
//! retention (TTL) and where that TTL came from.

use std::time::Duration;

/// One state's TTL and where it came from.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StateTtl {
    /// Milliseconds; 0 keeps the state forever.
    pub ms: u64,
    /// `config`, `hint` or `plan`.
    pub origin: String,
}

impl StateTtl {
    pub fn describe(&self) -> String {
        format!("{} ms ({})", self.ms, self.origin)
    }

    pub fn duration(&self) -> Duration {
        Duration::from_millis(self.ms)
    }
}

/// One state of a node: its name in Flink's naming (`leftState`,
/// `groupAggregateState`) and its TTL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateSlot {
    pub name: String,
    pub ttl: StateTtl,
}

impl StateSlot {
    pub fn new(name: impl Into<String>, ttl: &StateTtl) -> StateSlot {
        StateSlot {
            name: name.into(),
            ttl: ttl.clone(),
        }
    }
}
