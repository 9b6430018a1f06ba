//! Binding queries (`SELECT ... FROM ... [JOIN ...] [WHERE] [GROUP BY]
//! [HAVING]`, subqueries in FROM) into logical plans, and `INSERT INTO`.

use super::catalog::Catalog;
use super::expr::{agg_func_name, contains_agg, strip_nested, AggState, Ctx, Scope, Typed};
use super::hints;
use super::names::{at, did_you_mean, err_at, list, single_name, uniquify, At};
use crate::error::PlanError;
use crate::logical::{AggCall, Field, Hint, InsertStatement, JoinKind, LogicalPlan, Schema};
use operators::expr::{BinOp, Expr};
use operators::value::DataType;
use sqlparser::ast::{self, Spanned};
use sqlparser::tokenizer::Span;

/// A bound query: its plan and output columns. `untyped[i]` marks an output
/// column that is a bare `NULL` (typed later by the sink it is inserted into).
pub(crate) struct Bound {
    pub plan: LogicalPlan,
    pub fields: Vec<Field>,
    pub untyped: Vec<bool>,
}

pub(crate) struct QueryBinder<'a> {
    catalog: &'a Catalog,
}

fn unsupported(what: impl Into<String>, node: &impl Spanned) -> PlanError {
    err_at(PlanError::unsupported(what), node)
}

/// A select item after expanding `*` and `t.*`.
enum Item<'s> {
    Expr {
        expr: &'s ast::Expr,
        alias: Option<&'s ast::Ident>,
    },
    Column(usize),
}

