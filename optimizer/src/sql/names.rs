//! Small helpers shared by the binders: locations, suggestions, name lists.

use crate::error::PlanError;
use sqlparser::ast::{ObjectName, Spanned};
use sqlparser::tokenizer::Span;

/// Attaches the start of `span` to `e` (if `e` has no location yet and the
/// span is known).
pub(crate) fn at(e: PlanError, span: Span) -> PlanError {
    if span.start.line > 0 {
        e.at(span.start.line, span.start.column)
    } else {
        e
    }
}

/// A bare span, for nodes (such as identifiers) that are not `Spanned`.
pub(crate) struct At(pub Span);

impl Spanned for At {
    fn span(&self) -> Span {
        self.0
    }
}

/// Shorthand: `err_at(PlanError::validation(..), &node)`. A long quoted
/// expression or name in the message is shortened ([`shorten_quoted`]).
pub(crate) fn err_at(mut e: PlanError, node: &impl Spanned) -> PlanError {
    e.message = shorten_quoted(&e.message);
    at(e, node.span())
}

/// Text between quotes (a quoted expression or name) longer than this, in
/// characters, is cut in messages: a 10,000-term expression made an
/// 80 KB message.
const MAX_QUOTED_LEN: usize = 200;

/// `msg` with every run of text between `'` quotes longer than
/// [`MAX_QUOTED_LEN`] cut to its start and its length.
pub(crate) fn shorten_quoted(msg: &str) -> String {
    if msg.len() <= MAX_QUOTED_LEN {
        return msg.to_string();
    }
    let parts: Vec<String> = msg
        .split('\'')
        .map(|part| {
            let n = part.chars().count();
            if n <= MAX_QUOTED_LEN {
                part.to_string()
            } else {
                let head: String = part.chars().take(MAX_QUOTED_LEN / 2).collect();
                format!("{head}... ({n} characters)")
            }
        })
        .collect();
    parts.join("'")
}

/// Names longer than this (in characters) get no suggestion and are
/// never suggested: comparing two names costs the product of their
/// lengths (a script of 100,000-character names took 78 s to explain).
pub(crate) const MAX_SUGGESTED_LEN: usize = 64;
/// At most this many candidates are compared with a name.
pub(crate) const MAX_CANDIDATES: usize = 1000;

/// The pairs (name, candidate) [`nearest`] compares, both lowercase: at
/// most [`MAX_CANDIDATES`], each name at most [`MAX_SUGGESTED_LEN`]
/// characters, so a suggestion costs at most
/// `MAX_CANDIDATES × MAX_SUGGESTED_LEN²` steps whatever the input.
fn compared<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> impl Iterator<Item = (String, &'a str, String)> {
    let short = |s: &str| s.chars().nth(MAX_SUGGESTED_LEN).is_none();
    let lower = short(name).then(|| name.to_lowercase());
    candidates
        .into_iter()
        .take(if lower.is_some() { MAX_CANDIDATES } else { 0 })
        .filter(move |c| short(c))
        .map(move |c| (lower.clone().unwrap_or_default(), c, c.to_lowercase()))
}

/// The candidate nearest to `name` (case-insensitive), if reasonably near.
pub(crate) fn nearest<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let mut best: Option<(f64, &str)> = None;
    for (lower, c, c_lower) in compared(name, candidates) {
        let score = strsim::normalized_damerau_levenshtein(&lower, &c_lower)
            .max(strsim::jaro_winkler(&lower, &c_lower) - 0.15);
        if best.is_none_or(|(s, _)| score > s) {
            best = Some((score, c));
        }
    }
    best.filter(|(s, _)| *s >= 0.4).map(|(_, c)| c)
}

/// `" Did you mean 'x'?"` or empty.
pub(crate) fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> String {
    match nearest(name, candidates) {
        Some(c) => format!(" Did you mean '{c}'?"),
        None => String::new(),
    }
}

/// `a, b, c` (at most `max` names, then `...`).
pub(crate) fn list<S: AsRef<str>>(names: &[S], max: usize) -> String {
    let mut s: Vec<&str> = names.iter().take(max).map(|n| n.as_ref()).collect();
    if names.len() > max {
        s.push("...");
    }
    if s.is_empty() {
        "(none)".to_string()
    } else {
        s.join(", ")
    }
}

/// A one-part object name (`t`, `` `t` ``); multi-part names are unsupported.
pub(crate) fn single_name(name: &ObjectName, what: &str) -> Result<String, PlanError> {
    match name.0.as_slice() {
        [part] => match part.as_ident() {
            Some(id) => Ok(id.value.clone()),
            None => Err(err_at(PlanError::unsupported(format!("{what} name {name}")), name)),
        },
        _ => Err(err_at(
            PlanError::unsupported(format!(
                "qualified {what} name '{name}' is not supported (the lab has one catalog and database)"
            )),
            name,
        )),
    }
}

/// Makes `names` unique as Calcite does: a repeated `x` becomes `x0`, `x1`...
pub(crate) fn uniquify(names: &mut [String]) {
    let mut seen: Vec<String> = Vec::with_capacity(names.len());
    for n in names.iter_mut() {
        if seen.iter().any(|s| s.eq_ignore_ascii_case(n)) {
            let base = n.clone();
            let mut k = 0;
            loop {
                let candidate = format!("{base}{k}");
                if !seen.iter().any(|s| s.eq_ignore_ascii_case(&candidate)) {
                    *n = candidate;
                    break;
                }
                k += 1;
            }
        }
        seen.push(n.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        assert_eq!(nearest("usr_id", ["url", "user_id", "ts"]), Some("user_id"));
        assert_eq!(nearest("TS", ["url", "user_id", "ts"]), Some("ts"));
        assert_eq!(nearest("zzzzzz", ["url", "user_id", "ts"]), None);
    }

    #[test]
    fn suggestions_cost_is_bounded_whatever_the_names() {
        let long = "a".repeat(100_000);
        let near = format!("{}b", "a".repeat(99_999));
        let many: Vec<String> = (0..5000).map(|i| format!("c{i}")).collect();
        let names = [long.as_str(), near.as_str(), "user_id"];
        let candidates = || names.iter().copied().chain(many.iter().map(String::as_str));
        // Every pair compared is short, and there are few of them.
        for name in names {
            let pairs: Vec<_> = compared(name, candidates()).collect();
            assert!(pairs.len() <= MAX_CANDIDATES);
            for (n, _, c) in &pairs {
                assert!(n.chars().count() <= MAX_SUGGESTED_LEN);
                assert!(c.chars().count() <= MAX_SUGGESTED_LEN);
            }
        }
        assert_eq!(compared(&near, candidates()).count(), 0);
        assert_eq!(nearest(&near, candidates()), None);
        assert_eq!(nearest("usr_id", candidates()), Some("user_id"));
    }

    #[test]
    fn unique_names() {
        let mut n = vec![
            "k".to_string(),
            "k".to_string(),
            "v".to_string(),
            "k".to_string(),
        ];
        uniquify(&mut n);
        assert_eq!(n, ["k", "k0", "v", "k1"]);
    }
}
