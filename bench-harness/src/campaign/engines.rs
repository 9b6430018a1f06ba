//! A campaign's variants on the lab against their twins on Flink.
//!
//! Two variants are *twins* when they run the same sinks with the same
//! configuration and differ only in their engine (`engine` in the spec, or
//! `--engine`, as `results.csv`'s `engine` column records it). For a
//! campaign with twins, `index.md` gets a section "Lab and Flink" with:
//!
//! - the lab's speed relative to Flink's on the same work: per point, sink
//!   and twin, each engine's throughput (median [min–max]) and the lab's
//!   over Flink's with its 95% interval (runs paired by repeat: they ran
//!   interleaved), and whether both sinks received as many changelog rows;
//! - per *strategy*, a pair of lab variants that differ in one
//!   configuration key whose Flink twins differ in the same way: the ratio
//!   measured on the lab and the ratio measured on Flink, each with its
//!   interval and verdict ([`crate::stats`]), and whether they agree;
//!   throughput, and state (the lab's `state_bytes` against Flink's
//!   `flink_checkpointed_state_bytes`, when Flink took checkpoints).

use super::cells;
use super::metrics::{metric, Metric};
use super::report_data::Data;
use super::spec::{Spec, Variant};
use crate::stats::{Ratio, Verdict};
use std::fmt::Write as _;

/// A lab variant and its Flink twin.
struct Twin<'a> {
    lab: &'a Variant,
    flink: &'a Variant,
}

/// Two twins whose configurations differ in one key.
struct Strategy<'a> {
    from: &'a Twin<'a>,
    to: &'a Twin<'a>,
    key: String,
    from_value: String,
    to_value: String,
}

fn sorted_settings(v: &Variant) -> Vec<(String, String)> {
    let mut s = v.settings.clone();
    s.sort();
    s
}

fn sorted_sinks(v: &Variant) -> Option<Vec<String>> {
    v.sinks.clone().map(|mut s| {
        s.sort();
        s
    })
}

fn twins<'a>(spec: &'a Spec, data: &Data) -> Vec<Twin<'a>> {
    let on = |v: &Variant, engine: &str| data.engine_of(&v.name) == Some(engine);
    spec.variants
        .iter()
        .filter(|v| on(v, "lab"))
        .filter_map(|lab| {
            spec.variants
                .iter()
                .find(|f| {
                    on(f, "flink")
                        && sorted_settings(f) == sorted_settings(lab)
                        && sorted_sinks(f) == sorted_sinks(lab)
                })
                .map(|flink| Twin { lab, flink })
        })
        .collect()
}

fn setting<'a>(v: &'a Variant, key: &str) -> &'a str {
    v.settings
        .iter()
        .find(|(k, _)| k == key)
        .map_or("(default)", |(_, v)| v.as_str())
}

