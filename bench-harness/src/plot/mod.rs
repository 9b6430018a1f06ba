//! Line charts with `plotters`, written as PNG and SVG from the same data.
//!
//! The chart is drawn on the left; the legend sits in a column on the
//! right so it never hides a line. Log scales use plotters' log
//! coordinates; values that a log axis cannot show (zero or negative) are
//! left out of the chart and reported by [`draw`]'s caller.

use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// The plot area's width and the chart's height in pixels.
const PLOT_SIZE: (u32, u32) = (760, 600);
/// The narrowest legend column; it widens to fit the longest name.
const LEGEND_WIDTH: u32 = 240;

/// Width of the legend column: wide enough for every name (about 8.5
/// pixels a character at the legend's 15-pixel font), so long variant
/// names are never cut off.
fn legend_width(c: &LineChart) -> u32 {
    let longest = c
        .lines
        .iter()
        .map(|l| l.name.chars().count())
        .max()
        .unwrap_or(0);
    LEGEND_WIDTH.max(44 + (longest as f64 * 8.5).ceil() as u32 + 12)
}

/// The chart's width and height in pixels.
fn size(c: &LineChart) -> (u32, u32) {
    (PLOT_SIZE.0 + legend_width(c), PLOT_SIZE.1)
}

/// How x values are laid out.
#[derive(Clone, Debug, PartialEq)]
pub enum XAxis {
    /// x values are numbers.
    Numeric,
    /// x values are labels, drawn at 0, 1, 2, ... in this order.
    Categorical(Vec<String>),
}

/// One line of a chart: its legend name and its (x, y) points, by x.
#[derive(Clone, Debug)]
pub struct Line {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

#[derive(Clone, Debug)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x: XAxis,
    pub log_x: bool,
    pub log_y: bool,
    pub lines: Vec<Line>,
}

/// `1.5M`, `250k`, `0.25`: short axis labels.
pub fn si(v: f64) -> String {
    let a = v.abs();
    let (x, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let mut s = if x.abs() >= 100.0 || x.fract() == 0.0 {
        format!("{x:.0}")
    } else if x.abs() >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    };
    if s.contains('.') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
    if s == "-0" {
        s = "0".to_string();
    }
    s + suffix
}

/// The range of `values` on a linear or log axis, with some room around.
fn range(values: impl Iterator<Item = f64>, log: bool, from_zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite() && (!log || *v > 0.0)) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if lo > hi {
        return if log { (1.0, 10.0) } else { (0.0, 1.0) };
    }
    if log {
        // plotters puts log ticks from the first power of ten in range on:
        // start at one, so the lowest values get labelled ticks too.
        let pad = if lo == hi { 2.0 } else { (hi / lo).powf(0.05) };
        return (10f64.powf((lo / pad).log10().floor()), hi * pad);
    }
    if from_zero && lo >= 0.0 {
        lo = 0.0;
    }
    if lo == hi {
        let d = if lo == 0.0 { 1.0 } else { lo.abs() * 0.5 };
        return (lo - d, hi + d);
    }
    let pad = (hi - lo) * 0.06;
    (
        if from_zero && lo == 0.0 {
            0.0
        } else {
            lo - pad
        },
        hi + pad,
    )
}

/// Draws `chart` into `png` and `svg`.
pub fn draw(chart: &LineChart, png: &Path, svg: &Path) -> Result<(), String> {
    {
        let root = BitMapBackend::new(png, size(chart)).into_drawing_area();
        draw_on(&root, chart)?;
        root.present()
            .map_err(|e| format!("cannot write {}: {e}", png.display()))?;
    }
    {
        let root = SVGBackend::new(svg, size(chart)).into_drawing_area();
        draw_on(&root, chart)?;
        root.present()
            .map_err(|e| format!("cannot write {}: {e}", svg.display()))?;
    }
    Ok(())
}

fn color(i: usize) -> RGBColor {
    // Colour-blind-safe first (Okabe-Ito), then plotters' palette.
    const OKABE_ITO: [RGBColor; 7] = [
        RGBColor(0, 114, 178),
        RGBColor(213, 94, 0),
        RGBColor(0, 158, 115),
        RGBColor(204, 121, 167),
        RGBColor(230, 159, 0),
        RGBColor(86, 180, 233),
        RGBColor(0, 0, 0),
    ];
    if i < OKABE_ITO.len() {
        OKABE_ITO[i]
    } else {
        let (r, g, b) = Palette99::pick(i).rgb();
        RGBColor(r, g, b)
    }
}

/// Earlier lines are drawn wider (5 px down to 2 px), so a later line on
/// top of an equal one leaves it visible as a border.
fn line_width(i: usize, n: usize) -> u32 {
    2 + widen(i, n)
}

fn marker_size(i: usize, n: usize) -> u32 {
    3 + widen(i, n)
}

/// 3 for the first line down to 0 for the last.
fn widen(i: usize, n: usize) -> u32 {
    if n <= 1 {
        return 0;
    }
    ((n - 1 - i) as f64 * 3.0 / (n - 1) as f64).round() as u32
}

