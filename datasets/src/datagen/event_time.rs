//! `kind = 'event-time'`: a BIGINT column of epoch milliseconds that rise
//! with the row number, some rows moved back (out of order) and, for
//! sessions, a pause in activity every so many rows.
//!
//! | option | meaning |
//! |---|---|
//! | `fields.<f>.start` | the time of the first row (default `0`) |
//! | `fields.<f>.step` | milliseconds from one row to the next (default `1`, at least `0`) |
//! | `fields.<f>.out-of-order-rate` | probability in `[0, 1]` that a row is moved back (default `0`) |
//! | `fields.<f>.max-out-of-orderness` | how far back at most, in ms: a moved row is `d` ms before its place, `d` uniform in `1..=max` (required, at least 1, with a rate above 0) |
//! | `fields.<f>.gap-every` | with `gap`: after every this many rows (at least 1) ... |
//! | `fields.<f>.gap` | ... the time jumps forward this many ms (at least 0): a pause between sessions |
//!
//! Row `i` (from 0) is in place at `start + i * step + (i / gap-every) *
//! gap`; these never decrease, so a row moved back by `d` is at most `d`
//! behind every row before it (the greatest time so far is at most its
//! place): with a watermark `max-out-of-orderness` behind the time (Flink's
//! bounded out-of-orderness), no row is behind the watermark of the rows
//! read before it. Values saturate at the BIGINT range. A NULL
//! (`null-rate`) takes the row's time all the same. Draws come from the
//! column's own stream, so the column is the same for a seed.

use rand::distr::Uniform;
use rand::Rng;

use super::FieldSpec;
use crate::error::DatasetError;
use crate::rng::LabRng;

#[derive(Debug)]
pub(super) struct EventTimeGen {
    /// The in-place time of the next row.
    next: i64,
    step: i64,
    /// Rows generated so far.
    row: u64,
    /// `(every, gap)`: after every `every` rows, `gap` ms more.
    gap: Option<(u64, i64)>,
    out_of_order_rate: f64,
    /// How far back a moved row goes, in ms.
    delay: Option<Uniform<i64>>,
}

/// An integer option of at least `min`, or `default` when unset.
fn int(spec: &FieldSpec, property: &str, min: i64, default: i64) -> Result<i64, DatasetError> {
    let Some(value) = spec.get(property) else {
        return Ok(default);
    };
    match value.trim().parse::<i64>() {
        Ok(v) if v >= min => Ok(v),
        _ if min == i64::MIN => Err(DatasetError::bad_option(
            &spec.key(property),
            value,
            "an integer",
        )),
        _ => Err(DatasetError::bad_option(
            &spec.key(property),
            value,
            format!("an integer >= {min}"),
        )),
    }
}

impl EventTimeGen {
    /// The generator a column's options ask for.
    pub(super) fn new(spec: &FieldSpec) -> Result<EventTimeGen, DatasetError> {
        let start = int(spec, "start", i64::MIN, 0)?;
        let step = int(spec, "step", 0, 1)?;
        let rate = match spec.get("out-of-order-rate") {
            None => 0.0,
            Some(v) => match v.trim().parse::<f64>() {
                Ok(r) if (0.0..=1.0).contains(&r) => r,
                _ => {
                    return Err(DatasetError::bad_option(
                        &spec.key("out-of-order-rate"),
                        v,
                        "a probability between 0.0 and 1.0",
                    ))
                }
            },
        };
        let max_delay = match spec.get("max-out-of-orderness") {
            None => None,
            Some(_) => Some(int(spec, "max-out-of-orderness", 1, 1)?),
        };
        let delay = match max_delay {
            Some(max) => Some(Uniform::new_inclusive(1, max).map_err(|e| {
                DatasetError::conflict(&spec.key("max-out-of-orderness"), e.to_string())
            })?),
            None if rate > 0.0 => {
                return Err(DatasetError::missing(
                    &spec.key("max-out-of-orderness"),
                    "an integer >= 1: how far back, in ms, a row out of order goes",
                ))
            }
            None => None,
        };
        let gap = match (spec.get("gap-every"), spec.get("gap")) {
            (None, None) => None,
            (Some(_), Some(_)) => Some((
                int(spec, "gap-every", 1, 1)? as u64,
                int(spec, "gap", 0, 0)?,
            )),
            (Some(_), None) => {
                return Err(DatasetError::missing(
                    &spec.key("gap"),
                    "an integer >= 0: the ms the time jumps after every 'gap-every' rows",
                ))
            }
            (None, Some(_)) => {
                return Err(DatasetError::missing(
                    &spec.key("gap-every"),
                    "an integer >= 1: after how many rows the time jumps by 'gap'",
                ))
            }
        };
        Ok(EventTimeGen {
            next: start,
            step,
            row: 0,
            gap,
            out_of_order_rate: rate,
            delay,
        })
    }

    /// The next row's time.
    #[inline]
    pub(super) fn next(&mut self, rng: &mut LabRng) -> i64 {
        let in_place = self.next;
        self.row += 1;
        self.next = self.next.saturating_add(self.step);
        if let Some((every, gap)) = self.gap {
            if self.row.is_multiple_of(every) {
                self.next = self.next.saturating_add(gap);
            }
        }
        match &self.delay {
            Some(delay)
                if self.out_of_order_rate > 0.0 && rng.random::<f64>() < self.out_of_order_rate =>
            {
                in_place.saturating_sub(rng.sample(delay))
            }
            _ => in_place,
        }
    }
}
