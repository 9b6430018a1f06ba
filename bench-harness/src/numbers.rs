//! The one number formatter of every output of `lab`: the run summary,
//! `lab tune`, `index.md` and chart ticks.
//!
//! - counts and rates: three significant digits with `k`, `M`, `G`, `T`
//!   from a thousand up (`229`, `9.48M`, `15.3M`); whole numbers below a
//!   thousand as they are;
//! - durations: `µs` below a millisecond, `ms` below a second, then `s`;
//! - bytes: `B`, `KB`, `MB`, `GB`, `TB` (powers of 1000, like the counts);
//! - factors with two decimals (`1.00`), ratios `0.98×`, changes `-12%`.
//!
//! Trailing zeros of a fraction are dropped (`1.5M`, not `1.50M`).

/// What a value measures, which decides how it is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Things counted (rows, accesses, entries, records); the unit is
    /// named by the column or axis.
    Count,
    /// A rate (rows/s); named by the column or axis.
    Rate,
    /// Milliseconds; written in µs, ms or s.
    Millis,
    /// Bytes; written in B, KB, MB or GB.
    Bytes,
    /// Kibibytes (what `/proc` reports); written as bytes.
    KiB,
    /// A plain factor (the hotspot factor); two decimals.
    Factor,
}

impl Unit {
    /// Whether written values carry their unit (`12 ms`, `21 MB`); the
    /// others are bare numbers whose unit the heading names.
    pub fn self_describing(self) -> bool {
        matches!(self, Unit::Millis | Unit::Bytes | Unit::KiB)
    }
}

/// `v` in `unit`, at three significant digits.
pub fn format(v: f64, unit: Unit) -> String {
    format_digits(v, unit, 3)
}

/// `v` in `unit` at `digits` significant digits (chart ticks raise it
/// until their labels differ).
pub fn format_digits(v: f64, unit: Unit, digits: usize) -> String {
    match unit {
        Unit::Count | Unit::Rate => si(v, digits),
        Unit::Millis => duration_ms(v, digits),
        Unit::Bytes => bytes(v, digits),
        Unit::KiB => bytes(v * 1024.0, digits),
        Unit::Factor => {
            if v.is_finite() && v.abs() < 1000.0 {
                // Always two decimals (1.00, 1.41): factors are compared.
                format!("{v:.prec$}", prec = digits.saturating_sub(1).max(2))
            } else {
                si(v, digits)
            }
        }
    }
}

