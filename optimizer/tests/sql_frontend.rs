//! The SQL front end: scripts in, bound statements and logical plans out.
//! Plans are compared as `explain_logical` trees; errors by kind, message
//! and script location.

use operators::expr::Expr;
use operators::value::{DataType, Value};
use optimizer::error::{ErrorKind, Location, PlanError};
use optimizer::logical::{
    AggFunc, ExplainDetails, ExplainTarget, Hint, JoinKind, LogicalPlan, Statement,
};
use optimizer::sql::{bind_query, explain_logical, parse_script, schema_string, Catalog, Script};

const DDL: &str = "
CREATE TABLE clicks (user_id STRING, url STRING, ts BIGINT) WITH ('connector'='filesystem','path'='clicks.csv','format'='csv');
CREATE TABLE users (user_id STRING NOT NULL, name STRING, age INT, score DOUBLE, vip BOOLEAN,
                    PRIMARY KEY (user_id) NOT ENFORCED) WITH ('connector'='filesystem', 'path'='users.csv');
CREATE TABLE orders (oid BIGINT, user_id STRING, amount DOUBLE, qty INT) WITH ('connector'='filesystem');
CREATE TABLE sink2 (a STRING, b BIGINT) WITH ('connector'='print');
CREATE TABLE sink3 (a STRING, b BIGINT, c DOUBLE) WITH ('connector'='print');
";

fn script(sql: &str) -> Script {
    match parse_script(sql) {
        Ok(s) => s,
        Err(e) => panic!("script failed: {e}\n{sql}"),
    }
}

/// The query of the last INSERT of `DDL` + `sql`.
fn plan(sql: &str) -> LogicalPlan {
    let s = script(&format!("{DDL}{sql}"));
    s.inserts().last().expect("an INSERT").query.clone()
}

fn explain(sql: &str) -> String {
    explain_logical(&plan(sql))
}

fn err(sql: &str) -> PlanError {
    match parse_script(&format!("{DDL}{sql}")) {
        Ok(_) => panic!("expected an error for {sql}"),
        Err(e) => e,
    }
}

/// Script line of the statement after `DDL` (which ends on line 7).
const L: u64 = 8;

fn at(e: &PlanError) -> (u64, u64) {
    let Location { line, column } = e.location.clone().expect("a location");
    (line, column)
}