impl<'a> QueryBinder<'a> {
    pub fn new(catalog: &'a Catalog) -> QueryBinder<'a> {
        QueryBinder { catalog }
    }

    /// Binds the query of an `INSERT` (or a top-level query).
    pub fn bind_top(&self, q: &ast::Query) -> Result<Bound, PlanError> {
        self.bind_query(q)
    }

    fn bind_query(&self, q: &ast::Query) -> Result<Bound, PlanError> {
        if q.with.is_some() {
            return Err(unsupported(
                "WITH (common table expressions) is not supported",
                q,
            ));
        }
        if let Some(o) = &q.order_by {
            return Err(unsupported("ORDER BY is not supported", o));
        }
        if let Some(l) = &q.limit_clause {
            return Err(unsupported("LIMIT/OFFSET is not supported", l));
        }
        if q.fetch.is_some() {
            return Err(unsupported("FETCH is not supported", q));
        }
        if !q.locks.is_empty()
            || q.for_clause.is_some()
            || q.settings.is_some()
            || q.format_clause.is_some()
            || !q.pipe_operators.is_empty()
        {
            return Err(unsupported(format!("'{q}' is not supported"), q));
        }
        self.bind_set_expr(&q.body)
    }

    fn bind_set_expr(&self, body: &ast::SetExpr) -> Result<Bound, PlanError> {
        match body {
            ast::SetExpr::Select(s) => self.bind_select(s),
            ast::SetExpr::Query(q) => self.bind_query(q),
            ast::SetExpr::SetOperation {
                op: ast::SetOperator::Union,
                set_quantifier: ast::SetQuantifier::All,
                left,
                right,
            } => self.bind_union_all(left, right, body),
            ast::SetExpr::SetOperation {
                op: ast::SetOperator::Union,
                set_quantifier: ast::SetQuantifier::None | ast::SetQuantifier::Distinct,
                left,
                right,
            } => {
                // As Flink plans it: UNION ALL, then a group aggregate on
                // every column.
                let all = self.bind_union_all(left, right, body)?;
                let schema = Schema {
                    fields: all.fields.clone(),
                };
                let plan = LogicalPlan::Aggregate {
                    input: Box::new(all.plan),
                    group_by: (0..all.fields.len()).collect(),
                    aggs: Vec::new(),
                    schema,
                    hints: Vec::new(),
                };
                Ok(Bound { plan, ..all })
            }
            ast::SetExpr::SetOperation {
                op: ast::SetOperator::Union,
                ..
            } => Err(unsupported(
                "this UNION is not supported (the lab runs UNION ALL and UNION)",
                body,
            )),
            ast::SetExpr::SetOperation { op, .. } => Err(unsupported(
                format!("{} is not supported", op.to_string().to_uppercase()),
                body,
            )),
            ast::SetExpr::Values(_) => Err(unsupported(
                "VALUES is not supported (read a table with SELECT ... FROM)",
                body,
            )),
            _ => Err(unsupported(format!("'{body}' is not supported"), body)),
        }
    }

    /// `left UNION ALL right`: both sides with the same number of columns
    /// and the same types; the names are the left side's.
    fn bind_union_all(
        &self,
        left: &ast::SetExpr,
        right: &ast::SetExpr,
        body: &ast::SetExpr,
    ) -> Result<Bound, PlanError> {
        let l = self.bind_set_expr(left)?;
        let r = self.bind_set_expr(right)?;
        if l.fields.len() != r.fields.len() {
            return Err(err_at(
                PlanError::validation(format!(
                    "UNION ALL needs the same number of columns on both sides: the left has {}, the right {}",
                    l.fields.len(),
                    r.fields.len()
                )),
                body,
            ));
        }
        let mut fields = Vec::with_capacity(l.fields.len());
        let mut untyped = Vec::with_capacity(l.fields.len());
        for (i, (a, b)) in l.fields.iter().zip(&r.fields).enumerate() {
            let (a_untyped, b_untyped) = (l.untyped[i], r.untyped[i]);
            let data_type = match (a_untyped, b_untyped) {
                (true, false) => b.data_type,
                (false, true) | (true, true) => a.data_type,
                (false, false) if a.data_type == b.data_type => a.data_type,
                (false, false) => {
                    return Err(err_at(
                        PlanError::validation(format!(
                            "UNION ALL column {} has type {} on the left ('{}') and {} on the right ('{}'); the lab unions columns of the same type",
                            i + 1,
                            a.data_type,
                            a.name,
                            b.data_type,
                            b.name
                        )),
                        body,
                    ))
                }
            };
            fields.push(Field {
                name: a.name.clone(),
                qualifier: None,
                data_type,
                nullable: a.nullable || b.nullable || a_untyped || b_untyped,
            });
            untyped.push(a_untyped && b_untyped);
        }
        let plan = LogicalPlan::Union {
            left: Box::new(l.plan),
            right: Box::new(r.plan),
            schema: Schema {
                fields: fields.clone(),
            },
        };
        Ok(Bound {
            plan,
            fields,
            untyped,
        })
    }

    fn check_select(s: &ast::Select) -> Result<(), PlanError> {
        let tok = s.select_token.0.span;
        let uns = |what: &str| {
            Err(at(
                PlanError::unsupported(format!("{what} is not supported")),
                tok,
            ))
        };
        match &s.distinct {
            None | Some(ast::Distinct::All) => {}
            Some(ast::Distinct::Distinct) => {
                return Err(at(
                    PlanError::unsupported(
                        "SELECT DISTINCT is not supported; write GROUP BY instead",
                    ),
                    tok,
                ))
            }
            Some(ast::Distinct::On(_)) => return uns("SELECT DISTINCT ON"),
        }
        if s.top.is_some() {
            return uns("TOP");
        }
        if s.select_modifiers.is_some() {
            return uns("this SELECT modifier");
        }
        if s.into.is_some() {
            return uns("SELECT INTO");
        }
        if s.exclude.is_some() {
            return uns("SELECT * EXCLUDE");
        }
        if !s.lateral_views.is_empty() {
            return uns("LATERAL VIEW");
        }
        if s.prewhere.is_some() {
            return uns("PREWHERE");
        }
        if !s.connect_by.is_empty() {
            return uns("CONNECT BY");
        }
        if !s.cluster_by.is_empty() || !s.distribute_by.is_empty() || !s.sort_by.is_empty() {
            return uns("CLUSTER BY, DISTRIBUTE BY or SORT BY");
        }
        if !s.named_window.is_empty() {
            return uns("WINDOW (window functions)");
        }
        if s.qualify.is_some() {
            return uns("QUALIFY");
        }
        if s.value_table_mode.is_some() {
            return uns("SELECT AS VALUE/STRUCT");
        }
        Ok(())
    }

    fn bind_select(&self, s: &ast::Select) -> Result<Bound, PlanError> {
        Self::check_select(s)?;
        let select_span = s.select_token.0.span;
        let hints = hints::parse_hints(&s.optimizer_hints, select_span)?;
        let Some((from, comma)) = s.from.split_first() else {
            return Err(at(
                PlanError::unsupported("SELECT without FROM is not supported"),
                select_span,
            ));
        };
        let mut names = Vec::new();
        let row_number = super::rank::match_row_number(s)?;
        // A ROW_NUMBER() subquery is the only relation of its FROM.
        let (mut plan, mut fields) = match &row_number {
            Some(q) => {
                let (plan, fields) = self.bind_factor(&q.factor, &hints, &mut names)?;
                super::rank::bind_row_number(q, plan, &fields, self.catalog)?
            }
            None => self.bind_table_with_joins(from, &hints, &mut names)?,
        };
        let mut comma_inputs = Vec::with_capacity(comma.len());
        for twj in comma {
            let (p, f) = self.bind_table_with_joins(twj, &hints, &mut names)?;
            comma_inputs.push((p, f.len(), &twj.relation));
            fields.extend(f);
        }
        hints::validate(&hints, &names).map_err(|e| at(e, select_span))?;
        // A legacy group window (GROUP BY TUMBLE(ts, ...)) windows the
        // FROM table; the WHERE applies above it.
        let mut group_window = None;
        if let ast::GroupByExpr::Expressions(v, _) = &s.group_by {
            if let Some(i) = super::group_window::position(v)? {
                if let Some((_, _, rel)) = comma_inputs.first() {
                    return Err(unsupported(
                        "a group window over several tables is not supported: the lab runs GROUP BY TUMBLE(...) over one table",
                        *rel,
                    ));
                }
                let (windowed, gw) =
                    super::group_window::bind(&v[i], plan, &mut fields, self.catalog)?;
                plan = windowed;
                group_window = Some((i, gw));
            }
        }
        let scope = Scope {
            fields,
            relations: names,
            group_window: group_window.as_ref().map(|(_, gw)| gw.clone()),
        };

        // A row number's bounds (rn = 1, rn <= N) are the Deduplicate or
        // the Rank itself; the rest of the WHERE applies after them.
        let selection = match &row_number {
            Some(q) => q.residual.as_ref(),
            None => s.selection.as_ref(),
        };
        if let Some(w) = selection {
            let t = Ctx::plain(&scope, "WHERE").bind_predicate(w)?;
            if comma_inputs.is_empty() {
                plan = LogicalPlan::Filter {
                    input: Box::new(plan),
                    predicate: t.expr,
                };
            } else {
                let conjuncts = t.expr.into_conjuncts();
                plan = Self::comma_joins(plan, comma_inputs, &scope.fields, conjuncts, &hints)?;
            }
        } else if let Some((_, _, rel)) = comma_inputs.first() {
            return Err(Self::cross_join_error(rel, None));
        }

        let group_exprs = match &s.group_by {
            ast::GroupByExpr::Expressions(v, mods) => {
                if !mods.is_empty() {
                    return Err(unsupported(
                        "GROUP BY modifiers (ROLLUP, CUBE, ...) are not supported",
                        &s.group_by,
                    ));
                }
                v.as_slice()
            }
            ast::GroupByExpr::All(_) => {
                return Err(unsupported("GROUP BY ALL is not supported", &s.group_by))
            }
        };

        let items = Self::expand_items(&s.projection, &scope)?;
        let is_agg = !group_exprs.is_empty()
            || s.having.is_some()
            || items
                .iter()
                .any(|i| matches!(i, Item::Expr { expr, .. } if contains_agg(expr)));
        if !is_agg {
            let mut ctx = Ctx::plain(&scope, "SELECT");
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                out.push(match item {
                    Item::Expr { expr, alias } => {
                        let t = ctx.bind(expr)?;
                        (t, Self::item_name(i, expr, *alias, &scope))
                    }
                    Item::Column(c) => {
                        let f = &scope.fields[*c];
                        (
                            Typed {
                                expr: Expr::Column(*c),
                                ty: Some(f.data_type),
                                nullable: f.nullable,
                            },
                            f.name.clone(),
                        )
                    }
                });
            }
            return Ok(Self::project(plan, &scope.fields, out));
        }

        // Aggregate query: Project (groups, args, filters) -> Aggregate
        // -> [Filter (HAVING)] -> Project (select list).
        let mut agg = AggState::default();
        for (i, g) in group_exprs.iter().enumerate() {
            if let Some((_, gw)) = group_window.as_ref().filter(|(w, _)| *w == i) {
                // The window groups by its start and end.
                for c in [gw.start_col, gw.start_col + 1] {
                    let t = Typed {
                        expr: Expr::Column(c),
                        ty: Some(DataType::Timestamp),
                        nullable: false,
                    };
                    agg.add_group(t, &scope);
                }
                continue;
            }
            if contains_agg(g) {
                return Err(err_at(
                    PlanError::validation("Aggregate functions are not allowed in GROUP BY"),
                    g,
                ));
            }
            if let ast::Expr::GroupingSets(_) | ast::Expr::Cube(_) | ast::Expr::Rollup(_) = g {
                return Err(unsupported(
                    "GROUPING SETS, CUBE and ROLLUP are not supported",
                    g,
                ));
            }
            let t = Ctx::plain(&scope, "GROUP BY").bind(g)?;
            agg.add_group(t, &scope);
        }
        let mut out = Vec::with_capacity(items.len());
        let having;
        {
            let mut ctx = Ctx {
                scope: &scope,
                agg: Some(&mut agg),
                clause: "SELECT",
            };
            for (i, item) in items.iter().enumerate() {
                out.push(match item {
                    Item::Expr { expr, alias } => {
                        let name = Self::item_name(i, expr, *alias, &scope);
                        let t = match strip_nested(expr) {
                            ast::Expr::Function(f) if agg_func_name(f).is_some() => {
                                ctx.bind_agg_call(f, Some(name.clone()))?
                            }
                            _ => ctx.bind(expr)?,
                        };
                        (t, name)
                    }
                    Item::Column(c) => {
                        let t = ctx.grouped_column(*c).map_err(|e| at(e, select_span))?;
                        (t, scope.fields[*c].name.clone())
                    }
                });
            }
            ctx.clause = "HAVING";
            having = match &s.having {
                Some(h) => Some(ctx.bind_predicate(h)?),
                None => None,
            };
        }

        // The Project below the aggregate.
        let mut pre_exprs = Vec::with_capacity(agg.pre.len());
        let mut pre_fields = Vec::with_capacity(agg.pre.len());
        for (t, name, qualifier) in &agg.pre {
            pre_exprs.push(t.expr.clone());
            pre_fields.push(Field {
                name: name.clone(),
                qualifier: qualifier.clone(),
                data_type: t.ty.unwrap_or(DataType::String),
                nullable: t.nullable,
            });
        }
        let ng = agg.groups.len();
        let mut agg_fields: Vec<Field> = pre_fields[..ng].to_vec();
        let aggs: Vec<AggCall> = agg
            .calls
            .iter()
            .map(|c| {
                agg_fields.push(Field {
                    name: c.name.clone(),
                    qualifier: None,
                    data_type: c.ty,
                    nullable: c.nullable,
                });
                AggCall {
                    func: c.func,
                    arg: c.arg,
                    distinct: c.distinct,
                    filter: c.filter,
                    name: c.name.clone(),
                    output_type: c.ty,
                }
            })
            .collect();
        let mut plan = LogicalPlan::Aggregate {
            input: Box::new(LogicalPlan::Project {
                input: Box::new(plan),
                exprs: pre_exprs,
                schema: Schema { fields: pre_fields },
            }),
            group_by: (0..ng).collect(),
            aggs,
            schema: Schema {
                fields: agg_fields.clone(),
            },
            hints,
        };
        if let Some(h) = having {
            plan = LogicalPlan::Filter {
                input: Box::new(plan),
                predicate: h.expr,
            };
        }
        Ok(Self::project(plan, &agg_fields, out))
    }