fn strategies<'a>(twins: &'a [Twin<'a>]) -> Vec<Strategy<'a>> {
    let mut out = Vec::new();
    for (i, a) in twins.iter().enumerate() {
        for b in &twins[i + 1..] {
            if sorted_sinks(a.lab) != sorted_sinks(b.lab) {
                continue;
            }
            let mut keys: Vec<&str> = a
                .lab
                .settings
                .iter()
                .chain(&b.lab.settings)
                .map(|(k, _)| k.as_str())
                .collect();
            keys.sort_unstable();
            keys.dedup();
            let differ: Vec<&str> = keys
                .into_iter()
                .filter(|k| setting(a.lab, k) != setting(b.lab, k))
                .collect();
            if let [key] = differ[..] {
                out.push(Strategy {
                    from: a,
                    to: b,
                    key: key.to_string(),
                    from_value: setting(a.lab, key).to_string(),
                    to_value: setting(b.lab, key).to_string(),
                });
            }
        }
    }
    out
}

/// The sinks both variants ran at a point, in the report's order.
fn shared_sinks(data: &Data, point: usize, a: &Variant, b: &Variant, m: &Metric) -> Vec<String> {
    data.sinks
        .iter()
        .filter(|s| {
            !data.values(point, &a.name, s, m).is_empty()
                && !data.values(point, &b.name, s, m).is_empty()
        })
        .cloned()
        .collect()
}

fn direction(estimate: f64) -> i8 {
    if estimate > 1.0 {
        1
    } else if estimate < 1.0 {
        -1
    } else {
        0
    }
}

/// The verdict on a ratio as a direction, when it is one.
fn decided(r: &Ratio, exact_counter: bool) -> Option<i8> {
    if exact_counter && r.low == r.high {
        return Some(direction(r.estimate));
    }
    match r.verdict() {
        Verdict::Higher => Some(1),
        Verdict::Lower => Some(-1),
        Verdict::Same => Some(0),
        Verdict::TooFew | Verdict::Unknown => None,
    }
}

/// How far apart two state sizes may be and still count as the same: the
/// engines count bytes differently (the lab's logical key and value
/// bytes, Flink's serialized snapshot), so only a change of more than 10%
/// counts.
const STATE_TOLERANCE: f64 = 1.1;

fn state_direction(estimate: f64) -> i8 {
    if estimate > STATE_TOLERANCE {
        1
    } else if estimate < 1.0 / STATE_TOLERANCE {
        -1
    } else {
        0
    }
}

/// Whether a state size ratio on the lab agrees with Flink's: the same
/// direction beyond ±10%.
pub fn state_agreement(lab: &Ratio, flink: &Ratio) -> &'static str {
    match (
        state_direction(lab.estimate),
        state_direction(flink.estimate),
    ) {
        (0, 0) => "yes: neither changes by more than 10%",
        (a, b) if a == b => "yes",
        _ => "no",
    }
}

/// Whether the ratio measured on the lab agrees with the one on Flink.
pub fn agreement(lab: &Ratio, flink: &Ratio, lab_exact: bool, flink_exact: bool) -> &'static str {
    match (decided(lab, lab_exact), decided(flink, flink_exact)) {
        (Some(0), Some(0)) => "yes: neither beyond noise",
        (Some(a), Some(b)) if a == b => {
            if lab.low <= flink.high && flink.low <= lab.high {
                "yes"
            } else {
                "same direction, sizes differ"
            }
        }
        (Some(_), Some(_)) => "no",
        _ if direction(lab.estimate) == direction(flink.estimate) => {
            "medians agree in direction; too few runs to tell"
        }
        _ => "medians point opposite ways; too few runs to tell",
    }
}

fn ratio_cell(r: Option<&Ratio>, m: &Metric) -> String {
    match r {
        Some(r) => format!("{} {}", cells::ratio(r), cells::verdict(r, m)),
        None => "–".to_string(),
    }
}

struct Comparison {
    point: usize,
    sink: String,
    what: String,
    lab: Option<Ratio>,
    flink: Option<Ratio>,
    agree: String,
}

/// Each strategy's ratio of `lab_metric` on the lab and of `flink_metric`
/// on Flink, per point and sink; `state` compares sizes within ±10%.
fn compare(
    data: &Data,
    strategies: &[Strategy],
    lab_metric: &Metric,
    flink_metric: &Metric,
    state: bool,
) -> Vec<Comparison> {
    let mut out = Vec::new();
    for (point, _) in &data.points {
        for s in strategies {
            for sink in shared_sinks(data, *point, s.from.lab, s.to.lab, lab_metric) {
                let lab = data.ratio(*point, &s.from.lab.name, &s.to.lab.name, &sink, lab_metric);
                let flink = data.ratio(
                    *point,
                    &s.from.flink.name,
                    &s.to.flink.name,
                    &sink,
                    flink_metric,
                );
                let agree = match (&lab, &flink) {
                    (Some(l), Some(f)) if state => state_agreement(l, f).to_string(),
                    (Some(l), Some(f)) => {
                        agreement(l, f, !lab_metric.timed(), !flink_metric.timed()).to_string()
                    }
                    _ => "–".to_string(),
                };
                out.push(Comparison {
                    point: *point,
                    sink,
                    what: format!(
                        "`{}`: {} → {} (`{}` → `{}`)",
                        s.key, s.from_value, s.to_value, s.from.lab.name, s.to.lab.name
                    ),
                    lab,
                    flink,
                    agree,
                });
            }
        }
    }
    out
}