fn assert_tree(actual: &str, expected: &str) {
    let expected = expected
        .lines()
        .map(|l| l.strip_prefix("        ").unwrap_or(l))
        .filter(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(actual.trim_end(), expected, "\nactual:\n{actual}");
}

#[test]
fn clicks_script() {
    let s = script(
        "CREATE TABLE clicks (user_id STRING, url STRING, ts BIGINT) WITH ('connector'='filesystem','path'='clicks.csv','format'='csv');
CREATE TABLE per_user (user_id STRING, cnt BIGINT) WITH ('connector'='print');
CREATE TABLE hist (cnt BIGINT, users BIGINT, PRIMARY KEY (cnt) NOT ENFORCED) WITH ('connector'='blackhole');
SET 'table.exec.mini-batch.enabled' = 'true';
INSERT INTO per_user SELECT user_id, COUNT(*) FROM clicks GROUP BY user_id;
INSERT INTO hist SELECT cnt, COUNT(*) FROM (SELECT user_id, COUNT(*) AS cnt FROM clicks GROUP BY user_id) GROUP BY cnt;
",
    );
    assert_eq!(s.statements.len(), 6);
    let Statement::CreateTable(clicks) = &s.statements[0] else {
        panic!("CREATE TABLE first")
    };
    assert_eq!(clicks.name, "clicks");
    assert_eq!(
        schema_string(&clicks.schema),
        "user_id STRING, url STRING, ts BIGINT"
    );
    assert_eq!(clicks.options["connector"], "filesystem");
    assert_eq!(clicks.options["path"], "clicks.csv");
    assert_eq!(clicks.options["format"], "csv");
    assert_eq!(clicks.primary_key, None);

    let hist = s.catalog.get("HIST").expect("case-insensitive lookup");
    assert_eq!(hist.name, "hist");
    assert_eq!(hist.primary_key, Some(vec![0]));
    assert_eq!(
        schema_string(&hist.schema),
        "cnt BIGINT NOT NULL, users BIGINT"
    );

    assert_eq!(
        s.statements[3],
        Statement::Set {
            key: "table.exec.mini-batch.enabled".into(),
            value: "true".into()
        }
    );

    let Statement::Insert(per_user) = &s.statements[4] else {
        panic!("INSERT")
    };
    assert_eq!(per_user.sink, "per_user");
    assert_tree(
        &explain_logical(&per_user.query),
        "
        Aggregate(groupBy=[$0], aggs=[COUNT(*) AS EXPR$1])
          Project(exprs=[$0], fields=[user_id])
            Scan(table=[clicks], fields=[user_id, url, ts])
        ",
    );
    assert_eq!(
        schema_string(per_user.query.schema()),
        "user_id STRING, EXPR$1 BIGINT NOT NULL"
    );

    let Statement::Insert(hist) = &s.statements[5] else {
        panic!("INSERT")
    };
    assert_eq!(hist.sink, "hist");
    assert_tree(
        &explain_logical(&hist.query),
        "
        Aggregate(groupBy=[$0], aggs=[COUNT(*) AS EXPR$1])
          Project(exprs=[$1], fields=[cnt])
            Aggregate(groupBy=[$0], aggs=[COUNT(*) AS cnt])
              Project(exprs=[$0], fields=[user_id])
                Scan(table=[clicks], fields=[user_id, url, ts])
        ",
    );
    assert_eq!(
        schema_string(hist.query.schema()),
        "cnt BIGINT NOT NULL, EXPR$1 BIGINT NOT NULL"
    );
    assert_eq!(
        s.settings().collect::<Vec<_>>(),
        [("table.exec.mini-batch.enabled", "true")]
    );
}

#[test]
fn three_way_join_with_left_join_residual_and_aggregate() {
    let sql = "
INSERT INTO sink3
SELECT /*+ MULTI_JOIN(c, u, o), STATE_TTL('c' = '1h', 'o' = '2d') */
       c.user_id, COUNT(*), SUM(o.amount)
FROM clicks AS c
JOIN users u ON c.user_id = u.user_id AND u.age > 18
LEFT JOIN orders o ON o.user_id = c.user_id AND o.amount > c.ts
WHERE u.name IS NOT NULL
GROUP BY c.user_id;";
    let p = plan(sql);
    assert_tree(
        &explain_logical(&p),
        "
        Aggregate(groupBy=[$0], aggs=[COUNT(*) AS EXPR$1, SUM($1) AS EXPR$2], hints=[MULTI_JOIN(c, u, o), STATE_TTL('c'='1h', 'o'='2d')])
          Project(exprs=[$0, $10], fields=[user_id, amount])
            Filter(condition=[IS NOT NULL($4)])
              Join(joinType=[LeftOuterJoin], leftKeys=[$0], rightKeys=[$1], residual=[>($10, $2)], fields=[user_id, url, ts, user_id, name, age, score, vip, oid, user_id, amount, qty], hints=[MULTI_JOIN(c, u, o), STATE_TTL('c'='1h', 'o'='2d')])
                Join(joinType=[InnerJoin], leftKeys=[$0], rightKeys=[$0], residual=[>($5, 18)], fields=[user_id, url, ts, user_id, name, age, score, vip], hints=[MULTI_JOIN(c, u, o), STATE_TTL('c'='1h', 'o'='2d')])
                  Scan(table=[clicks], alias=[c], fields=[user_id, url, ts])
                  Scan(table=[users], alias=[u], fields=[user_id, name, age, score, vip])
                Scan(table=[orders], alias=[o], fields=[oid, user_id, amount, qty])
        ",
    );
    assert_eq!(
        schema_string(p.schema()),
        "user_id STRING, EXPR$1 BIGINT NOT NULL, EXPR$2 DOUBLE"
    );
    // The LEFT join's right side is nullable; qualifiers are the aliases.
    let LogicalPlan::Aggregate { input, hints, .. } = &p else {
        panic!()
    };
    assert_eq!(
        hints[0],
        Hint {
            name: "MULTI_JOIN".into(),
            args: vec!["c".into(), "u".into(), "o".into()],
            kv: vec![]
        }
    );
    assert_eq!(
        hints[1].kv,
        [("c".into(), "1h".into()), ("o".into(), "2d".into())]
    );
    let LogicalPlan::Project { input, .. } = input.as_ref() else {
        panic!()
    };
    let LogicalPlan::Filter { input: join, .. } = input.as_ref() else {
        panic!()
    };
    let LogicalPlan::Join {
        kind, schema, left, ..
    } = join.as_ref()
    else {
        panic!()
    };
    assert_eq!(*kind, JoinKind::Left);
    let q: Vec<_> = schema
        .fields
        .iter()
        .map(|f| f.qualifier.clone().unwrap())
        .collect();
    assert_eq!(
        q,
        ["c", "c", "c", "u", "u", "u", "u", "u", "o", "o", "o", "o"]
    );
    assert!(!schema.fields[3].nullable, "u.user_id is a primary key");
    assert!(schema.fields[8..].iter().all(|f| f.nullable));
    let LogicalPlan::Join { kind, .. } = left.as_ref() else {
        panic!()
    };
    assert_eq!(*kind, JoinKind::Inner);
}

#[test]
fn join_of_aggregated_subqueries() {
    assert_tree(
        &explain(
            "INSERT INTO sink3 SELECT a.user_id, a.n, b.total
             FROM (SELECT user_id, COUNT(*) AS n FROM clicks GROUP BY user_id) a
             JOIN (SELECT user_id, SUM(amount) AS total FROM orders GROUP BY user_id) AS b
               ON a.user_id = b.user_id;",
        ),
        "
        Project(exprs=[$0, $1, $3], fields=[user_id, n, total])
          Join(joinType=[InnerJoin], leftKeys=[$0], rightKeys=[$0], fields=[user_id, n, user_id, total])
            Aggregate(groupBy=[$0], aggs=[COUNT(*) AS n])
              Project(exprs=[$0], fields=[user_id])
                Scan(table=[clicks], fields=[user_id, url, ts])
            Aggregate(groupBy=[$0], aggs=[SUM($1) AS total])
              Project(exprs=[$1, $2], fields=[user_id, amount])
                Scan(table=[orders], fields=[oid, user_id, amount, qty])
        ",
    );
}

#[test]
fn aggregate_over_join_with_subquery_hints_stay_per_select() {
    let p = plan(
        "INSERT INTO sink2 SELECT /*+ STATE_TTL('t' = '1d') */ t.name, COUNT(DISTINCT t.url)
         FROM (SELECT /*+ MULTI_JOIN(c, u) */ u.name, c.url FROM clicks c JOIN users u ON c.user_id = u.user_id) AS t
         GROUP BY t.name;",
    );
    assert_tree(
        &explain_logical(&p),
        "
        Aggregate(groupBy=[$0], aggs=[COUNT(DISTINCT $1) AS EXPR$1], hints=[STATE_TTL('t'='1d')])
          Project(exprs=[$0, $1], fields=[name, url])
            Project(exprs=[$4, $1], fields=[name, url])
              Join(joinType=[InnerJoin], leftKeys=[$0], rightKeys=[$0], fields=[user_id, url, ts, user_id, name, age, score, vip], hints=[MULTI_JOIN(c, u)])
                Scan(table=[clicks], alias=[c], fields=[user_id, url, ts])
                Scan(table=[users], alias=[u], fields=[user_id, name, age, score, vip])
        ",
    );
}

#[test]
fn aggregates_types_names_filters_and_having() {
    let p = plan(
        "INSERT INTO sink3 SELECT name, SUM(age) / COUNT(*) AS avg_age, AVG(score)
         FROM users WHERE vip GROUP BY name
         HAVING COUNT(*) FILTER (WHERE age > 30) > 1 AND MAX(name) <> 'x';",
    );
    assert_tree(
        &explain_logical(&p),
        "
        Project(exprs=[$0, /($1, $2), $3], fields=[name, avg_age, EXPR$2])
          Filter(condition=[AND(>($4, 1), <>($5, 'x'))])
            Aggregate(groupBy=[$0], aggs=[SUM($1) AS $f1, COUNT(*) AS $f2, AVG($2) AS EXPR$2, COUNT(*) FILTER $3 AS $f4, MAX($0) AS $f5])
              Project(exprs=[$1, $2, $3, >($2, 30)], fields=[name, age, score, $f3])
                Filter(condition=[$4])
                  Scan(table=[users], fields=[user_id, name, age, score, vip])
        ",
    );
    assert_eq!(
        schema_string(p.schema()),
        "name STRING, avg_age BIGINT, EXPR$2 DOUBLE"
    );

    // Output types, distinct flags and names of each function.
    let p = plan(
        "INSERT INTO sink2 SELECT name, 1 FROM (
           SELECT name, COUNT(age) AS c, COUNT(DISTINCT age) AS cd, SUM(age) AS s,
                  SUM(DISTINCT qty) AS sd, SUM(amount) AS sa, MIN(name) AS mi, MAX(age) AS ma,
                  AVG(age) AS ai, AVG(amount) AS ad
           FROM users u JOIN orders o ON u.user_id = o.user_id GROUP BY name);",
    );
    let LogicalPlan::Project { input, .. } = &p else {
        panic!()
    };
    let LogicalPlan::Aggregate { aggs, schema, .. } = input.as_ref() else {
        panic!("{}", explain_logical(&p))
    };
    let got: Vec<_> = aggs
        .iter()
        .map(|a| (a.func, a.distinct, a.name.as_str(), a.output_type))
        .collect();
    use DataType::*;
    assert_eq!(
        got,
        [
            (AggFunc::Count, false, "c", BigInt),
            (AggFunc::Count, true, "cd", BigInt),
            (AggFunc::Sum, false, "s", BigInt),
            (AggFunc::Sum, true, "sd", BigInt),
            (AggFunc::Sum, false, "sa", Double),
            (AggFunc::Min, false, "mi", String),
            (AggFunc::Max, false, "ma", Int),
            (AggFunc::Avg, false, "ai", Int),
            (AggFunc::Avg, false, "ad", Double),
        ]
    );
    assert_eq!(
        schema_string(schema),
        "name STRING, c BIGINT NOT NULL, cd BIGINT NOT NULL, s BIGINT, sd BIGINT, sa DOUBLE, \
         mi STRING, ma INT, ai INT, ad DOUBLE"
    );
}

