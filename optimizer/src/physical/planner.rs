//! From a logical plan to the physical plan that runs: a translation node
//! by node into the plainest physical tree, then the optimizer's rules
//! (`physical/rules/mod.rs`), in order.
//!
//! The translation:
//! - adjacent `Filter`/`Project` nodes fuse into one `Calc`, and a `Calc`
//!   directly above a scan fuses into the source read;
//! - `Aggregate` becomes a one-phase `GroupAggregate` hashed on its group
//!   key (a global aggregate runs on one subtask), in mini-batch mode when
//!   `table.exec.mini-batch.enabled` is on;
//! - a `Deduplicate` partitioned by a window TVF's window becomes a
//!   `WindowDeduplicate` over the TVF, hashed on its other keys;
//! - a `Join` of two windowed inputs on both `window_start` and
//!   `window_end` becomes a `WindowJoin` on its other keys;
//! - a `Rank` partitioned by the window of a window TVF or of a window
//!   aggregate becomes a `WindowRank` over it, hashed on its other keys;
//! - an INNER `Join` whose condition bounds a rowtime attribute of each
//!   insert-only input against the other becomes an `IntervalJoin`
//!   (`physical/interval_bounds.rs`);
//! - any other `Join` becomes the binary regular join hashed on its join keys, with
//!   each side's state layout chosen from its unique key (mini-batch when
//!   configured), keeping what the query's hints say of it;
//! - each stateful node gets the TTL of its inputs (`physical/state_ttl.rs`).
//!
//! Everything that chooses between strategies is a rule.

use super::interval_bounds::interval_bounds;
use super::node::calc;
use super::node::deduplicate::Deduplicate;
use super::node::group_aggregate::GroupAggregate;
use super::node::group_window_aggregate::GroupWindowAggregate;
use super::node::interval_join::IntervalJoin;
use super::node::join::{Join, JoinHints};
use super::node::lookup_join::LookupJoin;
use super::node::rank::{Rank, RankSettings};
use super::node::source::Source;
use super::node::union::Union;
use super::node::window_aggregate::{AttachedWindow, WindowAggregate};
use super::node::window_deduplicate::WindowDeduplicate;
use super::node::window_join::{InputWindow, WindowJoin};
use super::node::window_rank::WindowRank;
use super::node::window_table_function::WindowTableFunction;
use super::plan::{JobSettings, PhysicalNode, PhysicalPlan, QueryPlan, SinkPlan};
use super::rules::{PhysicalOptimizer, RuleContext};
use super::state_ttl;
use crate::catalog_view::CatalogView;
use crate::config::Config;
use crate::error::{PlanError, Result};
use crate::logical::{AggCall, AggFunc, Field, InsertStatement, JoinKind, LogicalPlan, Schema};
use crate::logical_rewrite;
use operators::agg::{AggKind, AggSpec};
use operators::changelog::SinkEncoding;
use operators::expr::Expr;
use operators::join::JoinStateLayout;
use operators::join::JoinType;
use operators::rank::deduplicate::{DedupOrder, Keep};
use operators::rank::topn::SortField;
use operators::value::DataType;
use operators::window::WindowSpec;

/// Plans `INSERT INTO sink <query>`.
pub fn plan_insert(
    stmt: &InsertStatement,
    catalog: &dyn CatalogView,
    config: &Config,
) -> Result<PhysicalPlan> {
    config.validate()?;
    let optimizer = PhysicalOptimizer::from_config(config)?;
    let table = catalog
        .table(&stmt.sink)
        .ok_or_else(|| PlanError::validation(format!("unknown sink table '{}'", stmt.sink)))?;
    let root = translate(
        &logical_rewrite::rewrite(&stmt.query, config),
        catalog,
        config,
    )?;
    let encoding = match &table.primary_key {
        Some(pk) => SinkEncoding::Upsert { key: pk.clone() },
        None => SinkEncoding::Retract,
    };
    let sink = SinkPlan {
        table: table.clone(),
        encoding,
    };
    let ctx = RuleContext {
        config,
        sink: Some(&sink),
    };
    let root = optimizer.optimize(root, &ctx)?;
    Ok(PhysicalPlan {
        root,
        sink,
        settings: JobSettings::resolve(config),
    })
}

/// Plans a query without a sink (`EXPLAIN SELECT`): its result as a
/// stream with update-before rows, as a retract sink would take it.
pub fn plan_query(
    query: &LogicalPlan,
    catalog: &dyn CatalogView,
    config: &Config,
) -> Result<QueryPlan> {
    config.validate()?;
    let optimizer = PhysicalOptimizer::from_config(config)?;
    let root = translate(&logical_rewrite::rewrite(query, config), catalog, config)?;
    let root = optimizer.optimize(root, &RuleContext { config, sink: None })?;
    Ok(QueryPlan {
        root,
        settings: JobSettings::resolve(config),
    })
}

/// Whether a join input is the join before it in a left-deep chain
/// (through the filters and projections the logical rewrites put between).
fn is_join_through_calcs(plan: &LogicalPlan) -> bool {
    match plan {
        LogicalPlan::Join { .. } => true,
        LogicalPlan::Project { input, .. } | LogicalPlan::Filter { input, .. } => {
            is_join_through_calcs(input)
        }
        _ => false,
    }
}

