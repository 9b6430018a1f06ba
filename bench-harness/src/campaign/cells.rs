//! How a set of runs and a comparison are written in tables (`index.md`,
//! `lab tune`, the campaign's summary): the median with its min–max, a
//! ratio or a change with its 95% interval, the words that say whether it
//! stands out of the noise, and the mark of runs too short to time.

use super::metrics::Metric;
use crate::numbers;
use crate::stats::{Ratio, Spread, Verdict, MIN_TIMED_MS, MIN_WORK_MS};

/// Marks a timing from runs too short to time.
pub const SHORT_MARK: &str = "⚠";

/// What [`SHORT_MARK`] means.
pub fn short_note() -> String {
    format!(
        "{SHORT_MARK} too short to time: a run took under {MIN_TIMED_MS:.0} ms of wall time, or \
         under {MIN_WORK_MS:.0} ms besides\n  waiting for its sources; start-up and scheduling \
         weigh as much as the work: give it more rows"
    )
}

/// `15.3M [14.9M–15.8M]`: the median and the range of the runs; the value
/// alone when every run gave it.
pub fn spread(s: &Spread, m: &Metric) -> String {
    if s.exact() {
        m.format(s.median)
    } else {
        format!(
            "{} [{}–{}]",
            m.format(s.median),
            m.format(s.min),
            m.format(s.max)
        )
    }
}

/// `0.98× [0.95–1.02]`: a ratio with its 95% interval; the ratio alone
/// when the interval is a point (counters that are the same every run).
pub fn ratio(r: &Ratio) -> String {
    if r.low == r.high {
        numbers::ratio(r.estimate)
    } else {
        format!(
            "{} [{:.2}–{:.2}]",
            numbers::ratio(r.estimate),
            r.low,
            r.high
        )
    }
}

/// `change: -12% [-15%, -9%]`, criterion's way of writing a change.
pub fn change(r: &Ratio) -> String {
    let c = |x: f64| numbers::change(x - 1.0);
    if r.low == r.high {
        format!("change: {}", c(r.estimate))
    } else {
        format!("change: {} [{}, {}]", c(r.estimate), c(r.low), c(r.high))
    }
}

/// Whether a ratio of `m` stands out of the noise, in words. A counter
/// that was the same in every run differs exactly, whatever the runs.
pub fn verdict(r: &Ratio, m: &Metric) -> &'static str {
    match exact(r, m).unwrap_or(r.verdict()) {
        Verdict::Higher => "higher, beyond noise",
        Verdict::Lower => "lower, beyond noise",
        Verdict::Same => "no difference beyond noise",
        Verdict::TooFew => "too few runs to tell",
        Verdict::Unknown => "one run: cannot tell from noise",
    }
}

/// Whether a change of `m` against a baseline stands out of the noise,
/// in words.
pub fn change_verdict(r: &Ratio, m: &Metric) -> &'static str {
    match exact(r, m).unwrap_or(r.verdict()) {
        Verdict::Higher => "increased",
        Verdict::Lower => "decreased",
        Verdict::Same => "no change detected",
        Verdict::TooFew => "too few runs to tell",
        Verdict::Unknown => "one run a side: cannot tell from noise",
    }
}

/// The verdict on a counter that was the same in every run on both sides.
fn exact(r: &Ratio, m: &Metric) -> Option<Verdict> {
    if m.timed() || r.low != r.high {
        return None;
    }
    Some(if r.estimate > 1.0 {
        Verdict::Higher
    } else if r.estimate < 1.0 {
        Verdict::Lower
    } else {
        Verdict::Same
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::metrics::metric;

    #[test]
    fn cells() {
        let tp = metric("throughput_rows_per_s").unwrap();
        let s = Spread::of(&[15.3e6, 14.9e6, 15.8e6]).unwrap();
        assert_eq!(spread(&s, tp), "15.3M [14.9M–15.8M]");
        let acc = metric("state_accesses").unwrap();
        assert_eq!(spread(&Spread::of(&[600.0, 600.0]).unwrap(), acc), "600");
        let r = Ratio {
            estimate: 0.88,
            low: 0.85,
            high: 0.91,
            n: 3,
            t_test: true,
        };
        assert_eq!(ratio(&r), "0.88× [0.85–0.91]");
        assert_eq!(change(&r), "change: -12% [-15%, -9%]");
        assert_eq!(change_verdict(&r, tp), "decreased");
        let same = Ratio {
            estimate: 1.01,
            low: 0.97,
            high: 1.04,
            n: 3,
            t_test: false,
        };
        assert!(change_verdict(&same, tp).starts_with("no change detected"));
        let one = Ratio {
            estimate: 0.5,
            low: 0.5,
            high: 0.5,
            n: 1,
            t_test: false,
        };
        assert_eq!(
            change_verdict(&one, tp),
            "one run a side: cannot tell from noise"
        );
        assert_eq!(change_verdict(&one, acc), "decreased");
    }
}
