//! The batch oracle on hand-computed examples.

use operators::changelog::Change;
use operators::expr::{BinOp, Expr};
use operators::value::{DataType, Row, Value};
use optimizer::logical::{AggCall, AggFunc, Field, JoinKind, LogicalPlan, Schema};
use optimizer::oracle::{evaluate, evaluate_tables, final_table, sorted, upsert_table};
use std::collections::HashMap;

const N: Value = Value::Null;

fn i(v: i64) -> Value {
    Value::Int(v)
}
fn d(v: f64) -> Value {
    Value::Double(v)
}
fn b(v: bool) -> Value {
    Value::Bool(v)
}
fn s(v: &str) -> Value {
    Value::str(v)
}

fn schema(cols: &[(&str, DataType)]) -> Schema {
    Schema {
        fields: cols
            .iter()
            .map(|(name, t)| Field {
                name: name.to_string(),
                qualifier: None,
                data_type: *t,
                nullable: true,
            })
            .collect(),
    }
}

fn scan(table: &str, cols: &[(&str, DataType)]) -> LogicalPlan {
    LogicalPlan::Scan {
        table: table.to_string(),
        alias: table.to_string(),
        schema: schema(cols),
    }
}

fn join(
    left: LogicalPlan,
    right: LogicalPlan,
    kind: JoinKind,
    keys: &[(usize, usize)],
    residual: Option<Expr>,
) -> LogicalPlan {
    let mut fields = left.schema().fields.clone();
    fields.extend(right.schema().fields.clone());
    LogicalPlan::Join {
        left: Box::new(left),
        right: Box::new(right),
        kind,
        left_keys: keys.iter().map(|k| k.0).collect(),
        right_keys: keys.iter().map(|k| k.1).collect(),
        residual,
        schema: Schema { fields },
        hints: vec![],
        lookup: None,
    }
}

fn call(
    func: AggFunc,
    arg: Option<usize>,
    distinct: bool,
    filter: Option<usize>,
    t: DataType,
) -> AggCall {
    AggCall {
        func,
        arg,
        distinct,
        filter,
        name: format!("{}_{arg:?}", func.name()),
        output_type: t,
    }
}

fn agg(input: LogicalPlan, group_by: &[usize], aggs: Vec<AggCall>) -> LogicalPlan {
    let mut fields: Vec<Field> = group_by
        .iter()
        .map(|&g| input.schema().fields[g].clone())
        .collect();
    fields.extend(aggs.iter().map(|a| Field {
        name: a.name.clone(),
        qualifier: None,
        data_type: a.output_type,
        nullable: true,
    }));
    LogicalPlan::Aggregate {
        input: Box::new(input),
        group_by: group_by.to_vec(),
        aggs,
        schema: Schema { fields },
        hints: vec![],
    }
}

fn run(plan: &LogicalPlan, tables: &[(&str, Vec<Row>)]) -> Vec<Row> {
    let map: HashMap<String, Vec<Row>> = tables
        .iter()
        .map(|(n, rows)| (n.to_string(), rows.clone()))
        .collect();
    sorted(evaluate_tables(plan, &map))
}

#[test]
fn filter_keeps_only_true() {
    let plan = LogicalPlan::Filter {
        input: Box::new(scan("t", &[("a", DataType::Int)])),
        predicate: Expr::bin(BinOp::Gt, Expr::col(0), Expr::lit(i(1))),
    };
    let rows = vec![vec![i(0)], vec![i(2)], vec![N], vec![i(3)], vec![i(2)]];
    assert_eq!(
        run(&plan, &[("t", rows)]),
        vec![vec![i(2)], vec![i(2)], vec![i(3)]]
    );
}

