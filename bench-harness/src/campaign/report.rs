//! Charts and `index.md` of a campaign report, drawn from the report's own
//! files only (`spec.toml`, `run.toml`, `results.csv`, and the named
//! baseline under `baselines/`), so `lab plot DIR` redraws exactly what
//! `lab campaign` drew.
//!
//! Every number shown is the median of the repeats with their min–max
//! (charts draw it as an error bar); a ratio to the first variant comes
//! with its 95% bootstrap interval, the runs paired by repeat since they
//! ran interleaved ([`crate::stats`]). A chart draws one line per series
//! value (by default per variant); when a sweep dimension other than x
//! and the series takes several values, each value gets its own line
//! (`heap, rows=1000`), and so does each variant when the series is a
//! dimension (`heap, rows=1000` again): runs of different configurations
//! are never pooled into one median.

use super::baseline;
use super::cells::{self, SHORT_MARK};
use super::metrics::{metric, Metric};
use super::report_data::{distinct, load, metric_index, point_label, Data, Record, RunInfo, INDEX};
use super::results::RESULTS;
use super::spec::{Chart, Series, Spec};
use super::CampaignError;
use crate::plot::{self, Line, LineChart, XAxis};
use crate::stats::{Spread, MIN_TIMED_MS, MIN_WORK_MS};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

/// What [`render`] wrote.
pub struct Rendered {
    pub rows: usize,
    pub charts: usize,
    /// Things the reader should know (e.g. values a log axis cannot show).
    pub warnings: Vec<String>,
    /// The first metric of the tables per point and variant, with spread.
    pub summary: String,
    /// The change against the baseline per point, when compared with one.
    pub changes: Option<String>,
}

