//! Scalar expressions over one row, bound to column positions.
//!
//! SQL three-valued logic: a comparison with NULL is NULL, `AND`/`OR` follow
//! Kleene logic, and a filter keeps a row only when its predicate is TRUE.
//! Integer arithmetic wraps instead of failing, integer division truncates,
//! and division or `MOD` by zero yields NULL rather than failing the job.

use crate::string_fns::StringFn;
use crate::value::{Row, Value};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
    And,
    Or,
    Concat,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "MOD",
            BinOp::Eq => "=",
            BinOp::NotEq => "<>",
            BinOp::Lt => "<",
            BinOp::LtEq => "<=",
            BinOp::Gt => ">",
            BinOp::GtEq => ">=",
            BinOp::And => "AND",
            BinOp::Or => "OR",
            BinOp::Concat => "||",
        }
    }
}

/// A scalar expression whose column references are positions in the input row.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Expr {
    Column(usize),
    Literal(Value),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Neg(Box<Expr>),
    IsNull {
        expr: Box<Expr>,
        negated: bool,
    },
    InList {
        expr: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
    },
    /// `CASE [operand] WHEN .. THEN .. [ELSE ..] END`.
    Case {
        operand: Option<Box<Expr>>,
        branches: Vec<(Expr, Expr)>,
        otherwise: Option<Box<Expr>>,
    },
    /// A deterministic non-negative hash of the value (`HASH_CODE`), used
    /// by split-distinct bucketing.
    Hash(Box<Expr>),
    /// `CAST(x AS DOUBLE)`-style widening to double.
    ToDouble(Box<Expr>),
    /// An integer times a decimal literal (`0.908 * price`, the literal
    /// `unscaled / 10^scale`). Flink multiplies exactly in DECIMAL; the lab,
    /// which has no DECIMAL, takes the exact product and rounds it to a
    /// DOUBLE once, which is what Flink's product gives as a DOUBLE
    /// (a double multiply would round twice: 108.96000000000001 for 108.96).
    DecimalTimes {
        expr: Box<Expr>,
        unscaled: i64,
        scale: u32,
        /// Whether the literal was written first (for display).
        literal_first: bool,
    },
    /// `TO_TIMESTAMP_LTZ(n, precision)`: an integer count of `unit_ms`
    /// milliseconds since the epoch as a timestamp.
    ToTimestamp {
        expr: Box<Expr>,
        unit_ms: i64,
    },
    /// `PROCTIME()`: the processing time, the lab's clock when the source
    /// read the row. Only a table's computed column holds it, and the read
    /// fills it in; evaluated anywhere else it is NULL.
    ProcTime,
    /// A string function (`LOWER`, `REGEXP_EXTRACT`, `SPLIT_INDEX`,
    /// `DATE_FORMAT`, ...) over its arguments.
    StringFn(StringFn, Vec<Expr>),
}

/// The double nearest `x * unscaled / 10^scale`, computed exactly.
fn exact_product(x: i64, unscaled: i64, scale: u32) -> f64 {
    let p = x as i128 * unscaled as i128;
    // Up to 2^53 the product is exact as a double and 10^scale (scale <=
    // 22) too, so one correctly rounded division gives the nearest double.
    if p.unsigned_abs() <= 1 << 53 && scale <= 22 {
        return p as f64 / 10f64.powi(scale as i32);
    }
    format!("{p}e-{scale}").parse().unwrap_or(f64::NAN)
}

/// A decimal literal as the nearest double.
fn decimal_value(unscaled: i64, scale: u32) -> f64 {
    exact_product(1, unscaled, scale)
}

impl Expr {
    /// [`Expr::DecimalTimes`] as the multiplication it was written as (the
    /// literal as a double), for display.
    pub fn as_multiply(&self) -> Expr {
        match self {
            Expr::DecimalTimes {
                expr,
                unscaled,
                scale,
                literal_first,
            } => {
                let lit = Expr::Literal(Value::Double(decimal_value(*unscaled, *scale)));
                let x = (**expr).clone();
                if *literal_first {
                    Expr::bin(BinOp::Mul, lit, x)
                } else {
                    Expr::bin(BinOp::Mul, x, lit)
                }
            }
            e => e.clone(),
        }
    }

