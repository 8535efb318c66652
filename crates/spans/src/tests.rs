//! The recorder on real threads and a real tokio runtime.

use std::time::{Duration, Instant};

use iolab_model::spans::{SampleRule, SpanSource, SpanState};

use super::*;

#[test]
fn the_first_n_requests_are_sampled_and_no_more() {
    let rec = Recorder::new(3);
    let tags: Vec<_> = (0..5).map(|_| rec.admit()).collect();
    assert_eq!(
        tags.iter()
            .map(|t| t.as_ref().map(Tag::req))
            .collect::<Vec<_>>(),
        [Some(0), Some(1), Some(2), None, None]
    );
    assert!(!rec.is_open());
    rec.open();
    assert!(rec.is_open());
    assert_eq!(rec.admit().map(|t| t.req()), Some(0));
}

#[test]
fn spans_land_on_the_lane_of_the_thread_that_held_them() {
    let rec = Recorder::new(4);
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..2 {
            let rec = rec.clone();
            s.spawn(move || {
                for _ in 0..2 {
                    let tag = rec.admit().unwrap();
                    let queued = Instant::now();
                    on_thread(Some(&tag), Some(queued), SpanState::Running, None, || {
                        held(|| std::thread::sleep(Duration::from_millis(2)));
                    });
                    tag.request(queued, Instant::now(), Some(200));
                }
            });
        }
    });
    // Not sampled: outside any request, the helpers record nothing.
    held(|| ());
    let t = rec.timeline(SpanSource::Target);
    assert_eq!(t.sample.size, 4);
    assert_eq!(t.sample.rule, SampleRule::First);
    assert_eq!((t.sample.taken, t.sample.lost), (4, 0));
    assert_eq!(t.lanes.len(), 2, "{:?}", t.lanes);
    assert_eq!(t.requests.len(), 4);
    assert!(t.requests.iter().all(|r| r.status == Some(200)));
    let count = |s: SpanState| t.spans.iter().filter(|x| x.state == s).count();
    assert_eq!(count(SpanState::Queued), 4);
    assert_eq!(count(SpanState::Running), 4);
    assert_eq!(count(SpanState::IoHeld), 4);
    for s in &t.spans {
        assert_eq!(s.lane.is_some(), s.state.holds_thread(), "{s:?}");
        assert!(s.to_ms >= s.from_ms);
    }
    // Each held wait sits inside its request's running span, on its lane.
    for io in t.spans.iter().filter(|s| s.state == SpanState::IoHeld) {
        let run = t
            .spans
            .iter()
            .find(|s| s.state == SpanState::Running && s.req == io.req)
            .unwrap();
        assert_eq!(run.lane, io.lane);
        assert!(run.from_ms <= io.from_ms && io.to_ms <= run.to_ms);
        assert!(io.to_ms - io.from_ms >= 1.9, "{io:?}");
    }
    let origin = t.origin_unix_ms.unwrap();
    assert!(origin > 1.6e12, "{origin}");
    assert!(t0.elapsed() < Duration::from_secs(60));
}

#[test]
fn opening_a_new_sample_drops_the_old_one() {
    let rec = Recorder::new(2);
    let old = rec.admit().unwrap();
    let now = Instant::now();
    old.span(SpanState::Queued, now, now);
    rec.open();
    // A straggler of the old sample records nothing into the new one.
    old.span(SpanState::Queued, now, now);
    let tag = rec.admit().unwrap();
    tag.span(SpanState::IoFree, now, Instant::now());
    let t = rec.timeline(SpanSource::Target);
    assert_eq!(t.spans.len(), 1);
    assert_eq!(t.spans[0].state, SpanState::IoFree);
    assert_eq!(t.sample.taken, 1);
}

#[test]
fn a_sample_past_its_room_counts_what_it_lost() {
    let rec = Recorder::new(1);
    let tag = rec.admit().unwrap();
    let now = Instant::now();
    for _ in 0..SLOTS_PER_REQUEST + 5 {
        tag.span(SpanState::Queued, now, now);
    }
    let t = rec.timeline(SpanSource::Batch);
    assert_eq!(t.spans.len(), SLOTS_PER_REQUEST);
    assert_eq!(t.sample.lost, 5);
}

#[test]
fn a_task_keeps_its_request_across_awaits_and_threads() {
    let rec = Recorder::new(8);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut handles = Vec::new();
        for _ in 0..3 {
            let tag = rec.admit().unwrap();
            handles.push(tokio::spawn(tag.scope(async {
                free(tokio::time::sleep(Duration::from_millis(3))).await;
                running(|| std::hint::black_box(1 + 1));
            })));
        }
        for h in handles {
            h.await.unwrap();
        }
        // A task that is not sampled records nothing.
        free(tokio::time::sleep(Duration::from_millis(1))).await;
    });
    let t = rec.timeline(SpanSource::Target);
    let free: Vec<_> = t
        .spans
        .iter()
        .filter(|s| s.state == SpanState::IoFree)
        .collect();
    assert_eq!(free.len(), 3);
    assert!(free
        .iter()
        .all(|s| s.lane.is_none() && s.to_ms - s.from_ms >= 2.9));
    let run = t.spans.iter().filter(|s| s.state == SpanState::Running);
    assert_eq!(run.count(), 3);
    assert!(t.lanes.iter().all(|l| !l.name.is_empty()));
}
