//! The idle-state retention (TTL) of each stateful operator's inputs,
//! resolved where the hints are: by the planner as it translates each
//! aggregate and join (and by the MultiJoin rule for the inputs it fuses).
//!
//! ```text
//! SET 'table.exec.state.ttl' = '1 h';
//! SELECT /*+ STATE_TTL('o' = '1d', 'l' = '12h') */ ... FROM orders o JOIN lineitem l ON ...
//!
//! Join(..., stateTtl=[left=86400000 ms (hint), right=43200000 ms (hint)])
//! GroupAggregate(..., stateTtl=[3600000 ms (config)])   -- no hint names its input
//! ```
//!
//! Precedence: `table.exec.state.ttl` < `STATE_TTL` hint < a TTL edited in
//! a compiled plan. Within one hint a repeated key takes the last value;
//! across hints the first hint that names a key wins (as Flink). A hint key
//! names a join input or an aggregate's input by its table name or alias;
//! an input that is itself a join or an aggregate cannot be named and keeps
//! the configured TTL.

use crate::config::{parse_duration, Config};
use crate::error::{PlanError, Result};
use crate::logical::{Hint, LogicalPlan};
use crate::physical::node::state::StateTtl;

/// The `STATE_TTL` entries of a node's hints, keys lower-cased.
pub fn hinted(hints: &[Hint]) -> Result<Vec<(String, u64)>> {
    let mut out: Vec<(String, u64)> = Vec::new();
    for h in hints
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("STATE_TTL"))
    {
        let mut this: Vec<(String, u64)> = Vec::new();
        for (k, v) in &h.kv {
            let ms = parse_duration(v)
                .map_err(|e| PlanError::validation(format!("STATE_TTL('{k}' = '{v}'): {e}")))?
                .as_millis() as u64;
            let key = k.to_lowercase();
            match this.iter_mut().find(|(x, _)| *x == key) {
                Some(e) => e.1 = ms,
                None => this.push((key, ms)),
            }
        }
        for (k, ms) in this {
            if !out.iter().any(|(x, _)| *x == k) {
                out.push((k, ms));
            }
        }
    }
    Ok(out)
}

/// The table alias a hint can name this input by, if it reads one table.
pub fn input_alias(plan: &LogicalPlan) -> Option<String> {
    match plan {
        LogicalPlan::Scan { alias, .. } => Some(alias.to_lowercase()),
        LogicalPlan::Project { input, .. } | LogicalPlan::Filter { input, .. } => {
            input_alias(input)
        }
        _ => None,
    }
}

/// The TTL of an input named `alias` (if nameable).
pub fn ttl_for(alias: Option<&str>, hinted: &[(String, u64)], config: &Config) -> StateTtl {
    if let Some(a) = alias {
        if let Some((_, ms)) = hinted.iter().find(|(k, _)| k == a) {
            return StateTtl {
                ms: *ms,
                origin: "hint".into(),
            };
        }
    }
    StateTtl {
        ms: config.state_ttl().as_millis() as u64,
        origin: "config".into(),
    }
}