/// The unique key of a Top-N's input when every sort column only moves a
/// row up (Flink's condition for `UpdateFastStrategy`, from its
/// `FlinkRelMdModifiedMonotonicity`): the input is a group aggregate over
/// an insert-only input, and each sort column is a group column
/// (constant), or a `COUNT` or `MAX` (increasing) sorted descending, or a
/// `MIN` (decreasing) sorted ascending. `SUM` may fall, so it is not.
fn monotonic_unique_key(
    input: &LogicalPlan,
    node: &PhysicalNode,
    order: &[SortField],
) -> Option<Vec<usize>> {
    // The aggregate, and where each of the input's columns comes from in
    // its output (through a projection of plain columns).
    let (group_by, aggs, columns): (&[usize], &[AggCall], Vec<Option<usize>>) = match input {
        LogicalPlan::Aggregate { group_by, aggs, .. } => (
            group_by,
            aggs,
            (0..group_by.len() + aggs.len()).map(Some).collect(),
        ),
        LogicalPlan::Project { input, exprs, .. } => match input.as_ref() {
            LogicalPlan::Aggregate { group_by, aggs, .. } => (
                group_by,
                aggs,
                exprs
                    .iter()
                    .map(|e| match e {
                        Expr::Column(c) => Some(*c),
                        _ => None,
                    })
                    .collect(),
            ),
            _ => return None,
        },
        _ => return None,
    };
    // The aggregate's input must be insert-only.
    let mut reads = node;
    while reads.inputs.len() == 1 && !reads.inputs[0].is_insert_only() {
        reads = &reads.inputs[0];
    }
    if node.is_insert_only() || reads.inputs.len() != 1 {
        return None;
    }
    let groups = group_by.len();
    let monotonic = order.iter().all(|f| {
        let Some(Some(c)) = columns.get(f.column) else {
            return false;
        };
        if *c < groups {
            return true;
        }
        match aggs.get(c - groups).map(|a| a.func) {
            Some(AggFunc::Count | AggFunc::CountStar | AggFunc::Max) => f.descending,
            Some(AggFunc::Min) => !f.descending,
            _ => false,
        }
    });
    monotonic.then(|| node.unique_key.clone()).flatten()
}

