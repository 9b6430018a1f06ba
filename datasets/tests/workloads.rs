//! The workload connectors (`uv`, `colors`, `tenant`, `orders`) through
//! `open_source`, as SQL tables use them: determinism, option and schema
//! errors, the skew knobs, and the tenant stream's upsert invariants.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use datasets::{open_source, source_changelog_mode};
use operators::exec::ChangeSource;
use operators::{Change, ChangelogMode, DataType, RowKind, Value};

fn opts(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn schema(cols: &[(&str, DataType)]) -> (Vec<String>, Vec<DataType>) {
    (
        cols.iter().map(|(n, _)| n.to_string()).collect(),
        cols.iter().map(|(_, t)| *t).collect(),
    )
}

const UV: [(&str, DataType); 3] = [
    ("day", DataType::Int),
    ("user_id", DataType::BigInt),
    ("flag", DataType::String),
];
const COLORS: [(&str, DataType); 2] = [("color", DataType::String), ("id", DataType::BigInt)];
const TENANT: [(&str, DataType); 3] = [
    ("tenant_id", DataType::BigInt),
    ("row_id", DataType::BigInt),
    ("payload", DataType::String),
];
const ORDERS: [(&str, DataType); 3] = [
    ("order_id", DataType::BigInt),
    ("customer_id", DataType::BigInt),
    ("amount", DataType::BigInt),
];

/// A connector, its options and its declared columns.
type Workload<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a [(&'a str, DataType)]);

fn open(
    connector: &str,
    pairs: &[(&str, &str)],
    cols: &[(&str, DataType)],
) -> Result<Box<dyn ChangeSource>, String> {
    let mut o = opts(pairs);
    o.insert("connector".into(), connector.into());
    let (names, types) = schema(cols);
    open_source("t", &o, &names, &types, Path::new(".")).map_err(|e| e.to_string())
}

fn drain_with(mut s: Box<dyn ChangeSource>, batch: usize) -> Vec<Change> {
    let mut out = Vec::new();
    loop {
        let before = out.len();
        let n = s.next_batch(batch, &mut out).unwrap();
        assert_eq!(
            n,
            out.len() - before,
            "next_batch must return what it appended"
        );
        assert!(
            n <= batch,
            "a batch of {n} rows exceeds the maximum {batch}"
        );
        if n == 0 {
            return out;
        }
    }
}

fn generate(connector: &str, pairs: &[(&str, &str)], cols: &[(&str, DataType)]) -> Vec<Change> {
    drain_with(open(connector, pairs, cols).unwrap(), 1024)
}

fn error(connector: &str, pairs: &[(&str, &str)], cols: &[(&str, DataType)]) -> String {
    match open(connector, pairs, cols) {
        Ok(_) => panic!("expected an error for {connector} {pairs:?}"),
        Err(e) => e,
    }
}

fn int(v: &Value) -> i64 {
    v.as_int().unwrap()
}

fn text(v: &Value) -> &str {
    match v {
        Value::Str(s) => s,
        other => panic!("expected a string, got {other:?}"),
    }
}

// ---------------------------------------------------------------- determinism

#[test]
fn same_seed_same_stream_other_seed_other_stream() {
    let cases: [Workload; 4] = [
        ("uv", vec![("number-of-rows", "2000")], &UV),
        ("colors", vec![("number-of-rows", "2000")], &COLORS),
        (
            "tenant",
            vec![
                ("tenants", "300"),
                ("rows-per-tenant", "3"),
                ("update-ratio", "0.5"),
            ],
            &TENANT,
        ),
        (
            "orders",
            vec![("number-of-rows", "2000"), ("max-lag", "5")],
            &ORDERS,
        ),
    ];
    for (connector, pairs, cols) in cases {
        let with_seed = |seed: &'static str| {
            let mut p = pairs.clone();
            p.push(("seed", seed));
            generate(connector, &p, cols)
        };
        let a = with_seed("7");
        assert!(!a.is_empty());
        assert_eq!(a, with_seed("7"), "{connector}: same seed, same stream");
        assert_ne!(a, with_seed("8"), "{connector}: other seed, other stream");
        // The default seed is 0.
        assert_eq!(
            generate(connector, &pairs, cols),
            with_seed("0"),
            "{connector}"
        );
    }
}

#[test]
fn batch_size_does_not_change_the_stream() {
    let cases: [Workload; 4] = [
        ("uv", vec![("number-of-rows", "500")], &UV),
        ("colors", vec![("number-of-rows", "500")], &COLORS),
        (
            "tenant",
            vec![
                ("tenants", "50"),
                ("rows-per-tenant", "2"),
                ("update-ratio", "0.6"),
            ],
            &TENANT,
        ),
        (
            "orders",
            vec![("number-of-rows", "500"), ("max-lag", "3")],
            &ORDERS,
        ),
    ];
    for (connector, pairs, cols) in cases {
        let big = drain_with(open(connector, &pairs, cols).unwrap(), 100_000);
        for batch in [1, 2, 3, 7, 1024] {
            let small = drain_with(open(connector, &pairs, cols).unwrap(), batch);
            assert_eq!(big, small, "{connector}, batch size {batch}");
        }
    }
}

#[test]
fn knobs_of_one_column_leave_the_others_alone() {
    let col = |rows: &[Change], i: usize| -> Vec<Value> {
        rows.iter().map(|c| c.row[i].clone()).collect()
    };
    let a = generate("uv", &[("number-of-rows", "1000")], &UV);
    let b = generate(
        "uv",
        &[("number-of-rows", "1000"), ("flag-weights", "1,1,1,1")],
        &UV,
    );
    assert_eq!(col(&a, 0), col(&b, 0));
    assert_eq!(col(&a, 1), col(&b, 1));
    assert_ne!(col(&a, 2), col(&b, 2));
}

// ---------------------------------------------------------------- uv

#[test]
fn uv_rows_are_in_range_and_insert_only() {
    let rows = generate(
        "uv",
        &[("number-of-rows", "5000"), ("days", "3"), ("users", "50")],
        &UV,
    );
    assert_eq!(rows.len(), 5000);
    for c in &rows {
        assert_eq!(c.kind, RowKind::Insert);
        assert!((1..=3).contains(&int(&c.row[0])), "{c}");
        assert!((1..=50).contains(&int(&c.row[1])), "{c}");
        assert!(["android", "iphone", "web", "other"].contains(&text(&c.row[2])));
    }
}

fn day_counts(rows: &[Change]) -> BTreeMap<i64, usize> {
    let mut counts = BTreeMap::new();
    for c in rows {
        *counts.entry(int(&c.row[0])).or_insert(0) += 1;
    }
    counts
}

#[test]
fn uv_hot_day_share_shows_in_the_counts() {
    let n = 40_000;
    let rows = generate("uv", &[("number-of-rows", "40000")], &UV);
    let counts = day_counts(&rows);
    assert_eq!(
        counts.keys().copied().collect::<Vec<_>>(),
        (1..=7).collect::<Vec<_>>()
    );
    let share = counts[&1] as f64 / n as f64;
    assert!(
        (0.48..0.52).contains(&share),
        "default share 0.5, got {share}"
    );
    // The other six days share the rest uniformly: about n / 12 each.
    for day in 2..=7 {
        let c = counts[&day] as f64;
        assert!((c - n as f64 / 12.0).abs() < 400.0, "day {day}: {c}");
    }

    let rows = generate(
        "uv",
        &[
            ("number-of-rows", "40000"),
            ("hot-day-share", "0.9"),
            ("days", "5"),
        ],
        &UV,
    );
    let counts = day_counts(&rows);
    let share = counts[&1] as f64 / n as f64;
    assert!((0.89..0.91).contains(&share), "share 0.9, got {share}");
    assert_eq!(*counts.keys().last().unwrap(), 5);

    let flat = generate(
        "uv",
        &[
            ("number-of-rows", "1000"),
            ("hot-day-share", "0"),
            ("days", "2"),
        ],
        &UV,
    );
    assert!(flat.iter().all(|c| int(&c.row[0]) == 2));
    let one = generate("uv", &[("number-of-rows", "100"), ("days", "1")], &UV);
    assert!(one.iter().all(|c| int(&c.row[0]) == 1));
}

#[test]
fn uv_users_are_zipf_skewed_and_flags_follow_the_weights() {
    let rows = generate("uv", &[("number-of-rows", "50000"), ("users", "1000")], &UV);
    let mut users: HashMap<i64, usize> = HashMap::new();
    let mut flags: HashMap<String, usize> = HashMap::new();
    for c in &rows {
        *users.entry(int(&c.row[1])).or_insert(0) += 1;
        *flags.entry(text(&c.row[2]).to_string()).or_insert(0) += 1;
    }
    let hottest = users.iter().max_by_key(|(_, c)| **c).unwrap().0;
    assert_eq!(*hottest, 1);
    assert!(users[&1] > 2 * users[&2], "{} vs {}", users[&1], users[&2]);
    // Default weights 40,40,15,5.
    let share = |f: &str| flags[f] as f64 / rows.len() as f64;
    assert!((share("android") - 0.40).abs() < 0.015);
    assert!((share("iphone") - 0.40).abs() < 0.015);
    assert!((share("web") - 0.15).abs() < 0.01);
    assert!((share("other") - 0.05).abs() < 0.01);

    let rows = generate(
        "uv",
        &[
            ("number-of-rows", "20000"),
            ("users", "100"),
            ("user-zipf-exponent", "0"),
            ("flag-weights", "0, 1, 0, 0"),
        ],
        &UV,
    );
    assert!(rows.iter().all(|c| text(&c.row[2]) == "iphone"));
    let mut users: HashMap<i64, usize> = HashMap::new();
    for c in &rows {
        *users.entry(int(&c.row[1])).or_insert(0) += 1;
    }
    assert_eq!(users.len(), 100);
    assert!(
        users.values().all(|c| (120..290).contains(c)),
        "uniform: {users:?}"
    );
}

// ---------------------------------------------------------------- colors

#[test]
fn colors_hot_share_shows_in_the_counts_and_ids_count_up() {
    let rows = generate("colors", &[("number-of-rows", "30000")], &COLORS);
    let ids: Vec<i64> = rows.iter().map(|c| int(&c.row[1])).collect();
    assert_eq!(ids, (1..=30_000).collect::<Vec<_>>());
    let mut counts: HashMap<String, usize> = HashMap::new();
    for c in &rows {
        assert_eq!(c.kind, RowKind::Insert);
        *counts.entry(text(&c.row[0]).to_string()).or_insert(0) += 1;
    }
    assert_eq!(counts.len(), 10);
    let red = counts["red"] as f64 / 30_000.0;
    assert!(
        (0.79..0.81).contains(&red),
        "default hot share 0.8, got {red}"
    );
    // The nine others split the remaining 20% evenly: about 667 each.
    for (color, c) in &counts {
        if color != "red" {
            assert!((520..820).contains(c), "{color}: {c}");
        }
    }

    let rows = generate(
        "colors",
        &[
            ("number-of-rows", "20000"),
            ("colors", "20"),
            ("hot-color-share", "0.25"),
        ],
        &COLORS,
    );
    let names: HashSet<&str> = rows.iter().map(|c| text(&c.row[0])).collect();
    assert_eq!(names.len(), 20);
    assert!(names.contains("color-20") && names.contains("navy"));
    let red = rows.iter().filter(|c| text(&c.row[0]) == "red").count() as f64 / 20_000.0;
    assert!((0.24..0.26).contains(&red), "{red}");
}

// ---------------------------------------------------------------- tenant

/// Replays a tenant stream against a table keyed by (tenant_id, row_id),
/// checking every upsert invariant; returns (inserts, updates, live table).
fn replay_tenant(changes: &[Change]) -> (usize, usize, HashMap<(i64, i64), Vec<Value>>) {
    let mut live: HashMap<(i64, i64), Vec<Value>> = HashMap::new();
    let (mut inserts, mut updates) = (0, 0);
    let mut i = 0;
    let mut seen_update = false;
    while i < changes.len() {
        let c = &changes[i];
        let key = (int(&c.row[0]), int(&c.row[1]));
        match c.kind {
            RowKind::Insert => {
                assert!(
                    !seen_update,
                    "insert {c} after an update: inserts come first"
                );
                assert!(
                    live.insert(key, c.row.clone()).is_none(),
                    "{c}: primary key already live"
                );
                inserts += 1;
                i += 1;
            }
            RowKind::UpdateBefore => {
                seen_update = true;
                assert_eq!(
                    live.get(&key),
                    Some(&c.row),
                    "{c} must retract the live row"
                );
                let after = &changes[i + 1];
                assert_eq!(
                    after.kind,
                    RowKind::UpdateAfter,
                    "-U must be followed by +U"
                );
                assert_eq!(
                    (int(&after.row[0]), int(&after.row[1])),
                    key,
                    "+U keeps the primary key"
                );
                live.insert(key, after.row.clone());
                updates += 1;
                i += 2;
            }
            RowKind::UpdateAfter => panic!("{c}: +U without its -U"),
            RowKind::Delete => panic!("{c}: tenant streams never delete"),
        }
    }
    (inserts, updates, live)
}

#[test]
fn tenant_inserts_every_row_once_in_tenant_major_order() {
    let rows = generate(
        "tenant",
        &[
            ("tenants", "4"),
            ("rows-per-tenant", "3"),
            ("payload-length", "5"),
        ],
        &TENANT,
    );
    let keys: Vec<(i64, i64)> = rows
        .iter()
        .map(|c| (int(&c.row[0]), int(&c.row[1])))
        .collect();
    let want: Vec<(i64, i64)> = (1..=4).flat_map(|t| (1..=3).map(move |r| (t, r))).collect();
    assert_eq!(keys, want);
    assert!(rows.iter().all(|c| c.kind == RowKind::Insert));
    assert!(rows.iter().all(|c| {
        let p = text(&c.row[2]);
        p.len() == 5 && p.bytes().all(|b| b.is_ascii_alphanumeric())
    }));
    // Defaults: 10000 tenants, one row each.
    let rows = generate("tenant", &[], &TENANT);
    assert_eq!(rows.len(), 10_000);
    assert!(rows.iter().all(|c| int(&c.row[1]) == 1));
}

#[test]
fn tenant_updates_keep_primary_keys_unique_and_reference_live_rows() {
    for order in ["tenant-major", "random"] {
        let rows = generate(
            "tenant",
            &[
                ("tenants", "200"),
                ("rows-per-tenant", "3"),
                ("update-ratio", "0.75"),
                ("insert-order", order),
                ("table-index", "4"),
            ],
            &TENANT,
        );
        let (inserts, updates, live) = replay_tenant(&rows);
        assert_eq!(inserts, 600, "{order}");
        // 75% of the changes are updates: 600 / (1 - 0.75) - 600.
        assert_eq!(updates, 1800, "{order}");
        assert_eq!(rows.len(), 600 + 2 * 1800);
        // rows-per-tenant respected: every tenant has exactly rows 1..=3.
        let mut per_tenant: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
        for (t, r) in live.keys() {
            per_tenant.entry(*t).or_default().push(*r);
        }
        assert_eq!(per_tenant.len(), 200);
        for (t, mut rs) in per_tenant {
            rs.sort();
            assert_eq!(rs, vec![1, 2, 3], "tenant {t}");
        }
        // Updates change the row.
        let changed = rows
            .windows(2)
            .filter(|w| w[0].kind == RowKind::UpdateBefore && w[0].row != w[1].row)
            .count();
        assert_eq!(changed, 1800);
    }
}

#[test]
fn tenant_random_order_is_a_permutation_that_differs_per_table() {
    let keys = |index: &str| -> Vec<(i64, i64)> {
        generate(
            "tenant",
            &[
                ("tenants", "100"),
                ("rows-per-tenant", "2"),
                ("insert-order", "random"),
                ("table-index", index),
            ],
            &TENANT,
        )
        .iter()
        .map(|c| (int(&c.row[0]), int(&c.row[1])))
        .collect()
    };
    let a = keys("0");
    let b = keys("1");
    let mut sorted = a.clone();
    sorted.sort();
    let want: Vec<(i64, i64)> = (1..=100)
        .flat_map(|t| (1..=2).map(move |r| (t, r)))
        .collect();
    assert_eq!(sorted, want);
    assert_ne!(a, want, "random order is not tenant-major");
    assert_ne!(a, b, "tables differ in order");
}

#[test]
fn tenant_tables_share_keys_but_not_payloads() {
    let table = |index: &str| {
        generate(
            "tenant",
            &[("tenants", "50"), ("table-index", index)],
            &TENANT,
        )
    };
    let (t0, t1) = (table("0"), table("1"));
    let keys = |rows: &[Change]| -> Vec<i64> { rows.iter().map(|c| int(&c.row[0])).collect() };
    assert_eq!(keys(&t0), keys(&t1));
    assert!(t0.iter().zip(&t1).all(|(a, b)| a.row[2] != b.row[2]));
}

#[test]
fn tenant_number_of_changes_and_extra_columns() {
    let cols: Vec<(&str, DataType)> = TENANT
        .iter()
        .copied()
        .chain([("c1", DataType::BigInt), ("c2", DataType::BigInt)])
        .collect();
    let rows = generate(
        "tenant",
        &[
            ("tenants", "10"),
            ("rows-per-tenant", "2"),
            ("number-of-changes", "16"),
            ("update-ratio", "0.5"),
        ],
        &cols,
    );
    let (inserts, updates, live) = replay_tenant(&rows);
    assert_eq!((inserts, updates), (8, 8));
    // Only the first 8 rows (tenant-major) are inserted, and only they are updated.
    assert!(live.keys().all(|(t, _)| *t <= 4), "{:?}", live.keys());
    for c in &rows {
        assert_eq!(c.row.len(), 5);
        assert!((0..1_000_000).contains(&int(&c.row[3])));
        assert!((0..1_000_000).contains(&int(&c.row[4])));
    }
    // number-of-changes alone: inserts only, the first N rows.
    let rows = generate(
        "tenant",
        &[("tenants", "10"), ("number-of-changes", "3")],
        &TENANT,
    );
    assert_eq!(rows.len(), 3);
    // Updates of a single row: every -U retracts the previous +U.
    let rows = generate(
        "tenant",
        &[
            ("tenants", "1"),
            ("number-of-changes", "6"),
            ("update-ratio", "0.8"),
        ],
        &TENANT,
    );
    let (inserts, updates, _) = replay_tenant(&rows);
    assert_eq!((inserts, updates), (1, 5));
}

#[test]
fn tenant_changelog_mode_follows_update_ratio() {
    let mode = |pairs: &[(&str, &str)]| source_changelog_mode(&opts(pairs));
    assert_eq!(mode(&[("connector", "tenant")]), ChangelogMode::INSERT_ONLY);
    assert_eq!(
        mode(&[("connector", "tenant"), ("update-ratio", "0.2")]),
        ChangelogMode {
            insert: true,
            update_before: true,
            update_after: true,
            delete: false
        }
    );
    assert_eq!(mode(&[("connector", "uv")]), ChangelogMode::INSERT_ONLY);
    assert_eq!(
        mode(&[("connector", "filesystem"), ("format", "changelog-csv")]),
        ChangelogMode::ALL
    );
    assert_eq!(
        mode(&[("connector", "filesystem"), ("format", "csv")]),
        ChangelogMode::INSERT_ONLY
    );
}

// ---------------------------------------------------------------- orders

#[test]
fn orders_lines_follow_recent_orders() {
    let rows = generate(
        "orders",
        &[
            ("number-of-rows", "4000"),
            ("lines-per-order", "4"),
            ("max-lag", "10"),
            ("customers", "30"),
            ("amount-min", "5"),
            ("amount-max", "9"),
        ],
        &ORDERS,
    );
    let mut customer_of: HashMap<i64, i64> = HashMap::new();
    for (i, c) in rows.iter().enumerate() {
        assert_eq!(c.kind, RowKind::Insert);
        let newest = i as i64 / 4 + 1;
        let order = int(&c.row[0]);
        assert!(
            order <= newest && order >= (newest - 10).max(1),
            "row {i}: {c}"
        );
        let customer = int(&c.row[1]);
        assert!((1..=30).contains(&customer));
        assert_eq!(
            *customer_of.entry(order).or_insert(customer),
            customer,
            "one customer per order"
        );
        assert!((5..=9).contains(&int(&c.row[2])));
    }
    let consecutive = generate(
        "orders",
        &[("number-of-rows", "12"), ("lines-per-order", "3")],
        &ORDERS,
    );
    let orders: Vec<i64> = consecutive.iter().map(|c| int(&c.row[0])).collect();
    assert_eq!(orders, vec![1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]);
}

// ---------------------------------------------------------------- errors

#[test]
fn option_errors_name_the_table_the_option_and_the_expectation() {
    type Case<'a> = (
        &'a str,
        Vec<(&'a str, &'a str)>,
        &'a [(&'a str, DataType)],
        &'a str,
    );
    let cases: Vec<Case> = vec![
        ("uv", vec![], &UV, "table 't': missing required option 'number-of-rows' (a non-negative integer: the lab needs bounded input)"),
        ("uv", vec![("number-of-rows", "-1")], &UV, "table 't': option 'number-of-rows' = '-1': expected a non-negative integer"),
        ("uv", vec![("number-of-rows", "1"), ("days", "0")], &UV, "table 't': option 'days' = '0': expected an integer from 1 to 2147483647"),
        ("uv", vec![("number-of-rows", "1"), ("hot-day-share", "1.5")], &UV, "table 't': option 'hot-day-share' = '1.5': expected a fraction between 0.0 and 1.0"),
        ("uv", vec![("number-of-rows", "1"), ("days", "1"), ("hot-day-share", "0.5")], &UV, "table 't': option 'hot-day-share': with 'days' = '1' every row is on day 1; leave it out or set it to 1"),
        ("uv", vec![("number-of-rows", "1"), ("users", "many")], &UV, "table 't': option 'users' = 'many': expected an integer from 1 to 9223372036854775807"),
        ("uv", vec![("number-of-rows", "1"), ("user-zipf-exponent", "-1")], &UV, "table 't': option 'user-zipf-exponent' = '-1': expected a number >= 0 (0 means uniform)"),
        ("uv", vec![("number-of-rows", "1"), ("flag-weights", "1,2,3")], &UV, "table 't': option 'flag-weights' = '1,2,3': expected four non-negative numbers separated by commas, not all zero, for 'android', 'iphone', 'web', 'other'"),
        ("uv", vec![("number-of-rows", "1"), ("flag-weights", "0,0,0,0")], &UV, "table 't': option 'flag-weights' = '0,0,0,0': expected four non-negative"),
        ("uv", vec![("number-of-rows", "1"), ("seed", "x")], &UV, "table 't': option 'seed' = 'x': expected an integer"),
        ("colors", vec![("number-of-rows", "1"), ("colors", "0")], &COLORS, "table 't': option 'colors' = '0': expected an integer from 1 to 1000"),
        ("colors", vec![("number-of-rows", "1"), ("hot-color-share", "hot")], &COLORS, "table 't': option 'hot-color-share' = 'hot': expected a fraction between 0.0 and 1.0"),
        ("tenant", vec![("tenants", "0")], &TENANT, "table 't': option 'tenants' = '0': expected an integer from 1 to 9223372036854775807"),
        ("tenant", vec![("rows-per-tenant", "1.5")], &TENANT, "table 't': option 'rows-per-tenant' = '1.5': expected an integer from 1 to"),
        ("tenant", vec![("update-ratio", "1")], &TENANT, "table 't': option 'update-ratio' = '1': expected a fraction >= 0.0 and < 1.0"),
        ("tenant", vec![("insert-order", "sorted")], &TENANT, "table 't': option 'insert-order' = 'sorted': expected 'tenant-major' or 'random'"),
        ("tenant", vec![("table-index", "-1")], &TENANT, "table 't': option 'table-index' = '-1': expected an integer >= 0"),
        ("tenant", vec![("payload-length", "2000000")], &TENANT, "table 't': option 'payload-length' = '2000000': expected an integer from 0 to 1048576"),
        (
            "tenant",
            vec![("tenants", "10"), ("number-of-changes", "30")],
            &TENANT,
            "table 't': option 'number-of-changes': 30 changes with update-ratio 0 need 30 inserts, but the table has only 10 rows (tenants * rows-per-tenant)",
        ),
        (
            "tenant",
            vec![("number-of-changes", "1"), ("update-ratio", "0.9")],
            &TENANT,
            "table 't': option 'number-of-changes': 1 changes with update-ratio 0.9 are all updates, but updates need at least one inserted row",
        ),
        ("orders", vec![("number-of-rows", "1"), ("amount-min", "5"), ("amount-max", "4")], &ORDERS, "table 't': option 'amount-max' = '4': expected an integer >= 'amount-min' (5)"),
        ("orders", vec![("number-of-rows", "1"), ("lines-per-order", "0")], &ORDERS, "table 't': option 'lines-per-order' = '0': expected an integer from 1 to"),
    ];
    for (connector, pairs, cols, want) in cases {
        let msg = error(connector, &pairs, cols);
        assert!(
            msg.starts_with(want),
            "{connector} {pairs:?}\n got: {msg}\nwant: {want}"
        );
    }
}

