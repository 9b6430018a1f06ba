//! Checks of a node read from a compiled plan, which is untrusted input:
//! every column position within its input, every key list the right length,
//! every expression typed, every output column the type its node makes.
//! A node that passes runs without a panic; one that fails names the field.
//!
//! Types are compared by family (integers, `DOUBLE`, `BOOLEAN`, `STRING`):
//! `INT` and `BIGINT` are one value at run time, and the binder widens
//! between them freely.

use super::PhysicalNode;
use crate::logical::Schema;
use operators::expr::{BinOp, Expr};
use operators::string_fns::ArgKind;
use operators::value::{DataType, Value};

/// A field of a node that a compiled plan got wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid {
    /// The field's path under the node's `spec` (`kind.Join.left_keys[1]`,
    /// `schema`).
    pub field: String,
    pub message: String,
}

pub type Check = Result<(), Invalid>;

pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Invalid {
    Invalid {
        field: field.into(),
        message: message.into(),
    }
}

/// A field of the kind's struct: `kind.<Variant>.<field>` as the JSON
/// nests it (`kind` is the node's `spec.kind`).
pub fn field(node: &PhysicalNode, name: &str) -> String {
    format!("kind.{}.{name}", node.kind.variant())
}

/// Checks that the column `col` exists in an input of `arity` columns.
pub fn column(at: &str, col: usize, arity: usize, what: &str) -> Check {
    if col < arity {
        Ok(())
    } else {
        Err(invalid(
            at,
            format!("column {col} does not exist: {what} has {arity} column(s)"),
        ))
    }
}

/// Checks that every column of `cols` exists in an input of `arity` columns.
pub fn columns(at: &str, cols: &[usize], arity: usize, what: &str) -> Check {
    for (i, &c) in cols.iter().enumerate() {
        column(&format!("{at}[{i}]"), c, arity, what)?;
    }
    Ok(())
}

/// Checks the number of entries of a list field.
pub fn length(at: &str, have: usize, want: usize, what: &str) -> Check {
    if have == want {
        Ok(())
    } else {
        Err(invalid(
            at,
            format!("has {have} entries, but {what} needs {want}"),
        ))
    }
}

/// The family of a type: the unit of type checks.
fn family(t: DataType) -> &'static str {
    match t {
        DataType::Int | DataType::BigInt => "integer",
        DataType::Double => "DOUBLE",
        DataType::Boolean => "BOOLEAN",
        DataType::String => "STRING",
        DataType::Timestamp => "TIMESTAMP(3)",
        DataType::TimestampLtz => "TIMESTAMP_LTZ(3)",
        DataType::Interval => "INTERVAL",
    }
}

/// Whether a value of type `have` fits a column declared `want` (`None`:
/// the NULL literal, which fits anything).
pub fn fits(have: Option<DataType>, want: DataType) -> bool {
    have.is_none_or(|h| family(h) == family(want))
}

fn type_name(t: Option<DataType>) -> &'static str {
    t.map(family).unwrap_or("NULL")
}

