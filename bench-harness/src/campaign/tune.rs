//! `lab tune SCRIPT.sql --try key=v1,v2 [--try key2=a,b] [--repeats N]`:
//! runs the script under every combination of the `--try` values (the
//! first `--try` slowest), the variants interleaved within each repeat,
//! and prints per sink a table of medians with ratios to the first variant.

use super::metrics::{display_ratio, display_value, median, metric, Sample};
use super::CampaignError;
use indicatif::{ProgressBar, ProgressStyle};
use optimizer::config::Config;
use optimizer::session::{explain_script, run_script, RunOptions};
use std::fmt::Write as _;
use std::path::Path;

/// The columns of the table, as metric names.
const COLUMNS: &[(&str, &str)] = &[
    ("throughput", "throughput_rows_per_s"),
    ("state bytes", "state_bytes"),
    ("state accesses", "state_accesses"),
    ("records shuffled", "records_shuffled"),
    ("p99 latency", "latency_p99_ms"),
    ("changelog rows", "changelog_rows"),
];

pub struct TuneArgs<'a> {
    pub script: &'a Path,
    /// `key=v1,v2,...`
    pub tries: &'a [String],
    /// Fixed `key=value` for every variant.
    pub sets: &'a [(String, String)],
    pub repeats: u32,
    pub quiet: bool,
}

/// Parses `key=v1,v2` and checks every value with `Config::set`.
fn parse_try(t: &str) -> Result<(String, Vec<String>), CampaignError> {
    let (key, values) = t
        .split_once('=')
        .filter(|(k, _)| !k.trim().is_empty())
        .ok_or_else(|| {
            CampaignError::input(format!("--try '{t}': expected KEY=VALUE1,VALUE2,..."))
        })?;
    let key = key.trim().to_string();
    let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
    if values.iter().any(|v| v.is_empty()) {
        return Err(CampaignError::input(format!(
            "--try '{t}': a value is empty; expected KEY=VALUE1,VALUE2,..."
        )));
    }
    for v in &values {
        Config::new()
            .set(&key, v)
            .map_err(|e| CampaignError::input(format!("--try '{t}': {}", e.message)))?;
    }
    Ok((key, values))
}

/// The variants: the cartesian product of the tries, first try slowest.
fn variants(tries: &[(String, Vec<String>)]) -> Vec<Vec<(String, String)>> {
    let mut out: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for (key, values) in tries {
        let mut next = Vec::new();
        for v in &out {
            for value in values {
                let mut w = v.clone();
                w.push((key.clone(), value.clone()));
                next.push(w);
            }
        }
        out = next;
    }
    out
}

