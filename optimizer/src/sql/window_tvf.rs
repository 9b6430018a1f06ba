//! Window table-valued functions in FROM: `TABLE(TUMBLE(TABLE t,
//! DESCRIPTOR(ts), size))`, `TABLE(HOP(TABLE t, DESCRIPTOR(ts), slide,
//! size))` and `TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts), step, max_size))`,
//! with positional or named arguments (`DATA =>`, `TIMECOL =>`, `SIZE =>`,
//! `SLIDE =>`, `STEP =>`, `MAX_SIZE =>`), and `TABLE(SESSION(TABLE t
//! [PARTITION BY k | PARTITION BY (k1, k2)], DESCRIPTOR(ts), gap))`
//! (`GAP =>`). The data is a table of the catalog and the time column its
//! watermarked rowtime attribute.
//! (`TABLE t` inside the call is read as `t`: the statement's text has
//! its `TABLE` blanked before parsing, see `sql/mod.rs`.)

use super::catalog::Catalog;
use super::expr::interval_millis;
use super::names::{did_you_mean, err_at, list, At};
use crate::error::PlanError;
use crate::logical::{Field, LogicalPlan, Schema};
use operators::value::DataType;
use operators::window::WindowSpec;
use sqlparser::ast;

fn unsupported(what: impl Into<String>, node: &ast::Expr) -> PlanError {
    err_at(PlanError::unsupported(what), node)
}

/// The most windows one row of a HOP or CUMULATE window may fall in: a
/// window is emitted per key for each of them, so a size many times its
/// slide makes a job that never ends (each row in billions of windows).
const MAX_WINDOWS_PER_ROW: i64 = 100_000;

/// Refuses a HOP or CUMULATE window that puts a row in more than
/// [`MAX_WINDOWS_PER_ROW`] windows (`size / slide`, `max size / step`).
fn windows_per_row(name: &str, size: i64, slide: i64, node: &ast::Expr) -> Result<(), PlanError> {
    let n = size / slide;
    if n > MAX_WINDOWS_PER_ROW {
        return Err(validation(
            format!(
                "{name} windows of {size} ms every {slide} ms put each row in {n} windows; the lab runs at most {MAX_WINDOWS_PER_ROW}"
            ),
            node,
        ));
    }
    Ok(())
}

fn validation(what: impl Into<String>, node: &ast::Expr) -> PlanError {
    err_at(PlanError::validation(what), node)
}

