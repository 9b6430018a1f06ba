//! Errors of the front end, configuration and planner. Each says what is
//! wrong and, where known, where (line and column of the script).

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub line: u64,
    pub column: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// The SQL does not parse.
    Parse,
    /// Parses, but uses a construct outside the lab's dialect.
    Unsupported,
    /// Unknown table, column, function or hint target; type errors.
    Validation,
    /// Unknown configuration key or bad value.
    Config,
    /// The planner cannot build what was asked (e.g. a forced strategy).
    Plan,
    /// Not bad input: the machine failed while the job was being built
    /// (the index-lookup store's RocksDB or its directory).
    Execution,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanError {
    pub kind: ErrorKind,
    pub message: String,
    pub location: Option<Location>,
}

impl PlanError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> PlanError {
        PlanError {
            kind,
            message: message.into(),
            location: None,
        }
    }
    pub fn parse(m: impl Into<String>) -> PlanError {
        PlanError::new(ErrorKind::Parse, m)
    }
    pub fn unsupported(m: impl Into<String>) -> PlanError {
        PlanError::new(ErrorKind::Unsupported, m)
    }
    pub fn validation(m: impl Into<String>) -> PlanError {
        PlanError::new(ErrorKind::Validation, m)
    }
    pub fn config(m: impl Into<String>) -> PlanError {
        PlanError::new(ErrorKind::Config, m)
    }
    pub fn plan(m: impl Into<String>) -> PlanError {
        PlanError::new(ErrorKind::Plan, m)
    }
    pub fn execution(m: impl Into<String>) -> PlanError {
        PlanError::new(ErrorKind::Execution, m)
    }
    pub fn at(mut self, line: u64, column: u64) -> PlanError {
        if self.location.is_none() && line > 0 {
            self.location = Some(Location { line, column });
        }
        self
    }
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            ErrorKind::Parse => "SQL parse error",
            ErrorKind::Unsupported => "unsupported SQL",
            ErrorKind::Validation => "validation error",
            ErrorKind::Config => "configuration error",
            ErrorKind::Plan => "planning error",
            ErrorKind::Execution => "execution failed",
        };
        match &self.location {
            Some(l) => write!(
                f,
                "{what} at line {}, column {}: {}",
                l.line, l.column, self.message
            ),
            None => write!(f, "{what}: {}", self.message),
        }
    }
}

impl std::error::Error for PlanError {}

pub type Result<T> = std::result::Result<T, PlanError>;
