//! Line charts with `plotters`, written as PNG and SVG from the same data.
//!
//! Each point is a median with its min–max drawn as an error bar. Series
//! differ by colour, marker shape and dash, and earlier ones are drawn
//! wider, so identical series stay visible; each is shifted a little
//! along x (a dodge) so their error bars do not hide each other. A point
//! measured by runs too short to time has a hollow marker. The legend
//! sits in a column on the right so it never hides a line. Ticks come
//! from [`ticks`]. A chart with nothing to draw says so.

pub mod ticks;

use crate::numbers::Unit;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use std::path::Path;

/// The plot area's width and the chart's height in pixels.
const PLOT_SIZE: (u32, u32) = (760, 600);
/// The narrowest legend column; it widens to fit the longest name, up to
/// the widest (longer names are cut: a chart's size never follows a text
/// of the data, which once made a 4 GiB image).
const LEGEND_WIDTH: u32 = 240;
const MAX_LEGEND_WIDTH: u32 = 600;
/// The longest category label drawn under the x axis, in characters.
const MAX_CATEGORY_CHARS: usize = 24;
/// Up to this many distinct x values, the ticks are the values themselves.
const MAX_SWEPT_TICKS: usize = 8;
/// Legend lines at the 15-pixel font: about 8.5 pixels a character.
const LEGEND_CHAR: f64 = 8.5;

/// How x values are laid out.
#[derive(Clone, Debug, PartialEq)]
pub enum XAxis {
    /// x values are numbers; `integer`: whole numbers only (ticks too).
    Numeric { integer: bool },
    /// x values are labels, drawn at 0, 1, 2, ... in this order.
    Categorical(Vec<String>),
}

/// One point: the median of its runs and their range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub low: f64,
    pub high: f64,
    /// Measured by runs too short to time.
    pub too_short: bool,
}

#[cfg(test)]
impl Point {
    /// A point without spread.
    pub fn exact(x: f64, y: f64) -> Point {
        Point {
            x,
            y,
            low: y,
            high: y,
            too_short: false,
        }
    }
}

/// One line of a chart: its legend name and its points, by x.
#[derive(Clone, Debug)]
pub struct Line {
    pub name: String,
    pub points: Vec<Point>,
}

#[derive(Clone, Debug)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x: XAxis,
    /// How y values (and their ticks) are written.
    pub y_unit: Unit,
    pub log_x: bool,
    pub log_y: bool,
    pub lines: Vec<Line>,
    /// Lines under the legend (what the bars are, what hollow means).
    pub notes: Vec<String>,
}

/// Width of the legend column: wide enough for every name and note.
fn legend_width(c: &LineChart) -> u32 {
    let longest_name = c.lines.iter().map(|l| l.name.chars().count()).max();
    let longest_note = c.notes.iter().map(|n| n.chars().count()).max();
    let need_name = 50.0 + longest_name.unwrap_or(0) as f64 * LEGEND_CHAR + 12.0;
    let need_note = 8.0 + longest_note.unwrap_or(0) as f64 * 7.0 + 12.0;
    let need = need_name.max(need_note.min(420.0));
    (need.ceil().min(MAX_LEGEND_WIDTH as f64) as u32).max(LEGEND_WIDTH)
}

