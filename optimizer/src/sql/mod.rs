//! The SQL front end: parses a Flink SQL script with `sqlparser`
//! (`GenericDialect`) and binds it into [`Statement`]s over a [`Catalog`].
//!
//! A script is split into statements first (on `;` tokens), so that each
//! statement keeps its line and column in the script, `SET key = value` can be
//! read whatever the key looks like, and Flink's forms the parser does not
//! know (`EXPLAIN CHANGELOG_MODE ...`, statement sets) are read around it.
//! Each statement is then parsed and bound in order against the tables
//! created before it; the `INSERT`s between the bounds of a statement set
//! become one statement. Whatever the lab cannot run is refused with its
//! location, never skipped.
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
mod group_window;
mod hints;
mod lookup_join;
mod names;
mod nesting;
mod query;
mod rank;
mod script;
mod system_time;
mod time_clauses;
mod types;
mod window_tvf;

pub use catalog::Catalog;
pub use explain::{explain_logical, schema_string};

use crate::error::{Location, PlanError};
use crate::logical::{ExplainDetails, ExplainTarget, InsertStatement, LogicalPlan, Statement};
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
    /// The `INSERT` statements (plain, in statement sets or under
    /// `EXPLAIN`), in order.
    pub fn inserts(&self) -> impl Iterator<Item = &InsertStatement> {
        self.statements.iter().flat_map(|s| match s {
            Statement::Insert(i)
            | Statement::Explain {
                target: ExplainTarget::Insert(i),
                ..
            } => std::slice::from_ref(i),
            Statement::StatementSet(set)
            | Statement::Explain {
                target: ExplainTarget::StatementSet(set),
                ..
            } => set.as_slice(),
            _ => &[],
        })
    }

    /// How many sinks a run of the script writes: its `INSERT`s (plain or
    /// in statement sets) and `EXECUTE PLAN`s (each counted, even with
    /// `IF EXISTS`), which is what a caller naming one output file per
    /// sink needs to know before the run.
    pub fn runs(&self) -> usize {
        self.statements
            .iter()
            .map(|s| match s {
                Statement::Insert(_) | Statement::ExecutePlan { .. } => 1,
                Statement::StatementSet(set) => set.len(),
                _ => 0,
            })
            .sum()
    }

    /// The `SET` statements, in order, as `(key, value)`.
    pub fn settings(&self) -> impl Iterator<Item = (&str, &str)> {
        self.statements.iter().filter_map(|s| match s {
            Statement::Set { key, value } => Some((key.as_str(), value.as_str())),
            _ => None,
        })
    }
}

/// A statement set being read: where it began, whether it is explained,
/// and its INSERTs so far.
struct OpenSet {
    line: u64,
    column: u64,
    explain: Option<ExplainDetails>,
    inserts: Vec<InsertStatement>,
}

/// Parses and binds a whole script.
pub fn parse_script(sql: &str) -> Result<Script, PlanError> {
    let mut catalog = Catalog::default();
    let mut statements = Vec::new();
    let mut positions = Vec::new();
    let mut open: Option<OpenSet> = None;
    for raw in script::split(sql)? {
        let at = |e: PlanError| e.at(raw.line, raw.column);
        match raw.marker {
            Some(script::SetMarker::Begin) => {
                if let Some(set) = &open {
                    return Err(at(PlanError::parse(format!(
                        "a statement set cannot begin inside another (the one begun at line {}, column {} has no END yet)",
                        set.line, set.column
                    ))));
                }
                open = Some(OpenSet {
                    line: raw.line,
                    column: raw.column,
                    explain: raw.explain,
                    inserts: Vec::new(),
                });
            }
            Some(script::SetMarker::End) => {
                let Some(set) = open.take() else {
                    return Err(at(PlanError::parse(
                        "END without a statement set to end (EXECUTE STATEMENT SET BEGIN or BEGIN STATEMENT SET)",
                    )));
                };
                if set.inserts.is_empty() {
                    return Err(at(PlanError::parse(
                        "a statement set needs at least one INSERT before END",
                    )));
                }
                statements.push(match set.explain {
                    Some(details) => Statement::Explain {
                        details,
                        target: ExplainTarget::StatementSet(set.inserts),
                    },
                    None => Statement::StatementSet(set.inserts),
                });
                positions.push((set.line, set.column));
            }
            None => match &mut open {
                Some(set) => set
                    .inserts
                    .push(bind_set_member(&catalog, &raw).map_err(at)?),
                None => {
                    if let Some(stmt) = bind_raw(&mut catalog, &raw).map_err(at)? {
                        statements.push(stmt);
                        positions.push((raw.line, raw.column));
                    }
                }
            },
        }
    }
    if let Some(set) = open {
        return Err(PlanError::parse(
            "this statement set has no END (write END; after its last INSERT)",
        )
        .at(set.line, set.column));
    }
    Ok(Script {
        statements,
        catalog,
        positions,
    })
}

fn located(mut insert: InsertStatement, raw: &script::RawStatement) -> InsertStatement {
    insert.at = Some(Location {
        line: raw.line,
        column: raw.column,
    });
    insert
}

