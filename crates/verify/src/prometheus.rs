//! iolab's one reader of Prometheus text format 0.0.4: `verify` reads
//! strictly (the first bad line fails a target whose `/metrics` a scraper
//! would refuse) and `lab`'s telemetry leniently (a bad line is skipped, the
//! rest still sampled). Input over [`MAX_TEXT`] is refused before any work.
//!
//! Hand-written: the crates for this format either skip bad lines silently
//! and split label values at commas (`prometheus-parse`), are LGPL
//! (`openmetrics-parser`), or had one release years ago; verify needs the
//! line and the reason of the first fault, and labels read per the format
//! (escapes, commas and braces inside quoted values).

use std::collections::BTreeMap;

use iolab_model::units::format_bytes;

/// Samples by series (`name` or `name{labels}` as written), in order.
pub type Samples = BTreeMap<String, f64>;

/// Largest text read: the HTTP client's own body cap, far above any real
/// `/metrics` page.
pub const MAX_TEXT: usize = crate::client::MAX_BODY;

/// Why a metrics text is refused: the first bad line, or its size.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Over [`MAX_TEXT`] bytes.
    #[error("metrics text of {} is over the {} cap", format_bytes(*.0 as u64), format_bytes(MAX_TEXT as u64))]
    TooBig(usize),
    /// A line that is not a sample, comment or blank.
    #[error("line {number}: {why}: {line:?}")]
    BadLine {
        /// 1-based.
        number: usize,
        /// What is wrong with it.
        why: &'static str,
        /// The line as read.
        line: String,
    },
}

/// Parse every line; `Err` names the first bad one (or an oversized text).
pub fn parse(text: &str) -> Result<Samples, ParseError> {
    check_size(text)?;
    let mut out = Samples::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(sample) = sample(line) {
            let (series, v) = sample.map_err(|why| ParseError::BadLine {
                number: i + 1,
                why,
                line: line.to_string(),
            })?;
            out.insert(series.to_string(), v);
        }
    }
    Ok(out)
}

/// Every good sample; bad lines are skipped, an oversized text gives none.
pub fn parse_lenient(text: &str) -> Samples {
    if check_size(text).is_err() {
        return Samples::new();
    }
    text.lines()
        .filter_map(sample)
        .filter_map(Result::ok)
        .map(|(series, v)| (series.to_string(), v))
        .collect()
}

fn check_size(text: &str) -> Result<(), ParseError> {
    if text.len() > MAX_TEXT {
        return Err(ParseError::TooBig(text.len()));
    }
    Ok(())
}

/// `None` for a blank or comment line; else the series and its value.
fn sample(line: &str) -> Option<Result<(&str, f64), &'static str>> {
    let line = line.trim_end();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    Some(series_and_value(line))
}

fn series_and_value(line: &str) -> Result<(&str, f64), &'static str> {
    let name_end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(line.len());
    if name_end == 0 || line.starts_with(|c: char| c.is_ascii_digit()) {
        return Err("bad metric name");
    }
    let series_end = if line[name_end..].starts_with('{') {
        name_end + labels_end(&line[name_end..])? + 1
    } else {
        name_end
    };
    let mut fields = line[series_end..].split_whitespace();
    let v: f64 = match fields.next().ok_or("missing value")? {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        "NaN" => f64::NAN,
        v => v.parse().map_err(|_| "value is not a number")?,
    };
    if let Some(ts) = fields.next() {
        ts.parse::<i64>().map_err(|_| "bad timestamp")?;
    }
    if fields.next().is_some() {
        return Err("trailing text");
    }
    Ok((&line[..series_end], v))
}

/// The index of the `}` closing the label set `s` starts with (`{`),
/// checking each `name="value"` pair on the way.
fn labels_end(s: &str) -> Result<usize, &'static str> {
    let b = s.as_bytes();
    let skip = |mut i: usize| {
        while b.get(i).is_some_and(|c| *c == b' ' || *c == b'\t') {
            i += 1;
        }
        i
    };
    let mut i = 1;
    loop {
        i = skip(i);
        if b.get(i) == Some(&b'}') {
            return Ok(i);
        }
        let start = i;
        while b
            .get(i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            i += 1;
        }
        if i == start || b[start].is_ascii_digit() {
            return Err(if b.get(i).is_none() {
                "unclosed '{'"
            } else {
                "bad label"
            });
        }
        i = skip(i);
        if b.get(i) != Some(&b'=') {
            return Err("label without '='");
        }
        i = skip(i + 1);
        if b.get(i) != Some(&b'"') {
            return Err("bad label");
        }
        i = quoted_end(b, i + 1)? + 1;
        i = skip(i);
        match b.get(i) {
            Some(b',') => i += 1,
            Some(b'}') => return Ok(i),
            None => return Err("unclosed '{'"),
            Some(_) => return Err("bad label"),
        }
    }
}

/// The index of the `"` closing a label value that starts at `i`.
fn quoted_end(b: &[u8], mut i: usize) -> Result<usize, &'static str> {
    loop {
        match b.get(i) {
            None => return Err("unclosed label value"),
            Some(b'"') => return Ok(i),
            Some(b'\\') if matches!(b.get(i + 1), Some(b'\\' | b'"' | b'n')) => i += 2,
            Some(b'\\') => return Err("bad escape in label value"),
            Some(_) => i += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_refuses() {
        let s = parse("# HELP a b\n# TYPE a counter\na 3\nb{kind=\"sleep\"} 4.5 123\n").unwrap();
        assert_eq!(s["a"], 3.0);
        assert_eq!(s["b{kind=\"sleep\"}"], 4.5);
        assert!(parse("a\n").is_err());
        assert!(parse("a x\n").is_err());
        assert!(parse("a{k=v} 1\n").is_err());
        assert!(parse("<html>\n").is_err());
        assert!(parse("a{k=\"v\" 1\n").is_err());
        assert!(parse("a{k=\"v\\x\"} 1\n").is_err());
        assert!(parse("a 1 2 3\n").is_err());
        let e = parse("a 1\nb{k=\"v\"} one\n").unwrap_err().to_string();
        assert!(e.starts_with("line 2: value is not a number"), "{e}");
    }

    /// Regression: commas, braces and escaped quotes inside a label value are
    /// the value's, not the label set's (the format allows any UTF-8 there).
    #[test]
    fn label_values_may_hold_commas_braces_and_escapes() {
        let text = "x{path=\"/a,b\",q=\"{}\",e=\"say \\\"hi\\\"\\n\",} 7\ny{ k = \"v\" } +Inf\n";
        let s = parse(text).unwrap();
        assert_eq!(s["x{path=\"/a,b\",q=\"{}\",e=\"say \\\"hi\\\"\\n\",}"], 7.0);
        assert_eq!(s["y{ k = \"v\" }"], f64::INFINITY);
        assert!(parse("z{} NaN\n").unwrap()["z{}"].is_nan());
    }

    #[test]
    fn lenient_skips_bad_lines_only() {
        let s = parse_lenient("garbage\na 1\nb{k=v} 2\nc 3 trailing words\nd -Inf\n");
        assert_eq!(s.keys().collect::<Vec<_>>(), ["a", "d"]);
        assert!(parse_lenient("garbage\n\n").is_empty());
    }

    #[test]
    fn oversized_text_is_refused_before_parsing() {
        let big = "a 1\n".repeat(MAX_TEXT / 4 + 1);
        let e = parse(&big).unwrap_err().to_string();
        assert!(e.contains("over the 16 MiB cap"), "{e}");
        assert!(parse_lenient(&big).is_empty());
    }
}
