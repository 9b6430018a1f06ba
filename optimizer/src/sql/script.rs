//! Splitting a script into statements that keep their script position.
//!
//! The script is tokenized once; statements end at `;` tokens. Each
//! statement's text is padded with the newlines and spaces that precede it in
//! the script, so the parser's locations (and the AST spans the binder
//! reports) are script lines and columns without any arithmetic.
//!
//! Two forms are handled here rather than by the parser: `SET key = value`
//! (the parser rejects unquoted keys such as `table.exec.mini-batch.size`) and
//! the `EXPLAIN` details `CHANGELOG_MODE`, `ESTIMATED_COST`, ... (blanked out
//! so that the parser sees `EXPLAIN INSERT ...`).

use crate::error::PlanError;
use sqlparser::ast;
use sqlparser::dialect::GenericDialect;
use sqlparser::keywords::{Keyword, ALL_KEYWORDS};
use sqlparser::tokenizer::{Location, Token, TokenWithSpan, Tokenizer, Whitespace};

/// Operators (and `JOIN`s) allowed in one statement. Expressions nest one
/// level per operator, and deeply nested trees would exhaust the stack of the
/// binder, the planner and expression evaluation (2 MiB on a test thread;
/// 2000 was too many once inlining changed); real queries stay far below.
const MAX_OPERATORS: usize = 500;

/// One statement of a script.
#[derive(Debug, Clone)]
pub(crate) struct RawStatement {
    /// The statement text, padded so that positions are script positions.
    pub text: String,
    /// Script line and column of the statement's first token.
    pub line: u64,
    pub column: u64,
    /// Script line and column just after the statement's last token (where
    /// "unexpected end of statement" errors point).
    pub end_line: u64,
    pub end_column: u64,
    /// For `SET key = value`: the unquoted key and value.
    pub set: Option<(String, String)>,
}