#[test]
fn project_evaluates_expressions() {
    let plan = LogicalPlan::Project {
        input: Box::new(scan("t", &[("a", DataType::Int), ("b", DataType::Int)])),
        exprs: vec![
            Expr::col(1),
            Expr::bin(BinOp::Add, Expr::col(0), Expr::col(1)),
            Expr::IsNull {
                expr: Box::new(Expr::col(0)),
                negated: false,
            },
        ],
        schema: schema(&[
            ("b", DataType::Int),
            ("s", DataType::Int),
            ("n", DataType::Boolean),
        ]),
    };
    let rows = vec![vec![i(1), i(2)], vec![N, i(5)]];
    assert_eq!(
        run(&plan, &[("t", rows)]),
        vec![vec![i(2), i(3), b(false)], vec![i(5), N, b(true)]]
    );
}

#[test]
fn scan_reads_the_table_not_the_alias() {
    let plan = LogicalPlan::Scan {
        table: "orders".into(),
        alias: "o".into(),
        schema: schema(&[("a", DataType::Int)]),
    };
    let tables = |name: &str| {
        if name == "orders" {
            vec![vec![i(1)]]
        } else {
            vec![]
        }
    };
    assert_eq!(evaluate(&plan, &tables), vec![vec![i(1)]]);
    // A table missing from the map is empty.
    assert!(evaluate_tables(&plan, &HashMap::new()).is_empty());
}

fn users() -> Vec<Row> {
    vec![
        vec![i(1), s("ann")],
        vec![i(2), s("bob")],
        vec![N, s("nobody")],
        vec![i(4), s("dan")],
    ]
}

fn orders() -> Vec<Row> {
    vec![
        vec![i(1), i(10)],
        vec![i(1), i(20)],
        vec![i(2), i(5)],
        vec![N, i(7)],
        vec![i(3), i(8)],
    ]
}

const USERS: &[(&str, DataType)] = &[("id", DataType::Int), ("name", DataType::String)];
const ORDERS: &[(&str, DataType)] = &[("uid", DataType::Int), ("amount", DataType::Int)];

#[test]
fn inner_join_null_keys_never_match() {
    let plan = join(
        scan("u", USERS),
        scan("o", ORDERS),
        JoinKind::Inner,
        &[(0, 0)],
        None,
    );
    assert_eq!(
        run(&plan, &[("u", users()), ("o", orders())]),
        vec![
            vec![i(1), s("ann"), i(1), i(10)],
            vec![i(1), s("ann"), i(1), i(20)],
            vec![i(2), s("bob"), i(2), i(5)],
        ]
    );
}

#[test]
fn inner_join_with_residual_and_two_keys() {
    // Residual over the concatenated row: amount > 9.
    let residual = Expr::bin(BinOp::Gt, Expr::col(3), Expr::lit(i(9)));
    let plan = join(
        scan("u", USERS),
        scan("o", ORDERS),
        JoinKind::Inner,
        &[(0, 0)],
        Some(residual),
    );
    assert_eq!(
        run(&plan, &[("u", users()), ("o", orders())]),
        vec![
            vec![i(1), s("ann"), i(1), i(10)],
            vec![i(1), s("ann"), i(1), i(20)]
        ]
    );
    // A residual that is NULL rejects the pair.
    let null_residual = Expr::bin(BinOp::Gt, Expr::col(3), Expr::lit(N));
    let plan = join(
        scan("u", USERS),
        scan("o", ORDERS),
        JoinKind::Inner,
        &[(0, 0)],
        Some(null_residual),
    );
    assert!(run(&plan, &[("u", users()), ("o", orders())]).is_empty());

    // Two keys: a NULL in either keeps the pair out, even against NULL.
    let t = &[("a", DataType::Int), ("b", DataType::Int)];
    let left = vec![
        vec![i(1), i(1)],
        vec![i(1), N],
        vec![N, N],
        vec![i(1), i(2)],
    ];
    let right = vec![
        vec![i(1), i(1)],
        vec![i(1), N],
        vec![N, N],
        vec![i(1), i(1)],
    ];
    let plan = join(
        scan("l", t),
        scan("r", t),
        JoinKind::Inner,
        &[(0, 0), (1, 1)],
        None,
    );
    assert_eq!(
        run(&plan, &[("l", left), ("r", right)]),
        vec![vec![i(1), i(1), i(1), i(1)], vec![i(1), i(1), i(1), i(1)]]
    );
}

