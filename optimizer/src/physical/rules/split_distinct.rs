//! `split_distinct_aggregate`: spreads a distinct aggregate over buckets.
//!
//! ```text
//! before:
//!   SELECT day, COUNT(DISTINCT user_id), SUM(x) FROM T GROUP BY day
//!
//! after (table.optimizer.distinct-agg.split.enabled = true):
//!   SELECT day, SUM(cnt), SUM(s)
//!   FROM (SELECT day, COUNT(DISTINCT user_id) AS cnt, SUM(x) AS s
//!         FROM T GROUP BY day, MOD(HASH_CODE(user_id), 1024))
//!   GROUP BY day
//! ```
//!
//! Why it is exact: a distinct value always hashes to the same bucket, so
//! the buckets partition each group's distinct values and the outer SUM of
//! per-bucket distinct counts is the group's distinct count. Non-distinct
//! calls ride along: `COUNT`/`SUM` are summed, `MIN`/`MAX` re-aggregated
//! (over an updating input, so with their value maps), `AVG` split into
//! `SUM` and `COUNT` and divided at the end. The inner aggregate's updates
//! reach the outer one as retractions, which the outer one applies exactly.
//!
//! A window aggregate over a TUMBLE, HOP or CUMULATE window splits the same
//! way into two window aggregates over the same windows ([`split_window`]).
//!
//! With distinct calls on several columns each input row is expanded once
//! per distinct column (as Flink's `Expand`): copy `i` is bucketed by the
//! `i`-th distinct column and feeds only the calls on that column, and copy
//! 0 also feeds the non-distinct calls, so nothing is counted twice.

use super::{PhysicalRule, RuleContext};
use crate::config::Config;
use crate::error::Result;
use crate::logical::{Field, Schema};
use crate::physical::node::calc;
use crate::physical::node::expand::Expand;
use crate::physical::node::group_aggregate::{GroupAggregate, PartialFinal};
use crate::physical::node::window_aggregate::{AttachedWindow, WindowAggregate};
use crate::physical::node::PhysicalNode;
use operators::agg::{AggKind, AggSpec};
use operators::expr::{BinOp, Expr};
use operators::value::{DataType, Value};

/// The rule applies when some call is a distinct COUNT, SUM or AVG.
pub fn applies(aggs: &[AggSpec]) -> bool {
    aggs.iter()
        .any(|a| a.distinct && matches!(a.kind, AggKind::Count | AggKind::Sum | AggKind::Avg))
}

fn field(name: String, data_type: DataType) -> Field {
    Field {
        name,
        qualifier: None,
        data_type,
        nullable: true,
    }
}

fn sum_type(t: DataType) -> DataType {
    if t == DataType::Double {
        DataType::Double
    } else {
        DataType::BigInt
    }
}

/// How one original call is rebuilt from outer outputs.
enum Final {
    /// The outer output at this index.
    Direct(usize),
    /// `sum / count` of two outer outputs (AVG).
    Avg {
        sum: usize,
        count: usize,
        double: bool,
    },
}

pub struct SplitDistinctAggregate;

impl PhysicalRule for SplitDistinctAggregate {
    fn name(&self) -> &'static str {
        "split_distinct_aggregate"
    }

    fn optimize(&self, root: PhysicalNode, ctx: &RuleContext) -> Result<PhysicalNode> {
        if !ctx.config.split_distinct_enabled() {
            return Ok(root);
        }
        Ok(split(root, ctx.config))
    }
}

/// Splits every aggregate the rule applies to, below `node` first.
fn split(mut node: PhysicalNode, config: &Config) -> PhysicalNode {
    node.inputs = std::mem::take(&mut node.inputs)
        .into_iter()
        .map(|c| split(c, config))
        .collect();
    if let Some(agg) = node.kind.get::<WindowAggregate>() {
        let splits =
            !agg.global && agg.attached.is_none() && agg.window.is_aligned() && applies(&agg.aggs);
        return if splits {
            split_window(node, config)
        } else {
            node
        };
    }
    let splits = node
        .kind
        .get::<GroupAggregate>()
        .is_some_and(|a| !a.global && a.partial_final.is_none() && applies(&a.aggs));
    if !splits {
        return node;
    }
    let agg = node
        .kind
        .get::<GroupAggregate>()
        .expect("a group aggregate")
        .clone();
    let child = node.inputs.pop().expect("an aggregate has one input");
    let half = |child: PhysicalNode,
                group_by: Vec<usize>,
                aggs: Vec<AggSpec>,
                names: Vec<String>,
                schema: Schema,
                which: PartialFinal| {
        let mut n = GroupAggregate::over(
            child,
            group_by,
            aggs,
            names,
            schema,
            agg.mini_batch_size,
            agg.ttl.clone(),
            config.parallelism(),
        );
        if let Some(a) = n.kind.get_mut::<GroupAggregate>() {
            a.partial_final = Some(which);
        }
        n
    };
    rewrite(
        child,
        &agg.group_by,
        &agg.aggs,
        &agg.agg_names,
        &node.schema,
        config,
        &half,
    )
}