fn md(s: &str) -> String {
    s.replace('|', "\\|")
}

/// `index.md`'s section on the lab and Flink; `None` without twins.
pub(super) fn section(spec: &Spec, data: &Data) -> Option<String> {
    let twins = twins(spec, data);
    if twins.is_empty() {
        return None;
    }
    let tp = metric("throughput_rows_per_s")?;
    let rows = metric("changelog_rows")?;
    let mut s = String::new();
    let _ = writeln!(s, "## Lab and Flink\n");
    let _ = writeln!(
        s,
        "Twins are variants that run the same sinks with the same configuration on the two \
         engines: {}.\n",
        twins
            .iter()
            .map(|t| format!("`{}` and `{}`", t.lab.name, t.flink.name))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(s, "### The lab's speed relative to Flink's\n");
    let _ = writeln!(
        s,
        "Throughput on the same work, median [min–max] of the repeats on each engine, and the \
         lab's over Flink's [95% bootstrap interval, runs paired by repeat]. Flink's wall time \
         runs from the job's start (deployment included) to its sinks' end of input; the lab's \
         from its first source read. Changelog rows: whether the sinks received as many rows on \
         both engines (joins of several inputs may differ: Flink's sources race, the lab reads \
         them in a fixed order, `lab.source.delivery`); when they differ, the engines did \
         different work, and the lab's speed per changelog row over Flink's is the ratio times \
         the lab's rows over Flink's.\n"
    );
    let _ = writeln!(
        s,
        "| point | sink | twins | lab | Flink | lab ÷ Flink | changelog rows |\n\
         |---|---|---|---:|---:|---:|---|"
    );
    for (point, params) in &data.points {
        for t in &twins {
            for sink in shared_sinks(data, *point, t.lab, t.flink, tp) {
                let spread = |v: &Variant| {
                    data.spread(*point, &v.name, &sink, tp)
                        .map_or("–".to_string(), |sp| cells::spread(&sp, tp))
                };
                let speed = data.ratio(*point, &t.flink.name, &t.lab.name, &sink, tp);
                let ratio = speed.as_ref().map_or("–".to_string(), cells::ratio);
                let count = |v: &Variant| {
                    data.spread(*point, &v.name, &sink, rows)
                        .map(|sp| sp.median)
                };
                let counts = changelog_cell(
                    rows,
                    count(t.lab),
                    count(t.flink),
                    speed.map(|r| r.estimate),
                );
                let _ = writeln!(
                    s,
                    "| {} | {} | `{}`, `{}` | {} | {} | {} | {} |",
                    md(&short_label(spec, data, *point, params)),
                    md(&sink),
                    t.lab.name,
                    t.flink.name,
                    spread(t.lab),
                    spread(t.flink),
                    ratio,
                    counts
                );
            }
        }
    }
    let strategies = strategies(&twins);
    if strategies.is_empty() {
        return Some(s);
    }
    let _ = writeln!(s, "\n### Strategies: does the lab's ratio hold on Flink?\n");
    let _ = writeln!(
        s,
        "For each pair of twins that differ in one configuration key: the ratio of the second \
         to the first measured on the lab and measured on Flink, each with its 95% interval and \
         whether it is beyond noise. They agree when both verdicts say the same (higher, lower, \
         or no difference beyond noise) and the intervals overlap; with too few runs for a \
         verdict, only the medians' directions are compared.\n"
    );
    let table = |s: &mut String, title: &str, rows: &[Comparison], lm: &Metric, fm: &Metric| {
        let _ = writeln!(s, "#### {title}\n");
        let _ = writeln!(
            s,
            "| point | sink | strategy | on the lab | on Flink | agree? |\n|---|---|---|---|---|---|"
        );
        for c in rows {
            let label = data
                .points
                .iter()
                .find(|(p, _)| *p == c.point)
                .map_or(String::new(), |(p, params)| {
                    short_label(spec, data, *p, params)
                });
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} |",
                md(&label),
                md(&c.sink),
                md(&c.what),
                ratio_cell(c.lab.as_ref(), lm),
                ratio_cell(c.flink.as_ref(), fm),
                c.agree
            );
        }
        s.push('\n');
    };
    let throughput = compare(data, &strategies, tp, tp, false);
    table(&mut s, "Throughput", &throughput, tp, tp);
    let agree = throughput
        .iter()
        .filter(|c| c.agree.starts_with("yes"))
        .count();
    let disagree = throughput.iter().filter(|c| c.agree == "no").count();
    let _ = writeln!(
        s,
        "{agree} of {} throughput ratios agree, {disagree} disagree; the others differ in size \
         only or have too few runs to tell.\n",
        throughput.len()
    );
    if let (Some(lab_state), Some(flink_state)) = (
        metric("state_bytes"),
        metric("flink_checkpointed_state_bytes"),
    ) {
        // The lab counts the same logical bytes on both backends; Flink's
        // checkpoints are each backend's own format: no backend pairs here.
        let same_backend: Vec<Strategy> = strategies
            .iter()
            .filter(|st| st.key != optimizer::config::STATE_BACKEND_TYPE)
            .map(|st| Strategy {
                from: st.from,
                to: st.to,
                key: st.key.clone(),
                from_value: st.from_value.clone(),
                to_value: st.to_value.clone(),
            })
            .collect();
        let state: Vec<Comparison> = compare(data, &same_backend, lab_state, flink_state, true)
            .into_iter()
            .filter(|c| c.flink.is_some())
            .collect();
        if !state.is_empty() {
            table(
                &mut s,
                "State size (the lab's live state bytes; Flink's final checkpoint)",
                &state,
                lab_state,
                flink_state,
            );
            let _ = writeln!(
                s,
                "The engines count state differently (the lab: encoded key and value bytes of \
                 the live state, the same on both backends; Flink: its final checkpoint, each \
                 backend's own format, RocksDB's files with versions not yet compacted), so \
                 a state ratio agrees when both change the same way by more than 10%, or \
                 neither does. Backend pairs are left out.\n"
            );
        }
    }
    Some(s)
}