pub fn tune(args: &TuneArgs) -> Result<String, CampaignError> {
    if args.tries.is_empty() {
        return Err(CampaignError::input(
            "lab tune needs at least one --try KEY=VALUE1,VALUE2",
        ));
    }
    if args.repeats == 0 {
        return Err(CampaignError::input("--repeats: expected an integer >= 1"));
    }
    let tries: Vec<(String, Vec<String>)> = args
        .tries
        .iter()
        .map(|t| parse_try(t))
        .collect::<Result<_, _>>()?;
    for (i, (k, _)) in tries.iter().enumerate() {
        if tries[..i].iter().any(|(j, _)| j == k) {
            return Err(CampaignError::input(format!(
                "--try names '{k}' twice; give all its values in one --try"
            )));
        }
    }
    let sql = std::fs::read_to_string(args.script).map_err(|e| {
        CampaignError::input(format!("cannot read script {}: {e}", args.script.display()))
    })?;
    let base_dir = args.script.parent().unwrap_or(Path::new("")).to_path_buf();
    let variants = variants(&tries);
    let overrides: Vec<Vec<(String, String)>> = variants
        .iter()
        .map(|v| args.sets.iter().cloned().chain(v.iter().cloned()).collect())
        .collect();
    let labels: Vec<String> = variants
        .iter()
        .map(|v| {
            v.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect();
    for (o, label) in overrides.iter().zip(&labels) {
        explain_script(&sql, o).map_err(|e| {
            CampaignError::input(format!("{} with {label}: {e}", args.script.display()))
        })?;
    }

    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::new((variants.len() as u32 * args.repeats) as u64);
        b.set_style(
            ProgressStyle::with_template("{bar:30.cyan/blue} {pos}/{len} runs, ETA {eta} | {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b
    };
    // values[variant][sink] = per column, the values over repeats.
    let mut sinks: Vec<String> = Vec::new();
    let mut values: Vec<Vec<Vec<Vec<f64>>>> = vec![Vec::new(); variants.len()];
    for repeat in 1..=args.repeats {
        for (vi, o) in overrides.iter().enumerate() {
            bar.set_message(format!("{} (repeat {repeat})", labels[vi]));
            let outcomes = run_script(&sql, &base_dir, o, RunOptions::default(), &mut |_, _| {})
                .map_err(|e| {
                    bar.abandon();
                    CampaignError::run(&format!("{} with {}", args.script.display(), labels[vi]), e)
                })?;
            for (si, out) in outcomes.iter().enumerate() {
                if si >= sinks.len() {
                    sinks.push(out.sink.clone());
                }
                if values[vi].len() <= si {
                    values[vi].push(vec![Vec::new(); COLUMNS.len()]);
                }
                let sample = Sample {
                    report: &out.report,
                    sink: out.sink_report(),
                    peak_rss_kb: None,
                };
                for (ci, (_, name)) in COLUMNS.iter().enumerate() {
                    if let Some(v) = metric(name).and_then(|m| m.value(&sample)) {
                        values[vi][si][ci].push(v);
                    }
                }
            }
            bar.inc(1);
        }
    }
    bar.finish_and_clear();

    let mut s = String::new();
    let _ = writeln!(
        s,
        "lab tune {}: {} variant(s) × {} repeat(s), interleaved; medians, ratios to the first variant",
        args.script.display(),
        variants.len(),
        args.repeats
    );
    for (si, sink) in sinks.iter().enumerate() {
        let _ = writeln!(s, "\nINSERT INTO {sink}");
        let mut header: Vec<String> = vec!["variant".to_string()];
        header.extend(COLUMNS.iter().map(|(title, name)| {
            let unit = metric(name).map_or("", |m| m.unit);
            format!("{title} ({unit})")
        }));
        let mut table = vec![header];
        let median_of = |vi: usize, ci: usize| -> Option<f64> {
            values[vi].get(si).and_then(|cols| median(&cols[ci]))
        };
        for (vi, label) in labels.iter().enumerate() {
            let mut row = vec![label.clone()];
            for (ci, (_, name)) in COLUMNS.iter().enumerate() {
                let integer = metric(name).is_some_and(|m| m.integer);
                let cell = match (median_of(vi, ci), median_of(0, ci)) {
                    (None, _) => "–".to_string(),
                    (Some(v), _) if vi == 0 => display_value(v, integer),
                    (Some(v), Some(b)) => {
                        format!("{} ({})", display_value(v, integer), display_ratio(v, b))
                    }
                    (Some(v), None) => display_value(v, integer),
                };
                row.push(cell);
            }
            table.push(row);
        }
        let widths: Vec<usize> = (0..table[0].len())
            .map(|c| {
                table
                    .iter()
                    .map(|r| r[c].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for (ri, row) in table.iter().enumerate() {
            let mut line = String::new();
            for (c, cell) in row.iter().enumerate() {
                let pad = widths[c] - cell.chars().count();
                if c == 0 {
                    let _ = write!(line, "{cell}{}", " ".repeat(pad));
                } else {
                    let _ = write!(line, "  {}{cell}", " ".repeat(pad));
                }
            }
            let _ = writeln!(s, "{}", line.trim_end());
            if ri == 0 {
                let total: usize = widths.iter().sum::<usize>() + 2 * (widths.len() - 1);
                let _ = writeln!(s, "{}", "-".repeat(total));
            }
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tries_make_a_cartesian_product() {
        let t = vec![
            parse_try("parallelism.default=1,4").unwrap(),
            parse_try("state.backend.type=hashmap, rocksdb").unwrap(),
        ];
        let v = variants(&t);
        assert_eq!(v.len(), 4);
        assert_eq!(v[1][1].1, "rocksdb");
        assert_eq!(v[2][0].1, "4");
        assert!(parse_try("state.backend.type=disk")
            .unwrap_err()
            .message
            .contains("hashmap, rocksdb"));
        assert!(parse_try("nokey").is_err());
    }
}
