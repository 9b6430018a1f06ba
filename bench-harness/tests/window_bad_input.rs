//! Bad event-time and window input through `lab run` (issue 17, acceptance
//! 5): a watermark on a column that is not a timestamp, a window over a
//! column that is not the time attribute, a malformed interval, a SESSION
//! gap of zero or less, SESSION partition keys that are unknown or not
//! group keys, a SESSION TVF without an aggregate, a HOP aggregate whose
//! size is not a multiple of its slide, early or late firings on a window
//! aggregate, a window deduplication over SESSION: each an
//! error naming its line and column, exit 2, no panic.

use std::process::Command;

const BID: &str = "CREATE TABLE Bid (
  bidtime TIMESTAMP(3),
  price   DOUBLE,
  item    STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.csv', 'format' = 'csv');
CREATE TABLE o (ws TIMESTAMP(3), we TIMESTAMP(3), item STRING, t DOUBLE) WITH ('connector' = 'blackhole');
";

fn run(sql: &str) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("q.sql"), sql).unwrap();
    std::fs::write(dir.path().join("bids.csv"), "2020-04-15 08:05:00,4.0,C\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_lab"))
        .arg("run")
        .arg(dir.path().join("q.sql"))
        .arg("--quiet")
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// An INSERT after the Bid table (its line is 8).
fn insert(from: &str, group: &str) -> String {
    format!("{BID}INSERT INTO o SELECT window_start, window_end, item, SUM(price) FROM TABLE({from}) GROUP BY {group};\n")
}

