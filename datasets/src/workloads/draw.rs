//! Small, version-proof sampling primitives for the workload generators.
//!
//! Semantics: every function here is a fixed formula over the raw 64-bit
//! words of [`LabRng`] (or of a SplitMix64 hash), so generated workloads do
//! not change when the `rand` crate changes its range or float algorithms.
//!
//! - [`unit`]: a double in `[0, 1)` from the top 53 bits of one word;
//! - [`below`]: an integer in `0..n` by multiply-shift (Lemire without the
//!   rejection step; the bias is below `n / 2^64`, irrelevant for workloads);
//! - [`Categorical`]: an index drawn with probability proportional to
//!   non-negative weights (one word per draw);
//! - [`mix`] / [`SplitMix`]: a stateless hash of several integers and the
//!   word stream it seeds, for content that must be recomputed from a key
//!   (a row's payload at a given version);
//! - [`push_alphanumeric`]: `[0-9A-Za-z]` characters, four per word.

use rand::RngCore;

use crate::rng::LabRng;

const ALPHANUMERIC: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A double in `[0, 1)`.
#[inline]
pub(crate) fn unit(rng: &mut LabRng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// An integer in `0..n` (`n >= 1`).
#[inline]
pub(crate) fn below(word: u64, n: u64) -> u64 {
    ((word as u128 * n as u128) >> 64) as u64
}

/// Draws an index with probability proportional to its weight.
#[derive(Clone, Debug)]
pub(crate) struct Categorical {
    /// Cumulative probabilities; the last non-zero category ends at 1.0.
    cumulative: Vec<f64>,
}

impl Categorical {
    /// `weights` must be finite, non-negative and not all zero.
    pub(crate) fn new(weights: &[f64]) -> Categorical {
        let total: f64 = weights.iter().sum();
        let last = weights.iter().rposition(|w| *w > 0.0).unwrap_or(0);
        let mut acc = 0.0;
        let cumulative = weights
            .iter()
            .enumerate()
            .map(|(i, w)| {
                acc += w / total;
                if i >= last {
                    1.0
                } else {
                    acc
                }
            })
            .collect();
        Categorical { cumulative }
    }

    #[inline]
    pub(crate) fn sample(&self, rng: &mut LabRng) -> usize {
        let u = unit(rng);
        // Few categories: a linear scan beats a binary search.
        self.cumulative
            .iter()
            .position(|c| u < *c)
            .unwrap_or(self.cumulative.len() - 1)
    }
}

/// The SplitMix64 finaliser: a bijective, well-mixing hash of one word.
#[inline]
pub(crate) fn finalize(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A hash of `key` and `parts`, order-sensitive.
#[inline]
pub(crate) fn mix(key: u64, parts: &[u64]) -> u64 {
    parts.iter().fold(finalize(key), |h, p| {
        finalize(h ^ p.wrapping_mul(0x9e37_79b9_7f4a_7c15))
    })
}

/// The SplitMix64 word stream from a starting state.
pub(crate) struct SplitMix(pub(crate) u64);

impl SplitMix {
    #[inline]
    pub(crate) fn next_word(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        finalize(self.0)
    }
}

/// Appends `length` characters from `[0-9A-Za-z]` to `text`.
#[inline]
pub(crate) fn push_alphanumeric(text: &mut String, length: usize, words: &mut SplitMix) {
    let mut left = length;
    while left > 0 {
        let word = words.next_word();
        for shift in [0, 16, 32, 48] {
            if left == 0 {
                break;
            }
            let chunk = (word >> shift) & 0xffff;
            text.push(ALPHANUMERIC[((chunk * 62) >> 16) as usize] as char);
            left -= 1;
        }
    }
}

/// A seeded permutation of `0..n` in O(1) memory: a 4-round Feistel network
/// over the smallest even number of bits covering `n`, cycle-walked back
/// into range (on average fewer than 4 rounds of walking).
#[derive(Clone, Debug)]
pub(crate) struct Permutation {
    n: u64,
    half: u32,
    mask: u64,
    keys: [u64; 4],
}

impl Permutation {
    pub(crate) fn new(n: u64, key: u64) -> Permutation {
        let bits = (64 - n.saturating_sub(1).leading_zeros()).max(2);
        let half = bits.div_ceil(2);
        let mut words = SplitMix(key);
        Permutation {
            n,
            half,
            mask: (1u64 << half) - 1,
            keys: std::array::from_fn(|_| words.next_word()),
        }
    }

    #[inline]
    fn encrypt(&self, x: u64) -> u64 {
        let (mut l, mut r) = (x >> self.half, x & self.mask);
        for k in &self.keys {
            let f = finalize(r ^ k) & self.mask;
            (l, r) = (r, l ^ f);
        }
        (l << self.half) | r
    }

    /// The image of `i` (`i < n`).
    #[inline]
    pub(crate) fn apply(&self, i: u64) -> u64 {
        let mut y = self.encrypt(i);
        while y >= self.n {
            y = self.encrypt(y);
        }
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_is_a_bijection() {
        for n in [1u64, 2, 3, 5, 16, 17, 1000, 4097] {
            let p = Permutation::new(n, n * 31);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let y = p.apply(i);
                assert!(y < n);
                assert!(!seen[y as usize], "n = {n}: {y} twice");
                seen[y as usize] = true;
            }
        }
        let a: Vec<u64> = (0..100)
            .map(|i| Permutation::new(100, 1).apply(i))
            .collect();
        let b: Vec<u64> = (0..100)
            .map(|i| Permutation::new(100, 2).apply(i))
            .collect();
        assert_ne!(a, b);
        assert_ne!(a, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn categorical_follows_weights_and_skips_zeros() {
        let c = Categorical::new(&[3.0, 0.0, 1.0, 0.0]);
        let mut rng = LabRng::seed_from(1, 1);
        let mut counts = [0u32; 4];
        for _ in 0..40_000 {
            counts[c.sample(&mut rng)] += 1;
        }
        assert_eq!(counts[1], 0);
        assert_eq!(counts[3], 0);
        assert!((29_000..31_000).contains(&counts[0]), "{counts:?}");
    }

    #[test]
    fn below_and_unit_stay_in_range() {
        let mut rng = LabRng::seed_from(0, 0);
        for _ in 0..10_000 {
            assert!(below(rng.next_u64(), 7) < 7);
            let u = unit(&mut rng);
            assert!((0.0..1.0).contains(&u));
        }
        assert_eq!(below(u64::MAX, 7), 6);
    }
}
