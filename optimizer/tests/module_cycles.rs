//! No import cycles inside a crate: for every crate of the workspace, the
//! modules (one per `.rs` file) and the paths each names (`use crate::..`,
//! `use super::..`, `crate::a::b::f(..)` in code), resolved to the module
//! they point into, make a graph without cycles, at two levels:
//!
//! - files: `a.rs` uses `b.rs` uses `a.rs` is a cycle. A module using what
//!   its parent declares (`super::Thing` from a child) is not an edge: the
//!   parent is the child's namespace, and the parent may use its children.
//! - siblings: the children of one module, each with everything below it,
//!   must not use each other in a circle either (`physical::explain` using
//!   `physical::node` while something under `node` uses `explain`).
//!
//! Run it alone with `cargo test --release -p optimizer --test module_cycles`;
//! `docs/architecture.md` says how it reads a crate.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Cycles known and owned elsewhere (none today); any other cycle fails
/// the test, and so does a known one that is gone (remove it here).
const KNOWN: &[&str] = &[];

/// A module's path below its crate root (`physical::node::join`).
type Module = Vec<String>;

/// Every module of the crate whose `src` is `src`, with its file.
fn modules(src: &Path) -> BTreeMap<Module, PathBuf> {
    fn walk(dir: &Path, prefix: &Module, out: &mut BTreeMap<Module, PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            let name = p.file_stem().unwrap().to_string_lossy().to_string();
            if p.is_dir() {
                let mut m = prefix.clone();
                m.push(name);
                walk(&p, &m, out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                let mut m = prefix.clone();
                if !matches!(name.as_str(), "mod" | "lib" | "main") {
                    m.push(name);
                }
                out.insert(m, p);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(src, &Vec::new(), &mut out);
    out
}

/// The code of a file without comments, string literals and test modules.
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut in_tests = false;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]") {
            in_tests = true;
        }
        if in_tests || t.starts_with("//") {
            continue;
        }
        let line = match line.find("//") {
            Some(i) if !line[..i].contains('"') => &line[..i],
            _ => line,
        };
        // Drop string literals (paths in messages are not imports).
        let mut in_str = false;
        let mut prev = ' ';
        for ch in line.chars() {
            if ch == '"' && prev != '\\' {
                in_str = !in_str;
            } else if !in_str {
                out.push(ch);
            }
            prev = ch;
        }
        out.push('\n');
    }
    out
}

/// Expands one `use` tree (`a::{b, c::{d, e}}`) into paths.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        return vec![tree.split(" as ").next().unwrap().trim().to_string()];
    };
    let head = tree[..open].trim_end_matches("::").trim();
    let inner = &tree[open + 1..tree.rfind('}').unwrap()];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, ch) in inner.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(expand)
        .map(|p| {
            if p == "self" {
                head.to_string()
            } else {
                format!("{head}::{p}")
            }
        })
        .collect()
}

/// Every path the code names from `crate`, `super` or `self`.
fn paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    // `use` statements, which may span lines and group with braces.
    let mut other = String::new();
    let mut rest = code;
    while let Some(i) = rest.find("use ") {
        let before = rest[..i].chars().last();
        other.push_str(&rest[..i]);
        rest = &rest[i + 4..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            other.push_str("use ");
            continue;
        }
        let Some(end) = rest.find(';') else { break };
        let tree: String = rest[..end].split_whitespace().collect::<Vec<_>>().join(" ");
        out.extend(expand(&tree));
        rest = &rest[end..];
    }
    other.push_str(rest);
    // Paths written in code: `crate::a::b`, `super::a`.
    for start in ["crate::", "super::", "self::"] {
        let mut rest = other.as_str();
        while let Some(i) = rest.find(start) {
            let before = rest[..i].chars().last();
            let path: String = rest[i..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            rest = &rest[i + start.len()..];
            if !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                out.push(path.trim_end_matches(':').to_string());
            }
        }
    }
    out
}

/// The module `path` (written in module `from`) points into, if any.
fn resolve(from: &Module, path: &str, all: &BTreeMap<Module, PathBuf>) -> Option<Module> {
    let mut segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    // `super` of `foo/mod.rs` is foo's parent, as of `foo.rs`: both are
    // module `foo`.
    let mut base: Module = match segs.first()? {
        &"crate" => {
            segs.remove(0);
            Vec::new()
        }
        &"self" | &"super" => from.clone(),
        _ => return None,
    };
    while let Some(&s) = segs.first() {
        match s {
            "self" => {
                segs.remove(0);
            }
            "super" => {
                segs.remove(0);
                base.pop()?;
            }
            _ => break,
        }
    }
    let mut best = None;
    let mut m = base.clone();
    if all.contains_key(&m) {
        best = Some(m.clone());
    }
    for s in segs {
        m.push(s.to_string());
        if all.contains_key(&m) {
            best = Some(m.clone());
        } else {
            break;
        }
    }
    best
}