#[test]
fn left_join_pads_unmatched_rows_with_nulls() {
    let residual = Expr::bin(BinOp::Gt, Expr::col(3), Expr::lit(i(6)));
    let plan = join(
        scan("u", USERS),
        scan("o", ORDERS),
        JoinKind::Left,
        &[(0, 0)],
        Some(residual),
    );
    assert_eq!(
        run(&plan, &[("u", users()), ("o", orders())]),
        vec![
            // NULL key: no match, padded.
            vec![N, s("nobody"), N, N],
            vec![i(1), s("ann"), i(1), i(10)],
            vec![i(1), s("ann"), i(1), i(20)],
            // bob's only order fails the residual: padded.
            vec![i(2), s("bob"), N, N],
            // dan has no orders.
            vec![i(4), s("dan"), N, N],
        ]
    );
    // An empty right side pads every left row to the right schema's width.
    let plan = join(
        scan("u", USERS),
        scan("o", ORDERS),
        JoinKind::Left,
        &[(0, 0)],
        None,
    );
    assert_eq!(
        run(&plan, &[("u", vec![vec![i(9), s("x")]])]),
        vec![vec![i(9), s("x"), N, N]]
    );
}

/// Columns: g, x INT, y DOUBLE, f BOOLEAN (filter).
const FACTS: &[(&str, DataType)] = &[
    ("g", DataType::String),
    ("x", DataType::Int),
    ("y", DataType::Double),
    ("f", DataType::Boolean),
];

fn facts() -> Vec<Row> {
    vec![
        vec![s("a"), i(1), d(1.5), b(true)],
        vec![s("a"), i(2), N, b(false)],
        vec![s("a"), N, d(2.5), b(true)],
        vec![s("a"), i(2), d(0.5), N],
        vec![s("a"), i(4), d(1.5), b(true)],
        vec![s("b"), i(-7), d(-1.0), b(true)],
        vec![s("b"), i(2), N, b(true)],
        vec![N, N, N, N],
        vec![N, i(5), d(5.0), b(false)],
    ]
}

#[test]
fn every_function_with_nulls() {
    use AggFunc::*;
    use DataType::{BigInt, Double, Int};
    let plan = agg(
        scan("t", FACTS),
        &[0],
        vec![
            call(CountStar, None, false, None, BigInt),
            call(Count, Some(1), false, None, BigInt),
            call(Sum, Some(1), false, None, Int),
            call(Min, Some(1), false, None, Int),
            call(Max, Some(1), false, None, Int),
            call(Avg, Some(1), false, None, Int),
            call(Sum, Some(2), false, None, Double),
            call(Min, Some(2), false, None, Double),
            call(Max, Some(2), false, None, Double),
            call(Avg, Some(2), false, None, Double),
        ],
    );
    assert_eq!(
        run(&plan, &[("t", facts())]),
        vec![
            // NULL is a group of its own: x = {5}, y = {5.0}.
            vec![
                N,
                i(2),
                i(1),
                i(5),
                i(5),
                i(5),
                i(5),
                d(5.0),
                d(5.0),
                d(5.0),
                d(5.0)
            ],
            // a: x = {1, 2, 2, 4}, y = {1.5, 2.5, 0.5, 1.5}.
            vec![
                s("a"),
                i(5),
                i(4),
                i(9),
                i(1),
                i(4),
                i(2), // 9 / 4 truncated
                d(6.0),
                d(0.5),
                d(2.5),
                d(1.5),
            ],
            // b: x = {-7, 2}: AVG = -5 / 2 = -2 (toward zero, not -3).
            vec![
                s("b"),
                i(2),
                i(2),
                i(-5),
                i(-7),
                i(2),
                i(-2),
                d(-1.0),
                d(-1.0),
                d(-1.0),
                d(-1.0),
            ],
        ]
    );
}

