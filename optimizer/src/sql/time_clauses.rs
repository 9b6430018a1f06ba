//! The parts of Flink's `CREATE TABLE` the parser does not know, read here:
//! computed columns (`ts AS TO_TIMESTAMP_LTZ(epoch_ms, 3)`) and the
//! watermark declaration (`WATERMARK FOR ts AS ts - INTERVAL '5' SECOND`).
//!
//! Each such item of the column list is cut out of the statement text (its
//! characters blanked, line breaks kept, with one comma next to it), so
//! the parser reads the rest as a plain `CREATE TABLE`; its expression is
//! parsed on its own from a copy of the text where everything else is
//! blanked, so every span in it is still a script position.

use super::expr::{Ctx, Scope};
use super::names::{did_you_mean, err_at, At};
use super::script::LineIndex;
use crate::error::PlanError;
use crate::logical::{Field, WatermarkSpec};
use operators::expr::{BinOp, Expr};
use operators::value::{DataType, Value};
use sqlparser::ast;
use sqlparser::dialect::GenericDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};

/// A computed column: its name, its expression and its place among the
/// declared columns (0-based, counting physical and computed columns).
pub(crate) struct ComputedColumn {
    pub position: usize,
    pub name: ast::Ident,
    pub expr: ast::Expr,
}

/// `WATERMARK FOR <rowtime> AS <expr>`.
pub(crate) struct WatermarkClause {
    pub rowtime: ast::Ident,
    pub expr: ast::Expr,
}

/// What [`extract`] took out of a `CREATE TABLE`.
#[derive(Default)]
pub(crate) struct TimeClauses {
    pub computed: Vec<ComputedColumn>,
    pub watermark: Option<WatermarkClause>,
}

fn word(t: &Token, name: &str) -> bool {
    matches!(t, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(name))
}

/// Takes the computed columns and the watermark out of the `CREATE TABLE`
/// in `text`: returns the text left for the parser and what was taken.
pub(crate) fn extract(text: &str) -> Result<(String, TimeClauses), PlanError> {
    let tokens: Vec<TokenWithSpan> = Tokenizer::new(&GenericDialect {}, text)
        .tokenize_with_location()
        .map_err(|e| PlanError::parse(e.message.clone()).at(e.location.line, e.location.column))?
        .into_iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    let mut clauses = TimeClauses::default();
    let Some(open) = tokens.iter().position(|t| t.token == Token::LParen) else {
        return Ok((text.to_string(), clauses));
    };
    // The items of the column list at depth 1: token ranges and the comma
    // that ends each (if any).
    let mut items: Vec<(usize, usize, Option<usize>)> = Vec::new();
    let mut depth = 0usize;
    let mut start = open + 1;
    for (i, t) in tokens.iter().enumerate().skip(open) {
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth -= 1;
                if depth == 0 {
                    items.push((start, i, None));
                    break;
                }
            }
            Token::Comma if depth == 1 => {
                items.push((start, i, Some(i)));
                start = i + 1;
            }
            _ => {}
        }
    }
    let index = LineIndex::new(text);
    let offset =
        |t: &TokenWithSpan, end: bool| index.offset(if end { t.span.end } else { t.span.start });
    let mut blank: Vec<(usize, usize)> = Vec::new();
    let mut column = 0usize;
    for (k, &(from, to, comma)) in items.iter().enumerate() {
        if from >= to {
            continue;
        }
        let item = &tokens[from..to];
        let watermark =
            word(&item[0].token, "WATERMARK") && item.get(1).is_some_and(|t| word(&t.token, "FOR"));
        let computed = !watermark
            && matches!(&item[0].token, Token::Word(_))
            && item
                .get(1)
                .is_some_and(|t| matches!(&t.token, Token::Word(w) if w.keyword == Keyword::AS));
        let is_column = !watermark
            && !matches!(&item[0].token, Token::Word(w) if w.quote_style.is_none()
                && matches!(w.keyword, Keyword::PRIMARY | Keyword::CONSTRAINT | Keyword::UNIQUE));
        if !(watermark || computed) {
            if is_column {
                column += 1;
            }
            continue;
        }
        let expr_from = if watermark { 4 } else { 2 };
        if watermark {
            let ok = matches!(item.get(2).map(|t| &t.token), Some(Token::Word(_)))
                && item.get(3).is_some_and(
                    |t| matches!(&t.token, Token::Word(w) if w.keyword == Keyword::AS),
                );
            if !ok {
                let t = item.get(2).unwrap_or(&item[1]);
                return Err(
                    PlanError::parse("expected WATERMARK FOR <column> AS <expression>")
                        .at(t.span.start.line, t.span.start.column),
                );
            }
        }
        let Some(first) = item.get(expr_from) else {
            let t = item.last().expect("non-empty");
            return Err(PlanError::parse("expected an expression after AS")
                .at(t.span.end.line, t.span.end.column));
        };
        let last = &item[item.len() - 1];
        let (a, b) = (offset(first, false), offset(last, true));
        let mut only: String = text
            .char_indices()
            .map(|(i, c)| {
                if c == '\n' || (i >= a && i < b) {
                    c
                } else {
                    ' '
                }
            })
            .collect();
        only.truncate(b.min(only.len()));
        let expr = sqlparser::parser::Parser::new(&GenericDialect {})
            .try_with_sql(&only)
            .and_then(|mut p| {
                let e = p.parse_expr()?;
                p.expect_token(&Token::EOF)?;
                Ok(e)
            })
            .map_err(|e| {
                super::script::map_parser_error(e).at(last.span.end.line, last.span.end.column)
            })?;
        let ident = |t: &TokenWithSpan| match &t.token {
            Token::Word(w) => ast::Ident {
                value: w.value.clone(),
                quote_style: w.quote_style,
                span: t.span,
            },
            _ => unreachable!("checked to be a word"),
        };
        if watermark {
            if clauses.watermark.is_some() {
                return Err(PlanError::validation(
                    "Multiple WATERMARK statements is not supported yet.",
                )
                .at(item[0].span.start.line, item[0].span.start.column));
            }
            clauses.watermark = Some(WatermarkClause {
                rowtime: ident(&item[2]),
                expr,
            });
        } else {
            clauses.computed.push(ComputedColumn {
                position: column,
                name: ident(&item[0]),
                expr,
            });
            column += 1;
        }
        // Blank the item and one comma next to it (the one before it, or
        // after it when it is the first item).
        let start_at = match (k, comma) {
            (0, _) => offset(&item[0], false),
            _ => offset(&tokens[from - 1], false),
        };
        let end_at = match (k, comma) {
            (0, Some(c)) => offset(&tokens[c], true),
            _ => b,
        };
        blank.push((start_at, end_at));
    }
    if blank.is_empty() {
        return Ok((text.to_string(), clauses));
    }
    let rest: String = text
        .char_indices()
        .map(|(i, c)| {
            if c != '\n' && blank.iter().any(|&(a, b)| i >= a && i < b) {
                ' '
            } else {
                c
            }
        })
        .collect();
    Ok((rest, clauses))
}

