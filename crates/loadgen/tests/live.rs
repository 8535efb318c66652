//! The live feed (`--live`): the document as it stands while an attack runs,
//! made by the merge that makes the final one, against a real server on
//! 127.0.0.1.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{open, server};
use iolab_loadgen::{attack, Hooks, LiveFeed};

/// Mid-run the feed holds the intervals closed so far (their counts never
/// more than the final ones), then the final document itself.
#[test]
fn the_feed_shows_closed_intervals_then_the_final_document() {
    let srv = server::spawn(0);
    let plan = open(&srv.url("/delay?ms=20"), 100.0, 2.0);
    let feed = LiveFeed::new();
    let hooks = Hooks {
        live: Some(feed.clone()),
        ..Hooks::default()
    };
    assert!(feed.snapshot().is_none(), "nothing before the first attack");
    let watcher = {
        let feed = Arc::clone(&feed);
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            for _ in 0..200 {
                std::thread::sleep(Duration::from_millis(10));
                if let Some(s) = feed.snapshot() {
                    if s.finished {
                        break;
                    }
                    seen.push(s);
                }
            }
            seen
        })
    };
    let report = attack(&plan, &hooks).expect("attack runs");
    let seen = watcher.join().expect("watcher");
    let mid: Vec<_> = seen
        .iter()
        .filter(|s| !s.report.result.series.is_empty())
        .collect();
    assert!(!mid.is_empty(), "no interval closed while the attack ran");
    let last = mid.last().expect("one");
    let live = &last.report.result;
    let done = &report.result;
    assert!(live.requests.sent <= done.requests.sent);
    assert!(live.requests.ok <= done.requests.ok && live.requests.ok > 0);
    assert!(live.series.len() <= done.series.len());
    // Intervals sit on the final clock and hold no more than the final
    // ones (a thread may not have closed its part yet).
    for (a, b) in live.series.iter().zip(&done.series) {
        assert_eq!(a.t_s, b.t_s);
        assert!(a.sent <= b.sent && a.ok <= b.ok, "{a:?} vs {b:?}");
    }
    assert!(live.latency_ms.p50 > 0.0, "{:?}", live.latency_ms);
    assert!(last.in_flight <= live.requests.sent);
    let end = feed.snapshot().expect("finished");
    assert!(end.finished);
    assert_eq!(end.report.result, report.result);
    assert_eq!(end.dropped_frames, 0);
}
