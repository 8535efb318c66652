//! An objective per endpoint of a replayed mix (`iolab capacity --replay
//! FILE --slo 'GET /orders/{id}:p99<200ms; *:success>=99.9%'`): each
//! endpoint's requests of a step are judged against its own clauses, or
//! `*`'s when it has none, else the part without an endpoint's; that part
//! is also judged over every request together, as the plain form is. A
//! step passes when every part holds. What each endpoint did against its clauses is an
//! [`EndpointVerdict`] in the step; the endpoint that failed first is the
//! search's [`FirstFail`].

use std::fmt;

use serde::{Deserialize, Serialize};

use super::slo::{Clause, Observed, Slo};
use super::Within;

/// The objective of one named endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EndpointObjective {
    /// HTTP method, e.g. `GET`.
    pub method: String,
    /// Route template, e.g. `/orders/{id}`.
    pub template: String,
    /// Its clauses.
    pub slo: Slo,
}

/// An objective written per endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EndpointSlo {
    /// The endpoints named, in the order written.
    pub endpoints: Vec<EndpointObjective>,
    /// `*`: the clauses of every endpoint not named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rest: Option<Slo>,
    /// A part without an endpoint: every request of a step together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overall: Option<Slo>,
}

/// Why a per-endpoint objective was refused; each is one line naming the
/// fault and the fix.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EndpointSloError {
    /// A part's clauses did not parse.
    #[error("part '{part}': {why}")]
    Clauses { part: String, why: String },
    /// A part's endpoint is not `METHOD /template` or `*`.
    #[error("part '{part}': name the endpoint as METHOD /template or * before the ':' (e.g. 'GET /orders/{{id}}:p99<200ms; *:p99<500ms')")]
    Endpoint { part: String },
    /// The same endpoint (or `*`, or the overall part) twice.
    #[error("'{0}' is given twice: write its clauses once, separated by ','")]
    Twice(String),
    /// No part at all.
    #[error("no clause (write e.g. 'GET /orders/{{id}}:p99<200ms; *:p99<500ms')")]
    Empty,
    /// An endpoint that the recording does not have.
    #[error("'{named}' is not an endpoint of the recording; it has: {recorded}")]
    NotRecorded { named: String, recorded: String },
}

impl EndpointSlo {
    /// The text is written per endpoint (a `:` or a `;`), not the plain
    /// one-clause-set form.
    pub fn is_per_endpoint(text: &str) -> bool {
        text.contains(':') || text.contains(';')
    }

    /// Parse `ENDPOINT:CLAUSES; ...; *:CLAUSES` (a part without an
    /// endpoint is over every request together).
    pub fn parse(text: &str) -> Result<EndpointSlo, EndpointSloError> {
        let mut out = EndpointSlo {
            endpoints: Vec::new(),
            rest: None,
            overall: None,
        };
        for part in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let shown = crate::text::printable(part);
            let (who, clauses) = match part.rsplit_once(':') {
                Some((w, c)) => (Some(w.trim()), c),
                None => (None, part),
            };
            let slo: Slo =
                clauses
                    .parse()
                    .map_err(|e: super::slo::SloError| EndpointSloError::Clauses {
                        part: shown.clone(),
                        why: e.to_string(),
                    })?;
            let twice = |name: &str| EndpointSloError::Twice(crate::text::printable(name));
            match who {
                None if out.overall.is_some() => {
                    return Err(twice("the objective over every request"))
                }
                None => out.overall = Some(slo),
                Some("*") if out.rest.is_some() => return Err(twice("*")),
                Some("*") => out.rest = Some(slo),
                Some(w) => {
                    let (method, template) =
                        endpoint(w).ok_or(EndpointSloError::Endpoint { part: shown })?;
                    if out.find(&method, &template).is_some() {
                        return Err(twice(w));
                    }
                    out.endpoints.push(EndpointObjective {
                        method,
                        template,
                        slo,
                    });
                }
            }
        }
        match out.endpoints.is_empty() && out.rest.is_none() && out.overall.is_none() {
            true => Err(EndpointSloError::Empty),
            false => Ok(out),
        }
    }

    fn find(&self, method: &str, template: &str) -> Option<&EndpointObjective> {
        (self.endpoints.iter()).find(|e| e.method == method && e.template == template)
    }

    /// The clauses an endpoint is judged by: its own, else `*`'s, else the
    /// overall part's (`None`: there is none of them).
    pub fn for_endpoint(&self, method: &str, template: &str) -> Option<&Slo> {
        (self.find(method, template).map(|e| &e.slo))
            .or(self.rest.as_ref())
            .or(self.overall.as_ref())
    }

    /// Every endpoint named is one of `recorded` (`METHOD /template`).
    pub fn check_recorded(&self, recorded: &[String]) -> Result<(), EndpointSloError> {
        for e in &self.endpoints {
            let named = format!("{} {}", e.method, e.template);
            if !recorded.contains(&named) {
                return Err(EndpointSloError::NotRecorded {
                    named: crate::text::printable(&named),
                    recorded: recorded.join(", "),
                });
            }
        }
        Ok(())
    }

    /// One clause set holding every clause written: its tightest latency
    /// bound, highest percentile and highest success are what a step's
    /// length and the client timeout are made for (never judged itself).
    pub fn envelope(&self) -> Slo {
        let all = (self.endpoints.iter().map(|e| &e.slo))
            .chain(self.rest.iter())
            .chain(self.overall.iter());
        Slo {
            clauses: all.flat_map(|s| s.clauses.iter().copied()).collect(),
        }
    }

    /// Judge one endpoint's requests: `None` when it has no clauses
    /// ([`EndpointSlo::for_endpoint`]).
    pub fn judge(
        &self,
        method: &str,
        template: &str,
        o: &EndpointObserved,
    ) -> Option<EndpointVerdict> {
        let slo = self.for_endpoint(method, template)?;
        let observed = Observed {
            planned: o.planned,
            success: o.success(),
            answered_within: o.answered_within,
        };
        let miss = slo.clauses.iter().find_map(|c| {
            let one = Slo { clauses: vec![*c] };
            one.judge(&observed).err().map(|text| miss(*c, o, text))
        });
        Some(EndpointVerdict {
            method: method.to_string(),
            template: template.to_string(),
            met: miss.is_none(),
            miss,
            sent: o.planned,
            ok: o.ok,
            within: (slo.bounds_ms().into_iter())
                .map(|b| Within {
                    below_ms: b,
                    answered: (o.answered_within)(b),
                })
                .collect(),
        })
    }
}