    pub fn col(i: usize) -> Expr {
        Expr::Column(i)
    }
    pub fn lit(v: Value) -> Expr {
        Expr::Literal(v)
    }
    pub fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
        Expr::Binary(op, Box::new(l), Box::new(r))
    }

    /// Evaluates the expression over `row`.
    pub fn eval(&self, row: &[Value]) -> Value {
        match self {
            Expr::Column(i) => row[*i].clone(),
            Expr::Literal(v) => v.clone(),
            Expr::Binary(op, l, r) => match op {
                BinOp::And => and(l.eval(row), || r.eval(row)),
                BinOp::Or => or(l.eval(row), || r.eval(row)),
                _ => binary(*op, &l.eval(row), &r.eval(row)),
            },
            Expr::Not(e) => match e.eval(row) {
                Value::Bool(b) => Value::Bool(!b),
                _ => Value::Null,
            },
            Expr::Neg(e) => match e.eval(row) {
                Value::Int(i) => Value::Int(i.wrapping_neg()),
                Value::Double(d) => Value::Double(-d),
                _ => Value::Null,
            },
            Expr::IsNull { expr, negated } => Value::Bool(expr.eval(row).is_null() != *negated),
            Expr::InList {
                expr,
                list,
                negated,
            } => {
                let v = expr.eval(row);
                if v.is_null() {
                    return Value::Null;
                }
                let mut saw_null = false;
                for item in list {
                    let w = item.eval(row);
                    match compare(BinOp::Eq, &v, &w) {
                        Value::Bool(true) => return Value::Bool(!negated),
                        Value::Null => saw_null = true,
                        _ => {}
                    }
                }
                if saw_null {
                    Value::Null
                } else {
                    Value::Bool(*negated)
                }
            }
            Expr::Case {
                operand,
                branches,
                otherwise,
            } => {
                let op = operand.as_ref().map(|o| o.eval(row));
                for (when, then) in branches {
                    let hit = match &op {
                        Some(v) => compare(BinOp::Eq, v, &when.eval(row)),
                        None => when.eval(row),
                    };
                    if matches!(hit, Value::Bool(true)) {
                        return then.eval(row);
                    }
                }
                otherwise
                    .as_ref()
                    .map(|e| e.eval(row))
                    .unwrap_or(Value::Null)
            }
            Expr::Hash(e) => match e.eval(row) {
                Value::Null => Value::Null,
                v => Value::Int((stable_hash(std::slice::from_ref(&v)) & 0x7fff_ffff) as i64),
            },
            Expr::ToDouble(e) => match e.eval(row) {
                Value::Int(i) => Value::Double(i as f64),
                v @ Value::Double(_) => v,
                _ => Value::Null,
            },
            Expr::DecimalTimes {
                expr,
                unscaled,
                scale,
                ..
            } => match expr.eval(row) {
                Value::Int(i) => Value::Double(exact_product(i, *unscaled, *scale)),
                Value::Double(d) => Value::Double(d * decimal_value(*unscaled, *scale)),
                _ => Value::Null,
            },
            Expr::ToTimestamp { expr, unit_ms } => match expr.eval(row) {
                Value::Int(i) => Value::Ts(i.wrapping_mul(*unit_ms)),
                _ => Value::Null,
            },
            Expr::ProcTime => Value::Null,
            Expr::StringFn(f, args) => {
                let mut values: [Value; 3] = Default::default();
                for (v, a) in values.iter_mut().zip(args) {
                    *v = a.eval(row);
                }
                f.eval(&values[..args.len().min(3)])
            }
        }
    }

    /// True when the predicate holds (NULL and FALSE both reject).
    pub fn is_true(&self, row: &[Value]) -> bool {
        matches!(self.eval(row), Value::Bool(true))
    }

    /// Evaluates each expression into a new row.
    pub fn project(exprs: &[Expr], row: &[Value]) -> Row {
        exprs.iter().map(|e| e.eval(row)).collect()
    }

    /// The expression with every column reference `i` replaced by `f(i)`:
    /// renumbering columns, or inlining the projection a predicate reads.
    pub fn replace_columns(&self, f: &dyn Fn(usize) -> Expr) -> Expr {
        let r = |e: &Expr| e.replace_columns(f);
        let b = |e: &Expr| Box::new(r(e));
        match self {
            Expr::Column(i) => f(*i),
            Expr::Literal(v) => Expr::Literal(v.clone()),
            Expr::Binary(op, l, rhs) => Expr::Binary(*op, b(l), b(rhs)),
            Expr::Not(e) => Expr::Not(b(e)),
            Expr::Neg(e) => Expr::Neg(b(e)),
            Expr::IsNull { expr, negated } => Expr::IsNull {
                expr: b(expr),
                negated: *negated,
            },
            Expr::InList {
                expr,
                list,
                negated,
            } => Expr::InList {
                expr: b(expr),
                list: list.iter().map(r).collect(),
                negated: *negated,
            },
            Expr::Case {
                operand,
                branches,
                otherwise,
            } => Expr::Case {
                operand: operand.as_deref().map(b),
                branches: branches.iter().map(|(w, t)| (r(w), r(t))).collect(),
                otherwise: otherwise.as_deref().map(b),
            },
            Expr::Hash(e) => Expr::Hash(b(e)),
            Expr::ToDouble(e) => Expr::ToDouble(b(e)),
            Expr::DecimalTimes {
                expr,
                unscaled,
                scale,
                literal_first,
            } => Expr::DecimalTimes {
                expr: b(expr),
                unscaled: *unscaled,
                scale: *scale,
                literal_first: *literal_first,
            },
            Expr::ToTimestamp { expr, unit_ms } => Expr::ToTimestamp {
                expr: b(expr),
                unit_ms: *unit_ms,
            },
            Expr::ProcTime => Expr::ProcTime,
            Expr::StringFn(func, args) => Expr::StringFn(*func, args.iter().map(r).collect()),
        }
    }

    /// The conjuncts of an `AND` tree, left to right (itself when it is
    /// no `AND`).
    pub fn conjuncts(&self) -> Vec<&Expr> {
        fn walk<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
            match e {
                Expr::Binary(BinOp::And, l, r) => {
                    walk(l, out);
                    walk(r, out);
                }
                other => out.push(other),
            }
        }
        let mut out = Vec::new();
        walk(self, &mut out);
        out
    }

    /// [`Expr::conjuncts`], owned.
    pub fn into_conjuncts(self) -> Vec<Expr> {
        fn walk(e: Expr, out: &mut Vec<Expr>) {
            match e {
                Expr::Binary(BinOp::And, l, r) => {
                    walk(*l, out);
                    walk(*r, out);
                }
                other => out.push(other),
            }
        }
        let mut out = Vec::new();
        walk(self, &mut out);
        out
    }

    /// The conjunction of `conjuncts`, `None` when there are none.
    pub fn and_all(conjuncts: impl IntoIterator<Item = Expr>) -> Option<Expr> {
        conjuncts
            .into_iter()
            .reduce(|a, b| Expr::bin(BinOp::And, a, b))
    }

    /// Column positions the expression reads.
    pub fn columns(&self, out: &mut Vec<usize>) {
        match self {
            Expr::Column(i) => out.push(*i),
            Expr::Literal(_) | Expr::ProcTime => {}
            Expr::Binary(_, l, r) => {
                l.columns(out);
                r.columns(out);
            }
            Expr::Not(e) | Expr::Neg(e) | Expr::Hash(e) | Expr::ToDouble(e) => e.columns(out),
            Expr::ToTimestamp { expr, .. } | Expr::DecimalTimes { expr, .. } => expr.columns(out),
            Expr::StringFn(_, args) => args.iter().for_each(|e| e.columns(out)),
            Expr::IsNull { expr, .. } => expr.columns(out),
            Expr::InList { expr, list, .. } => {
                expr.columns(out);
                list.iter().for_each(|e| e.columns(out));
            }
            Expr::Case {
                operand,
                branches,
                otherwise,
            } => {
                if let Some(o) = operand {
                    o.columns(out);
                }
                for (w, t) in branches {
                    w.columns(out);
                    t.columns(out);
                }
                if let Some(o) = otherwise {
                    o.columns(out);
                }
            }
        }
    }
}

