//! `== Abstract Syntax Tree ==`: the bound query as Calcite's logical plan
//! prints it (`LogicalSink`, `LogicalProject(name=[$0])`, `LogicalJoin`,
//! `LogicalAggregate(group=[{0}], cnt=[COUNT()])`, columns as `$i`).
//!
//! The lab binds each `SELECT` into the same nodes Calcite's converter
//! makes, so the tree matches Flink's up to what each binder folds away.

use crate::logical::{AggCall, AggFunc, Hint, JoinKind, LogicalPlan};
use crate::physical::display::{render, unique_names, Style};
use crate::physical::node::explain::qualified;
use operators::expr::{BinOp, Expr};

/// A node of the tree: its line and inputs.
struct Line {
    text: String,
    inputs: Vec<Line>,
}

fn dollar(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("${i}")).collect()
}

fn positional(e: &Expr, width: usize) -> String {
    render(e, &dollar(width), Style::Prefix)
}

fn agg_call(a: &AggCall) -> String {
    let arg = match (a.func, a.arg) {
        (AggFunc::CountStar, _) | (_, None) => String::new(),
        (_, Some(c)) => format!("{}${c}", if a.distinct { "DISTINCT " } else { "" }),
    };
    let filter = a
        .filter
        .map(|f| format!(" FILTER ${f}"))
        .unwrap_or_default();
    format!("{}({arg}){filter}", a.func.name())
}

/// Flink's hint attribute: `stateTtlHints=[[[STATE_TTL options:{a=1h}]]]`,
/// `joinHints=[[[MULTI_JOIN options:[a, b]]]]`.
fn hints_attr(key: &str, hints: &[Hint], wanted: &[&str]) -> Option<String> {
    let items: Vec<String> = hints
        .iter()
        .filter(|h| wanted.iter().any(|w| h.name.eq_ignore_ascii_case(w)))
        .map(|h| {
            let options = if h.kv.is_empty() {
                format!("[{}]", h.args.join(", "))
            } else {
                let kv: Vec<String> = h.kv.iter().map(|(k, v)| format!("{k}={v}")).collect();
                format!("{{{}}}", kv.join(", "))
            };
            format!("[{} options:{options}]", h.name.to_uppercase())
        })
        .collect();
    (!items.is_empty()).then(|| format!(", {key}=[[{}]]", items.join(", ")))
}

/// A lookup join as Calcite converts `FOR SYSTEM_TIME AS OF`: a
/// `LogicalCorrelate` of the left input with a `LogicalFilter` of the ON
/// condition (left columns as `$cor0.name`) over a `LogicalSnapshot` of
/// the table.
fn correlate(
    left: &LogicalPlan,
    right: &LogicalPlan,
    kind: JoinKind,
    left_keys: &[usize],
    right_keys: &[usize],
    residual: &Option<Expr>,
    lookup: &crate::logical::Lookup,
) -> Line {
    let lw = left.schema().len();
    let left_names = unique_names(left.schema());
    let mut names: Vec<String> = left_names.iter().map(|n| format!("$cor0.{n}")).collect();
    names.extend((0..right.schema().len()).map(|i| format!("${i}")));
    let mut cond: Option<Expr> = None;
    for (l, r) in left_keys.iter().zip(right_keys) {
        let eq = Expr::bin(BinOp::Eq, Expr::col(*l), Expr::col(lw + r));
        cond = Some(match cond.take() {
            None => eq,
            Some(c) => Expr::bin(BinOp::And, c, eq),
        });
    }
    if let Some(r) = residual {
        cond = Some(match cond.take() {
            None => r.clone(),
            Some(c) => Expr::bin(BinOp::And, c, r.clone()),
        });
    }
    let mut required = vec![lookup.time_col];
    if let Some(c) = &cond {
        c.columns(&mut required);
    }
    required.retain(|&c| c < lw);
    required.sort_unstable();
    required.dedup();
    let required: Vec<String> = required.iter().map(usize::to_string).collect();
    let cond = cond
        .map(|c| render(&c, &names, Style::Prefix))
        .unwrap_or_else(|| "true".to_string());
    let kind = if kind == JoinKind::Left {
        "left"
    } else {
        "inner"
    };
    let snapshot = Line {
        text: format!(
            "LogicalSnapshot(period=[$cor0.{}])",
            left_names[lookup.time_col]
        ),
        inputs: vec![node(right)],
    };
    Line {
        text: format!(
            "LogicalCorrelate(correlation=[$cor0], joinType=[{kind}], requiredColumns=[{{{}}}])",
            required.join(", ")
        ),
        inputs: vec![
            node(left),
            Line {
                text: format!("LogicalFilter(condition=[{cond}])"),
                inputs: vec![snapshot],
            },
        ],
    }
}

