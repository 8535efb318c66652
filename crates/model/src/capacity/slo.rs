//! A service-level objective: `p99<200ms,success>=99.9%`. Every clause must
//! hold for a step of a capacity search to pass.
//!
//! A latency clause `pQ<L` is read over *every planned request*: a request
//! that was not answered (timed out, refused, never sent) counts as slower
//! than any bound, so `p99<200ms` holds only when at least 99% of the
//! planned requests were answered within 200 ms. Read over answered requests
//! only, a service that drops half its load could still "meet" its p99.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// One clause of an objective.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Clause {
    /// `pQ<L`: at least Q% of planned requests answered within L.
    Latency {
        /// The percentile, e.g. 99.0.
        percentile: f64,
        /// The bound, ms.
        below_ms: f64,
    },
    /// `success>=S%`: at least S% of planned requests answered 2xx in time.
    Success {
        /// The least success ratio, 0..=1.
        at_least: f64,
    },
}

/// An objective: its clauses, all of which must hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Slo {
    /// The clauses in the order written.
    pub clauses: Vec<Clause>,
}

/// An objective judged on one run (`iolab attack --slo`): whether it held
/// and, when it did not, the first clause that broke, in words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SloVerdict {
    /// The objective.
    pub slo: Slo,
    /// Every clause held.
    pub met: bool,
    /// `meets p99<200ms,...`, or the first clause that broke.
    pub verdict: String,
}

impl SloVerdict {
    /// The verdict of `judged` (what [`Slo::judge`] said) on `slo`.
    // A String is right here: the Err is not a fault but the verdict's
    // words (the first clause that broke), which the documents keep as the
    // step's and the run's `verdict` text.
    pub fn of(slo: &Slo, judged: Result<(), String>) -> SloVerdict {
        SloVerdict {
            slo: slo.clone(),
            met: judged.is_ok(),
            verdict: match judged {
                Ok(()) => format!("meets {slo}"),
                Err(why) => why,
            },
        }
    }
}

/// What a step measured, as the objective reads it.
pub struct Observed<'a> {
    /// Requests planned.
    pub planned: u64,
    /// Success ratio over planned requests.
    pub success: f64,
    /// Answers (any status) within `ms` milliseconds of their intended send.
    pub answered_within: &'a dyn Fn(f64) -> u64,
}

impl Slo {
    /// The tightest latency bound, ms (what a step's length is made for).
    pub fn tightest_ms(&self) -> Option<f64> {
        self.clauses
            .iter()
            .filter_map(|c| match c {
                Clause::Latency { below_ms, .. } => Some(*below_ms),
                Clause::Success { .. } => None,
            })
            .reduce(f64::min)
    }

    /// Every latency clause's bound, ms, in the order written, each once:
    /// a step's answers within each are counted once, and summed by bound
    /// when its windows are pooled (two clauses of one bound, `p50<300ms,
    /// p99<300ms` or the same bound for two endpoints, counted the answers
    /// twice: r53_5).
    pub fn bounds_ms(&self) -> Vec<f64> {
        let mut out: Vec<f64> = Vec::new();
        for c in &self.clauses {
            if let Clause::Latency { below_ms, .. } = *c {
                if !out.contains(&below_ms) {
                    out.push(below_ms);
                }
            }
        }
        out
    }

    /// The highest latency percentile asked for, as a fraction (0.99).
    pub fn percentile(&self) -> Option<f64> {
        self.clauses
            .iter()
            .filter_map(|c| match c {
                Clause::Latency { percentile, .. } => Some(*percentile / 100.0),
                Clause::Success { .. } => None,
            })
            .reduce(f64::max)
    }

    /// `Ok(())` when every clause holds, else the first that broke, in words.
    // A String is right here: the Err is not a fault but the verdict's
    // words (the first clause that broke), which the documents keep as the
    // step's and the run's `verdict` text.
    pub fn judge(&self, o: &Observed) -> Result<(), String> {
        for c in &self.clauses {
            match *c {
                Clause::Latency {
                    percentile,
                    below_ms,
                } => {
                    let within = (o.answered_within)(below_ms) as f64;
                    let share = if o.planned == 0 {
                        0.0
                    } else {
                        within / o.planned as f64
                    };
                    if share * 100.0 < percentile {
                        return Err(format!(
                            "{} answered within {} (p{} needs {}%)",
                            pct(share),
                            ms_text(below_ms),
                            num(percentile),
                            num(percentile)
                        ));
                    }
                }
                Clause::Success { at_least } => {
                    if o.success < at_least {
                        return Err(format!("success {} < {}", pct(o.success), pct(at_least)));
                    }
                }
            }
        }
        Ok(())
    }
}