fn and(l: Value, r: impl FnOnce() -> Value) -> Value {
    match l {
        Value::Bool(false) => Value::Bool(false),
        Value::Bool(true) => match r() {
            Value::Bool(b) => Value::Bool(b),
            _ => Value::Null,
        },
        _ => match r() {
            Value::Bool(false) => Value::Bool(false),
            _ => Value::Null,
        },
    }
}

fn or(l: Value, r: impl FnOnce() -> Value) -> Value {
    match l {
        Value::Bool(true) => Value::Bool(true),
        Value::Bool(false) => match r() {
            Value::Bool(b) => Value::Bool(b),
            _ => Value::Null,
        },
        _ => match r() {
            Value::Bool(true) => Value::Bool(true),
            _ => Value::Null,
        },
    }
}

fn compare(op: BinOp, l: &Value, r: &Value) -> Value {
    use std::cmp::Ordering::*;
    match l.sql_cmp(r) {
        None => Value::Null,
        Some(o) => Value::Bool(match op {
            BinOp::Eq => o == Equal,
            BinOp::NotEq => o != Equal,
            BinOp::Lt => o == Less,
            BinOp::LtEq => o != Greater,
            BinOp::Gt => o == Greater,
            BinOp::GtEq => o != Less,
            _ => unreachable!("not a comparison"),
        }),
    }
}

