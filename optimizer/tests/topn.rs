//! Top-N planned from `ROW_NUMBER() ... WHERE rn <= N` (and `rn = N`,
//! `rn BETWEEN a AND b`): Flink's `RankITCase` Top-N cases with its inputs
//! and expected rows, in every variant (mini-batch off and on below the
//! rank, both backends, parallelism 1 and 4); the strategy each plans
//! (EXPLAIN as Flink prints it); a golden changelog through SQL; what is
//! refused; and results equal to the oracle (ROW_NUMBER from scratch) for
//! each strategy.

mod common;

use common::{run_mem, MemSources};
use operators::changelog::Change;
use operators::value::{cmp_rows, Row, Value};
use optimizer::logical::Statement;
use optimizer::oracle;
use optimizer::session::{explain_script, RunOptions};
use proptest::prelude::*;

fn mini_batch() -> Vec<(&'static str, String)> {
    vec![
        ("table.exec.mini-batch.enabled", "true".to_string()),
        ("table.exec.mini-batch.allow-latency", "1 h".to_string()),
        ("table.exec.mini-batch.size", "3".to_string()),
    ]
}

/// Every variant a case runs in: mini-batch off and on, both backends,
/// parallelism 1 and 4, and a state TTL.
fn variants() -> Vec<Vec<(&'static str, String)>> {
    let mut out = Vec::new();
    for mb in [false, true] {
        for backend in ["hashmap", "rocksdb"] {
            for p in [1usize, 4] {
                let mut o = vec![
                    ("state.backend.type", backend.to_string()),
                    ("parallelism.default", p.to_string()),
                    ("lab.source.batch-size", "1".to_string()),
                ];
                if mb {
                    o.extend(mini_batch());
                }
                out.push(o);
            }
        }
    }
    // A state TTL that never fires: the heap caches are off, the state
    // stamps its rows; the same results.
    for backend in ["hashmap", "rocksdb"] {
        out.push(vec![
            ("state.backend.type", backend.to_string()),
            ("table.exec.state.ttl", "1 h".to_string()),
            ("lab.source.batch-size", "1".to_string()),
        ]);
    }
    out
}

const T: &str =
    "CREATE TABLE T (category STRING, shopId INT, num BIGINT) WITH ('connector' = 'datagen');\n";

fn t_rows(rows: &[(&str, i64, i64)]) -> MemSources {
    let mut s = MemSources::default();
    s.0.insert(
        "T".into(),
        rows.iter()
            .map(|&(c, id, n)| Change::insert(vec![Value::str(c), Value::Int(id), Value::Int(n)]))
            .collect(),
    );
    s
}

/// `RankITCase`'s six rows (`testTopN`, `testTop1`, `testTopNWithUpsertSink`).
const SIX: [(&str, i64, i64); 6] = [
    ("book", 1, 12),
    ("book", 2, 19),
    ("book", 4, 11),
    ("fruit", 4, 33),
    ("fruit", 3, 44),
    ("fruit", 5, 22),
];

/// `testTopNWithGroupBy` and its neighbours' eight rows.
const EIGHT: [(&str, i64, i64); 8] = [
    ("book", 1, 11),
    ("book", 2, 19),
    ("book", 4, 13),
    ("book", 1, 11),
    ("fruit", 4, 33),
    ("fruit", 5, 12),
    ("fruit", 3, 44),
    ("fruit", 5, 22),
];

/// `testTopNWithUnary`'s rows.
const UNARY: [(&str, i64, i64); 24] = [
    ("book", 11, 100),
    ("book", 11, 200),
    ("book", 12, 400),
    ("book", 12, 500),
    ("book", 10, 600),
    ("book", 10, 700),
    ("book", 9, 800),
    ("book", 9, 900),
    ("book", 10, 500),
    ("book", 8, 110),
    ("book", 8, 120),
    ("book", 7, 1800),
    ("book", 9, 300),
    ("book", 6, 1900),
    ("book", 7, 50),
    ("book", 11, 1800),
    ("book", 7, 50),
    ("book", 8, 2000),
    ("book", 6, 700),
    ("book", 5, 800),
    ("book", 4, 910),
    ("book", 3, 1000),
    ("book", 2, 1100),
    ("book", 1, 1200),
];

