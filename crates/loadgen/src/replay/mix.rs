//! Recorded requests grouped into endpoints (method and route template)
//! with their shares: built one request at a time as a file is streamed
//! ([`MixBuilder`]), so a large log costs its endpoints and a capped
//! sample, not its size. The replay's safety rules apply here, where each
//! request is seen: state-changing methods are skipped unless allowed, and
//! credentials (`Cookie`, `Authorization`) are dropped unless kept by name.

use std::collections::{BTreeMap, HashMap};

use iolab_model::replay::EndpointKey;
use iolab_model::request::{check_header, RequestTemplate};

use super::route::Routes;

/// Recorded requests kept in order for a replay at the recorded times;
/// past it the replay sends the first ones and says so.
pub const MAX_SEQUENCE: usize = 100_000;
/// Most endpoints a mix holds: past it, new routes are grouped under
/// [`OTHER`] (a log whose paths carry slugs the id rule does not see would
/// otherwise make an endpoint, and a row, of every page).
pub const MAX_ENDPOINTS: usize = 1000;
/// The template of the routes past [`MAX_ENDPOINTS`].
pub const OTHER: &str = "(other routes)";
/// Sample requests kept per endpoint (varied ids for a `--rate` replay).
const SAMPLES: usize = 16;
/// Methods that change no state on a well-behaved server.
const SAFE_METHODS: [&str; 3] = ["GET", "HEAD", "OPTIONS"];
/// Headers the generator sets itself or that name a connection, not a request.
const DROPPED: [&str; 8] = [
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "te",
    "upgrade",
    "proxy-connection",
];
/// Credentials: dropped unless `--keep-auth` names them.
const CREDENTIALS: [&str; 3] = ["cookie", "authorization", "proxy-authorization"];

/// One request as a file recorded it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recorded {
    pub method: String,
    /// Path and query, e.g. `/api/orders/1?x=2` (the host is never kept).
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// When it was sent, Unix ms, when the file says.
    pub at_ms: Option<u64>,
    /// Its service time, ms, when the file says.
    pub service_ms: Option<f64>,
}

/// The replay's safety rules.
#[derive(Debug, Clone, Default)]
pub struct Safety {
    /// Send POST, PUT, PATCH, DELETE and other state-changing methods.
    pub allow_writes: bool,
    /// Credential headers to keep, lower case (`--keep-auth`).
    pub keep_auth: Vec<String>,
}

#[derive(Debug, Default)]
struct Acc {
    key: (String, String),
    count: u64,
    service_sum_ms: f64,
    service_n: u64,
    samples: Vec<RequestTemplate>,
}

/// Builds a [`Mix`] from recorded requests, in file order.
#[derive(Debug, Default)]
pub struct MixBuilder {
    routes: Routes,
    safety: Safety,
    index: HashMap<(String, String), usize>,
    accs: Vec<Acc>,
    sequence: Vec<Step>,
    skipped_writes: BTreeMap<String, u64>,
    dropped_headers: BTreeMap<String, u64>,
    folded: u64,
    total: u64,
}

/// One recorded request kept in order.
#[derive(Debug, Clone)]
pub struct Step {
    pub endpoint: u32,
    pub at_ms: Option<u64>,
    pub request: RequestTemplate,
}

/// What the safety rules left out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Skipped {
    /// Requests skipped, by method.
    pub writes: BTreeMap<String, u64>,
    /// Headers dropped, by lower-case name.
    pub headers: BTreeMap<String, u64>,
    /// Requests of routes past [`MAX_ENDPOINTS`], grouped under [`OTHER`].
    pub folded: u64,
}

/// A recording's endpoints, shares and samples.
#[derive(Debug, Clone)]
pub struct Mix {
    pub endpoints: Vec<EndpointKey>,
    samples: Vec<Vec<RequestTemplate>>,
    /// The first [`MAX_SEQUENCE`] kept requests, in file order.
    pub sequence: Vec<Step>,
    /// Requests kept (all of them, not only the sequence's).
    pub total: u64,
    pub skipped: Skipped,
}

impl MixBuilder {
    pub fn new(routes: Routes, safety: Safety) -> MixBuilder {
        MixBuilder {
            routes,
            safety,
            ..MixBuilder::default()
        }
    }

    /// Add one recorded request (or count it as skipped).
    pub fn add(&mut self, r: Recorded) {
        let method = r.method.to_ascii_uppercase();
        if !self.safety.allow_writes && !SAFE_METHODS.contains(&method.as_str()) {
            *self.skipped_writes.entry(method).or_default() += 1;
            return;
        }
        let headers = self.headers(r.headers);
        let mut key = (method.clone(), self.routes.template(&r.target));
        if self.accs.len() >= MAX_ENDPOINTS && !self.index.contains_key(&key) {
            key.1 = OTHER.to_string();
            self.folded += 1;
        }
        let next = self.accs.len();
        let i = *self.index.entry(key.clone()).or_insert(next);
        if i == next {
            self.accs.push(Acc {
                key,
                ..Acc::default()
            });
        }
        let request = RequestTemplate {
            method,
            url: r.target,
            headers,
            body: r.body,
        };
        let acc = &mut self.accs[i];
        acc.count += 1;
        if let Some(ms) = r.service_ms {
            acc.service_sum_ms += ms;
            acc.service_n += 1;
        }
        if acc.samples.len() < SAMPLES {
            acc.samples.push(request.clone());
        }
        if self.sequence.len() < MAX_SEQUENCE {
            self.sequence.push(Step {
                endpoint: i as u32,
                at_ms: r.at_ms,
                request,
            });
        }
        self.total += 1;
    }