    /// The output name of select item `i`: its alias, the column name for a
    /// column reference, else `EXPR$i`.
    fn item_name(i: usize, expr: &ast::Expr, alias: Option<&ast::Ident>, scope: &Scope) -> String {
        if let Some(a) = alias {
            return a.value.clone();
        }
        match strip_nested(expr) {
            ast::Expr::Identifier(id) => scope
                .resolve(std::slice::from_ref(id))
                .map(|c| scope.fields[c].name.clone())
                .unwrap_or_else(|_| id.value.clone()),
            ast::Expr::CompoundIdentifier(ids) => scope
                .resolve(ids)
                .map(|c| scope.fields[c].name.clone())
                .unwrap_or_else(|_| format!("EXPR${i}")),
            _ => format!("EXPR${i}"),
        }
    }

    fn expand_items<'s>(
        projection: &'s [ast::SelectItem],
        scope: &Scope,
    ) -> Result<Vec<Item<'s>>, PlanError> {
        let mut items = Vec::new();
        for item in projection {
            match item {
                ast::SelectItem::UnnamedExpr(e) => items.push(Item::Expr {
                    expr: e,
                    alias: None,
                }),
                ast::SelectItem::ExprWithAlias { expr, alias } => items.push(Item::Expr {
                    expr,
                    alias: Some(alias),
                }),
                ast::SelectItem::ExprWithAliases { .. } => {
                    return Err(unsupported(format!("'{item}' is not supported"), item))
                }
                ast::SelectItem::Wildcard(opts) => {
                    Self::check_wildcard(opts, item)?;
                    items.extend((0..scope.fields.len()).map(Item::Column));
                }
                ast::SelectItem::QualifiedWildcard(kind, opts) => {
                    Self::check_wildcard(opts, item)?;
                    let q = match kind {
                        ast::SelectItemQualifiedWildcardKind::ObjectName(n) => {
                            single_name(n, "table")?
                        }
                        ast::SelectItemQualifiedWildcardKind::Expr(e) => {
                            return Err(unsupported(format!("'{e}.*' is not supported"), item))
                        }
                    };
                    let mut cols: Vec<usize> = (0..scope.fields.len())
                        .filter(|&i| scope.fields[i].qualifier.as_deref() == Some(q.as_str()))
                        .collect();
                    if cols.is_empty() {
                        cols = (0..scope.fields.len())
                            .filter(|&i| {
                                scope.fields[i]
                                    .qualifier
                                    .as_deref()
                                    .is_some_and(|x| x.eq_ignore_ascii_case(&q))
                            })
                            .collect();
                    }
                    if cols.is_empty() {
                        return Err(err_at(
                            PlanError::validation(format!(
                                "Table '{q}' not found in FROM; available: {}.{}",
                                list(&scope.relations, 30),
                                did_you_mean(&q, scope.relations.iter().map(|s| s.as_str()))
                            )),
                            item,
                        ));
                    }
                    items.extend(cols.into_iter().map(Item::Column));
                }
            }
        }
        Ok(items)
    }

    fn check_wildcard(
        opts: &ast::WildcardAdditionalOptions,
        item: &ast::SelectItem,
    ) -> Result<(), PlanError> {
        if opts.opt_ilike.is_some()
            || opts.opt_exclude.is_some()
            || opts.opt_except.is_some()
            || opts.opt_replace.is_some()
            || opts.opt_rename.is_some()
            || opts.opt_alias.is_some()
        {
            return Err(unsupported(format!("'{item}' is not supported"), item));
        }
        Ok(())
    }

    /// The final Project of a SELECT (omitted when it would only repeat its
    /// input).
    fn project(input: LogicalPlan, input_fields: &[Field], out: Vec<(Typed, String)>) -> Bound {
        let mut names: Vec<String> = out.iter().map(|(_, n)| n.clone()).collect();
        uniquify(&mut names);
        let identity = out.len() == input_fields.len()
            && out
                .iter()
                .enumerate()
                .all(|(i, (t, _))| t.expr == Expr::Column(i))
            && names.iter().zip(input_fields).all(|(n, f)| *n == f.name);
        if identity {
            return Bound {
                plan: input,
                fields: input_fields.to_vec(),
                untyped: vec![false; input_fields.len()],
            };
        }
        let mut fields = Vec::with_capacity(out.len());
        let mut exprs = Vec::with_capacity(out.len());
        let mut untyped = Vec::with_capacity(out.len());
        for ((t, _), name) in out.into_iter().zip(names) {
            let qualifier = match &t.expr {
                Expr::Column(c) => input_fields[*c].qualifier.clone(),
                _ => None,
            };
            untyped.push(t.ty.is_none());
            fields.push(Field {
                name,
                qualifier,
                data_type: t.ty.unwrap_or(DataType::String),
                nullable: t.nullable,
            });
            exprs.push(t.expr);
        }
        Bound {
            plan: LogicalPlan::Project {
                input: Box::new(input),
                exprs,
                schema: Schema {
                    fields: fields.clone(),
                },
            },
            fields,
            untyped,
        }
    }

    fn bind_table_with_joins(
        &self,
        twj: &ast::TableWithJoins,
        hints: &[Hint],
        names: &mut Vec<String>,
    ) -> Result<(LogicalPlan, Vec<Field>), PlanError> {
        let (mut plan, mut fields) = self.bind_factor(&twj.relation, hints, names)?;
        for join in &twj.joins {
            (plan, fields) = self.bind_join(plan, fields, join, hints, names)?;
        }
        Ok((plan, fields))
    }

    fn add_name(names: &mut Vec<String>, name: &str, node: &impl Spanned) -> Result<(), PlanError> {
        if names.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            return Err(err_at(
                PlanError::validation(format!(
                    "Duplicate table name or alias '{name}' in FROM; give each occurrence its own alias"
                )),
                node,
            ));
        }
        names.push(name.to_string());
        Ok(())
    }

    /// Renames fields by `AS t(a, b, ...)` column aliases.
    fn alias_columns(fields: &mut [Field], alias: &ast::TableAlias) -> Result<(), PlanError> {
        if alias.columns.is_empty() {
            return Ok(());
        }
        if alias.columns.len() != fields.len() {
            return Err(err_at(
                PlanError::validation(format!(
                    "Alias '{}' lists {} columns, but the table has {}",
                    alias.name.value,
                    alias.columns.len(),
                    fields.len()
                )),
                &At(alias.name.span),
            ));
        }
        for (f, c) in fields.iter_mut().zip(&alias.columns) {
            if c.data_type.is_some() {
                return Err(err_at(
                    PlanError::unsupported("typed column aliases are not supported"),
                    &At(alias.name.span),
                ));
            }
            f.name = c.name.value.clone();
        }
        Ok(())
    }

    fn bind_factor(
        &self,
        tf: &ast::TableFactor,
        hints: &[Hint],
        names: &mut Vec<String>,
    ) -> Result<(LogicalPlan, Vec<Field>), PlanError> {
        match tf {
            ast::TableFactor::Table {
                name,
                alias,
                args,
                with_hints,
                version,
                partitions,
                sample,
                ..
            } => {
                if super::lookup_join::system_time_of(tf).is_some() {
                    return Err(super::lookup_join::misplaced(tf));
                }
                if args.is_some() {
                    return Err(unsupported("table functions are not supported", tf));
                }
                if !with_hints.is_empty()
                    || version.is_some()
                    || !partitions.is_empty()
                    || sample.is_some()
                {
                    return Err(unsupported(format!("'{tf}' is not supported"), tf));
                }
                let tname = single_name(name, "table")?;
                let def = self.catalog.get(&tname).ok_or_else(|| {
                    err_at(
                        PlanError::validation(format!(
                            "Object '{tname}' not found: no table of that name; known tables: {}.{}",
                            list(&self.catalog.names(), 30),
                            did_you_mean(&tname, self.catalog.names())
                        )),
                        name,
                    )
                })?;
                let alias_name = alias
                    .as_ref()
                    .map(|a| a.name.value.clone())
                    .unwrap_or_else(|| def.name.clone());
                Self::add_name(names, &alias_name, tf)?;
                let mut fields: Vec<Field> = def
                    .schema
                    .fields
                    .iter()
                    .map(|f| Field {
                        qualifier: Some(alias_name.clone()),
                        ..f.clone()
                    })
                    .collect();
                if let Some(a) = alias {
                    Self::alias_columns(&mut fields, a)?;
                }
                let plan = LogicalPlan::Scan {
                    table: def.name.clone(),
                    alias: alias_name,
                    schema: Schema {
                        fields: fields.clone(),
                    },
                };
                Ok((plan, fields))
            }
            ast::TableFactor::Derived {
                lateral,
                subquery,
                alias,
                sample,
            } => {
                if *lateral || sample.is_some() {
                    return Err(unsupported("LATERAL subqueries are not supported", tf));
                }
                let bound = self.bind_query(subquery)?;
                if let Some(i) = bound.untyped.iter().position(|u| *u) {
                    return Err(err_at(
                        PlanError::validation(format!(
                            "Cannot infer the type of column '{}' of a subquery: it is NULL (write CAST(NULL AS type))",
                            bound.fields[i].name
                        )),
                        tf,
                    ));
                }
                let qualifier = alias.as_ref().map(|a| a.name.value.clone());
                if let Some(q) = &qualifier {
                    Self::add_name(names, q, tf)?;
                }
                let mut fields: Vec<Field> = bound
                    .fields
                    .into_iter()
                    .map(|f| Field {
                        qualifier: qualifier.clone(),
                        ..f
                    })
                    .collect();
                if let Some(a) = alias {
                    Self::alias_columns(&mut fields, a)?;
                }
                Ok((bound.plan, fields))
            }
            ast::TableFactor::TableFunction { expr, alias } => {
                let (plan, fields, name) = super::window_tvf::bind(self.catalog, expr)?;
                let alias_name = alias.as_ref().map(|a| a.name.value.clone()).unwrap_or(name);
                Self::add_name(names, &alias_name, tf)?;
                let mut fields: Vec<Field> = fields
                    .into_iter()
                    .map(|f| Field {
                        qualifier: Some(alias_name.clone()),
                        ..f
                    })
                    .collect();
                if let Some(a) = alias {
                    Self::alias_columns(&mut fields, a)?;
                }
                Ok((plan, fields))
            }
            ast::TableFactor::NestedJoin {
                table_with_joins,
                alias,
            } => {
                if alias.is_some() {
                    return Err(unsupported(
                        "an alias on a parenthesized join is not supported",
                        tf,
                    ));
                }
                self.bind_table_with_joins(table_with_joins, hints, names)
            }
            other => Err(unsupported(
                format!("'{other}' in FROM is not supported"),
                other,
            )),
        }
    }

    /// `FROM a, b, ... WHERE ...` as Flink plans it: the WHERE conjuncts
    /// that relate a table to the ones before it become the condition of an
    /// INNER join (their column equalities its keys); the rest filter the
    /// joined rows. `plan` is the first FROM entry; each of `inputs` is a
    /// later one with its column count; `fields` are all of their columns.
    fn comma_joins(
        mut plan: LogicalPlan,
        inputs: Vec<(LogicalPlan, usize, &ast::TableFactor)>,
        fields: &[Field],
        mut conjuncts: Vec<Expr>,
        hints: &[Hint],
    ) -> Result<LogicalPlan, PlanError> {
        let mut width = fields.len() - inputs.iter().map(|(_, n, _)| n).sum::<usize>();
        for (right, n, rel) in inputs {
            let end = width + n;
            let (on, rest): (Vec<Expr>, Vec<Expr>) = conjuncts.into_iter().partition(|c| {
                let mut cols = Vec::new();
                c.columns(&mut cols);
                cols.iter().all(|&x| x < end)
                    && cols.iter().any(|&x| x >= width)
                    && cols.iter().any(|&x| x < width)
            });
            conjuncts = rest;
            let join_fields = fields[..end].to_vec();
            let (left_keys, right_keys, residual) = join_keys(on, width, &join_fields)
                .map_err(|mismatched| Self::cross_join_error(rel, mismatched))?;
            plan = LogicalPlan::Join {
                left: Box::new(plan),
                right: Box::new(right),
                kind: JoinKind::Inner,
                left_keys,
                right_keys,
                residual,
                schema: Schema {
                    fields: join_fields,
                },
                hints: hints.to_vec(),
                lookup: None,
            };
            width = end;
        }
        if let Some(predicate) = Expr::and_all(conjuncts) {
            plan = LogicalPlan::Filter {
                input: Box::new(plan),
                predicate,
            };
        }
        Ok(plan)
    }

    /// A comma-separated FROM entry that WHERE does not join by a column
    /// equality to the entries before it.
    fn cross_join_error(rel: &ast::TableFactor, mismatched: Option<String>) -> PlanError {
        let msg = mismatched.unwrap_or_else(|| {
            format!(
                "a comma-separated FROM list needs a WHERE equality between a column of '{rel}' and one of the tables before it (an implicit cross join is not supported): write FROM a, b WHERE a.k = b.k"
            )
        });
        unsupported(msg, rel)
    }

    fn bind_join(
        &self,
        left: LogicalPlan,
        left_fields: Vec<Field>,
        join: &ast::Join,
        hints: &[Hint],
        names: &mut Vec<String>,
    ) -> Result<(LogicalPlan, Vec<Field>), PlanError> {
        use ast::JoinOperator as J;
        let rel = &join.relation;
        let not_lab = "(the lab runs INNER, LEFT, RIGHT and FULL OUTER joins)";
        let (kind, constraint) = match &join.join_operator {
            J::Join(c) | J::Inner(c) => (JoinKind::Inner, c),
            J::Left(c) | J::LeftOuter(c) => (JoinKind::Left, c),
            J::Right(c) | J::RightOuter(c) => (JoinKind::Right, c),
            J::FullOuter(c) => (JoinKind::Full, c),
            J::CrossJoin(_) => {
                return Err(unsupported(
                    format!("CROSS JOIN is not supported {not_lab}"),
                    rel,
                ))
            }
            J::Semi(_) | J::LeftSemi(_) | J::RightSemi(_) => {
                return Err(unsupported(
                    format!("SEMI JOIN is not supported {not_lab}"),
                    rel,
                ))
            }
            J::Anti(_) | J::LeftAnti(_) | J::RightAnti(_) => {
                return Err(unsupported(
                    format!("ANTI JOIN is not supported {not_lab}"),
                    rel,
                ))
            }
            J::AsOf { .. } => {
                return Err(unsupported(
                    format!("ASOF JOIN is not supported {not_lab}"),
                    rel,
                ))
            }
            _ => {
                return Err(unsupported(
                    format!("this join is not supported {not_lab}"),
                    rel,
                ))
            }
        };
        if join.global {
            return Err(unsupported("GLOBAL JOIN is not supported", rel));
        }
        let on = match constraint {
            ast::JoinConstraint::On(e) => e,
            ast::JoinConstraint::Using(_) | ast::JoinConstraint::UsingAlias(..) => {
                return Err(unsupported(
                    "JOIN ... USING is not supported; write ON a.k = b.k",
                    rel,
                ))
            }
            ast::JoinConstraint::Natural => {
                return Err(unsupported(
                    "NATURAL JOIN is not supported; write ON a.k = b.k",
                    rel,
                ))
            }
            ast::JoinConstraint::None => {
                return Err(unsupported(
                    "join without an equality condition: write JOIN ... ON a.k = b.k",
                    rel,
                ))
            }
        };
        let system_time = super::lookup_join::system_time_of(rel);
        let (right, right_fields) = match &system_time {
            Some((plain, _)) => self.bind_factor(plain, hints, names)?,
            None => self.bind_factor(rel, hints, names)?,
        };
        let nl = left_fields.len();
        // A side the other side's unmatched rows pad with NULLs.
        let mut fields: Vec<Field> = left_fields
            .into_iter()
            .map(|f| Field {
                nullable: f.nullable || kind.keeps_right(),
                ..f
            })
            .collect();
        fields.extend(right_fields.into_iter().map(|f| Field {
            nullable: f.nullable || kind.keeps_left(),
            ..f
        }));
        let scope = Scope {
            fields,
            relations: names.clone(),
            group_window: None,
        };
        let cond = Ctx::plain(&scope, "ON").bind_predicate(on)?;
        let conjuncts = cond.expr.into_conjuncts();
        let keys = match &system_time {
            // A lookup may be keyed by constants alone (`ON d.id = 1`): no
            // column pair, the whole condition left to the planner.
            Some(_) if super::lookup_join::constant_key(&conjuncts, nl) => {
                match join_keys(conjuncts.clone(), nl, &scope.fields) {
                    Ok(k) => Ok(k),
                    Err(_) => Ok((Vec::new(), Vec::new(), Expr::and_all(conjuncts))),
                }
            }
            _ => join_keys(conjuncts, nl, &scope.fields),
        };
        let lookup = match &system_time {
            Some((_, time)) => Some(super::lookup_join::bind(
                self.catalog,
                &left,
                &scope.fields[..nl],
                &right,
                rel,
                kind,
                time,
                on,
                keys.is_ok(),
            )?),
            None => None,
        };
        let (left_keys, right_keys, residual) = match keys {
            Ok(k) => k,
            Err(Some(mismatched)) => return Err(unsupported(mismatched, on)),
            Err(None) => {
                return Err(unsupported(
                    format!(
                        "join without an equality condition: ON must equate a column of each side, e.g. a.k = b.k (found '{on}')"
                    ),
                    on,
                ))
            }
        };
        let plan = LogicalPlan::Join {
            left: Box::new(left),
            right: Box::new(right),
            kind,
            left_keys,
            right_keys,
            residual,
            schema: Schema {
                fields: scope.fields.clone(),
            },
            hints: hints.to_vec(),
            lookup,
        };
        Ok((plan, scope.fields))
    }
}

