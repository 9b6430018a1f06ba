//! Routing records between stages.

use crate::changelog::Change;
use crate::expr::stable_hash;
use crate::value::Value;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exchange {
    Forward,
    Rebalance,
    Hash(Vec<usize>),
    Single,
}

impl Exchange {
    /// Flink's name for the exchange in a plan.
    pub fn describe(&self) -> String {
        match self {
            Exchange::Forward => "forward".into(),
            Exchange::Rebalance => "rebalance".into(),
            Exchange::Hash(k) => format!(
                "hash[{}]",
                k.iter()
                    .map(|i| format!("${i}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Exchange::Single => "single".into(),
        }
    }

    /// Routes upstream partitions (in subtask order) to `parallelism`
    /// downstream partitions, preserving per-key order.
    pub fn route(&self, upstream: Vec<Vec<Change>>, parallelism: usize) -> Vec<Vec<Change>> {
        if parallelism == 1 && upstream.len() == 1 {
            // One partition to one: every exchange keeps it as it is.
            return upstream;
        }
        match self {
            Exchange::Forward if upstream.len() == parallelism => upstream,
            Exchange::Single => vec![upstream.into_iter().flatten().collect()],
            Exchange::Forward | Exchange::Rebalance => {
                if parallelism == 1 {
                    return vec![upstream.into_iter().flatten().collect()];
                }
                let all: Vec<Change> = upstream.into_iter().flatten().collect();
                let chunk = all.len().div_ceil(parallelism).max(1);
                let mut out: Vec<Vec<Change>> = Vec::with_capacity(parallelism);
                let mut it = all.into_iter();
                for _ in 0..parallelism {
                    out.push(it.by_ref().take(chunk).collect());
                }
                out
            }
            Exchange::Hash(keys) => {
                if parallelism == 1 {
                    return vec![upstream.into_iter().flatten().collect()];
                }
                let total: usize = upstream.iter().map(Vec::len).sum();
                let mut out: Vec<Vec<Change>> = (0..parallelism)
                    .map(|_| Vec::with_capacity(total / parallelism + 1))
                    .collect();
                let mut key: Vec<Value> = Vec::with_capacity(keys.len());
                for part in upstream {
                    for c in part {
                        key.clear();
                        key.extend(keys.iter().map(|&i| c.row[i].clone()));
                        let target = (stable_hash(&key) % parallelism as u64) as usize;
                        out[target].push(c);
                    }
                }
                out
            }
        }
    }
}