/// The line chart of one `[[chart]]`.
fn chart_data(
    spec: &Spec,
    info: Option<&RunInfo>,
    data: &Data,
    chart: &Chart,
    warnings: &mut Vec<String>,
) -> LineChart {
    let sink = data.sink_of(chart);
    let xi = spec
        .dims
        .iter()
        .position(|d| d.name == chart.x)
        .unwrap_or(0);
    let si = match &chart.series {
        Series::Variant => None,
        Series::Dim(d) => spec.dims.iter().position(|x| x.name == *d),
    };
    let mi = metric_index(chart.y);
    let rows: Vec<&Record> = data.records.iter().filter(|r| r.sink == sink).collect();
    // Dimensions other than x and the series that vary split the lines.
    let others: Vec<usize> = (0..spec.dims.len())
        .filter(|&d| d != xi && Some(d) != si)
        .filter(|&d| distinct(rows.iter().map(|r| r.params[d].clone())).len() > 1)
        .collect();
    // A dimension as the series still keeps variants apart.
    let by_variant = si.is_some() && distinct(rows.iter().map(|r| r.variant.clone())).len() > 1;
    let xs = distinct(rows.iter().map(|r| r.params[xi].clone()));
    let numeric: Option<Vec<f64>> = xs.iter().map(|x| x.parse::<f64>().ok()).collect();
    let x_axis = match numeric {
        Some(_) => XAxis::Numeric {
            integer: xs.iter().all(|x| x.parse::<i64>().is_ok()),
        },
        None => XAxis::Categorical(xs.clone()),
    };
    let category: HashMap<&str, usize> = xs
        .iter()
        .enumerate()
        .map(|(i, x)| (x.as_str(), i))
        .collect();
    let x_of = |x: &str| match &x_axis {
        XAxis::Numeric { .. } => x.parse::<f64>().unwrap_or(f64::NAN),
        XAxis::Categorical(_) => category.get(x).copied().unwrap_or(0) as f64,
    };
    // (line, x text) -> values and whether a run was too short to time,
    // in order of first appearance.
    let mut names: Vec<String> = Vec::new();
    let mut line_of: HashMap<String, usize> = HashMap::new();
    let mut cells: Vec<(usize, String, Vec<f64>, bool)> = Vec::new();
    let mut cell_of: HashMap<(usize, String), usize> = HashMap::new();
    for r in &rows {
        let mut name = match si {
            None => r.variant.clone(),
            Some(d) if by_variant => {
                format!("{}, {}={}", r.variant, spec.dims[d].name, r.params[d])
            }
            Some(d) => format!("{}={}", spec.dims[d].name, r.params[d]),
        };
        for &d in &others {
            let _ = write!(name, ", {}={}", spec.dims[d].name, r.params[d]);
        }
        let li = *line_of.entry(name.clone()).or_insert_with(|| {
            names.push(name);
            names.len() - 1
        });
        let x = &r.params[xi];
        let cell = *cell_of.entry((li, x.clone())).or_insert_with(|| {
            cells.push((li, x.clone(), Vec::new(), false));
            cells.len() - 1
        });
        if let Some(v) = r.values[mi] {
            cells[cell].2.push(v);
            cells[cell].3 |= r.too_short && chart.y.timed();
        }
    }
    let mut lines: Vec<Line> = names
        .iter()
        .map(|n| Line {
            name: n.clone(),
            points: Vec::new(),
        })
        .collect();
    let mut spread_shown = false;
    let mut any_short = false;
    for (li, x, values, short) in &cells {
        if let Some(s) = Spread::of(values) {
            spread_shown |= !s.exact();
            any_short |= *short;
            lines[*li].points.push(plot::Point {
                x: x_of(x),
                y: s.median,
                low: s.min,
                high: s.max,
                too_short: *short,
            });
        }
    }
    for l in &mut lines {
        l.points.sort_by(|a, b| a.x.total_cmp(&b.x));
    }
    let mut log_x = chart.log_x;
    if log_x && !matches!(x_axis, XAxis::Numeric { .. }) {
        warnings.push(format!(
            "chart '{}': x = '{}' has values that are not numbers; drawn on a linear axis",
            chart.title, chart.x
        ));
        log_x = false;
    }
    let hidden = |f: &dyn Fn(&plot::Point) -> bool| lines.iter().flat_map(|l| &l.points).any(f);
    let all = |f: &dyn Fn(&plot::Point) -> bool| lines.iter().flat_map(|l| &l.points).all(f);
    if log_x && hidden(&|p| p.x <= 0.0) {
        warnings.push(format!(
            "chart '{}': x values <= 0 cannot be shown on a log axis and are left out",
            chart.title
        ));
    }
    if chart.log_y && hidden(&|p| p.y <= 0.0) && !all(&|p| p.y <= 0.0) {
        warnings.push(format!(
            "chart '{}': {} values <= 0 cannot be shown on a log axis and are left out",
            chart.title, chart.y.name
        ));
    }
    let mut notes = Vec::new();
    let repeats = cells.iter().map(|c| c.2.len()).max().unwrap_or(0);
    if repeats > 1 {
        notes.push(format!("median of {repeats} runs per point"));
        notes.push(if spread_shown {
            "bars: min–max of the runs".to_string()
        } else {
            "every run gave the same value".to_string()
        });
    } else if !cells.is_empty() {
        notes.push("one run per point: no spread".to_string());
    }
    if any_short {
        notes.push("hollow: runs too short to time".to_string());
    }
    let mut chart_data = LineChart {
        title: format!(
            "{}: {}{}",
            spec.name,
            chart.title,
            if info.is_some_and(|i| i.quick) {
                " (quick)"
            } else {
                ""
            }
        ),
        x_label: chart.x_label.clone().unwrap_or_else(|| {
            spec.dims
                .get(xi)
                .map_or(chart.x.clone(), |d| d.name.clone())
        }),
        y_label: chart
            .y_label
            .clone()
            .unwrap_or_else(|| chart.y.axis_label()),
        x: x_axis,
        y_unit: chart.y.kind(),
        log_x,
        log_y: chart.log_y,
        lines,
        notes,
    };
    if let Some(reason) = plot::no_data_reason(&chart_data) {
        warnings.push(format!(
            "chart '{}': no data ({reason}) for sink '{sink}'",
            chart.title
        ));
        chart_data.notes.clear();
    }
    chart_data
}