fn draw_on<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, c: &LineChart) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(err)?;
    let (plot_area, legend) = root.split_horizontally(PLOT_SIZE.0);

    let xs = c.lines.iter().flat_map(|l| l.points.iter().map(|p| p.0));
    let ys = c.lines.iter().flat_map(|l| l.points.iter().map(|p| p.1));
    let (x0, x1) = match &c.x {
        XAxis::Numeric => range(xs, c.log_x, false),
        XAxis::Categorical(labels) => (-0.5, labels.len().max(1) as f64 - 0.5),
    };
    let (y0, y1) = range(ys, c.log_y, true);
    let log_x = c.log_x && c.x == XAxis::Numeric;
    match (log_x, c.log_y) {
        (false, false) => plot_with(&plot_area, c, x0..x1, y0..y1),
        (true, false) => plot_with(&plot_area, c, (x0..x1).log_scale(), y0..y1),
        (false, true) => plot_with(&plot_area, c, x0..x1, (y0..y1).log_scale()),
        (true, true) => plot_with(&plot_area, c, (x0..x1).log_scale(), (y0..y1).log_scale()),
    }?;

    // The legend: a short line in the series colour, then its name.
    let font = ("sans-serif", 15).into_font();
    let mut y = 70;
    let n = c.lines.len();
    for (i, line) in c.lines.iter().enumerate() {
        let style = color(i).stroke_width(line_width(i, n));
        legend
            .draw(&PathElement::new(vec![(8, y), (36, y)], style))
            .map_err(err)?;
        legend
            .draw(&Circle::new((22, y), marker_size(i, n), color(i).filled()))
            .map_err(err)?;
        legend
            .draw(&Text::new(
                line.name.clone(),
                (44, y - 8),
                font.clone().color(&BLACK),
            ))
            .map_err(err)?;
        y += 24;
    }
    Ok(())
}

fn plot_with<DB, X, Y>(
    area: &DrawingArea<DB, Shift>,
    c: &LineChart,
    x_spec: X,
    y_spec: Y,
) -> Result<(), String>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let mut chart = ChartBuilder::on(area)
        .caption(&c.title, ("sans-serif", 26))
        .margin(18)
        .x_label_area_size(56)
        .y_label_area_size(84)
        .build_cartesian_2d(x_spec, y_spec)
        .map_err(err)?;

    let categorical = match &c.x {
        XAxis::Categorical(labels) => Some(labels.clone()),
        XAxis::Numeric => None,
    };
    let x_format = |v: &f64| -> String {
        match &categorical {
            Some(labels) => {
                let i = v.round();
                if (v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < labels.len() {
                    labels[i as usize].clone()
                } else {
                    String::new()
                }
            }
            None => si(*v),
        }
    };
    let y_format = |v: &f64| si(*v);
    let n_x = match &categorical {
        Some(labels) => labels.len().max(1),
        None => 10,
    };
    chart
        .configure_mesh()
        .x_desc(&c.x_label)
        .y_desc(&c.y_label)
        .x_labels(n_x)
        .y_labels(10)
        .x_label_formatter(&x_format)
        .y_label_formatter(&y_format)
        .axis_desc_style(("sans-serif", 18))
        .label_style(("sans-serif", 14))
        .light_line_style(RGBColor(235, 235, 235))
        .x_max_light_lines(if c.log_x { 0 } else { 4 })
        .y_max_light_lines(if c.log_y { 0 } else { 4 })
        .draw()
        .map_err(err)?;

    for (i, line) in c.lines.iter().enumerate() {
        let points: Vec<(f64, f64)> = line
            .points
            .iter()
            .copied()
            .filter(|&(x, y)| {
                x.is_finite()
                    && y.is_finite()
                    && (!c.log_y || y > 0.0)
                    && (!c.log_x || categorical.is_some() || x > 0.0)
            })
            .collect();
        let col = color(i);
        let n = c.lines.len();
        chart
            .draw_series(LineSeries::new(
                points.clone(),
                col.stroke_width(line_width(i, n)),
            ))
            .map_err(err)?;
        chart
            .draw_series(
                points
                    .iter()
                    .map(|&p| Circle::new(p, marker_size(i, n), col.filled())),
            )
            .map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_legend_widens_for_long_names() {
        let chart = |names: &[&str]| LineChart {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            x: XAxis::Numeric,
            log_x: false,
            log_y: false,
            lines: names
                .iter()
                .map(|n| Line {
                    name: n.to_string(),
                    points: vec![(1.0, 1.0)],
                })
                .collect(),
        };
        assert_eq!(size(&chart(&["heap", "rocksdb-mb10k"])), (1000, 600));
        let long = "rocksdb-multijoin-amplified-4rows";
        let (w, _) = size(&chart(&["heap", long]));
        assert!(w > 1000 && w - PLOT_SIZE.0 >= 44 + 8 * long.len() as u32);
    }

    #[test]
    fn labels_and_ranges() {
        assert_eq!(si(2_500_000.0), "2.5M");
        assert_eq!(si(250_000.0), "250k");
        assert_eq!(si(1500.0), "1500");
        assert_eq!(si(0.5), "0.5");
        assert_eq!(si(0.0), "0");
        assert_eq!(range([2.0, 4.0].into_iter(), false, true).0, 0.0);
        let (lo, hi) = range([250.0, 4000.0].into_iter(), true, true);
        assert!(lo == 100.0 && hi > 4000.0, "{lo} {hi}");
        assert_eq!(range(std::iter::empty(), false, true), (0.0, 1.0));
    }
}
