//! SQL scripts: generated from a grammar of what the lab reads (tables of
//! every connector, `SET`, `INSERT` with projections, filters, aggregates
//! with `DISTINCT` and `FILTER`, joins of every kind, subqueries, hints,
//! `EXPLAIN`, statement sets, `COMPILE PLAN` and `EXECUTE PLAN`), typed
//! so that most of them plan and run, then often mutated; or the shipped
//! examples, mutated.

use super::seeds::example_scripts;
use crate::case::{Category, Input};
use crate::mutate::Mutator;
use crate::rng::Rng;

/// Tokens a mutation inserts into SQL.
pub const DICTIONARY: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "GROUP",
    "BY",
    "HAVING",
    "JOIN",
    "LEFT",
    "RIGHT",
    "FULL",
    "OUTER",
    "INNER",
    "CROSS",
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
    "<",
    ">",
    "<=",
    ">=",
    "||",
    "&",
    "|",
    "^",
    "::",
    "[",
    "]",
    "NULL",
    "TRUE",
    "FALSE",
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
    "BIGINT",
    "INT",
    "DOUBLE",
    "STRING",
    "BOOLEAN",
    "IN",
    "IS",
    "BETWEEN",
    "MOD",
    "HASH_CODE",
    "INSERT",
    "INTO",
    "CREATE",
    "TABLE",
    "WITH",
    "SET",
    "EXPLAIN",
    "CHANGELOG_MODE",
    "PLAN_ADVICE",
    "JSON_EXECUTION_PLAN",
    "EXECUTE",
    "STATEMENT",
    "BEGIN",
    "COMPILE",
    "PLAN",
    "FOR",
    "IF",
    "EXISTS",
    "PRIMARY",
    "KEY",
    "ENFORCED",
    "UNION",
    "ALL",
    "LIMIT",
    "ORDER",
    "OVER",
    "PARTITION",
    "VALUES",
    "ROW",
    "ARRAY",
    "MAP",
    "/*+ MULTI_JOIN(t, u) */",
    "/*+ STATE_TTL('t' = '1 s') */",
    "/*+",
    "*/",
    "--",
    "'datagen'",
    "'blackhole'",
    "'number-of-rows'",
    "'connector'",
    "'filesystem'",
    "'csv'",
    "'path'",
    ";",
    "a",
    "b",
    "k",
    "s",
    "t",
    "u",
    "t.a",
    "u.k",
    "user_id",
    "clicks",
    "${rows}",
    "'",
    "\"",
    "`",
];

/// Links a mutation repeats into a chain (deep trees).
pub const CHAINS: &[&str] = &[
    " + a",
    " AND a IS NULL",
    " OR TRUE",
    " IS NULL",
    " & a",
    " || 'x'",
    "::BIGINT",
    " = 1",
    " JOIN t ON TRUE",
    " NOT",
    "[1]",
    " COLLATE x",
];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Ty {
    Int,
    BigInt,
    Double,
    Str,
    Bool,
}

impl Ty {
    pub fn sql(self) -> &'static str {
        match self {
            Ty::Int => "INT",
            Ty::BigInt => "BIGINT",
            Ty::Double => "DOUBLE",
            Ty::Str => "STRING",
            Ty::Bool => "BOOLEAN",
        }
    }

    fn numeric(self) -> bool {
        matches!(self, Ty::Int | Ty::BigInt | Ty::Double)
    }
}

const TYPES: [Ty; 5] = [Ty::Int, Ty::BigInt, Ty::Double, Ty::Str, Ty::Bool];

#[derive(Clone, Debug)]
pub struct Col {
    pub name: String,
    pub ty: Ty,
}

#[derive(Clone, Debug)]
pub struct Table {
    pub name: String,
    pub cols: Vec<Col>,
    pub ddl: String,
}

