//! Configuration values as a user gives them: `SET` statements in the
//! script, `--set KEY=VALUE` and `--try KEY=V1,V2` flags; keys of the
//! registry (and misspelt, unknown, empty ones), values of each key's type
//! and extreme ones (numbers at the edges of every integer type, durations
//! that overflow, units that do not exist, unicode), run on a small script.

use crate::case::{Category, Input};
use crate::mutate::{Mutator, NUMBERS, STRINGS};
use crate::rng::Rng;
use optimizer::config::{keys, ValueType};

const DURATIONS: &[&str] = &[
    "5 s",
    "0 ms",
    "0",
    "1",
    "1 ms",
    "5s",
    "1 min",
    "2 h",
    "3 d",
    "1.5 s",
    "-1 s",
    "1 us",
    "1 ns",
    "99999999999999 d",
    "18446744073709551615 ms",
    "18446744073709551616",
    "1 fortnight",
    "s",
    " 5  S ",
];

fn value_for(rng: &mut Rng, t: ValueType) -> String {
    if rng.chance(0.15) {
        return match rng.below(3) {
            0 => rng.pick(NUMBERS).to_string(),
            1 => rng.pick(STRINGS).to_string(),
            _ => rng.pick(DURATIONS).to_string(),
        };
    }
    match t {
        ValueType::Boolean => rng
            .pick(&["true", "false", "TRUE", "False", "yes", "1", ""])
            .to_string(),
        ValueType::Integer { .. } | ValueType::Long { .. } => {
            if rng.chance(0.5) {
                rng.range(0, 12).to_string()
            } else {
                rng.pick(NUMBERS).to_string()
            }
        }
        ValueType::Duration => rng.pick(DURATIONS).to_string(),
        ValueType::MemorySize => rng
            .pick(&[
                "4 kb",
                "64mb",
                "1",
                "0",
                "8 MB",
                "2 gb",
                "1 tb",
                "3 parsecs",
                "-1",
            ])
            .to_string(),
        ValueType::Double => rng
            .pick(&["10.0", "1", "0", "-2.5", "NaN", "inf", "x"])
            .to_string(),
        ValueType::Enum(values) => {
            let v = rng.pick(values).to_string();
            match rng.below(4) {
                0 => v.to_lowercase(),
                1 => format!("{v}X"),
                _ => v,
            }
        }
        ValueType::String => rng
            .pick(&["", "state", "a b", "é", "state/../x", "."])
            .to_string(),
    }
}

/// A key and a value: mostly a known key with a value of its type.
fn pair(rng: &mut Rng) -> (String, String, ValueType) {
    let all = keys();
    let k = rng.pick(all);
    let key = match rng.below(12) {
        0 => format!("{}x", k.name),
        1 => k.name.to_uppercase(),
        2 => rng
            .pick(&["", " ", "pipeline.name", "table.exec.foo", "a=b", "é"])
            .to_string(),
        3 => k.name.replace('.', ""),
        _ => k.name.to_string(),
    };
    (key, value_for(rng, k.value_type), k.value_type)
}

/// One configuration input: `config.txt` (one `SET ...;`, `--set ...` or
/// `--try ...` per line) and the script it configures.
pub fn input(rng: &mut Rng) -> Input {
    let mut lines = Vec::new();
    for _ in 0..rng.range(1, 4) {
        let (k, v, t) = pair(rng);
        let line = match rng.below(3) {
            0 => format!(
                "SET '{}' = '{}';",
                k.replace('\'', "''"),
                v.replace('\'', "''")
            ),
            1 => format!("--set {k}={v}"),
            _ => {
                let mut values = vec![v];
                for _ in 0..rng.range(0, 2) {
                    values.push(value_for(rng, t));
                }
                if rng.chance(0.05) {
                    values = (0..rng.range(1, 40)).map(|i| i.to_string()).collect();
                }
                format!("--try {k}={}", values.join(","))
            }
        };
        lines.push(line);
    }
    // Mini-batch is checked as a whole: often enable it with the rest.
    if rng.chance(0.3) {
        lines.push("SET 'table.exec.mini-batch.enabled' = 'true';".into());
    }
    let mut text = lines.join("\n") + "\n";
    if rng.chance(0.2) {
        let m = Mutator {
            dictionary: &["=", "'", ",", ";", "SET", "--set", "--try", " "],
            chains: &[",1", " "],
            donors: &[],
        };
        text = m.mutate(rng, &text);
    }
    let script = super::sql::generate(rng);
    Input::new(Category::Config)
        .with("config.txt", text)
        .with("script.sql", script)
}
