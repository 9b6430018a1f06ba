//! Report directories for `lab plot`: a spec (generated or shipped), a
//! `run.toml`, and a `results.csv` with a row per point, variant and
//! repeat whose metrics are ordinary or extreme (the ends of `f64`, NaN,
//! infinities, negative values on log axes, empty cells), rows repeated
//! many times, long values; then often mutated as text.

use super::spec;
use crate::case::{Category, Input};
use crate::mutate::{Mutator, NUMBERS};
use crate::rng::Rng;
use bench_harness::campaign::spec::Spec;
use std::path::Path;

fn metric_value(rng: &mut Rng) -> String {
    match rng.below(12) {
        0 => rng.pick(NUMBERS).to_string(),
        1 => String::new(),
        2 => format!("-{}", rng.below(100)),
        _ => format!("{}.{}", rng.below(100_000), rng.below(100)),
    }
}

/// `results.csv` for `spec`: every run of its full plan, a row each.
fn results(rng: &mut Rng, spec: &Spec) -> String {
    let columns = spec.columns();
    let plan = spec.plan(rng.chance(0.3));
    let dims = spec.dims.len();
    let mut rows = vec![columns.join(",")];
    let variants: Vec<String> = if spec.variants.is_empty() {
        vec!["default".into()]
    } else {
        spec.variants.iter().map(|v| v.name.clone()).collect()
    };
    'all: for p in &plan.points {
        for r in 1..=plan.repeats.min(5) {
            for v in &variants {
                let mut row = vec![
                    spec.name.clone(),
                    p.id.to_string(),
                    v.clone(),
                    r.to_string(),
                    if rng.chance(0.05) {
                        "other".into()
                    } else {
                        "out".into()
                    },
                ];
                row.extend(p.values.iter().cloned());
                while row.len() < 5 + dims {
                    row.push("1".into());
                }
                while row.len() < columns.len() {
                    row.push(metric_value(rng));
                }
                rows.push(row.join(","));
                if rows.len() > 400 {
                    break 'all;
                }
            }
        }
    }
    if rng.chance(0.1) && rows.len() > 1 {
        // Every row many times (a results file edited by hand or script).
        let body: Vec<String> = rows[1..].to_vec();
        for _ in 0..rng.range(10, 200) {
            rows.extend(body.iter().cloned());
        }
    }
    rows.join("\n") + "\n"
}

/// One report: `spec.toml`, `run.toml` and `results.csv`.
pub fn input(rng: &mut Rng) -> Input {
    let spec_text = if rng.chance(0.7) {
        spec::generate(rng)
    } else {
        rng.pick(super::seeds::campaign_specs()).clone()
    };
    let results_text = match Spec::parse(Path::new("spec.toml"), spec_text.clone()) {
        Ok(spec) => results(rng, &spec),
        Err(_) => "campaign,point,variant,repeat,sink\n".to_string(),
    };
    let mut run = format!(
        "command = \"lab campaign c.toml\"\nquick = {}\n",
        rng.chance(0.3)
    );
    if rng.chance(0.3) {
        run += "started = \"2024-01-01T00:00:00Z\"\n";
    }
    if rng.chance(0.1) {
        run += "baseline = \"before\"\n";
    }
    let cells = Mutator {
        dictionary: &[
            ",", "\n", "\"", "NaN", "inf", "-inf", "1e308", "-1e308", "5e-324", "0", "-0", "",
        ],
        chains: &[",1", "\n"],
        donors: &[],
    };
    let (mut spec_out, mut results_out, mut run_out) = (spec_text, results_text, run);
    match rng.below(8) {
        0 | 1 => results_out = cells.mutate(rng, &results_out),
        2 => spec_out = spec::mutator().mutate(rng, &spec_out),
        3 => run_out = cells.mutate(rng, &run_out),
        _ => {}
    }
    Input::new(Category::Results)
        .with("spec.toml", spec_out)
        .with("run.toml", run_out)
        .with("results.csv", results_out)
}