/// A datagen table with a few columns and small, varied options.
pub fn datagen_table(rng: &mut Rng, name: &str) -> Table {
    let n = rng.range(1, 5);
    let mut cols = vec![Col {
        name: "k".into(),
        ty: *rng.pick(&[Ty::BigInt, Ty::Int, Ty::Str]),
    }];
    for i in 1..n {
        cols.push(Col {
            name: format!("{}{i}", rng.pick(&["a", "b", "v", "x"])),
            ty: *rng.pick(&TYPES),
        });
    }
    let rows = *rng.pick(&[0, 1, 5, 20, 100, 300]);
    let mut opts = vec![
        "'connector' = 'datagen'".to_string(),
        format!("'number-of-rows' = '{rows}'"),
    ];
    if rng.chance(0.5) {
        opts.push(format!("'seed' = '{}'", rng.below(1000)));
    }
    for c in &cols {
        let f = &c.name;
        match (c.ty, rng.below(6)) {
            (Ty::Int | Ty::BigInt, 0 | 1) => {
                opts.push(format!("'fields.{f}.min' = '{}'", rng.below(3)));
                opts.push(format!("'fields.{f}.max' = '{}'", rng.range(3, 12)));
            }
            (Ty::Int | Ty::BigInt, 2) => {
                opts.push(format!("'fields.{f}.min' = '1'"));
                opts.push(format!("'fields.{f}.max' = '{}'", rng.range(2, 50)));
                opts.push(format!("'fields.{f}.distribution' = 'zipf'"));
                opts.push(format!("'fields.{f}.zipf-exponent' = '1.2'"));
            }
            (Ty::Str, 0 | 1) => opts.push(format!("'fields.{f}.max' = '{}'", rng.range(1, 9))),
            (Ty::Str, 2) => opts.push(format!("'fields.{f}.length' = '{}'", rng.range(0, 5))),
            (Ty::Double, 0) => {
                opts.push(format!("'fields.{f}.min' = '-1.5'"));
                opts.push(format!("'fields.{f}.max' = '2.5'"));
            }
            (_, 3) => opts.push(format!("'fields.{f}.null-rate' = '0.2'")),
            _ => {}
        }
    }
    let col_text: Vec<String> = cols
        .iter()
        .map(|c| format!("{} {}", c.name, c.ty.sql()))
        .collect();
    let ddl = format!(
        "CREATE TABLE {name} (\n  {}\n) WITH (\n  {}\n);\n",
        col_text.join(",\n  "),
        opts.join(",\n  ")
    );
    Table {
        name: name.into(),
        cols,
        ddl,
    }
}

/// The clicks table of the examples (`clicks.csv` is beside every input).
pub fn clicks_table(name: &str) -> Table {
    let cols = vec![
        Col {
            name: "k".into(),
            ty: Ty::Str,
        },
        Col {
            name: "url".into(),
            ty: Ty::Str,
        },
        Col {
            name: "dwell".into(),
            ty: Ty::Int,
        },
        Col {
            name: "ts".into(),
            ty: Ty::BigInt,
        },
    ];
    let ddl = format!(
        "CREATE TABLE {name} (k STRING, url STRING, dwell INT, ts BIGINT) WITH (\n  \
         'connector' = 'filesystem', 'path' = 'clicks.csv', 'format' = 'csv');\n"
    );
    Table {
        name: name.into(),
        cols,
        ddl,
    }
}

/// Typed expressions over the columns in scope.
pub struct ExprGen<'a> {
    /// (qualified name, type)
    pub cols: &'a [(String, Ty)],
}