/// `text` cut to `max` characters, with an ellipsis when cut.
fn cut(text: &str, max: usize) -> String {
    if text.chars().nth(max).is_none() {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// The chart's width and height in pixels.
fn size(c: &LineChart) -> (u32, u32) {
    (PLOT_SIZE.0 + legend_width(c), PLOT_SIZE.1)
}

/// The points a chart can show: finite, and above 0 on a log axis.
fn drawable(c: &LineChart, p: &Point) -> bool {
    let numeric = matches!(c.x, XAxis::Numeric { .. });
    p.x.is_finite()
        && p.y.is_finite()
        && (!c.log_y || p.y > 0.0)
        && (!(c.log_x && numeric) || p.x > 0.0)
}

/// Why a chart has nothing to draw, or `None` when it has something.
pub fn no_data_reason(c: &LineChart) -> Option<String> {
    let any = c
        .lines
        .iter()
        .flat_map(|l| &l.points)
        .any(|p| drawable(c, p));
    if any {
        return None;
    }
    let some = c
        .lines
        .iter()
        .flat_map(|l| &l.points)
        .any(|p| p.y.is_finite());
    Some(if some && c.log_y {
        "every value is 0 or less, which a log axis cannot show".to_string()
    } else {
        "no run measured this".to_string()
    })
}

/// The range of `values` on a linear or log axis, with some room around;
/// finite whatever the values (the room is taken within what an `f64`
/// holds: 1e308 once padded to infinity and ticked forever).
fn range(values: impl Iterator<Item = f64>, log: bool, from_zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite() && (!log || *v > 0.0)) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if lo > hi {
        return if log { (1.0, 10.0) } else { (0.0, 1.0) };
    }
    let finite = |v: f64| v.clamp(-f64::MAX, f64::MAX);
    if log {
        // In decades: a factor of 2 around one value, else 6% each side.
        let (a, b) = (lo.log10(), hi.log10());
        let pad = if lo == hi {
            2f64.log10()
        } else {
            (b - a) * 0.06
        };
        let smallest = f64::from_bits(1);
        return (
            10f64.powf(a - pad).max(smallest).min(lo),
            finite(10f64.powf(b + pad)).max(hi),
        );
    }
    if from_zero && lo >= 0.0 {
        lo = 0.0;
    }
    if lo == hi {
        let d = if lo == 0.0 { 1.0 } else { lo.abs() * 0.5 };
        return (finite(lo - d), finite(hi + d));
    }
    // (hi - lo) * 0.06, without overflowing on the way.
    let pad = (hi / 2.0 - lo / 2.0) * 0.12;
    (
        if from_zero && lo == 0.0 {
            0.0
        } else {
            finite(lo - pad)
        },
        finite(hi + pad),
    )
}

/// Draws `chart` into `png` and `svg`, each written under a temporary
/// name and renamed into place (a chart file is never half drawn).
pub fn draw(chart: &LineChart, png: &Path, svg: &Path) -> Result<(), String> {
    crate::files::write_atomic_with(png, |tmp| {
        let root = BitMapBackend::new(tmp, size(chart)).into_drawing_area();
        draw_on(&root, chart)?;
        root.present()
            .map_err(|e| format!("cannot write {}: {e}", png.display()))
    })?;
    crate::files::write_atomic_with(svg, |tmp| {
        let root = SVGBackend::new(tmp, size(chart)).into_drawing_area();
        draw_on(&root, chart)?;
        root.present()
            .map_err(|e| format!("cannot write {}: {e}", svg.display()))
    })
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

fn marker_size(i: usize, n: usize) -> i32 {
    4 + widen(i, n) as i32
}

/// 3 for the first line down to 0 for the last.
fn widen(i: usize, n: usize) -> u32 {
    if n <= 1 {
        return 0;
    }
    ((n - 1 - i) as f64 * 3.0 / (n - 1) as f64).round() as u32
}

/// Dash length and gap of line `i`; `None` for a solid line.
fn dash(i: usize) -> Option<(u32, u32)> {
    const DASHES: [Option<(u32, u32)>; 5] = [
        None,
        Some((14, 6)),
        Some((4, 4)),
        Some((20, 5)),
        Some((8, 3)),
    ];
    DASHES[i % DASHES.len()]
}

/// The marker shapes, by line.
#[derive(Clone, Copy)]
enum Shape {
    Circle,
    Square,
    Triangle,
    Diamond,
    Cross,
}

fn shape(i: usize) -> Shape {
    [
        Shape::Circle,
        Shape::Square,
        Shape::Triangle,
        Shape::Diamond,
        Shape::Cross,
    ][i % 5]
}

/// Draws a marker centred on pixel `(x, y)`, hollow (white inside) when
/// `hollow`.
fn marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
    shape: Shape,
    size: i32,
    col: RGBColor,
    hollow: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let fill = if hollow { WHITE.filled() } else { col.filled() };
    let edge = col.stroke_width(2);
    let s = size;
    let polygon = |pts: Vec<(i32, i32)>| -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        area.draw(&Polygon::new(pts.clone(), fill))?;
        let mut closed = pts;
        closed.push(closed[0]);
        area.draw(&PathElement::new(closed, edge))
    };
    match shape {
        Shape::Circle => {
            area.draw(&Circle::new((x, y), s, fill))?;
            area.draw(&Circle::new((x, y), s, edge))
        }
        Shape::Square => polygon(vec![
            (x - s, y - s),
            (x + s, y - s),
            (x + s, y + s),
            (x - s, y + s),
        ]),
        Shape::Triangle => polygon(vec![(x, y - s - 1), (x + s + 1, y + s), (x - s - 1, y + s)]),
        Shape::Diamond => polygon(vec![
            (x, y - s - 1),
            (x + s + 1, y),
            (x, y + s + 1),
            (x - s - 1, y),
        ]),
        Shape::Cross => {
            let w = col.stroke_width(if hollow { 2 } else { 3 });
            area.draw(&PathElement::new(vec![(x - s, y - s), (x + s, y + s)], w))?;
            area.draw(&PathElement::new(vec![(x - s, y + s), (x + s, y - s)], w))
        }
    }
}

