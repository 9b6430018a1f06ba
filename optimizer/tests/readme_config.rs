//! README's configuration table is made from the registry (`KEYS` in
//! `optimizer/src/config.rs`): this test writes it with `UPDATE_README=1`
//! and otherwise fails when the two differ.

use optimizer::config::{keys, maximum, ValueType};
use std::path::Path;

const BEGIN: &str = "<!-- config-table:begin -->\n";
const END: &str = "<!-- config-table:end -->";

/// The table, one row per key in registry order.
fn table() -> String {
    let mut out = String::from("| key | type | default | what it does |\n|---|---|---|---|\n");
    for k in keys() {
        let ty = match (k.value_type, maximum(k.name)) {
            (ValueType::Enum(values), _) => format!("Enum: {}", values.join(", ")),
            (
                ValueType::Integer { min: Some(m) } | ValueType::Long { min: Some(m) },
                Some((x, _)),
            ) => {
                format!("{} ({m} to {x})", k.type_name)
            }
            (ValueType::Integer { min: Some(m) } | ValueType::Long { min: Some(m) }, None) => {
                format!("{} (>= {m})", k.type_name)
            }
            _ => k.type_name.to_string(),
        };
        let default = if k.default.is_empty() {
            "(empty)".to_string()
        } else {
            format!("`{}`", k.default)
        };
        let what = k
            .description
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        out.push_str(&format!("| `{}` | {ty} | {default} | {what} |\n", k.name));
    }
    out
}

#[test]
fn readme_config_table_is_the_registry() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let start = readme
        .find(BEGIN)
        .expect("README has the table's begin marker")
        + BEGIN.len();
    let end = readme.find(END).expect("README has the table's end marker");
    let want = table();
    if std::env::var_os("UPDATE_README").is_some() {
        let updated = format!("{}{want}{}", &readme[..start], &readme[end..]);
        std::fs::write(&path, updated).unwrap();
        return;
    }
    assert_eq!(
        &readme[start..end],
        want,
        "README's configuration table differs from the registry; \
         UPDATE_README=1 cargo test --release -p optimizer --test readme_config writes it"
    );
}
