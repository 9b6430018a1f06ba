//! Campaign specs (`campaigns/<name>.toml`): what to run, how often, and
//! what to draw. The format, every field and its defaults are documented
//! in `docs/campaigns.md` ("The spec"); keep it in step with [`RawSpec`].
//!
//! In short: `name`, `script`, `description`, `repeats`,
//! `[variants.<name>]` of configuration keys (and, not configuration, the
//! `engine` it runs on, the `sinks` it runs and `[variants.<name>.flink]`
//! keys for Flink only), a `[sweep]` (or `[[sweep]]`
//! entries) of dimensions, `[quick]`, and `[[chart]]`s. A dimension whose
//! name is a configuration key (it has a dot) sets that key; any other name
//! is a script parameter and must appear in the script as `${name}`, and
//! every `${name}` in the script must be a dimension. Variants are run in
//! the order written; the first is the baseline of every ratio.
//!
//! Everything is checked before anything runs; an error names the spec
//! file, the line and column, and what was expected.

use super::metrics::{metric, metric_names, Metric};
use super::CampaignError;
use crate::flink::Engine;
use crate::template::{self, is_identifier, line_col};
use optimizer::config::Config;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// Columns of `results.csv` before the sweep dimensions.
pub const LEADING_COLUMNS: &[&str] = &["campaign", "point", "variant", "repeat", "sink"];
/// Columns of `results.csv` after the metrics and the configuration
/// (`engine`: `lab` or `flink`, where the run ran).
pub const TRAILING_COLUMNS: &[&str] = &["git_revision", "machine_cores", "machine_model", "engine"];

const DEFAULT_REPEATS: u32 = 3;

/// Limits on what a spec may ask for, checked with the spec's line before
/// anything runs: a mutated number must not become a capacity, and a text
/// must fit where it goes (a file name, a chart).
pub const MAX_REPEATS: u32 = 1000;
/// Points of one sweep (the product of its dimensions' value counts).
pub const MAX_POINTS: u64 = 10_000;
/// Runs of one campaign: points × variants × repeats.
pub const MAX_RUNS: u64 = 100_000;
/// Characters of a campaign, variant or dimension name, a chart's title
/// or an axis label (a title is drawn on one line of a ~1000-pixel chart
/// and names its files).
pub const MAX_TEXT: usize = 100;
/// Characters of a chart's file name, without its extension.
const MAX_SLUG: usize = 80;

// ---------------------------------------------------------------------------
// The TOML shape.

