//! Binding scalar expressions and aggregate calls: names become column
//! positions, and every expression gets a type.
//!
//! An expression binds against a [`Scope`] (the columns of the FROM clause).
//! In an aggregate query the select list and `HAVING` bind in "aggregate
//! mode" ([`AggState`]): an aggregate call becomes a column of the aggregate's
//! output, a sub-expression equal to a `GROUP BY` expression becomes that
//! group column, and any other column reference is an error ("Expression 'x'
//! is not being grouped").

use super::names::{did_you_mean, err_at, list, At};
use super::types::{lab_type, SUPPORTED_TYPES};
use crate::error::PlanError;
use crate::logical::{AggFunc, Field};
use operators::expr::{BinOp, Expr};
use operators::string_fns::{self, ArgKind, StringFn};
use operators::value::{DataType, Value};
use sqlparser::ast::{self, Spanned};

/// A bound expression and its type; `ty` is `None` for an untyped `NULL`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Typed {
    pub expr: Expr,
    pub ty: Option<DataType>,
    pub nullable: bool,
}

impl Typed {
    fn new(expr: Expr, ty: DataType, nullable: bool) -> Typed {
        Typed {
            expr,
            ty: Some(ty),
            nullable,
        }
    }
}

fn ty_name(t: Option<DataType>) -> &'static str {
    t.map(|t| t.sql_name()).unwrap_or("NULL")
}

/// The columns visible to an expression, in input-row order, and the names
/// of the FROM clause's tables (for messages).
#[derive(Clone, Debug, Default)]
pub(crate) struct Scope {
    pub fields: Vec<Field>,
    pub relations: Vec<String>,
    /// The legacy group window of an aggregate query (`GROUP BY
    /// TUMBLE(ts, size)`), which its auxiliary functions read.
    pub group_window: Option<GroupWindowRef>,
}

/// A legacy group window as its auxiliary functions (`TUMBLE_START`,
/// `TUMBLE_END`, `TUMBLE_ROWTIME`, HOP_* and SESSION_* alike) see it: they
/// must repeat the window's arguments, and read the window's columns that
/// the binder put after the FROM clause's (`w$start`, `w$end`,
/// `w$rowtime`), grouped by the first two.
#[derive(Clone, Debug)]
pub(crate) struct GroupWindowRef {
    /// `TUMBLE`, `HOP` or `SESSION`.
    pub name: &'static str,
    /// The time attribute's column.
    pub time_col: usize,
    /// The interval arguments, in milliseconds, in order.
    pub sizes: Vec<i64>,
    /// The column of `w$start` (`w$end` and `w$rowtime` follow it).
    pub start_col: usize,
    /// The window as written, for messages.
    pub text: String,
}

impl Scope {
    fn display(&self, i: usize) -> String {
        let f = &self.fields[i];
        match &f.qualifier {
            Some(q) => format!("{q}.{}", f.name),
            None => f.name.clone(),
        }
    }

    fn available(&self) -> String {
        let names: Vec<String> = (0..self.fields.len()).map(|i| self.display(i)).collect();
        list(&names, 40)
    }

    /// Positions among `cands` whose name matches `name` (exactly if any,
    /// else ignoring case).
    fn matching(&self, cands: &[usize], name: &str) -> Vec<usize> {
        let exact: Vec<usize> = cands
            .iter()
            .copied()
            .filter(|&i| self.fields[i].name == name)
            .collect();
        if !exact.is_empty() {
            return exact;
        }
        cands
            .iter()
            .copied()
            .filter(|&i| self.fields[i].name.eq_ignore_ascii_case(name))
            .collect()
    }

    /// Resolves `name` or `qualifier.name` to a position.
    pub fn resolve(&self, parts: &[ast::Ident]) -> Result<usize, PlanError> {
        let all: Vec<usize> = (0..self.fields.len()).collect();
        match parts {
            [id] => {
                let m = self.matching(&all, &id.value);
                match m.as_slice() {
                    [i] => Ok(*i),
                    [] => Err(err_at(
                        PlanError::validation(format!(
                            "Column '{}' not found in any table.{} Available columns: {}",
                            id.value,
                            did_you_mean(&id.value, self.fields.iter().map(|f| f.name.as_str())),
                            self.available()
                        )),
                        &At(id.span),
                    )),
                    many => {
                        let tables: Vec<String> = many
                            .iter()
                            .map(|&i| {
                                self.fields[i]
                                    .qualifier
                                    .clone()
                                    .unwrap_or_else(|| "a subquery".to_string())
                            })
                            .collect();
                        let example = match &self.fields[many[0]].qualifier {
                            Some(q) => format!(", e.g. {q}.{}", id.value),
                            None => String::new(),
                        };
                        Err(err_at(
                            PlanError::validation(format!(
                                "Column '{}' is ambiguous: it is a column of {}; qualify it with a table name or alias{example}",
                                id.value,
                                tables.join(" and ")
                            )),
                            &At(id.span),
                        ))
                    }
                }
            }
            [q, id] => {
                let mut of_q: Vec<usize> = all
                    .iter()
                    .copied()
                    .filter(|&i| self.fields[i].qualifier.as_deref() == Some(q.value.as_str()))
                    .collect();
                if of_q.is_empty() {
                    of_q = all
                        .iter()
                        .copied()
                        .filter(|&i| {
                            self.fields[i]
                                .qualifier
                                .as_deref()
                                .is_some_and(|x| x.eq_ignore_ascii_case(&q.value))
                        })
                        .collect();
                }
                if of_q.is_empty() {
                    return Err(err_at(
                        PlanError::validation(format!(
                            "Table '{}' not found in FROM; available: {}.{}",
                            q.value,
                            list(&self.relations, 30),
                            did_you_mean(&q.value, self.relations.iter().map(|s| s.as_str()))
                        )),
                        &At(q.span),
                    ));
                }
                let m = self.matching(&of_q, &id.value);
                match m.as_slice() {
                    [i] => Ok(*i),
                    [] => Err(err_at(
                        PlanError::validation(format!(
                            "Column '{}' not found in table '{}'.{} Available columns: {}",
                            id.value,
                            q.value,
                            did_you_mean(
                                &id.value,
                                of_q.iter().map(|&i| self.fields[i].name.as_str())
                            ),
                            list(
                                &of_q
                                    .iter()
                                    .map(|&i| self.fields[i].name.clone())
                                    .collect::<Vec<_>>(),
                                40
                            )
                        )),
                        &At(id.span),
                    )),
                    _ => Err(err_at(
                        PlanError::validation(format!(
                            "Column '{}.{}' is ambiguous: '{}' has several columns of that name",
                            q.value, id.value, q.value
                        )),
                        &At(id.span),
                    )),
                }
            }
            _ => {
                let text = parts
                    .iter()
                    .map(|p| p.value.as_str())
                    .collect::<Vec<_>>()
                    .join(".");
                Err(PlanError::unsupported(format!(
                    "compound identifier '{text}' is not supported (write column or table.column)"
                ))
                .at_ident(parts.first()))
            }
        }
    }
}