/// Three (or `digits`) significant digits with an SI suffix from 1000 up.
pub fn si(v: f64, digits: usize) -> String {
    scaled(
        v,
        digits,
        &[(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")],
        "",
    )
}

fn duration_ms(ms: f64, digits: usize) -> String {
    if !ms.is_finite() {
        return format!("{ms} ms");
    }
    let a = ms.abs();
    if a == 0.0 {
        "0 ms".to_string()
    } else if a < 1.0 {
        format!("{} µs", significant(ms * 1e3, digits))
    } else if round_sig(a, digits) < 1000.0 {
        format!("{} ms", significant(ms, digits))
    } else {
        format!("{} s", significant(ms / 1e3, digits))
    }
}

fn bytes(b: f64, digits: usize) -> String {
    scaled(
        b,
        digits,
        &[(1e12, " TB"), (1e9, " GB"), (1e6, " MB"), (1e3, " KB")],
        " B",
    )
}

/// `v` divided by the largest scale it reaches (after rounding), with
/// that scale's suffix; `plain` below the smallest scale.
fn scaled(v: f64, digits: usize, scales: &[(f64, &str)], plain: &str) -> String {
    if !v.is_finite() {
        return format!("{v}{plain}");
    }
    let a = round_sig(v.abs(), digits);
    for &(scale, suffix) in scales {
        if a >= scale {
            return format!("{}{suffix}", significant(v / scale, digits));
        }
    }
    if v.fract() == 0.0 {
        return format!("{}{plain}", v as i64);
    }
    format!("{}{plain}", significant(v, digits))
}

/// `x` rounded to `digits` significant digits.
fn round_sig(x: f64, digits: usize) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let mag = x.abs().log10().floor() as i32;
    let factor = 10f64.powi(digits as i32 - 1 - mag);
    (x * factor).round() / factor
}

/// `x` at `digits` significant digits, trailing zeros dropped.
fn significant(x: f64, digits: usize) -> String {
    if x == 0.0 {
        return "0".to_string();
    }
    let r = round_sig(x, digits);
    let mag = r.abs().log10().floor() as i32;
    let decimals = (digits as i32 - 1 - mag).max(0) as usize;
    trim(format!("{r:.decimals$}"))
}

fn trim(mut s: String) -> String {
    if s.contains('.') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
    if s == "-0" {
        s = "0".to_string();
    }
    s
}

/// A ratio: `0.98×`.
pub fn ratio(r: f64) -> String {
    if !r.is_finite() {
        return "n/a".to_string();
    }
    format!("{r:.2}×")
}

/// A relative change (`-0.12` is `-12%`), with a sign, two significant
/// digits below 10%.
pub fn change(c: f64) -> String {
    if !c.is_finite() {
        return "n/a".to_string();
    }
    let p = c * 100.0;
    let body = if p.abs() >= 10.0 {
        format!("{:.0}", p.abs())
    } else {
        trim(format!("{:.1}", p.abs()))
    };
    if body == "0" {
        "0%".to_string()
    } else if p < 0.0 {
        format!("-{body}%")
    } else {
        format!("+{body}%")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_rates() {
        assert_eq!(format(229.0, Unit::Count), "229");
        assert_eq!(format(0.0, Unit::Count), "0");
        assert_eq!(format(9_477_029.0, Unit::Count), "9.48M");
        assert_eq!(format(15_300_000.0, Unit::Rate), "15.3M");
        assert_eq!(format(1_000_000.0, Unit::Count), "1M");
        assert_eq!(format(999_999.0, Unit::Count), "1M");
        assert_eq!(format(444_314.0, Unit::Count), "444k");
        assert_eq!(format(1500.0, Unit::Count), "1.5k");
        assert_eq!(format(0.25, Unit::Count), "0.25");
        assert_eq!(format(12.345, Unit::Rate), "12.3");
        assert_eq!(format(2.5e9, Unit::Count), "2.5G");
        assert_eq!(format_digits(1_250_000.0, Unit::Count, 2), "1.3M");
        assert_eq!(format_digits(1_250_000.0, Unit::Count, 3), "1.25M");
    }

    #[test]
    fn durations() {
        assert_eq!(format(1297.381, Unit::Millis), "1.3 s");
        assert_eq!(format(12.34, Unit::Millis), "12.3 ms");
        assert_eq!(format(999.9, Unit::Millis), "1 s");
        assert_eq!(format(0.042, Unit::Millis), "42 µs");
        assert_eq!(format(0.0, Unit::Millis), "0 ms");
    }

    #[test]
    fn sizes() {
        assert_eq!(format(21_013_318.0, Unit::Bytes), "21 MB");
        assert_eq!(format(1_050_624.0, Unit::Bytes), "1.05 MB");
        assert_eq!(format(512.0, Unit::Bytes), "512 B");
        assert_eq!(format(2048.0, Unit::KiB), "2.1 MB");
    }

    #[test]
    fn ratios_and_changes() {
        assert_eq!(ratio(0.98), "0.98×");
        assert_eq!(change(-0.12), "-12%");
        assert_eq!(change(0.003), "+0.3%");
        assert_eq!(change(0.0), "0%");
        assert_eq!(change(-0.0004), "0%");
        assert_eq!(format(1.234, Unit::Factor), "1.23");
        assert_eq!(format(1.0, Unit::Factor), "1.00");
    }
}