/// The physical node of each logical node, inputs first.
fn translate(
    plan: &LogicalPlan,
    catalog: &dyn CatalogView,
    config: &Config,
) -> Result<PhysicalNode> {
    Ok(match plan {
        LogicalPlan::Scan { table, schema, .. } => {
            let def = catalog
                .table(table)
                .ok_or_else(|| PlanError::validation(format!("unknown table '{table}'")))?;
            Source::scan(def, schema.clone())
        }
        LogicalPlan::Filter { input, predicate } => {
            let child = translate(input, catalog, config)?;
            let schema = child.schema.clone();
            calc::over(child, Some(predicate.clone()), None, schema)
        }
        LogicalPlan::Project {
            input,
            exprs,
            schema,
        } => {
            let child = translate(input, catalog, config)?;
            let identity = exprs.len() == child.schema.len()
                && exprs.iter().enumerate().all(|(i, e)| *e == Expr::Column(i));
            if identity {
                let mut c = child;
                c.schema = schema.clone();
                c
            } else {
                calc::over(child, None, Some(exprs.clone()), schema.clone())
            }
        }
        LogicalPlan::Union {
            left,
            right,
            schema,
        } => {
            let l = translate(left, catalog, config)?;
            let r = translate(right, catalog, config)?;
            Union::over(l, r, schema.clone())
        }
        LogicalPlan::WindowTvf {
            input,
            time_col,
            window,
            schema,
            ..
        } => {
            if !window.is_aligned() {
                return Err(PlanError::unsupported(
                    "a SESSION window TVF runs under a window aggregate (GROUP BY window_start, window_end, ...) only; \
                     without one the lab does not run it",
                ));
            }
            let child = translate(input, catalog, config)?;
            let parallelism = child.parallelism;
            PhysicalNode::new(
                WindowTableFunction {
                    window: *window,
                    time_col: *time_col,
                },
                vec![child],
                schema.clone(),
                None,
                parallelism,
            )
        }
        LogicalPlan::Deduplicate {
            input,
            key,
            keep,
            order,
            ..
        } => {
            if let Some(w) = window_deduplicate(input, key, *keep, *order, catalog, config)? {
                return Ok(w);
            }
            let child = translate(input, catalog, config)?;
            let ttl = state_ttl::ttl_for(None, &[], config);
            Deduplicate::over(
                child,
                key.clone(),
                *keep,
                *order,
                config.mini_batch().map(|m| m.size),
                ttl,
                config.parallelism(),
            )
        }
        LogicalPlan::Rank {
            input,
            partition_by,
            order,
            rank_start,
            rank_end,
            output_rank_number,
            ..
        } => {
            let rank = RankRange {
                partition_by,
                order,
                rank_start: *rank_start,
                rank_end: *rank_end,
                output_rank_number: *output_rank_number,
            };
            if let Some(w) = window_rank(input, &rank, catalog, config)? {
                return Ok(w);
            }
            let child = translate(input, catalog, config)?;
            let monotonic_unique_key = monotonic_unique_key(input, &child, order);
            Rank::over(
                child,
                RankSettings {
                    partition_key: partition_by.clone(),
                    order: order.clone(),
                    rank_start: *rank_start,
                    rank_end: *rank_end,
                    output_rank_number: *output_rank_number,
                    cache_size: config.rank_topn_cache_size(),
                    ttl: state_ttl::ttl_for(None, &[], config),
                    parallelism: config.parallelism(),
                    monotonic_unique_key,
                },
            )
        }
        LogicalPlan::Aggregate {
            input,
            group_by,
            aggs,
            schema,
            hints,
        } => {
            if let Some(w) = window_aggregate(input, group_by, aggs, schema, catalog, config)? {
                return Ok(w);
            }
            if let Some(w) =
                attached_window_aggregate(input, group_by, aggs, schema, catalog, config)?
            {
                return Ok(w);
            }
            let child = translate(input, catalog, config)?;
            let specs: Vec<AggSpec> = aggs.iter().map(agg_spec).collect();
            let names: Vec<String> = aggs.iter().map(|a| a.name.clone()).collect();
            let hinted = state_ttl::hinted(hints)?;
            let ttl = state_ttl::ttl_for(state_ttl::input_alias(input).as_deref(), &hinted, config);
            let mut node = GroupAggregate::over(
                child,
                group_by.clone(),
                specs,
                names,
                schema.clone(),
                config.mini_batch().map(|m| m.size),
                ttl,
                config.parallelism(),
            );
            if let Some(agg) = node.kind.get_mut::<GroupAggregate>() {
                agg.async_state = config.async_state_enabled() && agg.async_state_applies();
            }
            node
        }
        LogicalPlan::Join {
            left,
            right,
            kind,
            left_keys,
            right_keys,
            residual,
            schema,
            hints,
            lookup,
        } => {
            if let Some(lookup) = lookup {
                let probe = translate(left, catalog, config)?;
                return lookup_join(probe, plan, right, lookup, catalog, config);
            }
            let mut multi_join: Vec<String> = Vec::new();
            for hint in hints
                .iter()
                .filter(|h| h.name.eq_ignore_ascii_case("MULTI_JOIN"))
            {
                for a in &hint.args {
                    let a = a.to_lowercase();
                    if !multi_join.contains(&a) {
                        multi_join.push(a);
                    }
                }
            }
            let hints = JoinHints {
                left_in_chain: is_join_through_calcs(left),
                left_alias: state_ttl::input_alias(left),
                right_alias: state_ttl::input_alias(right),
                multi_join,
                state_ttl: state_ttl::hinted(hints)?,
            };
            let l = translate(left, catalog, config)?;
            let r = translate(right, catalog, config)?;
            let ttl = [
                state_ttl::ttl_for(hints.left_alias.as_deref(), &hints.state_ttl, config),
                state_ttl::ttl_for(hints.right_alias.as_deref(), &hints.state_ttl, config),
            ];
            if let Some(n) = window_join(left, right, &l, &r, plan, config)? {
                return Ok(n);
            }
            if let Some(n) = interval_join(left, right, &l, &r, plan, catalog, config) {
                return Ok(n);
            }
            let join = Join {
                join_type: match kind {
                    JoinKind::Inner => JoinType::Inner,
                    JoinKind::Left => JoinType::Left,
                    JoinKind::Right => JoinType::Right,
                    JoinKind::Full => JoinType::Full,
                },
                left_keys: left_keys.clone(),
                right_keys: right_keys.clone(),
                residual: residual.clone(),
                // (Chosen from the inputs by `Join::over`.)
                left_layout: JoinStateLayout::NoUniqueKey,
                right_layout: JoinStateLayout::NoUniqueKey,
                mini_batch_size: config.mini_batch().map(|m| m.size),
                async_state: false,
                note: None,
                ttl,
                hints,
            };
            let join = Join {
                async_state: config.async_state_enabled() && join.async_state_applies(),
                ..join
            };
            Join::over(l, r, join, schema.clone(), config.parallelism())
        }
    })
}

