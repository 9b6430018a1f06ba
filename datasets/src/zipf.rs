//! A seeded Zipf sampler over ranks `1..=n`.
//!
//! Semantics: [`Zipf::sample`] returns rank `k` in `1..=n` with probability
//! `k^-s / H(n, s)`, where `H(n, s) = sum_{i=1..n} i^-s`, for any exponent
//! `s > 0` (below, at or above 1). Rank 1 is the most likely. The output is a
//! pure function of the random generator's state, so a seeded generator
//! (see [`crate::rng::LabRng`]) gives the same ranks on every run.
//!
//! Method: rejection-inversion (Hörmann and Derflinger, 1996) as implemented
//! by `rand_distr::Zipf`: O(1) memory and set-up, a few floating-point
//! operations per sample with a high acceptance rate, so `n` may be anything
//! from 1 to `u64::MAX` (ranks above 2^53 are as exact as `f64` allows).
//! The sampler is exact: the rejection step corrects the continuous envelope
//! to the discrete distribution.

use rand::Rng;
use rand_distr::Distribution;

use crate::error::DatasetError;

/// Zipf distribution over `1..=n` with exponent `s`.
#[derive(Clone, Copy, Debug)]
pub struct Zipf {
    n: u64,
    s: f64,
    inner: rand_distr::Zipf<f64>,
}

impl Zipf {
    /// The distribution over `1..=n`; needs `n >= 1` and a finite `s > 0`.
    pub fn new(n: u64, s: f64) -> Result<Zipf, DatasetError> {
        if n == 0 || s.is_nan() || s <= 0.0 || s.is_infinite() {
            return Err(DatasetError::BadZipf { n, s });
        }
        let inner =
            rand_distr::Zipf::new(n as f64, s).map_err(|_| DatasetError::BadZipf { n, s })?;
        Ok(Zipf { n, s, inner })
    }

    /// The number of ranks.
    pub fn n(&self) -> u64 {
        self.n
    }

    /// The exponent `s`.
    pub fn exponent(&self) -> f64 {
        self.s
    }

    /// One rank in `1..=n`.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        let x: f64 = self.inner.sample(rng);
        // `as` saturates; the clamp guards the float rounding at both ends.
        (x as u64).clamp(1, self.n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::LabRng;

    fn theory(n: u64, s: f64, k: u64) -> f64 {
        let h: f64 = (1..=n).map(|i| (i as f64).powf(-s)).sum();
        (k as f64).powf(-s) / h
    }

    fn frequencies(n: u64, s: f64, samples: usize, seed: u64) -> Vec<f64> {
        let z = Zipf::new(n, s).unwrap();
        let mut rng = LabRng::seed_from(seed, 0);
        let mut counts = vec![0u64; n as usize + 1];
        for _ in 0..samples {
            let k = z.sample(&mut rng);
            assert!((1..=n).contains(&k));
            counts[k as usize] += 1;
        }
        counts.iter().map(|&c| c as f64 / samples as f64).collect()
    }

    #[test]
    fn rank_one_frequency_matches_theory_s_1_2() {
        let (n, s, samples) = (1000, 1.2, 400_000);
        let f = frequencies(n, s, samples, 1);
        for k in [1u64, 2, 10] {
            let p = theory(n, s, k);
            // Five standard deviations of a binomial proportion.
            let tol = 5.0 * (p * (1.0 - p) / samples as f64).sqrt();
            assert!(
                (f[k as usize] - p).abs() < tol,
                "rank {k}: {} vs {p}",
                f[k as usize]
            );
        }
    }

    #[test]
    fn exponents_below_and_at_one() {
        for s in [0.5, 0.8, 1.0] {
            let (n, samples) = (100, 200_000);
            let f = frequencies(n, s, samples, 2);
            let p = theory(n, s, 1);
            let tol = 5.0 * (p * (1.0 - p) / samples as f64).sqrt();
            assert!((f[1] - p).abs() < tol, "s = {s}: {} vs {p}", f[1]);
            assert!(f[1] > f[2] && f[2] > f[50], "s = {s}");
        }
    }

    #[test]
    fn deterministic_for_a_seed() {
        let z = Zipf::new(10_000_000, 0.9).unwrap();
        let draw = |seed| {
            let mut rng = LabRng::seed_from(seed, 5);
            (0..1000).map(|_| z.sample(&mut rng)).collect::<Vec<_>>()
        };
        assert_eq!(draw(3), draw(3));
        assert_ne!(draw(3), draw(4));
    }

    #[test]
    fn extreme_sizes_stay_in_range() {
        let mut rng = LabRng::seed_from(0, 0);
        let one = Zipf::new(1, 2.0).unwrap();
        assert!((0..100).all(|_| one.sample(&mut rng) == 1));
        let huge = Zipf::new(u64::MAX, 1.1).unwrap();
        assert!((0..1000).all(|_| huge.sample(&mut rng) >= 1));
    }

    #[test]
    fn bad_parameters_are_errors() {
        for (n, s) in [
            (0, 1.0),
            (10, 0.0),
            (10, -1.0),
            (10, f64::NAN),
            (10, f64::INFINITY),
        ] {
            let msg = Zipf::new(n, s).unwrap_err().to_string();
            assert!(msg.contains("Zipf distribution needs n >= 1"), "{msg}");
        }
    }
}
