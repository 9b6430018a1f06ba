//! Windows and slices of the window table-valued functions, as Flink's
//! `SliceAssigners` cut them.
//!
//! Time is cut into *slices* of one size: for `TUMBLE(size)` a slice is a
//! window; for `HOP(size, slide)` it is `gcd(size, slide)` long and each
//! window is `size / gcd` consecutive slices; for `CUMULATE(step,
//! max_size)` it is a step, and the windows of one `max_size` period all
//! start at the period's start and end at each step. A record falls in one
//! slice (the one holding its time), so state is kept per slice and a
//! window's result merges its slices when it fires. Windows are aligned to
//! the epoch (offset 0). Times are milliseconds; a window `[start, end)`
//! holds times `start <= t < end`.
//!
//! `SESSION(gap)` is not aligned and is not sliced: its windows grow and
//! merge with the data (`super::session_agg`); the slice methods here treat
//! it as a tumble of the gap, and no slicing operator is built for it.

use serde::{Deserialize, Serialize};

/// A window TVF with its sizes, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum WindowSpec {
    Tumble {
        size: i64,
    },
    Hop {
        size: i64,
        slide: i64,
    },
    Cumulate {
        max_size: i64,
        step: i64,
    },
    /// Flink's `SessionWindowSpec`: a record at `t` opens `[t, t + gap)`,
    /// merged with every window of its key it touches.
    Session {
        gap: i64,
    },
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// `n` rounded down to a multiple of `m` (toward negative infinity).
fn floor_to(n: i64, m: i64) -> i64 {
    n.div_euclid(m) * m
}

impl WindowSpec {
    /// The length of one slice.
    pub fn slice_size(&self) -> i64 {
        match *self {
            WindowSpec::Tumble { size } | WindowSpec::Session { gap: size } => size,
            WindowSpec::Hop { size, slide } => gcd(size, slide),
            WindowSpec::Cumulate { step, .. } => step,
        }
    }

    /// Whether the windows are aligned to the epoch and sliced (all but
    /// SESSION, as Flink's `isAlignedWindow`).
    pub fn is_aligned(&self) -> bool {
        !matches!(self, WindowSpec::Session { .. })
    }

    /// How far apart consecutive windows end.
    fn window_step(&self) -> i64 {
        match *self {
            WindowSpec::Tumble { size } | WindowSpec::Session { gap: size } => size,
            WindowSpec::Hop { slide, .. } => slide,
            WindowSpec::Cumulate { step, .. } => step,
        }
    }

    /// The end of the slice that holds time `t`.
    pub fn slice_end(&self, t: i64) -> i64 {
        let s = self.slice_size();
        floor_to(t, s).saturating_add(s)
    }

    /// The start of the window that ends at `end`.
    pub fn window_start(&self, end: i64) -> i64 {
        match *self {
            WindowSpec::Tumble { size } | WindowSpec::Session { gap: size } => end - size,
            WindowSpec::Hop { size, .. } => end - size,
            WindowSpec::Cumulate { max_size, .. } => floor_to(end - 1, max_size),
        }
    }

    /// The first window (by end) that holds the slice ending at `slice_end`.
    pub fn first_window_end(&self, slice_end: i64) -> i64 {
        let step = self.window_step();
        // The smallest multiple of the step at or after the slice end.
        floor_to(slice_end - 1, step) + step
    }

    /// The last window (by end) that holds the slice ending at `slice_end`:
    /// when it fires, the slice is no longer needed.
    pub fn last_window_end(&self, slice_end: i64) -> i64 {
        match *self {
            WindowSpec::Tumble { .. } | WindowSpec::Session { .. } => slice_end,
            WindowSpec::Hop { size, slide } => {
                let start = slice_end - self.slice_size();
                floor_to(start + size, slide)
            }
            WindowSpec::Cumulate { max_size, .. } => floor_to(slice_end - 1, max_size) + max_size,
        }
    }

    /// The next window after the one ending at `end` that may hold a slice
    /// of it, if any.
    pub fn next_window_end(&self, end: i64) -> Option<i64> {
        match *self {
            WindowSpec::Tumble { .. } | WindowSpec::Session { .. } => None,
            WindowSpec::Hop { slide, .. } => Some(end + slide),
            WindowSpec::Cumulate { max_size, step } => {
                (end.rem_euclid(max_size) != 0).then_some(end + step)
            }
        }
    }

