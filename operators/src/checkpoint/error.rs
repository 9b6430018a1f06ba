//! Why a checkpoint could not be taken, read or restored.

/// Why a checkpoint could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// There is no checkpoint where one was asked for.
    #[error("no checkpoint at {0}")]
    Missing(String),
    /// The file is not a complete checkpoint of this format.
    #[error("checkpoint {path} cannot be restored: {reason}")]
    Corrupt { path: String, reason: String },
    /// The checkpoint does not fit the job (another query, another number
    /// of sources or sinks, another parallelism).
    #[error("checkpoint {path} does not fit this job: {reason}")]
    Mismatch { path: String, reason: String },
    /// An operator's state that checkpoints do not cover yet, or do not
    /// fit (named by the executor).
    #[error("{0}")]
    Unsupported(String),
    /// The state backend failed while a checkpoint read it or wrote it back.
    #[error(transparent)]
    State(#[from] crate::state::StateError),
    /// Reading or writing failed (IO, a full disk).
    #[error("checkpoint IO failed at {path}: {error}")]
    Io { path: String, error: std::io::Error },
}

impl CheckpointError {
    /// Whether what was given is at fault (a missing or bad checkpoint)
    /// rather than the machine.
    pub fn is_bad_input(&self) -> bool {
        !matches!(self, CheckpointError::Io { .. } | CheckpointError::State(_))
    }
}
