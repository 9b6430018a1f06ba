//! Expressions as Flink prints them: the physical plan in Calcite's prefix
//! form (`=(a, b)`, `AND(x, y)`), the execution plan in infix form
//! (`(a = b)`, `(x AND y)`). Columns print as the names of the input.

use super::names::name;
use operators::expr::{BinOp, Expr};
use operators::value::Value;

/// Which of Flink's two expression forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// `== Optimized Physical Plan ==` (and the Abstract Syntax Tree).
    Prefix,
    /// `== Optimized Execution Plan ==`.
    Infix,
}

fn literal(v: &Value) -> String {
    match v {
        Value::Str(s) => format!("'{s}'"),
        Value::Null => "null".to_string(),
        Value::Ts(t) => format!("{}:TIMESTAMP(3)", operators::value::format_timestamp(*t)),
        v => v.to_string(),
    }
}

/// The operands of a chain of one associative operator, flattened as
/// Calcite flattens `AND`/`OR`.
fn flatten<'a>(op: BinOp, e: &'a Expr, out: &mut Vec<&'a Expr>) {
    match e {
        Expr::Binary(o, l, r) if *o == op => {
            flatten(op, l, out);
            flatten(op, r, out);
        }
        e => out.push(e),
    }
}

/// `e` with columns named by `names`.
pub fn render(e: &Expr, names: &[String], style: Style) -> String {
    let r = |x: &Expr| render(x, names, style);
    match e {
        Expr::Column(i) => name(names, *i),
        Expr::Literal(v) => literal(v),
        Expr::Binary(BinOp::Mod, a, b) => format!("MOD({}, {})", r(a), r(b)),
        Expr::Binary(op @ (BinOp::And | BinOp::Or), _, _) => {
            let mut parts = Vec::new();
            flatten(*op, e, &mut parts);
            let parts: Vec<String> = parts.into_iter().map(r).collect();
            match style {
                Style::Prefix => format!("{}({})", op.symbol(), parts.join(", ")),
                Style::Infix => format!("({})", parts.join(&format!(" {} ", op.symbol()))),
            }
        }
        Expr::Binary(op, a, b) => match style {
            Style::Prefix => format!("{}({}, {})", op.symbol(), r(a), r(b)),
            Style::Infix => format!("({} {} {})", r(a), op.symbol(), r(b)),
        },
        Expr::Not(x) => format!("NOT({})", r(x)),
        Expr::Neg(x) => format!("-({})", r(x)),
        Expr::IsNull { expr, negated } => {
            let not = if *negated { "NOT " } else { "" };
            match style {
                Style::Prefix => format!("IS {not}NULL({})", r(expr)),
                Style::Infix => format!("{} IS {not}NULL", r(expr)),
            }
        }
        Expr::InList {
            expr,
            list,
            negated,
        } => {
            let items: Vec<String> = list.iter().map(r).collect();
            let not = if *negated { "NOT " } else { "" };
            match style {
                Style::Prefix => format!("{not}IN({}, {})", r(expr), items.join(", ")),
                Style::Infix => format!("({} {not}IN ({}))", r(expr), items.join(", ")),
            }
        }
        Expr::Case {
            operand,
            branches,
            otherwise,
        } => {
            let mut args = Vec::new();
            for (w, t) in branches {
                args.push(match operand {
                    // `CASE x WHEN v` compares, as Calcite rewrites it.
                    Some(o) => match style {
                        Style::Prefix => format!("=({}, {})", r(o), r(w)),
                        Style::Infix => format!("({} = {})", r(o), r(w)),
                    },
                    None => r(w),
                });
                args.push(r(t));
            }
            args.push(match otherwise {
                Some(o) => r(o),
                None => "null".to_string(),
            });
            format!("CASE({})", args.join(", "))
        }
        Expr::Hash(x) => format!("HASH_CODE({})", r(x)),
        Expr::ToDouble(x) => format!("CAST({} AS DOUBLE)", r(x)),
        Expr::DecimalTimes { .. } => r(&e.as_multiply()),
        Expr::ToTimestamp { expr, unit_ms } => format!(
            "TO_TIMESTAMP_LTZ({}, {})",
            r(expr),
            if *unit_ms == 1 { 3 } else { 0 }
        ),
        Expr::ProcTime => "PROCTIME()".to_string(),
        Expr::StringFn(f, args) => {
            let args: Vec<String> = args.iter().map(r).collect();
            format!("{}({})", f.name(), args.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms() {
        let names = ["k", "v"].map(String::from);
        let e = Expr::bin(
            BinOp::And,
            Expr::bin(BinOp::Eq, Expr::col(0), Expr::col(1)),
            Expr::bin(
                BinOp::And,
                Expr::bin(BinOp::Gt, Expr::col(1), Expr::lit(Value::Int(3))),
                Expr::IsNull {
                    expr: Box::new(Expr::col(0)),
                    negated: true,
                },
            ),
        );
        assert_eq!(
            render(&e, &names, Style::Prefix),
            "AND(=(k, v), >(v, 3), IS NOT NULL(k))"
        );
        assert_eq!(
            render(&e, &names, Style::Infix),
            "((k = v) AND (v > 3) AND k IS NOT NULL)"
        );
    }
}