/// The type of `e` over input columns of `types` (`None` for an untyped
/// NULL), or why it has none.
pub fn expr_type(at: &str, e: &Expr, types: &[DataType]) -> Result<Option<DataType>, Invalid> {
    let ty = |x: &Expr| expr_type(at, x, types);
    let numeric = |t: Option<DataType>, what: &str| match t {
        Some(t) if !t.is_numeric() => Err(invalid(
            at,
            format!("{what} needs numbers, got {}: {e}", family(t)),
        )),
        _ => Ok(()),
    };
    let boolean = |t: Option<DataType>, what: &str| match t {
        Some(t) if t != DataType::Boolean => Err(invalid(
            at,
            format!("{what} needs BOOLEAN, got {}: {e}", family(t)),
        )),
        _ => Ok(()),
    };
    let comparable = |a: Option<DataType>, b: Option<DataType>| match (a, b) {
        (Some(x), Some(y)) if !(fits(Some(x), y) || (x.is_numeric() && y.is_numeric())) => {
            Err(invalid(
                at,
                format!("cannot compare {} with {}: {e}", type_name(a), type_name(b)),
            ))
        }
        _ => Ok(()),
    };
    Ok(match e {
        Expr::Column(c) => {
            column(at, *c, types.len(), "the input")?;
            Some(types[*c])
        }
        Expr::Literal(v) => match v {
            Value::Null => None,
            Value::Bool(_) => Some(DataType::Boolean),
            Value::Int(_) => Some(DataType::BigInt),
            Value::Double(_) => Some(DataType::Double),
            Value::Str(_) => Some(DataType::String),
            Value::Ts(_) => Some(DataType::Timestamp),
        },
        Expr::Binary(op, l, r) => {
            let (a, b) = (ty(l)?, ty(r)?);
            match op {
                BinOp::Add | BinOp::Sub
                    if a.is_some_and(DataType::is_timestamp)
                        && b.is_none_or(|b| b == DataType::Interval || b.is_integer()) =>
                {
                    a
                }
                BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod => {
                    numeric(a, op.symbol())?;
                    numeric(b, op.symbol())?;
                    match (a, b) {
                        (Some(DataType::Double), _) | (_, Some(DataType::Double)) => {
                            Some(DataType::Double)
                        }
                        (None, None) => None,
                        _ => Some(DataType::BigInt),
                    }
                }
                BinOp::Eq | BinOp::NotEq | BinOp::Lt | BinOp::LtEq | BinOp::Gt | BinOp::GtEq => {
                    comparable(a, b)?;
                    Some(DataType::Boolean)
                }
                BinOp::And | BinOp::Or => {
                    boolean(a, op.symbol())?;
                    boolean(b, op.symbol())?;
                    Some(DataType::Boolean)
                }
                BinOp::Concat => Some(DataType::String),
            }
        }
        Expr::Not(x) => {
            boolean(ty(x)?, "NOT")?;
            Some(DataType::Boolean)
        }
        Expr::Neg(x) => {
            let t = ty(x)?;
            numeric(t, "-")?;
            t
        }
        Expr::IsNull { expr, .. } => {
            ty(expr)?;
            Some(DataType::Boolean)
        }
        Expr::InList { expr, list, .. } => {
            let t = ty(expr)?;
            for item in list {
                comparable(t, ty(item)?)?;
            }
            Some(DataType::Boolean)
        }
        Expr::Case {
            operand,
            branches,
            otherwise,
        } => {
            let op = match operand {
                Some(o) => Some(ty(o)?),
                None => None,
            };
            let mut result: Option<DataType> = None;
            let mut widen = |t: Option<DataType>| -> Result<(), Invalid> {
                result = match (result, t) {
                    (None, t) | (t, None) => t,
                    (Some(a), Some(b)) if fits(Some(a), b) => Some(a),
                    (Some(a), Some(b)) if a.is_numeric() && b.is_numeric() => {
                        Some(DataType::Double)
                    }
                    (Some(a), Some(b)) => {
                        return Err(invalid(
                            at,
                            format!(
                                "CASE branches of {} and {} have no common type: {e}",
                                family(a),
                                family(b)
                            ),
                        ))
                    }
                };
                Ok(())
            };
            for (w, t) in branches {
                let wt = ty(w)?;
                match op {
                    Some(o) => comparable(o, wt)?,
                    None => boolean(wt, "WHEN")?,
                }
                widen(ty(t)?)?;
            }
            if let Some(o) = otherwise {
                widen(ty(o)?)?;
            }
            result
        }
        Expr::Hash(x) => {
            ty(x)?;
            Some(DataType::Int)
        }
        Expr::ToDouble(x) => {
            numeric(ty(x)?, "CAST AS DOUBLE")?;
            Some(DataType::Double)
        }
        Expr::DecimalTimes { expr, .. } => {
            numeric(ty(expr)?, "*")?;
            Some(DataType::Double)
        }
        Expr::ToTimestamp { expr, unit_ms } => {
            match ty(expr)? {
                Some(t) if !t.is_integer() => {
                    return Err(invalid(
                        at,
                        format!("TO_TIMESTAMP_LTZ needs an integer, got {}: {e}", family(t)),
                    ))
                }
                _ => {}
            }
            if ![1, 1000].contains(unit_ms) {
                return Err(invalid(
                    at,
                    format!("unit_ms is 1 or 1000, found {unit_ms}"),
                ));
            }
            Some(DataType::TimestampLtz)
        }
        Expr::ProcTime => Some(DataType::TimestampLtz),
        Expr::StringFn(f, args) => {
            let kinds = f.args();
            if args.len() > kinds.len() || args.len() + f.optional() < kinds.len() {
                return Err(invalid(
                    at,
                    format!(
                        "{} takes {} argument(s), found {}: {e}",
                        f.name(),
                        kinds.len(),
                        args.len()
                    ),
                ));
            }
            for (a, kind) in args.iter().zip(kinds) {
                let ok = match (ty(a)?, kind) {
                    (None, _) => true,
                    (Some(t), ArgKind::String) => t == DataType::String,
                    (Some(t), ArgKind::Integer) => t.is_integer(),
                    (Some(t), ArgKind::Timestamp) => t.is_timestamp(),
                };
                if !ok {
                    return Err(invalid(
                        at,
                        format!("an argument of {} has the wrong type: {e}", f.name()),
                    ));
                }
            }
            Some(DataType::String)
        }
    })
}

