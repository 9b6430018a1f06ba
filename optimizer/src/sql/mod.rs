//! The SQL front end: parses a Flink SQL script with `sqlparser`
//! (`GenericDialect`) and binds it into [`Statement`]s over a [`Catalog`].
//!
//! A script is split into statements first (on `;` tokens), so that each
//! statement keeps its line and column in the script, `SET key = value` can be
//! read whatever the key looks like, and `EXPLAIN CHANGELOG_MODE` (which the
//! parser does not know) can be stripped. Each statement is then parsed and
//! bound in order against the tables created before it.
//!
//! Binding resolves names into column positions (see [`crate::logical`]):
//! every join and aggregate is built from one `SELECT`, carries that
//! `SELECT`'s hints, and every aggregate reads a `Project` that computes its
//! group keys, arguments and `FILTER` conditions.
//!
//! Errors carry the script line and column of the offending construct where
//! known, and the start of the statement otherwise.

mod catalog;
mod ddl;
mod explain;
mod expr;
mod hints;
mod names;
mod query;
mod script;

pub use catalog::Catalog;
pub use explain::{explain_logical, schema_string};

use crate::error::PlanError;
use crate::logical::{InsertStatement, LogicalPlan, Statement};
use sqlparser::ast;
use sqlparser::dialect::GenericDialect;

/// A bound script: its statements in order, and the catalog of every table
/// the script created.
#[derive(Clone, Debug, PartialEq)]
pub struct Script {
    pub statements: Vec<Statement>,
    pub catalog: Catalog,
    /// Where each statement starts in the script (line, column; 1-based),
    /// in the order of `statements`: errors found after binding (a `SET`
    /// value) point there.
    pub positions: Vec<(u64, u64)>,
}

impl Script {
    /// The `INSERT` statements (plain or under `EXPLAIN`), in order.
    pub fn inserts(&self) -> impl Iterator<Item = &InsertStatement> {
        self.statements.iter().filter_map(|s| match s {
            Statement::Insert(i) | Statement::Explain(i) => Some(i),
            _ => None,
        })
    }

    /// The `SET` statements, in order, as `(key, value)`.
    pub fn settings(&self) -> impl Iterator<Item = (&str, &str)> {
        self.statements.iter().filter_map(|s| match s {
            Statement::Set { key, value } => Some((key.as_str(), value.as_str())),
            _ => None,
        })
    }
}

/// Parses and binds a whole script.
pub fn parse_script(sql: &str) -> Result<Script, PlanError> {
    let mut catalog = Catalog::default();
    let mut statements = Vec::new();
    let mut positions = Vec::new();
    for raw in script::split(sql)? {
        let at = |e: PlanError| e.at(raw.line, raw.column);
        if let Some(stmt) = bind_raw(&mut catalog, &raw).map_err(at)? {
            statements.push(stmt);
            positions.push((raw.line, raw.column));
        }
    }
    Ok(Script {
        statements,
        catalog,
        positions,
    })
}

/// Parses and binds one query (`SELECT ...`) against `catalog`.
pub fn bind_query(catalog: &Catalog, sql_select: &str) -> Result<LogicalPlan, PlanError> {
    let raws = script::split(sql_select)?;
    let raw = match raws.as_slice() {
        [raw] => raw,
        [] => return Err(PlanError::parse("empty query")),
        _ => {
            return Err(PlanError::parse(
                "expected one query, found several statements",
            ))
        }
    };
    let at = |e: PlanError| e.at(raw.line, raw.column);
    let stmt = parse_one(raw).map_err(at)?;
    match stmt {
        ast::Statement::Query(q) => {
            let bound = query::QueryBinder::new(catalog).bind_top(&q).map_err(at)?;
            Ok(bound.plan)
        }
        other => Err(at(PlanError::unsupported(format!(
            "expected a SELECT query, found {}",
            script::statement_kind(&other)
        )))),
    }
}

fn parse_one(raw: &script::RawStatement) -> Result<ast::Statement, PlanError> {
    let mut stmts = sqlparser::parser::Parser::new(&GenericDialect {})
        .try_with_sql(&raw.text)
        .and_then(|mut p| p.parse_statements())
        .map_err(|e| script::map_parser_error(e).at(raw.end_line, raw.end_column))?;
    match stmts.len() {
        1 => Ok(stmts.pop().expect("one statement")),
        0 => Err(PlanError::parse("empty statement")),
        _ => Err(PlanError::parse("expected one statement")),
    }
}