/// `GET /orders/{id}`: a method in capitals and a template from `/`.
fn endpoint(text: &str) -> Option<(String, String)> {
    let (m, t) = text.split_once(char::is_whitespace)?;
    let t = t.trim();
    let method_ok = !m.is_empty() && m.bytes().all(|b| b.is_ascii_uppercase());
    (method_ok && t.starts_with('/') && !t.contains(char::is_whitespace))
        .then(|| (m.to_string(), t.to_string()))
}

/// What one endpoint's requests of a step did, as its clauses read them.
pub struct EndpointObserved<'a> {
    /// Its requests put on the wire (an unanswered one is late).
    pub planned: u64,
    /// Answered 2xx in time.
    pub ok: u64,
    /// Answers within `ms` of their intended send.
    pub answered_within: &'a dyn Fn(f64) -> u64,
    /// The latency below which a share `q` (0..1) of its planned requests
    /// were answered, ms; `None` when fewer than that were answered.
    pub quantile_ms: &'a dyn Fn(f64) -> Option<f64>,
}

impl EndpointObserved<'_> {
    fn success(&self) -> f64 {
        match self.planned {
            0 => 0.0,
            n => self.ok as f64 / n as f64,
        }
    }
}

/// The miss of clause `c`, with what was measured against it.
fn miss(c: Clause, o: &EndpointObserved, text: String) -> Miss {
    let (observed, by) = match c {
        Clause::Latency {
            percentile,
            below_ms,
        } => {
            let v = (o.quantile_ms)(percentile / 100.0);
            // Unanswered past the percentile: the largest miss there is.
            (v, v.map_or(f64::INFINITY, |v| v / below_ms))
        }
        Clause::Success { at_least } => {
            let s = o.success();
            (Some(s), (1.0 - s) / (1.0 - at_least).max(1e-9))
        }
    };
    Miss {
        clause: c,
        observed,
        by,
        text,
    }
}

/// The first clause an endpoint missed in a step, and by how much.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Miss {
    /// The clause.
    pub clause: Clause,
    /// What it measured: the percentile's latency over planned requests,
    /// ms (absent when fewer than that share were answered), or the
    /// success ratio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<f64>,
    /// How far past the clause: measured latency over the bound, or the
    /// failures over the failures allowed (above 1: missed). Infinite
    /// (saved as null) when the percentile was never answered.
    #[serde(with = "finite")]
    #[schemars(with = "Option<f64>")]
    pub by: f64,
    /// The miss in words, as the plain objective says it.
    pub text: String,
}

/// What one endpoint did against its clauses in one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EndpointVerdict {
    /// HTTP method.
    pub method: String,
    /// Route template.
    pub template: String,
    /// Every clause of its held.
    pub met: bool,
    /// The first clause it missed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub miss: Option<Miss>,
    /// Its requests put on the wire.
    pub sent: u64,
    /// Of them answered 2xx in time.
    pub ok: u64,
    /// Its answers within each latency bound of its clauses: what a rate's
    /// windows are judged on together.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub within: Vec<Within>,
}

/// The endpoint that failed its clauses first in a search: at the lowest
/// failing rate, the largest miss there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FirstFail {
    /// HTTP method.
    pub method: String,
    /// Route template.
    pub template: String,
    /// Its share of the mix, 0..=1.
    pub share: f64,
    /// The rate it failed at, req/s (the whole mix's).
    pub rate_rps: f64,
    /// Its miss there.
    pub miss: Miss,
}

impl fmt::Display for EndpointSlo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = (self.endpoints.iter())
            .map(|e| format!("{} {}:{}", e.method, e.template, e.slo))
            .collect();
        parts.extend(self.rest.iter().map(|s| format!("*:{s}")));
        parts.extend(self.overall.iter().map(|s| s.to_string()));
        f.write_str(&parts.join("; "))
    }
}

/// An `f64` saved as a number, or null when infinite.
mod finite {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        match v.is_finite() {
            true => s.serialize_some(v),
            false => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::INFINITY))
    }
}

#[cfg(test)]
mod tests;
