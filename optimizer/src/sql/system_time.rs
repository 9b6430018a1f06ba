//! `FOR SYSTEM_TIME AS OF t.pt`, which the parser's dialect does not read
//! after a table name, rewritten before parsing into a named table
//! argument it does read: `dim FOR SYSTEM_TIME AS OF o.pt AS d` becomes
//! `dim (   SYSTEM_TIME => o.pt) AS d`, the time attribute at its place in
//! the script (a `)` takes the blank after it, or is inserted there). The
//! binder takes a table with that one argument as a lookup (`query.rs`).
//! Only a column reference (`pt` or `t.pt`) is rewritten, as Flink takes
//! only a time attribute there; anything else is left to the parser.

use super::script::LineIndex;
use sqlparser::dialect::GenericDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, Tokenizer};

/// The argument name the rewrite gives the time attribute.
pub(crate) const ARGUMENT: &str = "SYSTEM_TIME";

pub(crate) fn as_named_argument(text: &str) -> String {
    let Ok(tokens) = Tokenizer::new(&GenericDialect {}, text).tokenize_with_location() else {
        return text.to_string();
    };
    let tokens: Vec<_> = tokens
        .into_iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    let keyword = |i: usize, k: Keyword| {
        matches!(tokens.get(i).map(|t| &t.token),
            Some(Token::Word(w)) if w.keyword == k && w.quote_style.is_none())
    };
    let is_word = |i: usize| matches!(tokens.get(i).map(|t| &t.token), Some(Token::Word(_)));
    let index = LineIndex::new(text);
    // (start of FOR, start of AS, end of the time attribute)
    let mut clauses = Vec::new();
    for i in 1..tokens.len() {
        let clause = is_word(i - 1)
            && keyword(i, Keyword::FOR)
            && keyword(i + 1, Keyword::SYSTEM_TIME)
            && keyword(i + 2, Keyword::AS)
            && keyword(i + 3, Keyword::OF)
            && is_word(i + 4);
        if !clause {
            continue;
        }
        let mut last = i + 4;
        while matches!(tokens.get(last + 1).map(|t| &t.token), Some(Token::Period))
            && is_word(last + 2)
        {
            last += 2;
        }
        clauses.push((
            index.offset(tokens[i].span.start),
            index.offset(tokens[i + 2].span.start),
            index.offset(tokens[i + 3].span.start),
            index.offset(tokens[i + 3].span.end),
            index.offset(tokens[last].span.end),
        ));
    }
    if clauses.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + clauses.len());
    let mut at = 0;
    for (for_at, as_at, of_at, of_end, end) in clauses {
        out.push_str(&text[at..for_at]);
        // `FOR` -> `(  `, `SYSTEM_TIME` kept, `AS` -> `=>`, `OF` -> blanks.
        out.push_str("(  ");
        out.push_str(&text[for_at + 3..as_at]);
        out.push_str("=>");
        out.push_str(&text[as_at + 2..of_at]);
        out.push_str(&" ".repeat(of_end - of_at));
        out.push_str(&text[of_end..end]);
        out.push(')');
        at = end;
        if text[end..].starts_with([' ', '\t']) {
            at += 1;
        }
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_time_attribute_in_place() {
        let sql = "SELECT * FROM o JOIN dim FOR SYSTEM_TIME AS OF o.pt AS d ON o.k = d.id";
        let out = as_named_argument(sql);
        assert_eq!(
            out,
            "SELECT * FROM o JOIN dim (   SYSTEM_TIME =>    o.pt)AS d ON o.k = d.id"
        );
        assert_eq!(out.find("o.pt"), sql.find("o.pt"));
        let sql = "FROM o JOIN dim for system_time as of pt\nON k = id";
        assert_eq!(
            as_named_argument(sql),
            "FROM o JOIN dim (   system_time =>    pt)\nON k = id"
        );
    }

    #[test]
    fn leaves_other_text_alone() {
        let sql = "SELECT a FROM t WHERE x = 'FOR SYSTEM_TIME AS OF'";
        assert_eq!(as_named_argument(sql), sql);
    }
}