fn node(plan: &LogicalPlan) -> Line {
    let width = |p: &LogicalPlan| p.schema().len();
    match plan {
        LogicalPlan::Scan { table, .. } => Line {
            text: format!("LogicalTableScan(table=[[default_catalog, default_database, {table}]])"),
            inputs: vec![],
        },
        LogicalPlan::Union { left, right, .. } => Line {
            text: "LogicalUnion(all=[true])".to_string(),
            inputs: vec![node(left), node(right)],
        },
        LogicalPlan::WindowTvf {
            input,
            time_col,
            window,
            schema,
            ..
        } => {
            let ms = |v: i64| format!("{v}:INTERVAL MILLISECOND");
            let sizes = match *window {
                operators::window::WindowSpec::Tumble { size } => ms(size),
                operators::window::WindowSpec::Hop { size, slide } => {
                    format!("{}, {}", ms(slide), ms(size))
                }
                operators::window::WindowSpec::Cumulate { max_size, step } => {
                    format!("{}, {}", ms(step), ms(max_size))
                }
                operators::window::WindowSpec::Session { gap } => ms(gap),
            };
            let name = match window {
                operators::window::WindowSpec::Tumble { .. } => "TUMBLE",
                operators::window::WindowSpec::Hop { .. } => "HOP",
                operators::window::WindowSpec::Cumulate { .. } => "CUMULATE",
                operators::window::WindowSpec::Session { .. } => "SESSION",
            };
            let row_type: Vec<String> = schema
                .fields
                .iter()
                .map(|f| format!("{} {}", f.data_type.sql_name(), f.name))
                .collect();
            Line {
                text: format!(
                    "LogicalTableFunctionScan(invocation=[{name}(DESCRIPTOR(${time_col}), {sizes})], rowType=[RecordType({})])",
                    row_type.join(", ")
                ),
                inputs: vec![node(input)],
            }
        }
        LogicalPlan::Deduplicate {
            input,
            key,
            keep,
            time_col,
            row_number,
            ..
        } => {
            // As Flink's AST shows it: the row number over the input, kept
            // where it is 1.
            let n = width(input);
            let mut items: Vec<String> = unique_names(input.schema())
                .iter()
                .enumerate()
                .map(|(i, name)| format!("{name}=[${i}]"))
                .collect();
            let keys: Vec<String> = key.iter().map(|k| format!("${k}")).collect();
            let direction = match keep {
                operators::rank::deduplicate::Keep::FirstRow => "",
                operators::rank::deduplicate::Keep::LastRow => " DESC NULLS LAST",
            };
            items.push(format!(
                "{row_number}=[ROW_NUMBER() OVER (PARTITION BY {} ORDER BY ${time_col}{direction})]",
                keys.join(", ")
            ));
            Line {
                text: format!("LogicalFilter(condition=[=(${n}, 1)])"),
                inputs: vec![Line {
                    text: format!("LogicalProject({})", items.join(", ")),
                    inputs: vec![node(input)],
                }],
            }
        }
        LogicalPlan::Rank {
            input,
            partition_by,
            order,
            rank_start,
            rank_end,
            output_rank_number,
            row_number,
            schema,
        } => {
            // As Flink's AST shows it: the row number over the input, kept
            // in its range, then the selected columns.
            let n = width(input);
            let mut items: Vec<String> = unique_names(input.schema())
                .iter()
                .enumerate()
                .map(|(i, name)| format!("{name}=[${i}]"))
                .collect();
            let keys: Vec<String> = partition_by.iter().map(|k| format!("${k}")).collect();
            let partition = if keys.is_empty() {
                String::new()
            } else {
                format!("PARTITION BY {} ", keys.join(", "))
            };
            let order: Vec<String> = order
                .iter()
                .map(|f| {
                    // Flink sorts NULL first ascending, which Calcite prints.
                    let direction = if f.descending {
                        " DESC NULLS LAST"
                    } else {
                        " NULLS FIRST"
                    };
                    format!("${}{direction}", f.column)
                })
                .collect();
            items.push(format!(
                "{row_number}=[ROW_NUMBER() OVER ({partition}ORDER BY {})]",
                order.join(", ")
            ));
            let condition = if *rank_start == 1 {
                format!("<=(${n}, {rank_end})")
            } else {
                format!("AND(>=(${n}, {rank_start}), <=(${n}, {rank_end}))")
            };
            let filtered = Line {
                text: format!("LogicalFilter(condition=[{condition}])"),
                inputs: vec![Line {
                    text: format!("LogicalProject({})", items.join(", ")),
                    inputs: vec![node(input)],
                }],
            };
            let mut kept: Vec<String> = unique_names(input.schema())
                .iter()
                .enumerate()
                .map(|(i, name)| format!("{name}=[${i}]"))
                .collect();
            if *output_rank_number {
                kept.push(format!("{}=[${n}]", schema.fields[n].name));
            }
            Line {
                text: format!("LogicalProject({})", kept.join(", ")),
                inputs: vec![filtered],
            }
        }
        LogicalPlan::Filter { input, predicate } => Line {
            text: format!(
                "LogicalFilter(condition=[{}])",
                positional(predicate, width(input))
            ),
            inputs: vec![node(input)],
        },
        LogicalPlan::Project {
            input,
            exprs,
            schema,
        } => {
            let names = unique_names(schema);
            let items: Vec<String> = exprs
                .iter()
                .zip(&names)
                .map(|(e, n)| format!("{n}=[{}]", positional(e, width(input))))
                .collect();
            Line {
                text: format!("LogicalProject({})", items.join(", ")),
                inputs: vec![node(input)],
            }
        }
        LogicalPlan::Join {
            left,
            right,
            kind,
            left_keys,
            right_keys,
            residual,
            hints,
            lookup,
            ..
        } => {
            let lw = width(left);
            if let Some(lookup) = lookup {
                return correlate(left, right, *kind, left_keys, right_keys, residual, lookup);
            }
            let mut cond: Option<Expr> = None;
            let mut and = |e: Expr| {
                cond = Some(match cond.take() {
                    None => e,
                    Some(c) => Expr::bin(BinOp::And, c, e),
                })
            };
            for (l, r) in left_keys.iter().zip(right_keys) {
                and(Expr::bin(BinOp::Eq, Expr::col(*l), Expr::col(lw + r)));
            }
            if let Some(r) = residual {
                and(r.clone());
            }
            let cond = cond
                .map(|c| positional(&c, lw + width(right)))
                .unwrap_or_else(|| "true".to_string());
            let kind = match kind {
                JoinKind::Inner => "inner",
                JoinKind::Left => "left",
                JoinKind::Right => "right",
                JoinKind::Full => "full",
            };
            let mut text = format!("LogicalJoin(condition=[{cond}], joinType=[{kind}]");
            text.push_str(&hints_attr("joinHints", hints, &["MULTI_JOIN"]).unwrap_or_default());
            text.push_str(&hints_attr("stateTtlHints", hints, &["STATE_TTL"]).unwrap_or_default());
            text.push(')');
            Line {
                text,
                inputs: vec![node(left), node(right)],
            }
        }
        LogicalPlan::Aggregate {
            input,
            group_by,
            aggs,
            hints,
            ..
        } => {
            let group: Vec<String> = group_by.iter().map(|g| g.to_string()).collect();
            let mut text = format!("LogicalAggregate(group=[{{{}}}]", group.join(", "));
            for a in aggs {
                text.push_str(&format!(", {}=[{}]", a.name, agg_call(a)));
            }
            text.push_str(&hints_attr("stateTtlHints", hints, &["STATE_TTL"]).unwrap_or_default());
            text.push(')');
            // Calcite reads the table directly when the aggregate's
            // input columns are the table's, in order.
            let input_line = match input.as_ref() {
                LogicalPlan::Project {
                    input: below,
                    exprs,
                    ..
                } if exprs.len() == width(below)
                    && exprs.iter().enumerate().all(|(i, e)| *e == Expr::col(i)) =>
                {
                    node(below)
                }
                other => node(other),
            };
            Line {
                text,
                inputs: vec![input_line],
            }
        }
    }
}

fn write(line: &Line, last: &mut Vec<bool>, out: &mut String) {
    if let Some((l, above)) = last.split_last() {
        for &a in above {
            out.push_str(if a { "   " } else { ":  " });
        }
        out.push_str(if *l { "+- " } else { ":- " });
    }
    out.push_str(&line.text);
    out.push('\n');
    for (i, c) in line.inputs.iter().enumerate() {
        last.push(i + 1 == line.inputs.len());
        write(c, last, out);
        last.pop();
    }
}

/// The tree of `query`, under a `LogicalSink` into `sink` when given.
pub(crate) fn ast(sink: Option<&str>, query: &LogicalPlan) -> String {
    let q = node(query);
    let root = match sink {
        Some(table) => Line {
            text: format!(
                "LogicalSink(table=[{}], fields=[{}])",
                qualified(table),
                unique_names(query.schema()).join(", ")
            ),
            inputs: vec![q],
        },
        None => q,
    };
    let mut out = String::new();
    write(&root, &mut Vec::new(), &mut out);
    out
}
