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
            Exchange::Hash(_) => {
                if parallelism == 1 {
                    return vec![upstream.into_iter().flatten().collect()];
                }
                let unstamped: Vec<Option<()>> = vec![None; upstream.len()];
                self.route_stamped(upstream, &unstamped, parallelism).0
            }
        }
    }

    /// [`Exchange::route`], carrying a stamp per partition (the ingestion
    /// time of its oldest record): each downstream partition gets the
    /// oldest stamp among the upstream partitions that sent it a record.
    pub fn route_stamped<T: Copy + Ord>(
        &self,
        upstream: Vec<Vec<Change>>,
        stamps: &[Option<T>],
        parallelism: usize,
    ) -> (Vec<Vec<Change>>, Vec<Option<T>>) {
        let oldest = |parts: &[Vec<Change>]| {
            parts
                .iter()
                .zip(stamps)
                .filter(|(p, _)| !p.is_empty())
                .filter_map(|(_, s)| *s)
                .min()
        };
        match self {
            Exchange::Hash(keys) if parallelism > 1 => {
                let total: usize = upstream.iter().map(Vec::len).sum();
                let mut out: Vec<Vec<Change>> = (0..parallelism)
                    .map(|_| Vec::with_capacity(total / parallelism + 1))
                    .collect();
                let mut out_stamps: Vec<Option<T>> = vec![None; parallelism];
                let mut key: Vec<Value> = Vec::with_capacity(keys.len());
                for (part, stamp) in upstream.into_iter().zip(stamps) {
                    for c in part {
                        key.clear();
                        key.extend(keys.iter().map(|&i| c.row[i].clone()));
                        let target = (stable_hash(&key) % parallelism as u64) as usize;
                        out[target].push(c);
                        if let Some(s) = stamp {
                            let t = &mut out_stamps[target];
                            *t = Some(t.map_or(*s, |t| t.min(*s)));
                        }
                    }
                }
                (out, out_stamps)
            }
            Exchange::Forward if upstream.len() == parallelism => (upstream, stamps.to_vec()),
            _ => {
                let stamp = oldest(&upstream);
                let out = self.route(upstream, parallelism);
                let stamps = out
                    .iter()
                    .map(|p| if p.is_empty() { None } else { stamp })
                    .collect();
                (out, stamps)
            }
        }
    }
}
