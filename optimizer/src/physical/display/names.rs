//! Column names as Flink prints them.
//!
//! Calcite makes the field names of a row unique: a name already taken gets
//! the first free suffix `0`, `1`, ... (`tenant_id`, `tenant_id0`,
//! `tenant_id1` across a three-way join), so that every column of a join's
//! output, and every reference to it, has a name of its own.

use crate::logical::Schema;

pub use crate::logical::{unique_names, uniquify};

/// The names of `cols` of `schema` as written (for messages).
pub fn field_names(schema: &Schema, cols: &[usize]) -> String {
    cols.iter()
        .map(|&i| {
            schema
                .fields
                .get(i)
                .map(|f| f.name.clone())
                .unwrap_or_else(|| format!("${i}"))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `name` for column `i` of `names` (`$i` past the end).
pub fn name(names: &[String], i: usize) -> String {
    names.get(i).cloned().unwrap_or_else(|| format!("${i}"))
}

/// The names of `cols`, comma-separated.
pub fn list(names: &[String], cols: &[usize]) -> String {
    cols.iter()
        .map(|&c| name(names, c))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_get_the_first_free_suffix() {
        let names = ["k", "p", "k", "p", "k", "k0"].map(String::from);
        assert_eq!(uniquify(names), ["k", "p", "k0", "p0", "k1", "k00"]);
    }
}