fn draw_on<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, c: &LineChart) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(err)?;
    let (plot_area, legend) = root.split_horizontally(PLOT_SIZE.0);

    if let Some(reason) = no_data_reason(c) {
        let titled = plot_area
            .titled(&c.title, ("sans-serif", 22))
            .map_err(err)?;
        let (w, h) = titled.dim_in_pixel();
        titled
            .draw(&Rectangle::new(
                [(60, 20), (w as i32 - 20, h as i32 - 60)],
                RGBColor(180, 180, 180).stroke_width(1),
            ))
            .map_err(err)?;
        let centre = (w as i32 / 2, h as i32 / 2 - 30);
        let style = ("sans-serif", 28)
            .into_font()
            .color(&RGBColor(90, 90, 90))
            .pos(plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Center,
                plotters::style::text_anchor::VPos::Center,
            ));
        titled
            .draw(&Text::new("no data", centre, style.clone()))
            .map_err(err)?;
        let small = ("sans-serif", 15)
            .into_font()
            .color(&RGBColor(90, 90, 90))
            .pos(plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Center,
                plotters::style::text_anchor::VPos::Center,
            ));
        titled
            .draw(&Text::new(
                format!("{} against {}: {reason}", c.y_label, c.x_label),
                (centre.0, centre.1 + 36),
                small,
            ))
            .map_err(err)?;
        return draw_legend(&legend, c).map_err(err);
    }

    let points = || {
        c.lines
            .iter()
            .flat_map(|l| &l.points)
            .filter(|p| drawable(c, p))
    };
    let (x0, x1) = match &c.x {
        XAxis::Numeric { .. } => range(points().map(|p| p.x), c.log_x, false),
        XAxis::Categorical(labels) => (-0.5, labels.len().max(1) as f64 - 0.5),
    };
    let ys = points().flat_map(|p| [p.y, p.low, p.high]);
    let (y0, y1) = range(ys, c.log_y, true);
    let integer_x = matches!(c.x, XAxis::Numeric { integer: true });
    let log_x = c.log_x && matches!(c.x, XAxis::Numeric { .. });
    // A sweep of a few values is labelled at those values.
    let mut swept: Vec<f64> = points().map(|p| p.x).collect();
    swept.sort_by(|a, b| a.total_cmp(b));
    swept.dedup();
    let (x_major, x_minor) = match &c.x {
        XAxis::Categorical(labels) => ((0..labels.len()).map(|i| i as f64).collect(), Vec::new()),
        XAxis::Numeric { .. } if (2..=MAX_SWEPT_TICKS).contains(&swept.len()) => {
            let (grid, _) = if log_x {
                ticks::log(x0, x1, integer_x)
            } else {
                (ticks::linear(x0, x1, integer_x), Vec::new())
            };
            (swept, grid)
        }
        XAxis::Numeric { .. } if log_x => ticks::log(x0, x1, integer_x),
        XAxis::Numeric { .. } => (ticks::linear(x0, x1, integer_x), Vec::new()),
    };
    let (y_major, y_minor) = if c.log_y {
        ticks::log(y0, y1, false)
    } else {
        (ticks::linear(y0, y1, false), Vec::new())
    };
    let x_labels = match &c.x {
        XAxis::Categorical(labels) => labels.iter().map(|l| cut(l, MAX_CATEGORY_CHARS)).collect(),
        // Whole numbers under 100k are written out (1024, not 1.02k).
        XAxis::Numeric { integer: true } if x_major.iter().all(|v| v.abs() < 1e5) => {
            x_major.iter().map(|v| format!("{v:.0}")).collect()
        }
        XAxis::Numeric { .. } => ticks::labels(&x_major, Unit::Count),
    };
    let y_labels = ticks::labels(&y_major, c.y_unit);
    let axes = Axes {
        x_major,
        x_minor,
        x_labels,
        y_major,
        y_minor,
        y_labels,
    };
    let x_axis = TickedAxis {
        lo: x0,
        hi: x1,
        log: log_x,
        major: axes.x_major.clone(),
        minor: axes.x_minor.clone(),
    };
    let y_axis = TickedAxis {
        lo: y0,
        hi: y1,
        log: c.log_y,
        major: axes.y_major.clone(),
        minor: axes.y_minor.clone(),
    };
    plot_with(&plot_area, c, &axes, x_axis, y_axis)?;
    draw_legend(&legend, c).map_err(err)
}

