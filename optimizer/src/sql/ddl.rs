//! `CREATE TABLE t (col TYPE [NOT NULL], ..., PRIMARY KEY (k) NOT ENFORCED)
//! WITH ('connector' = '...', ...)`.

use super::catalog::Catalog;
use super::names::{did_you_mean, err_at, list, single_name, At};
use super::time_clauses::{add_computed, bind_watermark, TimeClauses};
use super::types::{lab_type, SUPPORTED_TYPES};
use crate::error::PlanError;
use crate::logical::{Field, Schema, TableDef};
use sqlparser::ast::{self, Spanned};
use std::collections::BTreeMap;

/// Binds a `CREATE TABLE` and adds the table to `catalog`. Returns `None`
/// for `CREATE TABLE IF NOT EXISTS` of a table that exists.
pub(crate) fn bind_create_table(
    catalog: &mut Catalog,
    ct: &ast::CreateTable,
    clauses: TimeClauses,
) -> Result<Option<TableDef>, PlanError> {
    let name = single_name(&ct.name, "table")?;
    let unsupported = |what: &str| {
        Err(err_at(
            PlanError::unsupported(format!("CREATE TABLE with {what} is not supported")),
            &ct.name,
        ))
    };
    if ct.or_replace {
        return unsupported("OR REPLACE");
    }
    if ct.query.is_some() {
        return unsupported("AS SELECT");
    }
    if ct.like.is_some() || ct.clone.is_some() {
        return unsupported("LIKE or CLONE");
    }
    if ct.external
        || ct.unlogged
        || ct.dynamic
        || ct.transient
        || ct.volatile
        || ct.iceberg
        || ct.snapshot
    {
        return unsupported("this table kind");
    }
    if ct.partition_by.is_some()
        || ct.cluster_by.is_some()
        || ct.order_by.is_some()
        || ct.clustered_by.is_some()
    {
        return unsupported("PARTITIONED BY, CLUSTER BY or ORDER BY");
    }
    if ct.hive_formats.is_some() || ct.file_format.is_some() || ct.location.is_some() {
        return unsupported("STORED AS or LOCATION (use WITH ('connector' = ...))");
    }
    if ct.inherits.is_some() || ct.partition_of.is_some() || ct.primary_key.is_some() {
        return unsupported("this clause");
    }
    if catalog.get(&name).is_some() {
        if ct.if_not_exists {
            return Ok(None);
        }
        return Err(err_at(
            PlanError::validation(format!("Table '{name}' already exists")),
            &ct.name,
        ));
    }
    if ct.columns.is_empty() {
        return Err(err_at(
            PlanError::validation(format!("Table '{name}' declares no columns")),
            &ct.name,
        ));
    }

    let mut fields: Vec<Field> = Vec::with_capacity(ct.columns.len());
    let mut primary_key: Option<(Vec<usize>, sqlparser::tokenizer::Span)> = None;
    for col in &ct.columns {
        let cname = col.name.value.clone();
        if fields.iter().any(|f| f.name.eq_ignore_ascii_case(&cname)) {
            return Err(err_at(
                PlanError::validation(format!("Duplicate column '{cname}' in table '{name}'")),
                &At(col.name.span),
            ));
        }
        let data_type = lab_type(&col.data_type).ok_or_else(|| {
            err_at(
                PlanError::unsupported(format!(
                    "column type {} of '{cname}' is not supported (the lab supports {SUPPORTED_TYPES})",
                    col.data_type
                )),
                &At(col.name.span),
            )
        })?;
        let mut nullable = true;
        for opt in &col.options {
            match &opt.option {
                ast::ColumnOption::NotNull => nullable = false,
                ast::ColumnOption::Null => nullable = true,
                ast::ColumnOption::PrimaryKey(pk) => {
                    check_not_enforced(pk.characteristics.as_ref(), &At(col.name.span))?;
                    if primary_key.is_some() {
                        return Err(multiple_pk(&name, &At(col.name.span)));
                    }
                    primary_key = Some((vec![fields.len()], col.name.span));
                }
                other => {
                    return Err(err_at(
                        PlanError::unsupported(format!(
                            "column option '{other}' of '{cname}' is not supported"
                        )),
                        &At(col.name.span),
                    ))
                }
            }
        }
        fields.push(Field {
            name: cname,
            qualifier: None,
            data_type,
            nullable,
        });
    }

    for c in &ct.constraints {
        match c {
            ast::TableConstraint::PrimaryKey(pk) => {
                check_not_enforced(pk.characteristics.as_ref(), c)?;
                if primary_key.is_some() {
                    return Err(multiple_pk(&name, c));
                }
                let mut cols = Vec::new();
                for ic in &pk.columns {
                    let ident = match &ic.column.expr {
                        ast::Expr::Identifier(id) => id,
                        other => {
                            return Err(err_at(
                                PlanError::validation(format!(
                                    "PRIMARY KEY must list columns, found '{other}'"
                                )),
                                other,
                            ))
                        }
                    };
                    let pos = fields
                        .iter()
                        .position(|f| f.name == ident.value)
                        .or_else(|| fields.iter().position(|f| f.name.eq_ignore_ascii_case(&ident.value)))
                        .ok_or_else(|| {
                            err_at(
                                PlanError::validation(format!(
                                    "PRIMARY KEY column '{}' is not a column of table '{name}'.{}",
                                    ident.value,
                                    did_you_mean(&ident.value, fields.iter().map(|f| f.name.as_str()))
                                )),
                                &At(ident.span),
                            )
                        })?;
                    if cols.contains(&pos) {
                        return Err(err_at(
                            PlanError::validation(format!(
                                "PRIMARY KEY lists column '{}' twice",
                                ident.value
                            )),
                            &At(ident.span),
                        ));
                    }
                    cols.push(pos);
                }
                primary_key = Some((cols, c.span()));
            }
            other => {
                return Err(err_at(
                    PlanError::unsupported(format!(
                        "table constraint '{other}' is not supported (only PRIMARY KEY (...) NOT ENFORCED)"
                    )),
                    other,
                ))
            }
        }
    }
    let primary_key = primary_key.map(|(cols, _)| cols);
    if let Some(pk) = &primary_key {
        for &i in pk {
            fields[i].nullable = false;
        }
    }

    let (fields, computed, primary_key) =
        add_computed(&name, fields, primary_key, clauses.computed)?;
    let watermark = match clauses.watermark {
        Some(w) => Some(Box::new(bind_watermark(&name, &fields, w)?)),
        None => None,
    };
    let options = bind_options(&ct.table_options)?;
    let def = TableDef {
        name,
        schema: Schema { fields },
        primary_key,
        options,
        computed,
        watermark,
    };
    catalog
        .add(def.clone())
        .map_err(|t| PlanError::validation(format!("Table '{}' already exists", t.name)))?;
    Ok(Some(def))
}

