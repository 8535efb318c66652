//! A recorder's current sample as an `iolab.spans/1` [`Timeline`]: times in
//! ms from the moment the sample opened, lanes renumbered in order of first
//! use (so the picture's lanes read top to bottom as threads joined in).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::Ordering;

use iolab_model::spans::{ms, Lane, Span, SpanRequest, SpanSource, Timeline};

use crate::buffer::Kind;
use crate::{Recorder, RULE};

pub(crate) fn timeline(rec: &Recorder, source: SpanSource) -> Timeline {
    let gen = rec.gen();
    let opened = rec.opened_ns.load(Ordering::Relaxed);
    let records = rec.buffer.read(gen);
    let rel = |ns: u64| ms(ns.saturating_sub(opened));

    // Lanes in order of their first span's start.
    let mut first_use: BTreeMap<u32, u64> = BTreeMap::new();
    for r in &records {
        if let Some(l) = r.lane {
            let e = first_use.entry(l).or_insert(r.from);
            *e = (*e).min(r.from);
        }
    }
    let mut order: Vec<(u32, u64)> = first_use.into_iter().collect();
    order.sort_by_key(|&(lane, from)| (from, lane));
    let names = rec.lanes.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let renumber: BTreeMap<u32, u32> = order
        .iter()
        .enumerate()
        .map(|(i, &(lane, _))| (lane, i as u32))
        .collect();

    let mut t = Timeline::new(source, rec.size, RULE);
    t.origin_unix_ms = Some((rec.base_unix_ns + opened) as f64 / 1e6);
    t.lanes = order
        .iter()
        .map(|&(lane, _)| Lane {
            id: renumber[&lane],
            name: names
                .get(lane as usize)
                .cloned()
                .unwrap_or_else(|| "thread".into()),
        })
        .collect();
    let mut reqs = BTreeSet::new();
    for r in &records {
        reqs.insert(r.req);
        match r.kind {
            Kind::Span(state) => t.spans.push(Span {
                req: r.req,
                state,
                lane: r.lane.map(|l| renumber[&l]),
                from_ms: rel(r.from),
                to_ms: rel(r.to),
            }),
            Kind::Request => t.requests.push(SpanRequest {
                req: r.req,
                accepted_ms: rel(r.from),
                done_ms: Some(rel(r.to)),
                status: (r.status != 0).then_some(r.status),
            }),
        }
    }
    t.sample.taken = reqs.len() as u32;
    t.sample.lost = rec.buffer.lost();
    t.sort();
    t
}