/// Splits the conjuncts of a join condition over `left ++ right` (the
/// left input has `nl` of `fields`) into equi-key pairs and the residual.
/// Without any key pair: `Err` with why a column equality did not count
/// (keys of different types), if one did not.
#[allow(clippy::type_complexity)]
fn join_keys(
    conjuncts: Vec<Expr>,
    nl: usize,
    fields: &[Field],
) -> Result<(Vec<usize>, Vec<usize>, Option<Expr>), Option<String>> {
    let (mut left_keys, mut right_keys, mut residual) = (Vec::new(), Vec::new(), Vec::new());
    let mut mismatched: Option<String> = None;
    // Keys must hash alike: equal types, or both integers (one representation).
    let key_compatible = |a: usize, b: usize| {
        let (ta, tb) = (fields[a].data_type, fields[b].data_type);
        ta == tb || (ta.is_integer() && tb.is_integer())
    };
    for c in conjuncts {
        if let Expr::Binary(BinOp::Eq, l, r) = &c {
            if let (Expr::Column(a), Expr::Column(b)) = (l.as_ref(), r.as_ref()) {
                let (a, b) = (*a, *b);
                let pair = if a < nl && b >= nl {
                    Some((a, b))
                } else if b < nl && a >= nl {
                    Some((b, a))
                } else {
                    None
                };
                if let Some((lk, rk)) = pair {
                    if key_compatible(lk, rk) {
                        left_keys.push(lk);
                        right_keys.push(rk - nl);
                        continue;
                    }
                    let describe = |i: usize| {
                        let f = &fields[i];
                        let q = f
                            .qualifier
                            .as_deref()
                            .map(|q| format!("{q}."))
                            .unwrap_or_default();
                        format!("{q}{} ({})", f.name, f.data_type)
                    };
                    mismatched.get_or_insert_with(|| {
                        format!(
                            "join keys {} and {} have different types; the lab joins on columns of the same type",
                            describe(lk),
                            describe(rk)
                        )
                    });
                }
            }
        }
        residual.push(c);
    }
    if left_keys.is_empty() {
        return Err(mismatched);
    }
    Ok((left_keys, right_keys, Expr::and_all(residual)))
}