/// The point's id and the values of the dimensions that vary from point
/// to point (the others are in the sweep's list above).
fn short_label(spec: &Spec, data: &Data, point: usize, params: &[String]) -> String {
    let varying: Vec<String> = spec
        .dims
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            data.points
                .iter()
                .any(|(_, p)| p.get(*i) != data.points[0].1.get(*i))
        })
        .map(|(i, d)| format!("{}={}", d.name, params.get(i).map_or("", String::as_str)))
        .collect();
    if varying.is_empty() {
        format!("{point}")
    } else {
        format!("{point}: {}", varying.join(", "))
    }
}

/// The strategies' throughput ratios as text, for the campaign's output.
pub(super) fn agreement_text(spec: &Spec, data: &Data) -> Option<String> {
    let twins = twins(spec, data);
    let strategies = strategies(&twins);
    let tp = metric("throughput_rows_per_s")?;
    if strategies.is_empty() {
        return None;
    }
    let mut s =
        String::from("\nthroughput ratio per strategy, on the lab and on Flink [95% interval]:\n");
    let mut point = 0;
    for c in compare(data, &strategies, tp, tp, false) {
        if c.point != point {
            point = c.point;
            let label = data
                .points
                .iter()
                .find(|(p, _)| *p == point)
                .map_or(String::new(), |(p, params)| {
                    short_label(spec, data, *p, params)
                });
            let _ = writeln!(s, "point {label}");
        }
        let r = |r: &Option<Ratio>| r.as_ref().map_or("–".to_string(), cells::ratio);
        let _ = writeln!(
            s,
            "  {}: {}  lab {}, Flink {}: {}",
            c.sink,
            c.what.replace('`', ""),
            r(&c.lab),
            r(&c.flink),
            c.agree
        );
    }
    Some(s)
}

