//! Durations as people type them (`500ms`, `3s`, `1m`, `1.5s`) and as results
//! store them (seconds as `f64`, so JSON stays readable); rates as people
//! type them (`50`, `50/s`, `3000/1m`, vegeta's way); byte sizes as an
//! error naming a cap shows them (`16 MiB`).

use std::time::Duration;

/// A duration string that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad duration '{input}': {reason} (use e.g. 500ms, 3s, 1m)")]
pub struct DurationError {
    /// What was given.
    pub input: String,
    /// Why it was refused.
    pub reason: &'static str,
}

/// Parse `N[.N](us|ms|s|m|h)`, or several such parts summed (`1m30s`, as
/// [`format_duration`] prints a minute and more: what iolab prints it reads
/// back). A bare number is refused: the unit is never guessed.
pub fn parse_duration(input: &str) -> Result<Duration, DurationError> {
    let err = |reason| DurationError {
        input: input.to_string(),
        reason,
    };
    let mut rest = input.trim();
    let mut secs = 0.0;
    loop {
        let split = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| err("missing unit"))?;
        let (num, tail) = rest.split_at(split);
        if num.is_empty() {
            return Err(err("missing number"));
        }
        let n: f64 = num.parse().map_err(|_| err("not a number"))?;
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, next) = tail.split_at(unit_len);
        secs += match unit {
            "us" | "µs" => n / 1e6,
            "ms" => n / 1e3,
            "s" => n,
            "m" | "min" => n * 60.0,
            "h" => n * 3600.0,
            _ => return Err(err("unknown unit")),
        };
        if next.is_empty() {
            break;
        }
        rest = next;
    }
    if !secs.is_finite() || secs > 86_400.0 * 7.0 {
        return Err(err("longer than a week"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// A rate that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad rate '{input}': {reason} (use requests per second, e.g. 50, or per a time, e.g. 50/s, 3000/1m, 5/100ms)")]
pub struct RateError {
    /// What was given.
    pub input: String,
    /// Why it was refused.
    pub reason: String,
}

/// Requests per second from `N` or `N/TIME`, as vegeta writes a rate:
/// `50`, `50/s`, `50/1s`, `3000/m`, `5/100ms` (a time without a number is
/// one of its unit). Above zero and finite: a rate of nothing sends nothing.
pub fn parse_rate(input: &str) -> Result<f64, RateError> {
    let err = |reason: String| RateError {
        input: input.to_string(),
        reason,
    };
    let (n, per) = match input.trim().split_once('/') {
        Some((n, per)) => (n, Some(per.trim())),
        None => (input.trim(), None),
    };
    let n: f64 = n
        .trim()
        .parse()
        .map_err(|_| err(format!("'{}' is not a number", n.trim())))?;
    let secs = match per {
        None => 1.0,
        Some(per) => {
            let per = if per.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
                per.to_string()
            } else {
                format!("1{per}")
            };
            parse_duration(&per)
                .map_err(|e| err(format!("the time after '/': {}", e.reason)))?
                .as_secs_f64()
        }
    };
    if secs <= 0.0 {
        return Err(err("the time after '/' is zero".into()));
    }
    let rate = n / secs;
    if !(rate.is_finite() && rate > 0.0) {
        return Err(err("must be above 0".into()));
    }
    Ok(rate)
}

/// A short human form: `850us`, `12.5ms`, `3s`, `1m30s`.
pub fn format_duration(d: Duration) -> String {
    let us = d.as_micros();
    if us < 1_000 {
        format!("{us}us")
    } else if us < 1_000_000 {
        trim(format!("{:.3}", us as f64 / 1e3)) + "ms"
    } else if us < 60_000_000 {
        trim(format!("{:.3}", us as f64 / 1e6)) + "s"
    } else {
        let rest_us = us % 60_000_000;
        let minutes = format!("{}m", us / 60_000_000);
        if rest_us == 0 {
            minutes
        } else {
            minutes + &trim(format!("{:.3}", rest_us as f64 / 1e6)) + "s"
        }
    }
}

/// `1,234,567`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A size as a cap is named: `16 MiB`, `64 KiB`, `1.5 GiB`, `100 bytes`; one
/// spelling for the caps of files and of limits.
pub use iolab_files::format_bytes;

fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// serde helpers: a `Duration` as a number of seconds.
pub mod secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    /// Serialize as `f64` seconds.
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    /// Deserialize from non-negative `f64` seconds.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let v = f64::deserialize(d)?;
        Duration::try_from_secs_f64(v).map_err(serde::de::Error::custom)
    }

    /// The same for `Option<Duration>`.
    pub mod option {
        use serde::{Deserialize, Deserializer, Serializer};
        use std::time::Duration;

        /// Serialize as `f64` seconds or null.
        pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
            match d {
                Some(d) => s.serialize_some(&d.as_secs_f64()),
                None => s.serialize_none(),
            }
        }

        /// Deserialize from `f64` seconds or null.
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
            Option::<f64>::deserialize(d)?
                .map(|v| Duration::try_from_secs_f64(v).map_err(serde::de::Error::custom))
                .transpose()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_50_per_s_reads_like_vegeta() {
        assert_eq!(parse_rate("50").unwrap(), 50.0);
        assert_eq!(parse_rate("50/s").unwrap(), 50.0);
        assert_eq!(parse_rate("50/1s").unwrap(), 50.0);
        assert_eq!(parse_rate("3000/m").unwrap(), 50.0);
        assert_eq!(parse_rate("3000/1m").unwrap(), 50.0);
        assert_eq!(parse_rate("5/100ms").unwrap(), 50.0);
        assert_eq!(parse_rate("2.5").unwrap(), 2.5);
        for bad in ["", "0", "-5", "50/x", "50/0s", "fifty/s", "inf", "NaN"] {
            let e = parse_rate(bad).unwrap_err().to_string();
            assert!(e.starts_with(&format!("bad rate '{bad}'")), "{e}");
        }
    }

    #[test]
    fn parses_units() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("3s").unwrap(), Duration::from_secs(3));
        assert_eq!(parse_duration("1m").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("250us").unwrap(), Duration::from_micros(250));
    }

    #[test]
    fn refuses_bad_input() {
        assert_eq!(parse_duration("10").unwrap_err().reason, "missing unit");
        assert_eq!(
            parse_duration("10parsecs").unwrap_err().reason,
            "unknown unit"
        );
        assert_eq!(parse_duration("s").unwrap_err().reason, "missing number");
        assert!(parse_duration("1.2.3s").is_err());
        assert!(parse_duration("9999h").is_err());
    }

    #[test]
    fn formats_sizes() {
        assert_eq!(format_bytes(100), "100 bytes");
        assert_eq!(format_bytes(64 * 1024), "64 KiB");
        assert_eq!(format_bytes(16 << 20), "16 MiB");
        assert_eq!(format_bytes(3 << 29), "1.5 GiB");
    }

    #[test]
    fn formats_short() {
        assert_eq!(format_duration(Duration::from_micros(850)), "850us");
        assert_eq!(format_duration(Duration::from_micros(12_500)), "12.5ms");
        assert_eq!(format_duration(Duration::from_secs(3)), "3s");
        assert_eq!(format_duration(Duration::from_secs(90)), "1m30s");
        // Issue 16 (found by the preset fuzz test): a preset's `61s` became
        // the coordinate `1m1s`, which did not parse back, and panicked.
        for d in [61.0, 61.5, 3_601.25, 0.25, 7.0 * 86_400.0] {
            let d = Duration::from_secs_f64(d);
            assert_eq!(parse_duration(&format_duration(d)).unwrap(), d);
        }
        assert_eq!(parse_duration("1m30").unwrap_err().reason, "missing unit");
    }
}
