//! Where an axis gets its tick marks, and their labels.
//!
//! plotters picks ticks on its own; its choices repeat labels once they
//! are shortened (`1M` twice), put ticks at 1.5 on an axis of whole
//! numbers, and label a log axis only at powers of ten (nothing to read
//! below 1 or within a decade). Here a linear axis gets 1-2-5 steps
//! (whole steps for whole-number values), a log axis powers of ten plus
//! 2× and 5× (or every digit) when it spans few decades, and labels get
//! one more significant digit until they all differ.

use crate::numbers::{self, Unit};

/// At most this many labelled ticks on a linear axis.
const MAX_LINEAR: usize = 10;
/// A log axis over more decades than this is labelled at every few.
const MAX_DECADES: i32 = 12;

/// Ticks from `lo` to `hi` in steps of 1, 2 or 5 times a power of ten;
/// with `integer`, the step is whole.
pub fn linear(lo: f64, hi: f64, integer: bool) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return vec![lo];
    }
    // Halves first: hi - lo overflows from -1e308 to 1e308.
    let raw = (hi / 2.0 - lo / 2.0) / (MAX_LINEAR as f64 / 2.0);
    let mag = 10f64.powf(raw.log10().floor());
    if !(mag.is_finite() && mag > 0.0) {
        // A range below the smallest step an f64 can take.
        return vec![lo, hi];
    }
    let mut step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    if integer {
        step = step.max(1.0).round();
    }
    let (first, last) = ((lo / step).ceil(), (hi / step).floor());
    // About MAX_LINEAR steps by construction; never a loop over a number
    // of the data.
    if !(first.is_finite() && last.is_finite()) || last - first > 4.0 * MAX_LINEAR as f64 {
        return vec![lo, hi];
    }
    (first as i64..=last as i64)
        .map(|i| i as f64 * step)
        // -0.0 and 1e-17 are zero.
        .map(|v| if v.abs() < step * 1e-9 { 0.0 } else { v })
        .collect()
}

/// Labelled and unlabelled (light) ticks of a log axis from `lo` to `hi`
/// (both > 0).
pub fn log(lo: f64, hi: f64, integer: bool) -> (Vec<f64>, Vec<f64>) {
    if !(lo > 0.0 && lo.is_finite() && hi.is_finite()) || hi < lo {
        return (vec![lo], Vec::new());
    }
    let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    if last - first > MAX_DECADES {
        // Powers of ten, every few decades: at most about MAX_DECADES.
        let every = ((last - first) as f64 / MAX_DECADES as f64).ceil() as usize;
        let major = (first..=last)
            .step_by(every)
            .map(|e| clean(10f64.powi(e)))
            .filter(|v| *v >= lo && *v <= hi)
            .collect();
        return (major, Vec::new());
    }
    let in_range = |v: &f64| *v >= lo * (1.0 - 1e-9) && *v <= hi * (1.0 + 1e-9);
    let keep = |v: &f64| !integer || v.fract() == 0.0;
    let decades = || {
        let first = lo.log10().floor() as i32;
        let last = hi.log10().ceil() as i32;
        (first..=last).map(|e| 10f64.powi(e))
    };
    let with = |mantissas: &[f64]| -> Vec<f64> {
        decades()
            .flat_map(|d| mantissas.iter().map(move |m| clean(m * d)))
            .filter(in_range)
            .filter(keep)
            .collect()
    };
    let every_digit = with(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
    for mantissas in [&[1.0][..], &[1.0, 2.0, 5.0]] {
        let major = with(mantissas);
        if major.len() >= 3 {
            let minor = every_digit
                .iter()
                .copied()
                .filter(|v| !major.contains(v))
                .collect();
            return (major, minor);
        }
    }
    if every_digit.len() >= 3 {
        return (every_digit, Vec::new());
    }
    // Less than a decade's worth: a linear step within the range.
    (linear(lo, hi, integer), Vec::new())
}

/// `m × 10^e` without the float noise of the product (`0.30000000000000004`).
fn clean(v: f64) -> f64 {
    format!("{v:.12e}").parse().unwrap_or(v)
}

/// The labels of `ticks` in `unit`: three significant digits, more when
/// two labels would otherwise read the same.
pub fn labels(ticks: &[f64], unit: Unit) -> Vec<String> {
    let mut best = Vec::new();
    for digits in 3..=8 {
        best = ticks
            .iter()
            .map(|t| numbers::format_digits(*t, unit, digits))
            .collect();
        let mut sorted = best.clone();
        sorted.sort();
        sorted.dedup();
        if sorted.len() == best.len() {
            break;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_steps() {
        assert_eq!(linear(0.0, 1.0, false).len(), 11);
        assert_eq!(linear(0.4, 1.6, false)[0], 0.4);
        let t = linear(0.5, 4.5, true);
        assert_eq!(t, [1.0, 2.0, 3.0, 4.0]);
        assert!(linear(0.0, 3.0, true).iter().all(|v| v.fract() == 0.0));
    }

    #[test]
    fn log_axes_are_labelled_within_and_below_decades() {
        // Four decades: powers of ten labelled, the digits between light.
        let (major, minor) = log(0.9, 12_000.0, false);
        assert_eq!(major, [1.0, 10.0, 100.0, 1000.0, 10000.0]);
        assert!(minor.contains(&2.0) && minor.contains(&5000.0));
        // Two decades below 1: 1-2-5.
        let (major, _) = log(0.04, 1.2, false);
        assert_eq!(major, [0.05, 0.1, 0.2, 0.5, 1.0]);
        // Within one decade: every digit.
        let (major, _) = log(1.1e6, 9.5e6, false);
        assert_eq!(major, [2e6, 3e6, 4e6, 5e6, 6e6, 7e6, 8e6, 9e6]);
        // A narrow range: linear steps.
        let (major, _) = log(1.01e6, 1.09e6, false);
        assert!(major.len() >= 3, "{major:?}");
    }

    #[test]
    fn ticks_are_few_whatever_the_numbers() {
        for (lo, hi) in [
            (0.0, 5e-324),
            (-1.7e308, 1.7e308),
            (1e300, 1.0000000000001e300),
            (1e15, 1e15 + 64.0),
        ] {
            for integer in [false, true] {
                let t = linear(lo, hi, integer);
                assert!(!t.is_empty() && t.len() <= 41, "{lo} {hi}: {}", t.len());
            }
        }
        for (lo, hi) in [
            (5e-324, 1.7e308),
            (1e-300, 1e300),
            (1.0, f64::INFINITY),
            (0.0, 1.0),
        ] {
            let (major, minor) = log(lo, hi, false);
            assert!(major.len() + minor.len() <= 40, "{lo} {hi}: {major:?}");
        }
        let (major, _) = log(1e-300, 1e300, false);
        assert!(major.len() >= 3 && major.iter().all(|v| v.log10().fract() == 0.0));
    }

    #[test]
    fn labels_differ() {
        let ticks = [1.0e6, 1.02e6, 1.04e6, 1.06e6];
        let l = labels(&ticks, Unit::Count);
        assert_eq!(l, ["1M", "1.02M", "1.04M", "1.06M"]);
        let l = labels(&[1.0e6, 1.0005e6], Unit::Count);
        assert_ne!(l[0], l[1]);
        assert_eq!(
            labels(&[0.05, 0.1, 0.2], Unit::Count),
            ["0.05", "0.1", "0.2"]
        );
    }
}
