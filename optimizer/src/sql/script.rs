//! Splitting a script into statements that keep their script position.
//!
//! The script is tokenized once; statements end at `;` tokens. Each
//! statement's text is padded with the newlines and spaces that precede it in
//! the script, so the parser's locations (and the AST spans the binder
//! reports) are script lines and columns without any arithmetic.
//!
//! Some forms are read here rather than by the parser, which does not know
//! them: `SET key = value` (the parser rejects unquoted keys such as
//! `table.exec.mini-batch.size`); the head of `EXPLAIN [PLAN FOR | detail,
//! ...]` (Flink's `CHANGELOG_MODE`, `JSON_EXECUTION_PLAN`, ...), whose
//! statement is handed on alone; `EXECUTE` before an `INSERT`; and the
//! bounds of a statement set: `EXECUTE STATEMENT SET BEGIN`, `EXPLAIN ...
//! STATEMENT SET BEGIN` (each followed by its first `INSERT` in the same
//! `;`-terminated piece), the SQL client's `BEGIN STATEMENT SET`, and `END`.

use super::nesting::{self, MAX_NESTING};
use crate::error::PlanError;
use crate::logical::ExplainDetails;
use sqlparser::ast;
use sqlparser::dialect::GenericDialect;
use sqlparser::keywords::{Keyword, ALL_KEYWORDS};
use sqlparser::tokenizer::{Location, Token, TokenWithSpan, Tokenizer, Whitespace};

/// Operators (and `JOIN`s) allowed in one statement: a bound on the size
/// of the plan (how deep it may nest is bounded by [`nesting`]).
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
    /// `EXPLAIN ...` before the statement (its head is not in `text`).
    pub explain: Option<ExplainDetails>,
    /// Opens or closes a statement set.
    pub marker: Option<SetMarker>,
}

/// A bound of a statement set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SetMarker {
    /// `EXECUTE STATEMENT SET BEGIN`, `EXPLAIN ... STATEMENT SET BEGIN` or
    /// `BEGIN STATEMENT SET`.
    Begin,
    /// `END`
    End,
}

/// The `EXPLAIN` details Flink knows, with what the lab makes of them.
const EXPLAIN_DETAILS: [&str; 4] = [
    "CHANGELOG_MODE",
    "ESTIMATED_COST",
    "JSON_EXECUTION_PLAN",
    "PLAN_ADVICE",
];

/// Maps script (line, column) to byte offsets.
pub(crate) struct LineIndex<'a> {
    sql: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub(crate) fn new(sql: &'a str) -> LineIndex<'a> {
        let mut starts = vec![0];
        starts.extend(sql.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { sql, starts }
    }

    pub(crate) fn offset(&self, loc: Location) -> usize {
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
                out.extend(build(&index, &current)?);
                current.clear();
            }
            _ => current.push(tok),
        }
    }
    out.extend(build(&index, &current)?);
    Ok(out)
}

fn word_is(t: &Token, kw: Keyword) -> bool {
    matches!(t, Token::Word(w) if w.keyword == kw && w.quote_style.is_none())
}

fn word_named(t: &Token, name: &str) -> bool {
    matches!(t, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(name))
}