#[test]
fn all_null_arguments_give_null_and_zero_count() {
    use AggFunc::*;
    let rows = vec![vec![s("k"), N, N, b(true)], vec![s("k"), N, N, b(true)]];
    let plan = agg(
        scan("t", FACTS),
        &[0],
        vec![
            call(CountStar, None, false, None, DataType::BigInt),
            call(Count, Some(1), false, None, DataType::BigInt),
            call(Count, Some(1), true, None, DataType::BigInt),
            call(Sum, Some(1), false, None, DataType::Int),
            call(Min, Some(2), false, None, DataType::Double),
            call(Max, Some(1), false, None, DataType::Int),
            call(Avg, Some(2), false, None, DataType::Double),
        ],
    );
    assert_eq!(
        run(&plan, &[("t", rows)]),
        vec![vec![s("k"), i(2), i(0), i(0), N, N, N, N]]
    );
}

#[test]
fn distinct_applies_to_non_null_values_of_its_call() {
    use AggFunc::*;
    let plan = agg(
        scan("t", FACTS),
        &[0],
        vec![
            call(Count, Some(1), true, None, DataType::BigInt),
            call(Sum, Some(1), true, None, DataType::Int),
            call(Avg, Some(1), true, None, DataType::Int),
            call(Sum, Some(1), false, None, DataType::Int),
            call(Count, Some(2), true, None, DataType::BigInt),
            call(Avg, Some(2), true, None, DataType::Double),
            call(Max, Some(1), true, None, DataType::Int),
        ],
    );
    let out = run(&plan, &[("t", facts())]);
    // a: distinct x = {1, 2, 4}; distinct y = {1.5, 2.5, 0.5}.
    assert_eq!(
        out[1],
        vec![s("a"), i(3), i(7), i(2), i(9), i(3), d(1.5), i(4)]
    );
    // NULL group: x = {5} (the NULL is not a distinct value).
    assert_eq!(out[0], vec![N, i(1), i(5), i(5), i(5), i(1), d(5.0), i(5)]);
}

#[test]
fn filter_column_admits_only_true_rows() {
    use AggFunc::*;
    let plan = agg(
        scan("t", FACTS),
        &[0],
        vec![
            call(CountStar, None, false, Some(3), DataType::BigInt),
            call(Count, Some(1), false, Some(3), DataType::BigInt),
            call(Sum, Some(1), false, Some(3), DataType::Int),
            call(Count, Some(1), true, Some(3), DataType::BigInt),
            call(CountStar, None, false, None, DataType::BigInt),
            call(Max, Some(2), false, Some(3), DataType::Double),
        ],
    );
    assert_eq!(
        run(&plan, &[("t", facts())]),
        vec![
            // NULL group: f is NULL and FALSE: nothing passes.
            vec![N, i(0), i(0), N, i(0), i(2), N],
            // a: f TRUE on x = 1, NULL, 4 (FALSE and NULL filters rejected).
            vec![s("a"), i(3), i(2), i(5), i(2), i(5), d(2.5)],
            vec![s("b"), i(2), i(2), i(-5), i(2), i(2), d(-1.0)],
        ]
    );
}