fn multiple_pk(table: &str, node: &impl Spanned) -> PlanError {
    err_at(
        PlanError::validation(format!(
            "Table '{table}' declares more than one PRIMARY KEY"
        )),
        node,
    )
}

fn check_not_enforced(
    ch: Option<&ast::ConstraintCharacteristics>,
    node: &impl Spanned,
) -> Result<(), PlanError> {
    if ch.and_then(|c| c.enforced) == Some(false) {
        return Ok(());
    }
    Err(err_at(
        PlanError::validation(
            "PRIMARY KEY must be declared NOT ENFORCED: Flink does not own the data, \
             so it does not check the constraint (write PRIMARY KEY (...) NOT ENFORCED)",
        ),
        node,
    ))
}

fn bind_options(opts: &ast::CreateTableOptions) -> Result<BTreeMap<String, String>, PlanError> {
    let list = match opts {
        ast::CreateTableOptions::None => return Ok(BTreeMap::new()),
        ast::CreateTableOptions::With(l) => l,
        other => {
            return Err(err_at(
                PlanError::unsupported(format!(
                    "table options '{other}' are not supported (use WITH ('key' = 'value', ...))"
                )),
                other,
            ))
        }
    };
    let mut out = BTreeMap::new();
    for o in list {
        let ast::SqlOption::KeyValue { key, value } = o else {
            return Err(err_at(
                PlanError::unsupported(format!(
                    "table option '{o}' is not supported (use 'key' = 'value')"
                )),
                o,
            ));
        };
        let k = key
            .0
            .iter()
            .map(|p| match p.as_ident() {
                Some(id) => id.value.clone(),
                None => p.to_string(),
            })
            .collect::<Vec<_>>()
            .join(".");
        let v = match value {
            ast::Expr::Value(v) => match &v.value {
                ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => s.clone(),
                other => other.to_string(),
            },
            ast::Expr::Identifier(id) => id.value.clone(),
            other => other.to_string(),
        };
        if out
            .keys()
            .any(|existing: &String| existing.eq_ignore_ascii_case(&k))
        {
            return Err(err_at(
                PlanError::validation(format!(
                    "table option '{k}' is given twice (options: {})",
                    list_keys(&out)
                )),
                o,
            ));
        }
        out.insert(k, v);
    }
    Ok(out)
}

fn list_keys(m: &BTreeMap<String, String>) -> String {
    list(&m.keys().collect::<Vec<_>>(), 20)
}