fn binary(op: BinOp, l: &Value, r: &Value) -> Value {
    match op {
        BinOp::Eq | BinOp::NotEq | BinOp::Lt | BinOp::LtEq | BinOp::Gt | BinOp::GtEq => {
            compare(op, l, r)
        }
        BinOp::Concat => match (l, r) {
            (Value::Null, _) | (_, Value::Null) => Value::Null,
            (a, b) => Value::str(&format!("{a}{b}")),
        },
        _ => arithmetic(op, l, r),
    }
}

fn arithmetic(op: BinOp, l: &Value, r: &Value) -> Value {
    match (l, r) {
        // A timestamp plus or minus an interval (milliseconds).
        (Value::Ts(a), Value::Int(b)) => match op {
            BinOp::Add => Value::Ts(a.wrapping_add(*b)),
            BinOp::Sub => Value::Ts(a.wrapping_sub(*b)),
            _ => Value::Null,
        },
        (Value::Int(a), Value::Ts(b)) if op == BinOp::Add => Value::Ts(a.wrapping_add(*b)),
        (Value::Int(a), Value::Int(b)) => {
            let (a, b) = (*a, *b);
            match op {
                BinOp::Add => Value::Int(a.wrapping_add(b)),
                BinOp::Sub => Value::Int(a.wrapping_sub(b)),
                BinOp::Mul => Value::Int(a.wrapping_mul(b)),
                BinOp::Div if b == 0 => Value::Null,
                BinOp::Div => Value::Int(a.wrapping_div(b)),
                BinOp::Mod if b == 0 => Value::Null,
                BinOp::Mod => Value::Int(a.wrapping_rem(b)),
                _ => Value::Null,
            }
        }
        (Value::Int(_) | Value::Double(_), Value::Int(_) | Value::Double(_)) => {
            let (a, b) = (l.as_f64().unwrap(), r.as_f64().unwrap());
            match op {
                BinOp::Add => Value::Double(a + b),
                BinOp::Sub => Value::Double(a - b),
                BinOp::Mul => Value::Double(a * b),
                BinOp::Div if b == 0.0 => Value::Null,
                BinOp::Div => Value::Double(a / b),
                BinOp::Mod if b == 0.0 => Value::Null,
                BinOp::Mod => Value::Double(a % b),
                _ => Value::Null,
            }
        }
        _ => Value::Null,
    }
}

/// A hash of values that is the same on every run and machine: it routes
/// records to subtasks and buckets, so it must not be randomly seeded.
pub fn stable_hash(values: &[Value]) -> u64 {
    use std::hash::{BuildHasher, Hash, Hasher};
    let mut h = foldhash::fast::FixedState::with_seed(0x006a_6f69_6e6c_6162).build_hasher();
    for v in values {
        v.hash(&mut h);
    }
    h.finish()
}