#[test]
fn shared_arguments_and_filters_in_the_pre_project() {
    assert_tree(
        &explain(
            "INSERT INTO sink3 SELECT url, COUNT(DISTINCT user_id) FILTER (WHERE ts > 10),
                    CAST(COUNT(DISTINCT user_id) FILTER (WHERE ts > 20) AS DOUBLE)
             FROM clicks GROUP BY url;",
        ),
        "
        Project(exprs=[$0, $1, CAST($2 AS DOUBLE)], fields=[url, EXPR$1, EXPR$2])
          Aggregate(groupBy=[$0], aggs=[COUNT(DISTINCT $1) FILTER $2 AS EXPR$1, COUNT(DISTINCT $1) FILTER $3 AS $f2])
            Project(exprs=[$1, $0, >($2, 10), >($2, 20)], fields=[url, user_id, $f2, $f3])
              Scan(table=[clicks], fields=[user_id, url, ts])
        ",
    );
}

#[test]
fn group_by_expressions_and_constants() {
    assert_tree(
        &explain(
            "INSERT INTO sink2 SELECT name || '!', MOD(age, 10) + COUNT(*) FROM users GROUP BY name, MOD(age, 10);",
        ),
        "
        Project(exprs=[||($0, '!'), +($1, $2)], fields=[EXPR$0, EXPR$1])
          Aggregate(groupBy=[$0, $1], aggs=[COUNT(*) AS $f2])
            Project(exprs=[$1, MOD($2, 10)], fields=[name, $f1])
              Scan(table=[users], fields=[user_id, name, age, score, vip])
        ",
    );
    // A global aggregate.
    assert_tree(
        &explain("INSERT INTO sink2 SELECT 'all', COUNT(*) FROM clicks;"),
        "
        Project(exprs=['all', $0], fields=[EXPR$0, EXPR$1])
          Aggregate(groupBy=[], aggs=[COUNT(*) AS EXPR$1])
            Project(exprs=[], fields=[])
              Scan(table=[clicks], fields=[user_id, url, ts])
        ",
    );
}