/// A window aggregate split as Flink splits one: the partial half is a
/// window aggregate over the same windows grouped by the key and the
/// bucket, the final half one over the partial's windows (window-attached),
/// each emitting once per window.
///
/// ```text
/// after, over TUMBLE(ts, 10 s):
///   WindowAggregate(groupBy=[k], window=[TUMBLE(win_start=[window_start], win_end=[window_end], size=[10 s])], select=[k, SUM($f2) AS du, ...])
///   +- WindowAggregate(groupBy=[k, $f5], window=[TUMBLE(time_col=[ts], size=[10 s])], select=[k, $f5, COUNT(DISTINCT u) AS $f2, ...])
///      +- Calc(select=[k, u, ts, MOD(HASH_CODE(u), 1024) AS $f5])
/// ```
///
/// Exact for the same reason as the group aggregate's split, window by
/// window: the partial half emits each (key, bucket) once per window,
/// before the watermark that fires the window reaches the final half.
fn split_window(mut node: PhysicalNode, config: &Config) -> PhysicalNode {
    let agg = node
        .kind
        .get::<WindowAggregate>()
        .expect("a window aggregate")
        .clone();
    let child = node.inputs.pop().expect("an aggregate has one input");
    let window_field = |name: &str| Field {
        name: name.to_string(),
        qualifier: None,
        data_type: DataType::Timestamp,
        nullable: false,
    };
    let half = |child: PhysicalNode,
                group_by: Vec<usize>,
                aggs: Vec<AggSpec>,
                names: Vec<String>,
                mut schema: Schema,
                which: PartialFinal| {
        let n = schema.len();
        schema.fields.push(window_field("window_start"));
        schema.fields.push(window_field("window_end"));
        let parallelism = if group_by.is_empty() {
            1
        } else {
            config.parallelism()
        };
        let (time_col, attached) = match which {
            PartialFinal::Partial => (agg.time_col, None),
            // The partial's output: its group key and calls, then
            // window_start and window_end.
            PartialFinal::Final => {
                let start = child.schema.len() - 2;
                (
                    start + 1,
                    Some(AttachedWindow {
                        window_start: Some(start),
                    }),
                )
            }
        };
        debug_assert_eq!(n, group_by.len() + aggs.len());
        PhysicalNode::new(
            WindowAggregate {
                group_by,
                aggs,
                agg_names: names,
                window: agg.window,
                time_col,
                global: false,
                partition_keys: Vec::new(),
                per_window: agg.per_window && attached.is_none(),
                attached,
            },
            vec![child],
            schema,
            None,
            parallelism,
        )
    };
    rewrite(
        child,
        &agg.group_by,
        &agg.aggs,
        &agg.agg_names,
        &node.schema,
        config,
        &half,
    )
}

/// The half of a split aggregate: `(input, group key, calls, names,
/// schema, which half)`; a half may append columns of its own after the
/// calls (a window aggregate's `window_start` and `window_end`), which the
/// split passes through.
type Half<'a> = dyn Fn(PhysicalNode, Vec<usize>, Vec<AggSpec>, Vec<String>, Schema, PartialFinal) -> PhysicalNode
    + 'a;

