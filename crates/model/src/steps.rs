//! The workload language: what one request (or batch task) does.
//!
//! ```text
//! steps := item (',' item)*            a top-level list runs in sequence
//! item  := seq(steps) | par(steps) | leaf
//! leaf  := cpu:N | sleep:MS | http:MS | pg:MS | mc:KEY
//! ```
//! `MS` is a decimal number of milliseconds (`200`, `0.5`); `N` a whole number
//! of Leibniz terms; `KEY` a memcached key (`[A-Za-z0-9_.:-]`, at most 250).
//! Steps serialize as their canonical text, so plans and results stay readable
//! and every runtime (Rust, JVM) parses exactly the same strings.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Limits that keep one request's work bounded whatever a client sends.
pub mod limits {
    /// Deepest nesting of `seq(...)` / `par(...)`.
    pub const MAX_DEPTH: usize = 16;
    /// Most leaf steps in one workload.
    pub const MAX_LEAVES: usize = 1_000;
    /// Longest single IO step, in milliseconds (one hour).
    pub const MAX_MS: f64 = 3_600_000.0;
    /// Most Leibniz terms in one `cpu` step (about 10 minutes of one core).
    pub const MAX_CPU_TERMS: u64 = 100_000_000_000;
    /// Longest memcached key (memcached's own limit).
    pub const MAX_KEY_LEN: usize = 250;
    /// Longest steps string accepted.
    pub const MAX_INPUT_LEN: usize = 16_384;
}

/// One step of a workload.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Step {
    /// `cpu:N`: N terms of the Leibniz series for pi, on the calling thread.
    Cpu {
        /// Number of series terms.
        terms: u64,
    },
    /// One call to a backend.
    Io(IoCall),
    /// Children one after another.
    Seq(Vec<Step>),
    /// Children at the same time, in whatever way the model can.
    Par(Vec<Step>),
}

/// One call to a backend; durations are kept in whole microseconds so that
/// scaled workloads (`--scale 0.01`) stay exact and hashable.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IoCall {
    /// `sleep:MS`: the embedded timer (a blocking sleep or an async timer).
    Sleep {
        /// Duration in microseconds.
        micros: u64,
    },
    /// `http:MS`: iolab's HTTP delay service answers after MS.
    Http {
        /// Duration in microseconds.
        micros: u64,
    },
    /// `pg:MS`: `SELECT pg_sleep(MS/1000.0)` on PostgreSQL.
    Pg {
        /// Duration in microseconds.
        micros: u64,
    },
    /// `mc:KEY`: a memcached get of KEY.
    Mc {
        /// The memcached key.
        key: String,
    },
}

/// The four backends an [`IoCall`] can go to.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// Embedded timer.
    #[default]
    Sleep,
    /// HTTP delay service.
    Http,
    /// PostgreSQL.
    Pg,
    /// memcached.
    Mc,
}

impl BackendKind {
    /// All kinds, in label order.
    pub const ALL: [BackendKind; 4] = [Self::Sleep, Self::Http, Self::Pg, Self::Mc];

    /// The embedded timer (needs nothing installed).
    pub fn is_sleep(&self) -> bool {
        *self == Self::Sleep
    }

    /// The word used in step strings and metric labels.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sleep => "sleep",
            Self::Http => "http",
            Self::Pg => "pg",
            Self::Mc => "mc",
        }
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl IoCall {
    /// Which backend serves this call.
    pub fn kind(&self) -> BackendKind {
        match self {
            Self::Sleep { .. } => BackendKind::Sleep,
            Self::Http { .. } => BackendKind::Http,
            Self::Pg { .. } => BackendKind::Pg,
            Self::Mc { .. } => BackendKind::Mc,
        }
    }

    /// The nominal duration of a timed call (`None` for `mc`, whose time is
    /// whatever the transfer takes).
    pub fn nominal(&self) -> Option<Duration> {
        match self {
            Self::Sleep { micros } | Self::Http { micros } | Self::Pg { micros } => {
                Some(Duration::from_micros(*micros))
            }
            Self::Mc { .. } => None,
        }
    }
}

