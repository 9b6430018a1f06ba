//! The campaign specs shipped in `campaigns/` run: each one `--quick` into a
//! temp dir writes `results.csv`, every chart as PNG and SVG, and
//! `index.md`. The quick runs are small, so only what does not depend on
//! timing is checked beyond that: the counters behind each campaign's
//! claim (state accesses, records shuffled, hotspot factor, state size)
//! point the way the campaign's description says.

mod quick_campaign;

use quick_campaign::{campaigns_dir, run_quick};

/// The specs this file checks by name; any other spec in `campaigns/` is
/// still run by [`every_other_shipped_spec_runs_quick`].
const CHECKED: &[&str] = &[
    "minibatch-agg",
    "local-global-skew",
    "split-distinct",
    "filter-vs-case-when",
    "window-slicing",
    "topn-strategies",
    "lateness",
    "window-strategies",
    "interval-vs-regular-join",
    "checkpoint-cost",
    "lookup-cache",
    "checkpoint-cost-joins",
];

/// Specs with variants on Flink: `tests/flink_engine.rs` runs them on its
/// own cluster.
const ON_FLINK: &[&str] = &["lab-vs-flink", "nexmark", "lab-vs-flink-at-scale"];

#[test]
fn the_checked_campaigns_are_shipped() {
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
fn window_slicing_keeps_fewer_entries_for_sparse_keys() {
    let r = run_quick("window-slicing");
    let keys = r.values("keys");
    assert!(keys.len() >= 2);
    for k in &keys {
        let sliced = r.one(&[("keys", k), ("variant", "sliced")]);
        let unsliced = r.one(&[("keys", k), ("variant", "unsliced")]);
        // The same rows; the window state is freed to the last entry.
        assert_eq!(
            sliced.num("changelog_insert"),
            unsliced.num("changelog_insert"),
            "keys {k}"
        );
        for row in [sliced, unsliced] {
            assert_eq!(row.num("state_entries"), 0.0, "keys {k}");
        }
        assert!(
            unsliced.num("peak_state_entries") >= sliced.num("peak_state_entries"),
            "keys {k}"
        );
        assert!(unsliced.num("state_writes") > sliced.num("state_writes"));
    }
    // Sparse keys: issue 17's claim, at least 5 times the entries.
    let sparse = r.max_value("keys");
    let peak = |v: &str| {
        r.one(&[("keys", &sparse), ("variant", v)])
            .num("peak_state_entries")
    };
    assert!(
        peak("unsliced") >= 5.0 * peak("sliced"),
        "keys {sparse}: {} vs {}",
        peak("unsliced"),
        peak("sliced")
    );
}

#[test]
fn topn_retract_keeps_more_state_than_append_only() {
    let r = run_quick("topn-strategies");
    let ns = r.values("n");
    assert!(ns.len() >= 2);
    let variants = ["rocksdb", "heap", "rocksdb-cache1k", "rocksdb-cache100"];
    for n in &ns {
        let row = |v: &str, sink: &str| r.one(&[("n", n), ("variant", v), ("sink", sink)]);
        for v in variants {
            let (append, fast, retract) = (
                row(v, "top_events"),
                row(v, "top_by_count"),
                row(v, "top_by_score"),
            );
            // Retract keeps every (partition, item) sorted; append-only
            // at most N rows per partition, and with the default cache it
            // reads less too (a cache of 100 rows misses nearly always).
            let ms: &[&str] = if v.contains("cache") {
                &["state_entries", "state_bytes"]
            } else {
                &["state_entries", "state_bytes", "state_reads"]
            };
            for &m in ms {
                assert!(
                    retract.num(m) > append.num(m),
                    "n {n}, {v}: {m} Retract {} vs AppendFast {}",
                    retract.num(m),
                    append.num(m)
                );
            }
            // The Retract strategy has no cache; the others count theirs.
            assert_eq!(retract.get("topn_cache_hit_rate"), "", "n {n}, {v}");
            for s in [append, fast] {
                let rate = s.num("topn_cache_hit_rate");
                assert!((0.0..=1.0).contains(&rate), "n {n}, {v}: {rate}");
            }
            // Neither the backend nor the cache changes what is kept or sent.
            for m in [
                "state_entries",
                "state_writes",
                "changelog_rows",
                "input_rows",
            ] {
                for sink in ["top_events", "top_by_count", "top_by_score"] {
                    assert_eq!(
                        row(v, sink).num(m),
                        row("rocksdb", sink).num(m),
                        "n {n}, {v}, {sink}: {m}"
                    );
                }
            }
            let per_row = append.num("changelog_rows") / append.num("input_rows");
            assert!(
                (append.num("changelog_rows_per_input_row") - per_row).abs() < 1e-6,
                "n {n}, {v}"
            );
        }
        // A smaller cache hits less and reads state more (RocksDB).
        let hit = |v: &str| row(v, "top_events").num("topn_cache_hit_rate");
        assert!(
            hit("rocksdb-cache100") <= hit("rocksdb-cache1k")
                && hit("rocksdb-cache1k") <= hit("rocksdb")
                && hit("rocksdb-cache100") < hit("rocksdb"),
            "n {n}: hit rates {} {} {}",
            hit("rocksdb"),
            hit("rocksdb-cache1k"),
            hit("rocksdb-cache100")
        );
        for sink in ["top_events", "top_by_count"] {
            let reads = |v: &str| row(v, sink).num("state_reads");
            assert!(
                reads("rocksdb") <= reads("rocksdb-cache1k")
                    && reads("rocksdb-cache1k") <= reads("rocksdb-cache100"),
                "n {n}, {sink}: reads {} {} {}",
                reads("rocksdb"),
                reads("rocksdb-cache1k"),
                reads("rocksdb-cache100")
            );
        }
    }
    // A larger N shifts more ranks per row: more changelog per input row.
    let (lo, hi) = (r.min_value("n"), r.max_value("n"));
    for sink in ["top_events", "top_by_count", "top_by_score"] {
        let per_row = |n: &str| {
            r.one(&[("n", n), ("variant", "rocksdb"), ("sink", sink)])
                .num("changelog_rows_per_input_row")
        };
        assert!(per_row(&hi) > per_row(&lo), "{sink}");
    }
}

#[test]
fn lateness_takes_back_dropped_records_as_updates() {
    let r = run_quick("lateness");
    let (lo, hi) = (r.min_value("disorder"), r.max_value("disorder"));
    let row = |d: &str, v: &str| r.one(&[("disorder", d), ("variant", v)]);
    let variants = ["no-lateness", "lateness-2s", "lateness-10s"];
    for v in variants {
        // In order within the watermark's delay: nothing late, no updates.
        assert_eq!(row(&lo, v).num("late_records_dropped"), 0.0, "{v}");
        assert_eq!(row(&lo, v).num("changelog_update_after"), 0.0, "{v}");
        // Every window is freed after the last watermark.
        for d in [&lo, &hi] {
            assert_eq!(row(d, v).num("state_entries"), 0.0, "{v} {d}");
        }
    }
    let dropped = |v: &str| row(&hi, v).num("late_records_dropped");
    let updates = |v: &str| row(&hi, v).num("changelog_update_after");
    let peak = |v: &str| row(&hi, v).num("peak_state_entries");
    // Past the watermark's delay records are dropped; a lateness takes
    // some back, a longer one more, each as an update of a fired window.
    assert!(
        dropped("no-lateness") > dropped("lateness-2s")
            && dropped("lateness-2s") >= dropped("lateness-10s"),
        "dropped {} {} {}",
        dropped("no-lateness"),
        dropped("lateness-2s"),
        dropped("lateness-10s")
    );
    assert_eq!(updates("no-lateness"), 0.0);
    assert!(updates("lateness-2s") > 0.0 && updates("lateness-10s") >= updates("lateness-2s"));
    assert_eq!(
        row(&hi, "lateness-2s").num("changelog_update_before"),
        updates("lateness-2s")
    );
    // Every record the variant without lateness drops, a lateness either
    // drops too or takes back: it fires its window again (a +U; COUNT
    // always changes) or, when the window had no record before, fires it
    // for the first time (a +I more than without lateness).
    let inserts = |v: &str| row(&hi, v).num("changelog_insert");
    for v in ["lateness-2s", "lateness-10s"] {
        assert_eq!(
            dropped(v) + updates(v) + (inserts(v) - inserts("no-lateness")),
            dropped("no-lateness"),
            "{v}"
        );
    }
    // Windows kept after they fire: more entries at once.
    assert!(peak("lateness-10s") > peak("no-lateness"));
}

#[test]
fn window_strategies_trade_writes_shuffle_and_reads() {
    let r = run_quick("window-strategies");
    let (lo, hi) = (r.min_value("windows"), r.max_value("windows"));
    let row = |w: &str, v: &str| r.one(&[("windows", w), ("variant", v)]);
    let variants = [
        "one-phase",
        "two-phase",
        "one-phase-unsliced",
        "two-phase-unsliced",
    ];
    for w in [&lo, &hi] {
        for v in variants {
            // The same rows; every window freed at the end.
            assert_eq!(
                row(w, v).num("changelog_insert"),
                row(w, "one-phase").num("changelog_insert"),
                "windows {w}, {v}"
            );
            assert_eq!(row(w, v).num("state_entries"), 0.0, "windows {w}, {v}");
        }
        // Two phases ship partials, not records.
        for (one, two) in [
            ("one-phase", "two-phase"),
            ("one-phase-unsliced", "two-phase-unsliced"),
        ] {
            assert!(
                row(w, two).num("records_shuffled") < row(w, one).num("records_shuffled"),
                "windows {w}: {two} vs {one}"
            );
        }
    }
    let writes = |w: &str, v: &str| row(w, v).num("state_writes");
    let reads = |w: &str, v: &str| row(w, v).num("state_reads");
    for (sliced, unsliced) in [
        ("one-phase", "one-phase-unsliced"),
        ("two-phase", "two-phase-unsliced"),
    ] {
        // A tumbling window: one window per slice, the two states alike.
        assert_eq!(writes(&lo, sliced), writes(&lo, unsliced), "{sliced}");
        // Slices take a record once whatever the overlap; windows once
        // each, and a firing reads its slices.
        assert_eq!(writes(&hi, sliced), writes(&lo, sliced), "{sliced}");
        assert!(
            writes(&hi, unsliced) > 2.0 * writes(&hi, sliced),
            "{unsliced}"
        );
        assert!(reads(&hi, sliced) > reads(&lo, sliced), "{sliced}");
    }
}

#[test]
fn interval_join_state_is_bounded_regular_join_state_is_not() {
    let r = run_quick("interval-vs-regular-join");
    let (lo, hi) = (r.min_value("rows"), r.max_value("rows"));
    let row = |n: &str, v: &str, sink: &str| r.one(&[("rows", n), ("variant", v), ("sink", sink)]);
    for n in [&lo, &hi] {
        let rows: f64 = n.parse().unwrap();
        for v in ["no-ttl", "ttl-5s"] {
            // The same pairs from both joins; the interval join's state is
            // gone after the last watermark.
            assert_eq!(
                row(n, v, "interval_joined").num("changelog_insert"),
                row(n, v, "regular_joined").num("changelog_insert"),
                "rows {n}, {v}"
            );
            assert_eq!(row(n, v, "interval_joined").num("state_entries"), 0.0);
        }
        // Without a TTL the regular join keeps every row of both tables:
        // of the columns it reads (k and v, k and w), so equal rows share
        // an entry with their count (a few, at random values).
        let kept = row(n, "no-ttl", "regular_joined").num("state_entries");
        assert!(kept <= 2.0 * rows && kept > 1.9 * rows, "rows {n}: {kept}");
    }
    // The interval join holds the rows of its interval and the
    // watermark's delay, not the input; a TTL bounds the regular join.
    let rows_hi: f64 = hi.parse().unwrap();
    assert!(row(&hi, "no-ttl", "interval_joined").num("peak_state_entries") < rows_hi);
    let ttl = |n: &str| row(n, "ttl-5s", "regular_joined").num("state_entries");
    assert!(ttl(&hi) < rows_hi / 2.0, "{}", ttl(&hi));
    assert!(ttl(&hi) <= 1.5 * ttl(&lo), "{} vs {}", ttl(&hi), ttl(&lo));
}

#[test]
fn incremental_checkpoints_write_what_changed_full_ones_the_whole_state() {
    let r = run_quick("checkpoint-cost");
    let (lo, hi) = (r.min_value("active"), r.max_value("active"));
    let row = |a: &str, v: &str| r.one(&[("active", a), ("variant", v)]);
    for a in [&lo, &hi] {
        // The canonical format is the same bytes from either backend.
        assert_eq!(
            row(a, "full-heap").num("checkpoint_bytes"),
            row(a, "full-rocksdb").num("checkpoint_bytes"),
            "{a}"
        );
        for v in ["full-heap", "full-rocksdb"] {
            assert_eq!(
                row(a, v).num("checkpoint_full_bytes"),
                row(a, "full-rocksdb").num("checkpoint_full_bytes"),
                "{v} {a}"
            );
        }
    }
    let written = |a: &str, v: &str| row(a, v).num("checkpoint_bytes");
    // Few keys changed: an incremental checkpoint writes a fraction of a
    // full one; more changed keys, more written.
    assert!(
        written(&lo, "incremental-rocksdb") * 3.0 < written(&lo, "full-rocksdb"),
        "{} vs {}",
        written(&lo, "incremental-rocksdb"),
        written(&lo, "full-rocksdb")
    );
    assert!(written(&hi, "incremental-rocksdb") > written(&lo, "incremental-rocksdb"));
}

#[test]
fn lookup_cache_hits_grow_with_cache_size_and_skew() {
    let r = run_quick("lookup-cache");
    let (small, large) = (r.min_value("cache_rows"), r.max_value("cache_rows"));
    let (flat, steep) = (r.min_value("skew"), r.max_value("skew"));
    assert_ne!(small, large, "quick sweeps two cache sizes");
    assert_ne!(flat, steep, "quick sweeps two skews");
    let row = |cache: &str, rows: &str, skew: &str| {
        r.one(&[("cache", cache), ("cache_rows", rows), ("skew", skew)])
    };
    let rate =
        |cache: &str, rows: &str, skew: &str| row(cache, rows, skew).num("lookup_cache_hit_rate");
    for skew in [&flat, &steep] {
        for rows in [&small, &large] {
            // Without a cache every order is a lookup of the table.
            assert_eq!(rate("NONE", rows, skew), 0.0, "{rows} {skew}");
            let none = row("NONE", rows, skew);
            assert_eq!(none.num("lookup_store_lookups"), none.num("input_rows"));
            // A hit is a lookup the table did not get (the rate is
            // written with four digits).
            let partial = row("PARTIAL", rows, skew);
            let lookups = partial.num("input_rows");
            let hits = rate("PARTIAL", rows, skew) * lookups;
            let misses = partial.num("lookup_store_lookups");
            assert!(
                (misses - (lookups - hits)).abs() <= 1.0,
                "{rows} {skew}: {misses} misses, {hits} hits"
            );
        }
        // A larger cache keeps more of the hot keys.
        assert!(
            rate("PARTIAL", &large, skew) > rate("PARTIAL", &small, skew),
            "skew {skew}"
        );
    }
    // The hotter the keys, the more a cache of either size answers.
    for rows in [&small, &large] {
        assert!(
            rate("PARTIAL", rows, &steep) > rate("PARTIAL", rows, &flat),
            "cache {rows}"
        );
    }
}

#[test]
fn multi_join_checkpoints_are_smaller_than_the_binary_chain_s() {
    let r = run_quick("checkpoint-cost-joins");
    let (lo, hi) = (
        r.min_value("rows_per_tenant"),
        r.max_value("rows_per_tenant"),
    );
    let row = |n: &str, v: &str| r.one(&[("rows_per_tenant", n), ("variant", v)]);
    for n in [&lo, &hi] {
        for join in ["binary", "multijoin"] {
            // The canonical format is the same bytes from either backend.
            for m in ["checkpoint_bytes", "checkpoint_full_bytes"] {
                assert_eq!(
                    row(n, &format!("{join}-heap")).num(m),
                    row(n, &format!("{join}-rocksdb")).num(m),
                    "{join} {n}: {m}"
                );
            }
        }
        // MultiJoin keeps the inputs only, the chain its intermediate
        // results too: every kind of checkpoint is smaller.
        for backend in ["heap", "rocksdb", "rocksdb-incremental"] {
            let written = |join: &str| row(n, &format!("{join}-{backend}")).num("checkpoint_bytes");
            assert!(
                written("multijoin") < written("binary"),
                "{backend} {n}: {} vs {}",
                written("multijoin"),
                written("binary")
            );
        }
    }
    // The chain's intermediate results grow with rows_per_tenant²: the gap
    // widens.
    let ratio = |n: &str| {
        row(n, "multijoin-heap").num("checkpoint_bytes")
            / row(n, "binary-heap").num("checkpoint_bytes")
    };
    assert!(ratio(&hi) < ratio(&lo), "{} vs {}", ratio(&hi), ratio(&lo));
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

/// Every `lab-qN` variant of the Nexmark campaign has a `flink-qN` twin with
/// the same sinks and configuration (Flink-only `flink.*` keys aside), so
/// the report's "Lab and Flink" section sets every query beside Flink.
#[test]
fn every_nexmark_lab_variant_has_a_flink_twin() {
    let labs = lab_variants_with_flink_twins("nexmark");
    assert!(labs >= 20, "{labs} lab variants");
}

/// The same of the campaign at the engine-speed targets' sizes: every
/// strategy measured there is set beside Flink's in one run.
#[test]
fn every_lab_variant_at_scale_has_a_flink_twin() {
    let labs = lab_variants_with_flink_twins("lab-vs-flink-at-scale");
    assert!(labs >= 8, "{labs} lab variants");
}

/// Checks that campaign `name` holds only `lab-X` variants and their
/// `flink-X` twins (same sinks and configuration, Flink-only keys aside,
/// checkpointing so that Flink's state size is reported); returns the
/// number of lab variants.
fn lab_variants_with_flink_twins(name: &str) -> usize {
    let text = std::fs::read_to_string(campaigns_dir().join(format!("{name}.toml"))).unwrap();
    let spec: toml::Table = text.parse().unwrap();
    let variants = spec["variants"].as_table().unwrap();
    let shared = |v: &toml::Value| -> toml::Table {
        let mut t = v.as_table().unwrap().clone();
        t.remove("engine");
        t.remove("flink");
        t
    };
    let mut labs = 0;
    for (variant, lab) in variants {
        let Some(query) = variant.strip_prefix("lab-") else {
            continue;
        };
        labs += 1;
        let twin = format!("flink-{query}");
        let flink = variants
            .get(&twin)
            .unwrap_or_else(|| panic!("{variant} has no {twin}"));
        assert_eq!(shared(lab), shared(flink), "{variant} and {twin} differ");
        assert!(
            flink.get("flink").is_some(),
            "{twin} checkpoints (its state size comes from the final checkpoint)"
        );
    }
    assert_eq!(
        variants.len(),
        2 * labs,
        "every variant of {name} is a lab variant or a Flink twin"
    );
    labs
}