/// A string, number or boolean; what configuration values and sweep values are.
#[derive(Clone, Debug)]
enum Scalar {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl Scalar {
    /// The text substituted into scripts and given to `Config::set`.
    fn text(&self) -> String {
        match self {
            Scalar::Str(s) => s.clone(),
            Scalar::Int(i) => i.to_string(),
            // `{:?}` keeps a fraction: 1.0 stays "1.0".
            Scalar::Float(f) => format!("{f:?}"),
            Scalar::Bool(b) => b.to_string(),
        }
    }
}

struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string, number or boolean")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
        Ok(Scalar::Str(v.to_string()))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
        Ok(Scalar::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
        i64::try_from(v)
            .map(Scalar::Int)
            .map_err(|_| E::custom("integer too large"))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
        Ok(Scalar::Float(v))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar, E> {
        Ok(Scalar::Bool(v))
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Scalar, D::Error> {
        d.deserialize_any(ScalarVisitor)
    }
}

/// A table in document order. Keys carry no span (toml gives none for the
/// keys of a `[a.b]` header); errors about a key point at its value, which
/// starts on the key's line.
type Table = Vec<(String, SpItem)>;

/// Any value, keeping the document's order and every span.
#[derive(Debug)]
enum Item {
    Scalar(Scalar),
    List(Vec<Spanned<Scalar>>),
    Table(Table),
}

struct ItemVisitor;

impl<'de> Visitor<'de> for ItemVisitor {
    type Value = Item;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string, number, boolean, array or table")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Item, E> {
        ScalarVisitor.visit_str(v).map(Item::Scalar)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Item, E> {
        ScalarVisitor.visit_i64(v).map(Item::Scalar)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Item, E> {
        ScalarVisitor.visit_u64(v).map(Item::Scalar)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Item, E> {
        ScalarVisitor.visit_f64(v).map(Item::Scalar)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Item, E> {
        ScalarVisitor.visit_bool(v).map(Item::Scalar)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Item, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element::<Spanned<Scalar>>()? {
            out.push(v);
        }
        Ok(Item::List(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Item, A::Error> {
        let mut out = Vec::new();
        while let Some(k) = map.next_key::<String>()? {
            let v = map.next_value::<SpItem>()?;
            out.push((k, v));
        }
        Ok(Item::Table(out))
    }
}

impl<'de> Deserialize<'de> for Item {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Item, D::Error> {
        d.deserialize_any(ItemVisitor)
    }
}

// serde_spanned's protocol: a deserializer that knows a value's span
// answers `deserialize_struct` with this name and fields by a map of
// start, end and value. toml knows no span for implicit tables (`[a.b]`
// creates `a`), and then deserializes the value as usual; `SpItem` takes
// both (with these names unrecognised, it would merely lose its spans).
const SPANNED_NAME: &str = "$__serde_spanned_private_Spanned";
const SPANNED_START: &str = "$__serde_spanned_private_start";
const SPANNED_END: &str = "$__serde_spanned_private_end";
const SPANNED_VALUE: &str = "$__serde_spanned_private_value";
const SPANNED_FIELDS: &[&str] = &[SPANNED_START, SPANNED_END, SPANNED_VALUE];

/// An [`Item`] with its byte range in the document when toml knows it.
#[derive(Debug)]
struct SpItem {
    span: Option<Range<usize>>,
    item: Item,
}

impl SpItem {
    fn span(&self) -> Option<Range<usize>> {
        self.span.clone()
    }
    fn get_ref(&self) -> &Item {
        &self.item
    }
    fn into_inner(self) -> Item {
        self.item
    }
}

struct SpItemVisitor;

impl<'de> Visitor<'de> for SpItemVisitor {
    type Value = SpItem;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        ItemVisitor.expecting(f)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<SpItem, E> {
        unspanned(ItemVisitor.visit_str(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<SpItem, E> {
        unspanned(ItemVisitor.visit_i64(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<SpItem, E> {
        unspanned(ItemVisitor.visit_u64(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<SpItem, E> {
        unspanned(ItemVisitor.visit_f64(v))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<SpItem, E> {
        unspanned(ItemVisitor.visit_bool(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<SpItem, A::Error> {
        unspanned(ItemVisitor.visit_seq(seq))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SpItem, A::Error> {
        let Some(first) = map.next_key::<String>()? else {
            return unspanned(Ok(Item::Table(Vec::new())));
        };
        if first == SPANNED_START {
            let start: usize = map.next_value()?;
            let _ = map.next_key::<String>()?;
            let end: usize = map.next_value()?;
            let _ = map.next_key::<String>()?;
            let item: Item = map.next_value()?;
            return Ok(SpItem {
                span: Some(start..end),
                item,
            });
        }
        // A table without a span; its first key is already read.
        let mut out = vec![(first, map.next_value::<SpItem>()?)];
        while let Some(k) = map.next_key::<String>()? {
            let v = map.next_value::<SpItem>()?;
            out.push((k, v));
        }
        unspanned(Ok(Item::Table(out)))
    }
}

fn unspanned<E>(item: Result<Item, E>) -> Result<SpItem, E> {
    item.map(|item| SpItem { span: None, item })
}

impl<'de> Deserialize<'de> for SpItem {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<SpItem, D::Error> {
        d.deserialize_struct(SPANNED_NAME, SPANNED_FIELDS, SpItemVisitor)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSweepEntry {
    param: Spanned<String>,
    values: SpItem,
}

/// `[sweep]` (a table) or `[[sweep]]` (one dimension per entry).
enum RawSweep {
    Table(Table),
    Entries(Vec<RawSweepEntry>),
}

impl<'de> Deserialize<'de> for RawSweep {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RawSweep, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawSweep;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a [sweep] table of dimension = [values] or [[sweep]] entries \
                     with param and values",
                )
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawSweep, A::Error> {
                let mut out = Vec::new();
                while let Some(e) = seq.next_element::<RawSweepEntry>()? {
                    out.push(e);
                }
                Ok(RawSweep::Entries(out))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawSweep, A::Error> {
                match ItemVisitor.visit_map(map)? {
                    Item::Table(t) => Ok(RawSweep::Table(t)),
                    _ => unreachable!("visit_map returns a table"),
                }
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawQuick {
    repeats: Option<Spanned<i64>>,
    sweep: Option<SpItem>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawChart {
    title: Spanned<String>,
    x: Spanned<String>,
    y: Spanned<String>,
    series: Option<Spanned<String>>,
    #[serde(default)]
    log_x: bool,
    #[serde(default)]
    log_y: bool,
    sink: Option<Spanned<String>>,
    x_label: Option<Spanned<String>>,
    y_label: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    name: Spanned<String>,
    script: Spanned<String>,
    description: Option<String>,
    repeats: Option<Spanned<i64>>,
    variants: Option<SpItem>,
    sweep: Option<RawSweep>,
    quick: Option<RawQuick>,
    #[serde(default)]
    chart: Vec<RawChart>,
}

// ---------------------------------------------------------------------------
// The checked spec.

/// One variant: a name, the configuration it sets, and where it runs.
#[derive(Clone, Debug)]
pub struct Variant {
    pub name: String,
    pub settings: Vec<(String, String)>,
    /// `engine = "lab" | "flink"`; `None`: the command's `--engine`.
    pub engine: Option<Engine>,
    /// `[variants.<name>.flink]`: configuration for Flink only (keys the
    /// lab does not model), as `lab compare --flink-set`.
    pub flink_settings: Vec<(String, String)>,
    /// `sinks = [...]`: the INSERTs this variant runs (by sink); `None`: all.
    pub sinks: Option<Vec<String>>,
    /// Its table in the spec, for messages.
    span: Option<Range<usize>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DimKind {
    /// Sets a configuration key.
    Config,
    /// Replaces `${name}` in the script.
    Param,
}

/// One sweep dimension.
#[derive(Clone, Debug)]
pub struct Dim {
    pub name: String,
    pub kind: DimKind,
    pub values: Vec<String>,
    span: Option<Range<usize>>,
    /// Where each of `values` is written.
    value_spans: Vec<Option<Range<usize>>>,
}

/// What a chart draws one line per.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Series {
    Variant,
    Dim(String),
}

#[derive(Clone)]
pub struct Chart {
    pub title: String,
    /// File name without extension, unique within the campaign.
    pub slug: String,
    /// A sweep dimension.
    pub x: String,
    pub y: &'static Metric,
    pub series: Series,
    pub log_x: bool,
    pub log_y: bool,
    pub sink: Option<String>,
    sink_span: Option<Range<usize>>,
    /// The x axis's label (default: the dimension's name).
    pub x_label: Option<String>,
    /// The y axis's label (default: the metric's label and unit).
    pub y_label: Option<String>,
}

/// One point of the sweep: a value per dimension.
#[derive(Clone, Debug)]
pub struct Point {
    /// 1-based, in sweep order.
    pub id: usize,
    pub values: Vec<String>,
}

/// The points and repeats of one run of the campaign (full or `--quick`).
pub struct Plan {
    pub points: Vec<Point>,
    pub repeats: u32,
}

pub struct Spec {
    /// The spec file, as named on the command line (for messages).
    pub file: PathBuf,
    /// The spec's text, saved verbatim as `spec.toml` of the report.
    pub text: String,
    pub name: String,
    /// As written (relative to the spec file).
    pub script: String,
    script_span: Range<usize>,
    pub description: String,
    pub repeats: u32,
    pub variants: Vec<Variant>,
    pub dims: Vec<Dim>,
    quick_repeats: u32,
    /// Per dimension, the values `--quick` uses instead (if given).
    quick_values: Vec<Option<Vec<String>>>,
    /// Where each of `quick_values` is written.
    quick_spans: Vec<Vec<Option<Range<usize>>>>,
    pub charts: Vec<Chart>,
}

fn slug(title: &str) -> String {
    let mut s = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') && !s.is_empty() {
            s.push('-');
        }
    }
    // A file name has room for 255 bytes: keep it well within.
    s.truncate(MAX_SLUG);
    while s.ends_with('-') {
        s.pop();
    }
    if s.is_empty() {
        s.push_str("chart");
    }
    s
}

/// `what` = `text` must not be longer than [`MAX_TEXT`] characters.
fn short_text(
    ctx: &Ctx,
    span: Option<Range<usize>>,
    what: &str,
    text: &str,
) -> Result<(), CampaignError> {
    let n = text.chars().count();
    if n <= MAX_TEXT {
        return Ok(());
    }
    let start: String = text.chars().take(40).collect();
    Err(ctx.err(
        span,
        format!("{what} '{start}...' has {n} characters; expected at most {MAX_TEXT}"),
    ))
}

/// Checks one configuration key and value as `lab run --set` does; the
/// error is what `Config::set` says.
fn check_setting(key: &str, value: &str) -> Result<(), String> {
    Config::new().set(key, value).map_err(|e| e.message)
}

struct Ctx<'a> {
    file: &'a Path,
    text: &'a str,
}

impl Ctx<'_> {
    fn err(&self, span: Option<Range<usize>>, msg: impl fmt::Display) -> CampaignError {
        match span {
            Some(span) => {
                let (line, col) = line_col(self.text, span.start);
                CampaignError::input(format!("{}:{line}:{col}: {msg}", self.file.display()))
            }
            None => CampaignError::input(format!("{}: {msg}", self.file.display())),
        }
    }
}

/// A leaf of a flattened table: the dotted key and its value.
struct Leaf {
    key: String,
    key_span: Option<Range<usize>>,
    value: SpItem,
}

/// Flattens nested tables (`a.b.c = 1` is `{a = {b = {c = 1}}}` in TOML)
/// into dotted keys.
fn flatten(prefix: &str, table: Table, first_span: Option<Range<usize>>, out: &mut Vec<Leaf>) {
    for (k, v) in table {
        let key = if prefix.is_empty() {
            k
        } else {
            format!("{prefix}.{k}")
        };
        let key_span = first_span.clone().or_else(|| v.span());
        let span = v.span();
        match v.into_inner() {
            Item::Table(t) => flatten(&key, t, key_span, out),
            item => out.push(Leaf {
                key,
                key_span,
                value: SpItem { span, item },
            }),
        }
    }
}

impl Spec {
    /// Reads and checks a spec (everything but the script).
    pub fn load(file: &Path) -> Result<Spec, CampaignError> {
        let text = std::fs::read_to_string(file).map_err(|e| {
            CampaignError::input(format!("cannot read campaign spec {}: {e}", file.display()))
        })?;
        Spec::parse(file, text)
    }

    /// Checks a spec's text; `file` names it in messages and anchors the
    /// script's relative path.
    pub fn parse(file: &Path, text: String) -> Result<Spec, CampaignError> {
        let ctx = Ctx { file, text: &text };
        let raw: RawSpec = toml::from_str(&text).map_err(|e| {
            let message = e.message().trim_end().to_string();
            ctx.err(e.span(), message)
        })?;

        // name
        let name = raw.name.get_ref().trim().to_string();
        if name.is_empty()
            || name.starts_with('.')
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        {
            return Err(ctx.err(
                Some(raw.name.span()),
                format!(
                    "invalid campaign name '{}': expected letters, digits, '_', '-' or '.' \
                     (it names the report directory)",
                    raw.name.get_ref()
                ),
            ));
        }

        short_text(&ctx, Some(raw.name.span()), "the campaign name", &name)?;

        // script
        if raw.script.get_ref().trim().is_empty() {
            return Err(ctx.err(
                Some(raw.script.span()),
                "'script' is empty: expected the path of a Flink SQL script, relative to the spec file",
            ));
        }

        // repeats
        let repeats = match &raw.repeats {
            None => DEFAULT_REPEATS,
            Some(r) => positive(&ctx, r, "repeats")?,
        };

        // variants
        let mut variants = Vec::new();
        if let Some(v) = raw.variants {
            let span = v.span();
            let Item::Table(table) = v.into_inner() else {
                return Err(ctx.err(
                    span.clone(),
                    "'variants' must be a table: [variants.<name>] with configuration keys",
                ));
            };
            for (vname, body) in table {
                let body_span = body.span();
                let Item::Table(settings_table) = body.into_inner() else {
                    return Err(ctx.err(
                        body_span.clone(),
                        format!(
                            "variant '{}' must be a table of configuration `key = value`",
                            vname
                        ),
                    ));
                };
                if vname.trim().is_empty() {
                    return Err(ctx.err(body_span.clone(), "a variant name is empty"));
                }
                short_text(&ctx, body_span.clone(), "the variant name", &vname)?;
                let mut leaves = Vec::new();
                flatten("", settings_table, None, &mut leaves);
                let mut settings = Vec::new();
                let mut engine = None;
                let mut flink_settings = Vec::new();
                let mut sinks = None;
                for leaf in leaves {
                    // What is not configuration: where and what the variant runs.
                    match variant_key(&ctx, &vname, &leaf)? {
                        VariantKey::Engine(e) => {
                            engine = Some(e);
                            continue;
                        }
                        VariantKey::Sinks(s) => {
                            sinks = Some(s);
                            continue;
                        }
                        VariantKey::Flink(k, v) => {
                            flink_settings.push((k, v));
                            continue;
                        }
                        VariantKey::Config => {}
                    }
                    let value = match leaf.value.get_ref() {
                        Item::Scalar(s) => s.text(),
                        _ => {
                            return Err(ctx.err(
                                leaf.value.span(),
                                format!(
                                    "variant '{}': the value of '{}' must be a string, number \
                                     or boolean",
                                    vname, leaf.key
                                ),
                            ))
                        }
                    };
                    if let Some(e) = config_key_error(&leaf.key) {
                        return Err(ctx.err(leaf.key_span, format!("variant '{}': {e}", vname)));
                    }
                    if let Err(e) = check_setting(&leaf.key, &value) {
                        return Err(ctx.err(leaf.value.span(), format!("variant '{}': {e}", vname)));
                    }
                    settings.push((leaf.key, value));
                }
                if !flink_settings.is_empty() && engine == Some(Engine::Lab) {
                    return Err(ctx.err(
                        body_span.clone(),
                        format!(
                            "variant '{vname}' runs on the lab but has Flink-only settings \
                             ([variants.{vname}.flink]); give it engine = \"flink\""
                        ),
                    ));
                }
                variants.push(Variant {
                    name: vname,
                    settings,
                    engine,
                    flink_settings,
                    sinks,
                    span: body_span,
                });
            }
        }
        if variants.is_empty() {
            variants.push(Variant {
                name: "default".to_string(),
                settings: Vec::new(),
                engine: None,
                flink_settings: Vec::new(),
                sinks: None,
                span: None,
            });
        }

        // sweep
        let mut dims: Vec<Dim> = Vec::new();
        let entries: Vec<(String, Option<Range<usize>>, SpItem)> = match raw.sweep {
            None => Vec::new(),
            Some(RawSweep::Table(t)) => {
                let mut leaves = Vec::new();
                flatten("", t, None, &mut leaves);
                leaves
                    .into_iter()
                    .map(|l| (l.key, l.key_span, l.value))
                    .collect()
            }
            Some(RawSweep::Entries(es)) => es
                .into_iter()
                .map(|e| (e.param.get_ref().clone(), Some(e.param.span()), e.values))
                .collect(),
        };
        for (dname, span, values) in entries {
            if dims.iter().any(|d| d.name == dname) {
                return Err(ctx.err(
                    span.clone(),
                    format!("sweep dimension '{dname}' is given twice"),
                ));
            }
            short_text(&ctx, span.clone(), "the sweep dimension", &dname)?;
            let kind = dim_kind(&ctx, &dname, span.clone())?;
            let (values, value_spans) = dim_values(&ctx, &dname, kind, values)?.into_iter().unzip();
            if kind == DimKind::Config {
                if let Some(v) = variants
                    .iter()
                    .find(|v| v.settings.iter().any(|(k, _)| *k == dname))
                {
                    return Err(ctx.err(
                        span.clone(),
                        format!(
                            "'{dname}' is both swept and set by variant '{}': sweep it or \
                             set it per variant, not both",
                            v.name
                        ),
                    ));
                }
            }
            dims.push(Dim {
                name: dname,
                kind,
                values,
                span,
                value_spans,
            });
        }

        // quick
        let mut quick_repeats = 1;
        let quick_repeats_span = raw
            .quick
            .as_ref()
            .and_then(|q| q.repeats.as_ref())
            .map(|r| r.span());
        let mut quick_values: Vec<Option<Vec<String>>> = vec![None; dims.len()];
        let mut quick_spans: Vec<Vec<Option<Range<usize>>>> = vec![Vec::new(); dims.len()];
        if let Some(q) = raw.quick {
            if let Some(r) = &q.repeats {
                quick_repeats = positive(&ctx, r, "quick.repeats")?;
            }
            if let Some(sweep) = q.sweep {
                let span = sweep.span();
                let Item::Table(t) = sweep.into_inner() else {
                    return Err(ctx.err(
                        span.clone(),
                        "'quick.sweep' must be a table of dimension = [values]",
                    ));
                };
                let mut leaves = Vec::new();
                flatten("", t, None, &mut leaves);
                for leaf in leaves {
                    let Some(i) = dims.iter().position(|d| d.name == leaf.key) else {
                        return Err(ctx.err(
                            leaf.key_span,
                            format!(
                                "'quick.sweep' names '{}', which is not a sweep dimension; \
                                 expected one of: {}",
                                leaf.key,
                                dim_names(&dims)
                            ),
                        ));
                    };
                    let (values, spans) = dim_values(&ctx, &leaf.key, dims[i].kind, leaf.value)?
                        .into_iter()
                        .unzip();
                    quick_values[i] = Some(values);
                    quick_spans[i] = spans;
                }
            }
        }

        // charts
        let mut charts: Vec<Chart> = Vec::new();
        for c in raw.chart {
            let title = c.title.get_ref().trim().to_string();
            if title.is_empty() {
                return Err(ctx.err(Some(c.title.span()), "a chart's title is empty"));
            }
            short_text(&ctx, Some(c.title.span()), "the chart title", &title)?;
            let x = c.x.get_ref().clone();
            if !dims.iter().any(|d| d.name == x) {
                return Err(ctx.err(
                    Some(c.x.span()),
                    format!(
                        "chart '{title}': x = '{x}' is not a sweep dimension; expected one of: {}",
                        if dims.is_empty() {
                            "(none: the spec has no [sweep])".to_string()
                        } else {
                            dim_names(&dims)
                        }
                    ),
                ));
            }
            let y = metric(c.y.get_ref()).ok_or_else(|| {
                ctx.err(
                    Some(c.y.span()),
                    format!(
                        "chart '{title}': unknown metric y = '{}'; expected one of: {}",
                        c.y.get_ref(),
                        metric_names()
                    ),
                )
            })?;
            let series = match &c.series {
                None => Series::Variant,
                Some(s) if s.get_ref() == "variant" => Series::Variant,
                Some(s) if *s.get_ref() != x && dims.iter().any(|d| d.name == *s.get_ref()) => {
                    Series::Dim(s.get_ref().clone())
                }
                Some(s) => {
                    let others: Vec<&str> = std::iter::once("variant")
                        .chain(dims.iter().map(|d| d.name.as_str()).filter(|n| *n != x))
                        .collect();
                    return Err(ctx.err(
                        Some(s.span()),
                        format!(
                            "chart '{title}': series = '{}' is not 'variant' or a sweep dimension \
                             other than x; expected one of: {}",
                            s.get_ref(),
                            others.join(", ")
                        ),
                    ));
                }
            };
            let mut slug = slug(&title);
            let base = slug.clone();
            let mut n = 2;
            while charts.iter().any(|c| c.slug == slug) || slug == "index" {
                slug = format!("{base}-{n}");
                n += 1;
            }
            let label = |l: &Option<Spanned<String>>, which: &str| match l {
                Some(l) if l.get_ref().trim().is_empty() => Err(ctx.err(
                    Some(l.span()),
                    format!("chart '{title}': {which} is empty; leave it out for the default"),
                )),
                Some(l) => {
                    short_text(
                        &ctx,
                        Some(l.span()),
                        &format!("chart '{title}': {which}"),
                        l.get_ref().trim(),
                    )?;
                    Ok(Some(l.get_ref().trim().to_string()))
                }
                None => Ok(None),
            };
            let x_label = label(&c.x_label, "x_label")?;
            let y_label = label(&c.y_label, "y_label")?;
            charts.push(Chart {
                title,
                slug,
                x,
                y,
                series,
                log_x: c.log_x,
                log_y: c.log_y,
                sink: c.sink.as_ref().map(|s| s.get_ref().clone()),
                sink_span: c.sink.as_ref().map(|s| s.span()),
                x_label,
                y_label,
            });
        }

        // How many runs: a sweep that multiplies out to millions of points
        // would be materialised before the first run.
        for quick in [false, true] {
            let mut points: u64 = 1;
            for (d, q) in dims.iter().zip(&quick_values) {
                let n = match q {
                    Some(q) if quick => q.len(),
                    _ => d.values.len(),
                };
                points = points.saturating_mul(n as u64);
                if points > MAX_POINTS {
                    return Err(ctx.err(
                        d.span.clone(),
                        format!(
                            "the sweep{} has more than {MAX_POINTS} points with dimension '{}' \
                             (the points are the product of the dimensions' value counts); \
                             sweep fewer values",
                            if quick { " of --quick" } else { "" },
                            d.name
                        ),
                    ));
                }
            }
            let repeats = if quick { quick_repeats } else { repeats };
            let runs = points * variants.len() as u64 * u64::from(repeats);
            if runs > MAX_RUNS {
                let span = match (quick, &raw.repeats, &quick_repeats_span) {
                    (false, Some(r), _) => Some(r.span()),
                    (true, _, Some(r)) => Some(r.clone()),
                    _ => Some(raw.name.span()),
                };
                return Err(ctx.err(
                    span,
                    format!(
                        "{points} point(s) × {} variant(s) × {repeats} repeat(s) = {runs} runs{}, \
                         more than a campaign runs (at most {MAX_RUNS})",
                        variants.len(),
                        if quick { " with --quick" } else { "" }
                    ),
                ));
            }
        }

        Ok(Spec {
            file: file.to_path_buf(),
            name,
            script: raw.script.get_ref().clone(),
            script_span: raw.script.span(),
            description: raw.description.unwrap_or_default().trim().to_string(),
            repeats,
            variants,
            dims,
            quick_repeats,
            quick_values,
            quick_spans,
            charts,
            text,
        })
    }

    fn ctx(&self) -> Ctx<'_> {
        Ctx {
            file: &self.file,
            text: &self.text,
        }
    }

    /// The script's path: `script` relative to the spec's directory.
    pub fn script_path(&self) -> PathBuf {
        let dir = self.file.parent().unwrap_or(Path::new(""));
        dir.join(&self.script)
    }

    /// Reads the script and checks that its `${...}` parameters and the
    /// sweep's parameter dimensions match.
    pub fn load_script(&self) -> Result<ScriptTemplate, CampaignError> {
        let path = self.script_path();
        let text = std::fs::read_to_string(&path).map_err(|e| {
            self.ctx().err(
                Some(self.script_span.clone()),
                format!(
                    "cannot read script '{}' ({}): {e}; expected a Flink SQL script, \
                     relative to the spec file",
                    self.script,
                    path.display()
                ),
            )
        })?;
        let template = ScriptTemplate {
            path: path.clone(),
            text,
        };
        let params: Vec<&Dim> = self
            .dims
            .iter()
            .filter(|d| d.kind == DimKind::Param)
            .collect();
        let used = template.parameters().map_err(|(at, msg)| {
            let (line, col) = line_col(&template.text, at);
            CampaignError::input(format!("{}:{line}:{col}: {msg}", path.display()))
        })?;
        for (at, name) in &used {
            if !params.iter().any(|d| d.name == *name) {
                let (line, col) = line_col(&template.text, *at);
                let known: Vec<&str> = params.iter().map(|d| d.name.as_str()).collect();
                return Err(CampaignError::input(format!(
                    "{}:{line}:{col}: '${{{name}}}' is not a parameter of campaign {}; \
                     expected one of its sweep parameters: {}",
                    path.display(),
                    self.file.display(),
                    if known.is_empty() {
                        "(none)".to_string()
                    } else {
                        known.join(", ")
                    }
                )));
            }
        }
        for d in params {
            if !used.iter().any(|(_, n)| *n == d.name) {
                return Err(self.ctx().err(
                    d.span.clone(),
                    format!(
                        "sweep parameter '{}' is not a configuration key and the script {} \
                         does not use it as ${{{}}}",
                        d.name,
                        path.display(),
                        d.name
                    ),
                ));
            }
        }
        Ok(template)
    }

    /// The points (cartesian product of the dimensions, the first slowest)
    /// and repeats, of the full campaign or of `--quick`.
    pub fn plan(&self, quick: bool) -> Plan {
        let lists: Vec<&Vec<String>> = self
            .dims
            .iter()
            .zip(&self.quick_values)
            .map(|(d, q)| match q {
                Some(q) if quick => q,
                _ => &d.values,
            })
            .collect();
        let mut points: Vec<Vec<String>> = vec![Vec::new()];
        for list in &lists {
            let mut next = Vec::new();
            for p in &points {
                for v in list.iter() {
                    let mut q = p.clone();
                    q.push(v.clone());
                    next.push(q);
                }
            }
            points = next;
        }
        Plan {
            points: points
                .into_iter()
                .enumerate()
                .map(|(i, values)| Point { id: i + 1, values })
                .collect(),
            repeats: if quick {
                self.quick_repeats
            } else {
                self.repeats
            },
        }
    }

    /// `skew=0.5, rows=1000` (empty without dimensions).
    pub fn point_label(&self, point: &Point) -> String {
        self.dims
            .iter()
            .zip(&point.values)
            .map(|(d, v)| format!("{}={v}", d.name))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The configuration a run of `variant` at `point` sets: the variant's
    /// keys, then the point's configuration dimensions.
    pub fn overrides(&self, variant: &Variant, point: &Point) -> Vec<(String, String)> {
        let mut out = variant.settings.clone();
        for (d, v) in self.dims.iter().zip(&point.values) {
            if d.kind == DimKind::Config {
                out.push((d.name.clone(), v.clone()));
            }
        }
        out
    }

    /// Checks that each variant's `sinks` are sinks of the script's INSERTs.
    pub fn check_variant_sinks(&self, sinks: &[String]) -> Result<(), CampaignError> {
        for v in &self.variants {
            for s in v.sinks.iter().flatten() {
                if !sinks.contains(s) {
                    return Err(self.ctx().err(
                        v.span.clone(),
                        format!(
                            "variant '{}': sinks names '{s}', which is not a sink of the \
                             script's INSERTs; expected some of: {}",
                            v.name,
                            sinks.join(", ")
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Checks that each chart's `sink` names one of `sinks`.
    pub fn check_chart_sinks(&self, sinks: &[String]) -> Result<(), CampaignError> {
        for c in &self.charts {
            if let Some(s) = &c.sink {
                if !sinks.contains(s) {
                    return Err(self.ctx().err(
                        c.sink_span.clone(),
                        format!(
                            "chart '{}': sink = '{s}' is not a sink of the script's INSERTs; \
                             expected one of: {}",
                            c.title,
                            sinks.join(", ")
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Every column of `results.csv`, in order.
    pub fn columns(&self) -> Vec<String> {
        let mut cols: Vec<String> = LEADING_COLUMNS.iter().map(|s| s.to_string()).collect();
        cols.extend(self.dims.iter().map(|d| d.name.clone()));
        cols.extend(super::metrics::METRICS.iter().map(|m| m.name.to_string()));
        cols.extend(
            optimizer::config::keys()
                .iter()
                .map(|k| format!("cfg:{}", k.name)),
        );
        cols.extend(TRAILING_COLUMNS.iter().map(|s| s.to_string()));
        cols
    }

    /// The index of the variant named `name`.
    pub fn variant_index(&self, name: &str) -> Option<usize> {
        self.variants.iter().position(|v| v.name == name)
    }

    /// Every value dimension `d` takes, full or `--quick`, once each.
    pub fn all_values(&self, d: usize) -> Vec<String> {
        let mut out = self.dims[d].values.clone();
        for v in self.quick_values[d].iter().flatten() {
            if !out.contains(v) {
                out.push(v.clone());
            }
        }
        out
    }

    /// An error at the place `value` of dimension `d` is written (in the
    /// sweep, or in `[quick]`).
    pub fn value_error(&self, d: usize, value: &str, msg: impl fmt::Display) -> CampaignError {
        let dim = &self.dims[d];
        let full = dim.values.iter().zip(&dim.value_spans);
        let quick = self.quick_values[d]
            .iter()
            .flatten()
            .zip(&self.quick_spans[d]);
        let span = full
            .chain(quick)
            .find(|(v, _)| *v == value)
            .and_then(|(_, span)| span.clone())
            .or_else(|| dim.span.clone());
        self.ctx().err(span, msg)
    }

    /// An error at `variant`'s table.
    pub fn variant_error(&self, variant: &Variant, msg: impl fmt::Display) -> CampaignError {
        self.ctx().err(variant.span.clone(), msg)
    }
}

/// A key of a variant's table that is not lab configuration.
enum VariantKey {
    Engine(Engine),
    Sinks(Vec<String>),
    /// `flink.<key>`: configuration for Flink only.
    Flink(String, String),
    /// A configuration key, checked by the caller.
    Config,
}

fn variant_key(ctx: &Ctx, vname: &str, leaf: &Leaf) -> Result<VariantKey, CampaignError> {
    let at = || leaf.value.span().or_else(|| leaf.key_span.clone());
    if leaf.key == "engine" {
        return match leaf.value.get_ref() {
            Item::Scalar(Scalar::Str(e)) if e == "lab" => Ok(VariantKey::Engine(Engine::Lab)),
            Item::Scalar(Scalar::Str(e)) if e == "flink" => Ok(VariantKey::Engine(Engine::Flink)),
            _ => Err(ctx.err(
                at(),
                format!("variant '{vname}': engine must be \"lab\" or \"flink\""),
            )),
        };
    }
    if leaf.key == "sinks" {
        let names: Option<Vec<String>> = match leaf.value.get_ref() {
            Item::List(l) if !l.is_empty() => l
                .iter()
                .map(|v| match v.get_ref() {
                    Scalar::Str(s) if !s.trim().is_empty() => Some(s.clone()),
                    _ => None,
                })
                .collect(),
            _ => None,
        };
        return names.map(VariantKey::Sinks).ok_or_else(|| {
            ctx.err(
                at(),
                format!("variant '{vname}': sinks must be a non-empty array of sink table names"),
            )
        });
    }
    if let Some(key) = leaf.key.strip_prefix("flink.") {
        return match leaf.value.get_ref() {
            Item::Scalar(v) => Ok(VariantKey::Flink(key.to_string(), v.text())),
            _ => Err(ctx.err(
                at(),
                format!(
                    "variant '{vname}': the value of Flink's '{key}' must be a string, number \
                     or boolean"
                ),
            )),
        };
    }
    Ok(VariantKey::Config)
}

fn positive(ctx: &Ctx, r: &Spanned<i64>, what: &str) -> Result<u32, CampaignError> {
    match u32::try_from(*r.get_ref()) {
        Ok(n) if (1..=MAX_REPEATS).contains(&n) => Ok(n),
        _ => Err(ctx.err(
            Some(r.span()),
            format!(
                "invalid {what} = {}: expected an integer from 1 to {MAX_REPEATS}",
                r.get_ref()
            ),
        )),
    }
}

fn dim_names(dims: &[Dim]) -> String {
    dims.iter()
        .map(|d| d.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `None` when `key` is a known configuration key, else what is wrong.
fn config_key_error(key: &str) -> Option<String> {
    if optimizer::config::key_info(key).is_some() {
        return None;
    }
    // Config::set's message suggests the nearest key.
    Some(
        check_setting(key, "")
            .err()
            .unwrap_or_else(|| format!("unknown configuration key '{key}'")),
    )
}

/// A dimension named like a configuration key (with a dot) sets it; an
/// identifier is a script parameter.
fn dim_kind(ctx: &Ctx, name: &str, span: Option<Range<usize>>) -> Result<DimKind, CampaignError> {
    let reserved = LEADING_COLUMNS.contains(&name)
        || TRAILING_COLUMNS.contains(&name)
        || metric(name).is_some()
        || name.starts_with("cfg:");
    if reserved {
        return Err(ctx.err(
            span.clone(),
            format!(
                "sweep dimension '{name}' clashes with a column of results.csv; choose another name"
            ),
        ));
    }
    if optimizer::config::key_info(name).is_some() {
        return Ok(DimKind::Config);
    }
    if is_identifier(name) {
        return Ok(DimKind::Param);
    }
    if name.contains('.') {
        return Err(ctx.err(
            span.clone(),
            format!(
                "sweep dimension '{name}': {}",
                config_key_error(name).unwrap_or_default()
            ),
        ));
    }
    Err(ctx.err(
        span.clone(),
        format!(
            "invalid sweep dimension '{name}': expected a configuration key or a script \
             parameter name (letters, digits and '_', used in the script as ${{{name}}})"
        ),
    ))
}

/// A sweep value and where it is written.
type SpannedValue = (String, Option<Range<usize>>);

/// The values of a dimension: a non-empty array of distinct scalars (a
/// single scalar is a one-value dimension); configuration values are checked.
fn dim_values(
    ctx: &Ctx,
    name: &str,
    kind: DimKind,
    values: SpItem,
) -> Result<Vec<SpannedValue>, CampaignError> {
    let span = values.span();
    let list: Vec<(Option<Range<usize>>, Scalar)> = match values.into_inner() {
        Item::Scalar(s) => vec![(span.clone(), s)],
        Item::List(l) => l
            .into_iter()
            .map(|v| (Some(v.span()), v.into_inner()))
            .collect(),
        Item::Table(_) => {
            return Err(ctx.err(
                span.clone(),
                format!("sweep dimension '{name}': expected an array of values"),
            ))
        }
    };
    if list.is_empty() {
        return Err(ctx.err(
            span.clone(),
            format!("sweep dimension '{name}' has no values: expected a non-empty array"),
        ));
    }
    let mut out: Vec<SpannedValue> = Vec::new();
    for (at, v) in list {
        let text = v.text();
        if out.iter().any(|(t, _)| *t == text) {
            return Err(ctx.err(
                at.clone(),
                format!("sweep dimension '{name}': value '{text}' is given twice"),
            ));
        }
        if kind == DimKind::Config {
            if let Err(e) = check_setting(name, &text) {
                return Err(ctx.err(at.clone(), e));
            }
        }
        out.push((text, at));
    }
    Ok(out)
}

/// A script whose `${param}` are replaced per point.
pub struct ScriptTemplate {
    pub path: PathBuf,
    pub text: String,
}

impl ScriptTemplate {
    /// Every `${name}` with its byte offset ([`crate::template`]).
    fn parameters(&self) -> Result<Vec<(usize, String)>, (usize, String)> {
        template::parameters(&self.text).map(|ps| ps.into_iter().map(|p| (p.at, p.name)).collect())
    }

    /// The script with every `${name}` replaced by the point's value.
    pub fn render(&self, spec: &Spec, point: &Point) -> String {
        template::fill(&self.text, |name| {
            spec.dims
                .iter()
                .zip(&point.values)
                .find(|(d, _)| d.kind == DimKind::Param && d.name == name)
                .map(|(_, v)| v.as_str())
        })
    }

    /// Parses a rendered script, opens its generated tables (`datagen` and
    /// the workload connectors: opening checks their options, where sweep
    /// values land) and returns the sink of every INSERT, in order. Files
    /// are left to the run (an earlier INSERT may write one).
    pub fn inspect(&self, sql: &str) -> Result<Vec<String>, String> {
        let script = optimizer::sql::parse_script(sql).map_err(|e| e.to_string())?;
        let base_dir = self.path.parent().unwrap_or(Path::new(""));
        for t in script.catalog.tables() {
            let connector = t
                .options
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("connector"))
                .map(|(_, v)| v.trim().to_ascii_lowercase());
            // Files are read by the run; blackhole and print are sinks.
            let generated = connector
                .is_some_and(|c| !matches!(c.as_str(), "filesystem" | "blackhole" | "print"));
            if generated {
                // The connector reads the physical columns; computed
                // ones (a rowtime from epoch milliseconds) are not its.
                let t = t.physical();
                datasets::source::open_source(
                    &t.name,
                    &optimizer::physical::job::connector_options(&t),
                    &t.schema.names(),
                    &t.schema.types(),
                    base_dir,
                )
                .map_err(|e| e.to_string())?;
            }
        }
        Ok(script
            .statements
            .iter()
            .filter_map(|s| match s {
                optimizer::logical::Statement::Insert(i) => Some(i.sink.clone()),
                _ => None,
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Spec, String> {
        Spec::parse(Path::new("c.toml"), text.to_string()).map_err(|e| e.message)
    }

    const BASE: &str = "name = \"t\"\nscript = \"t.sql\"\n";

    #[test]
    fn variants_keep_their_order_and_dotted_keys_flatten() {
        let s = parse(&format!(
            "{BASE}[variants.zeta]\nstate.backend.type = \"rocksdb\"\n\
             [variants.alpha]\n\"parallelism.default\" = 4\n\
             [sweep]\nskew = [0.5, 1.0]\ntable.exec.mini-batch.size = [1, 2]\n"
        ))
        .unwrap();
        let names: Vec<&str> = s.variants.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["zeta", "alpha"]);
        assert_eq!(
            s.variants[0].settings,
            [("state.backend.type".to_string(), "rocksdb".to_string())]
        );
        assert_eq!(s.variants[1].settings[0].1, "4");
        assert_eq!(s.dims[0].values, ["0.5", "1.0"]);
        assert_eq!(s.dims[1].kind, DimKind::Config);
        let plan = s.plan(false);
        assert_eq!(plan.points.len(), 4);
        assert_eq!(plan.points[1].values, ["0.5", "2"]);
        assert_eq!(plan.repeats, 3);
    }

    #[test]
    fn sweep_entries_and_quick() {
        let s = parse(&format!(
            "{BASE}[[sweep]]\nparam = \"rows\"\nvalues = [10, 20]\n\
             [[sweep]]\nparam = \"skew\"\nvalues = [1.5]\n\
             [quick]\nsweep = {{ rows = [5] }}\n"
        ))
        .unwrap();
        assert_eq!(s.plan(true).points.len(), 1);
        assert_eq!(s.plan(true).points[0].values, ["5", "1.5"]);
        assert_eq!(s.plan(true).repeats, 1);
        assert_eq!(s.variants[0].name, "default");
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse(&format!("{BASE}repeat = 3\n")).err().unwrap();
        assert!(e.starts_with("c.toml:3:1:"), "{e}");
        assert!(e.contains("unknown field `repeat`"), "{e}");
        let e = parse(&format!("{BASE}repeats = 0\n")).err().unwrap();
        assert!(e.starts_with("c.toml:3:"), "{e}");
        let e = parse(&format!(
            "{BASE}[variants.a]\n\"state.backend.type\" = \"disk\"\n"
        ))
        .err()
        .unwrap();
        assert!(e.starts_with("c.toml:4:"), "{e}");
        assert!(e.contains("hashmap, rocksdb"), "{e}");
        let e = parse(&format!(
            "{BASE}[variants.a]\n\"state.backend\" = \"rocksdb\"\n"
        ))
        .err()
        .unwrap();
        assert!(e.contains("did you mean 'state.backend.type'"), "{e}");
        let e = parse(&format!(
            "{BASE}[sweep]\nskew = [1]\n[[chart]]\ntitle = \"t\"\nx = \"skew\"\ny = \"thruput\"\n"
        ))
        .err()
        .unwrap();
        assert!(e.starts_with("c.toml:8:"), "{e}");
        assert!(e.contains("throughput_rows_per_s"), "{e}");
    }

    #[test]
    fn engines_sinks_and_flink_settings() {
        let s = parse(&format!(
            "{BASE}[variants.f]\nengine = \"flink\"\nsinks = [\"a\", \"b\"]\n\
             \"state.backend.type\" = \"rocksdb\"\n\
             flink.\"execution.checkpointing.interval\" = \"1 s\"\n\
             [variants.l]\nengine = \"lab\"\n[variants.d]\n\"parallelism.default\" = 2\n"
        ))
        .unwrap();
        let f = &s.variants[0];
        assert_eq!(f.engine, Some(Engine::Flink));
        assert_eq!(f.sinks, Some(vec!["a".to_string(), "b".to_string()]));
        assert_eq!(
            f.settings,
            [("state.backend.type".to_string(), "rocksdb".to_string())]
        );
        assert_eq!(
            f.flink_settings,
            [(
                "execution.checkpointing.interval".to_string(),
                "1 s".to_string()
            )]
        );
        assert_eq!(s.variants[1].engine, Some(Engine::Lab));
        assert_eq!(s.variants[2].engine, None);
        assert!(s.variants[2].sinks.is_none());
        for (body, want) in [
            ("engine = \"spark\"", "engine must be \"lab\" or \"flink\""),
            ("sinks = []", "sinks must be a non-empty array"),
            ("sinks = \"a\"", "sinks must be a non-empty array"),
            (
                "engine = \"lab\"\nflink.\"execution.checkpointing.interval\" = \"1 s\"",
                "runs on the lab but has Flink-only settings",
            ),
        ] {
            let e = parse(&format!("{BASE}[variants.v]\n{body}\n"))
                .err()
                .unwrap();
            assert!(e.starts_with("c.toml:"), "{e}");
            assert!(e.contains(want), "{e}");
        }
    }

    #[test]
    fn slugs() {
        assert_eq!(slug("Throughput vs skew (p=4)"), "throughput-vs-skew-p-4");
        assert_eq!(slug("!!!"), "chart");
    }

    #[test]
    fn script_parameters() {
        let t = ScriptTemplate {
            path: PathBuf::from("x.sql"),
            text: "a ${rows} b ${ skew } -- ${not_a_param\n'--${y}' ${x".to_string(),
        };
        let e = t.parameters().err().unwrap();
        assert_eq!(line_col(&t.text, e.0), (2, 10));
        let t = ScriptTemplate {
            path: PathBuf::from("x.sql"),
            text: "a ${rows} b ${skew}".to_string(),
        };
        let p = t.parameters().unwrap();
        assert_eq!(p[1], (12, "skew".to_string()));
    }
}