fn render(rows: &[Row]) -> Vec<String> {
    let mut out: Vec<String> = rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    out.sort();
    out
}

/// Runs `sql` (one INSERT) over `sources` in every variant; the sink's
/// final rows must be `expected` (Flink's, as `a,b,c` strings).
fn expect_everywhere(sql: &str, sources: &MemSources, expected: &[&str]) {
    let mut want: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
    want.sort();
    for o in variants() {
        let (_, out) = run_mem(sql, sources, &o, RunOptions::keep_all())
            .unwrap_or_else(|e| panic!("{e}\n{o:?}\n{sql}"));
        let result = out[0].sink_report().result.clone().unwrap();
        assert_eq!(render(&result), want, "{o:?}\n{sql}");
    }
}

const RANKED_SINK: &str = "CREATE TABLE s (category STRING, shopId INT, num BIGINT, rank_num BIGINT) WITH ('connector' = 'blackhole');\n";
const RANKED_UPSERT: &str = "CREATE TABLE s (category STRING, shopId INT, num BIGINT, rank_num BIGINT, PRIMARY KEY (category, rank_num) NOT ENFORCED) WITH ('connector' = 'blackhole');\n";

fn top(order: &str, filter: &str, from: &str) -> String {
    format!(
        "INSERT INTO s SELECT * FROM (
  SELECT category, shopId, num,
      ROW_NUMBER() OVER (PARTITION BY category ORDER BY {order}) AS rank_num
  FROM {from})
WHERE {filter};\n"
    )
}

const SUM_BY_SHOP: &str =
    "(SELECT category, shopId, SUM(num) AS num FROM T GROUP BY category, shopId)";

#[test]
fn rank_itcase_test_top_n() {
    let sql = format!("{T}{RANKED_SINK}{}", top("num DESC", "rank_num <= 2", "T"));
    expect_everywhere(
        &sql,
        &t_rows(&SIX),
        &["book,2,19,1", "book,1,12,2", "fruit,3,44,1", "fruit,4,33,2"],
    );
}

#[test]
fn rank_itcase_test_top1_and_top2() {
    let sql = format!("{T}{RANKED_SINK}{}", top("num DESC", "rank_num = 1", "T"));
    expect_everywhere(&sql, &t_rows(&SIX), &["book,2,19,1", "fruit,3,44,1"]);
    let sql = format!("{T}{RANKED_SINK}{}", top("num DESC", "rank_num = 2", "T"));
    expect_everywhere(&sql, &t_rows(&SIX), &["book,1,12,2", "fruit,4,33,2"]);
}

#[test]
fn rank_itcase_test_top_n_with_upsert_sink() {
    let sql = format!("{T}{RANKED_UPSERT}{}", top("num ASC", "rank_num <= 2", "T"));
    expect_everywhere(
        &sql,
        &t_rows(&SIX),
        &["book,4,11,1", "book,1,12,2", "fruit,5,22,1", "fruit,4,33,2"],
    );
}

#[test]
fn rank_itcase_test_top_n_with_unary() {
    let sql = format!(
        "{T}{RANKED_UPSERT}{}",
        top("num ASC", "rank_num <= 3", SUM_BY_SHOP)
    );
    expect_everywhere(
        &sql,
        &t_rows(&UNARY),
        &["book,5,800,1", "book,12,900,2", "book,4,910,3"],
    );
}

