//! [`DimensionTable`]: a bounded table loaded once into memory and indexed
//! by a lookup key — the lab's stand-in for the external system (a JDBC
//! database, HBase) that a lookup join queries per record. Each call of
//! [`DimensionTable::lookup`] is one "external" lookup; the joins that use
//! it count those calls and the rows they return.
//!
//! A row whose key holds a NULL is not indexed: SQL equality never matches
//! NULL, so no lookup could return it.

use crate::value::{Row, Value};
use std::collections::HashMap;

/// The rows of a table grouped by the values of its key columns.
#[derive(Debug, Default)]
pub struct DimensionTable {
    index: HashMap<Vec<Value>, Vec<Row>>,
    rows: usize,
}

impl DimensionTable {
    /// Indexes `rows` by the columns `key`, keeping each key's rows in the
    /// order they were read.
    pub fn build(rows: impl IntoIterator<Item = Row>, key: &[usize]) -> DimensionTable {
        let mut index: HashMap<Vec<Value>, Vec<Row>> = HashMap::new();
        let mut count = 0;
        for row in rows {
            let k: Vec<Value> = key.iter().map(|&c| row[c].clone()).collect();
            if k.iter().any(Value::is_null) {
                continue;
            }
            count += 1;
            index.entry(k).or_default().push(row);
        }
        DimensionTable { index, rows: count }
    }

    /// The rows whose key equals `key` (empty when none).
    pub fn lookup(&self, key: &[Value]) -> &[Row] {
        self.index.get(key).map(Vec::as_slice).unwrap_or(&[])
    }

    /// How many rows are indexed.
    pub fn len(&self) -> usize {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_rows_by_key_and_leaves_null_keys_out() {
        let rows = vec![
            vec![Value::Int(1), Value::Int(10)],
            vec![Value::Int(2), Value::Int(20)],
            vec![Value::Int(1), Value::Int(11)],
            vec![Value::Null, Value::Int(30)],
        ];
        let t = DimensionTable::build(rows, &[0]);
        assert_eq!(t.len(), 3);
        assert_eq!(t.lookup(&[Value::Int(1)]).len(), 2);
        assert!(t.lookup(&[Value::Int(3)]).is_empty());
        assert!(t.lookup(&[Value::Null]).is_empty());
    }
}