fn build(index: &LineIndex, tokens: &[&TokenWithSpan]) -> Result<Vec<RawStatement>, PlanError> {
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
        return Ok(Vec::new());
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
    if let Some(t) = nesting::too_deep(&significant, MAX_NESTING) {
        return Err(PlanError::unsupported(format!(
            "expression nested too deeply: more than {MAX_NESTING} levels here (each \
             parenthesis, CASE, keyword and operator of a chain nests one level deeper)"
        ))
        .at(t.span.start.line, t.span.start.column));
    }
    if operators > MAX_OPERATORS {
        return Err(PlanError::unsupported(format!(
            "statement too large: {operators} operators, joins and parentheses (at most {MAX_OPERATORS})"
        ))
        .at(line, column));
    }
    let last = significant.last().expect("non-empty");
    let raw = |from: usize, explain: Option<ExplainDetails>, marker: Option<SetMarker>| {
        let text = match significant.get(from) {
            Some(t) => padded(index, t, last),
            None => String::new(),
        };
        RawStatement {
            text,
            line,
            column,
            end_line: last.span.end.line,
            end_column: last.span.end.column,
            set: None,
            explain,
            marker,
        }
    };

    // SET key = value
    if word_is(&first.token, Keyword::SET) {
        let set = parse_set(index, &significant)?;
        let mut r = raw(significant.len(), None, None);
        r.set = Some(set);
        return Ok(vec![r]);
    }

    // BEGIN STATEMENT SET (the SQL client's form) and END.
    let words = |names: &[&str]| {
        significant.len() == names.len()
            && significant
                .iter()
                .zip(names)
                .all(|(t, n)| word_named(&t.token, n))
    };
    if words(&["BEGIN", "STATEMENT", "SET"]) {
        return Ok(vec![raw(significant.len(), None, Some(SetMarker::Begin))]);
    }
    if words(&["END"]) {
        return Ok(vec![raw(significant.len(), None, Some(SetMarker::End))]);
    }
    // `INSERT ... END;`: the set's last INSERT without its ';' (an END
    // that closes no CASE).
    let count = |w: &str| {
        significant
            .iter()
            .filter(|t| word_named(&t.token, w))
            .count()
    };
    if significant.len() > 1 && word_named(&last.token, "END") && count("END") > count("CASE") {
        return Err(PlanError::parse(
            "expected ';' before END (each INSERT of a statement set ends with ';')",
        )
        .at(last.span.start.line, last.span.start.column));
    }

    // EXPLAIN [PLAN FOR | detail, ...]
    let mut i = 0;
    let mut explain = None;
    if word_is(&first.token, Keyword::EXPLAIN) {
        let (details, next) = explain_head(&significant)?;
        explain = Some(details);
        i = next;
        if i == significant.len() {
            return Err(PlanError::parse(
                "EXPLAIN of what? Expected INSERT, SELECT or STATEMENT SET BEGIN ... END",
            )
            .at(last.span.end.line, last.span.end.column));
        }
        // `EXPLAIN ANALYZE INSERT ...`, `EXPLAIN CHANGELOGMODE, ...`: an
        // option Flink does not have, before the statement.
        let t = &significant[i];
        let then = significant.get(i + 1).map(|n| &n.token);
        let statement_follows = then.is_some_and(|n| {
            *n == Token::Comma
                || ["INSERT", "SELECT", "STATEMENT", "EXECUTE", "WITH"]
                    .iter()
                    .any(|w| word_named(n, w))
        });
        if matches!(&t.token, Token::Word(w) if w.quote_style.is_none())
            && statement_follows
            && !["STATEMENT", "EXECUTE"]
                .iter()
                .any(|w| word_named(&t.token, w))
        {
            return Err(PlanError::unsupported(format!(
                "EXPLAIN {} is not supported (Flink's EXPLAIN takes PLAN FOR or the details {})",
                t.token,
                EXPLAIN_DETAILS.join(", ")
            ))
            .at(t.span.start.line, t.span.start.column));
        }
    }
    // One EXPLAIN, before what it explains: the parser reads `EXPLAIN
    // EXPLAIN ...` by recursion, a large stack frame per level, so a few
    // dozen would overflow a thread's stack before the nesting bound
    // (`nesting.rs`) saw anything deep.
    if let Some(t) = significant[i..]
        .iter()
        .find(|t| word_is(&t.token, Keyword::EXPLAIN))
    {
        return Err(PlanError::parse(
            "EXPLAIN inside a statement: EXPLAIN comes once, before the INSERT, SELECT or \
             statement set it explains",
        )
        .at(t.span.start.line, t.span.start.column));
    }
    // EXECUTE INSERT ... / EXECUTE STATEMENT SET BEGIN ... (not EXECUTE PLAN)
    let executes = word_is(&significant[i].token, Keyword::EXECUTE)
        && significant.get(i + 1).is_some_and(|t| {
            word_is(&t.token, Keyword::INSERT) || word_named(&t.token, "STATEMENT")
        });
    if executes {
        i += 1;
    }
    let opens_set = significant.len() > i + 2
        && word_named(&significant[i].token, "STATEMENT")
        && word_named(&significant[i + 1].token, "SET")
        && word_named(&significant[i + 2].token, "BEGIN");
    if opens_set {
        let at = &significant[i];
        if !executes && explain.is_none() {
            return Err(PlanError::parse(
                "expected EXECUTE STATEMENT SET BEGIN ... END (or BEGIN STATEMENT SET; ... END;)",
            )
            .at(at.span.start.line, at.span.start.column));
        }
        let body = i + 3;
        let begin = raw(significant.len(), explain, Some(SetMarker::Begin));
        let Some(b) = significant.get(body) else {
            // `... BEGIN;` then INSERTs: Flink wants the first INSERT here.
            let t = &significant[i + 2];
            return Err(PlanError::parse(
                "expected an INSERT statement after STATEMENT SET BEGIN (no ';' after BEGIN)",
            )
            .at(t.span.end.line, t.span.end.column));
        };
        let mut insert = raw(body, None, None);
        insert.line = b.span.start.line;
        insert.column = b.span.start.column;
        return Ok(vec![begin, insert]);
    }
    Ok(vec![raw(i, explain, None)])
}