#[test]
fn scalar_expressions() {
    let p = plan(
        "INSERT INTO sink3 SELECT `name`,
            CASE WHEN age > 10 THEN age WHEN age IS NULL THEN -1 ELSE 0 END,
            CASE age WHEN 1 THEN 1.5 ELSE age END
         FROM users
         WHERE age NOT IN (1, 2) AND age BETWEEN 3 AND 90 AND age NOT BETWEEN 40 AND 50
           AND age % 3 <> 1 AND NOT (name = 'x') AND HASH_CODE(name) > 0
           AND (score IS NOT NULL OR vip = TRUE) AND -age < +age AND CAST(age AS DOUBLE) >= score;",
    );
    assert_tree(
        &explain_logical(&p),
        "
        Project(exprs=[$1, CASE(>($2, 10) => $2, IS NULL($2) => -1, ELSE 0), CASE($2; 1 => 1.5, ELSE CAST($2 AS DOUBLE))], fields=[name, EXPR$1, EXPR$2])
          Filter(condition=[AND(AND(AND(AND(AND(AND(AND(AND(NOT IN($2, 1, 2), AND(>=($2, 3), <=($2, 90))), OR(<($2, 40), >($2, 50))), <>(MOD($2, 3), 1)), NOT(=($1, 'x'))), >(HASH_CODE($1), 0)), OR(IS NOT NULL($3), =($4, TRUE))), <(-($2), $2)), >=(CAST($2 AS DOUBLE), $3))])
            Scan(table=[users], fields=[user_id, name, age, score, vip])
        ",
    );
    assert_eq!(
        schema_string(p.schema()),
        "name STRING, EXPR$1 INT, EXPR$2 DOUBLE"
    );

    // Literals and their types.
    let p = plan("INSERT INTO sink3 SELECT 'it''s', 3000000000, -2.5e1 FROM clicks;");
    let LogicalPlan::Project { exprs, schema, .. } = &p else {
        panic!()
    };
    assert_eq!(
        exprs,
        &[
            Expr::Literal(Value::str("it's")),
            Expr::Literal(Value::Int(3_000_000_000)),
            Expr::Literal(Value::Double(-25.0)),
        ]
    );
    assert_eq!(
        schema_string(schema),
        "EXPR$0 STRING NOT NULL, EXPR$1 BIGINT NOT NULL, EXPR$2 DOUBLE NOT NULL"
    );
}

#[test]
fn star_aliases_and_identity_projections() {
    // `SELECT *` over a table needs no Project.
    assert_tree(
        &explain("INSERT INTO sink2 SELECT * FROM (SELECT user_id, oid FROM orders);"),
        "
        Project(exprs=[$1, $0], fields=[user_id, oid])
          Scan(table=[orders], fields=[oid, user_id, amount, qty])
        ",
    );
    assert_tree(
        &explain("INSERT INTO sink3 SELECT c.*, 1.0 FROM (SELECT url, ts FROM clicks) c;"),
        "
        Project(exprs=[$0, $1, 1.0], fields=[url, ts, EXPR$2])
          Project(exprs=[$1, $2], fields=[url, ts])
            Scan(table=[clicks], fields=[user_id, url, ts])
        ",
    );
    // Duplicate output names are made unique as Flink does.
    let p = plan(
        "INSERT INTO sink2 SELECT x.user_id0, x.oid FROM
           (SELECT c.user_id, o.user_id, o.oid FROM clicks c JOIN orders o ON c.user_id = o.user_id) x
         WHERE x.user_id0 IS NOT NULL AND FALSE IS NOT TRUE;",
    );
    assert_tree(
        &explain_logical(&p),
        "
        Project(exprs=[$1, $2], fields=[user_id0, oid])
          Filter(condition=[AND(IS NOT NULL($1), CASE(FALSE => FALSE, ELSE TRUE))])
            Project(exprs=[$0, $4, $3], fields=[user_id, user_id0, oid])
              Join(joinType=[InnerJoin], leftKeys=[$0], rightKeys=[$1], fields=[user_id, url, ts, oid, user_id, amount, qty])
                Scan(table=[clicks], alias=[c], fields=[user_id, url, ts])
                Scan(table=[orders], alias=[o], fields=[oid, user_id, amount, qty])
        ",
    );
}

#[test]
fn null_takes_the_sink_type() {
    let p = plan(
        "INSERT INTO sink3 SELECT url, NULL, CASE WHEN ts > 0 THEN NULL ELSE 1.5 END FROM clicks;",
    );
    assert_eq!(
        schema_string(p.schema()),
        "url STRING, EXPR$1 BIGINT, EXPR$2 DOUBLE"
    );
}

#[test]
fn int_into_bigint_sink_is_fine() {
    let p = plan("INSERT INTO sink2 SELECT name, age FROM users;");
    assert_eq!(schema_string(p.schema()), "name STRING, age INT");
}

#[test]
fn set_forms_and_explain() {
    let s = script(
        "SET 'parallelism.default' = '4';
         SET table.exec.mini-batch.allow-latency = 5 s;
         SET `state.backend.type` = rocksdb;
         CREATE TABLE t (k INT, v INT) WITH ('connector' = 'filesystem');
         CREATE TABLE s (k INT, c BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'print');
         EXPLAIN CHANGELOG_MODE INSERT INTO s SELECT k, COUNT(*) FROM t GROUP BY k;
         EXPLAIN INSERT INTO s SELECT k, SUM(v) FROM t GROUP BY k;",
    );
    assert_eq!(
        s.settings().collect::<Vec<_>>(),
        [
            ("parallelism.default", "4"),
            ("table.exec.mini-batch.allow-latency", "5 s"),
            ("state.backend.type", "rocksdb"),
        ]
    );
    assert!(matches!(
        s.statements[5],
        Statement::Explain {
            details: ExplainDetails {
                changelog_mode: true,
                ..
            },
            target: ExplainTarget::Insert(_)
        }
    ));
    assert!(matches!(
        s.statements[6],
        Statement::Explain {
            details: ExplainDetails {
                changelog_mode: false,
                ..
            },
            ..
        }
    ));
    assert_eq!(s.inserts().count(), 2);
}

