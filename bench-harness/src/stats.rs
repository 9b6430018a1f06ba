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
/// Runs whose job thread worked (was not waiting for its sources) less
/// than this are too short to time too, however long they waited: on a
/// busy machine a run of a hundred rows can wait 100 ms for its source
/// thread to be scheduled.
pub const MIN_WORK_MS: f64 = 5.0;

/// Whether a run of `wall_ms`, of which `source_wait_ms` waiting for its
/// sources, is too short to time.
pub fn too_short(wall_ms: f64, source_wait_ms: f64) -> bool {
    wall_ms < MIN_TIMED_MS || wall_ms - source_wait_ms < MIN_WORK_MS
}

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
    /// A t-test on the logarithms finds a difference at the 5% level.
    pub t_test: bool,
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
    /// The interval leaves out 1 but the t-test does not agree: too few
    /// runs (or too noisy) to tell.
    TooFew,
    /// One run on a side: no spread to judge by.
    Unknown,
}

impl Ratio {
    pub fn verdict(&self) -> Verdict {
        if self.n < 2 {
            Verdict::Unknown
        } else if self.low <= 1.0 && self.high >= 1.0 {
            Verdict::Same
        } else if !self.t_test {
            Verdict::TooFew
        } else if self.low > 1.0 {
            Verdict::Higher
        } else {
            Verdict::Lower
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
    let t = paired_t(a, b);
    bootstrap(a, b, t, |rng, ra, rb| {
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
    let t = welch_t(a, b);
    bootstrap(a, b, t, |rng, ra, rb| {
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
    t_test: bool,
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
            t_test,
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
        t_test,
    })
}

/// The logarithms of `v`, or `v` itself when a value is not above 0.
fn logs(v: &[f64]) -> Vec<f64> {
    if v.iter().all(|x| *x > 0.0) {
        v.iter().map(|x| x.ln()).collect()
    } else {
        v.to_vec()
    }
}

fn mean_var(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (mean, var)
}

/// Whether a paired t-test on the log ratios of the `i`-th runs finds a
/// difference at the 5% level (two-sided).
fn paired_t(a: &[f64], b: &[f64]) -> bool {
    if a.len() < 2 || a.len() != b.len() {
        return false;
    }
    let (la, lb) = if a.iter().chain(b).all(|x| *x > 0.0) {
        (logs(a), logs(b))
    } else {
        (a.to_vec(), b.to_vec())
    };
    let d: Vec<f64> = la.iter().zip(&lb).map(|(x, y)| y - x).collect();
    let (mean, var) = mean_var(&d);
    let se = (var / d.len() as f64).sqrt();
    significant(mean, se, (d.len() - 1) as f64)
}

/// Whether Welch's t-test on the logarithms finds a difference at the 5%
/// level (two-sided).
fn welch_t(a: &[f64], b: &[f64]) -> bool {
    if a.len() < 2 || b.len() < 2 {
        return false;
    }
    let (la, lb) = if a.iter().chain(b).all(|x| *x > 0.0) {
        (logs(a), logs(b))
    } else {
        (a.to_vec(), b.to_vec())
    };
    let ((ma, va), (mb, vb)) = (mean_var(&la), mean_var(&lb));
    let (qa, qb) = (va / la.len() as f64, vb / lb.len() as f64);
    let se = (qa + qb).sqrt();
    let df = if se > 0.0 {
        (qa + qb).powi(2) / (qa * qa / (la.len() - 1) as f64 + qb * qb / (lb.len() - 1) as f64)
    } else {
        f64::INFINITY
    };
    significant(mb - ma, se, df)
}

/// `|diff / se|` beyond Student's t at 97.5% with `df` degrees of freedom.
fn significant(diff: f64, se: f64, df: f64) -> bool {
    if se == 0.0 || !se.is_finite() {
        return diff != 0.0;
    }
    (diff / se).abs() > t_975(df)
}

/// Student's t quantile at 0.975: tabulated for 1 to 30 degrees of freedom
/// (linear between them), then 40, 60, 120 and the normal's 1.96.
fn t_975(df: f64) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    const TAIL: [(f64, f64); 4] = [(30.0, 2.042), (40.0, 2.021), (60.0, 2.000), (120.0, 1.980)];
    if df.is_nan() || df < 1.0 {
        return TABLE[0];
    }
    if df <= 30.0 {
        let lo = df.floor() as usize;
        let frac = df - lo as f64;
        let a = TABLE[lo - 1];
        let b = TABLE[lo.min(29)];
        return a + (b - a) * frac;
    }
    for w in TAIL.windows(2) {
        let ((d0, t0), (d1, t1)) = (w[0], w[1]);
        if df <= d1 {
            return t0 + (t1 - t0) * (df - d0) / (d1 - d0);
        }
    }
    1.96
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
    fn three_noisy_runs_a_side_are_too_few() {
        // Every resample of these falls below 1, but the runs overlap in
        // spirit: a t-test on the logs does not find a difference.
        let a = [11.6, 11.7, 13.6];
        let b = [9.14, 11.2, 11.2];
        let r = ratio_independent(&a, &b).unwrap();
        assert!(r.high < 1.0, "{r:?}");
        assert_eq!(r.verdict(), Verdict::TooFew);
        // A 60-fold difference is clear from three runs.
        let r = ratio_independent(&[5.6e6, 5.2e6, 5.9e6], &[94e3, 91e3, 131e3]).unwrap();
        assert_eq!(r.verdict(), Verdict::Lower);
    }

    #[test]
    fn t_quantiles() {
        assert_eq!(t_975(1.0), 12.706);
        assert!((t_975(2.5) - 3.7425).abs() < 1e-9);
        assert_eq!(t_975(30.0), 2.042);
        assert!((t_975(50.0) - 2.0105).abs() < 1e-9);
        assert_eq!(t_975(1e6), 1.96);
    }

    #[test]
    fn short_runs() {
        assert!(too_short(6.0, 0.0));
        assert!(too_short(107.0, 106.9), "all waiting");
        assert!(!too_short(130.0, 80.0));
    }

    #[test]
    fn one_run_claims_nothing() {
        let r = ratio_paired(&[100.0], &[50.0]).unwrap();
        assert_eq!(r.verdict(), Verdict::Unknown);
    }
}