#[test]
fn rank_itcase_test_unary_sort_top_n_on_string() {
    let rows: Vec<(&str, i64, &str)> = vec![
        ("book", 11, "100"),
        ("book", 11, "200"),
        ("book", 12, "400"),
        ("book", 12, "600"),
        ("book", 10, "600"),
        ("book", 10, "700"),
        ("book", 9, "800"),
        ("book", 9, "900"),
        ("book", 10, "500"),
        ("book", 8, "110"),
        ("book", 8, "120"),
        ("book", 7, "812"),
        ("book", 9, "300"),
        ("book", 6, "900"),
        ("book", 7, "50"),
        ("book", 11, "800"),
        ("book", 7, "50"),
        ("book", 8, "200"),
        ("book", 6, "700"),
        ("book", 5, "800"),
        ("book", 4, "910"),
        ("book", 3, "110"),
        ("book", 2, "900"),
        ("book", 1, "700"),
    ];
    let mut s = MemSources::default();
    s.0.insert(
        "P".into(),
        rows.iter()
            .map(|&(c, id, p)| Change::insert(vec![Value::str(c), Value::Int(id), Value::str(p)]))
            .collect(),
    );
    let sql = "CREATE TABLE P (category STRING, shopId INT, price STRING) WITH ('connector' = 'datagen');
CREATE TABLE s (category STRING, shopId INT, max_price STRING, rank_num BIGINT, PRIMARY KEY (category, rank_num) NOT ENFORCED) WITH ('connector' = 'blackhole');
INSERT INTO s SELECT * FROM (
  SELECT category, shopId, max_price,
      ROW_NUMBER() OVER (PARTITION BY category ORDER BY max_price ASC) AS rank_num
  FROM (SELECT category, shopId, MAX(price) AS max_price FROM P GROUP BY category, shopId))
WHERE rank_num <= 3;";
    expect_everywhere(sql, &s, &["book,3,110,1", "book,8,200,2", "book,12,600,3"]);
}

#[test]
fn rank_itcase_test_top_n_with_group_by() {
    let sql = format!(
        "{T}{RANKED_UPSERT}{}",
        top("num DESC", "rank_num <= 2", SUM_BY_SHOP)
    );
    expect_everywhere(
        &sql,
        &t_rows(&EIGHT),
        &["book,1,22,1", "book,2,19,2", "fruit,3,44,1", "fruit,5,34,2"],
    );
}

#[test]
fn rank_itcase_test_top_nth_with_group_by() {
    let sql = format!(
        "{T}{RANKED_UPSERT}{}",
        top("num DESC", "rank_num = 2", SUM_BY_SHOP)
    );
    expect_everywhere(&sql, &t_rows(&EIGHT), &["book,2,19,2", "fruit,5,34,2"]);
}

#[test]
fn rank_itcase_test_top_n_with_group_by_and_retract() {
    let sql = format!(
        "{T}CREATE TABLE s (category STRING, shopId INT, num BIGINT, cnt BIGINT, rank_num BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO s SELECT * FROM (
  SELECT category, shopId, num, cnt,
      ROW_NUMBER() OVER (PARTITION BY category ORDER BY num DESC, cnt ASC) AS rank_num
  FROM (SELECT category, shopId, SUM(num) AS num, COUNT(num) AS cnt FROM T GROUP BY category, shopId))
WHERE rank_num <= 2;"
    );
    expect_everywhere(
        &sql,
        &t_rows(&EIGHT),
        &[
            "book,1,22,2,1",
            "book,2,19,1,2",
            "fruit,3,44,1,1",
            "fruit,5,34,2,2",
        ],
    );
}

#[test]
fn top_n_without_the_rank_and_with_more_conditions() {
    // The row number not selected; a condition on another column applies
    // after the numbering (the top 2 by num, then num > 12).
    let sql = format!(
        "{T}CREATE TABLE s (category STRING, shopId INT, num BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO s SELECT category, shopId, num FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY num DESC) AS rn FROM T)
WHERE rn <= 2 AND num > 12;"
    );
    expect_everywhere(
        &sql,
        &t_rows(&SIX),
        &["book,2,19", "fruit,3,44", "fruit,4,33"],
    );
    let sql = format!(
        "{T}CREATE TABLE s (category STRING, shopId INT, num BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO s SELECT category, shopId, num FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY num DESC) AS rn FROM T)
WHERE rn BETWEEN 2 AND 3;"
    );
    expect_everywhere(
        &sql,
        &t_rows(&SIX),
        &["book,1,12", "book,4,11", "fruit,4,33", "fruit,5,22"],
    );
}