fn compatible(query: DataType, sink: DataType) -> bool {
    query == sink || (query == DataType::Int && sink == DataType::BigInt)
}

/// The span of output column `i` of `q`, when it is a plain select item.
fn item_span(q: &ast::Query, i: usize) -> Option<Span> {
    let ast::SetExpr::Select(s) = q.body.as_ref() else {
        return None;
    };
    if s.projection.iter().any(|p| {
        matches!(
            p,
            ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..)
        )
    }) {
        return None;
    }
    s.projection.get(i).map(|p| p.span())
}

/// `INSERT INTO sink <query>`: binds the query and checks it against the
/// sink's columns.
pub(crate) fn bind_insert(
    catalog: &Catalog,
    insert: &ast::Insert,
) -> Result<InsertStatement, PlanError> {
    let tok = insert.insert_token.0.span;
    let uns = |what: &str| {
        Err(at(
            PlanError::unsupported(format!("{what} is not supported")),
            tok,
        ))
    };
    if !insert.optimizer_hints.is_empty() {
        return uns("a hint after INSERT (write hints right after SELECT)");
    }
    if insert.overwrite {
        return uns("INSERT OVERWRITE");
    }
    if !insert.columns.is_empty() {
        return uns("INSERT with a column list (select the sink's columns in order)");
    }
    if insert.or.is_some()
        || insert.ignore
        || insert.table_alias.is_some()
        || insert.partitioned.is_some()
        || !insert.after_columns.is_empty()
        || insert.on.is_some()
        || insert.returning.is_some()
        || insert.replace_into
        || insert.priority.is_some()
        || insert.insert_alias.is_some()
        || insert.settings.is_some()
        || insert.format_clause.is_some()
        || !insert.assignments.is_empty()
        || insert.output.is_some()
    {
        return uns("this form of INSERT (write INSERT INTO sink SELECT ...)");
    }
    let name = match &insert.table {
        ast::TableObject::TableName(n) => n,
        _ => return uns("INSERT INTO a table function"),
    };
    let sink_name = single_name(name, "table")?;
    let sink = catalog.get(&sink_name).ok_or_else(|| {
        err_at(
            PlanError::validation(format!(
                "Sink table '{sink_name}' not found; known tables: {}.{}",
                list(&catalog.names(), 30),
                did_you_mean(&sink_name, catalog.names())
            )),
            name,
        )
    })?;
    let Some(source) = &insert.source else {
        return uns("INSERT without a query");
    };
    let mut bound = QueryBinder::new(catalog).bind_top(source)?;
    let sink_fields = &sink.schema.fields;
    if bound.fields.len() != sink_fields.len() {
        let q: Vec<String> = bound.fields.iter().map(|f| f.name.clone()).collect();
        return Err(err_at(
            PlanError::validation(format!(
                "Column count of the query and sink '{}' do not match: the query produces {} columns ({}), the sink has {} ({})",
                sink.name,
                q.len(),
                list(&q, 30),
                sink_fields.len(),
                list(&sink.schema.names(), 30)
            )),
            source.as_ref(),
        ));
    }
    for (i, (qf, sf)) in bound.fields.iter().zip(sink_fields).enumerate() {
        if bound.untyped[i] || compatible(qf.data_type, sf.data_type) {
            continue;
        }
        let e = PlanError::validation(format!(
            "Incompatible types for sink column '{}' (position {}) of '{}': the query produces {} ('{}'), the sink expects {}",
            sf.name,
            i + 1,
            sink.name,
            qf.data_type,
            qf.name,
            sf.data_type
        ));
        return Err(match item_span(source, i) {
            Some(span) => at(e, span),
            None => err_at(e, source.as_ref()),
        });
    }
    // A bare NULL takes the type of the sink column it is written to.
    if bound.untyped.iter().any(|u| *u) {
        if let LogicalPlan::Project { schema, .. } = &mut bound.plan {
            for (i, f) in schema.fields.iter_mut().enumerate() {
                if bound.untyped[i] {
                    f.data_type = sink_fields[i].data_type;
                }
            }
        }
    }
    Ok(InsertStatement {
        sink: sink.name.clone(),
        query: bound.plan,
        at: None,
    })
}