impl Step {
    /// Number of leaf steps (`cpu` and IO calls); the contract's `"steps"` field.
    pub fn leaf_count(&self) -> usize {
        match self {
            Step::Cpu { .. } | Step::Io(_) => 1,
            Step::Seq(c) | Step::Par(c) => c.iter().map(Step::leaf_count).sum(),
        }
    }

    /// Every IO call in the workload, in textual order.
    pub fn io_calls(&self) -> Vec<&IoCall> {
        let mut out = Vec::new();
        self.visit_io(&mut |c| out.push(c));
        out
    }

    fn visit_io<'a>(&'a self, f: &mut dyn FnMut(&'a IoCall)) {
        match self {
            Step::Cpu { .. } => {}
            Step::Io(c) => f(c),
            Step::Seq(c) | Step::Par(c) => c.iter().for_each(|s| s.visit_io(f)),
        }
    }

    /// Total Leibniz terms (CPU work) in the workload, wherever it runs.
    pub fn cpu_terms(&self) -> u64 {
        match self {
            Step::Cpu { terms } => *terms,
            Step::Io(_) => 0,
            Step::Seq(c) | Step::Par(c) => c.iter().map(Step::cpu_terms).sum(),
        }
    }

    /// The IO time of one request given unlimited threads: `seq` adds, `par`
    /// takes the longest; `cpu` and `mc` count as zero.
    pub fn nominal_io(&self) -> Duration {
        match self {
            Step::Cpu { .. } => Duration::ZERO,
            Step::Io(c) => c.nominal().unwrap_or_default(),
            Step::Seq(c) => c.iter().map(Step::nominal_io).sum(),
            Step::Par(c) => c.iter().map(Step::nominal_io).max().unwrap_or_default(),
        }
    }

    /// The same workload with every duration and CPU term count multiplied by
    /// `factor` (the time-scale; 0 < factor). Non-zero amounts never round to 0.
    pub fn scaled(&self, factor: f64) -> Step {
        let us = |m: u64| {
            if m == 0 {
                0
            } else {
                ((m as f64 * factor).round() as u64).max(1)
            }
        };
        match self {
            Step::Cpu { terms } => Step::Cpu { terms: us(*terms) },
            Step::Io(IoCall::Sleep { micros }) => Step::Io(IoCall::Sleep {
                micros: us(*micros),
            }),
            Step::Io(IoCall::Http { micros }) => Step::Io(IoCall::Http {
                micros: us(*micros),
            }),
            Step::Io(IoCall::Pg { micros }) => Step::Io(IoCall::Pg {
                micros: us(*micros),
            }),
            Step::Io(c @ IoCall::Mc { .. }) => Step::Io(c.clone()),
            Step::Seq(c) => Step::Seq(c.iter().map(|s| s.scaled(factor)).collect()),
            Step::Par(c) => Step::Par(c.iter().map(|s| s.scaled(factor)).collect()),
        }
    }
}

/// A fault in a steps string, with the byte offset where it was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("steps: {message} at {position}")]
pub struct StepsError {
    /// What was wrong, e.g. "expected ')'".
    pub message: String,
    /// Byte offset into the input (0-based).
    pub position: usize,
}

impl FromStr for Step {
    type Err = StepsError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse(s)
    }
}

/// Parse and validate a steps string.
pub fn parse(input: &str) -> Result<Step, StepsError> {
    if input.len() > limits::MAX_INPUT_LEN {
        return Err(StepsError {
            message: format!("input longer than {} bytes", limits::MAX_INPUT_LEN),
            position: limits::MAX_INPUT_LEN,
        });
    }
    let mut p = Parser {
        s: input.as_bytes(),
        pos: 0,
        leaves: 0,
    };
    p.skip_ws();
    if p.at_end() {
        return Err(p.err("empty workload: expected a step such as 'sleep:100'"));
    }
    let mut items = p.list(0)?;
    p.skip_ws();
    if !p.at_end() {
        let msg = if p.peek() == Some(b')') {
            "unexpected ')'".to_string()
        } else {
            format!("unexpected '{}'", p.peek_char())
        };
        return Err(p.err(&msg));
    }
    Ok(if items.len() == 1 {
        items.pop().expect("one item")
    } else {
        Step::Seq(items)
    })
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    leaves: usize,
}

