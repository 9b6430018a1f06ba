//! Compiled plans: plans the lab wrote (`COMPILE PLAN` of generated
//! queries and of the examples) with their JSON edited as a user might:
//! numbers (column indices, arities, key lists, parallelism) changed,
//! strings swapped, array elements removed, duplicated or swapped, fields
//! removed or added, values of one type put where another belongs; or the
//! text itself mutated.

use super::seeds::example_scripts;
use crate::case::{Category, Input};
use crate::mutate::{Mutator, NUMBERS};
use crate::rng::Rng;
use serde_json::Value;

/// A plan compiled from a generated query (or an example).
fn compiled(rng: &mut Rng) -> Option<String> {
    for _ in 0..8 {
        let sql = if rng.chance(0.8) {
            super::sql::generate(rng)
        } else {
            rng.pick(example_scripts()).clone()
        };
        if let Ok(plan) = optimizer::session::compile_script(&sql, &[]) {
            return Some(optimizer::physical::compiled_plan::compile(&plan));
        }
    }
    None
}

/// The paths (indices and keys from the root) of every value in `v`.
fn paths(v: &Value) -> Vec<Vec<PathStep>> {
    let mut out = Vec::new();
    let mut stack: Vec<(Vec<PathStep>, &Value)> = vec![(Vec::new(), v)];
    while let Some((p, v)) = stack.pop() {
        match v {
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    let mut q = p.clone();
                    q.push(PathStep::Index(i));
                    stack.push((q, x));
                }
            }
            Value::Object(o) => {
                for (k, x) in o {
                    let mut q = p.clone();
                    q.push(PathStep::Key(k.clone()));
                    stack.push((q, x));
                }
            }
            _ => {}
        }
        out.push(p);
    }
    out
}

#[derive(Clone, Debug)]
enum PathStep {
    Index(usize),
    Key(String),
}

fn at<'a>(v: &'a mut Value, path: &[PathStep]) -> Option<&'a mut Value> {
    let mut cur = v;
    for s in path {
        cur = match (s, cur) {
            (PathStep::Index(i), Value::Array(a)) => a.get_mut(*i)?,
            (PathStep::Key(k), Value::Object(o)) => o.get_mut(k)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn other_number(rng: &mut Rng, n: &serde_json::Number) -> Value {
    let i = n.as_i64().unwrap_or(0);
    match rng.below(8) {
        0 => Value::from(i + 1),
        1 => Value::from(i - 1),
        2 => Value::from(i.saturating_mul(1000)),
        3 => Value::from(rng.range(0, 40) as i64),
        4 => Value::from(u64::MAX),
        5 => Value::from(-1),
        6 => serde_json::from_str(rng.pick::<&str>(NUMBERS)).unwrap_or(Value::from(0)),
        _ => Value::from(0.5),
    }
}

/// One structural edit of the plan.
fn edit(rng: &mut Rng, doc: &mut Value) {
    let all = paths(doc);
    let path = rng.pick(&all).clone();
    // A value from elsewhere in the plan (a type confusion, a stale index).
    let donor = {
        let p = rng.pick(&all).clone();
        at(doc, &p).cloned().unwrap_or(Value::Null)
    };
    let Some(v) = at(doc, &path) else { return };
    match v {
        Value::Number(n) => *v = other_number(rng, n),
        Value::String(s) => {
            *v = match rng.below(5) {
                0 => Value::String(String::new()),
                1 => Value::String(s.repeat(rng.small_or_large(1000))),
                2 => Value::String(format!("{s}x")),
                3 => Value::String(
                    rng.pick(&["99999999999 d", "-1 ms", "1 us", "a", "0 ms"])
                        .to_string(),
                ),
                _ => donor,
            }
        }
        Value::Array(a) if !a.is_empty() => match rng.below(5) {
            0 => {
                a.remove(rng.below(a.len()));
            }
            1 => {
                let x = a[rng.below(a.len())].clone();
                for _ in 0..rng.small_or_large(50) {
                    a.insert(rng.below(a.len() + 1), x.clone());
                }
            }
            2 => {
                let (i, j) = (rng.below(a.len()), rng.below(a.len()));
                a.swap(i, j);
            }
            3 => a.clear(),
            _ => a.push(donor),
        },
        Value::Array(a) => a.push(donor),
        Value::Object(o) if !o.is_empty() => {
            let keys: Vec<String> = o.keys().cloned().collect();
            let k = rng.pick(&keys).clone();
            match rng.below(3) {
                0 => {
                    o.remove(&k);
                }
                1 => {
                    o.insert(format!("{k}x"), donor);
                }
                _ => {
                    o.insert(k, donor);
                }
            }
        }
        Value::Bool(b) => *b = !*b,
        _ => *v = donor,
    }
}

/// One plan input: `plan.json`.
pub fn input(rng: &mut Rng) -> Input {
    let text = compiled(rng).unwrap_or_else(|| "{}".to_string());
    let out = match rng.below(10) {
        0 => text,
        1 | 2 => Mutator {
            dictionary: &[
                "{", "}", "[", "]", ",", ":", "\"", "null", "true", "-1", "1e999",
            ],
            chains: &["[", "{\"a\":"],
            donors: &[],
        }
        .mutate(rng, &text),
        _ => match serde_json::from_str::<Value>(&text) {
            Ok(mut doc) => {
                for _ in 0..rng.small_or_large(5) {
                    edit(rng, &mut doc);
                }
                serde_json::to_string_pretty(&doc).unwrap_or(text)
            }
            Err(_) => text,
        },
    };
    Input::new(Category::Plan).with("plan.json", out)
}