/// The metrics the point tables show: those charted (with their sink), or
/// a default set when the spec draws no chart.
pub(super) fn table_metrics(spec: &Spec, data: &Data) -> Vec<(String, &'static Metric)> {
    let mut out: Vec<(String, &'static Metric)> = Vec::new();
    if spec.charts.is_empty() {
        for sink in &data.sinks {
            for name in [
                "throughput_rows_per_s",
                "state_bytes",
                "state_accesses",
                "records_shuffled",
                "latency_p99_ms",
                "changelog_rows",
            ] {
                if let Some(m) = metric(name) {
                    out.push((sink.clone(), m));
                }
            }
        }
    }
    for c in &spec.charts {
        let key = (data.sink_of(c), c.y);
        if !out.iter().any(|(s, m)| *s == key.0 && m.name == key.1.name) {
            out.push(key);
        }
    }
    out
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|")
}

/// A table cell: median [min–max], then the ratio to the first variant
/// with its interval; marked when a run was too short to time.
fn cell(data: &Data, spec: &Spec, id: usize, vi: usize, sink: &str, m: &Metric) -> String {
    let v = &spec.variants[vi].name;
    let Some(s) = data.spread(id, v, sink, m) else {
        return "–".to_string();
    };
    let mut text = cells::spread(&s, m);
    if vi > 0 {
        let base = &spec.variants[0].name;
        if let Some(r) = data.ratio(id, base, v, sink, m) {
            let _ = write!(text, "; {}", cells::ratio(&r));
        }
    }
    if m.timed() && data.too_short(id, v, sink) {
        let _ = write!(text, " {SHORT_MARK}");
    }
    text
}

fn index_md(
    spec: &Spec,
    info: Option<&RunInfo>,
    data: &Data,
    changes: Option<&baseline::Changes>,
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Campaign `{}`\n", spec.name);
    if !spec.description.is_empty() {
        let _ = writeln!(s, "{}\n", spec.description);
    }
    let command = info.map_or("unknown", |i| i.command.as_str());
    let _ = writeln!(s, "- command: `{command}`");
    if let Some(started) = info.and_then(|i| i.started.as_deref()) {
        let _ = writeln!(s, "- started: {started}");
    }
    let mode = match info {
        Some(i) if i.quick => "quick (`--quick`)",
        Some(_) => "full",
        None => "unknown",
    };
    let _ = writeln!(
        s,
        "- mode: {mode}; {} point(s), {} variant(s), {} repeat(s) of each",
        data.points.len(),
        spec.variants.len(),
        data.repeats
    );
    let _ = writeln!(s, "- script: `{}`", spec.script);
    let _ = writeln!(s, "- git revision: `{}`", data.revisions.join("`, `"));
    let _ = writeln!(s, "- machine: {}", data.machines.join("; "));
    let _ = writeln!(
        s,
        "- files: [results.csv](results.csv) (one row per point, variant, repeat and sink), \
         [spec.toml](spec.toml); redraw with `lab plot <this directory>`; earlier runs are \
         kept under `history/`"
    );
    let short = data.short_runs();
    if short > 0 {
        let _ = writeln!(
            s,
            "\n**{SHORT_MARK} {short} of {} runs were too short to time** (under \
             {MIN_TIMED_MS:.0} ms of wall time, or under {MIN_WORK_MS:.0} ms besides waiting for \
             their sources). Their timings (throughput, wall time, latency) are marked \
             {SHORT_MARK} below and drawn hollow; counters are exact all the same.",
            data.records.len()
        );
    }
    let _ = writeln!(s, "\n## Variants\n");
    let _ = writeln!(s, "The first is the baseline of every ratio.\n");
    for v in &spec.variants {
        let settings = if v.settings.is_empty() {
            "defaults".to_string()
        } else {
            v.settings
                .iter()
                .map(|(k, v)| format!("`{k}={v}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(s, "- `{}`: {settings}", v.name);
    }
    if !spec.dims.is_empty() {
        let _ = writeln!(s, "\n## Sweep\n");
        for (i, d) in spec.dims.iter().enumerate() {
            let values = distinct(data.points.iter().map(|(_, p)| p[i].clone()));
            let what = match d.kind {
                super::spec::DimKind::Config => "configuration key",
                super::spec::DimKind::Param => "script parameter",
            };
            let _ = writeln!(s, "- `{}` ({what}): {}", d.name, values.join(", "));
        }
    }
    if !spec.charts.is_empty() {
        let _ = writeln!(s, "\n## Charts\n");
        let _ = writeln!(
            s,
            "Each point is the median of its runs; a bar spans their min–max.\n"
        );
        for c in &spec.charts {
            let _ = writeln!(s, "### {}\n", c.title);
            let _ = writeln!(s, "![{}]({}.png)\n", md_escape(&c.title), c.slug);
            let _ = writeln!(
                s,
                "{} against `{}`, sink `{}`{}{} ([SVG]({}.svg))\n",
                c.y.axis_label(),
                c.x,
                data.sink_of(c),
                if c.log_x { ", log x" } else { "" },
                if c.log_y { ", log y" } else { "" },
                c.slug
            );
        }
    }
    if let Some(ch) = changes {
        let _ = writeln!(s, "## Change against baseline `{}`\n", ch.name);
        s.push_str(&ch.markdown());
        let _ = writeln!(s);
    }
    let metrics = table_metrics(spec, data);
    let many_sinks = data.sinks.len() > 1;
    let _ = writeln!(s, "## Points\n");
    let _ = writeln!(
        s,
        "Each cell: the median over the repeats [min–max]; after it, for variants other than \
         `{}`, the ratio of medians to it [95% bootstrap interval, runs paired by repeat: they \
         ran interleaved]. A single value: every run gave it.\n",
        spec.variants.first().map_or("", |v| v.name.as_str())
    );
    for (id, params) in &data.points {
        let label = point_label(spec, params);
        if label.is_empty() {
            let _ = writeln!(s, "### Point {id}\n");
        } else {
            let _ = writeln!(s, "### Point {id}: {label}\n");
        }
        let _ = write!(s, "| metric |");
        for v in &spec.variants {
            let _ = write!(s, " {} |", md_escape(&v.name));
        }
        let _ = write!(s, "\n|---|");
        for _ in &spec.variants {
            let _ = write!(s, "---:|");
        }
        let _ = writeln!(s);
        for (sink, m) in &metrics {
            let name = if many_sinks {
                format!("{sink}: {}", m.axis_label())
            } else {
                m.axis_label()
            };
            let _ = write!(s, "| {} |", md_escape(&name));
            for vi in 0..spec.variants.len() {
                let _ = write!(s, " {} |", cell(data, spec, *id, vi, sink, m));
            }
            let _ = writeln!(s);
        }
        let _ = writeln!(s);
    }
    if short > 0 {
        let _ = writeln!(s, "{}", cells::short_note());
    }
    if let Some(section) = super::engines::section(spec, data) {
        let _ = write!(s, "\n{section}");
    }
    s
}

/// The first table metric per point and variant, with spread and ratios:
/// what `lab campaign` prints when it is done.
fn summary(spec: &Spec, data: &Data) -> String {
    let metrics = table_metrics(spec, data);
    let Some((sink, m)) = metrics.first() else {
        return String::new();
    };
    let base = spec.variants.first().map_or("", |v| v.name.as_str());
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}, sink {sink}: median [min–max] of {} run(s); ratio to {base} [95% interval]",
        m.axis_label(),
        data.repeats
    );
    let width = spec
        .variants
        .iter()
        .map(|v| v.name.chars().count())
        .max()
        .unwrap_or(0);
    let mut short = false;
    for (id, params) in &data.points {
        let _ = writeln!(s, "point {id}: {}", point_label(spec, params));
        let mut rows: Vec<[String; 3]> = Vec::new();
        for v in &spec.variants {
            let Some(sp) = data.spread(*id, &v.name, sink, m) else {
                continue;
            };
            let mut value = cells::spread(&sp, m);
            if m.timed() && data.too_short(*id, &v.name, sink) {
                value.push_str(&format!(" {SHORT_MARK}"));
                short = true;
            }
            let ratio = if v.name == base {
                (String::new(), String::new())
            } else {
                data.ratio(*id, base, &v.name, sink, m)
                    .map(|r| (cells::ratio(&r), cells::verdict(&r, m).to_string()))
                    .unwrap_or_default()
            };
            rows.push([value, ratio.0, ratio.1]);
        }
        let w1 = rows.iter().map(|r| r[0].chars().count()).max().unwrap_or(0);
        let w2 = rows.iter().map(|r| r[1].chars().count()).max().unwrap_or(0);
        for (v, r) in spec.variants.iter().zip(&rows) {
            let line = format!(
                "  {:<width$}  {:<w1$}  {:<w2$}  {}",
                v.name, r[0], r[1], r[2]
            );
            let _ = writeln!(s, "{}", line.trim_end());
        }
    }
    if short {
        let _ = writeln!(s, "{}", cells::short_note());
    }
    s
}

/// Draws every chart (PNG and SVG) and writes `index.md` in `dir` from its
/// `spec.toml`, `run.toml` and `results.csv` (and the baseline `run.toml`
/// names).
pub fn render(dir: &Path) -> Result<Rendered, CampaignError> {
    let (spec, info, table, data) = load(dir)?;
    let results_path = dir.join(RESULTS);
    let mut warnings = Vec::new();
    let changes = match info.as_ref().and_then(|i| i.baseline.as_deref()) {
        Some(name) => match baseline::load(dir, name) {
            Ok((base_spec, base_data)) => {
                let metrics = table_metrics(&spec, &data);
                match baseline::compare(&spec, &data, &base_spec, &base_data, &metrics) {
                    Ok(rows) => Some(baseline::Changes {
                        name: name.to_string(),
                        rows,
                    }),
                    Err(e) => {
                        warnings.push(format!("baseline '{name}': {e}"));
                        None
                    }
                }
            }
            Err(e) => {
                warnings.push(e.message);
                None
            }
        },
        None => None,
    };
    for c in &spec.charts {
        if let Some(sink) = &c.sink {
            if !data.sinks.contains(sink) {
                warnings.push(format!(
                    "chart '{}': sink '{sink}' has no rows in {}",
                    c.title,
                    results_path.display()
                ));
            }
        }
        let chart = chart_data(&spec, info.as_ref(), &data, c, &mut warnings);
        let png = dir.join(format!("{}.png", c.slug));
        let svg = dir.join(format!("{}.svg", c.slug));
        plot::draw(&chart, &png, &svg)
            .map_err(|e| CampaignError::execution(format!("chart '{}': {e}", c.title)))?;
        super::crash_point::reached("chart");
    }
    // Written last: a report with its index.md has every chart.
    let index = dir.join(INDEX);
    crate::files::write_atomic(
        &index,
        index_md(&spec, info.as_ref(), &data, changes.as_ref()).as_bytes(),
    )
    .map_err(CampaignError::execution)?;
    Ok(Rendered {
        rows: table.rows.len(),
        charts: spec.charts.len(),
        warnings,
        summary: summary(&spec, &data)
            + &super::engines::agreement_text(&spec, &data).unwrap_or_default(),
        changes: changes.map(|c| c.text()),
    })
}