/// A lookup join (`JOIN dim FOR SYSTEM_TIME AS OF o.pt`) of the probe
/// `probe` with the table `right` scans: the conditions on the table's
/// columns only filter the looked-up rows (Flink's Calc on the temporal
/// table), the rest stays the join condition; the cache is the table's
/// `lookup.*` options.
fn lookup_join(
    probe: PhysicalNode,
    plan: &LogicalPlan,
    right: &LogicalPlan,
    lookup: &crate::logical::Lookup,
    catalog: &dyn CatalogView,
    config: &Config,
) -> Result<PhysicalNode> {
    let LogicalPlan::Join {
        kind,
        left_keys,
        right_keys,
        residual,
        schema,
        ..
    } = plan
    else {
        return Err(PlanError::plan("a lookup join is a join"));
    };
    let LogicalPlan::Scan { table, .. } = right else {
        return Err(PlanError::plan("a lookup join looks up a table scan"));
    };
    let def = catalog
        .table(table)
        .ok_or_else(|| PlanError::validation(format!("unknown table '{table}'")))?;
    let cache = crate::lookup_options::partial_cache(&def.options)
        .map_err(|e| PlanError::config(format!("table '{table}': {e}")))?;
    let lw = probe.schema.len();
    let conjuncts: Vec<Expr> = residual
        .iter()
        .flat_map(|r| r.conjuncts())
        .cloned()
        .collect();
    let (on_table, rest): (Vec<Expr>, Vec<Expr>) = conjuncts.into_iter().partition(|c| {
        let mut cols = Vec::new();
        c.columns(&mut cols);
        !cols.is_empty() && cols.iter().all(|&x| x >= lw)
    });
    // A table column equal to a constant of its type is a lookup key too
    // (the equality also stays in the filter, as Flink prints it).
    let dim_types = def.schema.types();
    let mut constant_keys: Vec<(usize, operators::value::Value)> = Vec::new();
    for c in &on_table {
        let Some((col, v)) = crate::logical::Lookup::constant_equality(c, lw) else {
            continue;
        };
        let fits = match v {
            operators::value::Value::Null => true,
            operators::value::Value::Int(_) => dim_types[col].is_integer(),
            operators::value::Value::Str(_) => dim_types[col] == DataType::String,
            _ => false,
        };
        if fits && !right_keys.contains(&col) && !constant_keys.iter().any(|(k, _)| *k == col) {
            constant_keys.push((col, v.clone()));
        }
    }
    if left_keys.is_empty() && constant_keys.is_empty() {
        return Err(PlanError::validation(format!(
            "Temporal table join requires an equality condition on fields of table [default_catalog.default_database.{table}]: no column of '{table}' equals a column of the left input or a constant of its type"
        )));
    }
    let and = Expr::and_all;
    let join_type = match kind {
        JoinKind::Inner => JoinType::Inner,
        JoinKind::Left => JoinType::Left,
        other => {
            return Err(PlanError::unsupported(format!(
                "a lookup join is INNER or LEFT, not {other}"
            )))
        }
    };
    let node = LookupJoin {
        table: def.clone(),
        join_type,
        probe_keys: left_keys.clone(),
        lookup_keys: right_keys.clone(),
        constant_keys,
        table_filter: and(on_table).map(|f| f.replace_columns(&|c| Expr::col(c - lw))),
        condition: and(rest),
        time_col: lookup.time_col,
        cache,
    };
    let unique_key = node.unique_key(&probe);
    Ok(PhysicalNode::new(
        node,
        vec![probe],
        schema.clone(),
        unique_key,
        config.parallelism(),
    ))
}

/// A join of two windowed inputs (window TVFs, or window aggregates, with
/// Calcs between) on both `window_start` and `window_end` equalities, as
/// Flink's `StreamPhysicalWindowJoinRule` plans it (`WindowJoinUtil`): a
/// `WindowJoin` on the other keys; `None` when the keys hold neither
/// equality. One equality without the other, or two different windows,
/// is refused with Flink's message.
fn window_join(
    left: &LogicalPlan,
    right: &LogicalPlan,
    l: &PhysicalNode,
    r: &PhysicalNode,
    plan: &LogicalPlan,
    config: &Config,
) -> Result<Option<PhysicalNode>> {
    let LogicalPlan::Join {
        kind,
        left_keys,
        right_keys,
        residual,
        schema,
        ..
    } = plan
    else {
        return Ok(None);
    };
    let (Some((ls, le, lw)), Some((rs, re, rw))) =
        (left.join_window_columns(), right.join_window_columns())
    else {
        return Ok(None);
    };
    let pairs: Vec<(usize, usize)> = left_keys
        .iter()
        .copied()
        .zip(right_keys.iter().copied())
        .collect();
    let starts = pairs.contains(&(ls, rs));
    let ends = pairs.contains(&(le, re));
    if !starts && !ends {
        return Ok(None);
    }
    if starts != ends {
        return Err(PlanError::unsupported(
            "Currently, window join requires JOIN ON condition must contain both window starts \
             equality of input tables and window ends equality of input tables.",
        ));
    }
    if lw != rw {
        let spec = |w: operators::window::WindowSpec| w.explain("").replacen("(, ", "(", 1);
        return Err(PlanError::unsupported(format!(
            "Currently, window join doesn't support different window table function of left and \
             right inputs.\nThe left window table function is {}.\nThe right window table \
             function is {}.",
            spec(lw),
            spec(rw)
        )));
    }
    if !lw.is_aligned() {
        return Err(PlanError::unsupported(
            "a window join over SESSION windows is not supported (TUMBLE, HOP and CUMULATE are)",
        ));
    }
    if !l.is_insert_only() || !r.is_insert_only() {
        return Ok(None);
    }
    let (keys_l, keys_r): (Vec<usize>, Vec<usize>) = pairs
        .into_iter()
        .filter(|p| *p != (ls, rs) && *p != (le, re))
        .unzip();
    let parallelism = if keys_l.is_empty() {
        1
    } else {
        config.parallelism()
    };
    let join = WindowJoin {
        join_type: match kind {
            JoinKind::Inner => JoinType::Inner,
            JoinKind::Left => JoinType::Left,
            JoinKind::Right => JoinType::Right,
            JoinKind::Full => JoinType::Full,
        },
        left_keys: keys_l,
        right_keys: keys_r,
        residual: residual.clone(),
        left_window: InputWindow {
            window: lw,
            window_start: ls,
            window_end: le,
        },
        right_window: InputWindow {
            window: rw,
            window_start: rs,
            window_end: re,
        },
    };
    Ok(Some(PhysicalNode::new(
        join,
        vec![l.clone(), r.clone()],
        schema.clone(),
        None,
        parallelism,
    )))
}

