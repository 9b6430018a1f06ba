//! The shipped examples and campaigns, as seeds for mutation: read once
//! from the repository, their templates filled and their sizes made small
//! (a seed must run in milliseconds).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read_dir_sorted(dir: &Path, ext: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .filter_map(|p| {
            let text = std::fs::read_to_string(&p).ok()?;
            Some((p.file_name()?.to_string_lossy().into_owned(), text))
        })
        .collect();
    out.sort();
    out
}

/// A small value for a template parameter of the examples.
fn param_value(name: &str) -> &'static str {
    match name {
        "skew" => "1.1",
        "hot_share" | "update_ratio" => "0.5",
        "rows" => "200",
        "cache" => "PARTIAL",
        _ => "3",
    }
}

/// `text` with `${name}` filled and every quoted integer of 1000 or more
/// made 100.
pub fn small(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("${") {
        s.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        match after.find('}') {
            Some(j) => {
                s.push_str(param_value(&after[..j]));
                rest = &after[j + 1..];
            }
            None => {
                s.push_str("${");
                rest = after;
            }
        }
    }
    s.push_str(rest);
    let mut out = String::with_capacity(s.len());
    let mut parts = s.split('\'');
    if let Some(first) = parts.next() {
        out.push_str(first);
    }
    for (k, p) in parts.enumerate() {
        out.push('\'');
        let quoted = k % 2 == 0;
        let big = quoted && p.len() >= 4 && p.bytes().all(|b| b.is_ascii_digit());
        out.push_str(if big { "100" } else { p });
    }
    out
}

/// The example scripts (`examples/*.sql`), small.
pub fn example_scripts() -> &'static [String] {
    static SCRIPTS: OnceLock<Vec<String>> = OnceLock::new();
    SCRIPTS.get_or_init(|| {
        read_dir_sorted(&repo().join("examples"), "sql")
            .into_iter()
            .map(|(_, t)| small(&t))
            .collect()
    })
}

/// The shipped campaign specs (`campaigns/*.toml`).
pub fn campaign_specs() -> &'static [String] {
    static SPECS: OnceLock<Vec<String>> = OnceLock::new();
    SPECS.get_or_init(|| {
        read_dir_sorted(&repo().join("campaigns"), "toml")
            .into_iter()
            .map(|(_, t)| t)
            .collect()
    })
}

/// `examples/clicks.csv`, which scripts read as `clicks.csv`.
pub fn clicks_csv() -> &'static [u8] {
    static CLICKS: OnceLock<Vec<u8>> = OnceLock::new();
    CLICKS.get_or_init(|| std::fs::read(repo().join("examples/clicks.csv")).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    #[test]
    fn seeds_are_small() {
        assert_eq!(
            super::small("'number-of-rows' = '${rows}', 'x' = '2000000', 'seed' = '42'"),
            "'number-of-rows' = '200', 'x' = '100', 'seed' = '42'"
        );
        assert!(!super::example_scripts().is_empty());
        assert!(!super::campaign_specs().is_empty());
    }
}