/// The legend: per line a short stretch of its dash with its marker, then
/// its name; the notes below.
fn draw_legend<DB: DrawingBackend>(
    legend: &DrawingArea<DB, Shift>,
    c: &LineChart,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let font = ("sans-serif", 15).into_font();
    let mut y = 70;
    let n = c.lines.len();
    for (i, line) in c.lines.iter().enumerate() {
        let style = color(i).stroke_width(line_width(i, n));
        let path = vec![(6, y), (42, y)];
        match dash(i) {
            None => legend.draw(&PathElement::new(path, style))?,
            Some((len, gap)) => legend.draw(&DashedPathElement::new(path, len, gap, style))?,
        }
        marker(
            legend,
            (24, y),
            shape(i),
            marker_size(i, n),
            color(i),
            false,
        )?;
        let room = ((legend_width(c) as f64 - 62.0) / LEGEND_CHAR).max(8.0) as usize;
        legend.draw(&Text::new(
            cut(&line.name, room),
            (50, y - 8),
            font.clone().color(&BLACK),
        ))?;
        y += 26;
    }
    y += 14;
    let small = ("sans-serif", 13).into_font().color(&RGBColor(70, 70, 70));
    for note in &c.notes {
        legend.draw(&Text::new(note.clone(), (8, y), small.clone()))?;
        y += 19;
    }
    Ok(())
}

/// A linear or log axis with the ticks of [`ticks`] (plotters' own
/// would be chosen by plotters).
struct TickedAxis {
    lo: f64,
    hi: f64,
    log: bool,
    major: Vec<f64>,
    minor: Vec<f64>,
}

