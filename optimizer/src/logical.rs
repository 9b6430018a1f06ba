//! The logical plan: what a query computes, independent of how.
//!
//! The binder resolves names into column positions, so every node's
//! expressions refer to positions in its input's schema. Aggregates take
//! plain columns: the binder puts a [`LogicalPlan::Project`] below each
//! [`LogicalPlan::Aggregate`] that computes group keys, aggregate arguments
//! and `FILTER (WHERE ...)` conditions as columns (as Calcite does).

use operators::expr::Expr;
use operators::value::DataType;
use std::collections::BTreeMap;
use std::fmt;

/// One column of a schema.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Field {
    pub name: String,
    /// The table name or alias the column came from, if any.
    pub qualifier: Option<String>,
    pub data_type: DataType,
    pub nullable: bool,
}

#[derive(Clone, Debug, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Schema {
    pub fields: Vec<Field>,
}

impl Schema {
    pub fn len(&self) -> usize {
        self.fields.len()
    }
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }
    pub fn names(&self) -> Vec<String> {
        self.fields.iter().map(|f| f.name.clone()).collect()
    }
    pub fn types(&self) -> Vec<DataType> {
        self.fields.iter().map(|f| f.data_type).collect()
    }
}

/// `schema`'s field names made unique as Calcite does.
pub fn unique_names(schema: &Schema) -> Vec<String> {
    uniquify(schema.fields.iter().map(|f| f.name.clone()))
}

/// `names` made unique: each repeat gets the first free numeric suffix.
pub fn uniquify(names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut used: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut out = Vec::new();
    for name in names {
        let unique = if used.contains(&name) {
            (0..)
                .map(|j| format!("{name}{j}"))
                .find(|n| !used.contains(n))
                .expect("an unused suffix")
        } else {
            name
        };
        used.insert(unique.clone());
        out.push(unique);
    }
    out
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JoinKind {
    Inner,
    Left,
    Right,
    Full,
}

impl JoinKind {
    /// True when unmatched left rows are kept, padded with NULLs.
    pub fn keeps_left(self) -> bool {
        matches!(self, JoinKind::Left | JoinKind::Full)
    }

    /// True when unmatched right rows are kept, padded with NULLs.
    pub fn keeps_right(self) -> bool {
        matches!(self, JoinKind::Right | JoinKind::Full)
    }
}

impl fmt::Display for JoinKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            JoinKind::Inner => "InnerJoin",
            JoinKind::Left => "LeftOuterJoin",
            JoinKind::Right => "RightOuterJoin",
            JoinKind::Full => "FullOuterJoin",
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AggFunc {
    /// `COUNT(*)`
    CountStar,
    /// `COUNT(x)`: non-NULL values.
    Count,
    Sum,
    Min,
    Max,
    Avg,
}

impl AggFunc {
    pub fn name(self) -> &'static str {
        match self {
            AggFunc::CountStar | AggFunc::Count => "COUNT",
            AggFunc::Sum => "SUM",
            AggFunc::Min => "MIN",
            AggFunc::Max => "MAX",
            AggFunc::Avg => "AVG",
        }
    }
}

/// One aggregate call; `arg` and `filter` are columns of the input.
#[derive(Clone, Debug, PartialEq)]
pub struct AggCall {
    pub func: AggFunc,
    /// The argument column; `None` only for `COUNT(*)`.
    pub arg: Option<usize>,
    pub distinct: bool,
    /// A BOOLEAN input column: only rows where it is TRUE are aggregated.
    pub filter: Option<usize>,
    /// Output column name.
    pub name: String,
    pub output_type: DataType,
}

/// A table of the catalog, as declared by `CREATE TABLE`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TableDef {
    pub name: String,
    pub schema: Schema,
    /// Column positions of `PRIMARY KEY (...) NOT ENFORCED`.
    pub primary_key: Option<Vec<usize>>,
    /// The `WITH (...)` options, keys as written.
    pub options: BTreeMap<String, String>,
    /// Per column: `None` for a physical column (the connector reads it),
    /// or the expression of a computed column (`ts AS
    /// TO_TIMESTAMP_LTZ(epoch_ms, 3)`) over the physical columns, in their
    /// order. Empty when every column is physical.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub computed: Vec<Option<Expr>>,
    /// `WATERMARK FOR rowtime AS expr`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watermark: Option<Box<WatermarkSpec>>,
}