trait AtIdent {
    fn at_ident(self, id: Option<&ast::Ident>) -> PlanError;
}

impl AtIdent for PlanError {
    fn at_ident(self, id: Option<&ast::Ident>) -> PlanError {
        match id {
            Some(id) => err_at(self, &At(id.span)),
            None => self,
        }
    }
}

/// One aggregate call being collected.
#[derive(Clone, Debug)]
pub(crate) struct PendingAgg {
    pub func: AggFunc,
    pub arg: Option<usize>,
    pub distinct: bool,
    pub filter: Option<usize>,
    pub name: String,
    pub generated_name: bool,
    pub ty: DataType,
    pub nullable: bool,
}

/// The state of binding an aggregate query: group expressions, the columns
/// of the Project below the aggregate, and the aggregate calls.
#[derive(Debug, Default)]
pub(crate) struct AggState {
    /// Group expressions over the FROM scope; also the first `pre` columns.
    pub groups: Vec<Typed>,
    /// The Project below the aggregate: expression, name, qualifier.
    pub pre: Vec<(Typed, String, Option<String>)>,
    pub calls: Vec<PendingAgg>,
}

impl AggState {
    /// A column of the Project below the aggregate computing `t` (reused
    /// when an identical expression is already there).
    pub fn pre_col(&mut self, t: Typed, scope: &Scope) -> usize {
        if let Some(i) = self.pre.iter().position(|(p, _, _)| p.expr == t.expr) {
            return i;
        }
        let i = self.pre.len();
        let (name, qualifier) = match t.expr {
            Expr::Column(c) => (
                scope.fields[c].name.clone(),
                scope.fields[c].qualifier.clone(),
            ),
            _ => (format!("$f{i}"), None),
        };
        self.pre.push((t, name, qualifier));
        i
    }

    /// Adds a group expression (bound over the FROM scope).
    pub fn add_group(&mut self, t: Typed, scope: &Scope) {
        if self.groups.iter().any(|g| g.expr == t.expr) {
            return;
        }
        self.groups.push(t.clone());
        self.pre_col(t, scope);
    }
}

/// Binds expressions against a scope; in aggregate mode when `agg` is set.
pub(crate) struct Ctx<'a> {
    pub scope: &'a Scope,
    pub agg: Option<&'a mut AggState>,
    /// Where the expression is, for "aggregate not allowed in ..." messages.
    pub clause: &'static str,
}

pub(crate) fn agg_func_name(f: &ast::Function) -> Option<&'static str> {
    let [part] = f.name.0.as_slice() else {
        return None;
    };
    let name = part.as_ident()?.value.to_uppercase();
    ["COUNT", "SUM", "MIN", "MAX", "AVG"]
        .into_iter()
        .find(|n| *n == name)
}

/// Strips parentheses.
pub(crate) fn strip_nested(mut e: &ast::Expr) -> &ast::Expr {
    while let ast::Expr::Nested(inner) = e {
        e = inner;
    }
    e
}

/// Whether an aggregate call occurs in `e`.
pub(crate) fn contains_agg(e: &ast::Expr) -> bool {
    use ast::Expr as E;
    match e {
        E::Function(f) => {
            // A windowed aggregate (`COUNT(*) OVER ...`) is not a group
            // aggregate; binding rejects it as a window function.
            if agg_func_name(f).is_some() && f.over.is_none() {
                return true;
            }
            let args = match &f.args {
                ast::FunctionArguments::List(l) => l.args.iter().any(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x))
                    | ast::FunctionArg::Named {
                        arg: ast::FunctionArgExpr::Expr(x),
                        ..
                    } => contains_agg(x),
                    _ => false,
                }),
                _ => false,
            };
            args || f.filter.as_deref().is_some_and(contains_agg)
        }
        E::BinaryOp { left, right, .. } => contains_agg(left) || contains_agg(right),
        E::UnaryOp { expr, .. }
        | E::Nested(expr)
        | E::Cast { expr, .. }
        | E::IsNull(expr)
        | E::IsNotNull(expr)
        | E::IsTrue(expr)
        | E::IsFalse(expr)
        | E::IsNotTrue(expr)
        | E::IsNotFalse(expr) => contains_agg(expr),
        E::In { expr, target, .. } => {
            contains_agg(expr)
                || match target {
                    ast::InTarget::List(l) => l.iter().any(contains_agg),
                    _ => false,
                }
        }
        E::Between {
            expr, low, high, ..
        } => contains_agg(expr) || contains_agg(low) || contains_agg(high),
        E::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            operand.as_deref().is_some_and(contains_agg)
                || conditions
                    .iter()
                    .any(|c| contains_agg(&c.condition) || contains_agg(&c.result))
                || else_result.as_deref().is_some_and(contains_agg)
        }
        _ => false,
    }
}

fn is_column_ref(e: &ast::Expr) -> bool {
    matches!(
        strip_nested(e),
        ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_)
    )
}

fn unsupported_at(what: String, node: &impl Spanned) -> PlanError {
    err_at(PlanError::unsupported(what), node)
}

fn validation_at(what: String, node: &impl Spanned) -> PlanError {
    err_at(PlanError::validation(what), node)
}

/// The wider of two numeric types.
fn wider(a: DataType, b: DataType) -> DataType {
    use DataType::*;
    match (a, b) {
        (Double, _) | (_, Double) => Double,
        (BigInt, _) | (_, BigInt) => BigInt,
        _ => Int,
    }
}

/// Whether two types compare (numbers with numbers, otherwise equal types).
fn comparable(a: Option<DataType>, b: Option<DataType>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a == b || (a.is_numeric() && b.is_numeric()),
        _ => true,
    }
}

/// The common type of several branch types (CASE), if they have one.
fn common_type(types: &[Option<DataType>]) -> Result<Option<DataType>, (DataType, DataType)> {
    let mut acc: Option<DataType> = None;
    for t in types.iter().flatten() {
        acc = Some(match acc {
            None => *t,
            Some(a) if a == *t => a,
            Some(a) if a.is_numeric() && t.is_numeric() => wider(a, *t),
            Some(a) => return Err((a, *t)),
        });
    }
    Ok(acc)
}