fn bind_raw(
    catalog: &mut Catalog,
    raw: &script::RawStatement,
) -> Result<Option<Statement>, PlanError> {
    if let Some((key, value)) = &raw.set {
        return Ok(Some(Statement::Set {
            key: key.clone(),
            value: value.clone(),
        }));
    }
    if let Some(stmt) = plan_statement(catalog, raw)? {
        return Ok(Some(stmt));
    }
    let stmt = parse_one(raw)?;
    match &stmt {
        ast::Statement::CreateTable(ct) => {
            Ok(ddl::bind_create_table(catalog, ct)?.map(Statement::CreateTable))
        }
        ast::Statement::Insert(insert) => Ok(Some(Statement::Insert(query::bind_insert(
            catalog, insert,
        )?))),
        ast::Statement::Explain {
            describe_alias,
            analyze,
            statement,
            format,
            options,
            ..
        } => {
            if !matches!(describe_alias, ast::DescribeAlias::Explain) {
                return Err(PlanError::unsupported(format!(
                    "{describe_alias} is not supported (use EXPLAIN INSERT INTO ...)"
                )));
            }
            if *analyze || format.is_some() || options.is_some() {
                return Err(PlanError::unsupported(
                    "EXPLAIN options are not supported (use EXPLAIN [CHANGELOG_MODE] INSERT INTO ...)",
                ));
            }
            match statement.as_ref() {
                ast::Statement::Insert(insert) => {
                    Ok(Some(Statement::Explain(query::bind_insert(catalog, insert)?)))
                }
                other => Err(PlanError::unsupported(format!(
                    "EXPLAIN of {} is not supported (explain an INSERT INTO <sink> SELECT ... statement)",
                    script::statement_kind(other)
                ))),
            }
        }
        ast::Statement::Query(_) => Err(PlanError::unsupported(
            "a bare SELECT statement is not supported (write INSERT INTO <sink> SELECT ...)",
        )),
        other => Err(PlanError::unsupported(format!(
            "{} is not supported (the lab runs CREATE TABLE, SET, INSERT INTO and EXPLAIN)",
            script::statement_kind(other)
        ))),
    }
}

/// `COMPILE PLAN 'file' [IF NOT EXISTS] FOR <insert>` and `EXECUTE PLAN
/// 'file'`, which the parser does not know: read here, the INSERT handed on
/// with its positions kept.
fn plan_statement(
    catalog: &Catalog,
    raw: &script::RawStatement,
) -> Result<Option<Statement>, PlanError> {
    let text = &raw.text;
    let start = text.len() - text.trim_start().len();
    let upper = text.to_uppercase();
    let rest_at = |i: usize| i + (upper[i..].len() - upper[i..].trim_start().len());
    let (compile, mut i) = if upper[start..].starts_with("COMPILE PLAN") {
        (true, rest_at(start + "COMPILE PLAN".len()))
    } else if upper[start..].starts_with("EXECUTE PLAN") {
        (false, rest_at(start + "EXECUTE PLAN".len()))
    } else {
        return Ok(None);
    };
    let err = |m: &str| PlanError::parse(m.to_string()).at(raw.line, raw.column);
    // `EXECUTE PLAN IF EXISTS 'file'`: nothing to run when the file is missing.
    let mut if_exists = false;
    if !compile && upper[i..].starts_with("IF EXISTS") {
        if_exists = true;
        i = rest_at(i + "IF EXISTS".len());
    }
    if !text[i..].starts_with('\'') {
        return Err(err("expected the plan file as a quoted string after PLAN"));
    }
    let end = text[i + 1..]
        .find('\'')
        .ok_or_else(|| err("unterminated plan file string"))?
        + i
        + 1;
    let path = text[i + 1..end].to_string();
    i = rest_at(end + 1);
    if !compile {
        if !text[i..].trim().is_empty() {
            return Err(err("unexpected text after EXECUTE PLAN 'file'"));
        }
        return Ok(Some(Statement::ExecutePlan { path, if_exists }));
    }
    let mut if_not_exists = false;
    if upper[i..].starts_with("IF NOT EXISTS") {
        if_not_exists = true;
        i = rest_at(i + "IF NOT EXISTS".len());
    }
    if !upper[i..].starts_with("FOR") {
        return Err(err(
            "expected FOR INSERT INTO ... after COMPILE PLAN 'file'",
        ));
    }
    i += "FOR".len();
    // Blank out the prefix (keeping line breaks) so positions stay script positions.
    let mut insert_text: String = text[..i]
        .chars()
        .map(|c| if c == '\n' { '\n' } else { ' ' })
        .collect();
    insert_text.push_str(&text[i..]);
    let inner = script::RawStatement {
        text: insert_text,
        ..raw.clone()
    };
    match parse_one(&inner)? {
        ast::Statement::Insert(insert) => Ok(Some(Statement::CompilePlan {
            path,
            if_not_exists,
            insert: query::bind_insert(catalog, &insert)?,
        })),
        _ => Err(err("COMPILE PLAN compiles an INSERT INTO statement")),
    }
}
