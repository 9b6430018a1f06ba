//! The logical rewrites (`optimizer/src/logical_rewrite/`): WHERE and ON
//! conjuncts pushed into join inputs, outer joins the WHERE clause undoes
//! made inner, join inputs pruned to the columns read above them. Each
//! query's plan as Flink 2.3's EXPLAIN has it (checked against Flink's own
//! EXPLAIN of the same statements), and every query over random changelogs
//! equal to the oracle, which evaluates the query as bound, on both
//! backends at parallelism 1 and 4.

mod common;

use common::queries::{inputs, script_for};
use common::run_mem_with_oracle;
use optimizer::session::explain_script;
use proptest::prelude::*;

/// (sink columns, query, what its plan shows).
const REWRITTEN: &[(&str, &str, &[&str])] = &[
    // A WHERE on the padded side, not TRUE on NULLs: no row is padded.
    (
        "k INT, v INT, w INT",
        "SELECT a.k, a.v, b.w FROM a LEFT JOIN b ON a.k = b.k WHERE b.w > 0",
        &[
            "Join(joinType=[InnerJoin], where=[=(k, k0)], select=[k, v, k0, w]",
            "where=[>(w, 0)]",
        ],
    ),
    // IS NULL keeps the padded rows (an anti-join): nothing moves.
    (
        "k INT, v INT, w INT",
        "SELECT a.k, a.v, b.w FROM a LEFT JOIN b ON a.k = b.k WHERE b.w IS NULL",
        &[
            "Calc(select=[k, v, w], where=[IS NULL(w)]",
            "joinType=[LeftOuterJoin]",
        ],
    ),
    // FULL loses the padding of the side its WHERE reads.
    (
        "k INT, v INT, w INT",
        "SELECT a.k, a.v, b.w FROM a FULL JOIN b ON a.k = b.k WHERE a.v > 0",
        &["joinType=[LeftOuterJoin]", "where=[>(v, 0)]"],
    ),
    (
        "k INT, v INT, w INT",
        "SELECT a.k, a.v, b.w FROM a FULL JOIN b ON a.k = b.k WHERE b.w > 0",
        &["joinType=[RightOuterJoin]", "where=[>(w, 0)]"],
    ),
    // A conjunct on both sides, NULL when the padded side is: INNER, and
    // the conjunct joins the condition.
    (
        "k INT, v INT, w INT",
        "SELECT a.k, a.v, b.w FROM a RIGHT JOIN b ON a.k = b.k WHERE a.v < b.w",
        &["Join(joinType=[InnerJoin], where=[AND(=(k, k0), <(v, w))]"],
    ),
    // One that may be TRUE on a padded row stays above the outer join.
    (
        "k INT, v INT, w INT",
        "SELECT a.k, a.v, b.w FROM a RIGHT JOIN b ON a.k = b.k WHERE a.v IS NULL OR a.v < b.w",
        &[
            "where=[OR(IS NULL(v), <(v, w))]",
            "joinType=[RightOuterJoin]",
        ],
    ),
    // ON: the right side's conjunct filters the right input; the kept left
    // side's stays in the condition; the WHERE on the left filters it.
    (
        "k INT, v INT, w INT",
        "SELECT a.k, a.v, b.w FROM a LEFT JOIN b ON a.k = b.k AND b.w > 1 AND a.v > 1 \
         WHERE a.v < 5",
        &[
            "Join(joinType=[LeftOuterJoin], where=[AND(=(k, k0), >(v, 1))]",
            "where=[<(v, 5)]",
            "where=[>(w, 1)]",
        ],
    ),
    // A WHERE column equality of an INNER join becomes a key pair.
    (
        "k INT, v INT, w INT",
        "SELECT a.k, a.v, b.w FROM a JOIN b ON a.k = b.k WHERE a.v = b.w",
        &[
            "Exchange(distribution=[hash[k, v]]",
            "where=[AND(=(k, k0), =(v, w))]",
        ],
    ),
    // Through the projection of a subquery.
    (
        "k INT, v INT, w INT",
        "SELECT * FROM (SELECT a.k, a.v, b.w FROM a LEFT JOIN b ON a.k = b.k) AS t WHERE t.w > 0",
        &["joinType=[InnerJoin]"],
    ),
    // Pruned below a chain: b's primary key is not read, so neither join
    // keeps b by it; c is read for its key only.
    (
        "v INT, w INT",
        "SELECT a.v, b.w FROM a JOIN b ON a.k = b.k LEFT JOIN c ON b.k = c.k",
        &[
            "Calc(select=[v, k0, w]",
            "Join(joinType=[LeftOuterJoin], where=[=(k0, k)], select=[v, k0, w, k], \
             leftInputSpec=[NoUniqueKey], rightInputSpec=[NoUniqueKey]",
            "project=[k]",
        ],
    ),
    // A residual on b's key keeps it: HasUniqueKey.
    (
        "k INT, w INT",
        "SELECT a.k, b.w FROM a JOIN b ON a.k = b.k AND b.id <> a.v",
        &["rightInputSpec=[HasUniqueKey]"],
    ),
];

#[test]
fn each_rewrite_plans_as_flink_does() {
    for (i, (columns, query, shows)) in REWRITTEN.iter().enumerate() {
        let sql = script_for(&[(columns, query)]);
        let plan = explain_script(&sql, &[]).unwrap();
        let physical = plan
            .split("== Optimized Physical Plan ==")
            .nth(1)
            .unwrap()
            .split("== Optimized Execution Plan ==")
            .next()
            .unwrap();
        for s in *shows {
            assert!(
                physical.contains(s),
                "query {i} ({query}): no {s} in\n{physical}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn rewritten_queries_match_the_oracle(sources in inputs()) {
        let queries: Vec<(&str, &str)> = REWRITTEN.iter().map(|(c, q, _)| (*c, *q)).collect();
        let sql = script_for(&queries);
        for backend in ["hashmap", "rocksdb"] {
            for p in ["1", "4"] {
                let o = vec![
                    ("state.backend.type", backend.to_string()),
                    ("parallelism.default", p.to_string()),
                ];
                let (outcomes, expected) =
                    run_mem_with_oracle(&sql, &sources, &o).map_err(TestCaseError::fail)?;
                for (i, (out, want)) in outcomes.iter().zip(&expected).enumerate() {
                    prop_assert_eq!(
                        out.sink_report().result.as_ref().unwrap(),
                        want,
                        "query {} ({}), {} p{}",
                        i,
                        queries[i].1,
                        backend,
                        p
                    );
                }
            }
        }
    }
}
