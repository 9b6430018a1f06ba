//! Campaign specs: generated from the spec format (variants, sweeps of
//! script parameters and configuration keys, `[quick]`, charts) with
//! extreme numbers and long texts, or the shipped campaigns mutated; each
//! with its script, checked as `lab campaign` checks a spec before its
//! first run.

use super::seeds::{campaign_specs, repo};
use crate::case::{Category, Input};
use crate::mutate::{Mutator, NUMBERS};
use crate::rng::Rng;

/// The script of a generated spec: a template with four parameters.
pub const TEMPLATE: &str = "CREATE TABLE src (k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '${rows}',
  'fields.k.min' = '1', 'fields.k.max' = '${keys}',
  'fields.k.distribution' = 'zipf', 'fields.k.zipf-exponent' = '${skew}',
  'seed' = '${seed}');
CREATE TABLE out (k BIGINT, n BIGINT, s BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k;
";

pub const DICTIONARY: &[&str] = &[
    "[",
    "]",
    "[[chart]]",
    "[sweep]",
    "[quick]",
    "[variants.x]",
    "=",
    "\"",
    "'",
    ",",
    "{",
    "}",
    "name",
    "script",
    "repeats",
    "description",
    "title",
    "x",
    "y",
    "series",
    "log_x",
    "log_y",
    "sink",
    "x_label",
    "y_label",
    "rows",
    "keys",
    "skew",
    "seed",
    "variant",
    "true",
    "false",
    "throughput_rows_per_s",
    "state_bytes",
    "wall_ms",
    "hotspot_factor",
    "\"parallelism.default\"",
    "\"table.exec.mini-batch.size\"",
    "\"state.backend.type\"",
    "\n",
    "#",
    "param",
    "values",
    "[[sweep]]",
    "1e400",
    "inf",
    "nan",
];

fn value_list(rng: &mut Rng, dim: &str) -> String {
    let n = match rng.below(20) {
        0 => rng.range(50, 300),
        _ => rng.range(1, 4),
    };
    let values: Vec<String> = (0..n)
        .map(|i| match (dim, rng.below(8)) {
            (_, 0) => rng.pick(NUMBERS).to_string(),
            (_, 1) => format!("\"{}\"", rng.pick(&["a", "", "1e3", "x y", "${rows}"])),
            ("skew", _) => format!("{}.{}", rng.below(3), rng.below(10)),
            ("rows", _) => (100 + i * 100).to_string(),
            _ => (i + 1).to_string(),
        })
        .collect();
    format!("[{}]", values.join(", "))
}

/// A spec of the documented format, with hostile values now and then.
pub fn generate(rng: &mut Rng) -> String {
    let mut s = String::new();
    let name = match rng.below(10) {
        0 => "x".repeat(rng.range(90, 300)),
        1 => "bad name/..".to_string(),
        _ => format!("c{}", rng.below(100)),
    };
    s += &format!("name = \"{name}\"\nscript = \"s.sql\"\n");
    if rng.chance(0.3) {
        s += "description = \"\"\"A *campaign* | with | pipes\n\"\"\"\n";
    }
    if rng.chance(0.5) {
        s += &format!(
            "repeats = {}\n",
            if rng.chance(0.3) {
                rng.pick(NUMBERS).to_string()
            } else {
                rng.range(1, 5).to_string()
            }
        );
    }
    let keys = optimizer::config::keys();
    for v in 0..rng.range(0, 3) {
        s += &format!("[variants.v{v}]\n");
        for _ in 0..rng.range(0, 2) {
            let k = rng.pick(keys);
            let value = match rng.below(4) {
                0 => rng.pick(NUMBERS).to_string(),
                _ => format!("\"{}\"", k.default),
            };
            s += &format!("\"{}\" = {value}\n", k.name);
        }
    }
    let dims = ["rows", "keys", "skew", "seed"];
    s += "[sweep]\n";
    for d in dims {
        if rng.chance(0.9) {
            s += &format!("{d} = {}\n", value_list(rng, d));
        }
    }
    if rng.chance(0.3) {
        s += &format!(
            "\"table.exec.mini-batch.size\" = {}\n",
            value_list(rng, "size")
        );
    }
    if rng.chance(0.5) {
        s += &format!(
            "[quick]\nrepeats = {}\nsweep = {{ rows = {} }}\n",
            rng.range(1, 3),
            value_list(rng, "rows")
        );
    }
    for c in 0..rng.range(0, 3) {
        let title = match rng.below(10) {
            0 => "T".repeat(rng.range(90, 200)),
            1 => "/../ é 🙂".to_string(),
            _ => format!("Chart {c}"),
        };
        s += &format!(
            "[[chart]]\ntitle = \"{title}\"\nx = \"{}\"\ny = \"{}\"\n",
            rng.pick(&dims),
            rng.pick(&[
                "throughput_rows_per_s",
                "state_bytes",
                "wall_ms",
                "nope",
                "hotspot_factor"
            ])
        );
        if rng.chance(0.3) {
            s += &format!(
                "series = \"{}\"\n",
                rng.pick(&["variant", "seed", "keys", "x"])
            );
        }
        if rng.chance(0.3) {
            s += "log_x = true\n";
        }
        if rng.chance(0.3) {
            s += "log_y = true\n";
        }
        if rng.chance(0.1) {
            s += "sink = \"out\"\n";
        }
    }
    s
}

/// A shipped campaign, its script beside it as `s.sql`.
fn shipped(rng: &mut Rng) -> (String, String) {
    let specs = campaign_specs();
    let spec = rng.pick(specs).clone();
    let mut script = TEMPLATE.to_string();
    let mut out = String::new();
    for line in spec.lines() {
        if let Some(path) = line
            .strip_prefix("script = \"")
            .and_then(|l| l.strip_suffix('"'))
        {
            let p = repo().join("campaigns").join(path);
            script = std::fs::read_to_string(p).unwrap_or(script);
            out += "script = \"s.sql\"\n";
        } else {
            out += line;
            out.push('\n');
        }
    }
    (out, script)
}

/// The mutator of spec text (donors: the shipped campaigns).
pub fn mutator() -> Mutator<'static> {
    static DONORS: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    let donors = DONORS.get_or_init(|| campaign_specs().iter().map(String::as_str).collect());
    Mutator {
        dictionary: DICTIONARY,
        chains: &[", 1", "[", "{ a = ", "\n[[chart]]"],
        donors,
    }
}

/// One spec input: `spec.toml` and its script `s.sql`.
pub fn input(rng: &mut Rng) -> Input {
    let m = mutator();
    let (spec, script) = match rng.below(10) {
        0..=3 => (generate(rng), TEMPLATE.to_string()),
        4..=6 => {
            let generated = generate(rng);
            (m.mutate(rng, &generated), TEMPLATE.to_string())
        }
        _ => {
            let (s, script) = shipped(rng);
            (m.mutate(rng, &s), script)
        }
    };
    Input::new(Category::Spec)
        .with("spec.toml", spec)
        .with("s.sql", script)
}
