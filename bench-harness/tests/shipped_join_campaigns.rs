//! The join campaigns shipped in `campaigns/` (`multijoin-vs-binary`,
//! `delta-join`, `minibatch-join`) run: each one `--quick` into a temp dir
//! writes `results.csv`, every chart as PNG and SVG, and `index.md`. Beyond
//! that only exact counters are checked (state bytes and entries, state
//! accesses, changelog rows), never timings: they point the way each
//! campaign's description says.

mod quick_campaign;

use quick_campaign::{campaigns_dir, run_quick};

#[test]
fn the_three_join_campaigns_are_shipped() {
    for name in ["multijoin-vs-binary", "delta-join", "minibatch-join"] {
        let p = campaigns_dir().join(format!("{name}.toml"));
        assert!(p.exists(), "{} is missing", p.display());
    }
}

#[test]
fn multijoin_keeps_less_state_and_loses_on_the_selective_join() {
    let r = run_quick("multijoin-vs-binary");
    let dim = "rows_per_tenant";
    let rpts = r.values(dim);
    assert!(rpts.len() >= 2, "quick sweeps at least two rows per tenant");
    let sinks = ["joined10", "joined5", "joined3", "selective"];
    assert_eq!(r.values("sink"), sinks);
    for rpt in &rpts {
        for sink in sinks {
            let row = |v: &str| r.one(&[(dim, rpt), ("sink", sink), ("variant", v)]);
            for (binary, multi) in [
                ("binary", "multijoin"),
                ("binary-rocksdb", "multijoin-rocksdb"),
            ] {
                let (b, m) = (row(binary), row(multi));
                // MultiJoin keeps the inputs only; the chain keeps them too,
                // plus its intermediate results.
                assert!(
                    m.num("state_bytes") < b.num("state_bytes"),
                    "{dim} {rpt}, {sink}: MultiJoin {} vs binary {} state bytes",
                    m.num("state_bytes"),
                    b.num("state_bytes")
                );
                assert!(m.num("state_entries") < b.num("state_entries"));
                assert_eq!(m.num("input_rows"), b.num("input_rows"));
            }
            // Both backends count the same logical state and accesses.
            for (heap, rocks) in [
                ("binary", "binary-rocksdb"),
                ("multijoin", "multijoin-rocksdb"),
            ] {
                for m in ["state_bytes", "state_entries", "state_accesses"] {
                    assert_eq!(
                        row(heap).num(m),
                        row(rocks).num(m),
                        "{dim} {rpt}, {sink}: {m} of {heap} and {rocks}"
                    );
                }
            }
            // The selective join is where MultiJoin loses: it reads the
            // tenant's rows of every other input for each record.
            if sink == "selective" {
                assert!(
                    row("multijoin").num("state_accesses")
                        > 3.0 * row("binary").num("state_accesses"),
                    "{dim} {rpt}: selective accesses {} vs {}",
                    row("multijoin").num("state_accesses"),
                    row("binary").num("state_accesses")
                );
            }
        }
    }
    // With amplification (several rows per tenant in t1..t3) the chain's
    // intermediate results dwarf the inputs: over 100× MultiJoin's state at
    // 10 tables, and the gap widens with the number of tables.
    let top = r.max_value(dim);
    assert!(
        top.parse::<f64>().unwrap() >= 3.0,
        "quick reaches 3 rows per tenant"
    );
    let ratio = |sink: &str| {
        let row = |v: &str| r.one(&[(dim, &top), ("sink", sink), ("variant", v)]);
        row("binary").num("state_bytes") / row("multijoin").num("state_bytes")
    };
    let (r3, r5, r10) = (ratio("joined3"), ratio("joined5"), ratio("joined10"));
    assert!(r10 >= 50.0, "10 tables, {top} rows per tenant: {r10}×");
    assert!(r3 < r5 && r5 < r10, "state ratios {r3} {r5} {r10}");
    // ... and it grows with the rows per tenant.
    let low = r.min_value(dim);
    let at = |rpt: &str| {
        let row = |v: &str| r.one(&[(dim, rpt), ("sink", "joined10"), ("variant", v)]);
        row("binary").num("state_bytes") / row("multijoin").num("state_bytes")
    };
    assert!(at(&low) < at(&top), "{} vs {}", at(&low), at(&top));
}

