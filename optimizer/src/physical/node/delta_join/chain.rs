//! The lookup chains of a delta join (Flink 2.2's `DeltaJoinLookupChain`):
//! how a record of one input finds the rows of the other input it joins.
//! Into a table scan that is one lookup by the table's index key; into a
//! delta join below (a cascaded delta join) it is two rounds: one of the
//! lower join's tables by an index key this join's equalities cover, then
//! the other by an index key the lower join's equalities (or this join's)
//! cover. When a join becomes one: `physical/rules/delta_join.rs`.

use super::{side_calc, DeltaJoin};
use crate::physical::display::names::uniquify;
use crate::physical::display::{render, unique_names, Style};
use crate::physical::node::calc::Calc;
use crate::physical::node::explain::qualified;
use crate::physical::node::join::Join;
use crate::physical::node::source::Source;
use crate::physical::node::PhysicalNode;
use operators::expr::{BinOp, Expr};
use operators::join::{JoinType, KeySource, SideCalc};

/// A delta join input as the tables it reads.
pub enum Side<'a> {
    /// A table scan (its filter and projection fused).
    Scan(&'a PhysicalNode),
    /// A two-way join of two table scans, through one Calc at most.
    Cascade(Cascade<'a>),
}

/// A lower two-way join a cascaded delta join looks up through.
pub struct Cascade<'a> {
    /// The Calc between the lower join and this one.
    pub calc: SideCalc,
    /// The lower join (a delta join, or the regular join the rule is
    /// about to make one); both its inputs are table scans.
    pub lower: &'a PhysicalNode,
    pub left_keys: &'a [usize],
    pub right_keys: &'a [usize],
    pub residual: Option<&'a Expr>,
}

/// The keys and residual of an INNER join of two inputs, regular or delta.
fn inner_join(node: &PhysicalNode) -> Option<(&[usize], &[usize], Option<&Expr>)> {
    if let Some(j) = node.kind.get::<Join>() {
        return (j.join_type == JoinType::Inner).then_some((
            &j.left_keys[..],
            &j.right_keys[..],
            j.residual.as_ref(),
        ));
    }
    let d = node.kind.get::<DeltaJoin>()?;
    Some((&d.left_keys[..], &d.right_keys[..], d.residual.as_ref()))
}

fn source(scan: &PhysicalNode) -> &Source {
    scan.kind
        .get::<Source>()
        .expect("a delta join side's tables are table scans")
}

/// What a delta join input reads, or why it cannot be one.
pub fn side_of(input: &PhysicalNode) -> Result<Side<'_>, String> {
    if input.kind.is::<Source>() {
        return Ok(Side::Scan(input));
    }
    let (calc, lower) = match input.kind.get::<Calc>() {
        Some(c) => (
            SideCalc {
                predicate: c.predicate.clone(),
                projection: c.projection.clone(),
            },
            &input.inputs[0],
        ),
        None => (SideCalc::default(), input),
    };
    let Some((left_keys, right_keys, residual)) = inner_join(lower) else {
        return Err(
            "is neither a table scan nor an INNER join (with a filter and projection at most)"
                .into(),
        );
    };
    if !lower.inputs.iter().all(|i| i.kind.is::<Source>()) {
        return Err(
            "is a join of more than two tables; only a join of two table scans cascades".into(),
        );
    }
    Ok(Side::Cascade(Cascade {
        calc,
        lower,
        left_keys,
        right_keys,
        residual,
    }))
}

impl Side<'_> {
    /// The table scans it reads, in column order.
    pub fn scans(&self) -> Vec<&PhysicalNode> {
        match self {
            Side::Scan(s) => vec![s],
            Side::Cascade(c) => c.lower.inputs.iter().collect(),
        }
    }

    pub fn is_cascade(&self) -> bool {
        matches!(self, Side::Cascade(_))
    }

    /// The (scan, table column) output column `c` passes on unchanged.
    pub fn table_column(&self, c: usize) -> Option<(usize, usize)> {
        match self {
            Side::Scan(s) => Some((0, side_calc(source(s)).source_column(c)?)),
            Side::Cascade(k) => {
                let (s, sc) = k.split(k.calc.source_column(c)?);
                Some((s, side_calc(k.scan(s)).source_column(sc)?))
            }
        }
    }

    /// Whether output column `c` is the same for every version of a row:
    /// it reads only primary key columns of updating tables.
    pub fn stable(&self, c: usize) -> bool {
        match self {
            Side::Scan(s) => scan_stable(s, c),
            Side::Cascade(k) => {
                let mut cols = Vec::new();
                match &k.calc.projection {
                    Some(p) => p[c].columns(&mut cols),
                    None => cols.push(c),
                }
                cols.into_iter().all(|lc| k.lower_stable(lc))
            }
        }
    }

    /// Whether the Calc between a lower join and this one filters on
    /// columns that are the same for every version of a row.
    pub fn filter_stable(&self) -> bool {
        match self {
            Side::Scan(_) => true,
            Side::Cascade(k) => {
                let mut cols = Vec::new();
                k.calc.predicate.iter().for_each(|p| p.columns(&mut cols));
                cols.into_iter().all(|lc| k.lower_stable(lc))
            }
        }
    }
}