/// An INNER join on keys whose condition bounds a rowtime attribute of
/// each insert-only input against the other, as Flink's
/// `StreamPhysicalIntervalJoinRule` plans it: an `IntervalJoin`
/// (`physical/interval_bounds.rs` finds the bounds); `None` otherwise.
fn interval_join(
    left: &LogicalPlan,
    right: &LogicalPlan,
    l: &PhysicalNode,
    r: &PhysicalNode,
    plan: &LogicalPlan,
    catalog: &dyn CatalogView,
    config: &Config,
) -> Option<PhysicalNode> {
    let LogicalPlan::Join {
        kind: JoinKind::Inner,
        left_keys,
        right_keys,
        residual: Some(residual),
        schema,
        ..
    } = plan
    else {
        return None;
    };
    if left_keys.is_empty() || !l.is_insert_only() || !r.is_insert_only() {
        return None;
    }
    let b = interval_bounds(left, right, residual, catalog)?;
    let join = IntervalJoin {
        join_type: JoinType::Inner,
        left_keys: left_keys.clone(),
        right_keys: right_keys.clone(),
        residual: Some(residual.clone()),
        left_time: b.left_time,
        right_time: b.right_time,
        lower: b.lower,
        upper: b.upper,
    };
    Some(PhysicalNode::new(
        join,
        vec![l.clone(), r.clone()],
        schema.clone(),
        None,
        config.parallelism(),
    ))
}

/// A deduplication partitioned by `window_start` and `window_end` of a
/// window TVF (and any other keys), as Flink's
/// `StreamPhysicalWindowDeduplicateRule` plans it: a `WindowDeduplicate`
/// over the TVF (and the Calc between), hashed on the other keys. `None`
/// when the partition does not hold both window columns.
fn window_deduplicate(
    input: &LogicalPlan,
    key: &[usize],
    keep: Keep,
    order: DedupOrder,
    catalog: &dyn CatalogView,
    config: &Config,
) -> Result<Option<PhysicalNode>> {
    let Some((start, end, window)) = input.window_columns() else {
        return Ok(None);
    };
    if !(key.contains(&start) && key.contains(&end)) {
        return Ok(None);
    }
    if !window.is_aligned() {
        return Err(PlanError::unsupported(
            "window deduplication over a SESSION window TVF is not supported (TUMBLE, HOP and CUMULATE are)",
        ));
    }
    let DedupOrder::RowTime(order_key) = order else {
        return Err(PlanError::unsupported(
            "a window deduplication ordered by a processing-time attribute is not supported: \
             order by the rowtime attribute",
        ));
    };
    let child = translate(input, catalog, config)?;
    let partition_keys: Vec<usize> = key
        .iter()
        .copied()
        .filter(|&k| k != start && k != end)
        .collect();
    let parallelism = if partition_keys.is_empty() {
        1
    } else {
        config.parallelism()
    };
    let schema = child.schema.clone();
    Ok(Some(PhysicalNode::new(
        WindowDeduplicate {
            window,
            window_start: start,
            window_end: end,
            partition_keys,
            order_key,
            keep,
        },
        vec![child],
        schema,
        None,
        parallelism,
    )))
}

/// What a `Rank` of the logical plan numbers and keeps.
struct RankRange<'a> {
    partition_by: &'a [usize],
    order: &'a [SortField],
    rank_start: u64,
    rank_end: u64,
    output_rank_number: bool,
}

/// The `window_start` and `window_end` columns of a window aggregate's
/// output (through projections and filters above it) and its window: an
/// aggregate grouped by both window columns of a window TVF, or of another
/// window aggregate's output (window-attached).
fn aggregated_window_columns(plan: &LogicalPlan) -> Option<(usize, usize, WindowSpec)> {
    match plan {
        LogicalPlan::Filter { input, .. } => aggregated_window_columns(input),
        LogicalPlan::Project { input, exprs, .. } => {
            let (s, e, window) = aggregated_window_columns(input)?;
            let at = |c: usize| exprs.iter().position(|x| *x == Expr::Column(c));
            Some((at(s)?, at(e)?, window))
        }
        LogicalPlan::Aggregate {
            input, group_by, ..
        } => {
            let (s, e, window) = input.join_window_columns()?;
            let at = |c: usize| group_by.iter().position(|&g| g == c);
            Some((at(s)?, at(e)?, window))
        }
        _ => None,
    }
}