#[test]
fn sum_and_avg_types() {
    use AggFunc::*;
    let t = &[("x", DataType::Int), ("y", DataType::Double)];
    let rows = vec![vec![i(1), d(0.25)], vec![i(2), d(0.5)]];
    let plan = agg(
        scan("t", t),
        &[],
        vec![
            call(Sum, Some(0), false, None, DataType::Int),
            call(Sum, Some(1), false, None, DataType::Double),
            call(Avg, Some(0), false, None, DataType::Int),
            call(Avg, Some(1), false, None, DataType::Double),
            // An integer argument with a DOUBLE result type.
            call(Avg, Some(0), false, None, DataType::Double),
        ],
    );
    assert_eq!(
        run(&plan, &[("t", rows)]),
        vec![vec![i(3), d(0.75), i(1), d(0.375), d(1.5)]]
    );
    // Integer sums wrap on overflow as Java's long does.
    let rows = vec![vec![i(i64::MAX), N], vec![i(1), N]];
    let plan = agg(
        scan("t", t),
        &[],
        vec![call(Sum, Some(0), false, None, DataType::BigInt)],
    );
    assert_eq!(run(&plan, &[("t", rows)]), vec![vec![i(i64::MIN)]]);
}

#[test]
fn global_aggregate_over_empty_input_yields_one_row() {
    use AggFunc::*;
    let calls = vec![
        call(CountStar, None, false, None, DataType::BigInt),
        call(Count, Some(1), true, None, DataType::BigInt),
        call(Sum, Some(1), false, None, DataType::Int),
        call(Min, Some(1), false, None, DataType::Int),
        call(Max, Some(1), false, None, DataType::Int),
        call(Avg, Some(2), false, None, DataType::Double),
    ];
    let global = agg(scan("t", FACTS), &[], calls.clone());
    assert_eq!(run(&global, &[]), vec![vec![i(0), i(0), N, N, N, N]]);
    // Also when a filter removes every row.
    let filtered = agg(
        LogicalPlan::Filter {
            input: Box::new(scan("t", FACTS)),
            predicate: Expr::lit(b(false)),
        },
        &[],
        calls.clone(),
    );
    assert_eq!(
        run(&filtered, &[("t", facts())]),
        vec![vec![i(0), i(0), N, N, N, N]]
    );
    // A grouped aggregate over empty input yields nothing.
    let grouped = agg(scan("t", FACTS), &[0], calls);
    assert!(run(&grouped, &[]).is_empty());
}

#[test]
fn aggregate_over_aggregate() {
    // Clicks per user, then users per click count.
    let clicks: Vec<Row> = [1, 2, 1, 3, 1, 2, 4]
        .iter()
        .map(|&u| vec![i(u), s("url")])
        .collect();
    let per_user = agg(
        scan(
            "clicks",
            &[("user", DataType::Int), ("url", DataType::String)],
        ),
        &[0],
        vec![call(
            AggFunc::CountStar,
            None,
            false,
            None,
            DataType::BigInt,
        )],
    );
    assert_eq!(
        run(&per_user, &[("clicks", clicks.clone())]),
        vec![
            vec![i(1), i(3)],
            vec![i(2), i(2)],
            vec![i(3), i(1)],
            vec![i(4), i(1)]
        ]
    );
    let per_count = agg(
        per_user,
        &[1],
        vec![
            call(AggFunc::CountStar, None, false, None, DataType::BigInt),
            call(AggFunc::Max, Some(0), false, None, DataType::Int),
        ],
    );
    assert_eq!(
        run(&per_count, &[("clicks", clicks)]),
        vec![
            vec![i(1), i(2), i(4)],
            vec![i(2), i(1), i(2)],
            vec![i(3), i(1), i(1)]
        ]
    );
}

#[test]
fn aggregate_over_join() {
    // Total amount per user name, LEFT join so dan and nobody show with NULL.
    let j = join(
        scan("u", USERS),
        scan("o", ORDERS),
        JoinKind::Left,
        &[(0, 0)],
        None,
    );
    let plan = agg(
        j,
        &[1],
        vec![
            call(AggFunc::Sum, Some(3), false, None, DataType::Int),
            call(AggFunc::Count, Some(2), false, None, DataType::BigInt),
        ],
    );
    assert_eq!(
        run(&plan, &[("u", users()), ("o", orders())]),
        vec![
            vec![s("ann"), i(30), i(2)],
            vec![s("bob"), i(5), i(1)],
            vec![s("dan"), N, i(0)],
            vec![s("nobody"), N, i(0)],
        ]
    );
}