#[test]
fn a_top_n_ordered_by_a_column_the_subquery_does_not_select() {
    // As Nexmark q9 orders by B.`dateTime`, selected only under another
    // name: the window reads the subquery's FROM, so `U.num` is U's column
    // (not T's `num`, which the subquery selects), a hidden column of the
    // subquery; `T.category` is the `category` that `T.*` selects.
    let sql = format!(
        "{T}CREATE TABLE U (shopId INT, num BIGINT) WITH ('connector' = 'datagen');
CREATE TABLE s (category STRING, shopId INT, num BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO s SELECT category, shopId, num FROM (
  SELECT T.*, ROW_NUMBER() OVER (PARTITION BY T.category ORDER BY U.num DESC) AS rn
  FROM T, U WHERE T.shopId = U.shopId)
WHERE rn <= 1;"
    );
    let mut sources = t_rows(&SIX);
    sources.0.insert(
        "U".into(),
        [(1, 100), (2, 1), (3, 2), (4, 50), (5, 60)]
            .iter()
            .map(|&(id, n)| Change::insert(vec![Value::Int(id), Value::Int(n)]))
            .collect(),
    );
    expect_everywhere(&sql, &sources, &["book,1,12", "fruit,5,22"]);
    let plan = explain(&sql);
    assert!(
        plan.contains("partitionBy=[category], orderBy=[$rank_key0 DESC]"),
        "{plan}"
    );
}

/// The first line of `text` holding `needle`.
fn line_with<'a>(text: &'a str, needle: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle}:\n{text}"))
}

fn explain(sql: &str) -> String {
    explain_script(sql, &[]).unwrap_or_else(|e| panic!("{e}\n{sql}"))
}

#[test]
fn explain_shows_flinks_rank_and_its_strategy() {
    let text = explain(&format!(
        "{T}{RANKED_SINK}EXPLAIN {}",
        top("num DESC", "rank_num <= 2", "T")
    ));
    assert!(
        text.contains(
            "Rank(strategy=[AppendFastStrategy], rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd=2], partitionBy=[category], orderBy=[num DESC], select=[category, shopId, num, w0$o0]"
        ),
        "{text}"
    );
    assert!(
        text.contains("Exchange(distribution=[hash[category]]"),
        "{text}"
    );
    assert!(
        text.contains("rank_num=[ROW_NUMBER() OVER (PARTITION BY $0 ORDER BY $2 DESC NULLS LAST)]"),
        "{text}"
    );
    // SUM may fall: the retract strategy, and its input emits -U.
    let text = explain(&format!(
        "{T}{RANKED_SINK}EXPLAIN {}",
        top("num DESC", "rank_num <= 2", SUM_BY_SHOP)
    ));
    assert!(text.contains("Rank(strategy=[RetractStrategy]"), "{text}");
    assert!(
        line_with(&text, "SUM(num) AS num]").ends_with("changelogMode=[I,UB,UA])"),
        "{text}"
    );
    // COUNT only grows: the update strategy keyed by the group key, whose
    // input emits no -U (as RankTest.testNestedTopN's plan).
    let text = explain(&format!(
        "{T}CREATE TABLE s (category STRING, shopId INT, cnt BIGINT, rn BIGINT) WITH ('connector' = 'blackhole');
EXPLAIN INSERT INTO s SELECT * FROM (
  SELECT category, shopId, cnt,
      ROW_NUMBER() OVER (PARTITION BY category ORDER BY cnt DESC) AS rn
  FROM (SELECT category, shopId, COUNT(*) AS cnt FROM T GROUP BY category, shopId))
WHERE rn <= 10;"
    ));
    assert!(
        text.contains("Rank(strategy=[UpdateFastStrategy[0,1]], rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd=10], partitionBy=[category], orderBy=[cnt DESC], select=[category, shopId, cnt, w0$o0]"),
        "{text}"
    );
    assert!(
        line_with(&text, "COUNT(*) AS cnt]").ends_with("changelogMode=[I,UA])"),
        "{text}"
    );
}