impl ExprGen<'_> {
    fn col_of(&self, rng: &mut Rng, ty: Ty) -> Option<String> {
        let c: Vec<&String> = self
            .cols
            .iter()
            .filter(|(_, t)| *t == ty)
            .map(|(n, _)| n)
            .collect();
        if c.is_empty() {
            None
        } else {
            Some(rng.pick(&c).to_string())
        }
    }

    fn literal(&self, rng: &mut Rng, ty: Ty) -> String {
        match ty {
            Ty::Int => rng.pick(&["0", "1", "2", "7", "-3", "100"]).to_string(),
            Ty::BigInt => rng
                .pick(&["CAST(1 AS BIGINT)", "3000000000", "CAST(-2 AS BIGINT)"])
                .to_string(),
            Ty::Double => rng.pick(&["1.5", "0.0", "-2.25", "1e3"]).to_string(),
            Ty::Str => rng
                .pick(&["'a'", "'u04'", "''", "'é🙂'", "'1'"])
                .to_string(),
            Ty::Bool => rng.pick(&["TRUE", "FALSE"]).to_string(),
        }
    }

    /// An expression of type `ty`, at most `depth` levels deep.
    pub fn expr(&self, rng: &mut Rng, ty: Ty, depth: usize) -> String {
        if depth == 0 || rng.chance(0.35) {
            if rng.chance(0.8) {
                if let Some(c) = self.col_of(rng, ty) {
                    return c;
                }
            }
            return self.literal(rng, ty);
        }
        let d = depth - 1;
        match ty {
            Ty::Bool => match rng.below(9) {
                0 | 1 => {
                    let t = *rng.pick(&TYPES);
                    let op = rng.pick(&["=", "<>", "<", ">", "<=", ">="]);
                    format!("{} {op} {}", self.expr(rng, t, d), self.expr(rng, t, d))
                }
                2 => format!(
                    "({} {} {})",
                    self.expr(rng, Ty::Bool, d),
                    rng.pick(&["AND", "OR"]),
                    self.expr(rng, Ty::Bool, d)
                ),
                3 => format!("NOT {}", self.expr(rng, Ty::Bool, d)),
                4 => {
                    let t = *rng.pick(&TYPES);
                    format!(
                        "{} IS {}NULL",
                        self.expr(rng, t, d),
                        if rng.chance(0.5) { "NOT " } else { "" }
                    )
                }
                5 => format!(
                    "{} IS {}",
                    self.expr(rng, Ty::Bool, d),
                    rng.pick(&["TRUE", "FALSE", "NOT TRUE", "NOT FALSE"])
                ),
                6 => {
                    let t = *rng.pick(&[Ty::Int, Ty::BigInt, Ty::Double]);
                    format!(
                        "{} {}BETWEEN {} AND {}",
                        self.expr(rng, t, d),
                        if rng.chance(0.3) { "NOT " } else { "" },
                        self.literal(rng, t),
                        self.literal(rng, t)
                    )
                }
                7 => {
                    let t = *rng.pick(&TYPES);
                    let items: Vec<String> =
                        (0..rng.range(1, 4)).map(|_| self.literal(rng, t)).collect();
                    format!(
                        "{} {}IN ({})",
                        self.expr(rng, t, d),
                        if rng.chance(0.3) { "NOT " } else { "" },
                        items.join(", ")
                    )
                }
                _ => self.case(rng, ty, d),
            },
            Ty::Int | Ty::BigInt | Ty::Double => match rng.below(7) {
                0..=2 => format!(
                    "({} {} {})",
                    self.expr(rng, ty, d),
                    rng.pick(&["+", "-", "*", "/", "%"]),
                    self.expr(rng, ty, d)
                ),
                3 => format!("-{}", self.expr(rng, ty, d)),
                4 => {
                    let from = *rng.pick(&[Ty::Int, Ty::BigInt, Ty::Double, Ty::Str]);
                    format!("CAST({} AS {})", self.expr(rng, from, d), ty.sql())
                }
                5 if ty != Ty::Double => {
                    format!("MOD({}, {})", self.expr(rng, ty, d), self.expr(rng, ty, d))
                }
                5 => self.case(rng, ty, d),
                _ if ty == Ty::Int && rng.chance(0.3) => {
                    format!("HASH_CODE({})", self.expr(rng, Ty::Str, d))
                }
                _ => self.case(rng, ty, d),
            },
            Ty::Str => match rng.below(3) {
                0 => format!(
                    "{} || {}",
                    self.expr(rng, Ty::Str, d),
                    self.expr(rng, Ty::Str, d)
                ),
                1 => {
                    let from = *rng.pick(&TYPES);
                    format!("CAST({} AS STRING)", self.expr(rng, from, d))
                }
                _ => self.case(rng, ty, d),
            },
        }
    }

    fn case(&self, rng: &mut Rng, ty: Ty, d: usize) -> String {
        let mut s = String::from("CASE");
        for _ in 0..rng.range(1, 3) {
            s += &format!(
                " WHEN {} THEN {}",
                self.expr(rng, Ty::Bool, d),
                self.expr(rng, ty, d)
            );
        }
        if rng.chance(0.7) {
            s += &format!(" ELSE {}", self.expr(rng, ty, d));
        }
        s + " END"
    }

    /// An aggregate call and its result type.
    pub fn aggregate(&self, rng: &mut Rng, depth: usize) -> (String, Ty) {
        let filter = if rng.chance(0.2) {
            format!(" FILTER (WHERE {})", self.expr(rng, Ty::Bool, 1))
        } else {
            String::new()
        };
        let distinct = if rng.chance(0.25) { "DISTINCT " } else { "" };
        let ty = *rng.pick(&[Ty::Int, Ty::BigInt, Ty::Double, Ty::Str]);
        match rng.below(5) {
            0 => (format!("COUNT(*){filter}"), Ty::BigInt),
            1 => (
                format!("COUNT({distinct}{}){filter}", self.expr(rng, ty, depth)),
                Ty::BigInt,
            ),
            2 if ty.numeric() => (
                format!("SUM({distinct}{}){filter}", self.expr(rng, ty, depth)),
                ty,
            ),
            3 if ty.numeric() => (
                format!("AVG({distinct}{}){filter}", self.expr(rng, ty, depth)),
                ty,
            ),
            _ => (
                format!(
                    "{}({distinct}{}){filter}",
                    rng.pick(&["MIN", "MAX"]),
                    self.expr(rng, ty, depth)
                ),
                ty,
            ),
        }
    }
}