/// Whether output column `c` of table scan `scan` reads only primary key
/// columns (any column of an insert-only table).
fn scan_stable(scan: &PhysicalNode, c: usize) -> bool {
    let mut cols = Vec::new();
    match &source(scan).projection {
        Some(p) => p[c].columns(&mut cols),
        None => cols.push(c),
    }
    scan.is_insert_only()
        || source(scan)
            .table
            .primary_key
            .as_ref()
            .is_some_and(|pk| cols.iter().all(|c| pk.contains(c)))
}

impl Cascade<'_> {
    fn scan(&self, s: usize) -> &Source {
        source(&self.lower.inputs[s])
    }

    fn lower_stable(&self, c: usize) -> bool {
        let (s, sc) = self.split(c);
        scan_stable(&self.lower.inputs[s], sc)
    }

    /// The (scan, column of its output) column `c` of the lower join is.
    fn split(&self, c: usize) -> (usize, usize) {
        let w0 = self.lower.inputs[0].schema.len();
        if c < w0 {
            (0, c)
        } else {
            (1, c - w0)
        }
    }

    /// The lower join's condition over its row, with equality `i` left
    /// out where `skip(i)`.
    fn condition(&self, skip: impl Fn(usize) -> bool) -> Option<Expr> {
        let w0 = self.lower.inputs[0].schema.len();
        let mut e: Option<Expr> = None;
        let mut and = |x: Expr| {
            e = Some(match e.take() {
                None => x,
                Some(prev) => Expr::bin(BinOp::And, prev, x),
            })
        };
        for (i, (l, r)) in self.left_keys.iter().zip(self.right_keys).enumerate() {
            if !skip(i) {
                and(Expr::bin(BinOp::Eq, Expr::col(*l), Expr::col(w0 + r)));
            }
        }
        if let Some(r) = self.residual {
            and(r.clone());
        }
        e
    }
}

/// A lookup chain in planner terms: rounds name a scan of the side looked
/// into (its position in [`Side::scans`]).
#[derive(Clone, Debug)]
pub struct Chain {
    /// Per round: the scan looked up and where its index key comes from.
    pub rounds: Vec<(usize, Vec<KeySource>)>,
    /// The rounds in the lower join's column order.
    pub order: Vec<usize>,
    /// The lower join's condition (none for a scan).
    pub condition: Option<Expr>,
    /// The Calc between the lower join and this one.
    pub calc: SideCalc,
    /// Per round, the lower join's equalities its key does not use (and
    /// the residual), checked on the rows found (for EXPLAIN).
    pub remaining: Vec<Option<Expr>>,
}

fn index_of(scan: &PhysicalNode) -> Result<Vec<usize>, String> {
    let src = source(scan);
    src.index_key().ok_or_else(|| {
        format!(
            "table '{}' declares no valid 'index.key' option",
            src.table.name
        )
    })
}