/// Checks that `e` is a predicate (BOOLEAN) over columns of `types`.
pub fn predicate(at: &str, e: &Expr, types: &[DataType]) -> Check {
    match expr_type(at, e, types)? {
        Some(t) if t != DataType::Boolean => Err(invalid(
            at,
            format!("a condition must be BOOLEAN, not {}: {e}", family(t)),
        )),
        _ => Ok(()),
    }
}

/// Checks that each expression of `exprs` computes the type of the
/// matching column of `schema` (and that there is one per column).
pub fn projection(at: &str, exprs: &[Expr], types: &[DataType], schema: &Schema) -> Check {
    length(at, exprs.len(), schema.len(), "the node's schema")?;
    for (i, (e, f)) in exprs.iter().zip(&schema.fields).enumerate() {
        let here = format!("{at}[{i}]");
        let t = expr_type(&here, e, types)?;
        if !fits(t, f.data_type) {
            return Err(invalid(
                here,
                format!(
                    "computes {} but column '{}' of the schema is {}",
                    type_name(t),
                    f.name,
                    family(f.data_type)
                ),
            ));
        }
    }
    Ok(())
}

/// Checks that `schema` has exactly the column types `want`.
pub fn schema_types(schema: &Schema, want: &[DataType], what: &str) -> Check {
    if schema.len() != want.len() {
        return Err(invalid(
            "schema",
            format!(
                "has {} column(s), but {what} makes {}",
                schema.len(),
                want.len()
            ),
        ));
    }
    for (i, (f, t)) in schema.fields.iter().zip(want).enumerate() {
        if !fits(Some(f.data_type), *t) {
            return Err(invalid(
                format!("schema.fields[{i}]"),
                format!(
                    "column '{}' is {}, but {what} makes {} there",
                    f.name,
                    family(f.data_type),
                    family(*t)
                ),
            ));
        }
    }
    Ok(())
}

/// Checks that the key lists of two sides pair up: as many columns on
/// each side, at least one, each within its side, of comparable types.
pub fn key_pairs(
    node: &PhysicalNode,
    (left_at, left_keys, left): (&str, &[usize], &Schema),
    (right_at, right_keys, right): (&str, &[usize], &Schema),
) -> Check {
    let l = field(node, left_at);
    let r = field(node, right_at);
    if left_keys.is_empty() {
        return Err(invalid(l, "a join needs at least one key column"));
    }
    length(&r, right_keys.len(), left_keys.len(), left_at)?;
    columns(&l, left_keys, left.len(), "the left input")?;
    columns(&r, right_keys, right.len(), "the right input")?;
    for (i, (&a, &b)) in left_keys.iter().zip(right_keys).enumerate() {
        let (x, y) = (left.fields[a].data_type, right.fields[b].data_type);
        if !(fits(Some(x), y) || (x.is_numeric() && y.is_numeric())) {
            return Err(invalid(
                format!("{r}[{i}]"),
                format!(
                    "joins {} with {}, which never compare",
                    family(x),
                    family(y)
                ),
            ));
        }
    }
    Ok(())
}

/// Checks a mini-batch bundle size: at least one row (the size is a
/// trigger, not a capacity, so it needs no upper bound).
pub fn bundle_size(at: &str, size: usize) -> Check {
    if size >= 1 {
        Ok(())
    } else {
        Err(invalid(at, "a mini-batch bundle holds at least 1 row"))
    }
}