impl Parser<'_> {
    fn err(&self, message: &str) -> StepsError {
        StepsError {
            message: message.to_string(),
            position: self.pos,
        }
    }

    fn at_end(&self) -> bool {
        self.pos >= self.s.len()
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn peek_char(&self) -> char {
        std::str::from_utf8(&self.s[self.pos..])
            .ok()
            .and_then(|r| r.chars().next())
            .unwrap_or('?')
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }

    fn list(&mut self, depth: usize) -> Result<Vec<Step>, StepsError> {
        let mut items = vec![self.item(depth)?];
        loop {
            self.skip_ws();
            if self.peek() == Some(b',') {
                self.pos += 1;
                self.skip_ws();
                items.push(self.item(depth)?);
            } else {
                return Ok(items);
            }
        }
    }

    fn word(&mut self) -> &str {
        let start = self.pos;
        while matches!(self.peek(), Some(c) if c.is_ascii_alphabetic()) {
            self.pos += 1;
        }
        std::str::from_utf8(&self.s[start..self.pos]).expect("ascii")
    }

    fn item(&mut self, depth: usize) -> Result<Step, StepsError> {
        self.skip_ws();
        let start = self.pos;
        let word = self.word().to_string();
        match word.as_str() {
            "seq" | "par" => {
                if self.peek() != Some(b'(') {
                    return Err(self.err(&format!("expected '(' after '{word}'")));
                }
                if depth + 1 > limits::MAX_DEPTH {
                    return Err(
                        self.err(&format!("nesting deeper than {} levels", limits::MAX_DEPTH))
                    );
                }
                self.pos += 1;
                self.skip_ws();
                if self.peek() == Some(b')') {
                    return Err(self.err(&format!("'{word}(...)' needs at least one step")));
                }
                let children = self.list(depth + 1)?;
                self.skip_ws();
                if self.peek() != Some(b')') {
                    return Err(self.err("expected ')'"));
                }
                self.pos += 1;
                Ok(if word == "seq" {
                    Step::Seq(children)
                } else {
                    Step::Par(children)
                })
            }
            "cpu" | "sleep" | "http" | "pg" | "mc" => {
                if self.peek() != Some(b':') {
                    return Err(self.err(&format!("expected ':' after '{word}'")));
                }
                self.pos += 1;
                self.leaves += 1;
                if self.leaves > limits::MAX_LEAVES {
                    self.pos = start;
                    return Err(self.err(&format!("more than {} steps", limits::MAX_LEAVES)));
                }
                match word.as_str() {
                    "cpu" => Ok(Step::Cpu {
                        terms: self.whole()?,
                    }),
                    "mc" => Ok(Step::Io(IoCall::Mc { key: self.key()? })),
                    _ => {
                        let micros = self.millis()?;
                        Ok(Step::Io(match word.as_str() {
                            "sleep" => IoCall::Sleep { micros },
                            "http" => IoCall::Http { micros },
                            _ => IoCall::Pg { micros },
                        }))
                    }
                }
            }
            "" => {
                if self.at_end() {
                    Err(self.err("expected a step"))
                } else {
                    Err(self.err(&format!("expected a step, found '{}'", self.peek_char())))
                }
            }
            other => {
                self.pos = start;
                Err(self.err(&format!(
                    "unknown step '{other}' (expected cpu, sleep, http, pg, mc, seq or par)"
                )))
            }
        }
    }

    fn digits(&mut self) -> &str {
        let start = self.pos;
        while matches!(self.peek(), Some(c) if c.is_ascii_digit()) {
            self.pos += 1;
        }
        std::str::from_utf8(&self.s[start..self.pos]).expect("ascii")
    }

    fn whole(&mut self) -> Result<u64, StepsError> {
        let start = self.pos;
        let d = self.digits().to_string();
        if d.is_empty() {
            return Err(self.err("expected a whole number of terms"));
        }
        match d.parse::<u64>() {
            Ok(n) if n <= limits::MAX_CPU_TERMS => Ok(n),
            _ => {
                self.pos = start;
                Err(self.err(&format!(
                    "cpu terms above the limit of {}",
                    limits::MAX_CPU_TERMS
                )))
            }
        }
    }

    fn millis(&mut self) -> Result<u64, StepsError> {
        let start = self.pos;
        let int = self.digits().to_string();
        let mut text = int.clone();
        if self.peek() == Some(b'.') {
            self.pos += 1;
            let frac = self.digits().to_string();
            if frac.is_empty() {
                return Err(self.err("expected digits after '.'"));
            }
            text = format!("{int}.{frac}");
        }
        if int.is_empty() {
            self.pos = start;
            return Err(self.err("expected milliseconds, e.g. 200 or 0.5"));
        }
        let ms: f64 = text.parse().map_err(|_| self.err("bad number"))?;
        if ms > limits::MAX_MS {
            self.pos = start;
            return Err(self.err(&format!(
                "{text} ms is above the limit of {} ms",
                limits::MAX_MS
            )));
        }
        Ok((ms * 1000.0).round() as u64)
    }

    fn key(&mut self) -> Result<String, StepsError> {
        let start = self.pos;
        while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-' | b':'))
        {
            self.pos += 1;
        }
        let key = std::str::from_utf8(&self.s[start..self.pos]).expect("ascii");
        if key.is_empty() {
            return Err(self.err("expected a memcached key"));
        }
        if key.len() > limits::MAX_KEY_LEN {
            self.pos = start;
            return Err(self.err(&format!(
                "memcached key longer than {} bytes",
                limits::MAX_KEY_LEN
            )));
        }
        Ok(key.to_string())
    }
}

