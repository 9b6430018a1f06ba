//! Read access to table definitions, as the planner needs it.

use crate::logical::TableDef;
use std::collections::HashMap;

pub trait CatalogView {
    fn table(&self, name: &str) -> Option<&TableDef>;
}

impl CatalogView for HashMap<String, TableDef> {
    fn table(&self, name: &str) -> Option<&TableDef> {
        self.get(name)
            .or_else(|| self.values().find(|t| t.name.eq_ignore_ascii_case(name)))
    }
}

impl CatalogView for crate::sql::Catalog {
    fn table(&self, name: &str) -> Option<&TableDef> {
        self.get(name)
    }
}