/// A table's watermark declaration: its rowtime attribute (a column of
/// type `TIMESTAMP(3)` or `TIMESTAMP_LTZ(3)`) and the watermark expression
/// over the whole row.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WatermarkSpec {
    pub rowtime: usize,
    pub expr: Expr,
    /// The expression as Flink's EXPLAIN prints it (`-(ts, 5000:INTERVAL SECOND)`).
    pub text: String,
}

impl TableDef {
    /// Whether some column is computed.
    pub fn has_computed_columns(&self) -> bool {
        self.computed.iter().any(Option::is_some)
    }

    /// The columns the connector reads: the physical ones, in order.
    pub fn physical(&self) -> TableDef {
        if !self.has_computed_columns() {
            return TableDef {
                watermark: None,
                ..self.clone()
            };
        }
        let fields = self
            .schema
            .fields
            .iter()
            .zip(&self.computed)
            .filter(|(_, c)| c.is_none())
            .map(|(f, _)| f.clone())
            .collect();
        TableDef {
            name: self.name.clone(),
            schema: Schema { fields },
            primary_key: None,
            options: self.options.clone(),
            computed: Vec::new(),
            watermark: None,
        }
    }

    /// The expressions that make a full row from a physical one, or `None`
    /// when there are no computed columns.
    pub fn row_exprs(&self) -> Option<Vec<Expr>> {
        if !self.has_computed_columns() {
            return None;
        }
        let mut physical = 0;
        Some(
            self.computed
                .iter()
                .map(|c| match c {
                    Some(e) => e.clone(),
                    None => {
                        physical += 1;
                        Expr::Column(physical - 1)
                    }
                })
                .collect(),
        )
    }
}

/// What makes a join a lookup join: the processing-time attribute of the
/// left input its `FOR SYSTEM_TIME AS OF` names. Its result is the join
/// with the right table as it is (the lab's lookup tables are bounded and
/// read once), which is how the oracle evaluates it.
#[derive(Clone, Debug, PartialEq)]
pub struct Lookup {
    /// The left input's column.
    pub time_col: usize,
}

impl Lookup {
    /// `(table column, constant)` when the conjunct `c` of the condition
    /// over the left input's `nl` columns then the table's is `column =
    /// literal` (either way round) on a column of the table: a lookup key
    /// of its own (`ON d.id = 1`).
    pub fn constant_equality(c: &Expr, nl: usize) -> Option<(usize, &operators::value::Value)> {
        let Expr::Binary(operators::expr::BinOp::Eq, l, r) = c else {
            return None;
        };
        match (l.as_ref(), r.as_ref()) {
            (Expr::Column(col), Expr::Literal(v)) | (Expr::Literal(v), Expr::Column(col))
                if *col >= nl =>
            {
                Some((*col - nl, v))
            }
            _ => None,
        }
    }
}