#[test]
fn create_table_forms() {
    let s = script(
        "CREATE TABLE t (id BIGINT PRIMARY KEY NOT ENFORCED, name VARCHAR(20), n INTEGER NOT NULL,
                         d DOUBLE, b BOOLEAN, s VARCHAR) WITH ('connector' = 'blackhole', 'sink.parallelism' = '2');
         CREATE TABLE IF NOT EXISTS t (x INT);",
    );
    assert_eq!(
        s.statements.len(),
        1,
        "IF NOT EXISTS of an existing table is a no-op"
    );
    let t = s.catalog.get("t").unwrap();
    assert_eq!(t.primary_key, Some(vec![0]));
    assert_eq!(
        schema_string(&t.schema),
        "id BIGINT NOT NULL, name STRING, n INT NOT NULL, d DOUBLE, b BOOLEAN, s STRING"
    );
    assert_eq!(t.options.len(), 2);
    assert_eq!(t.options["sink.parallelism"], "2");
}

#[test]
fn bind_query_api() {
    let s = script(DDL);
    let catalog: &Catalog = &s.catalog;
    let p = bind_query(
        catalog,
        "SELECT o.user_id, SUM(qty) AS q FROM orders o GROUP BY o.user_id",
    )
    .unwrap();
    assert_tree(
        &explain_logical(&p),
        "
        Aggregate(groupBy=[$0], aggs=[SUM($1) AS q])
          Project(exprs=[$1, $3], fields=[user_id, qty])
            Scan(table=[orders], alias=[o], fields=[oid, user_id, amount, qty])
        ",
    );
    let e = bind_query(catalog, "SELECT nope FROM orders").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Validation);
    assert_eq!(at(&e), (1, 8));
}

// ---------------------------------------------------------------- errors

#[test]
fn error_unknown_table() {
    let e = err("INSERT INTO sink2 SELECT user_id, ts FROM clickz;");
    assert_eq!(e.kind, ErrorKind::Validation);
    assert_eq!(
        e.message,
        "Object 'clickz' not found: no table of that name; known tables: clicks, users, orders, sink2, sink3. Did you mean 'clicks'?"
    );
    assert_eq!(at(&e), (L, 43));
    assert!(e
        .to_string()
        .starts_with("validation error at line 8, column 43: Object 'clickz' not found"));
}

#[test]
fn error_unknown_column_suggests_nearest() {
    let e = err("INSERT INTO sink2 SELECT usr_id, ts FROM clicks;");
    assert_eq!(e.kind, ErrorKind::Validation);
    assert_eq!(
        e.message,
        "Column 'usr_id' not found in any table. Did you mean 'user_id'? Available columns: clicks.user_id, clicks.url, clicks.ts"
    );
    assert_eq!(at(&e), (L, 26));

    let e = err("INSERT INTO sink2 SELECT c.usr, ts FROM clicks c;");
    assert_eq!(
        e.message,
        "Column 'usr' not found in table 'c'. Did you mean 'user_id'? Available columns: user_id, url, ts"
    );
    let e = err("INSERT INTO sink2 SELECT x.url, ts FROM clicks c;");
    assert_eq!(e.message, "Table 'x' not found in FROM; available: c.");
}

#[test]
fn error_ambiguous_column() {
    let e = err(
        "INSERT INTO sink2 SELECT user_id, ts FROM clicks c JOIN users u ON c.user_id = u.user_id;",
    );
    assert_eq!(e.kind, ErrorKind::Validation);
    assert_eq!(
        e.message,
        "Column 'user_id' is ambiguous: it is a column of c and u; qualify it with a table name or alias, e.g. c.user_id"
    );
    assert_eq!(at(&e), (L, 26));
}