#[test]
fn golden_changelog_of_the_update_strategy_through_sql() {
    // COUNT(*) per shop, the top 2 shops per category by count; one
    // subtask, one record a batch.
    let sql = format!(
        "{T}CREATE TABLE s (category STRING, shopId INT, cnt BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO s SELECT category, shopId, cnt FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY cnt DESC) AS rn
  FROM (SELECT category, shopId, COUNT(*) AS cnt FROM T GROUP BY category, shopId))
WHERE rn <= 2;"
    );
    let rows = [
        ("book", 1, 0),
        ("book", 2, 0),
        ("book", 3, 0),
        ("book", 3, 0),
        ("book", 1, 0),
        ("book", 3, 0),
    ];
    let o = [("lab.source.batch-size", "1".to_string())];
    let (_, out) = run_mem(&sql, &t_rows(&rows), &o, RunOptions::keep_all()).unwrap();
    let log: Vec<String> = out[0].changelog.iter().map(|c| c.to_string()).collect();
    assert_eq!(
        log,
        [
            "+I[book, 1, 1]",
            "+I[book, 2, 1]",
            "-D[book, 2, 1]",
            "+I[book, 3, 2]",
            "-U[book, 1, 1]",
            "+U[book, 1, 2]",
            "-U[book, 3, 2]",
            "+U[book, 3, 3]"
        ]
    );
}

/// A Top-1 over the rows themselves (insert-only) is Flink 2.x's
/// `FastTop1Function`: a new winner updates its partition's row, a tie
/// keeps the first; with an upsert sink on the partition key no `-U`.
#[test]
fn golden_changelog_of_the_append_only_top1_through_sql() {
    let rows = [
        ("book", 1, 10),
        ("fruit", 2, 5),
        ("book", 3, 10),
        ("book", 4, 12),
        ("book", 5, 11),
        ("fruit", 6, 7),
    ];
    let o = [("lab.source.batch-size", "1".to_string())];
    let run = |sink: &str| -> Vec<String> {
        let sql = format!(
            "{T}CREATE TABLE s (category STRING, shopId INT, num BIGINT{sink}) WITH ('connector' = 'blackhole');
INSERT INTO s SELECT category, shopId, num FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY num DESC) AS rn FROM T)
WHERE rn = 1;"
        );
        let (_, out) = run_mem(&sql, &t_rows(&rows), &o, RunOptions::keep_all()).unwrap();
        let counters: Vec<_> = out[0]
            .report
            .stages
            .iter()
            .filter(|s| s.name.contains("Rank"))
            .flat_map(|s| s.counters.clone())
            .collect();
        assert!(
            counters.contains(&("rows_entered_top".into(), 4)),
            "{counters:?}"
        );
        out[0].changelog.iter().map(|c| c.to_string()).collect()
    };
    assert_eq!(
        run(""),
        [
            "+I[book, 1, 10]",
            "+I[fruit, 2, 5]",
            "-U[book, 1, 10]",
            "+U[book, 4, 12]",
            "-U[fruit, 2, 5]",
            "+U[fruit, 6, 7]"
        ]
    );
    assert_eq!(
        run(", PRIMARY KEY (category) NOT ENFORCED"),
        [
            "+I[book, 1, 10]",
            "+I[fruit, 2, 5]",
            "+U[book, 4, 12]",
            "+U[fruit, 6, 7]"
        ]
    );
}

