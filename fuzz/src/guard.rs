//! What the harness will not run, only check: inputs that ask for a big
//! run (a run whose size the user asked for may be long; a fuzz input must
//! take milliseconds) and inputs that name paths outside their own
//! directory (a mutated path must not write where it pleases).

use serde_json::Value;
use std::collections::BTreeMap;

/// Most rows a run may produce, estimated from the tables' options.
const MAX_ROWS: f64 = 1e6;
/// Widest generated value (`fields.<f>.length`, `payload-length`).
const MAX_WIDTH: f64 = 10_000.0;

fn number(options: &BTreeMap<String, String>, key: &str) -> Option<f64> {
    options.get(key).and_then(|v| v.trim().parse::<f64>().ok())
}

/// The rows a table makes and how wide its generated values are, at most.
fn table_size(options: &BTreeMap<String, String>) -> (f64, f64) {
    let mut rows = 1.0f64;
    let mut any = false;
    for key in [
        "number-of-rows",
        "number-of-changes",
        "tenants",
        "rows-per-tenant",
        "lines-per-order",
    ] {
        if let Some(n) = number(options, key) {
            rows *= n.abs().max(1.0);
            any = true;
        }
    }
    let connector = options.get("connector").map(String::as_str).unwrap_or("");
    if connector == "tenant" && number(options, "tenants").is_none() {
        rows *= 10_000.0;
    }
    let mut width = number(options, "payload-length").unwrap_or(0.0);
    for (k, v) in options {
        if let Some(field) = k.strip_prefix("fields.") {
            let Ok(n) = v.trim().parse::<f64>() else {
                continue;
            };
            if field.ends_with(".length") {
                width = width.max(n.abs());
            }
            if let Some(f) = field.strip_suffix(".start") {
                let end = number(options, &format!("fields.{f}.end")).unwrap_or(n);
                let seq = (end - n).abs() + 1.0;
                if !any {
                    rows = rows.max(seq);
                }
            }
        }
    }
    if !rows.is_finite() {
        rows = f64::MAX;
    }
    (rows, width)
}

/// Whether tables with these options make a run of fuzz size; `joins`
/// (how many times a query may join) makes a worst-case product of them.
pub fn small_tables<'a>(
    tables: impl Iterator<Item = &'a BTreeMap<String, String>>,
    joins: usize,
) -> bool {
    let mut max_rows = 1.0f64;
    for options in tables {
        let (rows, width) = table_size(options);
        if width > MAX_WIDTH || rows * width.max(1.0) > MAX_ROWS * 10.0 {
            return false;
        }
        max_rows = max_rows.max(rows);
    }
    max_rows.powi(joins.min(20) as i32 + 1) <= MAX_ROWS
}

/// How many joins a script may ask for: its `JOIN` words, an upper
/// bound. (A plan joins at most its tables less one.)
pub fn joins(text: &str) -> usize {
    text.to_ascii_uppercase().matches("JOIN").count()
}

/// Whether every quoted string of `text` stays inside the input's
/// directory: no `/`, `\`, `..` or leading `~`; and no `SET` names a path
/// unquoted.
pub fn paths_safe(text: &str) -> bool {
    for quote in ['\'', '"'] {
        for (k, part) in text.split(quote).enumerate() {
            if k % 2 == 1 && !part_safe(part) {
                return false;
            }
        }
    }
    text.lines().all(|l| {
        let l = l.trim_start();
        !l.get(..3).is_some_and(|w| w.eq_ignore_ascii_case("set")) || part_safe(l)
    })
}

fn part_safe(s: &str) -> bool {
    !s.contains(['/', '\\']) && !s.contains("..") && !s.starts_with('~')
}

/// The `options` maps of every table in a compiled plan.
pub fn plan_options(doc: &Value) -> Vec<BTreeMap<String, String>> {
    let mut out = Vec::new();
    let mut stack = vec![doc];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(o) => {
                if let Some(Value::Object(opts)) = o.get("options") {
                    out.push(
                        opts.iter()
                            .map(|(k, v)| {
                                let v = match v {
                                    Value::String(s) => s.clone(),
                                    other => other.to_string(),
                                };
                                (k.clone(), v)
                            })
                            .collect(),
                    );
                }
                stack.extend(o.values());
            }
            Value::Array(a) => stack.extend(a.iter()),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn big_tables_and_joins_are_not_run() {
        let small = opts(&[("connector", "datagen"), ("number-of-rows", "300")]);
        let big = opts(&[("connector", "datagen"), ("number-of-rows", "2147483647")]);
        let wide = opts(&[("number-of-rows", "3"), ("fields.s.length", "1048576")]);
        let seq = opts(&[
            ("fields.k.start", "1"),
            ("fields.k.end", "9223372036854775807"),
        ]);
        assert!(small_tables([&small].into_iter(), 1));
        assert!(!small_tables([&small].into_iter(), 3));
        assert!(!small_tables([&big].into_iter(), 0));
        assert!(!small_tables([&wide].into_iter(), 0));
        assert!(!small_tables([&seq].into_iter(), 0));
    }

    #[test]
    fn paths_outside_the_directory_are_not_run() {
        assert!(paths_safe(
            "SELECT a / 2 FROM t /*+ STATE_TTL('t' = '1 s') */"
        ));
        assert!(!paths_safe("CREATE TABLE t WITH ('path' = '/etc/x')"));
        assert!(!paths_safe("SET lab.state.dir = /tmp"));
        assert!(!paths_safe("{\"path\": \"../x.csv\"}"));
    }
}
