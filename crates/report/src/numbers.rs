//! How every renderer writes numbers: short, fixed rules, so output is
//! stable, readable and the same in every document and format (`101ms`,
//! `1.13s`, `4,500`, `12.6%`, `38.2 MiB`). Three significant digits for
//! measured quantities (a p99 of 101.3 ms is `101ms` in an attack summary, a
//! batch table, a prediction and a report alike); whole counts in full with
//! thousands separators. CSV and JSON keep the raw values.

/// A latency in milliseconds: `0.85ms`, `4.21ms`, `101ms`, `1.13s`, `12.4s`.
pub fn ms(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if v == 0.0 {
        "0s".into()
    } else if v < 9.995 {
        format!("{v:.2}ms")
    } else if v < 99.95 {
        format!("{v:.1}ms")
    } else if v < 999.5 {
        format!("{v:.0}ms")
    } else if v < 9_995.0 {
        format!("{:.2}s", v / 1e3)
    } else {
        format!("{:.1}s", v / 1e3)
    }
}

/// Seconds, as [`ms`] does.
pub fn secs(v: f64) -> String {
    ms(v * 1e3)
}

/// A rate in requests per second: `50`, `812`, `4,500`, `12.5`.
pub fn rate(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if v < 100.0 && v.fract().abs() > 1e-9 {
        format!("{v:.1}")
    } else {
        count(v.round() as u64)
    }
}

/// A whole count with thousands separators: `27,000`.
pub fn count(v: u64) -> String {
    let digits: Vec<u8> = v.to_string().into_bytes();
    let groups: Vec<String> = digits
        .rchunks(3)
        .rev()
        .map(|g| String::from_utf8_lossy(g).into_owned())
        .collect();
    groups.join(",")
}

/// A ratio as a percentage: `100%`, `99.8%`, `12.6%`, `0.3%`, `0%`.
pub fn percent(ratio: f64) -> String {
    let p = ratio * 100.0;
    if (99.95..100.0).contains(&p) {
        // Never round a loss away: 99.97% is not 100%.
        format!("{p:.2}%")
    } else if p == 0.0 || p >= 100.0 || (p - p.round()).abs() < 1e-9 {
        format!("{:.0}%", p)
    } else {
        format!("{p:.1}%")
    }
}

/// MiB: `7.5 MiB`, `212 MiB`.
pub fn mib(v: f64) -> String {
    if v < 100.0 {
        format!("{v:.1} MiB")
    } else {
        format!("{v:.0} MiB")
    }
}

/// A figure that was not measured is `-`; one that was goes through `f`.
pub fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

/// A live clock, fixed width so a refreshed line does not jitter: `   1.5s`.
pub fn clock(secs: f64) -> String {
    format!("{secs:>6.1}s")
}

/// A plain number with up to `d` decimals, trailing zeros dropped.
pub fn num(v: f64, d: usize) -> String {
    let s = format!("{v:.d$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(ms(0.853), "0.85ms");
        assert_eq!(ms(101.2), "101ms");
        assert_eq!(ms(1130.0), "1.13s");
        assert_eq!(rate(4500.0), "4,500");
        assert_eq!(rate(12.5), "12.5");
        assert_eq!(percent(0.126), "12.6%");
        assert_eq!(percent(1.0), "100%");
        assert_eq!(percent(0.9997), "99.97%");
        assert_eq!(count(27_000), "27,000");
        assert_eq!(num(2.50, 2), "2.5");
        assert_eq!(clock(1.54), "   1.5s");
        assert_eq!(mib(7.46), "7.5 MiB");
        assert_eq!(mib(212.4), "212 MiB");
    }
}