/// Milliseconds as text: whole numbers bare, fractions with up to 3 decimals.
fn fmt_micros(micros: u64, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let ms = micros / 1000;
    let frac = micros % 1000;
    if frac == 0 {
        write!(f, "{ms}")
    } else {
        let s = format!("{frac:03}");
        write!(f, "{ms}.{}", s.trim_end_matches('0'))
    }
}

impl fmt::Display for IoCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IoCall::Sleep { micros } => {
                f.write_str("sleep:")?;
                fmt_micros(*micros, f)
            }
            IoCall::Http { micros } => {
                f.write_str("http:")?;
                fmt_micros(*micros, f)
            }
            IoCall::Pg { micros } => {
                f.write_str("pg:")?;
                fmt_micros(*micros, f)
            }
            IoCall::Mc { key } => write!(f, "mc:{key}"),
        }
    }
}

impl fmt::Display for Step {
    /// The canonical text: `parse(step.to_string()) == step`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |f: &mut fmt::Formatter<'_>, name: &str, c: &[Step]| {
            write!(f, "{name}(")?;
            for (i, s) in c.iter().enumerate() {
                if i > 0 {
                    f.write_str(",")?;
                }
                write!(f, "{s}")?;
            }
            f.write_str(")")
        };
        match self {
            Step::Cpu { terms } => write!(f, "cpu:{terms}"),
            Step::Io(c) => write!(f, "{c}"),
            Step::Seq(c) => list(f, "seq", c),
            Step::Par(c) => list(f, "par", c),
        }
    }
}

impl Serialize for Step {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Step {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sleep(ms: u64) -> Step {
        Step::Io(IoCall::Sleep { micros: ms * 1000 })
    }