#[test]
fn error_unsupported_constructs() {
    let cases = [
        (
            "INSERT INTO sink2 SELECT c.url, ts FROM clicks c CROSS JOIN users u;",
            "CROSS JOIN is not supported (the lab runs INNER, LEFT, RIGHT and FULL OUTER joins)",
        ),
        (
            "INSERT INTO sink2 SELECT c.url, ts FROM clicks c FULL OUTER JOIN users u ON c.ts > u.age;",
            "join without an equality condition: ON must equate a column of each side, e.g. a.k = b.k (found 'c.ts > u.age')",
        ),
        (
            "INSERT INTO sink2 SELECT c.url, ts FROM clicks c JOIN users u ON c.ts > u.age;",
            "join without an equality condition: ON must equate a column of each side, e.g. a.k = b.k (found 'c.ts > u.age')",
        ),
        (
            "INSERT INTO sink2 SELECT c.url, ts FROM clicks c JOIN users u ON c.ts = u.score;",
            "join keys c.ts (BIGINT) and u.score (DOUBLE) have different types; the lab joins on columns of the same type",
        ),
        ("INSERT INTO sink2 SELECT url, ts FROM clicks ORDER BY ts;", "ORDER BY is not supported"),
        ("INSERT INTO sink2 SELECT url, ts FROM clicks LIMIT 3;", "LIMIT/OFFSET is not supported"),
        (
            "INSERT INTO sink2 SELECT url, ts FROM clicks EXCEPT SELECT url, ts FROM clicks;",
            "EXCEPT is not supported",
        ),
        (
            "INSERT INTO sink2 SELECT DISTINCT url, ts FROM clicks;",
            "SELECT DISTINCT is not supported; write GROUP BY instead",
        ),
        (
            "INSERT INTO sink2 SELECT url, ts FROM clicks WHERE url IN (SELECT name FROM users);",
            "subqueries in expressions (IN (SELECT ...)) are not supported",
        ),
        (
            "INSERT INTO sink2 SELECT url, ROW_NUMBER() OVER (PARTITION BY url ORDER BY ts) FROM clicks;",
            "window functions (OVER) are not supported: 'ROW_NUMBER() OVER (PARTITION BY url ORDER BY ts)'",
        ),
        (
            "INSERT INTO sink2 SELECT url, COUNT(*) OVER (PARTITION BY url) FROM clicks;",
            "window functions (OVER) are not supported: 'COUNT(*) OVER (PARTITION BY url)'",
        ),
        (
            "CREATE TABLE w (ts BIGINT, t6 TIMESTAMP(6));",
            "column type TIMESTAMP(6) of 't6' is not supported (the lab supports INT, BIGINT, STRING (or VARCHAR), DOUBLE, BOOLEAN, TIMESTAMP(3), TIMESTAMP_LTZ(3))",
        ),
        (
            "INSERT INTO sink2 SELECT url, INITCAP(url) FROM clicks;",
            "function INITCAP is not supported (the lab supports COUNT, SUM, MIN, MAX, AVG, MOD, HASH_CODE, TO_TIMESTAMP_LTZ, CAST(x AS DOUBLE), LOWER, UPPER, REGEXP_EXTRACT, SPLIT_INDEX and DATE_FORMAT)",
        ),
        (
            "INSERT INTO sink2 SELECT DATE_FORMAT(TO_TIMESTAMP_LTZ(ts, 3), 'EEE, yyyy'), ts FROM clicks;",
            "DATE_FORMAT: pattern 'EEE' in 'EEE, yyyy' is not supported (DATE_FORMAT supports the letters y M d H m s S, M d H m s at most twice, and quoted text)",
        ),
        (
            "INSERT INTO sink2 SELECT DATE_FORMAT(TO_TIMESTAMP_LTZ(ts, 3), url), ts FROM clicks;",
            "DATE_FORMAT's pattern must be a string literal: 'url'",
        ),
        (
            "INSERT INTO sink2 SELECT url, CAST(ts AS STRING) FROM clicks;",
            "CAST from BIGINT to STRING is not supported (the lab casts numbers to DOUBLE and INT to BIGINT): 'CAST(ts AS STRING)'",
        ),
        (
            "INSERT INTO sink2 SELECT url, ts FROM clicks c, users u WHERE c.ts > u.age;",
            "a comma-separated FROM list needs a WHERE equality between a column of 'users u' and one of the tables before it (an implicit cross join is not supported): write FROM a, b WHERE a.k = b.k",
        ),
        (
            "INSERT INTO sink2 SELECT url, ts FROM clicks, users;",
            "a comma-separated FROM list needs a WHERE equality between a column of 'users' and one of the tables before it (an implicit cross join is not supported): write FROM a, b WHERE a.k = b.k",
        ),
        (
            "DROP TABLE clicks;",
            "DROP TABLE is not supported (the lab runs CREATE TABLE, SET, INSERT INTO, statement sets, EXPLAIN, COMPILE PLAN and EXECUTE PLAN)",
        ),
        (
            "CREATE VIEW v AS SELECT * FROM clicks;",
            "CREATE VIEW is not supported (the lab runs CREATE TABLE, SET, INSERT INTO, statement sets, EXPLAIN, COMPILE PLAN and EXECUTE PLAN)",
        ),
        (
            "INSERT /*+ MULTI_JOIN(c) */ INTO sink2 SELECT url, ts FROM clicks c;",
            "a hint after INSERT (write hints right after SELECT) is not supported",
        ),
        (
            "SELECT * FROM clicks;",
            "a bare SELECT statement is not supported (write INSERT INTO <sink> SELECT ..., or EXPLAIN SELECT ...)",
        ),
        (
            "CREATE TABLE d (x DATE);",
            "column type DATE of 'x' is not supported (the lab supports INT, BIGINT, STRING (or VARCHAR), DOUBLE, BOOLEAN, TIMESTAMP(3), TIMESTAMP_LTZ(3))",
        ),
        (
            "INSERT INTO sink2 SELECT url, ts FROM clicks WHERE url LIKE 'a%';",
            "LIKE is not supported: 'url LIKE 'a%''",
        ),
        (
            "INSERT INTO sink2 (a, b) SELECT url, ts FROM clicks;",
            "INSERT with a column list (select the sink's columns in order) is not supported",
        ),
        (
            "INSERT INTO sink2 WITH x AS (SELECT url, ts FROM clicks) SELECT * FROM x;",
            "WITH (common table expressions) is not supported",
        ),
    ];
    for (sql, msg) in cases {
        let e = err(sql);
        assert_eq!(e.kind, ErrorKind::Unsupported, "{sql}: {e}");
        assert_eq!(e.message, msg, "{sql}");
        assert!(e.location.is_some(), "{sql}: no location");
        assert!(
            e.to_string()
                .starts_with("unsupported SQL at line 8, column "),
            "{e}"
        );
    }
    // Join errors point at the joined table.
    assert_eq!(at(&err(cases[0].0)), (L, 61));
}

