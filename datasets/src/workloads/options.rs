//! Option parsing and schema checks shared by the workload connectors.
//!
//! Semantics: [`Options::new`] rejects any key outside the connector's list
//! (the error lists the allowed keys); the typed getters parse one option,
//! apply its default when absent, and report a bad value as
//! `option 'k' = 'v': expected ...`. [`check_schema`] compares the declared
//! columns with the ones a connector produces, by position, name (exactly, as
//! Flink does) and type, and lists the expected schema when they differ.
//! Errors carry no table name; [`crate::open_source`] adds it.

use std::collections::BTreeMap;

use operators::DataType;

use crate::error::DatasetError;

/// A connector's options, checked against its list of keys.
pub(crate) struct Options<'a> {
    map: &'a BTreeMap<String, String>,
}

impl<'a> Options<'a> {
    /// Fails on the first key not in `allowed`.
    pub(crate) fn new(
        map: &'a BTreeMap<String, String>,
        allowed: &[&str],
    ) -> Result<Options<'a>, DatasetError> {
        match map.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(k) => Err(DatasetError::unknown_option(k, allowed)),
            None => Ok(Options { map }),
        }
    }

    pub(crate) fn get(&self, key: &str) -> Option<&'a str> {
        self.map.get(key).map(String::as_str)
    }

    pub(crate) fn has(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    /// An integer in `min..=max`; `default` when absent, an error when absent
    /// without a default.
    pub(crate) fn int_in(
        &self,
        key: &str,
        default: Option<u64>,
        min: u64,
        max: u64,
    ) -> Result<u64, DatasetError> {
        let expected = if max == u64::MAX {
            format!("an integer >= {min}")
        } else {
            format!("an integer from {min} to {max}")
        };
        let Some(value) = self.get(key) else {
            return default.ok_or_else(|| DatasetError::missing(key, expected));
        };
        match value.trim().parse::<u64>() {
            Ok(v) if (min..=max).contains(&v) => Ok(v),
            _ => Err(DatasetError::bad_option(key, value, expected)),
        }
    }

    /// A finite number in `[min, max]` (or `[min, max)` when `max_open`).
    pub(crate) fn number_in(
        &self,
        key: &str,
        default: f64,
        min: f64,
        max: f64,
        max_open: bool,
        expected: &str,
    ) -> Result<f64, DatasetError> {
        let Some(value) = self.get(key) else {
            return Ok(default);
        };
        let ok = |v: f64| v.is_finite() && v >= min && (v < max || (!max_open && v == max));
        match value.trim().parse::<f64>() {
            Ok(v) if ok(v) => Ok(v),
            _ => Err(DatasetError::bad_option(key, value, expected)),
        }
    }

    /// A probability in `[0, 1]`.
    pub(crate) fn share(&self, key: &str, default: f64) -> Result<f64, DatasetError> {
        self.number_in(
            key,
            default,
            0.0,
            1.0,
            false,
            "a fraction between 0.0 and 1.0",
        )
    }

    /// `seed`: any 64-bit integer (negative ones are taken modulo 2^64),
    /// default 0.
    pub(crate) fn seed(&self) -> Result<u64, DatasetError> {
        let Some(value) = self.get("seed") else {
            return Ok(0);
        };
        let v = value.trim();
        v.parse::<u64>()
            .or_else(|_| v.parse::<i64>().map(|i| i as u64))
            .map_err(|_| DatasetError::bad_option("seed", value, "an integer"))
    }

    /// `number-of-rows`, required: the lab needs bounded input.
    pub(crate) fn number_of_rows(&self) -> Result<u64, DatasetError> {
        let Some(value) = self.get("number-of-rows") else {
            return Err(DatasetError::missing(
                "number-of-rows",
                "a non-negative integer: the lab needs bounded input",
            ));
        };
        value.trim().parse::<u64>().map_err(|_| {
            DatasetError::bad_option("number-of-rows", value, "a non-negative integer")
        })
    }
}

/// `name TYPE, name TYPE, ...`
pub(crate) fn schema_text<S: AsRef<str>>(columns: &[(S, DataType)]) -> String {
    columns
        .iter()
        .map(|(n, t)| format!("{} {}", n.as_ref(), t.sql_name()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks the declared columns against `expected`. On a difference the
/// error (on option 'connector') says what differs and lists the schema the
/// connector produces, followed by `note` when not empty.
pub(crate) fn check_schema<S: AsRef<str>>(
    connector: &str,
    expected: &[(S, DataType)],
    note: &str,
    names: &[String],
    types: &[DataType],
) -> Result<(), DatasetError> {
    if names.len() != types.len() {
        return Err(DatasetError::SchemaMismatch {
            names: names.len(),
            types: types.len(),
        });
    }
    let problem = if names.len() != expected.len() {
        Some(format!(
            "the table declares {} columns, expected {}",
            names.len(),
            expected.len()
        ))
    } else {
        expected
            .iter()
            .zip(names.iter().zip(types))
            .enumerate()
            .find_map(|(i, ((en, et), (n, t)))| {
                if n != en.as_ref() {
                    Some(format!(
                        "column {} is named '{n}', expected '{}'",
                        i + 1,
                        en.as_ref()
                    ))
                } else if t != et {
                    Some(format!("column '{n}' is {t}, expected {et}"))
                } else {
                    None
                }
            })
    };
    match problem {
        None => Ok(()),
        Some(problem) => {
            let declared: Vec<(&String, DataType)> =
                names.iter().zip(types.iter().copied()).collect();
            let note = if note.is_empty() {
                String::new()
            } else {
                format!(" ({note})")
            };
            Err(DatasetError::conflict(
                "connector",
                format!(
                    "connector '{connector}' produces the columns ({}){note}; \
                     the table declares ({}): {problem}",
                    schema_text(expected),
                    schema_text(&declared),
                ),
            ))
        }
    }
}
