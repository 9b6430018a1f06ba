//! `EXPLAIN JSON_EXECUTION_PLAN`: the job graph as Flink prints it under
//! `== Physical Execution Plan ==`, one entry per operator (exchanges are
//! the `ship_strategy` of the edge they stand on), sources first.

use super::render::Graph;
use crate::physical::node::explain::Role;

fn string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// The graph as Flink's JSON (Jackson's pretty print).
pub(crate) fn json_plan(g: &Graph) -> String {
    // Operators in the order they are created: inputs first.
    let mut order: Vec<usize> = Vec::new();
    let mut done = vec![false; g.lines.len()];
    fn visit(g: &Graph, n: usize, done: &mut [bool], order: &mut Vec<usize>) {
        if done[n] {
            return;
        }
        done[n] = true;
        for &c in &g.inputs[n] {
            visit(g, c, done, order);
        }
        if !matches!(g.nodes[n].role, Role::Exchange(_)) {
            order.push(n);
        }
    }
    for &r in &g.roots {
        visit(g, r, &mut done, &mut order);
    }
    let mut json_id = vec![0usize; g.lines.len()];
    for (i, &n) in order.iter().enumerate() {
        json_id[n] = i + 1;
    }
    let entries: Vec<String> = order
        .iter()
        .map(|&n| {
            let node = &g.nodes[n];
            let id = json_id[n];
            let (kind, pact, contents) = match &node.role {
                Role::Source(table) => (
                    format!("Source: {table}[{id}]"),
                    "Data Source",
                    format!("[{id}]:{}", g.lines[n]),
                ),
                Role::Sink(table) => {
                    let w = format!("{table}[{id}]: Writer");
                    (w.clone(), "Operator", w)
                }
                _ => (
                    format!("{}[{id}]", node.name),
                    "Operator",
                    format!("[{id}]:{}", g.lines[n]),
                ),
            };
            let mut s = format!(
                "{{\n    \"id\" : {id},\n    \"type\" : {},\n    \"pact\" : {},\n    \"contents\" : {},\n    \"parallelism\" : {}",
                string(&kind),
                string(pact),
                string(&contents),
                node.parallelism
            );
            let preds: Vec<String> = g.inputs[n]
                .iter()
                .map(|&c| {
                    // Through an exchange: its strategy; else chained.
                    let (from, ship) = match g.nodes[c].role {
                        Role::Exchange(ship) => (g.inputs[c][0], ship),
                        _ if g.nodes[c].parallelism == node.parallelism => (c, "FORWARD"),
                        _ => (c, "REBALANCE"),
                    };
                    format!(
                        "{{\n      \"id\" : {},\n      \"ship_strategy\" : {},\n      \"side\" : \"second\"\n    }}",
                        json_id[from],
                        string(ship)
                    )
                })
                .collect();
            if !preds.is_empty() {
                s.push_str(&format!(",\n    \"predecessors\" : [ {} ]", preds.join(", ")));
            }
            s.push_str("\n  }");
            s
        })
        .collect();
    format!("{{\n  \"nodes\" : [ {} ]\n}}\n", entries.join(", "))
}
