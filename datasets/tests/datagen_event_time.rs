//! `datagen`'s `kind = 'event-time'` (`datasets/src/datagen/event_time.rs`):
//! times rise with the row, a requested fraction of rows comes out of
//! order by at most the requested bound, gaps come where asked, the same
//! for a seed, and bad options are refused naming the option.

use std::collections::BTreeMap;

use datasets::DatagenSource;
use operators::exec::ChangeSource;
use operators::{DataType, Value};

fn options(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    let mut m: BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    m.insert("connector".into(), "datagen".into());
    m
}

/// The `ts` column (BIGINT, beside a `k` INT) of the table the options make.
fn times(pairs: &[(&str, &str)]) -> Vec<i64> {
    let names = ["k".to_string(), "ts".to_string()];
    let mut src =
        DatagenSource::new(&options(pairs), &names, &[DataType::Int, DataType::BigInt]).unwrap();
    let mut out = Vec::new();
    while src.next_batch(4096, &mut out).unwrap() > 0 {}
    out.iter()
        .map(|c| match c.row[1] {
            Value::Int(t) => t,
            ref v => panic!("not a time: {v:?}"),
        })
        .collect()
}

/// A table's options as pairs.
type Options<'a> = Vec<(&'a str, &'a str)>;

fn error(pairs: &[(&str, &str)], ty: DataType) -> String {
    let names = ["ts".to_string()];
    DatagenSource::new(&options(pairs), &names, &[ty])
        .unwrap_err()
        .to_string()
}

#[test]
fn in_order_times_rise_by_the_step_from_the_start() {
    let ts = times(&[
        ("number-of-rows", "5"),
        ("fields.ts.kind", "event-time"),
        ("fields.ts.start", "1700000000000"),
        ("fields.ts.step", "250"),
    ]);
    let want: Vec<i64> = (0..5).map(|i| 1_700_000_000_000 + 250 * i).collect();
    assert_eq!(ts, want);
    // Defaults: from 0, 1 ms a row.
    let ts = times(&[("number-of-rows", "3"), ("fields.ts.kind", "event-time")]);
    assert_eq!(ts, [0, 1, 2]);
}

/// Over 100,000 rows at 10 ms a row with 5% moved back by up to 2 s: the
/// share of rows moved back is 5% within 0.2 percentage points, each by
/// 1..=2000 ms from its place; nearly all of them are behind the greatest
/// time before them (a move by less than the step is not), and none by
/// more than 2 s.
#[test]
fn out_of_order_rows_come_as_often_and_as_late_as_asked() {
    let n = 100_000i64;
    let ts = times(&[
        ("number-of-rows", &n.to_string()),
        ("seed", "42"),
        ("fields.ts.kind", "event-time"),
        ("fields.ts.start", "1000000"),
        ("fields.ts.step", "10"),
        ("fields.ts.out-of-order-rate", "0.05"),
        ("fields.ts.max-out-of-orderness", "2000"),
    ]);
    assert_eq!(ts.len(), n as usize);
    let mut moved = 0;
    let mut behind = 0;
    let mut greatest = i64::MIN;
    let mut latest_lateness = 0;
    for (i, &t) in ts.iter().enumerate() {
        let place = 1_000_000 + 10 * i as i64;
        assert!(t <= place, "row {i} is ahead of its place");
        if t < place {
            moved += 1;
            assert!(place - t <= 2000, "row {i} moved back {} ms", place - t);
        }
        if t < greatest {
            behind += 1;
            latest_lateness = latest_lateness.max(greatest - t);
        }
        greatest = greatest.max(t);
    }
    let share = moved as f64 / n as f64;
    assert!((share - 0.05).abs() < 0.002, "moved share {share}");
    // A move by d ms puts a row behind its predecessor when d > 10 (or the
    // predecessor was moved back further): nearly every move.
    assert!(behind <= moved && behind as f64 >= 0.98 * moved as f64);
    assert!(latest_lateness <= 2000 && latest_lateness > 1900);
}

#[test]
fn gaps_come_after_every_so_many_rows() {
    let ts = times(&[
        ("number-of-rows", "10"),
        ("fields.ts.kind", "event-time"),
        ("fields.ts.step", "100"),
        ("fields.ts.gap-every", "4"),
        ("fields.ts.gap", "60000"),
    ]);
    assert_eq!(
        ts,
        [0, 100, 200, 300, 60_400, 60_500, 60_600, 60_700, 120_800, 120_900]
    );
}

#[test]
fn the_same_seed_gives_the_same_times() {
    let opts = |seed| {
        times(&[
            ("number-of-rows", "1000"),
            ("seed", seed),
            ("fields.ts.kind", "event-time"),
            ("fields.ts.out-of-order-rate", "0.3"),
            ("fields.ts.max-out-of-orderness", "50"),
        ])
    };
    assert_eq!(opts("7"), opts("7"));
    assert_ne!(opts("7"), opts("8"));
}

#[test]
fn bad_options_are_refused_naming_the_option() {
    let et = ("fields.ts.kind", "event-time");
    let rows = ("number-of-rows", "10");
    let cases: Vec<(Options, DataType, &str)> = vec![
        (
            vec![rows, et],
            DataType::Int,
            "option 'fields.ts.kind': kind 'event-time' applies to BIGINT columns",
        ),
        (
            vec![rows, et, ("fields.ts.step", "-1")],
            DataType::BigInt,
            "option 'fields.ts.step' = '-1': expected an integer >= 0",
        ),
        (
            vec![rows, et, ("fields.ts.out-of-order-rate", "1.5")],
            DataType::BigInt,
            "option 'fields.ts.out-of-order-rate' = '1.5': expected a probability between 0.0 and 1.0",
        ),
        (
            vec![rows, et, ("fields.ts.out-of-order-rate", "0.1")],
            DataType::BigInt,
            "option 'fields.ts.max-out-of-orderness'",
        ),
        (
            vec![rows, et, ("fields.ts.max-out-of-orderness", "0")],
            DataType::BigInt,
            "option 'fields.ts.max-out-of-orderness' = '0': expected an integer >= 1",
        ),
        (
            vec![rows, et, ("fields.ts.gap-every", "10")],
            DataType::BigInt,
            "option 'fields.ts.gap'",
        ),
        (
            vec![rows, et, ("fields.ts.gap", "10"), ("fields.ts.gap-every", "0")],
            DataType::BigInt,
            "option 'fields.ts.gap-every' = '0': expected an integer >= 1",
        ),
        (
            vec![rows, et, ("fields.ts.max", "10")],
            DataType::BigInt,
            "option 'fields.ts.max': does not apply to kind 'event-time'",
        ),
        (
            vec![rows, ("fields.ts.step", "10")],
            DataType::BigInt,
            "option 'fields.ts.step': applies only to kind 'event-time'",
        ),
    ];
    for (pairs, ty, want) in cases {
        let got = error(&pairs, ty);
        assert!(got.contains(want), "{pairs:?}: {got}");
    }
}