/// Puts the computed columns among the physical ones, each bound over the
/// physical columns; returns the fields, each column's expression (empty
/// when none is computed) and the primary key over the new positions.
#[allow(clippy::type_complexity)]
pub(crate) fn add_computed(
    table: &str,
    physical: Vec<Field>,
    primary_key: Option<Vec<usize>>,
    computed: Vec<ComputedColumn>,
) -> Result<(Vec<Field>, Vec<Option<Expr>>, Option<Vec<usize>>), PlanError> {
    if computed.is_empty() {
        return Ok((physical, Vec::new(), primary_key));
    }
    let scope = Scope {
        fields: physical.clone(),
        relations: vec![table.to_string()],
        group_window: None,
    };
    let mut fields = Vec::with_capacity(physical.len() + computed.len());
    let mut exprs = Vec::with_capacity(physical.len() + computed.len());
    let mut new_position = Vec::with_capacity(physical.len());
    let mut next = physical.into_iter();
    let mut pending = computed.into_iter().peekable();
    loop {
        if pending.peek().is_some_and(|c| c.position == fields.len()) {
            let c = pending.next().expect("peeked");
            if fields
                .iter()
                .chain(scope.fields.iter())
                .any(|f: &Field| f.name.eq_ignore_ascii_case(&c.name.value))
            {
                return Err(err_at(
                    PlanError::validation(format!(
                        "Duplicate column '{}' in table '{table}'",
                        c.name.value
                    )),
                    &At(c.name.span),
                ));
            }
            if is_proctime_call(&c.expr)? {
                // Flink's `TIMESTAMP_LTZ(3) NOT NULL *PROCTIME*`.
                fields.push(Field {
                    name: c.name.value.clone(),
                    qualifier: None,
                    data_type: DataType::TimestampLtz,
                    nullable: false,
                });
                exprs.push(Some(Expr::ProcTime));
                continue;
            }
            let t = Ctx::plain(&scope, "a computed column").bind(&c.expr)?;
            let Some(data_type) = t.ty else {
                return Err(err_at(
                    PlanError::validation(format!(
                        "Cannot infer the type of computed column '{}': it is NULL",
                        c.name.value
                    )),
                    &c.expr,
                ));
            };
            fields.push(Field {
                name: c.name.value.clone(),
                qualifier: None,
                data_type,
                nullable: t.nullable,
            });
            exprs.push(Some(t.expr));
            continue;
        }
        match next.next() {
            Some(f) => {
                new_position.push(fields.len());
                fields.push(f);
                exprs.push(None);
            }
            None => break,
        }
    }
    // Computed columns declared after the last physical one.
    if let Some(c) = pending.next() {
        return Err(err_at(
            PlanError::validation(format!(
                "computed column '{}' is out of place",
                c.name.value
            )),
            &At(c.name.span),
        ));
    }
    let primary_key = primary_key.map(|pk| pk.into_iter().map(|i| new_position[i]).collect());
    Ok((fields, exprs, primary_key))
}