#[test]
fn final_table_materialises_a_changelog() {
    let changes = vec![
        Change::insert(vec![i(1), s("a")]),
        Change::insert(vec![i(1), s("a")]),
        Change::insert(vec![i(2), s("b")]),
        Change::update_before(vec![i(2), s("b")]),
        Change::update_after(vec![i(2), s("c")]),
        Change::delete(vec![i(1), s("a")]),
        // Retracting a row that is not there changes nothing.
        Change::delete(vec![i(9), s("z")]),
        Change::insert(vec![i(3), N]),
        Change::delete(vec![i(3), N]),
        Change::update_after(vec![i(3), N]),
    ];
    assert_eq!(
        sorted(final_table(&changes)),
        vec![vec![i(1), s("a")], vec![i(2), s("c")], vec![i(3), N]]
    );
    assert!(final_table(&[]).is_empty());
    let gone = vec![Change::delete(vec![i(1)]), Change::insert(vec![i(1)])];
    assert_eq!(final_table(&gone), vec![vec![i(1)]]);
}

#[test]
fn upsert_table_keeps_the_last_row_per_key() {
    let changes = vec![
        Change::insert(vec![s("u1"), i(1)]),
        Change::insert(vec![s("u2"), i(1)]),
        Change::update_after(vec![s("u1"), i(2)]),
        // -U is ignored by an upsert sink.
        Change::update_before(vec![s("u2"), i(1)]),
        Change::update_after(vec![s("u1"), i(3)]),
        Change::insert(vec![s("u3"), i(1)]),
        // -D deletes by key, whatever the other columns say.
        Change::delete(vec![s("u3"), i(99)]),
        Change::delete(vec![s("nobody"), i(0)]),
        Change::insert(vec![N, i(7)]),
        Change::update_after(vec![N, i(8)]),
    ];
    assert_eq!(
        sorted(upsert_table(&changes, &[0])),
        vec![vec![N, i(8)], vec![s("u1"), i(3)], vec![s("u2"), i(1)]]
    );
    // Deleted then re-inserted.
    let again = vec![
        Change::insert(vec![s("k"), i(1)]),
        Change::delete(vec![s("k"), i(1)]),
        Change::insert(vec![s("k"), i(2)]),
    ];
    assert_eq!(upsert_table(&again, &[0]), vec![vec![s("k"), i(2)]]);
}

#[test]
fn clicks_worked_example_materialises_to_the_oracle() {
    // The worked example: 120 clicks from 11 users counted per user. The retract
    // changelog an aggregate would emit materialises, both ways, to the
    // oracle's answer.
    let clicks: Vec<Row> = (0..120).map(|n| vec![i(n % 11), i(n)]).collect();
    let plan = agg(
        scan("clicks", &[("user", DataType::Int), ("n", DataType::Int)]),
        &[0],
        vec![call(
            AggFunc::CountStar,
            None,
            false,
            None,
            DataType::BigInt,
        )],
    );
    let expected = run(&plan, &[("clicks", clicks.clone())]);
    assert_eq!(expected.len(), 11);
    let mut counts = HashMap::new();
    let mut changelog = Vec::new();
    for row in &clicks {
        let c = counts.entry(row[0].clone()).or_insert(0i64);
        if *c > 0 {
            changelog.push(Change::update_before(vec![row[0].clone(), i(*c)]));
            *c += 1;
            changelog.push(Change::update_after(vec![row[0].clone(), i(*c)]));
        } else {
            *c = 1;
            changelog.push(Change::insert(vec![row[0].clone(), i(1)]));
        }
    }
    assert_eq!(changelog.len(), 229);
    assert_eq!(sorted(final_table(&changelog)), expected);
    assert_eq!(sorted(upsert_table(&changelog, &[0])), expected);
}