/// How a record of an input keyed by `this_keys` finds the rows of
/// `other` keyed by `other_keys` (equated pairwise), or the precondition
/// that fails: every round's index key must be covered by the equalities
/// with what is known by then.
pub fn chain(this_keys: &[usize], other_keys: &[usize], other: &Side) -> Result<Chain, String> {
    // The key of table scan `s` from this join's equalities.
    let from_input = |s: usize, index: &[usize]| -> Option<Vec<KeySource>> {
        index
            .iter()
            .map(|&c| {
                let j = other_keys
                    .iter()
                    .position(|&k| other.table_column(k) == Some((s, c)))?;
                Some(KeySource::Input(this_keys[j]))
            })
            .collect()
    };
    let cascade = match other {
        Side::Scan(scan) => {
            let index = index_of(scan)?;
            let key = from_input(0, &index).ok_or_else(|| {
                format!(
                    "the index key of '{}' is not covered by the join's equality condition",
                    source(scan).table.name
                )
            })?;
            return Ok(Chain {
                rounds: vec![(0, key)],
                order: vec![0],
                condition: None,
                calc: SideCalc::default(),
                remaining: vec![None],
            });
        }
        Side::Cascade(c) => c,
    };
    let names = [0, 1].map(|s| cascade.scan(s).table.name.clone());
    let indexes = [
        index_of(&cascade.lower.inputs[0])?,
        index_of(&cascade.lower.inputs[1])?,
    ];
    // Round 2's key: the lower join's equalities with the row round 1
    // found, else this join's with the arriving record; `used` collects
    // the lower join's equalities it takes.
    let second_key = |second: usize, used: &mut Vec<usize>| -> Option<Vec<KeySource>> {
        let calc = side_calc(cascade.scan(second));
        let (mine, theirs) = if second == 0 {
            (cascade.left_keys, cascade.right_keys)
        } else {
            (cascade.right_keys, cascade.left_keys)
        };
        indexes[second]
            .iter()
            .map(|&c| {
                if let Some(i) = mine.iter().position(|&k| calc.source_column(k) == Some(c)) {
                    used.push(i);
                    return Some(KeySource::Round(0, theirs[i]));
                }
                let j = other_keys
                    .iter()
                    .position(|&k| other.table_column(k) == Some((second, c)))?;
                Some(KeySource::Input(this_keys[j]))
            })
            .collect()
    };
    // Either table may come first; the first order whose both rounds are
    // covered is taken.
    let mut why = format!(
        "neither the index key of '{}' nor that of '{}' is covered by the join's equality \
         condition, so no lookup chain starts into the delta join below",
        names[0], names[1]
    );
    for first in 0..2 {
        let Some(key) = from_input(first, &indexes[first]) else {
            continue;
        };
        let second = 1 - first;
        let mut used = Vec::new();
        let Some(key2) = second_key(second, &mut used) else {
            why = format!(
                "the lookup chain into the delta join below finds '{}' first, and the index \
                 key of '{}' is not covered by the equality conditions with it",
                names[first], names[second]
            );
            continue;
        };
        return Ok(Chain {
            rounds: vec![(first, key), (second, key2)],
            order: if first == 0 { vec![0, 1] } else { vec![1, 0] },
            condition: cascade.condition(|_| false),
            calc: cascade.calc.clone(),
            remaining: vec![None, cascade.condition(|i| used.contains(&i))],
        });
    }
    Err(why)
}

/// The chain as Flink's EXPLAIN prints it (`leftToRight=`/`rightToLeft=`):
/// `Binary` into a table scan, else one entry per round.
pub fn explain_chain(this: &Side, this_node: &PhysicalNode, other: &Side, chain: &Chain) -> String {
    let Side::Cascade(cascade) = other else {
        return "Binary".into();
    };
    let scans = other.scans();
    let this_tables: Vec<String> = this
        .scans()
        .iter()
        .map(|s| qualified(&source(s).table.name))
        .collect();
    let input_names = unique_names(&this_node.schema);
    let mut rounds = Vec::new();
    for (i, (s, key)) in chain.rounds.iter().enumerate() {
        let table = &source(scans[*s]).table;
        let index = source(scans[*s]).index_key().unwrap_or_default();
        let mut from: Vec<String> = Vec::new();
        let keys: Vec<String> = index
            .iter()
            .zip(key)
            .map(|(&c, k)| {
                let (names, tables, col) = match *k {
                    KeySource::Input(col) => {
                        // The table the key column comes from, when it is one.
                        let tables = match this.table_column(col) {
                            Some((s, _)) => vec![this_tables[s].clone()],
                            None => this_tables.clone(),
                        };
                        (input_names.clone(), tables, col)
                    }
                    KeySource::Round(j, col) => {
                        let scan = scans[chain.rounds[j].0];
                        (
                            unique_names(&scan.schema),
                            vec![qualified(&source(scan).table.name)],
                            col,
                        )
                    }
                };
                for t in tables {
                    if !from.contains(&t) {
                        from.push(t);
                    }
                }
                format!(
                    "{}={}",
                    table.schema.fields[c].name,
                    names.get(col).cloned().unwrap_or_default()
                )
            })
            .collect();
        let mut entry = format!(
            "{{round=[{}], sourceTables=[{}], lookupTable=[{}], lookupKeys=[{}]",
            i + 1,
            from.join(", "),
            qualified(&table.name),
            keys.join(", ")
        );
        if let Some(r) = &chain.remaining[i] {
            let names = uniquify(
                cascade
                    .lower
                    .inputs
                    .iter()
                    .flat_map(|s| unique_names(&s.schema)),
            );
            entry.push_str(&format!(
                ", remaining=[{}]",
                render(r, &names, Style::Infix)
            ));
        }
        entry.push('}');
        rounds.push(entry);
    }
    format!("[{}]", rounds.join(", "))
}