/// A Top-N partitioned by `window_start` and `window_end` of a window TVF
/// or of a window aggregate (and any other keys), as Flink's
/// `StreamPhysicalWindowRankRule` plans it: a `WindowRank` over its input,
/// hashed on the other keys. `None` when the partition does not hold both
/// window columns.
fn window_rank(
    input: &LogicalPlan,
    rank: &RankRange,
    catalog: &dyn CatalogView,
    config: &Config,
) -> Result<Option<PhysicalNode>> {
    let (found, over_window_tvf) = match input.window_columns() {
        Some(w) => (Some(w), true),
        None => (aggregated_window_columns(input), false),
    };
    let Some((start, end, window)) = found else {
        return Ok(None);
    };
    let key = rank.partition_by;
    if !(key.contains(&start) && key.contains(&end)) {
        return Ok(None);
    }
    if over_window_tvf && !window.is_aligned() {
        return Err(PlanError::unsupported(
            "a window Top-N over a SESSION window TVF is not supported (TUMBLE, HOP and CUMULATE are; \
             over a SESSION window aggregate it is)",
        ));
    }
    let child = translate(input, catalog, config)?;
    let partition_keys: Vec<usize> = key
        .iter()
        .copied()
        .filter(|&k| k != start && k != end)
        .collect();
    let parallelism = if partition_keys.is_empty() {
        1
    } else {
        config.parallelism()
    };
    Ok(Some(WindowRank::over(
        WindowRank {
            window,
            window_start: start,
            window_end: end,
            partition_keys,
            order: rank.order.to_vec(),
            rank_start: rank.rank_start,
            rank_end: rank.rank_end,
            output_rank_number: rank.output_rank_number,
            over_window_tvf,
        },
        child,
        parallelism,
    )))
}

/// The emit strategy of a legacy group window, as Flink's
/// `WindowEmitStrategy` reads it when the window is planned: the allowed
/// lateness in ms (`table.exec.emit.allow-lateness`, else the idle state
/// retention `table.exec.state.ttl`, as Flink falls back to it; 0 for
/// SESSION, which Flink gives none) and whether late firings are on. Its
/// checks (`checkValidation`) with Flink's messages, and what the lab
/// cannot run: early firings and a positive late-fire delay both fire on
/// processing-time timers.
fn group_window_emit(config: &Config, window: &WindowSpec) -> Result<(i64, bool)> {
    let session = matches!(window, WindowSpec::Session { .. });
    let (early, late) = (
        config.emit_early_fire_enabled(),
        config.emit_late_fire_enabled(),
    );
    if session && (early || late) {
        return Err(PlanError::unsupported(
            "Session window doesn't support EMIT strategy currently.",
        ));
    }
    if early {
        return Err(PlanError::unsupported(format!(
            "'{}' = 'true' is not supported: early firings fire on processing-time timers, \
             which the lab's group windows do not run",
            crate::config::EMIT_EARLY_FIRE_ENABLED
        )));
    }
    let ms = |d: std::time::Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
    let lateness = if session {
        0
    } else {
        match ms(config.emit_allow_lateness()) {
            0 => ms(config.state_ttl()),
            l => l,
        }
    };
    if late && lateness <= 0 {
        return Err(PlanError::unsupported(format!(
            "The 'AFTER WATERMARK' emit strategy requires set 'minIdleStateRetentionTime' in \
             table config. (Set '{}' to the lateness to allow.)",
            crate::config::EMIT_ALLOW_LATENESS
        )));
    }
    if late && ms(config.emit_late_fire_delay()) > 0 {
        return Err(PlanError::unsupported(format!(
            "'{}' > 0 is not supported: a late-fire delay fires on processing-time timers, \
             which the lab's group windows do not run; 0 ms fires on every late element",
            crate::config::EMIT_LATE_FIRE_DELAY
        )));
    }
    Ok((lateness, late))
}

/// Flink 2.x refuses early and late firings on a window TVF aggregate
/// (`WindowUtil.checkEmitConfiguration`, called by the window aggregate
/// nodes): they belong to the legacy group windows
/// ([`group_window_emit`]). `table.exec.emit.allow-lateness` alone is
/// ignored there, as in Flink.
fn check_emit_configuration(config: &Config) -> Result<()> {
    if config.emit_early_fire_enabled() || config.emit_late_fire_enabled() {
        return Err(PlanError::unsupported(format!(
            "Currently, window table function based aggregate doesn't support early-fire and \
             late-fire configuration '{}' and '{}'.",
            crate::config::EMIT_EARLY_FIRE_ENABLED,
            crate::config::EMIT_LATE_FIRE_ENABLED
        )));
    }
    Ok(())
}

/// A HOP window aggregate is computed from slices of the slide (Flink's
/// `SliceAssigners.hopping`), so its size must be a multiple of the slide:
/// Flink refuses the plan otherwise, with this message. (A legacy `GROUP
/// BY HOP(...)` window assigns whole windows and takes any size.)
fn check_hop_slices(window: &WindowSpec) -> Result<()> {
    if let WindowSpec::Hop { size, slide } = *window {
        if size % slide != 0 {
            return Err(PlanError::unsupported(format!(
                "HOP table function based aggregate requires size must be an integral multiple \
                 of slide, but got size {size} ms and slide {slide} ms"
            )));
        }
    }
    Ok(())
}

fn agg_spec(a: &AggCall) -> AggSpec {
    AggSpec {
        kind: match a.func {
            AggFunc::CountStar => AggKind::CountStar,
            AggFunc::Count => AggKind::Count,
            AggFunc::Sum => AggKind::Sum,
            AggFunc::Min => AggKind::Min,
            AggFunc::Max => AggKind::Max,
            AggFunc::Avg => AggKind::Avg,
        },
        arg: a.arg,
        distinct: a.distinct,
        filter: a.filter,
        result_type: a.output_type,
    }
}

