//! The timeline of a small fixed run: a pool of two threads, five requests
//! of one 100 ms blocking call, a 250 ms client timeout; pinned as SVG.

use iolab_model::spans::*;

use super::*;

fn span(req: u32, state: SpanState, lane: Option<u32>, from_ms: f64, to_ms: f64) -> Span {
    Span {
        req,
        state,
        lane,
        from_ms,
        to_ms,
    }
}

/// Requests every 20 ms; two threads; each holds its thread 100 ms; the
/// client gives up after 200 ms (the last request).
pub(crate) fn small_run() -> Timeline {
    let mut t = Timeline::new(SpanSource::Target, 5, SampleRule::First);
    t.origin_unix_ms = Some(1_700_000_000_000.0);
    t.lanes = (0..2)
        .map(|id| Lane {
            id,
            name: "iolab-pool".into(),
        })
        .collect();
    let mut free_at = [0.0f64; 2];
    let mut client = Vec::new();
    for req in 0..5u32 {
        let arrive = f64::from(req) * 20.0;
        let lane = if free_at[0] <= free_at[1] { 0 } else { 1 };
        let start = arrive.max(free_at[lane]);
        let end = start + 101.0;
        free_at[lane] = end;
        if start > arrive {
            t.spans
                .push(span(req, SpanState::Queued, None, arrive, start));
        }
        t.spans
            .push(span(req, SpanState::Running, Some(lane as u32), start, end));
        t.spans.push(span(
            req,
            SpanState::IoHeld,
            Some(lane as u32),
            start + 0.5,
            end - 0.5,
        ));
        t.requests.push(SpanRequest {
            req,
            accepted_ms: arrive,
            done_ms: Some(end),
            status: Some(200),
        });
        let timed_out = end - arrive > 200.0;
        client.push(ClientRequest {
            sent_ms: arrive,
            done_ms: Some(if timed_out { arrive + 200.0 } else { end + 0.3 }),
            outcome: if timed_out {
                ClientOutcome::Timeout
            } else {
                ClientOutcome::Ok
            },
        });
    }
    t.client = Some(ClientView {
        timeout_ms: 200.0,
        requests: client,
    });
    t.sample.taken = 5;
    t.sort();
    t
}

fn picture(t: &Timeline) -> (String, usize) {
    render(&Picture {
        timeline: t,
        id: "timeline-small",
        title: "pool(threads=2) · rate=50",
        subtitle: "measured on the target: the first 5 requests",
        end_ms: nice_end(t.end_ms()),
        group: "tl-1",
    })
}

#[test]
fn a_small_run_draws_as_pinned() {
    let (svg, points) = picture(&small_run());
    insta::assert_snapshot!("timeline-small", svg);
    // Lanes: running and IO held per lane; no thread: queued; client: ok, timed out.
    assert_eq!(points, 2 * 2 + 1 + 2);
}

#[test]
fn the_svg_is_well_formed_and_every_path_has_its_tooltip() {
    let (svg, points) = picture(&small_run());
    let doc = roxmltree::Document::parse(&svg).expect("well-formed");
    let tipped = doc
        .descendants()
        .filter(|n| n.has_tag_name("path"))
        .filter(|n| n.children().any(|k| k.has_tag_name("title")))
        .count();
    assert_eq!(tipped, points);
    let root = doc.root_element();
    assert_eq!(root.attribute("data-tl-t1"), Some("400"));
    assert!(doc
        .descendants()
        .any(|n| n.attribute("class") == Some("tl-zoom")));
    assert!(svg.contains("client: 1 timed out"), "{svg}");
}

#[test]
fn a_timeline_without_threads_or_client_still_draws() {
    let mut t = small_run();
    t.lanes.clear();
    t.spans.retain(|s| s.lane.is_none());
    t.client = None;
    let (svg, points) = picture(&t);
    assert_eq!(points, 1);
    assert!(!svg.contains("client"));
}

#[test]
fn threads_named_one_by_one_keep_their_names() {
    let mut t = small_run();
    for l in &mut t.lanes {
        l.name = format!("pool-{}", l.id);
    }
    let (svg, _) = picture(&t);
    assert!(svg.contains(">pool-1</text>"), "{svg}");
    assert!(!svg.contains("pool-1 1"), "{svg}");
    // Shared names are numbered (the snapshot's "pool 0", "pool 1").
    let (svg, _) = picture(&small_run());
    assert!(svg.contains(">pool 1</text>"), "{svg}");
}

#[test]
fn a_crowd_of_lanes_is_labelled_by_its_family() {
    assert_eq!(bands::family("pool-263"), "pool");
    assert_eq!(bands::family("iolab-pool"), "iolab-pool");
    assert_eq!(bands::family("worker7"), "worker7");
    assert_eq!(bands::family("-3"), "-3");
}