fn is_ancestor(a: &Module, b: &Module) -> bool {
    a.len() < b.len() && b[..a.len()] == a[..]
}

/// The module graph: each module's edges, ancestors left out.
fn graph(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let all = modules(src);
    let mut g: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (m, file) in &all {
        let text = std::fs::read_to_string(file).unwrap();
        let edges = g.entry(m.clone()).or_default();
        for p in paths(&code(&text)) {
            if let Some(t) = resolve(m, &p, &all) {
                if t != *m && !is_ancestor(&t, m) {
                    edges.insert(t);
                }
            }
        }
    }
    g
}

/// One cycle through each strongly connected set of two or more nodes,
/// written `a -> b -> a`.
fn cycles<N: Ord + Clone>(
    g: &BTreeMap<N, BTreeSet<N>>,
    name: &dyn Fn(&N) -> String,
) -> Vec<String> {
    let nodes: Vec<&N> = g.keys().collect();
    let reaches = |from: &N, to: &N| -> Option<Vec<N>> {
        // Breadth-first, for a shortest path.
        let mut prev: BTreeMap<N, N> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([from.clone()]);
        while let Some(n) = queue.pop_front() {
            for next in g.get(&n).into_iter().flatten() {
                if next == to {
                    let mut path = vec![n.clone()];
                    let mut cur = n.clone();
                    while let Some(p) = prev.get(&cur) {
                        path.push(p.clone());
                        cur = p.clone();
                    }
                    path.reverse();
                    return Some(path);
                }
                if !prev.contains_key(next) && next != from {
                    prev.insert(next.clone(), n.clone());
                    queue.push_back(next.clone());
                }
            }
        }
        None
    };
    let mut seen: BTreeSet<N> = BTreeSet::new();
    let mut out = Vec::new();
    for n in nodes {
        if seen.contains(n) {
            continue;
        }
        if let Some(path) = reaches(n, n) {
            seen.extend(path.iter().cloned());
            let mut names: Vec<String> = path.iter().map(name).collect();
            names.push(name(n));
            out.push(names.join(" -> "));
        }
    }
    out
}

/// The cycles of a crate, at both levels.
fn crate_cycles(krate: &str) -> Vec<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(krate)
        .join("src");
    let g = graph(&src);
    let show = |m: &Module| {
        if m.is_empty() {
            "(root)".to_string()
        } else {
            m.join("::")
        }
    };
    let mut out: Vec<String> = cycles(&g, &show)
        .into_iter()
        .map(|c| format!("{krate}: {c}"))
        .collect();
    // Siblings: each child of a module stands for everything below it.
    let parents: BTreeSet<Module> = g
        .keys()
        .filter(|m| !m.is_empty())
        .map(|m| m[..m.len() - 1].to_vec())
        .collect();
    for parent in parents {
        let child_of = |m: &Module| -> Option<Module> {
            (is_ancestor(&parent, m)).then(|| m[..parent.len() + 1].to_vec())
        };
        let mut siblings: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
        for (m, edges) in &g {
            let Some(a) = child_of(m) else { continue };
            let entry = siblings.entry(a.clone()).or_default();
            for t in edges {
                if let Some(b) = child_of(t) {
                    if b != a {
                        entry.insert(b);
                    }
                }
            }
        }
        for c in cycles(&siblings, &show) {
            let line = format!("{krate}: {c}");
            if !out.contains(&line) {
                out.push(line);
            }
        }
    }
    out
}

#[test]
fn no_crate_has_an_import_cycle() {
    let mut found = Vec::new();
    for krate in ["operators", "datasets", "optimizer", "bench-harness"] {
        found.extend(crate_cycles(krate));
    }
    let gone: Vec<&&str> = KNOWN
        .iter()
        .filter(|k| !found.iter().any(|c| c == *k))
        .collect();
    assert!(gone.is_empty(), "known cycles no longer found: {gone:?}");
    let unknown: Vec<&String> = found
        .iter()
        .filter(|c| !KNOWN.contains(&c.as_str()))
        .collect();
    assert!(
        unknown.is_empty(),
        "import cycles:\n{}",
        unknown
            .iter()
            .map(|c| format!("  {c}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_reader_finds_what_a_cycle_is_made_of() {
    assert_eq!(
        expand("super::{a, b::{c, d as e}, self}"),
        ["super::a", "super::b::c", "super::b::d", "super"]
    );
    let code =
        code("use crate::x::{y, z};\n// use crate::w;\nfn f() { crate::q::r(); \"crate::s\"; }\n");
    assert_eq!(paths(&code), ["crate::x::y", "crate::x::z", "crate::q::r"]);
    let g: BTreeMap<u8, BTreeSet<u8>> = BTreeMap::from([
        (1, BTreeSet::from([2])),
        (2, BTreeSet::from([3])),
        (3, BTreeSet::from([1])),
        (4, BTreeSet::from([1])),
    ]);
    assert_eq!(cycles(&g, &|n| n.to_string()), ["1 -> 2 -> 3 -> 1"]);
}
