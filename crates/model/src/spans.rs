//! Who held what, when: the spans of a bounded sample of requests (or batch
//! tasks), the `iolab.spans/1` document pinned by `schema/spans.schema.json`.
//!
//! A target (`iolab serve --spans N`, `GET /spans`), a batch (`iolab batch
//! --spans N`) or the simulation (`iolab predict`) records, for the first N
//! requests after the sample opened, when each piece of work started and
//! ended and on which thread: queued (holding no thread), running on thread
//! T, waiting on IO holding T, or waiting on IO holding none; and when each
//! request was accepted and done. The load generator adds the client's view
//! (sent, answered or timed out). Times are milliseconds from the moment the
//! sample opened (`origin_unix_ms`), so the server's and the client's spans
//! of one run share one clock.

use serde::{Deserialize, Serialize};

/// The schema tag of a [`Timeline`].
pub const SPANS_SCHEMA: &str = "iolab.spans/1";

/// Most requests (tasks) one sample may hold: enough for every picture the
/// report draws, small enough that recording stays cheap and bounded.
pub const MAX_SAMPLE: u32 = 10_000;

/// Who recorded the spans.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SpanSource {
    /// A target serving HTTP (its `/spans`).
    Target,
    /// An in-process batch executor.
    Batch,
    /// The discrete-event simulation (a prediction).
    Simulation,
}

/// How the sample was chosen.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum SampleRule {
    /// The first N requests that reached the server after the sample opened
    /// (a batch: tasks 0..N in the order they are handed out). The picture
    /// of a run's start: how a pool fills and its queue grows.
    #[default]
    First,
}

/// The sample's size and how it was taken.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SpanSample {
    /// Requests (tasks) the sample may hold: N.
    pub size: u32,
    /// How they were chosen.
    pub rule: SampleRule,
    /// Requests actually in the sample (fewer than `size` when fewer came).
    pub taken: u32,
    /// Spans recorded but overwritten before they were read (a thread's
    /// ring was full): 0 means the sample is whole.
    #[serde(default)]
    pub lost: u64,
}

/// The state of a piece of a request's (task's) life.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum SpanState {
    /// Waiting for a thread (a pool's queue, an offload pool's queue),
    /// holding none.
    Queued,
    /// Running on a thread: the thread is held (CPU, parsing, answering, and
    /// on a thread model the whole request, its IO waits drawn on top).
    Running,
    /// Waiting on IO while holding a thread (a blocking call).
    IoHeld,
    /// Waiting on IO holding no thread (a timer, a non-blocking client).
    IoFree,
}

impl SpanState {
    /// Every state, in legend order.
    pub const ALL: [SpanState; 4] = [
        SpanState::Queued,
        SpanState::Running,
        SpanState::IoHeld,
        SpanState::IoFree,
    ];

    /// The name used in documents.
    pub fn as_str(self) -> &'static str {
        match self {
            SpanState::Queued => "queued",
            SpanState::Running => "running",
            SpanState::IoHeld => "io-held",
            SpanState::IoFree => "io-free",
        }
    }

    /// Does a span in this state hold a thread (and so sit on a lane)?
    pub fn holds_thread(self) -> bool {
        matches!(self, SpanState::Running | SpanState::IoHeld)
    }
}

/// One thread that held sampled work.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Lane {
    /// Referenced by [`Span::lane`]; lanes are numbered in order of first use.
    pub id: u32,
    /// The thread's name (e.g. `iolab-pool`, `iolab-loop`).
    pub name: String,
}

/// One piece of one sampled request's life.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Span {
    /// The request (task) within the sample, 0-based in order of arrival.
    pub req: u32,
    /// What it was doing.
    pub state: SpanState,
    /// The thread held ([`Lane::id`]); absent for a state that holds none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lane: Option<u32>,
    /// Start, ms from the origin.
    pub from_ms: f64,
    /// End, ms from the origin.
    pub to_ms: f64,
}

/// A sampled request as the server saw it: accepted, then done.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SpanRequest {
    /// The request (task) within the sample.
    pub req: u32,
    /// When the server first saw it (queued, or taken by a thread), ms.
    pub accepted_ms: f64,
    /// When its answer was ready, ms; absent if it never finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done_ms: Option<f64>,
    /// The HTTP status answered (targets), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
}

/// How a request ended for its client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ClientOutcome {
    /// A 2xx answer within the timeout.
    Ok,
    /// Another status, or a connection error.
    Error,
    /// No answer within the timeout.
    Timeout,
    /// Never sent (no connection in time).
    NotSent,
}

/// One request as its client saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClientRequest {
    /// When the schedule wanted it sent, ms from the origin.
    pub sent_ms: f64,
    /// When it ended (answer, error or timeout), ms; absent if never sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done_ms: Option<f64>,
    /// How it ended.
    pub outcome: ClientOutcome,
}