fn num(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn pct(ratio: f64) -> String {
    format!("{}%", num((ratio * 100.0 * 1000.0).floor() / 1000.0))
}

fn ms_text(v: f64) -> String {
    format!("{}ms", num(v))
}

impl fmt::Display for Slo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .clauses
            .iter()
            .map(|c| match *c {
                Clause::Latency {
                    percentile,
                    below_ms,
                } => format!("p{}<{}", num(percentile), ms_text(below_ms)),
                Clause::Success { at_least } => format!("success>={}", pct(at_least)),
            })
            .collect();
        f.write_str(&parts.join(","))
    }
}

/// An objective that cannot be read: the clause at fault and why, both
/// echoed printable (control bytes of `--slo` once reached the terminal,
/// issue 49 finding 12).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("objective '{part}': {why} (write e.g. 'p99<200ms,success>=99.9%')")]
pub struct SloError {
    /// The clause, printable.
    pub part: String,
    /// What is wrong with it, printable.
    pub why: String,
}

impl FromStr for Slo {
    type Err = SloError;

    fn from_str(text: &str) -> Result<Slo, SloError> {
        let bad = |part: &str, why: &str| SloError {
            part: crate::text::printable(part),
            why: crate::text::printable(why),
        };
        let mut clauses = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if let Some(rest) = part.strip_prefix("success") {
                let v = rest
                    .trim()
                    .strip_prefix(">=")
                    .ok_or_else(|| bad(part, "success takes >="))?
                    .trim();
                let ratio = match v.strip_suffix('%') {
                    Some(p) => p.trim().parse::<f64>().map(|p| p / 100.0),
                    None => v.parse::<f64>(),
                }
                .map_err(|_| bad(part, "the success share is not a number"))?;
                if !(ratio > 0.0 && ratio <= 1.0) {
                    return Err(bad(part, "success must be above 0% and at most 100%"));
                }
                clauses.push(Clause::Success { at_least: ratio });
            } else if let Some(rest) = part.strip_prefix('p') {
                let (q, bound) = rest
                    .split_once("<=")
                    .or_else(|| rest.split_once('<'))
                    .ok_or_else(|| bad(part, "a latency clause is pQ<BOUND"))?;
                let q: f64 = q
                    .trim()
                    .parse()
                    .map_err(|_| bad(part, "the percentile is not a number"))?;
                if !(q > 0.0 && q < 100.0) {
                    return Err(bad(part, "the percentile must be between 0 and 100"));
                }
                let d =
                    crate::parse_duration(bound.trim()).map_err(|e| bad(part, &e.to_string()))?;
                if d.is_zero() {
                    return Err(bad(part, "the bound must be above zero"));
                }
                clauses.push(Clause::Latency {
                    percentile: q,
                    below_ms: d.as_secs_f64() * 1000.0,
                });
            } else {
                return Err(bad(part, "clauses are pQ<BOUND or success>=S%"));
            }
        }
        if clauses.is_empty() {
            return Err(bad(text, "no clause"));
        }
        Ok(Slo { clauses })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_back() {
        let s: Slo = "p99<200ms, success>=99.9%".parse().unwrap();
        assert_eq!(s.to_string(), "p99<200ms,success>=99.9%");
        assert_eq!(s.tightest_ms(), Some(200.0));
        assert_eq!(s.percentile(), Some(0.99));
        let s: Slo = "p50<=1s,p99.9<2s".parse().unwrap();
        assert_eq!(s.to_string(), "p50<1000ms,p99.9<2000ms");
        for bad in [
            "",
            "p99",
            "p100<1s",
            "p99<0ms",
            "success>99%",
            "success>=120%",
            "q99<1s",
            "p99<fast",
        ] {
            let e = bad.parse::<Slo>().unwrap_err().to_string();
            assert!(
                e.starts_with("objective") && !e.contains('\n'),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn r53_5_each_bound_is_counted_once() {
        let s: Slo = "p50<300ms,p99<300ms,p99.9<1s".parse().unwrap();
        assert_eq!(s.bounds_ms(), vec![300.0, 1000.0]);
    }

    #[test]
    fn latency_counts_unanswered_requests_as_late() {
        let s: Slo = "p99<200ms,success>=99%".parse().unwrap();
        let within = |n: u64| move |_ms: f64| n;
        let judge = |planned, success, n| {
            s.judge(&Observed {
                planned,
                success,
                answered_within: &within(n),
            })
        };
        assert!(judge(1000, 1.0, 995).is_ok());
        let e = judge(1000, 1.0, 980).unwrap_err();
        assert!(e.contains("98% answered within 200ms"), "{e}");
        assert!(judge(1000, 0.95, 1000).unwrap_err().contains("success 95%"));
    }
}
