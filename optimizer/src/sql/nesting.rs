//! How deeply a statement can nest, measured on its tokens before it is
//! parsed.
//!
//! The parser builds a chain of operators (`a & b & c ...`, `x IS NULL IS
//! NULL ...`) without recursion, but the tree it builds is as deep as the
//! chain, and everything after it recurses once per level: dropping the
//! syntax tree, printing it in a message, the binder, the planner, EXPLAIN
//! and expression evaluation. A 10,000-term chain overflowed the stack.
//! So the depth is bounded before parsing, on a measure that is at least
//! the depth of any tree the tokens can make: every node of the tree owns
//! a token of its own that is not a name or a literal (an operator, a
//! keyword, a parenthesis), so counting those tokens bounds the depth.
//! Siblings do not add up: a `,` (and `WHEN`, `THEN`, `ELSE` inside a
//! `CASE`) starts a new sibling, and a closing parenthesis (or `END`)
//! ends a group, whose depth then no longer counts.
//!
//! The measure counts a comparison inside an `AND` chain (`a = 1 AND b = 2`)
//! twice per term, so it is up to about twice the real depth; the limit
//! allows for that.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan};

/// The deepest a statement may nest ([`depth`]). The binder uses about
/// 1 KiB of stack per level: 200 levels fit in a quarter of the smallest
/// stack the lab runs on (2 MiB, a spawned thread's).
pub(crate) const MAX_NESTING: usize = 200;

/// An open group: a parenthesis, bracket, brace or `CASE`, and the
/// structural tokens seen since its last separator.
struct Group {
    case: bool,
    count: usize,
}

/// A name or a literal: a leaf, owning no level.
fn is_leaf(t: &Token) -> bool {
    match t {
        Token::Word(w) => {
            w.quote_style.is_some()
                || matches!(
                    w.keyword,
                    Keyword::NoKeyword | Keyword::NULL | Keyword::TRUE | Keyword::FALSE
                )
        }
        Token::Number(..)
        | Token::SingleQuotedString(_)
        | Token::DoubleQuotedString(_)
        | Token::TripleSingleQuotedString(_)
        | Token::TripleDoubleQuotedString(_)
        | Token::DollarQuotedString(_)
        | Token::SingleQuotedByteStringLiteral(_)
        | Token::DoubleQuotedByteStringLiteral(_)
        | Token::TripleSingleQuotedByteStringLiteral(_)
        | Token::TripleDoubleQuotedByteStringLiteral(_)
        | Token::SingleQuotedRawStringLiteral(_)
        | Token::DoubleQuotedRawStringLiteral(_)
        | Token::TripleSingleQuotedRawStringLiteral(_)
        | Token::TripleDoubleQuotedRawStringLiteral(_)
        | Token::NationalStringLiteral(_)
        | Token::QuoteDelimitedStringLiteral(_)
        | Token::NationalQuoteDelimitedStringLiteral(_)
        | Token::EscapedStringLiteral(_)
        | Token::UnicodeStringLiteral(_)
        | Token::HexStringLiteral(_)
        | Token::Placeholder(_)
        | Token::Period
        | Token::Whitespace(_)
        | Token::EOF => true,
        _ => false,
    }
}

fn is_word(t: &Token, kw: Keyword) -> bool {
    matches!(t, Token::Word(w) if w.keyword == kw && w.quote_style.is_none())
}

/// The first token at which the statement `tokens` nests deeper than
/// `limit`.
pub(crate) fn too_deep<'a>(
    tokens: &[&'a TokenWithSpan],
    limit: usize,
) -> Option<&'a TokenWithSpan> {
    let mut groups = vec![Group {
        case: false,
        count: 0,
    }];
    // The depth at the current token: every open group's own level plus
    // the structural tokens of its current sibling.
    let mut depth = 0usize;
    for &t in tokens {
        let tok = &t.token;
        let nested = groups.len() > 1;
        let top = groups.last_mut().expect("the statement's group");
        match tok {
            Token::LParen | Token::LBracket | Token::LBrace => {
                groups.push(Group {
                    case: false,
                    count: 0,
                });
                depth += 1;
            }
            _ if is_word(tok, Keyword::CASE) => {
                groups.push(Group {
                    case: true,
                    count: 0,
                });
                depth += 1;
            }
            Token::RParen | Token::RBracket | Token::RBrace if nested => {
                let g = groups.pop().expect("an open group");
                depth -= g.count + 1;
            }
            _ if is_word(tok, Keyword::END) && top.case => {
                let g = groups.pop().expect("an open CASE");
                depth -= g.count + 1;
            }
            Token::Comma => {
                depth -= top.count;
                top.count = 0;
            }
            _ if top.case
                && (is_word(tok, Keyword::WHEN)
                    || is_word(tok, Keyword::THEN)
                    || is_word(tok, Keyword::ELSE)) =>
            {
                depth -= top.count;
                top.count = 0;
            }
            _ if is_leaf(tok) => {}
            _ => {
                top.count += 1;
                depth += 1;
            }
        }
        if depth > limit {
            return Some(t);
        }
    }
    None
}