/// Whether a computed column's expression is `PROCTIME()`, the
/// processing-time attribute; `PROCTIME` with arguments is an error.
fn is_proctime_call(e: &ast::Expr) -> Result<bool, PlanError> {
    let ast::Expr::Function(f) = e else {
        return Ok(false);
    };
    if !f.name.to_string().eq_ignore_ascii_case("PROCTIME") {
        return Ok(false);
    }
    let empty = match &f.args {
        ast::FunctionArguments::None => true,
        ast::FunctionArguments::List(l) => l.args.is_empty(),
        ast::FunctionArguments::Subquery(_) => false,
    };
    if !empty {
        return Err(err_at(
            PlanError::validation("PROCTIME() takes no arguments"),
            e,
        ));
    }
    Ok(true)
}

/// `WATERMARK FOR rowtime AS expr`: the rowtime column must be a
/// `TIMESTAMP(3)` or `TIMESTAMP_LTZ(3)` column, and so must the expression.
pub(crate) fn bind_watermark(
    table: &str,
    fields: &[Field],
    w: WatermarkClause,
) -> Result<WatermarkSpec, PlanError> {
    let rowtime = fields
        .iter()
        .position(|f| f.name == w.rowtime.value)
        .or_else(|| {
            fields
                .iter()
                .position(|f| f.name.eq_ignore_ascii_case(&w.rowtime.value))
        })
        .ok_or_else(|| {
            err_at(
                PlanError::validation(format!(
                    "The rowtime attribute field '{}' is not defined in the table schema of '{table}'.{}",
                    w.rowtime.value,
                    did_you_mean(&w.rowtime.value, fields.iter().map(|f| f.name.as_str()))
                )),
                &At(w.rowtime.span),
            )
        })?;
    let ty = fields[rowtime].data_type;
    if !ty.is_timestamp() {
        return Err(err_at(
            PlanError::validation(format!(
                "Invalid data type of time field for watermark definition. The field must be of type \
                 TIMESTAMP(3) or TIMESTAMP_LTZ(3), but the time field '{}' is {ty}",
                w.rowtime.value
            )),
            &At(w.rowtime.span),
        ));
    }
    let scope = Scope {
        fields: fields.to_vec(),
        relations: vec![table.to_string()],
        group_window: None,
    };
    let t = Ctx::plain(&scope, "WATERMARK").bind(&w.expr)?;
    if !t.ty.is_some_and(|t| t.is_timestamp()) {
        return Err(err_at(
            PlanError::validation(format!(
                "Invalid data type of expression for watermark definition. The expression must \
                 return TIMESTAMP(3) or TIMESTAMP_LTZ(3), but '{}' is {}",
                w.expr,
                t.ty.map(|t| t.sql_name()).unwrap_or("NULL")
            )),
            &w.expr,
        ));
    }
    let names: Vec<String> = fields.iter().map(|f| f.name.clone()).collect();
    let text = watermark_text(&t.expr, &names);
    Ok(WatermarkSpec {
        rowtime,
        expr: t.expr,
        text,
    })
}

/// The watermark expression as Flink prints it: `-(ts, 5000:INTERVAL
/// SECOND)` for a bounded delay, the column for a strictly ascending one.
fn watermark_text(e: &Expr, names: &[String]) -> String {
    match e {
        Expr::Binary(op @ (BinOp::Sub | BinOp::Add), l, r) => match (l.as_ref(), r.as_ref()) {
            (Expr::Column(c), Expr::Literal(Value::Int(ms))) => {
                format!("{}({}, {ms}:INTERVAL SECOND)", op.symbol(), names[*c])
            }
            _ => e.render(&|i| names[i].clone()),
        },
        _ => e.render(&|i| names[i].clone()),
    }
}