/// An INSERT of a statement set (nothing else may appear in one).
fn bind_set_member(
    catalog: &Catalog,
    raw: &script::RawStatement,
) -> Result<InsertStatement, PlanError> {
    let refuse = |what: String| {
        PlanError::unsupported(format!(
            "a statement set holds INSERT statements only, found {what} (end the set with END; first)"
        ))
    };
    if raw.set.is_some() {
        return Err(refuse("SET".into()));
    }
    if raw.explain.is_some() {
        return Err(refuse("EXPLAIN".into()));
    }
    match parse_one(raw)? {
        ast::Statement::Insert(insert) => Ok(located(query::bind_insert(catalog, &insert)?, raw)),
        other => Err(refuse(script::statement_kind(&other))),
    }
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

/// `TABLE t` as an argument of a table function (a window TVF's data), with
/// the `TABLE` blanked: the parser reads the argument as the name `t`. A
/// `PARTITION BY` after it (SESSION's `TABLE t PARTITION BY k`) becomes
/// `||` at the same place, read as `t || k` (or `t || (k1, k2)`) and bound
/// back in `sql/window_tvf.rs`; positions stay the script's.
fn table_arguments_as_names(text: &str) -> String {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::{Token, Tokenizer};
    let Ok(tokens) = Tokenizer::new(&GenericDialect {}, text).tokenize_with_location() else {
        return text.to_string();
    };
    let tokens: Vec<_> = tokens
        .into_iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    let index = script::LineIndex::new(text);
    let mut blank = Vec::new();
    let mut bars = Vec::new();
    for i in 1..tokens.len().saturating_sub(1) {
        let is_table = matches!(&tokens[i].token, Token::Word(w) if w.keyword == Keyword::TABLE && w.quote_style.is_none());
        let after_open = matches!(
            tokens[i - 1].token,
            Token::LParen | Token::Comma | Token::RArrow
        );
        let before_name = matches!(tokens[i + 1].token, Token::Word(_));
        if is_table && after_open && before_name {
            blank.push((
                index.offset(tokens[i].span.start),
                index.offset(tokens[i].span.end),
            ));
            let word = |j: usize, k: Keyword| matches!(tokens.get(j).map(|t| &t.token), Some(Token::Word(w)) if w.keyword == k && w.quote_style.is_none());
            if word(i + 2, Keyword::PARTITION) && word(i + 3, Keyword::BY) {
                let (a, b) = (
                    index.offset(tokens[i + 2].span.start),
                    index.offset(tokens[i + 3].span.end),
                );
                blank.push((a, b - 2));
                bars.extend([b - 2, b - 1]);
            }
        }
    }
    if blank.is_empty() {
        return text.to_string();
    }
    text.char_indices()
        .map(|(i, c)| {
            if bars.contains(&i) {
                '|'
            } else if blank.iter().any(|&(a, b)| i >= a && i < b) {
                ' '
            } else {
                c
            }
        })
        .collect()
}

fn parse_one(raw: &script::RawStatement) -> Result<ast::Statement, PlanError> {
    let text = system_time::as_named_argument(&table_arguments_as_names(&raw.text));
    let mut stmts = sqlparser::parser::Parser::new(&GenericDialect {})
        .try_with_sql(&text)
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
    if let Some(details) = raw.explain {
        return bind_explain(catalog, raw, details).map(Some);
    }
    if let Some(stmt) = plan_statement(catalog, raw)? {
        return Ok(Some(stmt));
    }
    let (text, clauses) = if starts_with_create(&raw.text) {
        time_clauses::extract(&raw.text)?
    } else {
        (raw.text.clone(), Default::default())
    };
    let stmt = parse_one(&script::RawStatement {
        text,
        ..raw.clone()
    })?;
    match &stmt {
        ast::Statement::CreateTable(ct) => {
            Ok(ddl::bind_create_table(catalog, ct, clauses)?.map(Statement::CreateTable))
        }
        ast::Statement::Insert(insert) => Ok(Some(Statement::Insert(located(
            query::bind_insert(catalog, insert)?,
            raw,
        )))),
        ast::Statement::Explain { .. } | ast::Statement::ExplainTable { .. } => Err(
            PlanError::unsupported(
                "this form of EXPLAIN is not supported (EXPLAIN [PLAN FOR | CHANGELOG_MODE, \
                 JSON_EXECUTION_PLAN, PLAN_ADVICE] <INSERT | SELECT | STATEMENT SET BEGIN ... END>)",
            ),
        ),
        ast::Statement::Query(_) => Err(PlanError::unsupported(
            "a bare SELECT statement is not supported (write INSERT INTO <sink> SELECT ..., or EXPLAIN SELECT ...)",
        )),
        other => Err(PlanError::unsupported(format!(
            "{} is not supported (the lab runs CREATE TABLE, SET, INSERT INTO, statement sets, \
             EXPLAIN, COMPILE PLAN and EXECUTE PLAN)",
            script::statement_kind(other)
        ))),
    }
}

/// Whether the statement is a `CREATE ...` (computed columns and the
/// watermark are read before the parser sees it).
fn starts_with_create(text: &str) -> bool {
    text.trim_start()
        .get(..6)
        .is_some_and(|w| w.eq_ignore_ascii_case("CREATE"))
}

/// `EXPLAIN [...] <statement>`: the statement (the head was read by the
/// splitter) is an INSERT or a query.
fn bind_explain(
    catalog: &Catalog,
    raw: &script::RawStatement,
    details: ExplainDetails,
) -> Result<Statement, PlanError> {
    let target = match parse_one(raw)? {
        ast::Statement::Insert(insert) => {
            ExplainTarget::Insert(located(query::bind_insert(catalog, &insert)?, raw))
        }
        ast::Statement::Query(q) => {
            ExplainTarget::Query(query::QueryBinder::new(catalog).bind_top(&q)?.plan)
        }
        other => {
            return Err(PlanError::unsupported(format!(
                "EXPLAIN of {} is not supported (explain an INSERT, a SELECT or a STATEMENT SET)",
                script::statement_kind(&other)
            )))
        }
    };
    Ok(Statement::Explain { details, target })
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
            insert: located(query::bind_insert(catalog, &insert)?, raw),
        })),
        _ => Err(err("COMPILE PLAN compiles an INSERT INTO statement")),
    }
}