impl Expr {
    /// Renders the expression in Flink's EXPLAIN style, naming column `i`
    /// by `name(i)`.
    pub fn render(&self, name: &dyn Fn(usize) -> String) -> String {
        let r = |e: &Expr| e.render(name);
        match self {
            Expr::Column(i) => name(*i),
            Expr::Literal(Value::Str(s)) => format!("'{s}'"),
            Expr::Literal(Value::Null) => "NULL".to_string(),
            Expr::Literal(v) => v.to_string(),
            Expr::Binary(op, a, b) => format!("{}({}, {})", op.symbol(), r(a), r(b)),
            Expr::Not(e) => format!("NOT({})", r(e)),
            Expr::Neg(e) => format!("-({})", r(e)),
            Expr::IsNull { expr, negated } => {
                format!("IS {}NULL({})", if *negated { "NOT " } else { "" }, r(expr))
            }
            Expr::InList {
                expr,
                list,
                negated,
            } => {
                let mut s = format!("{}IN({}", if *negated { "NOT " } else { "" }, r(expr));
                for e in list {
                    s.push_str(", ");
                    s.push_str(&r(e));
                }
                s.push(')');
                s
            }
            Expr::Case {
                operand,
                branches,
                otherwise,
            } => {
                let mut s = String::from("CASE(");
                if let Some(o) = operand {
                    s.push_str(&format!("{}; ", r(o)));
                }
                let arms: Vec<String> = branches
                    .iter()
                    .map(|(w, t)| format!("{} => {}", r(w), r(t)))
                    .collect();
                s.push_str(&arms.join(", "));
                if let Some(o) = otherwise {
                    s.push_str(&format!(", ELSE {}", r(o)));
                }
                s.push(')');
                s
            }
            Expr::Hash(e) => format!("HASH_CODE({})", r(e)),
            Expr::ToDouble(e) => format!("CAST({} AS DOUBLE)", r(e)),
            Expr::DecimalTimes { .. } => r(&self.as_multiply()),
            Expr::ToTimestamp { expr, unit_ms } => {
                format!(
                    "TO_TIMESTAMP_LTZ({}, {})",
                    r(expr),
                    if *unit_ms == 1 { 3 } else { 0 }
                )
            }
            Expr::ProcTime => "PROCTIME()".to_string(),
            Expr::StringFn(func, args) => {
                let args: Vec<String> = args.iter().map(r).collect();
                format!("{}({})", func.name(), args.join(", "))
            }
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(&|i| format!("${i}")))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_decimal_literal_times_an_integer_rounds_once() {
        let e = Expr::DecimalTimes {
            expr: Box::new(Expr::col(0)),
            unscaled: 908,
            scale: 3,
            literal_first: true,
        };
        // A double multiply gives 108.96000000000001.
        assert_ne!(0.908 * 120.0, 108.96);
        assert_eq!(e.eval(&[Value::Int(120)]), Value::Double(108.96));
        assert_eq!(e.eval(&[Value::Null]), Value::Null);
        // Beyond 2^53 the exact product is still rounded once.
        let big = i64::MAX / 1000;
        let want: f64 = format!("{}e-3", big as i128 * 908).parse().unwrap();
        assert_eq!(e.eval(&[Value::Int(big)]), Value::Double(want));
        assert_eq!(e.render(&|i| format!("${i}")), "*(0.908, $0)");
    }

    use super::*;

    #[test]
    fn three_valued_logic() {
        let null = Expr::lit(Value::Null);
        let t = Expr::lit(Value::Bool(true));
        let f = Expr::lit(Value::Bool(false));
        assert_eq!(
            Expr::bin(BinOp::And, null.clone(), f.clone()).eval(&[]),
            Value::Bool(false)
        );
        assert_eq!(
            Expr::bin(BinOp::And, null.clone(), t.clone()).eval(&[]),
            Value::Null
        );
        assert_eq!(
            Expr::bin(BinOp::Or, null.clone(), t).eval(&[]),
            Value::Bool(true)
        );
        assert!(!Expr::bin(BinOp::Eq, null, f).is_true(&[]));
    }

    #[test]
    fn division_by_zero_is_null() {
        let e = Expr::bin(
            BinOp::Div,
            Expr::lit(Value::Int(1)),
            Expr::lit(Value::Int(0)),
        );
        assert_eq!(e.eval(&[]), Value::Null);
    }
}