/// Maps script (line, column) to byte offsets.
struct LineIndex<'a> {
    sql: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    fn new(sql: &'a str) -> LineIndex<'a> {
        let mut starts = vec![0];
        starts.extend(sql.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { sql, starts }
    }

    fn offset(&self, loc: Location) -> usize {
        let line = (loc.line.max(1) - 1) as usize;
        let Some(&start) = self.starts.get(line) else {
            return self.sql.len();
        };
        let end = self.starts.get(line + 1).copied().unwrap_or(self.sql.len());
        let text = &self.sql[start..end];
        let col = (loc.column.max(1) - 1) as usize;
        start
            + text
                .char_indices()
                .nth(col)
                .map(|(i, _)| i)
                .unwrap_or(text.len())
    }
}

fn is_trivia(t: &Token) -> bool {
    matches!(t, Token::Whitespace(_))
}

/// A `/*+ ... */` comment is a hint, which the parser reads: not trivia for
/// the purpose of "is this statement empty", but it cannot start one either.
fn is_hint_comment(t: &Token) -> bool {
    matches!(t, Token::Whitespace(Whitespace::MultiLineComment(c)) if c.starts_with('+'))
}

/// Splits `sql` into statements; empty statements (only whitespace and
/// comments) are skipped.
pub(crate) fn split(sql: &str) -> Result<Vec<RawStatement>, PlanError> {
    let dialect = GenericDialect {};
    let tokens = Tokenizer::new(&dialect, sql)
        .tokenize_with_location()
        .map_err(|e| PlanError::parse(e.message.clone()).at(e.location.line, e.location.column))?;
    let index = LineIndex::new(sql);
    let mut out = Vec::new();
    let mut current: Vec<&TokenWithSpan> = Vec::new();
    for tok in &tokens {
        match tok.token {
            Token::SemiColon | Token::EOF => {
                if let Some(raw) = build(&index, &current)? {
                    out.push(raw);
                }
                current.clear();
            }
            _ => current.push(tok),
        }
    }
    if let Some(raw) = build(&index, &current)? {
        out.push(raw);
    }
    Ok(out)
}

fn word_is(t: &Token, kw: Keyword) -> bool {
    matches!(t, Token::Word(w) if w.keyword == kw && w.quote_style.is_none())
}

fn word_named(t: &Token, name: &str) -> bool {
    matches!(t, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(name))
}

fn build(index: &LineIndex, tokens: &[&TokenWithSpan]) -> Result<Option<RawStatement>, PlanError> {
    let significant: Vec<&TokenWithSpan> = tokens
        .iter()
        .copied()
        .filter(|t| !is_trivia(&t.token))
        .collect();
    let Some(first) = significant.first() else {
        if let Some(h) = tokens.iter().find(|t| is_hint_comment(&t.token)) {
            return Err(PlanError::parse("a hint comment outside of any statement")
                .at(h.span.start.line, h.span.start.column));
        }
        return Ok(None);
    };
    let (line, column) = (first.span.start.line, first.span.start.column);
    let operators = significant
        .iter()
        .filter(|t| {
            matches!(
                t.token,
                Token::Plus
                    | Token::Minus
                    | Token::Mul
                    | Token::Div
                    | Token::Mod
                    | Token::StringConcat
                    | Token::Eq
                    | Token::Neq
                    | Token::Lt
                    | Token::Gt
                    | Token::LtEq
                    | Token::GtEq
                    | Token::LParen
            ) || word_is(&t.token, Keyword::AND)
                || word_is(&t.token, Keyword::OR)
                || word_is(&t.token, Keyword::NOT)
                || word_is(&t.token, Keyword::JOIN)
                || word_is(&t.token, Keyword::WHEN)
        })
        .count();
    if operators > MAX_OPERATORS {
        return Err(PlanError::unsupported(format!(
            "statement too large: {operators} operators, joins and parentheses (at most {MAX_OPERATORS})"
        ))
        .at(line, column));
    }

    let start = index.offset(first.span.start);
    let last = significant.last().expect("non-empty");
    let end = index.offset(last.span.end).max(start);

    if word_is(&first.token, Keyword::CREATE) {
        if let Some(w) = significant
            .iter()
            .find(|t| word_named(&t.token, "WATERMARK"))
        {
            return Err(PlanError::unsupported(
                "WATERMARK declarations are not supported (the lab has no event time)",
            )
            .at(w.span.start.line, w.span.start.column));
        }
    }

    // SET key = value
    if word_is(&first.token, Keyword::SET) {
        let set = parse_set(index, &significant)?;
        return Ok(Some(RawStatement {
            text: String::new(),
            line,
            column,
            end_line: last.span.end.line,
            end_column: last.span.end.column,
            set: Some(set),
        }));
    }

    // EXPLAIN [CHANGELOG_MODE, ESTIMATED_COST, ...] / EXPLAIN PLAN FOR
    let mut blank: Vec<(usize, usize)> = Vec::new();
    if word_is(&first.token, Keyword::EXPLAIN) {
        let mut i = 1;
        if significant.len() > 3
            && word_named(&significant[1].token, "PLAN")
            && word_named(&significant[2].token, "FOR")
        {
            blank.push((
                index.offset(significant[1].span.start),
                index.offset(significant[2].span.end),
            ));
        } else {
            while i < significant.len() {
                let t = &significant[i].token;
                let detail = [
                    "CHANGELOG_MODE",
                    "ESTIMATED_COST",
                    "JSON_EXECUTION_PLAN",
                    "PLAN_ADVICE",
                ]
                .iter()
                .any(|d| word_named(t, d));
                if !detail {
                    break;
                }
                let s = index.offset(significant[i].span.start);
                let mut e = index.offset(significant[i].span.end);
                if i + 1 < significant.len() && significant[i + 1].token == Token::Comma {
                    e = index.offset(significant[i + 1].span.end);
                    i += 1;
                }
                blank.push((s, e));
                i += 1;
            }
        }
    }

    let mut text = String::with_capacity(end - start + line as usize + column as usize);
    text.extend(std::iter::repeat_n('\n', (line.max(1) - 1) as usize));
    text.extend(std::iter::repeat_n(' ', (column.max(1) - 1) as usize));
    let mut pos = start;
    for (s, e) in blank {
        text.push_str(&index.sql[pos..s]);
        text.extend(std::iter::repeat_n(' ', index.sql[s..e].chars().count()));
        pos = e;
    }
    text.push_str(&index.sql[pos..end]);
    Ok(Some(RawStatement {
        text,
        line,
        column,
        end_line: last.span.end.line,
        end_column: last.span.end.column,
        set: None,
    }))
}

/// `SET 'key' = 'value'`, `SET key = value`; keys and values are unquoted
/// when quoted, taken verbatim otherwise.
fn parse_set(index: &LineIndex, toks: &[&TokenWithSpan]) -> Result<(String, String), PlanError> {
    let set_tok = toks[0];
    let usage = "expected SET 'key' = 'value'";
    let Some(eq) = toks.iter().position(|t| t.token == Token::Eq) else {
        let (l, c) = match toks.get(1) {
            Some(t) => (t.span.start.line, t.span.start.column),
            None => (set_tok.span.end.line, set_tok.span.end.column),
        };
        let msg = if toks.len() == 1 {
            format!("SET without a key is not supported; {usage}")
        } else {
            format!("{usage}, found no '='")
        };
        return Err(PlanError::parse(msg).at(l, c));
    };
    let part = |from: usize, to: usize, what: &str| -> Result<String, PlanError> {
        if from >= to {
            let t = toks.get(from.min(toks.len() - 1)).unwrap_or(&set_tok);
            return Err(PlanError::parse(format!("{usage}, found no {what}"))
                .at(t.span.start.line, t.span.start.column));
        }
        if to - from == 1 {
            match &toks[from].token {
                Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => return Ok(s.clone()),
                Token::Word(w) if w.quote_style.is_some() => return Ok(w.value.clone()),
                _ => {}
            }
        }
        let s = index.offset(toks[from].span.start);
        let e = index.offset(toks[to - 1].span.end).max(s);
        Ok(index.sql[s..e].trim().to_string())
    };
    let key = part(1, eq, "key")?;
    let value = part(eq + 1, toks.len(), "value")?;
    Ok((key, value))
}

/// Maps a parser error to a `Parse` error with the script location, taken
/// from the message's trailing "at Line: X, Column: Y".
pub(crate) fn map_parser_error(e: sqlparser::parser::ParserError) -> PlanError {
    use sqlparser::parser::ParserError as P;
    let msg = match e {
        P::TokenizerError(s) | P::ParserError(s) => s,
        P::RecursionLimitExceeded => {
            return PlanError::parse("expression nested too deeply (recursion limit exceeded)")
        }
    };
    if let Some(i) = msg.rfind(" at Line: ") {
        let tail = &msg[i + " at Line: ".len()..];
        let mut parts = tail.split(", Column: ");
        let line = parts.next().and_then(|l| l.trim().parse::<u64>().ok());
        let col = parts.next().and_then(|c| c.trim().parse::<u64>().ok());
        if let (Some(l), Some(c)) = (line, col) {
            return PlanError::parse(msg[..i].to_string()).at(l, c);
        }
    }
    PlanError::parse(msg)
}

/// A short name for a statement kind, from its leading keywords
/// (`DROP TABLE`, `CREATE VIEW`, ...).
pub(crate) fn statement_kind(s: &ast::Statement) -> String {
    let text = s.to_string();
    let words: Vec<&str> = text
        .split_whitespace()
        .take_while(|w| ALL_KEYWORDS.contains(w))
        .take(3)
        .collect();
    if words.is_empty() {
        "this statement".to_string()
    } else {
        words.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_and_pads() {
        let s = split("SET 'a' = 'b';\n  SELECT 1 FROM t ; ;\n-- c\n").unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].set, Some(("a".into(), "b".into())));
        assert_eq!((s[1].line, s[1].column), (2, 3));
        assert_eq!(s[1].text, "\n  SELECT 1 FROM t");
    }

    #[test]
    fn unquoted_set() {
        let s = split("SET table.exec.mini-batch.allow-latency = 5 s").unwrap();
        assert_eq!(
            s[0].set,
            Some(("table.exec.mini-batch.allow-latency".into(), "5 s".into()))
        );
    }

    #[test]
    fn explain_details_blanked() {
        let s = split("EXPLAIN CHANGELOG_MODE, ESTIMATED_COST INSERT INTO a SELECT 1").unwrap();
        let blank = " ".repeat("CHANGELOG_MODE, ESTIMATED_COST".len());
        assert_eq!(s[0].text, format!("EXPLAIN {blank} INSERT INTO a SELECT 1"));
    }
}
