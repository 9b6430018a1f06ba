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
//! `AND` and `OR` are counted as the chain they make: the parser builds
//! `t1 AND t2 AND ... AND tn` as a tree as deep as its operators plus its
//! deepest term, not as the sum of its terms, so a `WHERE` of 150
//! comparisons is 150 levels deep, not 300. The first term of a chain
//! counts in full on top of the rest (it also holds the clause keywords
//! before the chain, `SELECT ... WHERE`, whose nodes sit above it), and the
//! `AND` of a `BETWEEN x AND y` is the `BETWEEN`'s, not a chain's.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan};

/// The deepest a statement may nest ([`depth`]). The binder uses about
/// 1 KiB of stack per level: 200 levels fit in a quarter of the smallest
/// stack the lab runs on (2 MiB, a spawned thread's).
pub(crate) const MAX_NESTING: usize = 200;

/// An open group: a parenthesis, bracket, brace or `CASE`. It holds
/// siblings (separated by `,`, or `WHEN`/`THEN`/`ELSE` in a `CASE`); the
/// current sibling is an `AND`/`OR` chain of terms (one term when there is
/// no chain), and a term's height is its structural tokens plus the height
/// of the groups nested in it.
#[derive(Default)]
struct Group {
    case: bool,
    /// The highest sibling so far.
    siblings: usize,
    /// `AND`/`OR` operators of the current sibling's chain.
    chain: usize,
    /// The first term's height, once the chain has begun.
    first: Option<usize>,
    /// The highest term after the first.
    rest: usize,
    /// Structural tokens of the current term so far.
    term: usize,
    /// The highest group nested in the current term so far (with its own
    /// level). A path down the term passes some of its tokens (an infix
    /// operator after a group sits above it) and one nested group.
    child: usize,
    /// `BETWEEN`s waiting for their `AND`.
    between: usize,
}

impl Group {
    fn open(case: bool) -> Group {
        Group {
            case,
            ..Group::default()
        }
    }

    /// The current sibling's height if its current term is `term` high.
    fn sibling(&self, term: usize) -> usize {
        match self.first {
            None => term,
            Some(first) => self.chain + first + self.rest.max(term),
        }
    }

    /// The group's height (without its own level) if a group nested at
    /// this point reaches `inner` (with its own level).
    fn height(&self, inner: usize) -> usize {
        self.siblings
            .max(self.sibling(self.term + self.child.max(inner)))
    }

    fn structural(&mut self) {
        self.term += 1;
    }

    fn and_or(&mut self) {
        let term = self.term + self.child;
        match self.first {
            None => self.first = Some(term),
            Some(_) => self.rest = self.rest.max(term),
        }
        self.chain += 1;
        self.term = 0;
        self.child = 0;
    }

    fn next_sibling(&mut self) {
        self.siblings = self.height(0);
        *self = Group {
            case: self.case,
            siblings: self.siblings,
            ..Group::default()
        };
    }
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
    let mut groups = vec![Group::open(false)];
    for &t in tokens {
        let tok = &t.token;
        let nested = groups.len() > 1;
        let top = groups.last_mut().expect("the statement's group");
        match tok {
            Token::LParen | Token::LBracket | Token::LBrace => groups.push(Group::open(false)),
            _ if is_word(tok, Keyword::CASE) => groups.push(Group::open(true)),
            Token::RParen | Token::RBracket | Token::RBrace if nested => close(&mut groups),
            _ if is_word(tok, Keyword::END) && top.case => close(&mut groups),
            Token::Comma => top.next_sibling(),
            _ if top.case
                && (is_word(tok, Keyword::WHEN)
                    || is_word(tok, Keyword::THEN)
                    || is_word(tok, Keyword::ELSE)) =>
            {
                top.next_sibling()
            }
            _ if is_word(tok, Keyword::AND) && top.between > 0 => {
                top.between -= 1;
                top.structural();
            }
            _ if is_word(tok, Keyword::AND) || is_word(tok, Keyword::OR) => top.and_or(),
            _ if is_word(tok, Keyword::BETWEEN) => {
                top.between += 1;
                top.structural();
            }
            _ if is_leaf(tok) => {}
            _ => top.structural(),
        }
        if depth(&groups) > limit {
            return Some(t);
        }
    }
    None
}

/// Closes the innermost group: its height (with its own level) joins the
/// term it is nested in.
fn close(groups: &mut Vec<Group>) {
    let g = groups.pop().expect("an open group");
    let outer = groups.last_mut().expect("the statement's group");
    outer.child = outer.child.max(1 + g.height(0));
}

/// The statement's depth so far: each open group's height with the groups
/// inside it (every group but the statement's adds its own level). At most
/// `limit + 1` groups are open (each adds a level), so this is short.
fn depth(groups: &[Group]) -> usize {
    groups
        .iter()
        .rev()
        .fold(None, |inner: Option<usize>, g| {
            Some(g.height(inner.map_or(0, |h| h + 1)))
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::GenericDialect;
    use sqlparser::tokenizer::Tokenizer;

    /// The depth the measure gives `sql`, found as the smallest limit it
    /// passes.
    fn measure(sql: &str) -> usize {
        let tokens = Tokenizer::new(&GenericDialect {}, sql)
            .tokenize_with_location()
            .unwrap();
        let significant: Vec<&TokenWithSpan> = tokens
            .iter()
            .filter(|t| !matches!(t.token, Token::Whitespace(_)))
            .collect();
        (0..)
            .find(|&l| too_deep(&significant, l).is_none())
            .unwrap()
    }

    #[test]
    fn a_chain_counts_its_operators_and_its_deepest_terms() {
        // AND(AND(=(a,1), =(b,2)), =(c,3)): 2 ANDs, first term 1, rest 1.
        assert_eq!(measure("a = 1 AND b = 2 AND c = 3"), 4);
        let terms: Vec<String> = (0..150).map(|i| format!("c{i} = {i}")).collect();
        assert_eq!(measure(&terms.join(" AND ")), 149 + 1 + 1);
        // Without the chain, every token adds up (a chain of `+`).
        assert_eq!(measure("1 + 2 + 3 + 4"), 3);
    }

    #[test]
    fn nesting_inside_a_term_counts_under_the_chain() {
        // The parenthesised term (4 high) sits under both ANDs; the first
        // term (`a`) is a leaf.
        assert_eq!(measure("a AND ((b + 1) > 2) AND c"), 2 + 4);
        assert_eq!(measure("((((a)))) AND b"), 1 + 4);
    }

    #[test]
    fn the_and_of_between_is_not_a_chain() {
        assert_eq!(measure("a BETWEEN 1 AND 2"), 2);
        assert_eq!(measure("a BETWEEN 1 AND 2 AND b = 1"), 1 + 2 + 1);
    }

    #[test]
    fn siblings_do_not_add_up() {
        assert_eq!(measure("f(a + b, c + d + e, g)"), 1 + 2);
        assert_eq!(measure("CASE WHEN a AND b THEN 1 + 2 ELSE 3 END"), 1 + 1);
        // An infix operator after a group sits above it.
        assert_eq!(measure("((a + 1) + 1) + 1"), 5);
    }
}