/// The "changelog rows" cell of the speed table: `equal (N)`, or both
/// medians and the lab's speed per changelog row over Flink's (`speed`,
/// the throughput ratio, times the lab's rows over Flink's).
fn changelog_cell(
    rows: &Metric,
    lab: Option<f64>,
    flink: Option<f64>,
    speed: Option<f64>,
) -> String {
    match (lab, flink) {
        (Some(a), Some(b)) if a == b => format!("equal ({})", rows.format(a)),
        (Some(a), Some(b)) => {
            let per_row = match speed {
                Some(r) if b > 0.0 => format!("; per row {:.2}×", r * a / b),
                _ => String::new(),
            };
            format!("lab {}, Flink {}{per_row}", rows.format(a), rows.format(b))
        }
        _ => "–".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(estimate: f64, low: f64, high: f64, n: usize, t_test: bool) -> Ratio {
        Ratio {
            estimate,
            low,
            high,
            n,
            t_test,
        }
    }

    #[test]
    fn unequal_changelogs_get_the_speed_per_row() {
        let rows = metric("changelog_rows").unwrap();
        assert_eq!(
            changelog_cell(rows, Some(5.0), Some(5.0), Some(2.0)),
            "equal (5)"
        );
        assert_eq!(
            changelog_cell(rows, Some(2_850_000.0), Some(735_000.0), Some(2.65)),
            "lab 2.85M, Flink 735k; per row 10.28×"
        );
        assert_eq!(
            changelog_cell(rows, Some(8.0), Some(4.0), None),
            "lab 8, Flink 4"
        );
        assert_eq!(changelog_cell(rows, None, Some(4.0), None), "–");
    }

    #[test]
    fn agreement_words() {
        let up = r(2.0, 1.5, 2.5, 5, true);
        let up_small = r(1.2, 1.1, 1.3, 5, true);
        let down = r(0.5, 0.4, 0.6, 5, true);
        let same = r(1.01, 0.9, 1.1, 5, false);
        let one = r(1.3, 1.3, 1.3, 1, false);
        assert_eq!(
            agreement(&up, &r(1.8, 1.4, 2.2, 5, true), false, false),
            "yes"
        );
        assert_eq!(
            agreement(&up, &up_small, false, false),
            "same direction, sizes differ"
        );
        assert_eq!(agreement(&up, &down, false, false), "no");
        assert_eq!(agreement(&up, &same, false, false), "no");
        assert_eq!(
            agreement(&same, &r(0.98, 0.9, 1.05, 5, false), false, false),
            "yes: neither beyond noise"
        );
        assert_eq!(
            agreement(&one, &r(1.1, 1.1, 1.1, 1, false), false, false),
            "medians agree in direction; too few runs to tell"
        );
        assert_eq!(
            agreement(&one, &r(0.9, 0.9, 0.9, 1, false), false, false),
            "medians point opposite ways; too few runs to tell"
        );
        // A counter the same in every run is decided by its value.
        assert_eq!(
            agreement(&one, &r(1.4, 1.2, 1.6, 5, true), true, false),
            "yes"
        );
        // State sizes: the same direction beyond 10%.
        assert_eq!(
            state_agreement(&r(1.0, 1.0, 1.0, 3, false), &r(0.95, 0.9, 1.0, 3, true)),
            "yes: neither changes by more than 10%"
        );
        assert_eq!(
            state_agreement(&r(0.04, 0.04, 0.04, 3, false), &r(0.3, 0.2, 0.3, 3, true)),
            "yes"
        );
        assert_eq!(
            state_agreement(&r(1.0, 1.0, 1.0, 3, false), &r(0.69, 0.6, 0.7, 3, true)),
            "no"
        );
    }
}