/// Converts an integer-typed expression to DOUBLE where the result is DOUBLE.
fn coerce(t: Typed, to: Option<DataType>) -> Expr {
    match (t.ty, to) {
        (Some(from), Some(DataType::Double)) if from.is_integer() => {
            Expr::ToDouble(Box::new(t.expr))
        }
        _ => t.expr,
    }
}

/// The milliseconds of `INTERVAL 'n' unit` (SECOND, MINUTE, HOUR or DAY,
/// singular or plural; `n` may have up to 3 decimals for SECOND).
pub(crate) fn interval_millis(iv: &ast::Interval) -> Result<i64, PlanError> {
    use ast::DateTimeField as F;
    let node = &ast::Expr::Interval(iv.clone());
    let (unit_ms, unit) = match &iv.leading_field {
        Some(F::Second | F::Seconds) => (1000, "SECOND"),
        Some(F::Minute | F::Minutes) => (60_000, "MINUTE"),
        Some(F::Hour | F::Hours) => (3_600_000, "HOUR"),
        Some(F::Day | F::Days) => (86_400_000, "DAY"),
        _ => {
            return Err(unsupported_at(
                format!("interval '{iv}' is not supported (the lab takes INTERVAL 'n' SECOND, MINUTE, HOUR or DAY)"),
                node,
            ))
        }
    };
    if iv.last_field.is_some() {
        return Err(unsupported_at(
            format!("interval '{iv}' is not supported (the lab takes INTERVAL 'n' SECOND, MINUTE, HOUR or DAY)"),
            node,
        ));
    }
    let text = match iv.value.as_ref() {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) => s.clone(),
            ast::Value::Number(s, _) => s.clone(),
            other => other.to_string(),
        },
        other => other.to_string(),
    };
    let bad = || {
        validation_at(
            format!("Illegal interval literal format '{text}' for INTERVAL {unit}"),
            node,
        )
    };
    let t = text.trim();
    let (negative, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let (whole, frac) = match t.split_once('.') {
        Some((w, f)) => (w, f),
        None => (t, ""),
    };
    if whole.is_empty()
        || !whole.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
        || frac.len() > 3
        || (!frac.is_empty() && unit != "SECOND")
    {
        return Err(bad());
    }
    let whole: i64 = whole.parse().map_err(|_| bad())?;
    let frac_ms: i64 = if frac.is_empty() {
        0
    } else {
        frac.parse::<i64>().map_err(|_| bad())? * 10i64.pow(3 - frac.len() as u32)
    };
    let ms = whole
        .checked_mul(unit_ms)
        .and_then(|m| m.checked_add(frac_ms))
        .ok_or_else(bad)?;
    Ok(if negative { -ms } else { ms })
}

/// `literal * other` (or `other * literal`) of a decimal literal (`0.908`,
/// at most 18 digits) and an integer, as [`Expr::DecimalTimes`]: exact, as
/// Flink's DECIMAL product is.
fn decimal_times(literal: &ast::Expr, other: &Typed, literal_first: bool) -> Option<Typed> {
    let ast::Expr::Value(v) = literal else {
        return None;
    };
    let ast::Value::Number(s, _) = &v.value else {
        return None;
    };
    let (whole, fraction) = s.split_once('.')?;
    let digits = format!("{whole}{fraction}");
    if digits.len() > 18 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !other.ty.is_some_and(|t| t.is_integer()) {
        return None;
    }
    Some(Typed::new(
        Expr::DecimalTimes {
            expr: Box::new(other.expr.clone()),
            unscaled: digits.parse().ok()?,
            scale: fraction.len() as u32,
            literal_first,
        },
        DataType::Double,
        other.nullable,
    ))
}

fn literal_number(s: &str, node: &impl Spanned) -> Result<Typed, PlanError> {
    if s.contains(['.', 'e', 'E']) {
        let d: f64 = s
            .parse()
            .map_err(|_| validation_at(format!("invalid numeric literal '{s}'"), node))?;
        return Ok(Typed::new(
            Expr::Literal(Value::Double(d)),
            DataType::Double,
            false,
        ));
    }
    let i: i64 = s.parse().map_err(|_| {
        validation_at(
            format!("numeric literal '{s}' is out of range for BIGINT"),
            node,
        )
    })?;
    let ty = if i32::try_from(i).is_ok() {
        DataType::Int
    } else {
        DataType::BigInt
    };
    Ok(Typed::new(Expr::Literal(Value::Int(i)), ty, false))
}