/// A query hint, e.g. `/*+ MULTI_JOIN(a, b) */` or
/// `/*+ STATE_TTL('a' = '1h') */`: positional args or key/value pairs.
#[derive(Clone, Debug, PartialEq)]
pub struct Hint {
    pub name: String,
    pub args: Vec<String>,
    pub kv: Vec<(String, String)>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum LogicalPlan {
    /// Reads a catalog table; `alias` is the name the query uses for it.
    Scan {
        table: String,
        alias: String,
        schema: Schema,
    },
    Filter {
        input: Box<LogicalPlan>,
        predicate: Expr,
    },
    Project {
        input: Box<LogicalPlan>,
        exprs: Vec<Expr>,
        schema: Schema,
    },
    /// Equi-join on `left_keys[i] = right_keys[i]`; `residual` is evaluated
    /// over the concatenated row (left columns, then right columns).
    Join {
        left: Box<LogicalPlan>,
        right: Box<LogicalPlan>,
        kind: JoinKind,
        left_keys: Vec<usize>,
        right_keys: Vec<usize>,
        residual: Option<Expr>,
        schema: Schema,
        /// Hints attached to the SELECT this join belongs to.
        hints: Vec<Hint>,
        /// `JOIN dim FOR SYSTEM_TIME AS OF l.proc_time`: the right input is
        /// a table scan looked up per left row (a lookup join); `None` for
        /// a regular join.
        lookup: Option<Lookup>,
    },
    /// A window TVF (`TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size))`): the
    /// input's columns, then `window_start`, `window_end` and `window_time`
    /// of each window the row's `time_col` falls in (one row per window).
    WindowTvf {
        input: Box<LogicalPlan>,
        time_col: usize,
        window: operators::window::WindowSpec,
        /// SESSION's `PARTITION BY` columns of the input (empty for the
        /// others).
        partition_by: Vec<usize>,
        /// The legacy group window (`GROUP BY TUMBLE(ts, size)`, Flink's
        /// `GroupWindowAggregate`): the binder's TVF under its aggregate,
        /// whose columns only the auxiliary functions (`TUMBLE_START`, ...)
        /// reach. Its aggregate takes Flink's emit strategy (allowed
        /// lateness, late firings); it is not a window for window joins,
        /// deduplications or Top-Ns above it.
        group_window: bool,
        schema: Schema,
    },
    /// `left UNION ALL right`: every row of both inputs (same column
    /// count and types; names from the left).
    Union {
        left: Box<LogicalPlan>,
        right: Box<LogicalPlan>,
        schema: Schema,
    },
    /// `ROW_NUMBER() OVER (PARTITION BY key ORDER BY time ASC|DESC)` kept
    /// where it is 1, the row number not in the output: the first or last
    /// row of each key by a time attribute (the input's columns).
    Deduplicate {
        input: Box<LogicalPlan>,
        key: Vec<usize>,
        keep: operators::rank::deduplicate::Keep,
        order: operators::rank::deduplicate::DedupOrder,
        /// The `ORDER BY` column (a `PROCTIME()` or rowtime attribute).
        time_col: usize,
        /// The row number's name (`rn`), for the plan's AST.
        row_number: String,
    },
    /// `ROW_NUMBER() OVER (PARTITION BY partition_by ORDER BY order)` kept
    /// where it is in `rank_start..=rank_end` (a Top-N): the input's
    /// columns, then the row number (BIGINT) when the query selects it.
    /// Rows with equal sort keys are numbered in the order they came.
    Rank {
        input: Box<LogicalPlan>,
        partition_by: Vec<usize>,
        order: Vec<operators::rank::topn::SortField>,
        rank_start: u64,
        rank_end: u64,
        output_rank_number: bool,
        /// The row number's name (`rn`).
        row_number: String,
        schema: Schema,
    },
    /// Output: the group columns in order, then one column per call.
    Aggregate {
        input: Box<LogicalPlan>,
        group_by: Vec<usize>,
        aggs: Vec<AggCall>,
        schema: Schema,
        hints: Vec<Hint>,
    },
}

impl LogicalPlan {
    pub fn schema(&self) -> &Schema {
        match self {
            LogicalPlan::Scan { schema, .. }
            | LogicalPlan::Project { schema, .. }
            | LogicalPlan::Join { schema, .. }
            | LogicalPlan::WindowTvf { schema, .. }
            | LogicalPlan::Union { schema, .. }
            | LogicalPlan::Rank { schema, .. }
            | LogicalPlan::Aggregate { schema, .. } => schema,
            LogicalPlan::Filter { input, .. } | LogicalPlan::Deduplicate { input, .. } => {
                input.schema()
            }
        }
    }

    /// The `window_start` and `window_end` columns of this plan's output
    /// and their window, when it is a window TVF with projections and
    /// filters over it that keep both columns as they are.
    pub fn window_columns(&self) -> Option<(usize, usize, operators::window::WindowSpec)> {
        self.window_columns_through(false)
    }

    /// [`LogicalPlan::window_columns`], also through aggregates grouped by
    /// both window columns, at any depth (a window aggregate's output keeps
    /// its window, as Flink's window properties do, and so does an
    /// aggregate over those columns, which is planned window-attached):
    /// what a window join joins.
    pub fn join_window_columns(&self) -> Option<(usize, usize, operators::window::WindowSpec)> {
        self.window_columns_through(true)
    }

