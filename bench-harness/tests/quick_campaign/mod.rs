//! What the shipped-campaign tests share: run a campaign spec `--quick`
//! into a temp dir, check the files every report has, and read its
//! `results.csv` by column.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn campaigns_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate sits in the workspace")
        .join("campaigns")
}

/// One row of `results.csv`, by column name.
pub struct Row(HashMap<String, String>);

impl Row {
    pub fn get(&self, col: &str) -> &str {
        self.0.get(col).unwrap_or_else(|| panic!("no column {col}"))
    }
    pub fn num(&self, col: &str) -> f64 {
        let v = self.get(col);
        v.parse()
            .unwrap_or_else(|_| panic!("{col} = '{v}' is not a number"))
    }
}

pub struct Report {
    _dir: tempfile::TempDir,
    pub rows: Vec<Row>,
}

impl Report {
    /// The only row matching every (column, value).
    pub fn one(&self, filter: &[(&str, &str)]) -> &Row {
        let hits: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| filter.iter().all(|(c, v)| r.get(c) == *v))
            .collect();
        assert_eq!(hits.len(), 1, "rows matching {filter:?}");
        hits[0]
    }

    /// The distinct values of a column, in order of first appearance.
    pub fn values(&self, col: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in &self.rows {
            if !out.iter().any(|v| v == r.get(col)) {
                out.push(r.get(col).to_string());
            }
        }
        out
    }

    /// The value of a numeric column with the largest number.
    pub fn max_value(&self, col: &str) -> String {
        self.values(col)
            .into_iter()
            .max_by(|a, b| {
                let (a, b): (f64, f64) = (a.parse().unwrap(), b.parse().unwrap());
                a.total_cmp(&b)
            })
            .expect("a value")
    }

    pub fn min_value(&self, col: &str) -> String {
        self.values(col)
            .into_iter()
            .min_by(|a, b| {
                let (a, b): (f64, f64) = (a.parse().unwrap(), b.parse().unwrap());
                a.total_cmp(&b)
            })
            .expect("a value")
    }
}

/// Runs `campaigns/<name>.toml --quick --out <tempdir>` and checks the
/// files every report has.
pub fn run_quick(name: &str) -> Report {
    let spec_path = campaigns_dir().join(format!("{name}.toml"));
    let spec_text = std::fs::read_to_string(&spec_path)
        .unwrap_or_else(|e| panic!("{}: {e}", spec_path.display()));
    let spec: toml::Table = toml::from_str(&spec_text).expect("the spec is TOML");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let o = Command::new(env!("CARGO_BIN_EXE_lab"))
        .arg("campaign")
        .arg(&spec_path)
        .arg("--quick")
        .arg("--out")
        .arg(&out)
        .arg("--quiet")
        .output()
        .expect("lab runs");
    assert!(
        o.status.success(),
        "{name}: lab campaign --quick failed ({:?})\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );

    // results.csv: one row per point, variant and sink of the quick plan.
    assert!(
        !out.join("results.csv.partial").exists(),
        "{name}: a partial file is left"
    );
    let mut reader = csv::Reader::from_path(out.join("results.csv")).unwrap();
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_string)
        .collect();
    let rows: Vec<Row> = reader
        .records()
        .map(|r| {
            Row(header
                .iter()
                .cloned()
                .zip(r.unwrap().iter().map(str::to_string))
                .collect())
        })
        .collect();
    assert!(!rows.is_empty(), "{name}: results.csv has no rows");
    let report = Report { _dir: dir, rows };
    let variants = spec["variants"].as_table().expect("[variants]").len();
    assert_eq!(
        report.values("variant").len(),
        variants,
        "{name}: every variant ran"
    );
    assert!(
        report.rows.iter().all(|r| r.get("campaign") == name),
        "{name}: campaign column"
    );

    // index.md with the description, and every chart as PNG and SVG.
    let index = std::fs::read_to_string(out.join("index.md")).unwrap();
    assert!(index.contains(&format!("# Campaign `{name}`")), "{index}");
    let description = spec["description"].as_str().expect("a description");
    let first_line = description.lines().find(|l| !l.trim().is_empty()).unwrap();
    assert!(
        index.contains(first_line.trim()),
        "{name}: index.md shows the description"
    );
    assert!(index.contains("quick (`--quick`)"), "{name}: {index}");
    let charts = spec["chart"].as_array().expect("[[chart]]s");
    let slugs: Vec<&str> = index
        .lines()
        .filter(|l| l.starts_with("!["))
        .filter_map(|l| l.rsplit_once("](")?.1.strip_suffix(".png)"))
        .collect();
    assert_eq!(slugs.len(), charts.len(), "{name}: one image per chart");
    for slug in slugs {
        let png = std::fs::read(out.join(format!("{slug}.png")))
            .unwrap_or_else(|e| panic!("{name}: {slug}.png: {e}"));
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{name}: {slug}.png");
        let svg = std::fs::read_to_string(out.join(format!("{slug}.svg")))
            .unwrap_or_else(|e| panic!("{name}: {slug}.svg: {e}"));
        assert!(svg.contains("<svg"), "{name}: {slug}.svg");
    }
    report
}
