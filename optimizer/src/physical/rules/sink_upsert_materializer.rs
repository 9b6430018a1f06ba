//! `sink_upsert_materializer`: checks that the sink can take what the tree
//! emits, and keys an updating result by the sink's primary key when the
//! query's unique key is not that key (`table.exec.sink.upsert-materialize`).
//!
//! ```text
//! before (the sink's PRIMARY KEY (id) is not the query's unique key (k)):
//!   Sink(table=[out], fields=[id, k, n])
//!   +- GroupAggregate(groupBy=[k], ...)
//!
//! after (AUTO, or FORCE whatever the key):
//!   Sink(table=[out], fields=[id, k, n], upsertMaterialize=[true])
//!   +- Exchange(hash[id])                 -- a SinkMaterializer keyed by id
//!      +- GroupAggregate(groupBy=[k], ...)
//! ```
//!
//! The query's unique key can key an upsert sink only if each key's changes
//! reach the sink in order (see `NodeSpec::changes_ordered_by_unique_key`).
//! `NONE` refuses a sink the result would need a materializer for; a
//! `filesystem` sink without a primary key refuses an updating result, as
//! Flink's does. The plan is not right without this rule, so it cannot be
//! switched off.

use super::{PhysicalRule, RuleContext};
use crate::config::{UpsertMaterialize, SINK_UPSERT_MATERIALIZE};
use crate::error::{PlanError, Result};
use crate::physical::display::field_names;
use crate::physical::node::sink_materializer::SinkMaterializer;
use crate::physical::node::PhysicalNode;
use crate::physical::state_ttl;

pub struct SinkUpsertMaterializerRule;

impl PhysicalRule for SinkUpsertMaterializerRule {
    fn name(&self) -> &'static str {
        "sink_upsert_materializer"
    }

    fn optional(&self) -> bool {
        false
    }

    fn optimize(&self, root: PhysicalNode, ctx: &RuleContext) -> Result<PhysicalNode> {
        let Some(sink) = ctx.sink else {
            return Ok(root);
        };
        let sink_table = &sink.table;
        let connector = sink_table
            .options
            .get("connector")
            .map(String::as_str)
            .unwrap_or("");
        let mut materialize: Option<Vec<usize>> = None;
        match &sink_table.primary_key {
            Some(pk) => {
                let mut want = pk.clone();
                want.sort_unstable();
                let mut have = root
                    .unique_key
                    .clone()
                    .filter(|_| root.changes_ordered_by_unique_key());
                if let Some(h) = &mut have {
                    h.sort_unstable();
                }
                let mismatch = !root.is_insert_only() && have.as_ref() != Some(&want);
                match ctx.config.sink_upsert_materialize() {
                    UpsertMaterialize::Force => materialize = Some(pk.clone()),
                    UpsertMaterialize::Auto if mismatch => materialize = Some(pk.clone()),
                    UpsertMaterialize::None if mismatch => {
                        return Err(PlanError::plan(format!(
                            "sink '{}' has PRIMARY KEY ({}) but the query's unique key is {}, and \
                             '{}' = 'NONE' forbids the SinkUpsertMaterializer that would key the \
                             result by ({}); use AUTO or FORCE, or declare the query's unique key",
                            sink_table.name,
                            field_names(&sink_table.schema, pk),
                            match &root.unique_key {
                                Some(k) => format!("({})", field_names(&root.schema, k)),
                                None => "unknown".to_string(),
                            },
                            SINK_UPSERT_MATERIALIZE,
                            field_names(&sink_table.schema, pk),
                        )));
                    }
                    _ => {}
                }
            }
            None if connector == "filesystem" && !root.is_insert_only() => {
                return Err(PlanError::plan(format!(
                    "Table sink '{}' doesn't support consuming update changes which is produced by node {}; \
                     write updating results with `lab run --changelog FILE` or to a print/blackhole sink",
                    sink_table.name,
                    root.label()
                )));
            }
            None => {}
        }
        Ok(match materialize {
            Some(pk) => {
                let ttl = state_ttl::ttl_for(None, &[], ctx.config);
                SinkMaterializer::over(root, pk, ttl, ctx.config.parallelism())
            }
            None => root,
        })
    }
}