#[test]
fn golden_changelog_of_the_retract_strategy_through_sql() {
    // SUM per shop, which falls on a negative row: a shop leaves the top
    // and the next one comes back.
    let sql = format!(
        "{T}CREATE TABLE s (category STRING, shopId INT, num BIGINT, rn BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO s SELECT * FROM (
  SELECT category, shopId, num, ROW_NUMBER() OVER (PARTITION BY category ORDER BY num DESC) AS rn
  FROM {SUM_BY_SHOP})
WHERE rn <= 2;"
    );
    let rows = [
        ("book", 1, 10),
        ("book", 2, 20),
        ("book", 3, 5),
        ("book", 2, -18),
    ];
    let o = [("lab.source.batch-size", "1".to_string())];
    let (_, out) = run_mem(&sql, &t_rows(&rows), &o, RunOptions::keep_all()).unwrap();
    let log: Vec<String> = out[0].changelog.iter().map(|c| c.to_string()).collect();
    assert_eq!(
        log,
        [
            "+I[book, 1, 10, 1]",
            "-U[book, 1, 10, 1]",
            "+U[book, 2, 20, 1]",
            "+I[book, 1, 10, 2]",
            // -U[2, 20] retracts it (rank 1): 1 moves up, 3 enters at 2.
            "-U[book, 2, 20, 1]",
            "+U[book, 1, 10, 1]",
            "-U[book, 1, 10, 2]",
            "+U[book, 3, 5, 2]",
            // +U[2, 2] is ranked last of three: out of the top.
        ]
    );
}

#[test]
fn what_a_top_n_cannot_be_is_refused_where_it_is() {
    let q = |body: &str| format!("{T}{RANKED_SINK}{body}");
    let cases = [
        (
            q("INSERT INTO s SELECT * FROM (\n  SELECT *, RANK() OVER (PARTITION BY category ORDER BY num) AS rank_num FROM T\n) WHERE rank_num <= 3;"),
            "RANK() on a streaming table is not supported",
        ),
        (
            q("INSERT INTO s SELECT * FROM (\n  SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY num) AS rank_num FROM T\n) WHERE rank_num > 3;"),
            "needs an upper bound on 'rank_num'",
        ),
        (
            q("INSERT INTO s SELECT * FROM (\n  SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY num) AS rank_num FROM T\n) WHERE rank_num <= num;"),
            "can only be bounded by integer literals",
        ),
        (
            q("INSERT INTO s SELECT * FROM (\n  SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY num) AS rank_num FROM T\n) WHERE rank_num <= 0;"),
            "keep no row",
        ),
        (
            q("INSERT INTO s SELECT * FROM (\n  SELECT category, ROW_NUMBER() OVER (PARTITION BY category ORDER BY num) AS rank_num, shopId, num FROM T\n) WHERE rank_num <= 2;"),
            "is not its last item",
        ),
    ];
    for (sql, want) in cases {
        let err = optimizer::sql::parse_script(&sql).unwrap_err().to_string();
        assert!(err.contains(want), "{err}\nwanted: {want}");
        assert!(err.contains("line "), "{err}");
    }
}

fn sorted(mut rows: Vec<Row>) -> Vec<Row> {
    rows.sort_by(|x, y| cmp_rows(x, y));
    rows
}