#[test]
fn error_bad_types() {
    let cases = [
        (
            "INSERT INTO sink2 SELECT url, ts + url FROM clicks;",
            "Cannot apply '+' to arguments of type BIGINT and STRING: 'ts + url' (arithmetic needs numeric operands)",
            31,
        ),
        (
            "INSERT INTO sink2 SELECT url, ts FROM clicks WHERE ts;",
            "WHERE condition must be BOOLEAN, found BIGINT: 'ts'",
            52,
        ),
        (
            "INSERT INTO sink2 SELECT url, ts FROM clicks WHERE url = 1;",
            "Cannot compare STRING with INT: 'url = 1'",
            52,
        ),
        (
            "INSERT INTO sink2 SELECT url, SUM(url) FROM clicks GROUP BY url;",
            "Cannot apply 'SUM' to arguments of type STRING: 'url' is not numeric",
            35,
        ),
        (
            "INSERT INTO sink2 SELECT name, AVG(vip) FROM users GROUP BY name;",
            "Cannot apply 'AVG' to arguments of type BOOLEAN: 'vip' is not numeric",
            36,
        ),
        (
            "INSERT INTO sink2 SELECT url, ts FROM clicks WHERE ts > 0 AND url;",
            "AND expects BOOLEAN operands, found STRING: 'url'",
            63,
        ),
        (
            "INSERT INTO sink2 SELECT url, CASE WHEN ts > 0 THEN url ELSE ts END FROM clicks;",
            "CASE branches have incompatible types STRING and BIGINT: 'CASE WHEN ts > 0 THEN url ELSE ts END'",
            31,
        ),
        (
            "INSERT INTO sink2 SELECT url, ts FROM clicks GROUP BY url;",
            "Expression 'ts' is not being grouped (add it to GROUP BY or aggregate it, e.g. MAX(ts))",
            31,
        ),
        (
            "INSERT INTO sink2 SELECT url, ts FROM clicks WHERE COUNT(*) > 1;",
            "Aggregate function COUNT is not allowed in WHERE",
            52,
        ),
        (
            "INSERT INTO sink2 SELECT url, SUM(COUNT(*)) FROM clicks GROUP BY url;",
            "Aggregate function COUNT is not allowed in the argument of another aggregate function",
            35,
        ),
        (
            "INSERT INTO sink2 SELECT SPLIT_INDEX(url, '/'), ts FROM clicks;",
            "SPLIT_INDEX expects 3 arguments, found 2",
            26,
        ),
        (
            "INSERT INTO sink2 SELECT REGEXP_EXTRACT(url), ts FROM clicks;",
            "REGEXP_EXTRACT expects 2 or 3 arguments, found 1",
            26,
        ),
        (
            "INSERT INTO sink2 SELECT REGEXP_EXTRACT(url, 'a(b)', url), ts FROM clicks;",
            "REGEXP_EXTRACT takes an integer here, found STRING: 'url'",
            54,
        ),
        (
            "INSERT INTO sink2 SELECT DATE_FORMAT(ts, 'yyyy'), ts FROM clicks;",
            "DATE_FORMAT takes a TIMESTAMP here, found BIGINT: 'ts'",
            38,
        ),
        (
            "INSERT INTO sink2 SELECT LOWER(ts), ts FROM clicks;",
            "LOWER takes STRING here, found BIGINT: 'ts'",
            32,
        ),
    ];
    for (sql, msg, col) in cases {
        let e = err(sql);
        assert_eq!(e.kind, ErrorKind::Validation, "{sql}: {e}");
        assert_eq!(e.message, msg, "{sql}");
        assert_eq!(at(&e), (L, col), "{sql}");
    }
}

#[test]
fn error_unknown_hint() {
    let e = err("INSERT INTO sink2 SELECT /*+ BROADCAST(c) */ url, ts FROM clicks c;");
    assert_eq!(e.kind, ErrorKind::Validation);
    assert_eq!(
        e.message,
        "Unknown hint 'BROADCAST'; known hints are MULTI_JOIN, STATE_TTL."
    );
    assert_eq!(at(&e), (L, 19));
    let e = err("INSERT INTO sink2 SELECT /*+ MULTIJOIN(c) */ url, ts FROM clicks c;");
    assert_eq!(
        e.message,
        "Unknown hint 'MULTIJOIN'; known hints are MULTI_JOIN, STATE_TTL. Did you mean 'MULTI_JOIN'?"
    );
    let e = err("INSERT INTO sink2 SELECT /*+ STATE_TTL(c) */ url, ts FROM clicks c;");
    assert_eq!(
        e.message,
        "Hint STATE_TTL expects table = TTL pairs, e.g. /*+ STATE_TTL('a' = '1h', 'b' = '2d') */"
    );
    let e = err("INSERT INTO sink2 SELECT /*+ MULTI_JOIN(c */ url, ts FROM clicks c;");
    assert_eq!(e.kind, ErrorKind::Parse);
    assert_eq!(e.message, "malformed hint /*+ MULTI_JOIN(c */: missing ')'");
}

#[test]
fn error_hint_names_unknown_table() {
    let e = err(
        "INSERT INTO sink2 SELECT /*+ MULTI_JOIN(c, x) */ c.url, ts FROM clicks c JOIN users u ON c.user_id = u.user_id;",
    );
    assert_eq!(e.kind, ErrorKind::Validation);
    assert_eq!(
        e.message,
        "Hint MULTI_JOIN names 'x', which is not a table of this SELECT; available: c, u."
    );
    assert_eq!(at(&e), (L, 19));
    // The aliased name, not the table name, is what a hint refers to.
    let e =
        err("INSERT INTO sink2 SELECT /*+ STATE_TTL('clicks' = '1h') */ url, ts FROM clicks c;");
    assert_eq!(
        e.message,
        "Hint STATE_TTL names 'clicks', which is not a table of this SELECT; available: c. Did you mean 'c'?"
    );
}

#[test]
fn error_mismatched_sink_columns() {
    let e = err("INSERT INTO sink2 SELECT url, ts, ts FROM clicks;");
    assert_eq!(e.kind, ErrorKind::Validation);
    assert_eq!(
        e.message,
        "Column count of the query and sink 'sink2' do not match: the query produces 3 columns (url, ts, ts0), the sink has 2 (a, b)"
    );
    let e = err("INSERT INTO sink2 SELECT url, url FROM clicks;");
    assert_eq!(
        e.message,
        "Incompatible types for sink column 'b' (position 2) of 'sink2': the query produces STRING ('url0'), the sink expects BIGINT"
    );
    assert_eq!(at(&e), (L, 31));
    let e = err("INSERT INTO sink3 SELECT url, ts, ts FROM clicks;");
    assert_eq!(
        e.message,
        "Incompatible types for sink column 'c' (position 3) of 'sink3': the query produces BIGINT ('ts0'), the sink expects DOUBLE"
    );
    let e = err("INSERT INTO sink9 SELECT url, ts FROM clicks;");
    assert_eq!(
        e.message,
        "Sink table 'sink9' not found; known tables: clicks, users, orders, sink2, sink3. Did you mean 'sink2'?"
    );
    assert_eq!(at(&e), (L, 13));
}