    fn window_columns_through(
        &self,
        aggregates: bool,
    ) -> Option<(usize, usize, operators::window::WindowSpec)> {
        match self {
            LogicalPlan::WindowTvf {
                group_window: true, ..
            } => None,
            LogicalPlan::WindowTvf { input, window, .. } => {
                let n = input.schema().len();
                Some((n, n + 1, *window))
            }
            LogicalPlan::Filter { input, .. } => input.window_columns_through(aggregates),
            LogicalPlan::Project { input, exprs, .. } => {
                let (s, e, window) = input.window_columns_through(aggregates)?;
                let at = |c: usize| exprs.iter().position(|x| *x == Expr::Column(c));
                Some((at(s)?, at(e)?, window))
            }
            LogicalPlan::Aggregate {
                input, group_by, ..
            } if aggregates => {
                // Over another window aggregate's output only aligned
                // windows (the planner's window-attached aggregate keeps
                // no SESSION windows of another operator's).
                let (s, e, window) = input.window_columns_through(false).or_else(|| {
                    input
                        .window_columns_through(true)
                        .filter(|(_, _, w)| w.is_aligned())
                })?;
                let at = |c: usize| group_by.iter().position(|&g| g == c);
                Some((at(s)?, at(e)?, window))
            }
            _ => None,
        }
    }

    /// [`LogicalPlan::children`], to replace them.
    pub fn inputs_mut(&mut self) -> Vec<&mut Box<LogicalPlan>> {
        match self {
            LogicalPlan::Scan { .. } => vec![],
            LogicalPlan::Filter { input, .. }
            | LogicalPlan::Project { input, .. }
            | LogicalPlan::WindowTvf { input, .. }
            | LogicalPlan::Deduplicate { input, .. }
            | LogicalPlan::Rank { input, .. }
            | LogicalPlan::Aggregate { input, .. } => vec![input],
            LogicalPlan::Join { left, right, .. } | LogicalPlan::Union { left, right, .. } => {
                vec![left, right]
            }
        }
    }

    pub fn children(&self) -> Vec<&LogicalPlan> {
        match self {
            LogicalPlan::Scan { .. } => vec![],
            LogicalPlan::Filter { input, .. }
            | LogicalPlan::Project { input, .. }
            | LogicalPlan::WindowTvf { input, .. }
            | LogicalPlan::Deduplicate { input, .. }
            | LogicalPlan::Rank { input, .. }
            | LogicalPlan::Aggregate { input, .. } => vec![input],
            LogicalPlan::Join { left, right, .. } | LogicalPlan::Union { left, right, .. } => {
                vec![left, right]
            }
        }
    }
}

/// `INSERT INTO sink <query>`.
#[derive(Clone, Debug, PartialEq)]
pub struct InsertStatement {
    pub sink: String,
    pub query: LogicalPlan,
    /// Where the statement starts in the script (for planning errors).
    pub at: Option<crate::error::Location>,
}

/// What `EXPLAIN` adds to the plan, as Flink's `ExplainDetail`s
/// (`ESTIMATED_COST` is refused: the lab has no cost model).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExplainDetails {
    /// `CHANGELOG_MODE`: each node's changelog in the physical plan.
    pub changelog_mode: bool,
    /// `JSON_EXECUTION_PLAN`: the job graph as JSON.
    pub json_execution_plan: bool,
    /// `PLAN_ADVICE`: the physical plan with advice.
    pub plan_advice: bool,
}

/// What an `EXPLAIN` explains.
#[derive(Clone, Debug, PartialEq)]
pub enum ExplainTarget {
    Insert(InsertStatement),
    /// `STATEMENT SET BEGIN ... END`: one job with several sinks.
    StatementSet(Vec<InsertStatement>),
    /// A `SELECT` (explained without a sink).
    Query(LogicalPlan),
}

/// A statement of a script, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    CreateTable(TableDef),
    /// `SET 'key' = 'value'`
    Set {
        key: String,
        value: String,
    },
    Insert(InsertStatement),
    /// `EXECUTE STATEMENT SET BEGIN INSERT ...; ... END` or `BEGIN
    /// STATEMENT SET; INSERT ...; ... END`: the INSERTs run as one job.
    StatementSet(Vec<InsertStatement>),
    /// `EXPLAIN [PLAN FOR | detail, ...] <INSERT | STATEMENT SET | SELECT>`
    Explain {
        details: ExplainDetails,
        target: ExplainTarget,
    },
    /// `COMPILE PLAN 'file' [IF NOT EXISTS] FOR INSERT ...`
    CompilePlan {
        path: String,
        if_not_exists: bool,
        insert: InsertStatement,
    },
    /// `EXECUTE PLAN [IF EXISTS] 'file'`
    ExecutePlan {
        path: String,
        if_exists: bool,
    },
}