/// Three Top-Ns, one per strategy, over `ev (id, k, v)` whose `id` is
/// unique (so no two rows of a partition tie on the sort key and the
/// oracle's numbering is the stream's).
const PROP_SCRIPT: &str = "CREATE TABLE ev (id BIGINT, k BIGINT, v BIGINT) WITH ('connector' = 'datagen');
CREATE TABLE append_top (id BIGINT, k BIGINT, v BIGINT, rn BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE append_top_nr (id BIGINT, k BIGINT, v BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE retract_top (k BIGINT, g BIGINT, s BIGINT, rn BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE retract_top_nr (k BIGINT, g BIGINT, s BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE update_top (k BIGINT, g BIGINT, c BIGINT, rn BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE update_top_nr (k BIGINT, g BIGINT, c BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO append_top SELECT * FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, id) AS rn FROM ev) WHERE rn <= 3;
INSERT INTO append_top_nr SELECT id, k, v FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v, id DESC) AS rn FROM ev) WHERE rn BETWEEN 2 AND 3;
INSERT INTO retract_top SELECT * FROM (
  SELECT k, g, s, ROW_NUMBER() OVER (PARTITION BY k ORDER BY s DESC, g) AS rn
  FROM (SELECT k, v % 3 AS g, SUM(v - 2) AS s FROM ev GROUP BY k, v % 3)) WHERE rn <= 2;
INSERT INTO retract_top_nr SELECT k, g, s FROM (
  SELECT k, g, s, ROW_NUMBER() OVER (PARTITION BY k ORDER BY s, g) AS rn
  FROM (SELECT k, v % 3 AS g, SUM(v - 2) AS s FROM ev GROUP BY k, v % 3)) WHERE rn <= 1;
INSERT INTO update_top SELECT * FROM (
  SELECT k, g, c, ROW_NUMBER() OVER (PARTITION BY k ORDER BY c DESC, g) AS rn
  FROM (SELECT k, v AS g, COUNT(*) AS c FROM ev GROUP BY k, v)) WHERE rn <= 2;
INSERT INTO update_top_nr SELECT k, g, c FROM (
  SELECT k, g, c, ROW_NUMBER() OVER (PARTITION BY k ORDER BY c DESC, g) AS rn
  FROM (SELECT k, v AS g, COUNT(*) AS c FROM ev GROUP BY k, v)) WHERE rn <= 2;
";

#[test]
fn the_property_script_plans_each_strategy() {
    // A script's explanation explains each INSERT.
    let text = explain(PROP_SCRIPT);
    for s in [
        "AppendFastStrategy",
        "RetractStrategy",
        "UpdateFastStrategy[0,1]",
    ] {
        assert!(text.contains(s), "{s}\n{text}");
    }
}

fn check(rows: &[(i64, i64)], overrides: &[(&str, String)]) -> Result<(), TestCaseError> {
    let full: Vec<Row> = rows
        .iter()
        .enumerate()
        .map(|(i, &(k, v))| vec![Value::Int(i as i64), Value::Int(k), Value::Int(v)])
        .collect();
    let mut srcs = MemSources::default();
    srcs.0.insert(
        "ev".into(),
        full.iter().cloned().map(Change::insert).collect(),
    );
    let (script, outcomes) = run_mem(PROP_SCRIPT, &srcs, overrides, RunOptions::keep_all())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let inserts = script.statements.iter().filter_map(|s| match s {
        Statement::Insert(i) => Some(i),
        _ => None,
    });
    for (insert, outcome) in inserts.zip(&outcomes) {
        let expected = sorted(oracle::evaluate(&insert.query, &|_| full.clone()));
        prop_assert!(
            outcome.sink_report().negative_rows.is_empty(),
            "{}: retractions of rows never emitted ({:?})",
            insert.sink,
            overrides
        );
        prop_assert_eq!(
            outcome.sink_report().result.as_ref().unwrap(),
            &expected,
            "{} differs from the oracle with {:?}",
            insert.sink,
            overrides
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn every_strategy_matches_the_oracle(
        rows in prop::collection::vec((0i64..3, 0i64..6), 0..40),
        batch in prop_oneof![Just(1usize), Just(3), Just(1024)],
        cache in prop_oneof![Just(1u64), Just(10_000)],
        mb in any::<bool>(),
    ) {
        for backend in ["hashmap", "rocksdb"] {
            for p in [1usize, 4] {
                let mut o = vec![
                    ("state.backend.type", backend.to_string()),
                    ("parallelism.default", p.to_string()),
                    ("lab.source.batch-size", batch.to_string()),
                    ("table.exec.rank.topn-cache-size", cache.to_string()),
                ];
                if mb {
                    o.extend(mini_batch());
                }
                check(&rows, &o)?;
            }
        }
    }
}