/// Binds the call; returns the plan, its fields and the table's name.
pub(crate) fn bind(
    catalog: &Catalog,
    expr: &ast::Expr,
) -> Result<(LogicalPlan, Vec<Field>, String), PlanError> {
    let ast::Expr::Function(f) = expr else {
        return Err(unsupported(
            format!("'TABLE({expr})' is not supported (the lab runs the window TVFs TUMBLE, HOP, CUMULATE and SESSION)"),
            expr,
        ));
    };
    let name = f.name.to_string().to_uppercase();
    let params: &[&str] = match name.as_str() {
        "TUMBLE" => &["DATA", "TIMECOL", "SIZE"],
        "HOP" => &["DATA", "TIMECOL", "SLIDE", "SIZE"],
        "CUMULATE" => &["DATA", "TIMECOL", "STEP", "MAX_SIZE"],
        "SESSION" => &["DATA", "TIMECOL", "GAP"],
        _ => {
            return Err(unsupported(
                format!("table function {name} is not supported (the lab runs the window TVFs TUMBLE, HOP, CUMULATE and SESSION)"),
                expr,
            ))
        }
    };
    let ast::FunctionArguments::List(arg_list) = &f.args else {
        return Err(validation(format!("{name} expects arguments"), expr));
    };
    let mut args: Vec<Option<&ast::Expr>> = vec![None; params.len()];
    for (i, a) in arg_list.args.iter().enumerate() {
        let (slot, e) = match a {
            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => (i, e),
            ast::FunctionArg::Named {
                name: n,
                arg: ast::FunctionArgExpr::Expr(e),
                ..
            } => {
                let p = params
                    .iter()
                    .position(|p| p.eq_ignore_ascii_case(&n.value))
                    .ok_or_else(|| {
                        err_at(
                            PlanError::validation(format!(
                                "{name} has no parameter {} (its parameters: {})",
                                n.value,
                                params.join(", ")
                            )),
                            &At(n.span),
                        )
                    })?;
                (p, e)
            }
            other => {
                return Err(unsupported(
                    format!("argument '{other}' of {name} is not supported"),
                    expr,
                ))
            }
        };
        if slot >= params.len() {
            let offset = if name == "SESSION" {
                ""
            } else {
                "; the offset argument is not supported"
            };
            return Err(unsupported(
                format!(
                    "{name} takes {} arguments ({}){offset}",
                    params.len(),
                    params.join(", ")
                ),
                e,
            ));
        }
        args[slot] = Some(e);
    }
    if let Some(missing) = args.iter().position(Option::is_none) {
        return Err(validation(
            format!(
                "{name} expects {} arguments ({}), {} is missing",
                params.len(),
                params.join(", "),
                params[missing]
            ),
            expr,
        ));
    }
    let args: Vec<&ast::Expr> = args.into_iter().map(|a| a.expect("checked")).collect();

    // DATA: a table of the catalog, for SESSION with its partition keys
    // (`t || k` here, see `table_arguments_as_names` in `sql/mod.rs`).
    let (data, partition) = match args[0] {
        ast::Expr::BinaryOp {
            left,
            op: ast::BinaryOperator::StringConcat,
            right,
        } if name == "SESSION" => (left.as_ref(), Some(right.as_ref())),
        other => (other, None),
    };
    let table = match data {
        ast::Expr::Identifier(id) => id,
        other => {
            return Err(unsupported(
                format!("the data of {name} must be a table (TABLE t), found '{other}'"),
                other,
            ))
        }
    };
    let def = catalog.get(&table.value).ok_or_else(|| {
        err_at(
            PlanError::validation(format!(
                "Object '{}' not found: no table of that name; known tables: {}.{}",
                table.value,
                list(&catalog.names(), 30),
                did_you_mean(&table.value, catalog.names())
            )),
            &At(table.span),
        )
    })?;

    // TIMECOL: DESCRIPTOR(col), the table's rowtime attribute.
    let col = match args[1] {
        ast::Expr::Function(d) if d.name.to_string().eq_ignore_ascii_case("DESCRIPTOR") => {
            match &d.args {
                ast::FunctionArguments::List(l) => match l.args.as_slice() {
                    [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(
                        ast::Expr::Identifier(id),
                    ))] => id,
                    _ => return Err(validation("DESCRIPTOR takes one column", args[1])),
                },
                _ => return Err(validation("DESCRIPTOR takes one column", args[1])),
            }
        }
        other => {
            return Err(validation(
                format!(
                    "the time column of {name} is given as DESCRIPTOR(column), found '{other}'"
                ),
                other,
            ))
        }
    };
    let fields = &def.schema.fields;
    let time_col = fields
        .iter()
        .position(|f| f.name.eq_ignore_ascii_case(&col.value))
        .ok_or_else(|| {
            err_at(
                PlanError::validation(format!(
                    "Column '{}' not found in table '{}'.{}",
                    col.value,
                    def.name,
                    did_you_mean(&col.value, fields.iter().map(|f| f.name.as_str()))
                )),
                &At(col.span),
            )
        })?;
    if def.watermark.as_ref().is_none_or(|w| w.rowtime != time_col) {
        let ty = fields[time_col].data_type;
        return Err(err_at(
            PlanError::validation(format!(
                "The window function requires the timecol is a time attribute type, but is {ty}: \
                 '{}' of table '{}' has no WATERMARK (declare WATERMARK FOR {} AS ...)",
                fields[time_col].name, def.name, fields[time_col].name
            )),
            &At(col.span),
        ));
    }

    // PARTITION BY: columns of the table.
    let mut partition_by = Vec::new();
    if let Some(p) = partition {
        let keys: Vec<&ast::Expr> = match p {
            ast::Expr::Tuple(items) => items.iter().collect(),
            ast::Expr::Nested(inner) => vec![inner.as_ref()],
            other => vec![other],
        };
        for k in keys {
            let ast::Expr::Identifier(id) = k else {
                return Err(validation(
                    format!(
                        "PARTITION BY of SESSION takes columns of '{}', found '{k}'",
                        def.name
                    ),
                    k,
                ));
            };
            let c = fields
                .iter()
                .position(|f| f.name.eq_ignore_ascii_case(&id.value))
                .ok_or_else(|| {
                    err_at(
                        PlanError::validation(format!(
                            "Column '{}' not found in table '{}'.{}",
                            id.value,
                            def.name,
                            did_you_mean(&id.value, fields.iter().map(|f| f.name.as_str()))
                        )),
                        &At(id.span),
                    )
                })?;
            partition_by.push(c);
        }
    }

    // The sizes.
    let ms = |e: &ast::Expr, what: &str| -> Result<i64, PlanError> {
        let ast::Expr::Interval(iv) = e else {
            return Err(validation(
                format!("the {what} of {name} must be an INTERVAL literal, found '{e}'"),
                e,
            ));
        };
        let v = interval_millis(iv)?;
        if v <= 0 && name == "SESSION" {
            return Err(validation(
                format!("Session Window parameters must satisfy gap > 0, found '{e}'"),
                e,
            ));
        }
        if v <= 0 {
            return Err(validation(
                format!("the {what} of {name} must be positive, found '{e}'"),
                e,
            ));
        }
        Ok(v)
    };
    let window = match name.as_str() {
        "TUMBLE" => WindowSpec::Tumble {
            size: ms(args[2], "size")?,
        },
        "HOP" => {
            let (slide, size) = (ms(args[2], "slide")?, ms(args[3], "size")?);
            windows_per_row(&name, size, slide, args[3])?;
            WindowSpec::Hop { size, slide }
        }
        "SESSION" => WindowSpec::Session {
            gap: ms(args[2], "gap")?,
        },
        _ => {
            let (step, max_size) = (ms(args[2], "step")?, ms(args[3], "max size")?);
            if max_size % step != 0 {
                return Err(validation(
                    format!(
                        "CUMULATE table function based aggregate requires maxSize must be an integral multiple of step, but got maxSize {max_size} ms and step {step} ms"
                    ),
                    args[3],
                ));
            }
            windows_per_row(&name, max_size, step, args[3])?;
            WindowSpec::Cumulate { max_size, step }
        }
    };

    let mut out: Vec<Field> = fields.clone();
    let window_field = |n: &str, data_type: DataType| Field {
        name: n.to_string(),
        qualifier: None,
        data_type,
        nullable: false,
    };
    out.push(window_field("window_start", DataType::Timestamp));
    out.push(window_field("window_end", DataType::Timestamp));
    out.push(window_field("window_time", fields[time_col].data_type));
    let scan = LogicalPlan::Scan {
        table: def.name.clone(),
        alias: def.name.clone(),
        schema: def.schema.clone(),
    };
    let plan = LogicalPlan::WindowTvf {
        input: Box::new(scan),
        time_col,
        window,
        partition_by,
        group_window: false,
        schema: Schema {
            fields: out.clone(),
        },
    };
    Ok((plan, out, def.name.clone()))
}