impl<'a> Ctx<'a> {
    pub fn plain(scope: &'a Scope, clause: &'static str) -> Ctx<'a> {
        Ctx {
            scope,
            agg: None,
            clause,
        }
    }

    /// Binds `e`; requires a BOOLEAN (or NULL) result.
    pub fn bind_predicate(&mut self, e: &ast::Expr) -> Result<Typed, PlanError> {
        let t = self.bind(e)?;
        match t.ty {
            Some(DataType::Boolean) | None => Ok(t),
            Some(other) => Err(validation_at(
                format!(
                    "{} condition must be BOOLEAN, found {other}: '{e}'",
                    self.clause
                ),
                e,
            )),
        }
    }

    pub fn bind(&mut self, e: &ast::Expr) -> Result<Typed, PlanError> {
        if self.agg.is_some() {
            if let Some(t) = self.try_group(e)? {
                return Ok(t);
            }
        }
        self.bind_node(e)
    }

    /// Aggregate mode: an aggregate call, a group expression, or a constant.
    fn try_group(&mut self, e: &ast::Expr) -> Result<Option<Typed>, PlanError> {
        if let ast::Expr::Function(f) = e {
            if agg_func_name(f).is_some() {
                return self.bind_agg_call(f, None).map(Some);
            }
        }
        if contains_agg(e) {
            return Ok(None);
        }
        let plain = Ctx::plain(self.scope, self.clause).bind(e)?;
        let agg = self.agg.as_deref().expect("aggregate mode");
        if let Some(i) = agg.groups.iter().position(|g| g.expr == plain.expr) {
            let g = &agg.groups[i];
            return Ok(Some(Typed {
                expr: Expr::Column(i),
                ty: g.ty,
                nullable: g.nullable,
            }));
        }
        let mut cols = Vec::new();
        plain.expr.columns(&mut cols);
        if cols.is_empty() {
            return Ok(Some(plain));
        }
        if is_column_ref(e) {
            return Err(validation_at(
                format!(
                    "Expression '{}' is not being grouped (add it to GROUP BY or aggregate it, e.g. MAX({}))",
                    strip_nested(e),
                    strip_nested(e)
                ),
                e,
            ));
        }
        Ok(None)
    }

    /// Aggregate mode: the column `c` of the FROM scope (from `*`), which
    /// must be grouped.
    pub fn grouped_column(&mut self, c: usize) -> Result<Typed, PlanError> {
        let agg = self.agg.as_deref().expect("aggregate mode");
        match agg.groups.iter().position(|g| g.expr == Expr::Column(c)) {
            Some(i) => Ok(Typed {
                expr: Expr::Column(i),
                ty: agg.groups[i].ty,
                nullable: agg.groups[i].nullable,
            }),
            None => Err(PlanError::validation(format!(
                "Expression '{}' is not being grouped (SELECT * in an aggregate query needs every column in GROUP BY)",
                self.scope.display(c)
            ))),
        }
    }

    fn bind_node(&mut self, e: &ast::Expr) -> Result<Typed, PlanError> {
        use ast::Expr as E;
        match e {
            E::Identifier(id) => self.column(std::slice::from_ref(id)),
            E::CompoundIdentifier(ids) => self.column(ids),
            E::Value(v) => self.literal(v),
            E::Interval(iv) => {
                let ms = interval_millis(iv)?;
                Ok(Typed::new(
                    Expr::Literal(Value::Int(ms)),
                    DataType::Interval,
                    false,
                ))
            }
            E::Nested(inner) => self.bind(inner),
            E::UnaryOp { op, expr } => self.unary(e, *op, expr),
            E::BinaryOp { left, op, right } => self.binary(e, op, left, right),
            E::IsNull(x) | E::IsNotNull(x) => {
                let t = self.bind(x)?;
                Ok(Typed::new(
                    Expr::IsNull {
                        expr: Box::new(t.expr),
                        negated: matches!(e, E::IsNotNull(_)),
                    },
                    DataType::Boolean,
                    false,
                ))
            }
            E::IsTrue(x) | E::IsFalse(x) | E::IsNotTrue(x) | E::IsNotFalse(x) => {
                let t = self.bind(x)?;
                self.require_bool(&t, "IS TRUE/FALSE", x)?;
                let (negate_operand, when_true) = match e {
                    E::IsTrue(_) => (false, true),
                    E::IsFalse(_) => (true, true),
                    E::IsNotTrue(_) => (false, false),
                    _ => (true, false),
                };
                let cond = if negate_operand {
                    Expr::Not(Box::new(t.expr))
                } else {
                    t.expr
                };
                Ok(Typed::new(
                    Expr::Case {
                        operand: None,
                        branches: vec![(cond, Expr::Literal(Value::Bool(when_true)))],
                        otherwise: Some(Box::new(Expr::Literal(Value::Bool(!when_true)))),
                    },
                    DataType::Boolean,
                    false,
                ))
            }
            E::In {
                expr,
                target,
                negated,
                ..
            } => {
                let list = match target {
                    ast::InTarget::List(l) => l,
                    ast::InTarget::Subquery(_) => {
                        return Err(unsupported_at(
                            "subqueries in expressions (IN (SELECT ...)) are not supported".into(),
                            e,
                        ))
                    }
                    _ => return Err(unsupported_at(format!("'{e}' is not supported"), e)),
                };
                let t = self.bind(expr)?;
                let mut items = Vec::with_capacity(list.len());
                let mut nullable = t.nullable;
                for item in list {
                    let it = self.bind(item)?;
                    if !comparable(t.ty, it.ty) {
                        return Err(validation_at(
                            format!(
                                "Cannot compare {} with {} in IN list: '{e}'",
                                ty_name(t.ty),
                                ty_name(it.ty)
                            ),
                            item,
                        ));
                    }
                    nullable |= it.nullable;
                    items.push(it.expr);
                }
                Ok(Typed::new(
                    Expr::InList {
                        expr: Box::new(t.expr),
                        list: items,
                        negated: *negated,
                    },
                    DataType::Boolean,
                    nullable,
                ))
            }
            E::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let x = self.bind(expr)?;
                let lo = self.bind(low)?;
                let hi = self.bind(high)?;
                for b in [&lo, &hi] {
                    if !comparable(x.ty, b.ty) {
                        return Err(validation_at(
                            format!(
                                "Cannot compare {} with {} in BETWEEN: '{e}'",
                                ty_name(x.ty),
                                ty_name(b.ty)
                            ),
                            e,
                        ));
                    }
                }
                let nullable = x.nullable || lo.nullable || hi.nullable;
                let expr = if *negated {
                    Expr::bin(
                        BinOp::Or,
                        Expr::bin(BinOp::Lt, x.expr.clone(), lo.expr),
                        Expr::bin(BinOp::Gt, x.expr, hi.expr),
                    )
                } else {
                    Expr::bin(
                        BinOp::And,
                        Expr::bin(BinOp::GtEq, x.expr.clone(), lo.expr),
                        Expr::bin(BinOp::LtEq, x.expr, hi.expr),
                    )
                };
                Ok(Typed::new(expr, DataType::Boolean, nullable))
            }
            E::Case {
                operand,
                conditions,
                else_result,
                ..
            } => self.case(e, operand.as_deref(), conditions, else_result.as_deref()),
            E::Cast {
                kind,
                expr,
                data_type,
                format,
            } => self.cast(e, kind, expr, data_type, format.is_some()),
            E::Function(f) => self.function(e, f),
            E::Subquery(_) | E::Exists { .. } => Err(unsupported_at(
                "subqueries in expressions are not supported".into(),
                e,
            )),
            E::Like { .. } | E::ILike { .. } | E::SimilarTo { .. } | E::RLike { .. } => {
                Err(unsupported_at(format!("LIKE is not supported: '{e}'"), e))
            }
            E::Wildcard(_) | E::QualifiedWildcard(..) => Err(unsupported_at(
                format!("'{e}' is not allowed in an expression"),
                e,
            )),
            other => Err(unsupported_at(
                format!("expression '{other}' is not supported"),
                other,
            )),
        }
    }

    fn column(&mut self, parts: &[ast::Ident]) -> Result<Typed, PlanError> {
        let i = self.scope.resolve(parts)?;
        if self.agg.is_some() {
            // Reached only for columns that are not grouped (see try_group).
            let name = parts
                .iter()
                .map(|p| p.value.as_str())
                .collect::<Vec<_>>()
                .join(".");
            return Err(PlanError::validation(format!(
                "Expression '{name}' is not being grouped (add it to GROUP BY or aggregate it, e.g. MAX({name}))"
            ))
            .at_ident(parts.last()));
        }
        let f = &self.scope.fields[i];
        Ok(Typed::new(Expr::Column(i), f.data_type, f.nullable))
    }

    fn literal(&mut self, v: &ast::ValueWithSpan) -> Result<Typed, PlanError> {
        match &v.value {
            ast::Value::Number(s, _) => literal_number(s, v),
            ast::Value::SingleQuotedString(s) => Ok(Typed::new(
                Expr::Literal(Value::str(s)),
                DataType::String,
                false,
            )),
            ast::Value::Boolean(b) => Ok(Typed::new(
                Expr::Literal(Value::Bool(*b)),
                DataType::Boolean,
                false,
            )),
            ast::Value::Null => Ok(Typed {
                expr: Expr::Literal(Value::Null),
                ty: None,
                nullable: true,
            }),
            other => Err(unsupported_at(
                format!("literal {other} is not supported"),
                v,
            )),
        }
    }

    fn require_bool(&self, t: &Typed, op: &str, node: &ast::Expr) -> Result<(), PlanError> {
        match t.ty {
            Some(DataType::Boolean) | None => Ok(()),
            Some(other) => Err(validation_at(
                format!("{op} expects BOOLEAN operands, found {other}: '{node}'"),
                node,
            )),
        }
    }

    fn require_numeric(&self, t: &Typed, op: &str, node: &ast::Expr) -> Result<(), PlanError> {
        match t.ty {
            Some(ty) if !ty.is_numeric() => Err(validation_at(
                format!("Cannot apply '{op}' to {ty}: '{node}' is not numeric"),
                node,
            )),
            _ => Ok(()),
        }
    }

    fn unary(
        &mut self,
        e: &ast::Expr,
        op: ast::UnaryOperator,
        x: &ast::Expr,
    ) -> Result<Typed, PlanError> {
        match op {
            ast::UnaryOperator::Minus => {
                if let ast::Expr::Value(v) = x {
                    if let ast::Value::Number(s, _) = &v.value {
                        return literal_number(&format!("-{s}"), e);
                    }
                }
                let t = self.bind(x)?;
                self.require_numeric(&t, "-", x)?;
                Ok(Typed {
                    expr: Expr::Neg(Box::new(t.expr)),
                    ..t
                })
            }
            ast::UnaryOperator::Plus => {
                let t = self.bind(x)?;
                self.require_numeric(&t, "+", x)?;
                Ok(t)
            }
            ast::UnaryOperator::Not => {
                let t = self.bind(x)?;
                self.require_bool(&t, "NOT", x)?;
                Ok(Typed::new(
                    Expr::Not(Box::new(t.expr)),
                    DataType::Boolean,
                    t.nullable,
                ))
            }
            other => Err(unsupported_at(
                format!("operator {other} is not supported"),
                e,
            )),
        }
    }

    fn arithmetic(&self, e: &ast::Expr, op: BinOp, l: Typed, r: Typed) -> Result<Typed, PlanError> {
        // A timestamp plus or minus an interval is a timestamp of its type.
        if let (Some(t), Some(DataType::Interval), BinOp::Add | BinOp::Sub) = (l.ty, r.ty, op) {
            if t.is_timestamp() {
                return Ok(Typed {
                    expr: Expr::bin(op, l.expr, r.expr),
                    ty: Some(t),
                    nullable: l.nullable,
                });
            }
        }
        if let (Some(DataType::Interval), Some(t), BinOp::Add) = (l.ty, r.ty, op) {
            if t.is_timestamp() {
                return Ok(Typed {
                    expr: Expr::bin(op, l.expr, r.expr),
                    ty: Some(t),
                    nullable: r.nullable,
                });
            }
        }
        let ok = |t: Option<DataType>| t.is_none_or(|t| t.is_numeric());
        if !ok(l.ty) || !ok(r.ty) {
            return Err(validation_at(
                format!(
                    "Cannot apply '{}' to arguments of type {} and {}: '{e}' (arithmetic needs numeric operands)",
                    op.symbol(),
                    ty_name(l.ty),
                    ty_name(r.ty)
                ),
                e,
            ));
        }
        let ty = match (l.ty, r.ty) {
            (Some(a), Some(b)) => Some(wider(a, b)),
            (a, b) => a.or(b),
        };
        let nullable = l.nullable || r.nullable || matches!(op, BinOp::Div | BinOp::Mod);
        Ok(Typed {
            expr: Expr::bin(op, l.expr, r.expr),
            ty,
            nullable,
        })
    }

    fn binary(
        &mut self,
        e: &ast::Expr,
        op: &ast::BinaryOperator,
        left: &ast::Expr,
        right: &ast::Expr,
    ) -> Result<Typed, PlanError> {
        use ast::BinaryOperator as B;
        let bop = match op {
            B::Plus => BinOp::Add,
            B::Minus => BinOp::Sub,
            B::Multiply => BinOp::Mul,
            B::Divide => BinOp::Div,
            B::Modulo => BinOp::Mod,
            B::StringConcat => BinOp::Concat,
            B::Eq => BinOp::Eq,
            B::NotEq => BinOp::NotEq,
            B::Lt => BinOp::Lt,
            B::LtEq => BinOp::LtEq,
            B::Gt => BinOp::Gt,
            B::GtEq => BinOp::GtEq,
            B::And => BinOp::And,
            B::Or => BinOp::Or,
            other => {
                return Err(unsupported_at(
                    format!("operator {other} is not supported"),
                    e,
                ))
            }
        };
        let l = self.bind(left)?;
        let r = self.bind(right)?;
        if bop == BinOp::Mul {
            if let Some(t) =
                decimal_times(left, &r, true).or_else(|| decimal_times(right, &l, false))
            {
                return Ok(t);
            }
        }
        match bop {
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod => {
                self.arithmetic(e, bop, l, r)
            }
            BinOp::Concat => {
                let ok = |t: Option<DataType>| matches!(t, None | Some(DataType::String));
                if !ok(l.ty) || !ok(r.ty) {
                    return Err(validation_at(
                        format!(
                            "Cannot apply '||' to arguments of type {} and {}: '{e}' (concatenation needs STRING operands)",
                            ty_name(l.ty),
                            ty_name(r.ty)
                        ),
                        e,
                    ));
                }
                Ok(Typed::new(
                    Expr::bin(bop, l.expr, r.expr),
                    DataType::String,
                    l.nullable || r.nullable,
                ))
            }
            BinOp::And | BinOp::Or => {
                self.require_bool(&l, bop.symbol(), left)?;
                self.require_bool(&r, bop.symbol(), right)?;
                Ok(Typed::new(
                    Expr::bin(bop, l.expr, r.expr),
                    DataType::Boolean,
                    l.nullable || r.nullable,
                ))
            }
            _ => {
                if !comparable(l.ty, r.ty) {
                    return Err(validation_at(
                        format!(
                            "Cannot compare {} with {}: '{e}'",
                            ty_name(l.ty),
                            ty_name(r.ty)
                        ),
                        e,
                    ));
                }
                Ok(Typed::new(
                    Expr::bin(bop, l.expr, r.expr),
                    DataType::Boolean,
                    l.nullable || r.nullable,
                ))
            }
        }
    }

    fn case(
        &mut self,
        e: &ast::Expr,
        operand: Option<&ast::Expr>,
        conditions: &[ast::CaseWhen],
        else_result: Option<&ast::Expr>,
    ) -> Result<Typed, PlanError> {
        let op = operand.map(|o| self.bind(o)).transpose()?;
        let mut whens = Vec::with_capacity(conditions.len());
        let mut results = Vec::with_capacity(conditions.len() + 1);
        for c in conditions {
            let w = self.bind(&c.condition)?;
            match &op {
                Some(o) => {
                    if !comparable(o.ty, w.ty) {
                        return Err(validation_at(
                            format!(
                                "Cannot compare CASE operand of type {} with WHEN value of type {}: '{}'",
                                ty_name(o.ty),
                                ty_name(w.ty),
                                c.condition
                            ),
                            &c.condition,
                        ));
                    }
                }
                None => self.require_bool(&w, "CASE WHEN", &c.condition)?,
            }
            whens.push(w.expr);
            results.push(self.bind(&c.result)?);
        }
        let otherwise = else_result.map(|x| self.bind(x)).transpose()?;
        let mut types: Vec<Option<DataType>> = results.iter().map(|r| r.ty).collect();
        if let Some(o) = &otherwise {
            types.push(o.ty);
        }
        let ty = common_type(&types).map_err(|(a, b)| {
            validation_at(
                format!("CASE branches have incompatible types {a} and {b}: '{e}'"),
                e,
            )
        })?;
        let nullable =
            otherwise.as_ref().is_none_or(|o| o.nullable) || results.iter().any(|r| r.nullable);
        let branches = whens
            .into_iter()
            .zip(results)
            .map(|(w, r)| (w, coerce(r, ty)))
            .collect();
        Ok(Typed {
            expr: Expr::Case {
                operand: op.map(|o| Box::new(o.expr)),
                branches,
                otherwise: otherwise.map(|o| Box::new(coerce(o, ty))),
            },
            ty,
            nullable,
        })
    }

    fn cast(
        &mut self,
        e: &ast::Expr,
        kind: &ast::CastKind,
        x: &ast::Expr,
        target: &ast::DataType,
        has_format: bool,
    ) -> Result<Typed, PlanError> {
        if !matches!(kind, ast::CastKind::Cast) || has_format {
            return Err(unsupported_at(
                format!("'{e}' is not supported (only CAST(x AS DOUBLE))"),
                e,
            ));
        }
        let to = lab_type(target).ok_or_else(|| {
            unsupported_at(
                format!(
                    "CAST to {target} is not supported (the lab's types are {SUPPORTED_TYPES})"
                ),
                e,
            )
        })?;
        let t = self.bind(x)?;
        match (t.ty, to) {
            (None, _) => Ok(Typed::new(Expr::Literal(Value::Null), to, true)),
            (Some(from), DataType::Double) if from.is_integer() => {
                Ok(Typed::new(Expr::ToDouble(Box::new(t.expr)), to, t.nullable))
            }
            (Some(from), _) if from == to => Ok(Typed::new(t.expr, to, t.nullable)),
            (Some(DataType::Int), DataType::BigInt) => Ok(Typed::new(t.expr, to, t.nullable)),
            (Some(from), _) => Err(unsupported_at(
                format!(
                    "CAST from {from} to {to} is not supported (the lab casts numbers to DOUBLE and INT to BIGINT): '{e}'"
                ),
                e,
            )),
        }
    }

    /// Positional expression arguments of a scalar function.
    fn scalar_args<'f>(
        &self,
        e: &ast::Expr,
        f: &'f ast::Function,
        name: &str,
    ) -> Result<Vec<&'f ast::Expr>, PlanError> {
        if f.over.is_some() {
            return Err(unsupported_at(
                format!("window functions (OVER) are not supported: '{e}'"),
                e,
            ));
        }
        if f.filter.is_some() {
            return Err(validation_at(
                format!("FILTER is only allowed for aggregate functions, not {name}"),
                e,
            ));
        }
        if !f.within_group.is_empty()
            || f.null_treatment.is_some()
            || !matches!(f.parameters, ast::FunctionArguments::None)
        {
            return Err(unsupported_at(format!("'{e}' is not supported"), e));
        }
        let list = match &f.args {
            ast::FunctionArguments::List(l) => l,
            ast::FunctionArguments::None => return Ok(vec![]),
            ast::FunctionArguments::Subquery(_) => {
                return Err(unsupported_at(
                    "subqueries in expressions are not supported".into(),
                    e,
                ))
            }
        };
        if list.duplicate_treatment.is_some() || !list.clauses.is_empty() {
            return Err(unsupported_at(format!("'{e}' is not supported"), e));
        }
        list.args
            .iter()
            .map(|a| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => Ok(x),
                _ => Err(unsupported_at(
                    format!("argument '{a}' of {name} is not supported"),
                    e,
                )),
            })
            .collect()
    }

    /// An auxiliary function of the group window (`TUMBLE_START(ts,
    /// INTERVAL '5' SECOND)`, ...): `w$start`, `w$end` or `w$rowtime`
    /// (`w$end` - 1 ms, of the time attribute's type) of the window, grouped
    /// in aggregate mode. `None` when `name` is not one.
    fn group_window_property(
        &mut self,
        e: &ast::Expr,
        f: &ast::Function,
        name: &str,
    ) -> Result<Option<Typed>, PlanError> {
        let Some((prefix, property)) = name.rsplit_once('_') else {
            return Ok(None);
        };
        if !matches!(prefix, "TUMBLE" | "HOP" | "SESSION")
            || !matches!(property, "START" | "END" | "ROWTIME" | "PROCTIME")
        {
            return Ok(None);
        }
        let Some(gw) = self.scope.group_window.clone() else {
            return Err(validation_at(
                format!(
                    "{name} is an auxiliary function of a group window: it needs \
                     GROUP BY {prefix}(...) in its query"
                ),
                e,
            ));
        };
        let args = self.scalar_args(e, f, name)?;
        let mut plain = Ctx::plain(self.scope, self.clause);
        let mut bound = Vec::with_capacity(args.len());
        for a in args {
            bound.push(plain.bind(a)?);
        }
        let same = prefix == gw.name
            && bound.len() == 1 + gw.sizes.len()
            && bound[0].expr == Expr::Column(gw.time_col)
            && bound[1..].iter().zip(&gw.sizes).all(|(b, &ms)| {
                b.ty == Some(DataType::Interval) && b.expr == Expr::Literal(Value::Int(ms))
            });
        if !same {
            return Err(validation_at(
                format!(
                    "{name}(...) must take the arguments of the query's group window {}",
                    gw.text
                ),
                e,
            ));
        }
        if property == "PROCTIME" {
            return Err(unsupported_at(
                format!("{name}: an event-time group window has no processing time (the lab runs event-time group windows only)"),
                e,
            ));
        }
        let k = match property {
            "START" => 0,
            "END" => 1,
            _ => 2,
        };
        let ty = if k == 2 {
            self.scope.fields[gw.start_col + 2].data_type
        } else {
            DataType::Timestamp
        };
        let expr = match self.agg.as_deref() {
            Some(agg) => {
                let c = Expr::Column(gw.start_col + k.min(1));
                let i = agg
                    .groups
                    .iter()
                    .position(|g| g.expr == c)
                    .expect("the group window's columns are grouped");
                if k == 2 {
                    Expr::bin(BinOp::Sub, Expr::Column(i), Expr::Literal(Value::Int(1)))
                } else {
                    Expr::Column(i)
                }
            }
            None => Expr::Column(gw.start_col + k),
        };
        Ok(Some(Typed::new(expr, ty, false)))
    }

    fn function(&mut self, e: &ast::Expr, f: &ast::Function) -> Result<Typed, PlanError> {
        if f.over.is_some() {
            return Err(unsupported_at(
                format!("window functions (OVER) are not supported: '{e}'"),
                e,
            ));
        }
        if let Some(name) = agg_func_name(f) {
            if self.agg.is_some() {
                return self.bind_agg_call(f, None);
            }
            return Err(validation_at(
                format!(
                    "Aggregate function {name} is not allowed in {}",
                    self.clause
                ),
                e,
            ));
        }
        let name = f.name.to_string().to_uppercase();
        if let Some(t) = self.group_window_property(e, f, &name)? {
            return Ok(t);
        }
        match name.as_str() {
            "MOD" => {
                let args = self.scalar_args(e, f, "MOD")?;
                let [a, b] = args.as_slice() else {
                    return Err(validation_at(
                        format!("MOD expects 2 arguments, found {}", args.len()),
                        e,
                    ));
                };
                let l = self.bind(a)?;
                let r = self.bind(b)?;
                self.arithmetic(e, BinOp::Mod, l, r)
            }
            "TO_TIMESTAMP_LTZ" => {
                let args = self.scalar_args(e, f, "TO_TIMESTAMP_LTZ")?;
                let [a, p] = args.as_slice() else {
                    return Err(validation_at(
                        format!(
                            "TO_TIMESTAMP_LTZ expects 2 arguments (epoch, precision 0 or 3), found {}",
                            args.len()
                        ),
                        e,
                    ));
                };
                let unit_ms = match p {
                    ast::Expr::Value(v) => match &v.value {
                        ast::Value::Number(n, _) if n == "3" => 1,
                        ast::Value::Number(n, _) if n == "0" => 1000,
                        _ => 0,
                    },
                    _ => 0,
                };
                if unit_ms == 0 {
                    return Err(validation_at(
                        format!("TO_TIMESTAMP_LTZ's precision must be 0 (seconds) or 3 (milliseconds), found '{p}'"),
                        *p,
                    ));
                }
                let t = self.bind(a)?;
                if t.ty.is_some_and(|t| !t.is_integer()) {
                    return Err(validation_at(
                        format!(
                            "TO_TIMESTAMP_LTZ takes an integer epoch, found {}: '{a}'",
                            ty_name(t.ty)
                        ),
                        *a,
                    ));
                }
                Ok(Typed::new(
                    Expr::ToTimestamp {
                        expr: Box::new(t.expr),
                        unit_ms,
                    },
                    DataType::TimestampLtz,
                    t.nullable,
                ))
            }
            "PROCTIME" => Err(unsupported_at(
                "PROCTIME() is supported as a table's computed column (pt AS PROCTIME()), \
                 not in a query"
                    .to_string(),
                e,
            )),
            "HASH_CODE" => {
                let args = self.scalar_args(e, f, "HASH_CODE")?;
                let [a] = args.as_slice() else {
                    return Err(validation_at(
                        format!("HASH_CODE expects 1 argument, found {}", args.len()),
                        e,
                    ));
                };
                let t = self.bind(a)?;
                Ok(Typed::new(Expr::Hash(Box::new(t.expr)), DataType::Int, t.nullable))
            }
            _ if StringFn::by_name(&name).is_some() => {
                let func = StringFn::by_name(&name).expect("a string function");
                self.string_function(e, f, func)
            }
            _ => Err(unsupported_at(
                format!(
                    "function {name} is not supported (the lab supports COUNT, SUM, MIN, MAX, AVG, MOD, HASH_CODE, TO_TIMESTAMP_LTZ, CAST(x AS DOUBLE), LOWER, UPPER, REGEXP_EXTRACT, SPLIT_INDEX and DATE_FORMAT)"
                ),
                e,
            )),
        }
    }

    /// A string function of `operators::string_fns`: its arguments'
    /// number and types as Flink's, `DATE_FORMAT`'s pattern a literal the
    /// lab supports.
    fn string_function(
        &mut self,
        e: &ast::Expr,
        f: &ast::Function,
        func: StringFn,
    ) -> Result<Typed, PlanError> {
        let name = func.name();
        let args = self.scalar_args(e, f, name)?;
        let kinds = func.args();
        let (most, least) = (kinds.len(), kinds.len() - func.optional());
        if args.len() < least || args.len() > most {
            let count = if least == most {
                most.to_string()
            } else {
                format!("{least} or {most}")
            };
            return Err(validation_at(
                format!("{name} expects {count} arguments, found {}", args.len()),
                e,
            ));
        }
        let mut bound = Vec::with_capacity(args.len());
        let mut nullable = func.nullable();
        for (a, kind) in args.iter().zip(kinds) {
            let t = self.bind(a)?;
            let (ok, want) = match (t.ty, kind) {
                (None, _) => (true, ""),
                (Some(ty), ArgKind::String) => (ty == DataType::String, "STRING"),
                (Some(ty), ArgKind::Integer) => (ty.is_integer(), "an integer"),
                (Some(ty), ArgKind::Timestamp) => (ty.is_timestamp(), "a TIMESTAMP"),
            };
            if !ok {
                return Err(validation_at(
                    format!("{name} takes {want} here, found {}: '{a}'", ty_name(t.ty)),
                    *a,
                ));
            }
            nullable |= t.nullable;
            bound.push(t.expr);
        }
        if func == StringFn::DateFormat {
            match &bound[1] {
                Expr::Literal(Value::Str(p)) => {
                    string_fns::parse_date_format(p)
                        .map_err(|m| unsupported_at(format!("DATE_FORMAT: {m}"), args[1]))?;
                }
                Expr::Literal(Value::Null) => {}
                _ => {
                    return Err(unsupported_at(
                        format!(
                            "DATE_FORMAT's pattern must be a string literal: '{}'",
                            args[1]
                        ),
                        args[1],
                    ))
                }
            }
        }
        Ok(Typed::new(
            Expr::StringFn(func, bound),
            DataType::String,
            nullable,
        ))
    }

    /// Registers an aggregate call (aggregate mode); `preferred` is its
    /// output name when the call is a whole select item.
    pub fn bind_agg_call(
        &mut self,
        f: &ast::Function,
        preferred: Option<String>,
    ) -> Result<Typed, PlanError> {
        let name = agg_func_name(f).expect("aggregate function");
        let node = f;
        let Some(_) = self.agg else {
            return Err(validation_at(
                format!(
                    "Aggregate function {name} is not allowed in {}",
                    self.clause
                ),
                node,
            ));
        };
        if f.over.is_some() {
            return Err(unsupported_at(
                format!("window functions (OVER) are not supported: '{node}'"),
                node,
            ));
        }
        if !f.within_group.is_empty()
            || f.null_treatment.is_some()
            || !matches!(f.parameters, ast::FunctionArguments::None)
        {
            return Err(unsupported_at(format!("'{node}' is not supported"), node));
        }
        let list = match &f.args {
            ast::FunctionArguments::List(l) => l,
            _ => {
                return Err(validation_at(
                    format!("{name} expects an argument, e.g. {name}(x)"),
                    node,
                ))
            }
        };
        if !list.clauses.is_empty() {
            return Err(unsupported_at(
                format!("clauses inside {name}(...) are not supported: '{node}'"),
                node,
            ));
        }
        let distinct = matches!(
            list.duplicate_treatment,
            Some(ast::DuplicateTreatment::Distinct)
        );
        let scope = self.scope;
        let mut inner = Ctx::plain(scope, "the argument of another aggregate function");
        let (func, arg) = match (name, list.args.as_slice()) {
            ("COUNT", [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard)]) => {
                if distinct {
                    return Err(validation_at("COUNT(DISTINCT *) is not valid".into(), node));
                }
                (AggFunc::CountStar, None)
            }
            (_, [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x))]) => {
                let func = match name {
                    "COUNT" => AggFunc::Count,
                    "SUM" => AggFunc::Sum,
                    "MIN" => AggFunc::Min,
                    "MAX" => AggFunc::Max,
                    _ => AggFunc::Avg,
                };
                (func, Some((inner.bind(x)?, x)))
            }
            ("COUNT", args) if args.len() > 1 => {
                return Err(unsupported_at(
                    format!("COUNT with {} arguments is not supported", args.len()),
                    node,
                ))
            }
            (_, args) => {
                return Err(validation_at(
                    format!(
                        "{name} expects one argument{}, found {}",
                        if name == "COUNT" { " or *" } else { "" },
                        if args.is_empty() {
                            "none".to_string()
                        } else {
                            format!("'{}'", list)
                        }
                    ),
                    node,
                ))
            }
        };
        let filter = match &f.filter {
            Some(cond) => {
                let mut fctx = Ctx::plain(scope, "FILTER");
                Some(fctx.bind_predicate(cond)?)
            }
            None => None,
        };
        let agg = self.agg.as_deref_mut().expect("aggregate mode");
        let keyless = agg.groups.is_empty();
        let (ty, nullable, distinct) = match (&func, &arg) {
            (AggFunc::CountStar | AggFunc::Count, _) => (DataType::BigInt, false, distinct),
            (_, Some((t, x))) => {
                let Some(at) = t.ty else {
                    return Err(validation_at(
                        format!("Cannot infer the type of the argument of {name}: '{x}' is NULL"),
                        *x,
                    ));
                };
                let nullable = t.nullable || filter.is_some() || keyless;
                match func {
                    AggFunc::Sum | AggFunc::Avg if !at.is_numeric() => {
                        return Err(validation_at(
                            format!(
                            "Cannot apply '{name}' to arguments of type {at}: '{x}' is not numeric"
                        ),
                            *x,
                        ))
                    }
                    AggFunc::Sum if at.is_integer() => (DataType::BigInt, nullable, distinct),
                    // MIN/MAX of distinct values are MIN/MAX of all values.
                    AggFunc::Min | AggFunc::Max => (at, nullable, false),
                    _ => (at, nullable, distinct),
                }
            }
            (_, None) => unreachable!("only COUNT(*) has no argument"),
        };
        let arg_col = arg.map(|(t, _)| agg.pre_col(t, scope));
        let filter_col = filter.map(|t| agg.pre_col(t, scope));
        let ng = agg.groups.len();
        let same = |c: &PendingAgg| {
            c.func == func && c.arg == arg_col && c.distinct == distinct && c.filter == filter_col
        };
        let existing = agg
            .calls
            .iter()
            .position(|c| same(c) && (preferred.is_none() || c.generated_name));
        let k = match existing {
            Some(k) => {
                if let Some(p) = preferred {
                    agg.calls[k].name = p;
                    agg.calls[k].generated_name = false;
                }
                k
            }
            None => {
                let k = agg.calls.len();
                let (name, generated_name) = match preferred {
                    Some(p) => (p, false),
                    None => (format!("$f{}", ng + k), true),
                };
                agg.calls.push(PendingAgg {
                    func,
                    arg: arg_col,
                    distinct,
                    filter: filter_col,
                    name,
                    generated_name,
                    ty,
                    nullable,
                });
                k
            }
        };
        Ok(Typed::new(Expr::Column(ng + k), ty, nullable))
    }
}