fn qualified(t: &Table, alias: &str) -> Vec<(String, Ty)> {
    t.cols
        .iter()
        .map(|c| (format!("{alias}.{}", c.name), c.ty))
        .collect()
}

/// A query over `tables` and the types of its output columns.
pub fn query(rng: &mut Rng, tables: &[Table], depth: usize) -> (String, Vec<Ty>) {
    let hint = match rng.below(10) {
        0 => format!(
            "/*+ STATE_TTL('{}' = '{}') */ ",
            tables[0].name,
            rng.pick(&["1 s", "10 ms", "1 d"])
        ),
        1 if tables.len() > 1 => {
            let names: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
            format!("/*+ MULTI_JOIN({}) */ ", names.join(", "))
        }
        _ => String::new(),
    };
    // FROM: one table or a chain of joins on the first column.
    let n = if tables.len() > 1 && rng.chance(0.5) {
        rng.range(2, tables.len())
    } else {
        1
    };
    let mut scope: Vec<(String, Ty)> = Vec::new();
    let mut from = format!("{} AS r0", tables[0].name);
    scope.extend(qualified(&tables[0], "r0"));
    for (i, t) in tables.iter().enumerate().take(n).skip(1) {
        let alias = format!("r{i}");
        let kind = rng.pick(&[
            "JOIN",
            "LEFT JOIN",
            "RIGHT JOIN",
            "FULL OUTER JOIN",
            "INNER JOIN",
        ]);
        let mut on = format!("r0.k = {alias}.k");
        if rng.chance(0.3) {
            let g = ExprGen { cols: &scope };
            on += &format!(" AND {}", g.expr(rng, Ty::Bool, 1));
        }
        from += &format!(" {kind} {} AS {alias} ON {on}", t.name);
        scope.extend(qualified(t, &alias));
    }
    let g = ExprGen { cols: &scope };
    let filter = if rng.chance(0.4) {
        format!(" WHERE {}", g.expr(rng, Ty::Bool, depth))
    } else {
        String::new()
    };
    if rng.chance(0.5) {
        // An aggregate: group keys (columns) and aggregate calls.
        let keys: Vec<(String, Ty)> = (0..rng.range(0, 2))
            .map(|_| rng.pick(&scope).clone())
            .collect();
        let mut items: Vec<String> = keys.iter().map(|(n, _)| n.clone()).collect();
        let mut types: Vec<Ty> = keys.iter().map(|(_, t)| *t).collect();
        for _ in 0..rng.range(1, 3) {
            let (a, t) = g.aggregate(rng, depth.min(2));
            items.push(a);
            types.push(t);
        }
        let group = if keys.is_empty() {
            String::new()
        } else {
            let names: Vec<&str> = keys.iter().map(|(n, _)| n.as_str()).collect();
            format!(" GROUP BY {}", names.join(", "))
        };
        let having = if rng.chance(0.2) {
            let (a, t) = g.aggregate(rng, 1);
            format!(" HAVING {a} > {}", g.literal_of(rng, t))
        } else {
            String::new()
        };
        let aliased: Vec<String> = items
            .iter()
            .enumerate()
            .map(|(i, x)| format!("{x} AS c{i}"))
            .collect();
        let q = format!(
            "SELECT {hint}{} FROM {from}{filter}{group}{having}",
            aliased.join(", ")
        );
        if rng.chance(0.2) {
            // An aggregate over this one.
            return (
                format!("SELECT c0, COUNT(*) FROM ({q}) AS q0 GROUP BY c0"),
                vec![types[0], Ty::BigInt],
            );
        }
        (q, types)
    } else {
        let mut items = Vec::new();
        let mut types = Vec::new();
        for _ in 0..rng.range(1, 4) {
            let t = *rng.pick(&TYPES);
            items.push(g.expr(rng, t, depth));
            types.push(t);
        }
        (
            format!("SELECT {hint}{} FROM {from}{filter}", items.join(", ")),
            types,
        )
    }
}

impl ExprGen<'_> {
    fn literal_of(&self, rng: &mut Rng, ty: Ty) -> String {
        self.literal(rng, ty)
    }
}