/// The statement text from `from` to `last`, padded with the newlines and
/// spaces before `from` so that positions in it are script positions.
fn padded(index: &LineIndex, from: &TokenWithSpan, last: &TokenWithSpan) -> String {
    let start = index.offset(from.span.start);
    let end = index.offset(last.span.end).max(start);
    let (line, column) = (from.span.start.line, from.span.start.column);
    let mut text = String::with_capacity(end - start + line as usize + column as usize);
    text.extend(std::iter::repeat_n('\n', (line.max(1) - 1) as usize));
    text.extend(std::iter::repeat_n(' ', (column.max(1) - 1) as usize));
    text.push_str(&index.sql[start..end]);
    text
}

/// Reads `EXPLAIN [PLAN FOR | detail [, detail]...]`: the details and the
/// index of the first token after them. Flink's rules: no detail twice, and
/// `PLAN FOR` takes no details.
fn explain_head(toks: &[&TokenWithSpan]) -> Result<(ExplainDetails, usize), PlanError> {
    let at = |t: &TokenWithSpan| (t.span.start.line, t.span.start.column);
    let mut details = ExplainDetails::default();
    if toks.len() > 2 && word_named(&toks[1].token, "PLAN") && word_named(&toks[2].token, "FOR") {
        if let Some(t) = toks
            .get(3)
            .filter(|t| EXPLAIN_DETAILS.iter().any(|d| word_named(&t.token, d)))
        {
            let (l, c) = at(t);
            return Err(PlanError::parse(
                "EXPLAIN PLAN FOR takes no details (write EXPLAIN CHANGELOG_MODE, ... INSERT ...)",
            )
            .at(l, c));
        }
        return Ok((details, 3));
    }
    let mut seen: Vec<&str> = Vec::new();
    let mut i = 1;
    while let Some(t) = toks.get(i) {
        let Some(name) = EXPLAIN_DETAILS.iter().find(|d| word_named(&t.token, d)) else {
            if i > 1 && toks[i - 1].token == Token::Comma {
                let (l, c) = at(t);
                return Err(PlanError::parse(format!(
                    "expected an EXPLAIN detail after ',' ({})",
                    EXPLAIN_DETAILS.join(", ")
                ))
                .at(l, c));
            }
            break;
        };
        let (l, c) = at(t);
        if seen.contains(name) {
            return Err(PlanError::parse(format!(
                "duplicate EXPLAIN detail {name} is not allowed"
            ))
            .at(l, c));
        }
        seen.push(name);
        match *name {
            "CHANGELOG_MODE" => details.changelog_mode = true,
            "JSON_EXECUTION_PLAN" => details.json_execution_plan = true,
            "PLAN_ADVICE" => details.plan_advice = true,
            _ => {
                return Err(PlanError::unsupported(
                    "EXPLAIN ESTIMATED_COST is not supported: the lab keeps no table \
                     statistics and has no cost model, so it has no row counts or costs to \
                     print (use CHANGELOG_MODE, JSON_EXECUTION_PLAN or PLAN_ADVICE)",
                )
                .at(l, c))
            }
        }
        i += 1;
        if toks.get(i).is_some_and(|t| t.token == Token::Comma) {
            i += 1;
        }
    }
    Ok((details, i))
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
    fn explain_head_read_and_statement_kept_in_place() {
        let s = split("EXPLAIN CHANGELOG_MODE, PLAN_ADVICE INSERT INTO a SELECT 1").unwrap();
        let head = "EXPLAIN CHANGELOG_MODE, PLAN_ADVICE ";
        assert_eq!(
            s[0].text,
            format!("{}INSERT INTO a SELECT 1", " ".repeat(head.len()))
        );
        let d = s[0].explain.expect("explain");
        assert!(d.changelog_mode && d.plan_advice && !d.json_execution_plan);
        let s = split("EXPLAIN PLAN FOR SELECT 1").unwrap();
        assert_eq!(s[0].explain, Some(ExplainDetails::default()));
        assert_eq!(s[0].text.trim(), "SELECT 1");
    }

    #[test]
    fn an_explain_of_an_explain_is_refused_where_the_second_one_is() {
        let e = split("EXPLAIN\nEXPLAIN\nEXPLAIN INSERT INTO a SELECT 1").unwrap_err();
        assert_eq!(
            e.location.as_ref().map(|l| (l.line, l.column)),
            Some((2, 1)),
            "{e}"
        );
        let e = split("EXPLAIN PLAN FOR INSERT INTO a SELECT 1 FROM t WHERE EXPLAIN").unwrap_err();
        assert!(e.message.contains("EXPLAIN inside a statement"), "{e}");
    }

    #[test]
    fn explain_head_errors_are_located() {
        let e = split("EXPLAIN CHANGELOG_MODE, CHANGELOG_MODE INSERT INTO a SELECT 1").unwrap_err();
        assert!(e.message.contains("duplicate"), "{e}");
        assert_eq!(e.location.map(|l| l.column), Some(25));
        let e = split("EXPLAIN ESTIMATED_COST INSERT INTO a SELECT 1").unwrap_err();
        assert!(e.message.contains("no cost model"), "{e}");
        assert_eq!(e.location.map(|l| l.column), Some(9));
        let e = split("EXPLAIN PLAN FOR CHANGELOG_MODE INSERT INTO a SELECT 1").unwrap_err();
        assert!(e.message.contains("PLAN FOR takes no details"), "{e}");
    }

    #[test]
    fn statement_set_bounds() {
        let s = split(
            "EXECUTE STATEMENT SET BEGIN\nINSERT INTO a SELECT 1;\nINSERT INTO b SELECT 2;\nEND;",
        )
        .unwrap();
        let markers: Vec<_> = s.iter().map(|r| r.marker).collect();
        assert_eq!(
            markers,
            [Some(SetMarker::Begin), None, None, Some(SetMarker::End)]
        );
        assert_eq!((s[1].line, s[1].column), (2, 1));
        assert_eq!(s[1].text, "\nINSERT INTO a SELECT 1");
        let s = split("BEGIN STATEMENT SET; INSERT INTO a SELECT 1; END").unwrap();
        assert_eq!(s[0].marker, Some(SetMarker::Begin));
        assert_eq!(s[2].marker, Some(SetMarker::End));
        let s =
            split("EXPLAIN JSON_EXECUTION_PLAN STATEMENT SET BEGIN INSERT INTO a SELECT 1; END")
                .unwrap();
        assert!(s[0].explain.is_some_and(|d| d.json_execution_plan));
        assert_eq!(s[0].marker, Some(SetMarker::Begin));
        assert!(split("STATEMENT SET BEGIN INSERT INTO a SELECT 1; END").is_err());
    }
}