    #[test]
    fn parses_leaves_and_groups() {
        assert_eq!(parse("sleep:200").unwrap(), sleep(200));
        assert_eq!(
            parse("cpu:1000000").unwrap(),
            Step::Cpu { terms: 1_000_000 }
        );
        assert_eq!(
            parse("par(sleep:200,sleep:500,sleep:300)").unwrap(),
            Step::Par(vec![sleep(200), sleep(500), sleep(300)])
        );
        let s = parse("seq(pg:200, http:500, mc:big)").unwrap();
        assert_eq!(s.leaf_count(), 3);
        assert_eq!(s.to_string(), "seq(pg:200,http:500,mc:big)");
        assert_eq!(
            parse("sleep:1,cpu:5").unwrap(),
            Step::Seq(vec![sleep(1), Step::Cpu { terms: 5 }])
        );
    }

    #[test]
    fn fractional_millis_round_trip() {
        let s = parse("sleep:0.5").unwrap();
        assert_eq!(s, Step::Io(IoCall::Sleep { micros: 500 }));
        assert_eq!(s.to_string(), "sleep:0.5");
        assert_eq!(parse("http:12.125").unwrap().to_string(), "http:12.125");
    }

    #[test]
    fn errors_name_the_position() {
        let e = parse("par(sleep:200,sleep:5").unwrap_err();
        assert_eq!(e.to_string(), "steps: expected ')' at 21");
        assert_eq!(parse("").unwrap_err().position, 0);
        assert!(parse("nap:3")
            .unwrap_err()
            .message
            .contains("unknown step 'nap'"));
        assert_eq!(parse("sleep:abc").unwrap_err().position, 6);
        assert!(parse("sleep:100)")
            .unwrap_err()
            .message
            .contains("unexpected ')'"));
        assert!(parse("par()").unwrap_err().message.contains("at least one"));
        assert!(parse("sleep:99999999")
            .unwrap_err()
            .message
            .contains("limit"));
    }

    #[test]
    fn nominal_io_adds_seq_and_maxes_par() {
        let s = parse("seq(sleep:200,par(sleep:500,sleep:300),cpu:10)").unwrap();
        assert_eq!(s.nominal_io(), Duration::from_millis(700));
        assert_eq!(s.cpu_terms(), 10);
    }

    #[test]
    fn scaling_keeps_non_zero_amounts() {
        let s = parse("seq(sleep:1000,cpu:3)").unwrap().scaled(0.01);
        assert_eq!(s.to_string(), "seq(sleep:10,cpu:1)");
    }

    #[test]
    fn depth_and_size_are_bounded() {
        let deep = "seq(".repeat(20) + "sleep:1" + &")".repeat(20);
        assert!(parse(&deep).unwrap_err().message.contains("nesting"));
        let wide = vec!["sleep:1"; limits::MAX_LEAVES + 1].join(",");
        assert!(parse(&wide).unwrap_err().message.contains("more than"));
    }

    fn arb_step() -> impl Strategy<Value = Step> {
        let leaf = prop_oneof![
            (0u64..1_000_000).prop_map(|terms| Step::Cpu { terms }),
            (0u64..10_000_000).prop_map(|micros| Step::Io(IoCall::Sleep { micros })),
            (0u64..10_000_000).prop_map(|micros| Step::Io(IoCall::Http { micros })),
            (0u64..10_000_000).prop_map(|micros| Step::Io(IoCall::Pg { micros })),
            "[a-z0-9_.-]{1,20}".prop_map(|key| Step::Io(IoCall::Mc { key })),
        ];
        leaf.prop_recursive(4, 32, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 1..5).prop_map(Step::Seq),
                prop::collection::vec(inner, 1..5).prop_map(Step::Par),
            ]
        })
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,64}") {
            let _ = parse(&s);
        }

        #[test]
        fn never_panics_on_near_misses(s in "[a-z():,.0-9 ]{0,48}") {
            let _ = parse(&s);
        }

        #[test]
        fn display_round_trips(step in arb_step()) {
            prop_assert_eq!(parse(&step.to_string()).unwrap(), step);
        }
    }
}
