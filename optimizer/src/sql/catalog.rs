//! The tables a script declares, looked up case-insensitively; each keeps
//! its declared spelling.

use crate::logical::TableDef;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Catalog {
    tables: Vec<TableDef>,
}

impl Catalog {
    pub fn new() -> Catalog {
        Catalog::default()
    }

    /// The table called `name` (any case).
    pub fn get(&self, name: &str) -> Option<&TableDef> {
        self.tables.iter().find(|t| t.name == name).or_else(|| {
            self.tables
                .iter()
                .find(|t| t.name.eq_ignore_ascii_case(name))
        })
    }

    /// Adds a table; returns it back if one of that name (any case) exists.
    pub fn add(&mut self, table: TableDef) -> Result<(), Box<TableDef>> {
        if self.get(&table.name).is_some() {
            return Err(Box::new(table));
        }
        self.tables.push(table);
        Ok(())
    }

    /// Tables in declaration order.
    pub fn tables(&self) -> &[TableDef] {
        &self.tables
    }

    /// Table names in declaration order.
    pub fn names(&self) -> Vec<&str> {
        self.tables.iter().map(|t| t.name.as_str()).collect()
    }

    pub fn len(&self) -> usize {
        self.tables.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }
}