/// A sink table for `types`, named `name`.
fn sink_table(rng: &mut Rng, name: &str, types: &[Ty]) -> String {
    let cols: Vec<String> = types
        .iter()
        .enumerate()
        .map(|(i, t)| format!("c{i} {}", t.sql()))
        .collect();
    let pk = if rng.chance(0.2) {
        ", PRIMARY KEY (c0) NOT ENFORCED"
    } else {
        ""
    };
    let with = match rng.below(10) {
        0 => "'connector' = 'print'".to_string(),
        1 | 2 => format!("'connector' = 'filesystem', 'path' = '{name}.csv', 'format' = 'csv'"),
        _ => "'connector' = 'blackhole'".to_string(),
    };
    format!(
        "CREATE TABLE {name} ({}{pk}) WITH ({with});\n",
        cols.join(", ")
    )
}

/// `SET` statements of configuration the planner acts on.
pub fn settings(rng: &mut Rng) -> String {
    let mut s = String::new();
    for _ in 0..rng.range(0, 3) {
        let (k, v) = *rng.pick(&[
            ("table.exec.mini-batch.enabled", "true"),
            ("table.exec.mini-batch.allow-latency", "5 s"),
            ("table.exec.mini-batch.size", "3"),
            ("table.optimizer.agg-phase-strategy", "TWO_PHASE"),
            ("table.optimizer.distinct-agg.split.enabled", "true"),
            ("table.optimizer.distinct-agg.split.bucket-num", "4"),
            ("table.optimizer.multi-join.enabled", "true"),
            ("table.optimizer.delta-join.strategy", "FORCE"),
            ("parallelism.default", "3"),
            ("lab.clock", "deterministic"),
            ("table.exec.state.ttl", "1 s"),
            ("table.exec.sink.upsert-materialize", "FORCE"),
            ("lab.source.batch-size", "2"),
        ]);
        s += &format!("SET '{k}' = '{v}';\n");
        if k == "table.exec.mini-batch.enabled" {
            s += "SET 'table.exec.mini-batch.allow-latency' = '1 s';\nSET 'table.exec.mini-batch.size' = '10';\n";
        }
    }
    if rng.chance(0.03) {
        s += "SET 'state.backend.type' = 'rocksdb';\n";
    }
    s
}

/// A whole script from the grammar.
pub fn generate(rng: &mut Rng) -> String {
    let mut tables = Vec::new();
    for i in 0..rng.range(1, 4) {
        let name = ["t", "u", "w", "z"][i];
        tables.push(if rng.chance(0.25) {
            clicks_table(name)
        } else {
            datagen_table(rng, name)
        });
    }
    let mut s: String = tables.iter().map(|t| t.ddl.as_str()).collect();
    s += &settings(rng);
    let depth = rng.range(1, 4);
    for n in 0..rng.range(1, 3) {
        let (q, types) = query(rng, &tables, depth);
        let sink = format!("o{n}");
        s += &sink_table(rng, &sink, &types);
        let insert = format!("INSERT INTO {sink} {q}");
        s += &match rng.below(14) {
            0 => format!(
                "EXPLAIN {}{insert};\n",
                rng.pick(&[
                    "",
                    "CHANGELOG_MODE ",
                    "PLAN_ADVICE ",
                    "JSON_EXECUTION_PLAN ",
                    "CHANGELOG_MODE, PLAN_ADVICE "
                ])
            ),
            1 => format!("EXPLAIN {q};\n"),
            2 => format!("EXECUTE STATEMENT SET BEGIN\n{insert};\n{insert};\nEND;\n"),
            3 => format!("EXPLAIN STATEMENT SET BEGIN\n{insert};\nEND;\n"),
            4 => format!("COMPILE PLAN 'p{n}.json' FOR {insert};\nEXECUTE PLAN 'p{n}.json';\n"),
            5 => format!("BEGIN STATEMENT SET;\n{insert};\n{insert};\nEND;\n"),
            _ => format!("{insert};\n"),
        };
    }
    s
}

/// The mutator of SQL text.
pub fn mutator<'a>(donors: &'a [&'a str]) -> Mutator<'a> {
    Mutator {
        dictionary: DICTIONARY,
        chains: CHAINS,
        donors,
    }
}

/// One SQL input: generated, generated and mutated, or an example mutated.
pub fn input(rng: &mut Rng) -> Input {
    let examples = example_scripts();
    let donors: Vec<&str> = examples.iter().map(String::as_str).collect();
    let text = match rng.below(10) {
        0..=3 => generate(rng),
        4..=6 => {
            let g = generate(rng);
            mutator(&donors).mutate(rng, &g)
        }
        _ => {
            let seed = rng.pick(&donors).to_string();
            mutator(&donors).mutate(rng, &seed)
        }
    };
    Input::new(Category::Sql).with("script.sql", text)
}