fn rewrite(
    child: PhysicalNode,
    group_by: &[usize],
    aggs: &[AggSpec],
    names: &[String],
    schema: &Schema,
    config: &Config,
    half: &Half,
) -> PhysicalNode {
    let buckets = config.split_bucket_num() as i64;
    let width = child.schema.len();
    let child_types = child.schema.types();
    let arg_type = |c: Option<usize>| c.map(|c| child_types[c]).unwrap_or(DataType::BigInt);
    // Distinct columns in order of first use; copy i is bucketed by column i.
    let mut distinct_cols: Vec<usize> = Vec::new();
    for a in aggs {
        if a.distinct && matches!(a.kind, AggKind::Count | AggKind::Sum | AggKind::Avg) {
            let c = a.arg.expect("distinct call has an argument");
            if !distinct_cols.contains(&c) {
                distinct_cols.push(c);
            }
        }
    }
    let group_of = |a: &AggSpec| -> usize {
        if a.distinct && matches!(a.kind, AggKind::Count | AggKind::Sum | AggKind::Avg) {
            distinct_cols
                .iter()
                .position(|c| Some(*c) == a.arg)
                .unwrap_or(0)
        } else {
            0
        }
    };
    let bucket_of = |c: usize| {
        Expr::bin(
            BinOp::Mod,
            Expr::Hash(Box::new(Expr::col(c))),
            Expr::lit(Value::Int(buckets)),
        )
    };

    // 1. Bucket column (and, for several distinct columns, Expand with one
    //    filter column per call).
    let mut bucketed_fields = child.schema.fields.clone();
    // Flink's names for generated columns: `$f` and the position.
    bucketed_fields.push(field(format!("$f{width}"), DataType::Int));
    let expand = distinct_cols.len() > 1;
    let bucket_col = width;
    let mut filter_cols: Vec<Option<usize>> = aggs.iter().map(|a| a.filter).collect();
    let bucketed = if expand {
        for (j, _) in aggs.iter().enumerate() {
            bucketed_fields.push(field(format!("$f{}", width + 1 + j), DataType::Boolean));
            filter_cols[j] = Some(width + 1 + j);
        }
        let projections = distinct_cols
            .iter()
            .enumerate()
            .map(|(i, &d)| {
                let mut p: Vec<Expr> = (0..width).map(Expr::col).collect();
                p.push(bucket_of(d));
                for a in aggs {
                    p.push(if group_of(a) == i {
                        a.filter
                            .map(Expr::col)
                            .unwrap_or(Expr::lit(Value::Bool(true)))
                    } else {
                        Expr::lit(Value::Bool(false))
                    });
                }
                p
            })
            .collect();
        let parallelism = child.parallelism;
        PhysicalNode::new(
            Expand { projections },
            vec![child],
            Schema {
                fields: bucketed_fields,
            },
            None,
            parallelism,
        )
    } else {
        let mut p: Vec<Expr> = (0..width).map(Expr::col).collect();
        p.push(bucket_of(distinct_cols[0]));
        calc::over(
            child,
            None,
            Some(p),
            Schema {
                fields: bucketed_fields,
            },
        )
    };
    let bucketed_schema = bucketed.schema.clone();

    // 2. Inner aggregate grouped by (group key, bucket).
    let mut inner_group: Vec<usize> = group_by.to_vec();
    inner_group.push(bucket_col);
    let mut inner: Vec<AggSpec> = Vec::new();
    let mut inner_names: Vec<String> = Vec::new();
    let mut push_inner = |spec: AggSpec, name: String| {
        inner.push(spec);
        inner_names.push(name);
        inner.len() - 1
    };
    // Per original call: the inner outputs it needs and how to finish it.
    let mut plans: Vec<(Vec<(usize, AggKind)>, bool)> = Vec::new();
    for (j, a) in aggs.iter().enumerate() {
        let filter = filter_cols[j];
        let call = |kind: AggKind, distinct: bool, t: DataType| AggSpec {
            kind,
            arg: a.arg,
            distinct,
            filter,
            result_type: t,
        };
        let is_distinct =
            a.distinct && matches!(a.kind, AggKind::Count | AggKind::Sum | AggKind::Avg);
        let name = |s: &str| format!("{}${j}", s);
        match a.kind {
            AggKind::Avg => {
                let t = sum_type(arg_type(a.arg));
                let s = push_inner(call(AggKind::Sum, is_distinct, t), name("sum"));
                let c = push_inner(
                    call(AggKind::Count, is_distinct, DataType::BigInt),
                    name("count"),
                );
                plans.push((
                    vec![(s, AggKind::Sum), (c, AggKind::Sum)],
                    a.result_type == DataType::Double,
                ));
            }
            AggKind::Min | AggKind::Max => {
                let i = push_inner(call(a.kind, false, a.result_type), name(a.kind.name()));
                plans.push((vec![(i, a.kind)], false));
            }
            kind => {
                let i = push_inner(call(kind, is_distinct, a.result_type), name(kind.name()));
                plans.push((vec![(i, AggKind::Sum)], false));
            }
        }
    }
    let g = group_by.len();
    let mut inner_fields: Vec<Field> = inner_group
        .iter()
        .map(|&i| bucketed_schema.fields[i].clone())
        .collect();
    // Flink names the inner outputs `$f<position>`, `_0` added on a clash.
    let inner_names: Vec<String> = inner_names
        .iter()
        .enumerate()
        .map(|(j, _)| {
            let base = format!("$f{}", inner_group.len() + j);
            let taken = |n: &str| inner_fields.iter().any(|f| f.name == n);
            if !taken(&base) {
                return base;
            }
            (0..)
                .map(|k| format!("{base}_{k}"))
                .find(|n| !taken(n))
                .expect("a free name")
        })
        .collect();
    for (spec, n) in inner.iter().zip(&inner_names) {
        inner_fields.push(field(n.clone(), spec.result_type));
    }
    let inner_node = half(
        bucketed,
        inner_group,
        inner,
        inner_names,
        Schema {
            fields: inner_fields.clone(),
        },
        PartialFinal::Partial,
    );

    // 3. Outer aggregate by the group key over the inner outputs.
    let mut outer: Vec<AggSpec> = Vec::new();
    let mut outer_names: Vec<String> = Vec::new();
    let mut finals: Vec<Final> = Vec::new();
    for (j, (parts, double)) in plans.iter().enumerate() {
        let mut idx = Vec::new();
        for (inner_i, kind) in parts {
            let col = g + 1 + inner_i;
            let t = inner_fields[col].data_type;
            outer.push(AggSpec {
                kind: *kind,
                arg: Some(col),
                distinct: false,
                filter: None,
                result_type: if *kind == AggKind::Sum {
                    sum_type(t)
                } else {
                    t
                },
            });
            outer_names.push(if parts.len() == 1 {
                names[j].clone()
            } else {
                format!("{}${}", names[j], idx.len())
            });
            idx.push(outer.len() - 1);
        }
        finals.push(if idx.len() == 2 {
            Final::Avg {
                sum: idx[0],
                count: idx[1],
                double: *double,
            }
        } else {
            Final::Direct(idx[0])
        });
    }
    let mut outer_fields: Vec<Field> = inner_fields[..g].to_vec();
    for (spec, n) in outer.iter().zip(&outer_names) {
        outer_fields.push(field(n.clone(), spec.result_type));
    }
    let outer_len = outer.len();
    let outer_node = half(
        inner_node,
        (0..g).collect(),
        outer,
        outer_names,
        Schema {
            fields: outer_fields,
        },
        PartialFinal::Final,
    );

    // 4. The original output: AVG divided, everything else as is, then
    //    the columns the halves add after the calls.
    if finals.iter().all(|f| matches!(f, Final::Direct(_))) {
        let mut n = outer_node;
        n.schema = schema.clone();
        return n;
    }
    let added = outer_node.schema.len() - g - outer_len;
    let mut projection: Vec<Expr> = (0..g).map(Expr::col).collect();
    for f in &finals {
        projection.push(match f {
            Final::Direct(i) => Expr::col(g + i),
            Final::Avg { sum, count, double } => {
                let s = Expr::col(g + sum);
                let c = Expr::col(g + count);
                let num = if *double {
                    Expr::ToDouble(Box::new(s))
                } else {
                    s
                };
                Expr::Case {
                    operand: None,
                    branches: vec![(
                        Expr::bin(BinOp::Eq, c.clone(), Expr::lit(Value::Int(0))),
                        Expr::lit(Value::Null),
                    )],
                    otherwise: Some(Box::new(Expr::bin(BinOp::Div, num, c))),
                }
            }
        });
    }
    projection.extend((0..added).map(|i| Expr::col(g + outer_len + i)));
    calc::over(outer_node, None, Some(projection), schema.clone())
}