/// An aggregate grouped by `window_start` and `window_end` of a window TVF
/// (through the Project that computes its columns and any filters), as
/// Flink plans it: a `WindowAggregate` over a Calc of the TVF's input
/// (group keys, arguments, filters, then the time column), and a Calc
/// putting its output in the query's order. `None` when the aggregate
/// does not group by a window. Over a legacy group window (the binder's
/// TVF marked `group_window`) it is a `GroupWindowAggregate` with its emit
/// strategy instead, whose output ends with Flink's four window
/// properties.
fn window_aggregate(
    input: &LogicalPlan,
    group_by: &[usize],
    aggs: &[AggCall],
    schema: &Schema,
    catalog: &dyn CatalogView,
    config: &Config,
) -> Result<Option<PhysicalNode>> {
    let LogicalPlan::Project {
        input: inner,
        exprs,
        schema: pschema,
    } = input
    else {
        return Ok(None);
    };
    let mut predicates = Vec::new();
    let mut below = inner.as_ref();
    while let LogicalPlan::Filter { input, predicate } = below {
        predicates.push(predicate.clone());
        below = input;
    }
    let LogicalPlan::WindowTvf {
        input: data,
        time_col,
        window,
        partition_by,
        group_window,
        ..
    } = below
    else {
        return Ok(None);
    };
    let n = data.schema().len();
    let position = |c: usize| group_by.iter().position(|&g| exprs[g] == Expr::Column(c));
    let (start, end) = (position(n), position(n + 1));
    let (Some(start), Some(end)) = (start, end) else {
        if start.is_some() || end.is_some() {
            return Err(PlanError::unsupported(
                "a window aggregate groups by both window_start and window_end",
            ));
        }
        return Ok(None);
    };
    let reads_window = |e: &Expr| {
        let mut cols = Vec::new();
        e.columns(&mut cols);
        cols.iter().any(|&c| c >= n)
    };
    let emit = if *group_window {
        Some(group_window_emit(config, window)?)
    } else {
        check_emit_configuration(config)?;
        check_hop_slices(window)?;
        None
    };
    if predicates.iter().any(reads_window) {
        return Err(PlanError::unsupported(
            "a filter on window_start, window_end or window_time below a window aggregate is not supported",
        ));
    }
    // The Calc below: every Project column but the two window keys, then
    // the time column.
    let window_keys = [group_by[start], group_by[end]];
    let mut calc_exprs = Vec::new();
    let mut calc_fields = Vec::new();
    let mut new_pos = vec![usize::MAX; exprs.len()];
    for (i, e) in exprs.iter().enumerate() {
        if window_keys.contains(&i) {
            continue;
        }
        if reads_window(e) {
            return Err(PlanError::unsupported(format!(
                "window aggregate: '{}' reads a window column; only GROUP BY window_start, window_end is supported",
                pschema.fields[i].name
            )));
        }
        new_pos[i] = calc_exprs.len();
        calc_exprs.push(e.clone());
        calc_fields.push(pschema.fields[i].clone());
    }
    let time = calc_exprs.len();
    calc_exprs.push(Expr::Column(*time_col));
    calc_fields.push(data.schema().fields[*time_col].clone());
    let predicate = predicates
        .into_iter()
        .reduce(|a, b| Expr::bin(operators::expr::BinOp::And, a, b));
    let child = translate(data, catalog, config)?;
    let child = calc::over(
        child,
        predicate,
        Some(calc_exprs),
        Schema {
            fields: calc_fields,
        },
    );
    let keys: Vec<usize> = group_by
        .iter()
        .filter(|g| !window_keys.contains(g))
        .map(|&g| new_pos[g])
        .collect();
    // SESSION's partition keys: the operator keeps sessions per group key,
    // so they must be group keys.
    let mut partition_keys = Vec::new();
    for &c in partition_by {
        let g = group_by
            .iter()
            .find(|&&g| !window_keys.contains(&g) && exprs[g] == Expr::Column(c))
            .ok_or_else(|| {
                PlanError::unsupported(format!(
                    "the PARTITION BY column '{}' of SESSION is not a GROUP BY key of its window aggregate; \
                     the lab keeps sessions per group key, so partition keys must be group keys",
                    data.schema().fields[c].name
                ))
            })?;
        partition_keys.push(new_pos[*g]);
    }
    // A call reading a window key (`COUNT(window_end)`) has no column in
    // the Calc below: the window is the operator's.
    if let Some(a) = aggs.iter().find(|a| {
        a.arg
            .into_iter()
            .chain(a.filter)
            .any(|c| window_keys.contains(&c))
    }) {
        return Err(PlanError::unsupported(format!(
            "window aggregate: the call '{}' reads the window's start or end; \
             aggregate calls over window columns are not supported",
            a.name
        )));
    }
    let specs: Vec<AggSpec> = aggs
        .iter()
        .map(|a| AggSpec {
            arg: a.arg.map(|c| new_pos[c]),
            filter: a.filter.map(|c| new_pos[c]),
            ..agg_spec(a)
        })
        .collect();
    let ng = group_by.len();
    let mut fields: Vec<Field> = group_by
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != start && *i != end)
        .map(|(i, _)| schema.fields[i].clone())
        .collect();
    fields.extend(schema.fields[ng..].iter().cloned());
    let window_field = |name: &str| Field {
        name: name.to_string(),
        qualifier: None,
        data_type: DataType::Timestamp,
        nullable: false,
    };
    let k = keys.len();
    let parallelism = if k == 0 { 1 } else { config.parallelism() };
    let node = if let Some((allow_lateness, late_fire)) = emit {
        // Flink's window properties, in its order.
        fields.push(window_field("w$start"));
        fields.push(window_field("w$end"));
        fields.push(Field {
            data_type: data.schema().fields[*time_col].data_type,
            ..window_field("w$rowtime")
        });
        fields.push(Field {
            data_type: DataType::TimestampLtz,
            nullable: true,
            ..window_field("w$proctime")
        });
        PhysicalNode::new(
            GroupWindowAggregate {
                group_by: keys,
                aggs: specs,
                agg_names: aggs.iter().map(|a| a.name.clone()).collect(),
                window: *window,
                time_col: time,
                allow_lateness,
                late_fire,
            },
            vec![child],
            Schema { fields },
            // Flink's upsert key: the group key and the window's start.
            Some((0..k).chain([k + aggs.len()]).collect()),
            parallelism,
        )
    } else {
        fields.push(window_field("window_start"));
        fields.push(window_field("window_end"));
        PhysicalNode::new(
            WindowAggregate {
                group_by: keys,
                aggs: specs,
                agg_names: aggs.iter().map(|a| a.name.clone()).collect(),
                window: *window,
                time_col: time,
                global: false,
                partition_keys,
                per_window: !config.window_slicing()
                    && matches!(window, WindowSpec::Hop { .. } | WindowSpec::Cumulate { .. }),
                attached: None,
            },
            vec![child],
            Schema { fields },
            None,
            parallelism,
        )
    };
    let order = query_order(ng, start, end, aggs.len());
    Ok(Some(calc::over(node, None, Some(order), schema.clone())))
}