#[test]
fn bad_time_and_window_input_is_refused_where_it_is() {
    let by_item = "item, window_start, window_end";
    let cases = [
        (
            BID.replace("WATERMARK FOR bidtime", "WATERMARK FOR price"),
            "validation error at line 5, column 17: Invalid data type of time field for watermark definition. \
             The field must be of type TIMESTAMP(3) or TIMESTAMP_LTZ(3), but the time field 'price' is DOUBLE",
        ),
        (
            BID.replace("INTERVAL '1' SECOND", "INTERVAL '1s' SECOND"),
            "validation error at line 5, column 47: Illegal interval literal format '1s' for INTERVAL SECOND",
        ),
        (
            insert("TUMBLE(TABLE Bid, DESCRIPTOR(price), INTERVAL '5' MINUTES)", by_item),
            "validation error at line 8, column 105: The window function requires the timecol is a time attribute type, but is DOUBLE",
        ),
        (
            insert("TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL 'five' MINUTES)", by_item),
            "validation error at line 8, column 124: Illegal interval literal format 'five' for INTERVAL MINUTE",
        ),
        (
            insert("SESSION(TABLE Bid PARTITION BY item, DESCRIPTOR(bidtime), INTERVAL '0' MINUTES)", by_item),
            "validation error at line 8, column 143: Session Window parameters must satisfy gap > 0, found 'INTERVAL '0' MINUTES'",
        ),
        (
            insert("SESSION(TABLE Bid PARTITION BY item, DESCRIPTOR(bidtime), INTERVAL '-5' MINUTES)", by_item),
            "validation error at line 8, column 143: Session Window parameters must satisfy gap > 0, found 'INTERVAL '-5' MINUTES'",
        ),
        (
            insert("SESSION(TABLE Bid PARTITION BY itm, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES)", by_item),
            "validation error at line 8, column 107: Column 'itm' not found in table 'Bid'. Did you mean 'item'?",
        ),
        (
            insert("SESSION(TABLE Bid PARTITION BY (item, price), DESCRIPTOR(bidtime), INTERVAL '5' MINUTES)", by_item),
            "unsupported SQL at line 8, column 1: the PARTITION BY column 'price' of SESSION is not a GROUP BY key of its window aggregate",
        ),
        (
            insert("SESSION(TABLE Bid PARTITION BY item, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '1' MINUTE)", by_item),
            "unsupported SQL at line 8, column 165: SESSION takes 3 arguments (DATA, TIMECOL, GAP)\n",
        ),
        (
            format!("{BID}INSERT INTO o SELECT window_start, window_end, item, price FROM TABLE(SESSION(TABLE Bid PARTITION BY item, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES));\n"),
            "unsupported SQL at line 8, column 1: a SESSION window TVF runs under a window aggregate",
        ),
        (
            insert("HOP(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '4' MINUTES, INTERVAL '10' MINUTES)", by_item),
            "unsupported SQL at line 8, column 1: HOP table function based aggregate requires size must be an \
             integral multiple of slide, but got size 600000 ms and slide 240000 ms",
        ),
        (
            format!("SET 'table.exec.emit.late-fire.enabled' = 'true';\n{}", insert("TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES)", by_item)),
            "unsupported SQL at line 9, column 1: Currently, window table function based aggregate doesn't support \
             early-fire and late-fire configuration 'table.exec.emit.early-fire.enabled' and 'table.exec.emit.late-fire.enabled'.",
        ),
        (
            format!("{BID}INSERT INTO o SELECT window_start, window_end, item, price FROM (\
             SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY bidtime DESC) AS rn \
             FROM TABLE(SESSION(TABLE Bid PARTITION BY item, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES))) WHERE rn = 1;\n"),
            "unsupported SQL at line 8, column 1: window deduplication over a SESSION window TVF is not supported",
        ),
    ];
    for (sql, want) in cases {
        let (code, stderr) = run(&sql);
        assert_eq!(code, 2, "{sql}\n{stderr}");
        assert!(stderr.contains(want), "{sql}\nwant {want:?}\ngot  {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// A legacy group window over the Bid table (its INSERT on line 8 plus the
/// SETs before it).
fn group_window(sets: &[(&str, &str)], window: &str, select: &str) -> String {
    let sets: String = sets
        .iter()
        .map(|(k, v)| format!("SET '{k}' = '{v}';\n"))
        .collect();
    format!("{sets}{BID}INSERT INTO o SELECT {select}, {select}, item, SUM(price) FROM Bid GROUP BY item, {window};\n")
}

/// What the lab's group windows refuse: early firings and a late-fire delay
/// (processing-time timers), late firings without lateness and on SESSION
/// (Flink's messages), a window on a column that is not the time
/// attribute, an auxiliary function that is not the window's: each an
/// error with its line, exit 2, no panic.
#[test]
fn bad_group_window_input_is_refused() {
    let tumble = "TUMBLE(bidtime, INTERVAL '5' MINUTES)";
    let start = "TUMBLE_START(bidtime, INTERVAL '5' MINUTES)";
    let lateness = ("table.exec.emit.allow-lateness", "1 min");
    let late = ("table.exec.emit.late-fire.enabled", "true");
    let cases = [
        (
            group_window(&[("table.exec.emit.early-fire.enabled", "true")], tumble, start),
            "unsupported SQL at line 9, column 1: 'table.exec.emit.early-fire.enabled' = 'true' is not supported",
        ),
        (
            group_window(&[lateness, late, ("table.exec.emit.late-fire.delay", "5 s")], tumble, start),
            "unsupported SQL at line 11, column 1: 'table.exec.emit.late-fire.delay' > 0 is not supported",
        ),
        (
            group_window(&[late], tumble, start),
            "unsupported SQL at line 9, column 1: The 'AFTER WATERMARK' emit strategy requires set \
             'minIdleStateRetentionTime' in table config.",
        ),
        (
            group_window(
                &[lateness, late],
                "SESSION(bidtime, INTERVAL '5' MINUTES)",
                "SESSION_START(bidtime, INTERVAL '5' MINUTES)",
            ),
            "unsupported SQL at line 10, column 1: Session window doesn't support EMIT strategy currently.",
        ),
        (
            group_window(&[], "TUMBLE(price, INTERVAL '5' MINUTES)", "TUMBLE_START(price, INTERVAL '5' MINUTES)"),
            "Window can only be defined over a time attribute column: 'price' of table 'Bid' has no WATERMARK",
        ),
        (
            group_window(&[], tumble, "TUMBLE_START(bidtime, INTERVAL '6' MINUTES)"),
            "TUMBLE_START(...) must take the arguments of the query's group window TUMBLE(bidtime, INTERVAL '5' MINUTES)",
        ),
        // An aggregate call over the window's end, of a group window and
        // of a window TVF (it panicked before).
        (
            format!("{BID}INSERT INTO o SELECT {start}, MAX(TUMBLE_END(bidtime, INTERVAL '5' MINUTES)), item, SUM(price) \
             FROM Bid GROUP BY item, {tumble};\n"),
            "unsupported SQL at line 8, column 1: window aggregate: the call 'EXPR$1' reads the window's start or end",
        ),
        (
            format!("{BID}INSERT INTO o SELECT window_start, MAX(window_end), item, SUM(price) \
             FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES)) GROUP BY item, window_start, window_end;\n"),
            "unsupported SQL at line 8, column 1: window aggregate: the call 'EXPR$1' reads the window's start or end",
        ),
    ];
    for (sql, want) in cases {
        let (code, stderr) = run(&sql);
        assert_eq!(code, 2, "{sql}\n{stderr}");
        assert!(stderr.contains(want), "{sql}\nwant {want:?}\ngot  {stderr}");
        assert!(stderr.contains("line "), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}
