//! Operator-to-floor ratios printed in the same run as criterion's figures.
//!
//! Criterion reports each function on its own; the point of a floor is the
//! ratio, so each timed routine also records its own wall time here, and
//! after the group the bench prints, per (operator, floor) pair, the rate of
//! each (median and min–max over every timed run, warm-up included) and the
//! operator's share of its floor's rate.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Seconds per run, by function name.
#[derive(Default)]
pub struct Timings(RefCell<BTreeMap<String, Vec<f64>>>);

impl Timings {
    /// Runs `f`, records its wall time under `name`, returns its result.
    pub fn time<R>(&self, name: &str, f: impl FnOnce() -> R) -> R {
        let start = Instant::now();
        let r = f();
        self.record(name, start.elapsed());
        r
    }

    pub fn record(&self, name: &str, d: Duration) {
        self.0
            .borrow_mut()
            .entry(name.to_string())
            .or_default()
            .push(d.as_secs_f64());
    }

    /// Rates in million elements per second: (median, min, max).
    fn rates(&self, name: &str, elements: u64) -> Option<(f64, f64, f64)> {
        let t = self.0.borrow();
        let mut rates: Vec<f64> = t
            .get(name)?
            .iter()
            .map(|s| elements as f64 / s / 1e6)
            .collect();
        if rates.is_empty() {
            return None;
        }
        rates.sort_by(f64::total_cmp);
        Some((rates[rates.len() / 2], rates[0], rates[rates.len() - 1]))
    }

    /// Prints `operator`'s rate, `floor`'s rate (or any baseline's), and
    /// their ratio (of medians).
    pub fn print_ratio(&self, group: &str, operator: &str, floor: &str, elements: u64) {
        let (Some(op), Some(fl)) = (self.rates(operator, elements), self.rates(floor, elements))
        else {
            return;
        };
        eprintln!(
            "{group}: {operator} {:.3} M/s ({:.3}–{:.3}) vs {floor} {:.3} M/s ({:.3}–{:.3}): {:.1}% of {floor}'s rate",
            op.0,
            op.1,
            op.2,
            fl.0,
            fl.1,
            fl.2,
            100.0 * op.0 / fl.0
        );
    }
}