/// The query's order over a window aggregate's output (the other group
/// keys, the calls, `window_start`, `window_end`): group columns
/// (`window_start` and `window_end` at `start` and `end` of the `ng` it
/// groups by), then the `na` calls.
fn query_order(ng: usize, start: usize, end: usize, na: usize) -> Vec<Expr> {
    let k = ng - 2;
    let mut other = 0;
    (0..ng)
        .map(|i| {
            if i == start {
                Expr::Column(k + na)
            } else if i == end {
                Expr::Column(k + na + 1)
            } else {
                other += 1;
                Expr::Column(other - 1)
            }
        })
        .chain((0..na).map(|j| Expr::Column(k + j)))
        .collect()
}

/// An aggregate grouped by `window_start` and `window_end` of a window
/// aggregate's output (through projections and filters), as Flink plans
/// it with its window-attached strategy: a `WindowAggregate` over the
/// same windows, each row in the window its columns name, emitting one
/// insert per key and window when the watermark passes the window's end
/// (nexmark q5's maximum per window of the per-auction counts). `None`
/// when the input has no such columns or the aggregate does not group by
/// both.
fn attached_window_aggregate(
    input: &LogicalPlan,
    group_by: &[usize],
    aggs: &[AggCall],
    schema: &Schema,
    catalog: &dyn CatalogView,
    config: &Config,
) -> Result<Option<PhysicalNode>> {
    let Some((s, e, window)) = aggregated_window_columns(input) else {
        return Ok(None);
    };
    let position = |c: usize| group_by.iter().position(|&g| g == c);
    let (Some(start), Some(end)) = (position(s), position(e)) else {
        return Ok(None);
    };
    if !window.is_aligned() {
        // The lab keeps no sessions of another operator's: a group aggregate.
        return Ok(None);
    }
    check_emit_configuration(config)?;
    let child = translate(input, catalog, config)?;
    let keys: Vec<usize> = group_by
        .iter()
        .copied()
        .filter(|&g| g != s && g != e)
        .collect();
    let ng = group_by.len();
    let mut fields: Vec<Field> = (0..ng)
        .filter(|&i| i != start && i != end)
        .map(|i| schema.fields[i].clone())
        .collect();
    fields.extend(schema.fields[ng..].iter().cloned());
    fields.push(schema.fields[start].clone());
    fields.push(schema.fields[end].clone());
    let parallelism = if keys.is_empty() {
        1
    } else {
        config.parallelism()
    };
    let node = PhysicalNode::new(
        WindowAggregate {
            group_by: keys,
            aggs: aggs.iter().map(agg_spec).collect(),
            agg_names: aggs.iter().map(|a| a.name.clone()).collect(),
            window,
            time_col: e,
            global: false,
            partition_keys: Vec::new(),
            per_window: false,
            attached: Some(AttachedWindow {
                window_start: Some(s),
            }),
        },
        vec![child],
        Schema { fields },
        None,
        parallelism,
    );
    let order = query_order(ng, start, end, aggs.len());
    Ok(Some(calc::over(node, None, Some(order), schema.clone())))
}
