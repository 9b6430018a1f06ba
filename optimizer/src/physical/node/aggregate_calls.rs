//! Aggregate calls as both halves of an aggregate print and check them:
//! Flink's names for calls and partial accumulators, and the checks of a
//! compiled plan's calls. Shared by `group_aggregate.rs` and
//! `local_group_aggregate.rs`.

use super::check::{self, Check};
use super::explain::{same, Attr};
use super::PhysicalNode;
use crate::physical::display::name;
use operators::agg::{AggKind, AggSpec};
use operators::value::DataType;

/// Which half of a split distinct aggregate a node is (Flink's
/// `partialFinalType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum PartialFinal {
    /// Grouped by the key and the bucket of the distinct value.
    Partial,
    /// Merges the buckets of each key.
    Final,
}

/// A call's name as Flink prints it: `_RETRACT` when its input retracts.
pub fn func_name(a: &AggSpec, retract: bool) -> String {
    format!("{}{}", a.kind.name(), if retract { "_RETRACT" } else { "" })
}

/// `COUNT(DISTINCT x) FILTER f` without the `AS` part.
pub fn call_text(a: &AggSpec, args: &[String], retract: bool) -> String {
    let arg = match a.arg {
        None => "*".to_string(),
        Some(c) => format!(
            "{}{}",
            if a.distinct { "DISTINCT " } else { "" },
            name(args, c)
        ),
    };
    let filter = a
        .filter
        .map(|f| format!(" FILTER {}", name(args, f)))
        .unwrap_or_default();
    format!("{}({arg}){filter}", func_name(a, retract))
}

/// The accumulator names of a local aggregate's calls, as Flink names
/// them: `count1$0` for `COUNT(*)`, `sum$1`, `(sum$2, count$3)` for `AVG`.
pub fn partial_names(aggs: &[AggSpec]) -> Vec<String> {
    let mut slot = 0;
    let mut next = |what: &str| {
        let s = format!("{what}${slot}");
        slot += 1;
        s
    };
    aggs.iter()
        .map(|a| match a.kind {
            AggKind::CountStar => next("count1"),
            AggKind::Count => next("count"),
            AggKind::Sum => next("sum"),
            AggKind::Min => next("min"),
            AggKind::Max => next("max"),
            AggKind::Avg => {
                let s = next("sum");
                let c = next("count");
                format!("({s}, {c})")
            }
        })
        .collect()
}

/// Flink's `partialFinalType` attribute.
pub fn partial_final_attr(pf: &Option<PartialFinal>) -> Option<Attr> {
    pf.map(|p| {
        same(
            "partialFinalType",
            match p {
                PartialFinal::Partial => "PARTIAL",
                PartialFinal::Final => "FINAL",
            },
        )
    })
}

/// Checks aggregate calls over an input of `types`: each argument and
/// filter a column of the right type, each result type the call's.
pub fn check_calls(node: &PhysicalNode, aggs: &[AggSpec], types: &[DataType]) -> Check {
    for (i, a) in aggs.iter().enumerate() {
        let at = check::field(node, &format!("aggs[{i}]"));
        if a.distinct && a.arg.is_none() {
            return Err(check::invalid(
                format!("{at}.distinct"),
                "a DISTINCT call needs an argument column",
            ));
        }
        let arg = match a.arg {
            None if a.kind != AggKind::CountStar => {
                return Err(check::invalid(
                    format!("{at}.arg"),
                    format!("{} needs an argument column", a.kind.name()),
                ))
            }
            None => None,
            Some(c) => {
                check::column(&format!("{at}.arg"), c, types.len(), "the input")?;
                Some(types[c])
            }
        };
        if let Some(f) = a.filter {
            check::column(&format!("{at}.filter"), f, types.len(), "the input")?;
            if types[f] != DataType::Boolean {
                return Err(check::invalid(
                    format!("{at}.filter"),
                    format!("a FILTER column must be BOOLEAN, not {}", types[f]),
                ));
            }
        }
        let result_ok = match (a.kind, arg) {
            (AggKind::CountStar | AggKind::Count, _) => a.result_type.is_integer(),
            (AggKind::Sum | AggKind::Avg, Some(t)) => t.is_numeric() && a.result_type.is_numeric(),
            (AggKind::Min | AggKind::Max, Some(t)) => check::fits(Some(t), a.result_type),
            _ => false,
        };
        if !result_ok {
            return Err(check::invalid(
                format!("{at}.result_type"),
                format!(
                    "{} over {} cannot give {}",
                    a.kind.name(),
                    arg.map(|t| t.to_string()).unwrap_or_else(|| "*".into()),
                    a.result_type
                ),
            ));
        }
    }
    Ok(())
}
