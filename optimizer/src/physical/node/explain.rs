//! What a node's EXPLAIN description is made of: an [`ExplainNode`] with
//! Flink's attributes in both expression forms, the lab's own attributes,
//! and an identity (nodes with the same identity are one node of the job).
//! Each node kind builds its own from what [`ExplainContext`] tells it; the
//! EXPLAIN walk (`physical/explain/`) adds inputs and exchanges and prints.

use super::PhysicalNode;
use crate::physical::display::{name, render, Style};
use operators::changelog::ChangelogMode;
use operators::expr::Expr;
use operators::value::DataType;

/// One attribute, in the physical plan's and the execution plan's form.
#[derive(Clone, Debug)]
pub struct Attr {
    pub key: &'static str,
    pub prefix: String,
    pub infix: String,
}

/// An attribute without expressions: the same in both forms.
pub fn same(key: &'static str, value: impl Into<String>) -> Attr {
    let value = value.into();
    Attr {
        key,
        prefix: value.clone(),
        infix: value,
    }
}

/// An attribute holding expressions: rendered in both forms by `f`.
pub fn exprs(key: &'static str, f: impl Fn(Style) -> String) -> Attr {
    Attr {
        key,
        prefix: f(Style::Prefix),
        infix: f(Style::Infix),
    }
}

/// What a node is in the job graph (for the JSON execution plan).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// Reads a table.
    Source(String),
    Operator,
    /// How records reach the consumer: `HASH`, `GLOBAL`.
    Exchange(&'static str),
    /// Writes a table.
    Sink(String),
}

#[derive(Clone, Debug)]
pub struct ExplainNode {
    pub name: &'static str,
    pub attrs: Vec<Attr>,
    /// The lab's own attributes (physical plan only).
    pub lab: Vec<(&'static str, String)>,
    /// `None` for a sink (`changelogMode=[NONE]`).
    pub changelog: Option<ChangelogMode>,
    /// Flink's plan advice for this node (`PLAN_ADVICE`).
    pub advice: Option<String>,
    pub parallelism: usize,
    pub role: Role,
    /// Nodes with equal identities are one node of the job.
    pub identity: String,
    pub inputs: Vec<ExplainNode>,
}

impl ExplainNode {
    pub fn new(name: &'static str, n: &PhysicalNode, identity: String) -> ExplainNode {
        ExplainNode {
            name,
            attrs: Vec::new(),
            lab: Vec::new(),
            changelog: Some(n.changelog),
            advice: None,
            parallelism: n.parallelism,
            role: Role::Operator,
            identity,
            inputs: Vec::new(),
        }
    }

    /// `Name(key=[value], ...)` in the execution plan's form.
    pub fn exec_line(&self) -> String {
        let attrs: Vec<String> = self
            .attrs
            .iter()
            .map(|a| format!("{}=[{}]", a.key, a.infix))
            .collect();
        format!("{}({})", self.name, attrs.join(", "))
    }

    /// The physical plan's line: Flink's attributes, then the lab's, then
    /// the changelog mode when asked for; `advice` first when it has some.
    pub fn physical_line(&self, changelog: bool, advice: Option<usize>) -> String {
        let mut attrs: Vec<String> = Vec::new();
        if let Some(a) = advice {
            attrs.push(format!("advice=[{a}]"));
        }
        attrs.extend(
            self.attrs
                .iter()
                .map(|a| format!("{}=[{}]", a.key, a.prefix)),
        );
        attrs.extend(self.lab.iter().map(|(k, v)| format!("{k}=[{v}]")));
        if changelog {
            attrs.push(match self.changelog {
                Some(m) => format!("changelogMode={m}"),
                None => "changelogMode=[NONE]".to_string(),
            });
        }
        format!("{}({})", self.name, attrs.join(", "))
    }
}

/// What a node's description may ask of the EXPLAIN around it.
pub trait ExplainContext {
    /// The node's identity: equal for sub-plans the job runs once.
    fn identity(&mut self, node: &PhysicalNode) -> String;
    /// An identity shared with nothing.
    fn unique(&mut self) -> String;
    /// The identity of a table read: equal for scans the job reads once.
    fn scan_identity(&mut self, node: &PhysicalNode) -> String;
    /// Whether the node being described sits below a mini-batch operator.
    fn under_mini_batch(&self) -> bool;
    /// The `MiniBatchAssigner`'s interval: the plan's allow-latency.
    fn mini_batch_interval_ms(&self) -> u128;
    /// Flink's advice to run a one-phase aggregate in two phases, under the
    /// session's configuration (none outside EXPLAIN).
    fn two_phase_advice(&self) -> Option<String>;
}

/// `[[default_catalog, default_database, t]]`'s table part.
pub fn qualified(table: &str) -> String {
    format!("default_catalog.default_database.{table}")
}

pub fn flink_type(t: DataType) -> &'static str {
    match t {
        DataType::Boolean => "BOOLEAN",
        DataType::Int => "INTEGER",
        DataType::BigInt => "BIGINT",
        DataType::Double => "DOUBLE",
        DataType::String => "VARCHAR(2147483647)",
        DataType::Timestamp => "TIMESTAMP(3)",
        DataType::TimestampLtz => "TIMESTAMP_LTZ(3)",
        DataType::Interval => "INTERVAL SECOND(3)",
    }
}

/// `select=[...]` items: each expression, `AS` its output name unless it
/// is the input column of that name.
pub fn select_items(exprs: &[Expr], input: &[String], output: &[String], style: Style) -> String {
    exprs
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let text = render(e, input, style);
            let out = name(output, i);
            match e {
                Expr::Column(c) if name(input, *c) == out => text,
                _ => format!("{text} AS {out}"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}
