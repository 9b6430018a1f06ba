//! Errors of the `datasets` crate.
//!
//! Semantics: every message says what is wrong and where, in the words a user
//! needs to fix the input without reading code:
//!
//! - data errors name the file, the 1-based line, the column, the offending
//!   text and what was expected:
//!   `clicks.csv line 7, column 'user_id': expected INT, found "abc"`;
//! - shape errors name the file and line:
//!   `clicks.csv line 3: expected 3 fields, found 2`;
//! - connector option errors name the table (when known), the option, its
//!   value and what was expected:
//!   `table 'clicks': option 'fields.k.min' = 'x': expected an integer`;
//!   unknown options and connectors list what is allowed.
//!
//! Option errors raised below the table level (for instance by
//! [`crate::DatagenSource::new`]) carry an empty table name; the caller that
//! knows the table adds it with [`DatasetError::in_table`].

use std::fmt;
use std::path::PathBuf;

use operators::operator::{OpError, SourceError};
use operators::sink::SinkError;

/// Anything that can go wrong reading, generating or writing a data set.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    /// The operating system refused an open, read, write or rename. The
    /// OS error is part of the message (and deliberately not a `source()`,
    /// so error-chain printers do not repeat it).
    #[error("cannot {action} '{}': {error}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        error: std::io::Error,
    },

    /// A CSV line has the wrong number of fields.
    #[error("{file} line {line}: expected {expected} fields, found {found}")]
    FieldCount {
        file: String,
        line: u64,
        expected: usize,
        found: usize,
    },

    /// A CSV field does not parse as its column's type.
    #[error("{file} line {line}, column '{column}': expected {expected}, found \"{found}\"")]
    BadValue {
        file: String,
        line: u64,
        column: String,
        expected: String,
        found: String,
    },

    /// The CSV text itself is malformed (reported by the `csv` parser).
    #[error("{file} line {line}: malformed CSV: {message}")]
    MalformedCsv {
        file: String,
        line: u64,
        message: String,
    },

    /// A row handed to a CSV writer has the wrong number of values.
    #[error("cannot write '{}': row has {found} values, expected {expected}", path.display())]
    RowWidth {
        path: PathBuf,
        expected: usize,
        found: usize,
    },

    /// A source was given a different number of column names and types.
    #[error("schema mismatch: {names} column names but {types} column types")]
    SchemaMismatch { names: usize, types: usize },

    /// An option key the connector does not know.
    #[error(
        "{}unknown option '{key}'; allowed options: {allowed}",
        TablePrefix(table)
    )]
    UnknownOption {
        table: String,
        key: String,
        allowed: String,
    },

    /// A required option is absent.
    #[error("{}missing required option '{key}' ({expected})", TablePrefix(table))]
    MissingOption {
        table: String,
        key: String,
        expected: String,
    },

    /// An option value that does not parse or is out of range.
    #[error(
        "{}option '{key}' = '{value}': expected {expected}",
        TablePrefix(table)
    )]
    BadOption {
        table: String,
        key: String,
        value: String,
        expected: String,
    },

    /// An option that is valid on its own but not in this combination.
    #[error("{}option '{key}': {problem}", TablePrefix(table))]
    ConflictingOption {
        table: String,
        key: String,
        problem: String,
    },

    /// A `fields.<name>.<property>` option naming a column the table lacks.
    #[error(
        "{}option '{key}' names unknown column '{column}'; columns are: {columns}",
        TablePrefix(table)
    )]
    UnknownColumn {
        table: String,
        key: String,
        column: String,
        columns: String,
    },

    /// The `connector` option is absent or names no known connector.
    #[error(
        "{}unknown connector '{connector}'; expected one of: {allowed}",
        TablePrefix(table)
    )]
    UnknownConnector {
        table: String,
        connector: String,
        allowed: String,
    },

    /// Parameters a Zipf distribution cannot take.
    #[error("Zipf distribution needs n >= 1 and a finite exponent s > 0, got n = {n}, s = {s}")]
    BadZipf { n: u64, s: f64 },
}

/// Prints `table 'name': ` or nothing when the table is not known.
struct TablePrefix<'a>(&'a str);

impl fmt::Display for TablePrefix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            Ok(())
        } else {
            write!(f, "table '{}': ", self.0)
        }
    }
}

