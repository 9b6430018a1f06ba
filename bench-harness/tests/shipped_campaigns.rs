//! The campaign specs shipped in `campaigns/` run: each one `--quick` into a
//! temp dir writes `results.csv`, every chart as PNG and SVG, and
//! `index.md`. The quick runs are small, so only what does not depend on
//! timing is checked beyond that: the counters behind each campaign's
//! claim (state accesses, records shuffled, hotspot factor, state size)
//! point the way the campaign's description says.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The specs this file checks by name; any other spec in `campaigns/` is
/// still run by [`every_other_shipped_spec_runs_quick`].
const CHECKED: &[&str] = &[
    "minibatch-agg",
    "local-global-skew",
    "split-distinct",
    "filter-vs-case-when",
];

/// Specs with variants on Flink: `tests/flink_engine.rs` runs them on its
/// own cluster.
const ON_FLINK: &[&str] = &["lab-vs-flink"];

fn campaigns_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate sits in the workspace")
        .join("campaigns")
}

/// One row of `results.csv`, by column name.
struct Row(HashMap<String, String>);

impl Row {
    fn get(&self, col: &str) -> &str {
        self.0.get(col).unwrap_or_else(|| panic!("no column {col}"))
    }
    fn num(&self, col: &str) -> f64 {
        let v = self.get(col);
        v.parse()
            .unwrap_or_else(|_| panic!("{col} = '{v}' is not a number"))
    }
}

struct Report {
    _dir: tempfile::TempDir,
    rows: Vec<Row>,
}

impl Report {
    /// The only row matching every (column, value).
    fn one(&self, filter: &[(&str, &str)]) -> &Row {
        let hits: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| filter.iter().all(|(c, v)| r.get(c) == *v))
            .collect();
        assert_eq!(hits.len(), 1, "rows matching {filter:?}");
        hits[0]
    }

    /// The distinct values of a column, in order of first appearance.
    fn values(&self, col: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in &self.rows {
            if !out.iter().any(|v| v == r.get(col)) {
                out.push(r.get(col).to_string());
            }
        }
        out
    }
}

