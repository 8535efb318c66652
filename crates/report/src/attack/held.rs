//! The summary of a held-connection attack (WebSocket, SSE or gRPC streaming calls: a document
//! with `connections` and `messages` sections): how the connections ended,
//! what their messages came to, and the latencies that were measured (a
//! `-` for any that were not).

use iolab_model::attack::{AttackResult, ConnectionCounts, MessageCounts};

use super::{fact, pairs, Fact};
use crate::numbers::{count, ms, rate, secs};

/// How a held run was driven, e.g. `100 connections held, opened at 100/s`
/// (`calls ... started at` for gRPC streaming calls).
pub(super) fn how(r: &AttackResult) -> Option<String> {
    let c = r.connections.as_ref()?;
    let d = &r.driver;
    let (unit, opened) = match r.target.starts_with("grpc") {
        true => ("calls", "started"),
        false => ("connections", "opened"),
    };
    let mut how = format!(
        "{} {unit} held {} each, {opened} at {}/s",
        count(d.max_connections.into()),
        secs(c.hold_ms as f64 / 1e3),
        d.rate.map_or("-".into(), rate)
    );
    let m = r.messages.as_ref();
    if let Some((per_s, bytes)) = m.and_then(|m| m.rate_per_connection.zip(m.message_bytes)) {
        how.push_str(&format!(", {} msg/s each of {bytes} bytes", rate(per_s)));
    }
    Some(how)
}

/// The facts of a held run, in summary order; `None` for a request run.
pub(super) fn facts(r: &AttackResult) -> Option<Vec<Fact>> {
    let (c, m) = (r.connections.as_ref()?, r.messages.as_ref()?);
    let l = &r.latency_ms;
    // Nothing attempted, nothing timed: `-`, never a `0s` that reads as measured.
    let lat = |v: f64| match c.attempted {
        0 => "-".to_string(),
        _ => ms(v),
    };
    let handshake = |v: f64| match c.established + r.requests.non_2xx {
        0 => "-".to_string(),
        _ => ms(v),
    };
    let codes = r.status_codes.iter().map(|(k, n)| (k.as_str(), *n));
    let errors = r.errors.classes().into_iter().filter(|(_, n)| *n > 0);
    let mut facts = vec![
        fact(
            "Connections",
            "attempted, established, failed",
            [c.attempted, c.established, c.failed_total()]
                .map(count)
                .to_vec(),
        ),
        fact("Failed", "class:count", vec![by_key(&c.failed)]),
        ended(c),
        fact(
            "Closed by",
            "server close code:count",
            vec![by_key(&c.closed_by_server)],
        ),
        fact("Broken", "class:count", vec![by_key(&c.broken)]),
        fact(
            "Handshakes",
            "min, 50, 99, max",
            [l.min, l.p50, l.p99, l.max].map(handshake).to_vec(),
        ),
        fact("Status Codes", "code:count", vec![pairs(codes)]),
        fact("Error Set", "class:count", vec![pairs(errors)]),
    ];
    facts.extend(messages(r, m));
    let g = &r.generator;
    let mut generator = fact(
        "Generator",
        "cpu, lag p99, lag max, threads",
        vec![
            secs(g.cpu_s),
            lat(g.lag_p99_ms),
            lat(g.lag_max_ms),
            count(g.threads as u64),
        ],
    );
    generator.note = format!("  (elapsed {})", secs(r.elapsed_s));
    facts.push(generator);
    Some(facts)
}

fn by_key(m: &std::collections::BTreeMap<String, u64>) -> String {
    pairs(m.iter().map(|(k, n)| (k.as_str(), *n)))
}

fn ended(c: &ConnectionCounts) -> Fact {
    let sum = |m: &std::collections::BTreeMap<String, u64>| m.values().sum::<u64>();
    fact(
        "Ended",
        "held, closed by server, broken, open at end",
        [
            c.held,
            sum(&c.closed_by_server),
            sum(&c.broken),
            c.open_at_end,
        ]
        .map(count)
        .to_vec(),
    )
}

/// The messages' counts, rate and latency (echo or push).
fn messages(r: &AttackResult, m: &MessageCounts) -> Vec<Fact> {
    let mut counts = fact(
        "Messages",
        "sent, answered, lost, in flight, late",
        [m.sent, m.answered, m.lost, m.in_flight_at_end, m.late]
            .map(count)
            .to_vec(),
    );
    if m.behind > 0 {
        counts.note = format!(" ({} sent behind schedule: socket busy)", count(m.behind));
    }
    let per_s = match r.elapsed_s > 0.0 && m.answered > 0 {
        true => rate(m.answered as f64 / r.elapsed_s),
        false => "-".into(),
    };
    let mut answered = fact("Message rate", "answered", vec![per_s]);
    answered.note = " msg/s (over the elapsed time)".into();
    let values = match &m.latency_ms {
        Some(l) => [l.min, l.mean, l.p50, l.p90, l.p99, l.p999, l.max]
            .map(ms)
            .to_vec(),
        None => vec!["-".to_string(); 7],
    };
    let mut latency = fact("Message lat.", "min, mean, 50, 90, 99, 99.9, max", values);
    latency.note = match m.latency_from.as_str() {
        "push" => "  (from the server's send stamp: one host's clock)".into(),
        _ => "  (from each message's intended send)".into(),
    };
    vec![counts, answered, latency]
}

#[cfg(test)]
mod tests {
    use iolab_model::attack::{AttackResult, ConnectionCounts, MessageCounts};

    #[test]
    fn a_held_run_with_nothing_answered_prints_no_latency() {
        let mut failed = std::collections::BTreeMap::new();
        failed.insert("connect".to_string(), 3);
        let r = AttackResult {
            connections: Some(ConnectionCounts {
                attempted: 3,
                failed,
                ..ConnectionCounts::default()
            }),
            messages: Some(MessageCounts {
                latency_from: "echo".into(),
                ..MessageCounts::default()
            }),
            ..AttackResult::default()
        };
        let text = super::super::text(&r);
        assert!(text.contains("connect:3"), "{text}");
        let line = |label: &str| {
            text.lines()
                .find(|l| l.starts_with(label))
                .unwrap()
                .to_string()
        };
        assert!(line("Handshakes").ends_with("-, -, -, -"), "{text}");
        assert!(
            line("Message lat.").contains("-, -, -, -, -, -, -"),
            "{text}"
        );
        assert!(!text.contains("0.00ms") && !text.contains("0ms"), "{text}");
    }
}