/// The load generator's view of the same run: the first requests it sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClientView {
    /// The client's timeout, ms (a request sent at t gives up at t + timeout).
    pub timeout_ms: f64,
    /// The first requests by intended send time (as many as the sample's size).
    pub requests: Vec<ClientRequest>,
}

/// The `iolab.spans/1` document: one run's sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Timeline {
    /// Always [`SPANS_SCHEMA`].
    pub schema: String,
    /// Who recorded it.
    pub source: SpanSource,
    /// The sample's size and rule.
    pub sample: SpanSample,
    /// When the sample opened (the origin of every time here), Unix ms;
    /// absent for a simulation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin_unix_ms: Option<f64>,
    /// The threads that held sampled work, in order of first use.
    pub lanes: Vec<Lane>,
    /// The pieces, ordered by start.
    pub spans: Vec<Span>,
    /// The sampled requests, in sample order.
    pub requests: Vec<SpanRequest>,
    /// The client's view, when a load generator sent the requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientView>,
}

impl Timeline {
    /// An empty timeline of a sample of `size` chosen by `rule`.
    pub fn new(source: SpanSource, size: u32, rule: SampleRule) -> Timeline {
        Timeline {
            schema: SPANS_SCHEMA.to_string(),
            source,
            sample: SpanSample {
                size,
                rule,
                taken: 0,
                lost: 0,
            },
            origin_unix_ms: None,
            lanes: Vec::new(),
            spans: Vec::new(),
            requests: Vec::new(),
            client: None,
        }
    }

    /// The latest time anything here ends, ms (0 when empty).
    pub fn end_ms(&self) -> f64 {
        let spans = self.spans.iter().map(|s| s.to_ms);
        let reqs = self.requests.iter().filter_map(|r| r.done_ms);
        let client = self
            .client
            .iter()
            .flat_map(|c| c.requests.iter().filter_map(|r| r.done_ms));
        spans.chain(reqs).chain(client).fold(0.0, f64::max)
    }

    /// Sort spans by start (then request, state), the order documents keep.
    pub fn sort(&mut self) {
        self.spans.sort_by(|a, b| {
            a.from_ms
                .total_cmp(&b.from_ms)
                .then(a.req.cmp(&b.req))
                .then(a.state.cmp(&b.state))
        });
        self.requests.sort_by_key(|r| r.req);
    }
}

/// A run's timelines in `runs.json`: what was measured and what the
/// simulation predicts for the same sample.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunSpans {
    /// Measured (the target's or the batch's spans, with the client's view).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<Timeline>,
    /// Predicted by the simulation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted: Option<Timeline>,
    /// Why `measured` is absent, when spans were asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

/// Milliseconds with microsecond precision, the resolution documents keep.
pub fn ms(ns: u64) -> f64 {
    (ns / 1_000) as f64 / 1e3
}

/// A span sample size outside 1..=[`MAX_SAMPLE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a span sample holds 1 to {MAX_SAMPLE} requests, not {0}")]
pub struct SampleSizeError(pub u32);

/// Check a requested sample size.
pub fn check_size(n: u32) -> Result<u32, SampleSizeError> {
    if n == 0 || n > MAX_SAMPLE {
        Err(SampleSizeError(n))
    } else {
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_and_rules_have_stable_names() {
        for s in SpanState::ALL {
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        assert!(SpanState::IoHeld.holds_thread() && !SpanState::IoFree.holds_thread());
        assert_eq!(serde_json::to_value(SampleRule::First).unwrap(), "first");
        assert_eq!(ms(1_234_567), 1.234);
        assert!(check_size(0).is_err() && check_size(MAX_SAMPLE + 1).is_err());
    }

    #[test]
    fn a_timeline_round_trips_and_knows_its_end() {
        let mut t = Timeline::new(SpanSource::Target, 2, SampleRule::First);
        t.lanes.push(Lane {
            id: 0,
            name: "iolab-pool".into(),
        });
        t.spans.push(Span {
            req: 1,
            state: SpanState::IoHeld,
            lane: Some(0),
            from_ms: 5.0,
            to_ms: 9.5,
        });
        t.spans.push(Span {
            req: 0,
            state: SpanState::Queued,
            lane: None,
            from_ms: 1.0,
            to_ms: 2.0,
        });
        t.client = Some(ClientView {
            timeout_ms: 100.0,
            requests: vec![ClientRequest {
                sent_ms: 0.5,
                done_ms: Some(12.0),
                outcome: ClientOutcome::Ok,
            }],
        });
        t.sort();
        assert_eq!(t.spans[0].req, 0);
        assert_eq!(t.end_ms(), 12.0);
        let back: Timeline = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!(back, t);
    }
}
