//! Trees of EXPLAIN nodes as text: the physical plan tree by tree, and the
//! execution plan as Flink's `ExecNodePlanDumper` prints a job's graph,
//! where a node with several consumers is printed once with
//! `(reuse_id=[n])` and referred to as `Reused(reference_id=[n])` (a job
//! with several sinks prints each shared node as a block of its own before
//! the sinks).

use crate::physical::node::explain::{ExplainNode, Role};
use std::collections::HashMap;

/// `:- `/`+- ` prefixes of a child line (Flink's and Calcite's tree form).
fn prefix(last_children: &[bool]) -> String {
    let Some((last, above)) = last_children.split_last() else {
        return String::new();
    };
    let mut s: String = above
        .iter()
        .map(|&l| if l { "   " } else { ":  " })
        .collect();
    s.push_str(if *last { "+- " } else { ":- " });
    s
}

/// Each tree in full, one line per node from `line`, trees separated by
/// a blank line.
pub(crate) fn trees(roots: &[ExplainNode], line: &dyn Fn(&ExplainNode) -> String) -> String {
    fn walk(
        n: &ExplainNode,
        last: &mut Vec<bool>,
        line: &dyn Fn(&ExplainNode) -> String,
        out: &mut String,
    ) {
        out.push_str(&prefix(last));
        out.push_str(&line(n));
        out.push('\n');
        for (i, c) in n.inputs.iter().enumerate() {
            last.push(i + 1 == n.inputs.len());
            walk(c, last, line, out);
            last.pop();
        }
    }
    roots
        .iter()
        .map(|r| {
            let mut out = String::new();
            walk(r, &mut Vec::new(), line, &mut out);
            out
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The job's nodes, each once: what the trees' identities make them.
pub(crate) struct Graph {
    pub lines: Vec<String>,
    pub inputs: Vec<Vec<usize>>,
    pub nodes: Vec<ExplainNode>,
    pub roots: Vec<usize>,
}

impl Graph {
    pub fn new(roots: &[ExplainNode]) -> Graph {
        let mut g = Graph {
            lines: Vec::new(),
            inputs: Vec::new(),
            nodes: Vec::new(),
            roots: Vec::new(),
        };
        let mut ids: HashMap<String, usize> = HashMap::new();
        for r in roots {
            let id = g.intern(r, &mut ids);
            g.roots.push(id);
        }
        g
    }

    fn intern(&mut self, n: &ExplainNode, ids: &mut HashMap<String, usize>) -> usize {
        if let Some(&id) = ids.get(&n.identity) {
            return id;
        }
        let inputs: Vec<usize> = n.inputs.iter().map(|c| self.intern(c, ids)).collect();
        let id = self.lines.len();
        self.lines.push(n.exec_line());
        self.inputs.push(inputs);
        let mut own = n.clone();
        own.inputs.clear();
        self.nodes.push(own);
        ids.insert(n.identity.clone(), id);
        id
    }

    fn is_sink(&self, id: usize) -> bool {
        matches!(self.nodes[id].role, Role::Sink(_))
    }

    /// Reuse ids: a node reached a second time gets the next id, in the
    /// order of a depth-first walk from the roots.
    fn reuse_ids(&self) -> Vec<Option<usize>> {
        let mut ids = vec![None; self.lines.len()];
        let mut visited = vec![false; self.lines.len()];
        let mut next = 0;
        fn visit(
            g: &Graph,
            n: usize,
            visited: &mut [bool],
            ids: &mut [Option<usize>],
            next: &mut usize,
        ) {
            if visited[n] {
                if ids[n].is_none() {
                    *next += 1;
                    ids[n] = Some(*next);
                }
                return;
            }
            visited[n] = true;
            for &c in &g.inputs[n] {
                visit(g, c, visited, ids, next);
            }
        }
        for &r in &self.roots {
            visit(self, r, &mut visited, &mut ids, &mut next);
        }
        ids
    }
}

/// The execution plan: one tree with reused nodes inline, or, for several
/// roots, each node shared between them as a block of its own first.
pub(crate) fn exec_plan(g: &Graph) -> String {
    let reuse = g.reuse_ids();
    if g.roots.len() == 1 {
        let mut out = String::new();
        let mut seen = vec![0usize; g.lines.len()];
        tree(
            g,
            g.roots[0],
            &reuse,
            &mut TreeState::Tree(&mut seen),
            &[],
            &mut Vec::new(),
            &mut out,
        );
        return out;
    }
    let mut blocks: Vec<String> = Vec::new();
    let mut visits = vec![0usize; g.lines.len()];
    let mut first_visited = vec![false; g.lines.len()];
    let mut stop: Vec<usize> = Vec::new();
    fn visit(
        g: &Graph,
        n: usize,
        reuse: &[Option<usize>],
        visits: &mut [usize],
        first_visited: &mut [bool],
        stop: &mut Vec<usize>,
        blocks: &mut Vec<String>,
    ) {
        visits[n] += 1;
        let first = visits[n] == 1;
        if first {
            for &c in &g.inputs[n] {
                visit(g, c, reuse, visits, first_visited, stop, blocks);
            }
        }
        let is_reuse = reuse[n].is_some();
        if g.is_sink(n) || (is_reuse && first) {
            if is_reuse {
                first_visited[n] = true;
            }
            let mut out = String::new();
            tree(
                g,
                n,
                reuse,
                &mut TreeState::Dag(first_visited),
                stop,
                &mut Vec::new(),
                &mut out,
            );
            blocks.push(out);
            if is_reuse {
                stop.push(n);
                first_visited[n] = false;
            }
        }
    }
    for &r in &g.roots {
        visit(
            g,
            r,
            &reuse,
            &mut visits,
            &mut first_visited,
            &mut stop,
            &mut blocks,
        );
    }
    blocks.join("\n")
}

/// Whether a reused node is at its first visit: counted while printing a
/// lone tree, set by the caller for a block of a graph.
enum TreeState<'a> {
    Tree(&'a mut Vec<usize>),
    Dag(&'a mut [bool]),
}

fn tree(
    g: &Graph,
    n: usize,
    reuse: &[Option<usize>],
    state: &mut TreeState,
    stop: &[usize],
    last: &mut Vec<bool>,
    out: &mut String,
) {
    let first = match state {
        TreeState::Tree(seen) => {
            seen[n] += 1;
            seen[n] == 1
        }
        TreeState::Dag(first_visited) => first_visited[n],
    };
    out.push_str(&prefix(last));
    match reuse[n] {
        Some(id) if first => {
            out.push_str(&g.lines[n]);
            out.push_str(&format!("(reuse_id=[{id}])"));
        }
        Some(id) => out.push_str(&format!("Reused(reference_id=[{id}])")),
        None => out.push_str(&g.lines[n]),
    }
    out.push('\n');
    let visit_inputs = (first || reuse[n].is_none()) && !stop.contains(&n);
    if visit_inputs {
        let k = g.inputs[n].len();
        for (i, &c) in g.inputs[n].iter().enumerate() {
            last.push(i + 1 == k);
            tree(g, c, reuse, state, stop, last, out);
            last.pop();
        }
    }
}
