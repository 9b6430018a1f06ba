//! The Nexmark queries the lab runs (`examples/nexmark/q*.sql`), each as
//! shipped (the `nexmark` connector, its small default event count), against
//! the batch oracle: the streaming result must equal what the oracle
//! computes from the same generated tables, on both state backends at
//! parallelism 1 and 4. Window aggregates use the oracle's late rule with
//! the run's batch size and watermark interval on the deterministic clock.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use operators::changelog::Change;
use operators::value::{cmp_rows, Row};
use optimizer::logical::Statement;
use optimizer::oracle::{self, Arrival};
use optimizer::physical::job::{ConnectorSources, SourceProvider};
use optimizer::session::{run_parsed, RunOptions};
use optimizer::sql::parse_script;

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/nexmark")
}

fn sorted(mut rows: Vec<Row>) -> Vec<Row> {
    rows.sort_by(|x, y| cmp_rows(x, y));
    rows
}

const BATCH: usize = 1024;
const INTERVAL_MS: u64 = 200;

/// Runs `q<n>.sql` and compares each INSERT's result with the oracle.
/// Returns the number of result rows (so a test can see it is not empty).
fn check(query: &str, backend: &str, parallelism: usize, sets: &[(&str, &str)]) -> usize {
    let dir = examples();
    let path = dir.join(format!("{query}.sql"));
    let sql = std::fs::read_to_string(&path).unwrap();
    let script = parse_script(&sql).unwrap_or_else(|e| panic!("{query}: {e}"));
    let sources = ConnectorSources {
        base_dir: dir.clone(),
    };
    let mut overrides = vec![
        ("state.backend.type".to_string(), backend.to_string()),
        ("parallelism.default".to_string(), parallelism.to_string()),
        ("lab.source.batch-size".to_string(), BATCH.to_string()),
        ("lab.clock".to_string(), "deterministic".to_string()),
        (
            "pipeline.auto-watermark-interval".to_string(),
            format!("{INTERVAL_MS} ms"),
        ),
    ];
    overrides.extend(sets.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    if Path::new("/dev/shm").is_dir() {
        overrides.push(("lab.state.dir".to_string(), "/dev/shm".to_string()));
    }
    let outcomes = run_parsed(
        &script,
        &script.catalog,
        &sources,
        &dir,
        &overrides,
        RunOptions::keep_all(),
        &mut |_, _| {},
    )
    .unwrap_or_else(|e| panic!("{query}: {e}"));

    // The generated tables, read once each, as the oracle's input.
    let mut tables: HashMap<String, Vec<Row>> = HashMap::new();
    for name in ["bid", "auction", "person"] {
        if let Some(def) = script.catalog.get(name) {
            let mut source = sources.open(def).unwrap();
            let mut changes: Vec<Change> = Vec::new();
            while source.next_batch(BATCH, &mut changes).unwrap() > 0 {}
            tables.insert(name.into(), changes.into_iter().map(|c| c.row).collect());
        }
    }
    let watermark = |t: &str| {
        script
            .catalog
            .get(t)
            .and_then(|d| d.watermark.as_ref().map(|w| w.expr.clone()))
    };
    let arrival = Arrival {
        watermark: &watermark,
        batch_size: BATCH,
        interval_ms: INTERVAL_MS,
        allow_lateness_ms: 0,
        breadth_first: false,
    };
    let inserts: Vec<_> = script
        .statements
        .iter()
        .filter_map(|s| match s {
            Statement::Insert(i) => Some(i),
            _ => None,
        })
        .collect();
    assert_eq!(inserts.len(), outcomes.len());
    let mut rows = 0;
    for (insert, outcome) in inserts.iter().zip(&outcomes) {
        let expected = sorted(oracle::evaluate_event_time(
            &insert.query,
            &|t| tables.get(t).cloned().unwrap_or_default(),
            &arrival,
        ));
        let got = sorted(outcome.sink_report().result.clone().unwrap());
        assert_eq!(
            got.len(),
            expected.len(),
            "{query} ({backend}, p{parallelism}): {} rows, the oracle {}",
            got.len(),
            expected.len()
        );
        assert!(
            got == expected,
            "{query} ({backend}, p{parallelism}) differs from the oracle"
        );
        rows += got.len();
    }
    rows
}

fn check_all(query: &str) {
    check_all_with(query, &[]);
}

fn check_all_with(query: &str, sets: &[(&str, &str)]) {
    for backend in ["hashmap", "rocksdb"] {
        for p in [1, 4] {
            let rows = check(query, backend, p, sets);
            assert!(rows > 0, "{query}: an empty result proves little");
        }
    }
}

#[test]
fn q0_pass_through() {
    check_all("q0");
}

#[test]
fn q1_projection() {
    check_all("q1");
}

#[test]
fn q2_selection() {
    check_all("q2");
}

#[test]
fn q3_local_item_suggestion() {
    check_all("q3");
}

#[test]
fn q4_average_price_per_category() {
    check_all("q4");
}

#[test]
fn q5_hot_items() {
    check_all("q5");
}

#[test]
fn q7_highest_bid() {
    check_all("q7");
}

#[test]
fn q8_monitor_new_users() {
    check_all("q8");
}

#[test]
fn q9_winning_bids() {
    check_all("q9");
}

#[test]
fn q19_auction_top_10_by_price() {
    check_all("q19");
}

#[test]
fn q20_expand_bid_with_auction() {
    check_all("q20");
}

#[test]
fn q11_user_sessions() {
    check_all("q11");
}

#[test]
fn q15_bidding_statistics_per_day() {
    check_all("q15");
}

#[test]
fn q16_channel_statistics_per_day() {
    check_all("q16");
}

#[test]
fn q17_auction_statistics_per_day() {
    check_all("q17");
}

#[test]
fn q18_last_bid_per_bidder_and_auction() {
    check_all("q18");
}

#[test]
fn q21_add_channel_id() {
    check_all("q21");
}

#[test]
fn q22_url_directories() {
    check_all("q22");
}

const SPLIT: (&str, &str) = ("table.optimizer.distinct-agg.split.enabled", "true");
const MINI_BATCH: [(&str, &str); 3] = [
    ("table.exec.mini-batch.enabled", "true"),
    ("table.exec.mini-batch.allow-latency", "1 h"),
    ("table.exec.mini-batch.size", "700"),
];

/// q15-q17 with the strategies the Nexmark campaign compares: split
/// distinct (the FILTERed distinct counts split into bucketed inner
/// aggregates and an outer SUM), mini-batch, and both.
#[test]
fn q15_to_q17_with_split_distinct_and_mini_batch() {
    let [mb0, mb1, mb2] = MINI_BATCH;
    for q in ["q15", "q16"] {
        check_all_with(q, &[SPLIT]);
        check_all_with(q, &[mb0, mb1, mb2]);
        check_all_with(q, &[SPLIT, mb0, mb1, mb2]);
    }
    check_all_with("q17", &[mb0, mb1, mb2]);
}
