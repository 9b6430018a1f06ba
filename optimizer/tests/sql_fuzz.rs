//! The front end never panics: valid scripts mutated at random (tokens
//! dropped, swapped, duplicated or replaced) give a statement list or an
//! error, and every error that has a location points inside the script.

use optimizer::sql::parse_script;
use proptest::prelude::*;

const DDL: &str = "CREATE TABLE clicks (user_id STRING, url STRING, ts BIGINT) WITH ('connector'='filesystem');
CREATE TABLE users (user_id STRING, name STRING, age INT, score DOUBLE, vip BOOLEAN, PRIMARY KEY (user_id) NOT ENFORCED) WITH ('connector'='filesystem');
CREATE TABLE sink2 (a STRING, b BIGINT) WITH ('connector'='print');
";

const QUERIES: &[&str] = &[
    "INSERT INTO sink2 SELECT user_id , COUNT ( * ) FROM clicks GROUP BY user_id ;",
    "INSERT INTO sink2 SELECT /*+ MULTI_JOIN(c, u) */ c.user_id , SUM ( u.age ) FROM clicks c JOIN users u ON c.user_id = u.user_id AND u.age > 3 LEFT JOIN users v ON v.user_id = c.user_id GROUP BY c.user_id HAVING MAX ( c.ts ) > 1 ;",
    "INSERT INTO sink2 SELECT cnt , COUNT ( * ) FROM ( SELECT user_id , COUNT ( * ) AS cnt FROM clicks GROUP BY user_id ) t GROUP BY cnt ;",
    "INSERT INTO sink2 SELECT name , CASE WHEN age BETWEEN 1 AND 5 THEN 1 ELSE age END FROM users WHERE name IN ( 'a' , 'b' ) AND NOT vip OR score IS NULL ;",
    "INSERT INTO sink2 SELECT url , COUNT ( DISTINCT user_id ) FILTER ( WHERE ts % 2 = 0 ) + HASH_CODE ( url ) FROM clicks GROUP BY url ;",
    "EXPLAIN CHANGELOG_MODE INSERT INTO sink2 SELECT /*+ STATE_TTL('clicks' = '1h') */ url , CAST ( AVG ( ts ) AS BIGINT ) FROM clicks GROUP BY url ;",
    "SET 'table.exec.mini-batch.enabled' = 'true' ;",
];

const POOL: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "GROUP",
    "BY",
    "HAVING",
    "JOIN",
    "LEFT",
    "ON",
    "AND",
    "OR",
    "NOT",
    "AS",
    "(",
    ")",
    ",",
    "*",
    "+",
    "-",
    "/",
    "%",
    "=",
    "<>",
    "||",
    "NULL",
    "TRUE",
    "1",
    "2.5",
    "'x'",
    "COUNT",
    "SUM",
    "AVG",
    "MIN",
    "MAX",
    "DISTINCT",
    "FILTER",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "CAST",
    "DOUBLE",
    "IN",
    "IS",
    "BETWEEN",
    "MOD",
    "HASH_CODE",
    "clicks",
    "users",
    "c",
    "u",
    "t",
    "user_id",
    "c.user_id",
    "u.user_id",
    "url",
    "ts",
    "age",
    "name",
    "vip",
    "score",
    "/*+ MULTI_JOIN(c) */",
    "/*+ STATE_TTL('c' = '1d') */",
    "/*+ FOO */",
    "`user_id`",
    ";",
    "SET",
    "'k'",
    "EXPLAIN",
    "INSERT",
    "INTO",
    "sink2",
    "CREATE",
    "TABLE",
    "PRIMARY",
    "KEY",
    "ORDER",
    "LIMIT",
    "UNION",
    "OVER",
    "INT",
    "STRING",
    "\n",
];

#[derive(Debug, Clone)]
enum Mutation {
    Drop(usize),
    Swap(usize, usize),
    Duplicate(usize),
    Replace(usize, usize),
    Insert(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Drop),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Swap(a, b)),
        any::<usize>().prop_map(Mutation::Duplicate),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Replace(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Insert(a, b)),
    ]
}

fn apply(tokens: &mut Vec<String>, m: &Mutation) {
    if tokens.is_empty() {
        return;
    }
    let n = tokens.len();
    match *m {
        Mutation::Drop(i) => {
            tokens.remove(i % n);
        }
        Mutation::Swap(a, b) => tokens.swap(a % n, b % n),
        Mutation::Duplicate(i) => {
            let t = tokens[i % n].clone();
            tokens.insert(i % n, t);
        }
        Mutation::Replace(i, p) => tokens[i % n] = POOL[p % POOL.len()].to_string(),
        Mutation::Insert(i, p) => tokens.insert(i % (n + 1), POOL[p % POOL.len()].to_string()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 5000, ..ProptestConfig::default() })]

    #[test]
    fn mutated_scripts_never_panic(
        q in 0..QUERIES.len(),
        mutations in proptest::collection::vec(mutation(), 1..4),
    ) {
        // Hints are one token each; split the rest on spaces.
        let mut tokens: Vec<String> = Vec::new();
        let mut rest = QUERIES[q];
        while let Some(start) = rest.find("/*+") {
            tokens.extend(rest[..start].split_whitespace().map(String::from));
            let end = rest[start..].find("*/").map(|e| start + e + 2).unwrap_or(rest.len());
            tokens.push(rest[start..end].to_string());
            rest = &rest[end..];
        }
        tokens.extend(rest.split_whitespace().map(String::from));
        for m in &mutations {
            apply(&mut tokens, m);
        }
        let sql = format!("{DDL}{}", tokens.join(" "));
        let lines = sql.lines().count() as u64 + 1;
        if let Err(e) = parse_script(&sql) {
            if let Some(loc) = &e.location {
                prop_assert!(loc.line >= 1 && loc.line <= lines, "{e} for {sql}");
                prop_assert!(loc.column >= 1, "{e} for {sql}");
            }
            prop_assert!(!e.message.is_empty());
        }
    }
}