    /// The headers a replay may send: no connection headers, no HTTP/2
    /// pseudo-headers, no credentials unless kept, none the checks refuse.
    fn headers(&mut self, headers: Vec<(String, String)>) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for (name, value) in headers {
            let lower = name.to_ascii_lowercase();
            if lower.starts_with(':') || DROPPED.contains(&lower.as_str()) {
                continue;
            }
            if CREDENTIALS.contains(&lower.as_str()) && !self.safety.keep_auth.contains(&lower) {
                *self.dropped_headers.entry(lower).or_default() += 1;
                continue;
            }
            if check_header(&name, &value).is_ok() {
                out.push((name, value));
            }
        }
        out
    }

    /// Requests seen so far, kept or skipped.
    pub fn seen(&self) -> u64 {
        self.total + self.skipped_writes.values().sum::<u64>()
    }

    /// The mix, endpoints most requests first.
    pub fn finish(self) -> Mix {
        let mut order: Vec<usize> = (0..self.accs.len()).collect();
        order.sort_by(|a, b| self.accs[*b].count.cmp(&self.accs[*a].count).then(a.cmp(b)));
        let mut rank = vec![0u32; order.len()];
        for (r, i) in order.iter().enumerate() {
            rank[*i] = r as u32;
        }
        let total = self.total;
        let mut accs: Vec<Option<Acc>> = self.accs.into_iter().map(Some).collect();
        let (mut endpoints, mut samples) = (Vec::new(), Vec::new());
        for i in order {
            let a = accs[i].take().expect("each index once");
            endpoints.push(EndpointKey {
                method: a.key.0,
                template: a.key.1,
                share: a.count as f64 / total.max(1) as f64,
                recorded: a.count,
                recorded_service_ms: (a.service_n > 0)
                    .then(|| a.service_sum_ms / a.service_n as f64),
            });
            samples.push(a.samples);
        }
        let mut sequence = self.sequence;
        for s in &mut sequence {
            s.endpoint = rank[s.endpoint as usize];
        }
        Mix {
            endpoints,
            samples,
            sequence,
            total,
            skipped: Skipped {
                writes: self.skipped_writes,
                headers: self.dropped_headers,
                folded: self.folded,
            },
        }
    }
}

impl Mix {
    /// `n` requests in the recorded shares (largest remainder, at least one
    /// per endpoint), interleaved smoothly (each endpoint spread over the
    /// list, not in runs), each endpoint's samples taken in turn; with the
    /// endpoint of each.
    pub fn weighted(&self, n: usize) -> (Vec<RequestTemplate>, Vec<u32>) {
        let counts = apportion(&self.endpoints, n.max(self.endpoints.len()));
        let total: u64 = counts.iter().sum();
        let mut credit = vec![0i64; counts.len()];
        let mut used = vec![0usize; counts.len()];
        let (mut list, mut of) = (Vec::new(), Vec::new());
        for _ in 0..total {
            // Smooth weighted round robin (nginx's upstream balancer).
            for (c, w) in credit.iter_mut().zip(&counts) {
                *c += *w as i64;
            }
            let best = (0..counts.len())
                .max_by_key(|i| (credit[*i], -(*i as i64)))
                .unwrap_or(0);
            credit[best] -= total as i64;
            let s = &self.samples[best];
            list.push(s[used[best] % s.len()].clone());
            used[best] += 1;
            of.push(best as u32);
        }
        (list, of)
    }

    /// The one line saying what the safety rules left out, if anything.
    pub fn skipped_line(&self) -> Option<String> {
        let mut parts = Vec::new();
        if !self.skipped.writes.is_empty() {
            let list: Vec<String> = self
                .skipped
                .writes
                .iter()
                .map(|(m, n)| format!("{n} {m}"))
                .collect();
            parts.push(format!(
                "skipped {} requests (they change state; --allow-writes sends them)",
                list.join(", ")
            ));
        }
        if !self.skipped.headers.is_empty() {
            let list: Vec<String> = self
                .skipped
                .headers
                .iter()
                .map(|(h, n)| format!("{h} x{n}"))
                .collect();
            parts.push(format!(
                "dropped {} (credentials; --keep-auth NAME keeps one)",
                list.join(", ")
            ));
        }
        if self.skipped.folded > 0 {
            parts.push(format!(
                "grouped {} requests of routes past the first {MAX_ENDPOINTS} endpoints as {OTHER} (--route TEMPLATE groups them)",
                self.skipped.folded
            ));
        }
        (!parts.is_empty()).then(|| format!("replay: {}", parts.join("; ")))
    }
}

/// Split `n` over the endpoints by share: largest remainder, at least one each.
fn apportion(endpoints: &[EndpointKey], n: usize) -> Vec<u64> {
    let total: u64 = endpoints.iter().map(|e| e.recorded).sum::<u64>().max(1);
    let exact: Vec<f64> = endpoints
        .iter()
        .map(|e| e.recorded as f64 * n as f64 / total as f64)
        .collect();
    let mut counts: Vec<u64> = exact.iter().map(|x| (x.floor() as u64).max(1)).collect();
    let mut left = (n as u64).saturating_sub(counts.iter().sum());
    let mut order: Vec<usize> = (0..exact.len()).collect();
    order.sort_by(|a, b| {
        (exact[*b] - exact[*b].floor()).total_cmp(&(exact[*a] - exact[*a].floor()))
    });
    for i in order {
        if left == 0 {
            break;
        }
        counts[i] += 1;
        left -= 1;
    }
    counts
}

#[cfg(test)]
mod tests;
