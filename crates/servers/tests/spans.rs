//! `--spans N` on every built-in model, served in-process over real sockets:
//! eight requests at once, then `GET /spans` says who held what, each model
//! in its own way (see `iolab_servers::spans`).

use std::time::Duration;

use iolab_model::spans::{SpanState, Timeline};
use iolab_model::{ModelKind, ModelParams};
use iolab_servers::{start, ServeConfig};
use iolab_verify::client::get;

const STEPS: &str = "seq(sleep:30,sleep:10)";
const N: usize = 8;

fn serve(model: ModelKind, spans: Option<u32>) -> iolab_servers::Running {
    let mut config = ServeConfig::new(model);
    config.grace = Duration::from_secs(1);
    config.spans = spans;
    config.params = ModelParams {
        threads: Some(2),
        workers: Some(1),
        offload: Some(2),
        ..Default::default()
    };
    start(config, "127.0.0.1:0".parse().unwrap()).unwrap()
}

fn spans_of(url: &str) -> Timeline {
    let r = get(&format!("{url}/spans"), Duration::from_secs(5)).unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    serde_json::from_str(&r.body).expect("an iolab.spans/1 document")
}

fn load(url: &str) {
    std::thread::scope(|s| {
        for _ in 0..N {
            s.spawn(|| {
                let r = get(
                    &format!("{url}/work?steps={STEPS}"),
                    Duration::from_secs(10),
                )
                .unwrap();
                assert_eq!(r.status, 200, "{}", r.body);
            });
        }
    });
}

fn count(t: &Timeline, state: SpanState) -> usize {
    t.spans.iter().filter(|s| s.state == state).count()
}

#[test]
fn every_model_says_who_held_what() {
    for model in ModelKind::built_in() {
        let server = serve(model, Some(N as u32));
        let url = server.url();
        // A warm-up request, then a fresh sample: the warm-up is not in it.
        load(&url);
        let r = get(&format!("{url}/spans?open"), Duration::from_secs(5)).unwrap();
        assert_eq!(r.body, format!("{{\"ok\":true,\"sample\":{N}}}"), "{model}");
        assert_eq!(
            spans_of(&url).sample.taken,
            0,
            "{model}: open drops the old sample"
        );
        load(&url);
        // One more request: the sample is full, it is not recorded.
        get(&format!("{url}/work?steps=sleep:1"), Duration::from_secs(5)).unwrap();
        let t = spans_of(&url);
        server.stop().unwrap();

        let what = format!("{model}: {t:#?}");
        assert_eq!((t.sample.taken as usize, t.sample.lost), (N, 0), "{what}");
        assert_eq!(t.requests.len(), N, "{what}");
        assert!(t.requests.iter().all(|r| r.status == Some(200)), "{what}");
        for s in &t.spans {
            assert_eq!(s.lane.is_some(), s.state.holds_thread(), "{what}");
            assert!(s.to_ms >= s.from_ms, "{what}");
        }
        let (held, free) = (count(&t, SpanState::IoHeld), count(&t, SpanState::IoFree));
        let names: Vec<&str> = t.lanes.iter().map(|l| l.name.as_str()).collect();
        match model {
            ModelKind::LoopAsync => {
                assert_eq!((held, free), (0, 2 * N), "{what}");
                assert!(t.lanes.is_empty(), "{what}");
            }
            ModelKind::LoopOffload => {
                assert_eq!((held, free), (2 * N, 0), "{what}");
                assert_eq!(names, ["offload", "offload"], "{what}");
                assert!(count(&t, SpanState::Queued) >= N, "{what}");
            }
            _ => {
                assert_eq!((held, free), (2 * N, 0), "{what}");
                assert_eq!(count(&t, SpanState::Running), N, "{what}");
                let lanes = match model {
                    ModelKind::Sequential | ModelKind::LoopBlocking => 1,
                    ModelKind::Pool => 2,
                    _ => N,
                };
                assert_eq!(t.lanes.len(), lanes, "{what}");
            }
        }
        if model == ModelKind::Pool {
            // Eight at once on two threads: six waited at least one 40 ms round.
            let long = t
                .spans
                .iter()
                .filter(|s| s.state == SpanState::Queued && s.to_ms - s.from_ms >= 30.0)
                .count();
            assert!(long >= N - 2, "{what}");
        }
    }
}

#[test]
fn without_spans_the_endpoint_says_how_to_get_them() {
    let server = serve(ModelKind::Pool, None);
    let r = get(&format!("{}/spans", server.url()), Duration::from_secs(5)).unwrap();
    server.stop().unwrap();
    assert_eq!(r.status, 404);
    assert!(r.body.contains("--spans N"), "{}", r.body);
}
