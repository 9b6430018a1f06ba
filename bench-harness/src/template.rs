//! `${name}` templates in scripts: a campaign fills them per point of its
//! sweep, `lab run`, `lab explain` and `lab tune` from `--param name=value`.
//!
//! A parameter is `${` name `}` on one line, the name made of letters,
//! digits and `_`. `--` comments are left as they are (a `${...}` there is
//! not a parameter); inside a quoted string it is one (`'${rows}'` is how
//! a table option takes a parameter).

/// Where a template is malformed: the byte offset and what is wrong.
pub type TemplateError = (usize, String);

/// Every `${name}` of `text` with its byte offset and length, in order.
pub fn parameters(text: &str) -> Result<Vec<Parameter>, TemplateError> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut in_string = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'-' if !in_string && bytes.get(i + 1) == Some(&b'-') => {
                i = text[i..].find('\n').map_or(bytes.len(), |e| i + e);
                continue;
            }
            b'\'' => in_string = !in_string,
            b'$' if bytes.get(i + 1) == Some(&b'{') => {
                let body = &text[i + 2..];
                let end = body
                    .find(['}', '\n'])
                    .filter(|&e| body[e..].starts_with('}'))
                    .ok_or((i, "'${' without a closing '}' on the same line".to_string()))?;
                let name = body[..end].trim();
                if !is_identifier(name) {
                    return Err((
                        i,
                        format!(
                            "'${{{name}}}': expected a parameter name (letters, digits and '_')"
                        ),
                    ));
                }
                out.push(Parameter {
                    at: i,
                    len: 2 + end + 1,
                    name: name.to_string(),
                });
                i += 2 + end + 1;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    Ok(out)
}

/// One `${name}` of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parameter {
    /// Byte offset of the `$`.
    pub at: usize,
    /// Bytes from `$` to `}` inclusive.
    pub len: usize,
    pub name: String,
}

/// `text` with each parameter that `value` knows replaced; the others are
/// left as written. `text` must have passed [`parameters`].
pub fn fill<'a>(text: &str, value: impl Fn(&str) -> Option<&'a str>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for p in parameters(text).unwrap_or_default() {
        out.push_str(&text[last..p.at]);
        let end = p.at + p.len;
        out.push_str(value(&p.name).unwrap_or(&text[p.at..end]));
        last = end;
    }
    out.push_str(&text[last..]);
    out
}

/// Parses `--param name=value` flags.
pub fn parse_params(flags: &[String]) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::new();
    for f in flags {
        let Some((name, value)) = f.split_once('=') else {
            return Err(format!("--param '{f}': expected NAME=VALUE"));
        };
        let name = name.trim();
        if !is_identifier(name) {
            return Err(format!(
                "--param '{f}': '{name}' is not a parameter name (letters, digits and '_')"
            ));
        }
        if out.iter().any(|(n, _)| n == name) {
            return Err(format!("--param names '{name}' twice"));
        }
        out.push((name.to_string(), value.to_string()));
    }
    Ok(out)
}

/// Fills a script read from `path` with `--param` values: every `${name}`
/// must have a value and every value a `${name}`. Errors name the file,
/// the line and column, the parameter and the flag.
pub fn fill_script(path: &str, text: &str, params: &[(String, String)]) -> Result<String, String> {
    let used = parameters(text).map_err(|(at, msg)| {
        let (line, col) = line_col(text, at);
        format!("{path}:{line}:{col}: {msg}")
    })?;
    let missing: Vec<&Parameter> = used
        .iter()
        .filter(|p| !params.iter().any(|(n, _)| *n == p.name))
        .collect();
    if let Some(first) = missing.first() {
        let (line, col) = line_col(text, first.at);
        let mut names: Vec<&str> = missing.iter().map(|p| p.name.as_str()).collect();
        names.dedup();
        let flags: Vec<String> = names.iter().map(|n| format!("--param {n}=...")).collect();
        return Err(format!(
            "{path}:{line}:{col}: '${{{}}}' is a template parameter and has no value; \
             pass {}",
            first.name,
            flags.join(" ")
        ));
    }
    for (name, _) in params {
        if !used.iter().any(|p| p.name == *name) {
            let known: Vec<&str> = used.iter().map(|p| p.name.as_str()).collect();
            return Err(format!(
                "--param {name}: {path} has no '${{{name}}}'; its parameters: {}",
                if known.is_empty() {
                    "(none)".to_string()
                } else {
                    known.join(", ")
                }
            ));
        }
    }
    Ok(fill(text, |name| {
        params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }))
}

/// 1-based line and column (in characters) of byte offset `at`.
pub fn line_col(text: &str, at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rfind('\n')
        .map_or(before.chars().count(), |i| before[i + 1..].chars().count())
        + 1;
    (line, col)
}

/// Letters, digits and `_`, not starting with a digit.
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Result<Vec<(usize, String)>, TemplateError> {
        parameters(text).map(|v| v.into_iter().map(|p| (p.at, p.name)).collect())
    }

    #[test]
    fn parameters_outside_comments() {
        let e = p("a ${rows} b ${ skew } -- ${not_a_param\n'--${y}' ${x").unwrap_err();
        assert_eq!(
            line_col("a ${rows} b ${ skew } -- ${not_a_param\n'--${y}' ${x", e.0),
            (2, 10)
        );
        assert_eq!(
            p("a ${rows} b ${skew}").unwrap()[1],
            (12, "skew".to_string())
        );
    }

    #[test]
    fn fill_replaces_known_names() {
        let t = "'${rows}' ${ skew } -- ${rows}\n${other}";
        let out = fill(t, |n| (n == "rows" || n == "skew").then_some("7"));
        assert_eq!(out, "'7' 7 -- ${rows}\n${other}");
    }

    #[test]
    fn fill_script_names_the_parameter_and_the_flag() {
        let t = "x\n  '${rows}' '${keys}'";
        let e = fill_script("s.sql", t, &[]).unwrap_err();
        assert!(
            e.starts_with("s.sql:2:4: '${rows}' is a template parameter"),
            "{e}"
        );
        assert!(e.contains("--param rows=... --param keys=..."), "{e}");
        let e = fill_script(
            "s.sql",
            t,
            &[
                ("rows".into(), "1".into()),
                ("keys".into(), "2".into()),
                ("skew".into(), "1".into()),
            ],
        )
        .unwrap_err();
        assert!(e.contains("--param skew: s.sql has no '${skew}'"), "{e}");
        let ok = fill_script(
            "s.sql",
            t,
            &[("rows".into(), "1".into()), ("keys".into(), "2".into())],
        )
        .unwrap();
        assert_eq!(ok, "x\n  '1' '2'");
    }

    #[test]
    fn param_flags() {
        assert_eq!(
            parse_params(&["rows=10".into(), "skew=1.5".into()]).unwrap(),
            [
                ("rows".to_string(), "10".to_string()),
                ("skew".to_string(), "1.5".to_string())
            ]
        );
        assert!(parse_params(&["rows".into()])
            .unwrap_err()
            .contains("NAME=VALUE"));
        assert!(parse_params(&["a.b=1".into()]).is_err());
        assert!(parse_params(&["r=1".into(), "r=2".into()])
            .unwrap_err()
            .contains("twice"));
    }
}
