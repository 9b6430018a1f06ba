//! CSV files: rows generated for a declared schema with hostile fields
//! (extreme numbers, quotes, delimiters and line breaks inside fields,
//! unterminated quotes, missing and extra fields, byte order marks, every
//! line ending, invalid UTF-8), or the example file, mutated byte by
//! byte; read by a script with varied options (`csv`, `changelog-csv`,
//! header, delimiter) whose result is written back as CSV.

use super::seeds::clicks_csv;
use super::sql::Ty;
use crate::case::{Category, Input};
use crate::mutate::{mutate_bytes, NUMBERS, STRINGS};
use crate::rng::Rng;

const KINDS: &[&str] = &["+I", "-U", "+U", "-D", "I", "UB", "UA", "D", "+X", "", "+i"];

fn field(rng: &mut Rng, ty: Ty, delim: char) -> String {
    let plain = match (ty, rng.below(8)) {
        (_, 0) => rng.pick(NUMBERS).to_string(),
        (_, 1) => rng.pick(STRINGS).to_string(),
        (_, 2) => String::new(),
        (Ty::Int | Ty::BigInt, _) => format!("{}", rng.below(20) as i64 - 5),
        (Ty::Double, _) => rng.pick(&["1.5", " 2 ", "-0.0", "1e3", "nan"]).to_string(),
        (Ty::Bool, _) => rng.pick(&["true", "FALSE", "True", "1", "yes"]).to_string(),
        (Ty::Str, 3) => "x".repeat(rng.small_or_large(20_000)),
        (Ty::Str, _) => rng
            .pick(&["u01", "é", "a b", "🙂", "q\"q", "a,b", "l1\nl2"])
            .to_string(),
    };
    let needs_quotes = plain.contains(['"', '\n', '\r', delim]);
    match rng.below(12) {
        0 => format!("\"{}\"", plain.replace('"', "\"\"")),
        1 => format!("\"{plain}"),
        2 => format!("{plain}\""),
        _ if needs_quotes && rng.chance(0.7) => format!("\"{}\"", plain.replace('"', "\"\"")),
        _ => plain,
    }
}

/// A CSV file for `types`, and whether it starts with a header line.
fn generate(rng: &mut Rng, types: &[Ty], changelog: bool, header: bool, delim: char) -> Vec<u8> {
    let eol = *rng.pick(&["\n", "\r\n", "\r", "\n\n"]);
    let mut s = String::new();
    if rng.chance(0.05) {
        s.push('\u{feff}');
    }
    if header {
        let names: Vec<String> = (0..types.len()).map(|i| format!("c{i}")).collect();
        s += &names.join(&delim.to_string());
        s += eol;
    }
    for _ in 0..rng.small_or_large(60) {
        let mut fields = Vec::new();
        if changelog {
            fields.push(rng.pick(KINDS).to_string());
        }
        let n = match rng.below(12) {
            0 => types.len().saturating_sub(1),
            1 => types.len() + 1,
            _ => types.len(),
        };
        for k in 0..n {
            let ty = types.get(k).copied().unwrap_or(Ty::Str);
            fields.push(field(rng, ty, delim));
        }
        s += &fields.join(&delim.to_string());
        s += eol;
    }
    if rng.chance(0.2) {
        let mut at = rng.below(s.len() + 1);
        while !s.is_char_boundary(at) {
            at -= 1;
        }
        s.truncate(at);
    }
    let mut b = s.into_bytes();
    if rng.chance(0.05) {
        b.extend_from_slice(&[0xff, 0xfe, b'\n']);
    }
    b
}

/// One CSV input: the file and the script that reads it.
pub fn input(rng: &mut Rng) -> Input {
    let types: Vec<Ty> = (0..rng.range(1, 4))
        .map(|_| *rng.pick(&[Ty::Int, Ty::BigInt, Ty::Double, Ty::Str, Ty::Bool]))
        .collect();
    let changelog = rng.chance(0.25);
    let header = rng.chance(0.2);
    let delim = *rng.pick(&[',', ',', ',', ';', '\t', '|', '"']);
    let use_clicks = rng.chance(0.2);
    let types = if use_clicks {
        vec![Ty::Str, Ty::Str, Ty::Int, Ty::BigInt]
    } else {
        types
    };
    let mut csv = if use_clicks {
        clicks_csv().to_vec()
    } else {
        generate(rng, &types, changelog, header, delim)
    };
    if rng.chance(0.3) {
        csv = mutate_bytes(rng, &csv);
    }
    let cols: Vec<String> = types
        .iter()
        .enumerate()
        .map(|(i, t)| format!("c{i} {}", t.sql()))
        .collect();
    let mut opts = vec![
        "'connector' = 'filesystem'".to_string(),
        "'path' = 'input.csv'".to_string(),
        format!(
            "'format' = '{}'",
            if changelog && !use_clicks {
                "changelog-csv"
            } else {
                "csv"
            }
        ),
    ];
    if header && !use_clicks {
        opts.push("'csv.ignore-first-line' = 'true'".into());
    }
    if delim != ',' && !use_clicks {
        let d = match delim {
            '\t' => "\\t".to_string(),
            c => c.to_string(),
        };
        opts.push(format!(
            "'csv.field-delimiter' = '{}'",
            d.replace('\'', "''")
        ));
    }
    let pk = if changelog && rng.chance(0.5) {
        ", PRIMARY KEY (c0) NOT ENFORCED"
    } else {
        ""
    };
    let query = if rng.chance(0.5) {
        let names: Vec<String> = (0..types.len()).map(|i| format!("c{i}")).collect();
        format!(
            "CREATE TABLE out ({}) WITH ('connector' = 'blackhole');\nINSERT INTO out SELECT {} FROM src;\n",
            cols.join(", "),
            names.join(", ")
        )
    } else {
        format!(
            "CREATE TABLE out (c0 {}, n BIGINT) WITH ('connector' = 'blackhole');\nINSERT INTO out SELECT c0, COUNT(*) FROM src GROUP BY c0;\n",
            types[0].sql()
        )
    };
    let script = format!(
        "CREATE TABLE src ({}{pk}) WITH ({});\n{query}",
        cols.join(", "),
        opts.join(", ")
    );
    Input::new(Category::Csv)
        .with("script.sql", script)
        .with("input.csv", csv)
}