impl Ranged for TickedAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let (a, b, x) = if self.log {
            (self.lo.ln(), self.hi.ln(), v.ln())
        } else {
            (self.lo, self.hi, *v)
        };
        // Halves first: b - a of an axis from -1e308 to 1e308 overflows.
        let t = if b > a {
            (x / 2.0 - a / 2.0) / (b / 2.0 - a / 2.0)
        } else {
            0.5
        };
        let t = if t.is_finite() {
            t.clamp(-1.0, 2.0)
        } else {
            0.5
        };
        limit.0 + (t * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.minor.clone()
        } else {
            self.major.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// Tick positions and labels of both axes.
struct Axes {
    x_major: Vec<f64>,
    x_minor: Vec<f64>,
    x_labels: Vec<String>,
    y_major: Vec<f64>,
    y_minor: Vec<f64>,
    y_labels: Vec<String>,
}

fn label_of(ticks: &[f64], labels: &[String], v: f64) -> String {
    ticks
        .iter()
        .position(|t| (t - v).abs() <= 1e-9 * t.abs().max(1e-300))
        .and_then(|i| labels.get(i).cloned())
        .unwrap_or_default()
}

/// How far line `i` of `n` is shifted along x, as a fraction of the plot's
/// width, so that equal points of several lines sit side by side.
fn dodge(i: usize, n: usize) -> f64 {
    if n <= 1 {
        return 0.0;
    }
    let spread = (0.006 * (n - 1) as f64).min(0.03);
    -spread / 2.0 + spread * i as f64 / (n - 1) as f64
}

fn plot_with<DB>(
    area: &DrawingArea<DB, Shift>,
    c: &LineChart,
    axes: &Axes,
    x_coord: TickedAxis,
    y_coord: TickedAxis,
) -> Result<(), String>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let mut chart = ChartBuilder::on(area)
        .caption(&c.title, ("sans-serif", 22))
        .margin(18)
        .x_label_area_size(56)
        .y_label_area_size(84)
        .build_cartesian_2d(x_coord, y_coord)
        .map_err(err)?;

    let x_format = |v: &f64| label_of(&axes.x_major, &axes.x_labels, *v);
    let y_format = |v: &f64| label_of(&axes.y_major, &axes.y_labels, *v);
    chart
        .configure_mesh()
        .x_desc(&c.x_label)
        .y_desc(&c.y_label)
        .x_label_formatter(&x_format)
        .y_label_formatter(&y_format)
        .axis_desc_style(("sans-serif", 18))
        .label_style(("sans-serif", 14))
        .bold_line_style(RGBColor(205, 205, 205))
        .light_line_style(RGBColor(238, 238, 238))
        .draw()
        .map_err(err)?;

    let n = c.lines.len();
    // Lines, bars and markers are drawn in pixels (a dodge is a shift in
    // pixels), on `area`, whose origin is `base` in the backend.
    let base = area.get_base_pixel();
    let local = |(x, y): (i32, i32)| (x - base.0, y - base.1);
    let width = {
        let r = chart.plotting_area().get_pixel_range();
        (r.0.end - r.0.start) as f64
    };
    for (i, line) in c.lines.iter().enumerate() {
        let col = color(i);
        let shift = (dodge(i, n) * width).round() as i32;
        let pixels: Vec<(Point, (i32, i32))> = line
            .points
            .iter()
            .filter(|p| drawable(c, p))
            .map(|p| {
                let (x, y) = local(chart.backend_coord(&(p.x, p.y)));
                (*p, (x + shift, y))
            })
            .collect();
        let path: Vec<(i32, i32)> = pixels.iter().map(|(_, px)| *px).collect();
        let style = col.stroke_width(line_width(i, n));
        match dash(i) {
            None => area.draw(&PathElement::new(path, style)).map_err(err)?,
            Some((len, gap)) => area
                .draw(&DashedPathElement::new(path, len, gap, style))
                .map_err(err)?,
        }
        // Error bars: min to max of the runs, with caps.
        for (p, (x, _)) in &pixels {
            if p.low == p.high {
                continue;
            }
            let low = if c.log_y {
                p.low.max(f64::MIN_POSITIVE)
            } else {
                p.low
            };
            let (_, ylo) = local(chart.backend_coord(&(p.x, low)));
            let (_, yhi) = local(chart.backend_coord(&(p.x, p.high)));
            let bar = col.stroke_width(2);
            area.draw(&PathElement::new(vec![(*x, ylo), (*x, yhi)], bar))
                .map_err(err)?;
            for yy in [ylo, yhi] {
                area.draw(&PathElement::new(vec![(x - 5, yy), (x + 5, yy)], bar))
                    .map_err(err)?;
            }
        }
        for (p, px) in &pixels {
            marker(area, *px, shape(i), marker_size(i, n), col, p.too_short).map_err(err)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(names: &[&str]) -> LineChart {
        LineChart {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            x: XAxis::Numeric { integer: false },
            y_unit: Unit::Count,
            log_x: false,
            log_y: false,
            lines: names
                .iter()
                .map(|n| Line {
                    name: n.to_string(),
                    points: vec![Point::exact(1.0, 1.0)],
                })
                .collect(),
            notes: Vec::new(),
        }
    }

    #[test]
    fn the_legend_widens_for_long_names() {
        assert_eq!(size(&chart(&["heap", "rocksdb-mb10k"])), (1000, 600));
        let long = "rocksdb-multijoin-amplified-4rows";
        let (w, _) = size(&chart(&["heap", long]));
        assert!(w > 1000 && w - PLOT_SIZE.0 >= 50 + 8 * long.len() as u32);
    }

    #[test]
    fn names_and_values_of_any_size_make_a_chart_of_its_size() {
        let long = "x".repeat(300_000);
        assert_eq!(
            size(&chart(&["heap", &long])),
            (760 + MAX_LEGEND_WIDTH, 600)
        );
        let mut c = chart(&[&long]);
        c.lines[0].points = vec![Point::exact(-1e308, 1e308), Point::exact(1.7e308, -1.7e308)];
        assert!(svg_texts(&c).iter().any(|t| t.ends_with('…')));
        for log in [false, true] {
            let (lo, hi) = range([5e-324, 1e308, 1.7e308].into_iter(), log, true);
            assert!(lo.is_finite() && hi.is_finite() && lo < hi, "{lo} {hi}");
            c.log_y = log;
            c.log_x = log;
            c.lines[0].points = vec![
                Point::exact(5e-324, 1e308),
                Point::exact(1.7e308, 5e-324),
                Point::exact(1.0, f64::NAN),
            ];
            svg_texts(&c);
        }
    }

    #[test]
    fn ranges() {
        assert_eq!(range([2.0, 4.0].into_iter(), false, true).0, 0.0);
        let (lo, hi) = range([250.0, 4000.0].into_iter(), true, true);
        assert!(lo < 250.0 && lo > 100.0 && hi > 4000.0, "{lo} {hi}");
        assert_eq!(range(std::iter::empty(), false, true), (0.0, 1.0));
    }

    /// The texts of the SVG drawing of `c`.
    fn svg_texts(c: &LineChart) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let (png, svg) = (dir.path().join("c.png"), dir.path().join("c.svg"));
        draw(c, &png, &svg).unwrap();
        let text = std::fs::read_to_string(&svg).unwrap();
        text.split("<text")
            .skip(1)
            .filter_map(|t| {
                let body = &t[t.find('>')? + 1..];
                Some(body[..body.find("</text>")?].trim().to_string())
            })
            .collect()
    }

    fn line(name: &str, points: &[(f64, f64)]) -> Line {
        Line {
            name: name.to_string(),
            points: points.iter().map(|&(x, y)| Point::exact(x, y)).collect(),
        }
    }

    #[test]
    fn tick_labels_are_unique() {
        // The minibatch-agg throughput chart: a log axis from 0.9M to 1.2M
        // once drew "1M" twice.
        let mut c = chart(&[]);
        c.log_y = true;
        c.y_unit = Unit::Rate;
        c.lines = vec![
            line("a", &[(0.5, 0.95e6), (1.5, 1.2e6)]),
            line("b", &[(0.5, 1.0e6), (1.5, 1.05e6)]),
        ];
        let texts = svg_texts(&c);
        let mut ticks: Vec<&String> = texts.iter().filter(|t| t.ends_with('M')).collect();
        assert!(ticks.len() >= 3, "{texts:?}");
        let n = ticks.len();
        ticks.sort();
        ticks.dedup();
        assert_eq!(ticks.len(), n, "a tick label repeats: {texts:?}");
    }

    #[test]
    fn integer_x_has_integer_ticks() {
        let mut c = chart(&[]);
        c.x = XAxis::Numeric { integer: true };
        c.lines = vec![line("a", &[(1.0, 5.0), (2.0, 6.0), (3.0, 7.0), (4.0, 8.0)])];
        let texts = svg_texts(&c);
        for t in ["1", "2", "3", "4"] {
            assert!(texts.iter().any(|x| x == t), "no tick {t}: {texts:?}");
        }
        for t in ["1.5", "2.5", "0.5", "3.5"] {
            assert!(!texts.iter().any(|x| x == t), "tick {t}: {texts:?}");
        }
        // A power-of-two sweep on a log axis is labelled as written.
        c.log_x = true;
        c.lines = vec![line("a", &[(1.0, 5.0), (16.0, 6.0), (1024.0, 7.0)])];
        let texts = svg_texts(&c);
        for t in ["1", "16", "1024"] {
            assert!(texts.iter().any(|x| x == t), "no tick {t}: {texts:?}");
        }
    }

    #[test]
    fn log_ticks_are_labelled_below_one() {
        let mut c = chart(&[]);
        c.log_y = true;
        c.lines = vec![line("a", &[(1.0, 0.04), (2.0, 0.3), (3.0, 2.0)])];
        let texts = svg_texts(&c);
        for t in ["0.05", "0.1", "0.2", "0.5", "1", "2"] {
            assert!(texts.iter().any(|x| x == t), "no tick {t}: {texts:?}");
        }
    }

    #[test]
    fn labels_are_drawn_as_given() {
        let mut c = chart(&["a"]);
        c.x_label = "key skew (Zipf exponent)".into();
        c.y_label = "wall time".into();
        let texts = svg_texts(&c);
        assert!(
            texts.iter().any(|t| t == "key skew (Zipf exponent)"),
            "{texts:?}"
        );
        assert!(texts.iter().any(|t| t == "wall time"), "{texts:?}");
    }

    #[test]
    fn an_empty_chart_says_no_data() {
        let mut c = chart(&["a"]);
        c.lines[0].points.clear();
        assert!(svg_texts(&c).iter().any(|t| t == "no data"));
        let mut c = chart(&["a", "b"]);
        c.log_y = true;
        for l in &mut c.lines {
            l.points = vec![Point::exact(1.0, 0.0), Point::exact(2.0, 0.0)];
        }
        let texts = svg_texts(&c);
        assert!(texts.iter().any(|t| t == "no data"), "{texts:?}");
        assert!(texts.iter().any(|t| t.contains("log axis")), "{texts:?}");
    }

    #[test]
    fn spread_is_drawn_as_bars() {
        // An error bar is a vertical path from min to max; with spread the
        // SVG has more paths than without.
        let count_paths = |c: &LineChart| {
            let dir = tempfile::tempdir().unwrap();
            let (png, svg) = (dir.path().join("c.png"), dir.path().join("c.svg"));
            draw(c, &png, &svg).unwrap();
            std::fs::read_to_string(&svg)
                .unwrap()
                .matches("<polyline")
                .count()
        };
        let mut c = chart(&["a"]);
        c.lines[0].points = vec![Point::exact(1.0, 5.0), Point::exact(2.0, 6.0)];
        let without = count_paths(&c);
        for p in &mut c.lines[0].points {
            p.low = p.y - 1.0;
            p.high = p.y + 1.0;
        }
        // A bar and two caps per point (the wider y range may add a grid line).
        let with = count_paths(&c);
        assert!(with >= without + 2 * 3, "{with} vs {without}");
    }

    #[test]
    fn nothing_to_draw_has_a_reason() {
        let mut c = chart(&["a"]);
        assert_eq!(no_data_reason(&c), None);
        c.log_y = true;
        c.lines[0].points[0].y = 0.0;
        assert!(no_data_reason(&c).unwrap().contains("log axis"));
        c.lines[0].points.clear();
        assert!(no_data_reason(&c).is_some());
    }
}
