//! The shared contract vectors (`vectors/contract.json`), embedded, and how
//! one answer is judged against one expectation.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::client::HttpResponse;

/// The vectors file as shipped in the repository.
pub const CONTRACT_JSON: &str = include_str!("../../../vectors/contract.json");

/// The whole vectors file.
#[derive(Debug, Clone, Deserialize)]
pub struct Vectors {
    /// Its schema tag, `iolab.vectors.contract/1`.
    pub schema: String,
    /// The cases, in the order to run them.
    pub cases: Vec<Case>,
}

/// One request and what a target must answer.
#[derive(Debug, Clone, Deserialize)]
pub struct Case {
    /// Short name, used as the check's name.
    pub name: String,
    /// Path and query, e.g. `/work?steps=sleep:200`.
    pub path: String,
    /// The backend the request needs (`pg`, `mc`, `http`), if any.
    #[serde(default)]
    pub needs: Option<String>,
    /// The answer of a target that has what it needs.
    #[serde(default)]
    pub expect: Option<Expect>,
    /// The answer of a target without the backend it needs.
    #[serde(default)]
    pub unconfigured: Option<Expect>,
}

/// An expected answer.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Expect {
    /// Status code.
    pub status: u16,
    /// Content-Type prefix.
    #[serde(default)]
    pub content_type: Option<String>,
    /// JSON fields that must be equal (`"$model"` = the target's model).
    #[serde(default)]
    pub body: BTreeMap<String, Value>,
    /// Substrings the body must contain.
    #[serde(default)]
    pub body_contains: Vec<String>,
    /// Least wall time of the request, ms.
    #[serde(default)]
    pub min_ms: Option<f64>,
    /// Most wall time of the request, ms.
    #[serde(default)]
    pub max_ms: Option<f64>,
}

/// How far under `min_ms` a request may finish and still count as having
/// run its step: asyncio wakes a timer up to its clock's resolution early,
/// and Python's loop-async answered a 300 ms `par` in 299.96 ms ("took
/// 300.0 ms, at least 300 ms expected", r54_3). A step not run is short by
/// the whole sleep, not by a millisecond.
pub const MIN_SLACK_MS: f64 = 1.0;

/// The embedded vectors.
pub fn contract() -> Vectors {
    serde_json::from_str(CONTRACT_JSON).expect("vectors/contract.json is valid (tested)")
}

/// How an answer differs from an [`Expect`]; `body` is the answer's body
/// cut to one line ([`short_body`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Mismatch {
    /// Another status.
    #[error("expected status {want}, got {got} (body: {body})")]
    Status { want: u16, got: u16, body: String },
    /// Another Content-Type.
    #[error("expected Content-Type {want}, got '{got}'")]
    ContentType { want: String, got: String },
    /// Fields expected, but the body is not JSON.
    #[error("body is not JSON ({why}): {body}")]
    NotJson { why: String, body: String },
    /// A field that should name the target's model is absent or empty.
    #[error("field '{field}' should name the model, body: {body}")]
    NoModel { field: String, body: String },
    /// A field with another value.
    #[error("field '{field}' should be {want}, body: {body}")]
    Field {
        field: String,
        want: Value,
        body: String,
    },
    /// A substring missing from the body.
    #[error("body lacks {needle:?}: {body}")]
    Lacks { needle: String, body: String },
    /// Faster than the step takes: the step did not run.
    #[error("took {ms:.1} ms, at least {min} ms expected: the step was not run")]
    TooFast { ms: f64, min: f64 },
    /// Slower than the contract allows.
    #[error("took {ms:.1} ms, at most {max} ms expected")]
    TooSlow { ms: f64, max: f64 },
}

impl Expect {
    /// `Ok(detail)` if `resp` matches, else how it differs.
    pub fn judge(&self, resp: &HttpResponse, model: Option<&str>) -> Result<String, Mismatch> {
        let ms = resp.elapsed.as_secs_f64() * 1e3;
        let short = short_body(&resp.body);
        if resp.status != self.status {
            return Err(Mismatch::Status {
                want: self.status,
                got: resp.status,
                body: short,
            });
        }
        let ctype = resp.header("content-type").unwrap_or("");
        if let Some(want) = &self.content_type {
            if !ctype.starts_with(want.as_str()) {
                return Err(Mismatch::ContentType {
                    want: want.clone(),
                    got: ctype.to_string(),
                });
            }
        }
        if !self.body.is_empty() {
            let json: Value = serde_json::from_str(&resp.body).map_err(|e| Mismatch::NotJson {
                why: e.to_string(),
                body: short.clone(),
            })?;
            for (field, want) in &self.body {
                let want = match (want, model) {
                    (Value::String(s), Some(m)) if s == "$model" => Value::String(m.to_string()),
                    (Value::String(s), None) if s == "$model" => {
                        if json
                            .get(field)
                            .and_then(Value::as_str)
                            .is_some_and(|s| !s.is_empty())
                        {
                            continue;
                        }
                        return Err(Mismatch::NoModel {
                            field: field.clone(),
                            body: short,
                        });
                    }
                    _ => want.clone(),
                };
                if json.get(field) != Some(&want) {
                    return Err(Mismatch::Field {
                        field: field.clone(),
                        want,
                        body: short,
                    });
                }
            }
        }
        for needle in &self.body_contains {
            if !resp.body.contains(needle.as_str()) {
                return Err(Mismatch::Lacks {
                    needle: needle.clone(),
                    body: short,
                });
            }
        }
        if let Some(min) = self.min_ms {
            if ms + MIN_SLACK_MS < min {
                return Err(Mismatch::TooFast { ms, min });
            }
        }
        if let Some(max) = self.max_ms {
            if ms > max {
                return Err(Mismatch::TooSlow { ms, max });
            }
        }
        Ok(format!(
            "{} {} {ms:.1} ms",
            resp.status,
            if ctype.is_empty() { "-" } else { ctype }
        ))
    }
}

/// The body cut to one readable line.
pub fn short_body(body: &str) -> String {
    let one_line: String = body
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one_line.chars().count() > 120 {
        one_line.chars().take(117).collect::<String>() + "..."
    } else {
        one_line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// r54_3: a 300 ms step answered in 299.96 ms ran it; one answered in
    /// 250 ms did not.
    #[test]
    fn r54_3_a_timer_woken_a_hair_early_still_ran_its_step() {
        let expect = Expect {
            status: 200,
            min_ms: Some(300.0),
            ..Expect::default()
        };
        let resp = |ms: f64| HttpResponse {
            status: 200,
            headers: Vec::new(),
            body: String::new(),
            elapsed: std::time::Duration::from_secs_f64(ms / 1000.0),
        };
        assert!(expect.judge(&resp(299.96), None).is_ok());
        let short = expect.judge(&resp(250.0), None).unwrap_err().to_string();
        assert!(short.contains("the step was not run"), "{short}");
    }

    #[test]
    fn embedded_vectors_parse() {
        let v = super::contract();
        assert_eq!(v.schema, "iolab.vectors.contract/1");
        assert!(v.cases.len() >= 10);
        assert!(v
            .cases
            .iter()
            .all(|c| c.expect.is_some() || c.unconfigured.is_some()));
    }
}