/// Runs `campaigns/<name>.toml --quick` into a temp dir and checks the
/// files every report has.
fn run_quick(name: &str) -> Report {
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

#[test]
fn the_four_campaigns_are_shipped() {
    for name in CHECKED {
        let p = campaigns_dir().join(format!("{name}.toml"));
        assert!(p.exists(), "{} is missing", p.display());
    }
}

#[test]
fn minibatch_agg_folds_state_accesses_and_changelog() {
    let r = run_quick("minibatch-agg");
    let skews = r.values("skew");
    assert!(skews.len() >= 2, "quick sweeps at least two skews");
    for skew in &skews {
        for backend in ["rocksdb", "heap"] {
            let acc = |v: &str| {
                r.one(&[("skew", skew), ("variant", v)])
                    .num("state_accesses")
            };
            let one = acc(backend);
            let (b100, b1k, b10k) = (
                acc(&format!("{backend}-mb100")),
                acc(&format!("{backend}-mb1k")),
                acc(&format!("{backend}-mb10k")),
            );
            // One record at a time: a read and a write per record.
            let rows = r
                .one(&[("skew", skew), ("variant", backend)])
                .num("input_rows");
            assert_eq!(one, 2.0 * rows, "skew {skew}, {backend}");
            assert!(
                b10k <= b1k && b1k <= b100 && b100 <= one,
                "skew {skew}, {backend}: accesses fall with the bundle size: \
                 {one} {b100} {b1k} {b10k}"
            );
        }
        // Both backends count the same accesses and emit the same changelog.
        for (rocks, heap) in [
            ("rocksdb", "heap"),
            ("rocksdb-mb100", "heap-mb100"),
            ("rocksdb-mb1k", "heap-mb1k"),
            ("rocksdb-mb10k", "heap-mb10k"),
        ] {
            for m in ["state_accesses", "changelog_rows", "state_bytes"] {
                assert_eq!(
                    r.one(&[("skew", skew), ("variant", rocks)]).num(m),
                    r.one(&[("skew", skew), ("variant", heap)]).num(m),
                    "skew {skew}: {m} of {rocks} and {heap}"
                );
            }
        }
    }
    // At the highest skew a bundle folds many records per key.
    let top = skews.last().unwrap();
    let one = r
        .one(&[("skew", top), ("variant", "rocksdb")])
        .num("state_accesses");
    let mb = r
        .one(&[("skew", top), ("variant", "rocksdb-mb1k")])
        .num("state_accesses");
    assert!(mb * 4.0 < one, "skew {top}: {mb} vs {one}");
    let cl_one = r
        .one(&[("skew", top), ("variant", "rocksdb")])
        .num("changelog_rows");
    let cl_mb = r
        .one(&[("skew", top), ("variant", "rocksdb-mb1k")])
        .num("changelog_rows");
    assert!(cl_mb < cl_one, "skew {top}: changelog {cl_mb} vs {cl_one}");
}

#[test]
fn local_global_skew_two_phase_shuffles_less_and_evens_the_load() {
    let r = run_quick("local-global-skew");
    let shares = r.values("hot_share");
    assert!(shares.len() >= 2);
    for share in &shares {
        for p in ["p4", "p8"] {
            let one = r.one(&[("hot_share", share), ("variant", &format!("one-phase-{p}"))]);
            let two = r.one(&[("hot_share", share), ("variant", &format!("two-phase-{p}"))]);
            assert_eq!(one.num("records_shuffled"), one.num("input_rows"));
            assert!(
                two.num("records_shuffled") * 10.0 < one.num("records_shuffled"),
                "hot_share {share}, {p}: two-phase shuffles {} vs {}",
                two.num("records_shuffled"),
                one.num("records_shuffled")
            );
            assert!(
                two.num("hotspot_factor") <= one.num("hotspot_factor"),
                "hot_share {share}, {p}"
            );
            assert!(
                two.num("hotspot_factor") < 1.2,
                "hot_share {share}, {p}: two-phase hotspot {}",
                two.num("hotspot_factor")
            );
        }
    }
    // With almost every row red, one slot does almost all the work.
    let top = shares.last().unwrap();
    let hot = |v: &str| {
        r.one(&[("hot_share", top), ("variant", v)])
            .num("hotspot_factor")
    };
    assert!(hot("one-phase-p4") > 3.0, "{}", hot("one-phase-p4"));
    assert!(hot("one-phase-p8") > 6.0, "{}", hot("one-phase-p8"));
}

#[test]
fn split_distinct_spreads_the_hot_day() {
    let r = run_quick("split-distinct");
    let dim = "table.optimizer.distinct-agg.split.bucket-num";
    let buckets = r.values(dim);
    assert!(buckets.len() >= 2);
    let most = buckets
        .iter()
        .max_by_key(|b| b.parse::<u64>().unwrap())
        .unwrap();
    for p in ["p4", "p8"] {
        let hot = |v: &str| {
            r.one(&[(dim, most), ("variant", &format!("{v}-{p}"))])
                .num("hotspot_factor")
        };
        let (none, split, split_mb) = (hot("no-split"), hot("split"), hot("split-mb"));
        assert!(
            split_mb < none && split < none,
            "{p}, {most} buckets: no-split {none}, split {split}, split-mb {split_mb}"
        );
        // One bucket spreads nothing: the hot day stays on one subtask.
        let one_bucket = r
            .one(&[(dim, "1"), ("variant", &format!("split-mb-{p}"))])
            .num("hotspot_factor");
        assert!(
            split_mb < one_bucket,
            "{p}: split-mb {split_mb} with {most} buckets vs {one_bucket} with 1"
        );
    }
    // Every variant computes the same answer: 7 days, one +I each at the end
    // with mini-batch; the final row count is the same for all.
    for b in &buckets {
        let inserts_minus_deletes = |v: &str| {
            let row = r.one(&[(dim, b), ("variant", v)]);
            row.num("changelog_insert") - row.num("changelog_delete")
        };
        for v in ["no-split-p4", "split-p4", "split-mb-p4", "split-mb-p8"] {
            assert_eq!(inserts_minus_deletes(v), 7.0, "{v}, {b} buckets");
        }
    }
}

#[test]
fn filter_keeps_less_distinct_state_than_case_when() {
    let r = run_quick("filter-vs-case-when");
    let users = r.values("users");
    assert!(users.len() >= 2);
    for u in &users {
        for v in ["rocksdb", "heap"] {
            let filter = r.one(&[("users", u), ("variant", v), ("sink", "uv_filter")]);
            let case = r.one(&[("users", u), ("variant", v), ("sink", "uv_case_when")]);
            for m in ["state_bytes", "state_entries", "state_accesses"] {
                assert!(
                    filter.num(m) < case.num(m),
                    "users {u}, {v}: {m} FILTER {} vs CASE WHEN {}",
                    filter.num(m),
                    case.num(m)
                );
            }
            // The same query: the same changelog, kind by kind.
            for m in [
                "changelog_insert",
                "changelog_update_before",
                "changelog_update_after",
                "changelog_delete",
                "input_rows",
            ] {
                assert_eq!(filter.num(m), case.num(m), "users {u}, {v}: {m}");
            }
        }
    }
}

#[test]
fn every_other_shipped_spec_runs_quick() {
    let mut others: Vec<String> = std::fs::read_dir(campaigns_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|n| !CHECKED.contains(&n.as_str()) && !ON_FLINK.contains(&n.as_str()))
        .collect();
    others.sort();
    for name in others {
        run_quick(&name);
    }
}
