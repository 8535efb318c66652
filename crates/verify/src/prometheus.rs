//! Reading Prometheus text format (0.0.4) strictly enough to catch a target
//! whose `/metrics` a scraper would refuse.

use std::collections::BTreeMap;

/// Samples by series (`name` or `name{labels}` as written), in order.
pub type Samples = BTreeMap<String, f64>;

/// Parse every line; `Err` names the first bad one.
pub fn parse(text: &str) -> Result<Samples, String> {
    let mut out = Samples::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |why: &str| format!("line {}: {why}: {line:?}", i + 1);
        let name_end = line
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(line.len());
        let name = &line[..name_end];
        if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(bad("bad metric name"));
        }
        let mut rest = &line[name_end..];
        let mut series = name.to_string();
        if rest.starts_with('{') {
            let close = rest.find('}').ok_or_else(|| bad("unclosed '{'"))?;
            let labels = &rest[1..close];
            for pair in labels.split(',').filter(|p| !p.trim().is_empty()) {
                let (k, v) = pair
                    .split_once('=')
                    .ok_or_else(|| bad("label without '='"))?;
                if k.trim().is_empty() || !(v.starts_with('"') && v.ends_with('"') && v.len() >= 2)
                {
                    return Err(bad("bad label"));
                }
            }
            series.push_str(&rest[..=close]);
            rest = &rest[close + 1..];
        }
        let mut fields = rest.split_whitespace();
        let value = fields.next().ok_or_else(|| bad("missing value"))?;
        let v: f64 = match value {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            "NaN" => f64::NAN,
            v => v.parse().map_err(|_| bad("value is not a number"))?,
        };
        if let Some(ts) = fields.next() {
            ts.parse::<i64>().map_err(|_| bad("bad timestamp"))?;
        }
        if fields.next().is_some() {
            return Err(bad("trailing text"));
        }
        out.insert(series, v);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_and_refuses() {
        let s =
            super::parse("# HELP a b\n# TYPE a counter\na 3\nb{kind=\"sleep\"} 4.5 123\n").unwrap();
        assert_eq!(s["a"], 3.0);
        assert_eq!(s["b{kind=\"sleep\"}"], 4.5);
        assert!(super::parse("a\n").is_err());
        assert!(super::parse("a x\n").is_err());
        assert!(super::parse("a{k=v} 1\n").is_err());
        assert!(super::parse("<html>\n").is_err());
    }
}