#[test]
fn error_parse_with_line() {
    let e = parse_script(
        "CREATE TABLE t (k INT) WITH ('connector' = 'print');\n\
         INSERT INTO t\n\
         SELECT k FROM t WHERE;",
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Parse);
    assert_eq!(e.message, "Expected: an expression, found: EOF");
    assert_eq!(at(&e), (3, 22));

    let e = parse_script(
        "CREATE TABLE t (k INT) WITH ('connector' = 'print');\nINSERT INTO t SELEC k FROM t;",
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Parse);
    assert_eq!(
        e.message,
        "Expected: SELECT, VALUES, or a subquery in the query body, found: SELEC"
    );
    assert_eq!(at(&e), (2, 15));
    assert_eq!(
        e.to_string(),
        "SQL parse error at line 2, column 15: Expected: SELECT, VALUES, or a subquery in the query body, found: SELEC"
    );

    let e = parse_script("SET 'a' = 'b';\nSELECT 'unterminated FROM t;").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Parse);
    assert_eq!(at(&e).0, 2);
    assert!(e.message.contains("Unterminated string literal"), "{e}");
}

#[test]
fn error_create_table() {
    let cases = [
        ("CREATE TABLE clicks (a INT);", "Table 'clicks' already exists"),
        ("CREATE TABLE t2 (a INT, A BIGINT);", "Duplicate column 'A' in table 't2'"),
        (
            "CREATE TABLE t2 (a INT, PRIMARY KEY (b) NOT ENFORCED);",
            "PRIMARY KEY column 'b' is not a column of table 't2'.",
        ),
        (
            "CREATE TABLE t2 (a INT, PRIMARY KEY (a));",
            "PRIMARY KEY must be declared NOT ENFORCED: Flink does not own the data, so it does not check the constraint (write PRIMARY KEY (...) NOT ENFORCED)",
        ),
        (
            "CREATE TABLE t2 (a INT) WITH ('connector' = 'x', 'connector' = 'y');",
            "table option 'connector' is given twice (options: connector)",
        ),
    ];
    for (sql, msg) in cases {
        let e = err(sql);
        assert_eq!(e.kind, ErrorKind::Validation, "{sql}: {e}");
        assert_eq!(e.message, msg, "{sql}");
        assert_eq!(e.location.as_ref().map(|l| l.line), Some(L), "{sql}");
    }
}

#[test]
fn statements_see_only_earlier_tables() {
    let e = parse_script(
        "INSERT INTO s SELECT k FROM t;\nCREATE TABLE t (k INT);\nCREATE TABLE s (k INT);",
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Validation);
    assert!(e.message.starts_with("Sink table 's' not found"), "{e}");
    assert_eq!(at(&e), (1, 13));
}

#[test]
fn never_panics_on_prefixes_and_garbage() {
    let full = format!(
        "{DDL}
SET 'table.exec.mini-batch.enabled' = 'true';
EXPLAIN CHANGELOG_MODE INSERT INTO sink3 SELECT /*+ MULTI_JOIN(c, u), STATE_TTL('c' = '1h') */
  c.user_id, COUNT(DISTINCT c.url) FILTER (WHERE c.ts > 5), AVG(CAST(u.age AS DOUBLE))
FROM clicks c JOIN users u ON c.user_id = u.user_id AND c.ts BETWEEN 1 AND 9
LEFT JOIN (SELECT user_id, SUM(amount) AS s FROM orders GROUP BY user_id) o ON o.user_id = c.user_id
WHERE u.name IN ('a', 'b') OR CASE u.age WHEN 1 THEN TRUE ELSE u.vip END
GROUP BY c.user_id HAVING MAX(c.ts) > -1;"
    );
    assert!(
        parse_script(&full).is_ok(),
        "{:?}",
        parse_script(&full).err()
    );
    let chars: Vec<char> = full.chars().collect();
    for n in 0..chars.len() {
        let prefix: String = chars[..n].iter().collect();
        let _ = parse_script(&prefix);
        // And with one character dropped.
        let mut dropped = chars.clone();
        dropped.remove(n);
        let _ = parse_script(&dropped.iter().collect::<String>());
    }
    let garbage = [
        "",
        ";;;",
        "/*+ MULTI_JOIN(a) */",
        "SET",
        "SET =",
        "SET 'a'",
        "SET 'a' =",
        "EXPLAIN",
        "EXPLAIN CHANGELOG_MODE",
        "EXPLAIN SELECT 1",
        "INSERT INTO",
        "SELECT",
        "CREATE TABLE",
        "CREATE TABLE t ()",
        "CREATE TABLE t (a INT) WITH ()",
        "\u{0}\u{1}'\"`",
        "SELECT ((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1",
        "INSERT INTO t SELECT /*+ */ 1",
        "🙂 SELECT",
        "CREATE TABLE t (a INT); INSERT INTO t SELECT -9223372036854775808 FROM t; INSERT INTO t SELECT 99999999999999999999 FROM t",
    ];
    for g in garbage {
        let _ = parse_script(g);
    }
    let deep = format!(
        "{DDL}INSERT INTO sink2 SELECT url, {} FROM clicks;",
        vec!["ts"; 5000].join(" + ")
    );
    let e = parse_script(&deep).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert!(
        e.message
            .starts_with("expression nested too deeply: more than 200 levels"),
        "{e}"
    );
    let ok = format!(
        "{DDL}INSERT INTO sink2 SELECT url, {} FROM clicks;",
        vec!["ts"; 190].join(" + ")
    );
    assert!(parse_script(&ok).is_ok());
}
