//! The spread of repeated runs and whether two sets of runs differ.
//!
//! A set of runs is summarised by its median and its min–max. A
//! comparison (a ratio of medians, or a change against a baseline) gets a
//! 95% bootstrap interval: resample each set with replacement, take the
//! ratio of the resampled medians, 2000 times, and keep the 2.5th and
//! 97.5th percentiles. Runs that were interleaved (the variants of one
//! repeat ran one after the other) are resampled in pairs, so a moment
//! when the machine was slow weighs on both sides. The generator is
//! seeded: the same runs give the same interval.
//!
//! A difference is distinguishable from noise when its interval leaves
//! out "no change" (ratio 1). With one run on a side there is no spread to
//! judge by, and nothing is claimed.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Runs with less wall time than this are too short to time: start-up,
/// the first touches of memory and the scheduler weigh as much as the work.
pub const MIN_TIMED_MS: f64 = 50.0;

const RESAMPLES: usize = 2000;
const SEED: u64 = 0x006a_6f69_6e6c_6162;

/// Median and range of a set of runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub n: usize,
}

impl Spread {
    pub fn of(values: &[f64]) -> Option<Spread> {
        let median = median(values)?;
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Some(Spread {
            median,
            min,
            max,
            n: values.len(),
        })
    }

    /// Every run gave the same value.
    pub fn exact(&self) -> bool {
        self.min == self.max
    }
}

/// The median of `values` (mean of the two middle values for an even count).
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    Some(sorted_median(&v))
}

fn sorted_median(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// A ratio `median(b) / median(a)` and its 95% interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ratio {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    /// Runs on the smaller side.
    pub n: usize,
}

/// What a [`Ratio`] says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The interval lies above 1.
    Higher,
    /// The interval lies below 1.
    Lower,
    /// The interval holds 1: no difference distinguishable from noise.
    Same,
    /// One run on a side: no spread to judge by.
    Unknown,
}

impl Ratio {
    pub fn verdict(&self) -> Verdict {
        if self.n < 2 {
            Verdict::Unknown
        } else if self.low > 1.0 {
            Verdict::Higher
        } else if self.high < 1.0 {
            Verdict::Lower
        } else {
            Verdict::Same
        }
    }
}

/// The ratio of `b` to `a` for runs interleaved with each other: the
/// `i`-th runs of both sides ran together and are resampled as a pair.
/// Sides of different lengths are resampled independently.
pub fn ratio_paired(a: &[f64], b: &[f64]) -> Option<Ratio> {
    if a.len() != b.len() {
        return ratio_independent(a, b);
    }
    let n = a.len();
    bootstrap(a, b, |rng, ra, rb| {
        for _ in 0..n {
            let i = rng.random_range(0..n);
            ra.push(a[i]);
            rb.push(b[i]);
        }
    })
}

/// The ratio of `b` to `a` for runs of separate sessions (a baseline and
/// a new run): each side resampled on its own.
pub fn ratio_independent(a: &[f64], b: &[f64]) -> Option<Ratio> {
    bootstrap(a, b, |rng, ra, rb| {
        for _ in 0..a.len() {
            ra.push(a[rng.random_range(0..a.len())]);
        }
        for _ in 0..b.len() {
            rb.push(b[rng.random_range(0..b.len())]);
        }
    })
}

fn bootstrap(
    a: &[f64],
    b: &[f64],
    mut resample: impl FnMut(&mut StdRng, &mut Vec<f64>, &mut Vec<f64>),
) -> Option<Ratio> {
    let (ma, mb) = (median(a)?, median(b)?);
    let n = a.len().min(b.len());
    let estimate = ratio_of(ma, mb)?;
    let exact = |v: &[f64]| v.iter().all(|x| *x == v[0]);
    if exact(a) && exact(b) {
        return Some(Ratio {
            estimate,
            low: estimate,
            high: estimate,
            n,
        });
    }
    let mut rng = StdRng::seed_from_u64(SEED);
    let mut ratios = Vec::with_capacity(RESAMPLES);
    let (mut ra, mut rb) = (Vec::new(), Vec::new());
    for _ in 0..RESAMPLES {
        ra.clear();
        rb.clear();
        resample(&mut rng, &mut ra, &mut rb);
        ra.sort_by(|x, y| x.total_cmp(y));
        rb.sort_by(|x, y| x.total_cmp(y));
        if let Some(r) = ratio_of(sorted_median(&ra), sorted_median(&rb)) {
            ratios.push(r);
        }
    }
    // A base whose resampled median is zero has no ratio; with most
    // resamples like that, the interval means nothing.
    if ratios.len() < RESAMPLES / 2 {
        return None;
    }
    ratios.sort_by(|x, y| x.total_cmp(y));
    let at = |q: f64| ratios[((ratios.len() - 1) as f64 * q).round() as usize];
    Some(Ratio {
        estimate,
        low: at(0.025).min(estimate),
        high: at(0.975).max(estimate),
        n,
    })
}

/// `b / a`; 1 when both are zero, none when only `a` is.
fn ratio_of(a: f64, b: f64) -> Option<f64> {
    if a == 0.0 {
        return (b == 0.0).then_some(1.0);
    }
    let r = b / a;
    r.is_finite().then_some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_spread() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        let s = Spread::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.n), (2.0, 1.0, 3.0, 3));
        assert!(!s.exact());
    }

    #[test]
    fn exact_counters_give_a_point_interval() {
        let r = ratio_paired(&[600.0; 3], &[300.0; 3]).unwrap();
        assert_eq!((r.estimate, r.low, r.high), (0.5, 0.5, 0.5));
        assert_eq!(r.verdict(), Verdict::Lower);
        let r = ratio_paired(&[0.0; 3], &[0.0; 3]).unwrap();
        assert_eq!(r.estimate, 1.0);
        assert!(ratio_paired(&[0.0; 3], &[1.0; 3]).is_none());
    }

    #[test]
    fn overlapping_noise_is_not_a_difference() {
        let a = [100.0, 104.0, 97.0, 101.0, 99.0];
        let b = [98.0, 103.0, 100.0, 96.0, 102.0];
        let r = ratio_paired(&a, &b).unwrap();
        assert!(r.low < 1.0 && r.high > 1.0, "{r:?}");
        assert_eq!(r.verdict(), Verdict::Same);
        // The same runs give the same interval.
        assert_eq!(ratio_paired(&a, &b), Some(r));
    }

    #[test]
    fn a_clear_difference_is_one() {
        let a = [100.0, 104.0, 97.0, 101.0, 99.0];
        let b = [80.0, 84.0, 78.0, 81.0, 79.0];
        let r = ratio_independent(&a, &b).unwrap();
        assert!(r.high < 1.0 && r.low > 0.7, "{r:?}");
        assert_eq!(r.verdict(), Verdict::Lower);
    }

    #[test]
    fn one_run_claims_nothing() {
        let r = ratio_paired(&[100.0], &[50.0]).unwrap();
        assert_eq!(r.verdict(), Verdict::Unknown);
    }
}