#[test]
fn unknown_options_list_the_allowed_ones() {
    let msg = error("uv", &[("number-of-rows", "1"), ("hot-day", "0.5")], &UV);
    assert_eq!(
        msg,
        "table 't': unknown option 'hot-day'; allowed options: 'connector', 'number-of-rows', \
         'days', 'hot-day-share', 'users', 'user-zipf-exponent', 'flag-weights', 'seed'"
    );
    let msg = error(
        "colors",
        &[("number-of-rows", "1"), ("fields.id.min", "1")],
        &COLORS,
    );
    assert!(msg.starts_with("table 't': unknown option 'fields.id.min'; allowed options: 'connector', 'number-of-rows', 'colors', 'hot-color-share', 'seed'"), "{msg}");
    let msg = error("tenant", &[("rows", "1")], &TENANT);
    assert!(
        msg.contains("'rows-per-tenant'") && msg.contains("'table-index'"),
        "{msg}"
    );
    let msg = error("orders", &[("number-of-rows", "1"), ("lag", "1")], &ORDERS);
    assert!(msg.starts_with("table 't': unknown option 'lag'"), "{msg}");
}

#[test]
fn declared_columns_must_match_and_the_error_lists_the_schema() {
    let msg = error(
        "uv",
        &[("number-of-rows", "1")],
        &[
            ("day", DataType::Int),
            ("user_id", DataType::String),
            ("flag", DataType::String),
        ],
    );
    assert_eq!(
        msg,
        "table 't': option 'connector': connector 'uv' produces the columns \
         (day INT, user_id BIGINT, flag STRING); the table declares \
         (day INT, user_id STRING, flag STRING): column 'user_id' is STRING, expected BIGINT"
    );
    let msg = error(
        "colors",
        &[("number-of-rows", "1")],
        &[("colour", DataType::String), ("id", DataType::BigInt)],
    );
    assert!(
        msg.ends_with("column 1 is named 'colour', expected 'color'"),
        "{msg}"
    );
    let msg = error("uv", &[("number-of-rows", "1")], &UV[..2]);
    assert!(
        msg.ends_with("the table declares 2 columns, expected 3"),
        "{msg}"
    );
    // Tenant: the optional c columns must be c1, c2, ... in order, BIGINT.
    let cols: Vec<(&str, DataType)> = TENANT
        .iter()
        .copied()
        .chain([("c2", DataType::BigInt)])
        .collect();
    let msg = error("tenant", &[], &cols);
    assert_eq!(
        msg,
        "table 't': option 'connector': connector 'tenant' produces the columns \
         (tenant_id BIGINT, row_id BIGINT, payload STRING, c1 BIGINT) \
         (optionally followed by c1 BIGINT, c2 BIGINT, ... to widen rows); the table declares \
         (tenant_id BIGINT, row_id BIGINT, payload STRING, c2 BIGINT): column 4 is named 'c2', expected 'c1'"
    );
    let msg = error(
        "tenant",
        &[],
        &[
            ("tenant_id", DataType::Int),
            ("row_id", DataType::BigInt),
            ("payload", DataType::String),
        ],
    );
    assert!(
        msg.ends_with("column 'tenant_id' is INT, expected BIGINT"),
        "{msg}"
    );
    let msg = error(
        "orders",
        &[("number-of-rows", "1")],
        &[("order_id", DataType::BigInt)],
    );
    assert!(
        msg.contains("(order_id BIGINT, customer_id BIGINT, amount BIGINT)"),
        "{msg}"
    );
}

#[test]
fn zero_rows_is_an_empty_stream() {
    assert!(generate("uv", &[("number-of-rows", "0")], &UV).is_empty());
    assert!(generate("colors", &[("number-of-rows", "0")], &COLORS).is_empty());
    assert!(generate("orders", &[("number-of-rows", "0")], &ORDERS).is_empty());
    assert!(generate("tenant", &[("number-of-changes", "0")], &TENANT).is_empty());
}
