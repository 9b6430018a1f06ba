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

/// Shorthand: `err_at(PlanError::validation(..), &node)`.
pub(crate) fn err_at(e: PlanError, node: &impl Spanned) -> PlanError {
    at(e, node.span())
}

/// The candidate nearest to `name` (case-insensitive), if reasonably near.
pub(crate) fn nearest<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let lower = name.to_lowercase();
    let mut best: Option<(f64, &str)> = None;
    for c in candidates {
        let score = strsim::normalized_damerau_levenshtein(&lower, &c.to_lowercase())
            .max(strsim::jaro_winkler(&lower, &c.to_lowercase()) - 0.15);
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