    /// The ends of the slices that make up the window ending at `end`.
    pub fn slices_of_window(&self, end: i64) -> impl Iterator<Item = i64> {
        let s = self.slice_size();
        let start = self.window_start(end);
        (1..=((end - start) / s)).map(move |i| start + i * s)
    }

    /// The windows (start, end) holding time `t`, in order of their end:
    /// what the TVF assigns a row to. None for SESSION, whose windows
    /// depend on the other rows.
    pub fn windows_of(&self, t: i64) -> Vec<(i64, i64)> {
        if !self.is_aligned() {
            return Vec::new();
        }
        let se = self.slice_end(t);
        let mut out = Vec::new();
        let mut end = self.first_window_end(se);
        let last = self.last_window_end(se);
        while end <= last {
            out.push((self.window_start(end), end));
            end += self.window_step();
        }
        out
    }

    /// Flink's EXPLAIN form of a duration: in the largest unit that
    /// divides it (`10 min`, `5 s`, `1500 ms`).
    pub fn format_duration(ms: i64) -> String {
        for (unit, name) in [
            (86_400_000, "d"),
            (3_600_000, "h"),
            (60_000, "min"),
            (1000, "s"),
        ] {
            if ms != 0 && ms % unit == 0 {
                return format!("{} {name}", ms / unit);
            }
        }
        format!("{ms} ms")
    }

    /// `TUMBLE(time_col=[ts], size=[10 min])` with the given first field.
    pub fn explain(&self, first: &str) -> String {
        let d = WindowSpec::format_duration;
        match *self {
            WindowSpec::Tumble { size } => format!("TUMBLE({first}, size=[{}])", d(size)),
            WindowSpec::Hop { size, slide } => {
                format!("HOP({first}, size=[{}], slide=[{}])", d(size), d(slide))
            }
            WindowSpec::Cumulate { max_size, step } => {
                format!(
                    "CUMULATE({first}, max_size=[{}], step=[{}])",
                    d(max_size),
                    d(step)
                )
            }
            WindowSpec::Session { gap } => format!("SESSION({first}, gap=[{}])", d(gap)),
        }
    }

    /// Flink's `SessionWindowSpec` summary with its partition keys:
    /// `SESSION(time_col=[ts], gap=[5 min], partition keys=[item])`.
    pub fn explain_partitioned(&self, first: &str, partition_keys: &[String]) -> String {
        match *self {
            WindowSpec::Session { gap } if !partition_keys.is_empty() => format!(
                "SESSION({first}, gap=[{}], partition keys=[{}])",
                WindowSpec::format_duration(gap),
                partition_keys.join(", ")
            ),
            _ => self.explain(first),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_lands_in_every_hop_window_that_holds_it() {
        let hop = WindowSpec::Hop { size: 10, slide: 5 };
        assert_eq!(hop.windows_of(7), vec![(0, 10), (5, 15)]);
        assert_eq!(hop.windows_of(-1), vec![(-10, 0), (-5, 5)]);
        let tumble = WindowSpec::Tumble { size: 10 };
        assert_eq!(tumble.windows_of(10), vec![(10, 20)]);
        let cumulate = WindowSpec::Cumulate {
            max_size: 10,
            step: 5,
        };
        assert_eq!(cumulate.windows_of(3), vec![(0, 5), (0, 10)]);
        assert_eq!(cumulate.windows_of(7), vec![(0, 10)]);
        assert_eq!(hop.slices_of_window(15).collect::<Vec<_>>(), vec![10, 15]);
        assert_eq!(
            cumulate.slices_of_window(10).collect::<Vec<_>>(),
            vec![5, 10]
        );
        let uneven = WindowSpec::Hop { size: 10, slide: 4 };
        assert_eq!(uneven.slice_size(), 2);
        assert_eq!(uneven.windows_of(9), vec![(2, 12), (6, 16)]);
    }

    #[test]
    fn durations_print_as_flink_does() {
        assert_eq!(WindowSpec::format_duration(600_000), "10 min");
        assert_eq!(WindowSpec::format_duration(5000), "5 s");
        assert_eq!(WindowSpec::format_duration(1500), "1500 ms");
        assert_eq!(WindowSpec::format_duration(3_600_000), "1 h");
    }
}