impl DatasetError {
    /// Names the table in an option error that does not name one yet;
    /// other errors are returned unchanged.
    pub fn in_table(mut self, name: &str) -> DatasetError {
        match &mut self {
            DatasetError::UnknownOption { table, .. }
            | DatasetError::MissingOption { table, .. }
            | DatasetError::BadOption { table, .. }
            | DatasetError::ConflictingOption { table, .. }
            | DatasetError::UnknownColumn { table, .. }
            | DatasetError::UnknownConnector { table, .. }
                if table.is_empty() =>
            {
                *table = name.to_string();
            }
            _ => {}
        }
        self
    }

    /// Shorthand for [`DatasetError::BadOption`] without a table name.
    pub(crate) fn bad_option(key: &str, value: &str, expected: impl Into<String>) -> DatasetError {
        DatasetError::BadOption {
            table: String::new(),
            key: key.to_string(),
            value: value.to_string(),
            expected: expected.into(),
        }
    }

    /// Shorthand for [`DatasetError::ConflictingOption`] without a table name.
    pub(crate) fn conflict(key: &str, problem: impl Into<String>) -> DatasetError {
        DatasetError::ConflictingOption {
            table: String::new(),
            key: key.to_string(),
            problem: problem.into(),
        }
    }

    /// Shorthand for [`DatasetError::MissingOption`] without a table name.
    pub(crate) fn missing(key: &str, expected: impl Into<String>) -> DatasetError {
        DatasetError::MissingOption {
            table: String::new(),
            key: key.to_string(),
            expected: expected.into(),
        }
    }

    /// Shorthand for [`DatasetError::UnknownOption`] without a table name.
    pub(crate) fn unknown_option(key: &str, allowed: &[&str]) -> DatasetError {
        DatasetError::UnknownOption {
            table: String::new(),
            key: key.to_string(),
            allowed: quote_list(allowed),
        }
    }
}

/// A source's error in the runtime's terms: an IO failure is a failure to
/// read, anything else (a row that does not parse, an option) bad input.
impl From<DatasetError> for SourceError {
    fn from(e: DatasetError) -> SourceError {
        match e {
            DatasetError::Io { .. } => SourceError::Read(Box::new(e)),
            e => SourceError::BadInput(Box::new(e)),
        }
    }
}

impl From<DatasetError> for OpError {
    fn from(e: DatasetError) -> OpError {
        OpError::Source(e.into())
    }
}

/// A writer's error, as a sink reports it.
impl From<DatasetError> for SinkError {
    fn from(e: DatasetError) -> SinkError {
        SinkError(Box::new(e))
    }
}

/// `'a', 'b', 'c'`: a list of allowed names for a message.
pub(crate) fn quote_list<S: AsRef<str>>(items: &[S]) -> String {
    items
        .iter()
        .map(|s| format!("'{}'", s.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_value_names_file_line_column_and_text() {
        let e = DatasetError::BadValue {
            file: "clicks.csv".into(),
            line: 7,
            column: "user_id".into(),
            expected: "INT".into(),
            found: "abc".into(),
        };
        assert_eq!(
            e.to_string(),
            "clicks.csv line 7, column 'user_id': expected INT, found \"abc\""
        );
    }

    #[test]
    fn option_errors_gain_a_table_name_once() {
        let e = DatasetError::bad_option("fields.k.min", "x", "an integer");
        assert_eq!(
            e.to_string(),
            "option 'fields.k.min' = 'x': expected an integer"
        );
        let e = e.in_table("clicks").in_table("other");
        assert_eq!(
            e.to_string(),
            "table 'clicks': option 'fields.k.min' = 'x': expected an integer"
        );
    }

    #[test]
    fn io_fails_the_read_and_a_bad_row_is_bad_input_kept_whole() {
        let io = DatasetError::Io {
            action: "read",
            path: "clicks.csv".into(),
            error: std::io::Error::other("disk"),
        };
        assert!(!OpError::from(io).is_bad_input());
        let e = OpError::from(DatasetError::FieldCount {
            file: "clicks.csv".into(),
            line: 3,
            expected: 3,
            found: 2,
        });
        assert!(e.is_bad_input());
        assert_eq!(
            e.to_string(),
            "clicks.csv line 3: expected 3 fields, found 2"
        );
        let OpError::Source(SourceError::BadInput(cause)) = &e else {
            panic!("{e:?}");
        };
        assert!(matches!(
            cause.downcast_ref::<DatasetError>(),
            Some(DatasetError::FieldCount { line: 3, .. })
        ));
    }

    #[test]
    fn unknown_option_lists_allowed() {
        let e = DatasetError::unknown_option("pth", &["connector", "path"]).in_table("t");
        assert_eq!(
            e.to_string(),
            "table 't': unknown option 'pth'; allowed options: 'connector', 'path'"
        );
    }
}
