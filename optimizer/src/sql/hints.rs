//! Query hints written right after `SELECT`: `/*+ MULTI_JOIN(a, b) */` and
//! `/*+ STATE_TTL('a' = '1h', 'b' = '2d') */`. The parser hands them over as
//! raw comment text; this module parses and checks them.

use super::names::{at, did_you_mean, list};
use crate::error::PlanError;
use crate::logical::Hint;
use sqlparser::ast::OptimizerHint;
use sqlparser::dialect::GenericDialect;
use sqlparser::tokenizer::{Span, Token, Tokenizer};

pub(crate) const KNOWN_HINTS: [&str; 2] = ["MULTI_JOIN", "STATE_TTL"];

/// Parses every hint comment of a `SELECT`.
pub(crate) fn parse_hints(comments: &[OptimizerHint], span: Span) -> Result<Vec<Hint>, PlanError> {
    let mut out = Vec::new();
    for c in comments {
        if !c.prefix.is_empty() {
            continue;
        }
        out.extend(parse_hint_text(&c.text).map_err(|e| at(e, span))?);
    }
    Ok(out)
}

fn atom(t: &Token) -> Option<String> {
    match t {
        Token::Word(w) => Some(w.value.clone()),
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => Some(s.clone()),
        Token::Number(n, _) => Some(n.clone()),
        _ => None,
    }
}

/// `NAME[(item, ...)] [, NAME[(...)]]...` where an item is `x` or `k = v`.
pub(crate) fn parse_hint_text(text: &str) -> Result<Vec<Hint>, PlanError> {
    let tokens: Vec<Token> = Tokenizer::new(&GenericDialect {}, text)
        .tokenize()
        .map_err(|e| PlanError::parse(format!("in hint /*+{text}*/: {}", e.message)))?
        .into_iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    let bad = |what: &str| PlanError::parse(format!("malformed hint /*+{text}*/: {what}"));
    let mut hints = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let name = match &tokens[i] {
            Token::Word(w) => w.value.to_uppercase(),
            t => return Err(bad(&format!("expected a hint name, found '{t}'"))),
        };
        i += 1;
        let mut hint = Hint {
            name,
            args: Vec::new(),
            kv: Vec::new(),
        };
        if tokens.get(i) == Some(&Token::LParen) {
            i += 1;
            loop {
                match tokens.get(i) {
                    Some(Token::RParen) => {
                        i += 1;
                        break;
                    }
                    None => return Err(bad("missing ')'")),
                    Some(t) => {
                        let a = atom(t).ok_or_else(|| bad(&format!("unexpected '{t}'")))?;
                        i += 1;
                        if tokens.get(i) == Some(&Token::Eq) {
                            i += 1;
                            let v = tokens
                                .get(i)
                                .and_then(atom)
                                .ok_or_else(|| bad(&format!("expected a value after '{a}' =")))?;
                            i += 1;
                            hint.kv.push((a, v));
                        } else {
                            hint.args.push(a);
                        }
                        match tokens.get(i) {
                            Some(Token::Comma) => i += 1,
                            Some(Token::RParen) => {}
                            None => return Err(bad("missing ')'")),
                            Some(t) => {
                                return Err(bad(&format!("expected ',' or ')', found '{t}'")))
                            }
                        }
                    }
                }
            }
        }
        hints.push(hint);
        if tokens.get(i) == Some(&Token::Comma) {
            i += 1;
        }
    }
    Ok(hints)
}

/// Checks hint names, their argument shapes, and that every table they name
/// is one of `from_names` (the tables and aliases of the hinted `SELECT`).
pub(crate) fn validate(hints: &[Hint], from_names: &[String]) -> Result<(), PlanError> {
    for h in hints {
        if !KNOWN_HINTS.contains(&h.name.as_str()) {
            return Err(PlanError::validation(format!(
                "Unknown hint '{}'; known hints are {}.{}",
                h.name,
                KNOWN_HINTS.join(", "),
                did_you_mean(&h.name, KNOWN_HINTS)
            )));
        }
        let targets: Vec<&String> = match h.name.as_str() {
            "MULTI_JOIN" => {
                if !h.kv.is_empty() || h.args.is_empty() {
                    return Err(PlanError::validation(
                        "Hint MULTI_JOIN expects a list of tables, e.g. /*+ MULTI_JOIN(a, b, c) */",
                    ));
                }
                h.args.iter().collect()
            }
            _ => {
                if !h.args.is_empty() || h.kv.is_empty() {
                    return Err(PlanError::validation(
                        "Hint STATE_TTL expects table = TTL pairs, e.g. /*+ STATE_TTL('a' = '1h', 'b' = '2d') */",
                    ));
                }
                h.kv.iter().map(|(k, _)| k).collect()
            }
        };
        for t in targets {
            if !from_names.iter().any(|n| n.eq_ignore_ascii_case(t)) {
                return Err(PlanError::validation(format!(
                    "Hint {} names '{t}', which is not a table of this SELECT; available: {}.{}",
                    h.name,
                    list(from_names, 30),
                    did_you_mean(t, from_names.iter().map(|s| s.as_str()))
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_hints() {
        let h = parse_hint_text(" multi_join(a, `B`), STATE_TTL('a' = '1h', b='2d') ").unwrap();
        assert_eq!(h.len(), 2);
        assert_eq!(h[0].name, "MULTI_JOIN");
        assert_eq!(h[0].args, ["a", "B"]);
        assert_eq!(
            h[1].kv,
            [("a".into(), "1h".into()), ("b".into(), "2d".into())]
        );
        assert!(parse_hint_text("MULTI_JOIN(a").is_err());
        assert!(parse_hint_text("MULTI_JOIN(a b)").is_err());
    }
}