#[test]
fn delta_join_keeps_no_join_state_whatever_the_cache() {
    let r = run_quick("delta-join");
    let dim = "table.exec.delta-join.right.cache-size";
    let sizes = r.values(dim);
    assert!(sizes.len() >= 2, "quick sweeps at least two cache sizes");
    let first = &sizes[0];
    for size in &sizes {
        let row = |v: &str| r.one(&[(dim, size), ("variant", v)]);
        for v in ["delta", "delta-nocache"] {
            assert_eq!(row(v).num("state_entries"), 0.0, "{v}, cache {size}");
            assert_eq!(row(v).num("state_bytes"), 0.0, "{v}, cache {size}");
            assert_eq!(row(v).num("state_accesses"), 0.0, "{v}, cache {size}");
        }
        for v in ["regular", "regular-rocksdb"] {
            // One entry per order and per customer.
            assert!(row(v).num("state_entries") > 0.0, "{v}, cache {size}");
            assert_eq!(
                row(v).num("state_entries"),
                r.one(&[(dim, first), ("variant", v)]).num("state_entries")
            );
        }
        assert_eq!(
            row("regular").num("state_bytes"),
            row("regular-rocksdb").num("state_bytes")
        );
        // The caches never change what the delta join emits.
        for m in [
            "changelog_rows",
            "changelog_insert",
            "changelog_update_after",
            "input_rows",
        ] {
            assert_eq!(
                row("delta").num(m),
                row("delta-nocache").num(m),
                "cache {size}: {m}"
            );
        }
        // Every order finds its customer: at least one row per order.
        assert!(row("delta").num("changelog_insert") >= row("regular").num("changelog_insert"));
    }
}

#[test]
fn minibatch_join_folds_updates_and_null_padding() {
    let r = run_quick("minibatch-join");
    let dim = "update_ratio";
    let ratios = r.values(dim);
    assert!(ratios.len() >= 2, "quick sweeps at least two update ratios");
    for ratio in &ratios {
        let row = |v: &str| r.one(&[(dim, ratio), ("variant", v)]);
        // Both backends compute and count the same.
        for (heap, rocks) in [
            ("regular", "regular-rocksdb"),
            ("minibatch-10k", "minibatch-10k-rocksdb"),
        ] {
            for m in [
                "changelog_rows",
                "changelog_delete",
                "state_accesses",
                "state_bytes",
                "input_rows",
            ] {
                assert_eq!(
                    row(heap).num(m),
                    row(rocks).num(m),
                    "ratio {ratio}: {m} of {heap} and {rocks}"
                );
            }
        }
        // Mini-batch keeps the same state and reads the same input.
        for v in ["minibatch-1k", "minibatch-10k"] {
            assert_eq!(row(v).num("state_bytes"), row("regular").num("state_bytes"));
            assert_eq!(row(v).num("input_rows"), row("regular").num("input_rows"));
            assert!(row(v).num("changelog_rows") <= row("regular").num("changelog_rows"));
            assert!(row(v).num("state_accesses") <= row("regular").num("state_accesses"));
        }
    }
    // At a high update ratio, successive updates of a row fold within a
    // bundle: far fewer output rows and state accesses.
    let top = r.max_value(dim);
    assert!(top.parse::<f64>().unwrap() >= 0.9);
    let row = |v: &str| r.one(&[(dim, &top), ("variant", v)]);
    let regular = row("regular").num("changelog_rows");
    for v in ["minibatch-1k", "minibatch-10k"] {
        let mb = row(v).num("changelog_rows");
        assert!(
            mb * 2.0 < regular,
            "ratio {top}, {v}: {mb} vs {regular} rows"
        );
        assert!(row(v).num("state_accesses") * 2.0 < row("regular").num("state_accesses"));
    }
    assert!(
        row("minibatch-10k").num("changelog_rows") <= row("minibatch-1k").num("changelog_rows")
    );
    // Without updates, a 10,000-record bundle holds a left row and its
    // matches: the NULL-padded row is never emitted and retracted.
    let low = r.min_value(dim);
    let row = |v: &str| r.one(&[(dim, &low), ("variant", v)]);
    assert!(
        row("minibatch-10k").num("changelog_delete") < row("regular").num("changelog_delete"),
        "ratio {low}: -D {} vs {}",
        row("minibatch-10k").num("changelog_delete"),
        row("regular").num("changelog_delete")
    );
}
