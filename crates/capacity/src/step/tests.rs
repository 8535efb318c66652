//! The step's rules on real sockets: collapse, settle, Ctrl-C.

use super::*;

/// s13: after a step at 800/s answered none, Spring's virtual threads
/// failed 500/s half a second later and passed it 4 s later; a step
/// whose requests mostly failed, or were mostly late, is a collapse and
/// is rested after, one that missed only its p99 is not.
#[test]
fn r31_20_a_collapsed_step_is_rested_after() {
    let slo: Slo = "p99<500ms,success>=99.9%".parse().unwrap();
    let step = |success_ratio: f64, p50_ms: f64| StepRecord {
        success_ratio,
        p50_ms,
        duration_s: 2.0,
        ..StepRecord::default()
    };
    assert!(collapsed(&step(0.0, 0.0), &slo));
    assert!(collapsed(&step(0.407, 790.0), &slo));
    assert!(collapsed(&step(1.0, 501.0), &slo));
    assert!(!collapsed(&step(1.0, 120.0), &slo));
    assert!(!collapsed(&step(0.99, 499.0), &slo));
}

/// A step whose failures were answered with an error status at once is
/// no collapse (nothing queued); one whose failures were late or never
/// answered still is.
#[test]
fn r54_1_failures_answered_with_a_status_are_no_collapse() {
    let slo: Slo = "p99<200ms,success>=99%".parse().unwrap();
    let step = |ok: u64, non_2xx: u64| StepRecord {
        success_ratio: ok as f64 / 1000.0,
        p50_ms: 0.4,
        attack: iolab_model::attack::AttackResult {
            requests: iolab_model::attack::RequestCounts {
                planned: 1000,
                ok,
                non_2xx,
                ..Default::default()
            },
            ..Default::default()
        },
        ..StepRecord::default()
    };
    assert!(!collapsed(&step(499, 501), &slo), "half 500s at once");
    assert!(!collapsed(&step(0, 1000), &slo), "every request a fast 503");
    assert!(collapsed(&step(400, 100), &slo), "500 late or lost");
    assert!(collapsed(&step(0, 0), &slo), "nothing answered");
}

/// A target that answers 500 to every other request has drained when
/// it answers at once: the settle after a failed window sends one
/// round of three requests, not rounds until its 3 s deadline.
#[test]
fn r54_2_a_target_answering_errors_at_once_is_settled_in_one_round() {
    use std::io::{Read, Write};
    use std::sync::atomic::AtomicU64;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let seen = Arc::new(AtomicU64::new(0));
    let count = seen.clone();
    thread::spawn(move || {
        for conn in listener.incoming().take(64) {
            let (mut s, count) = (conn.unwrap(), count.clone());
            thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n @ 1..) = s.read(&mut buf) {
                    let k = buf[..n].windows(4).filter(|w| w == b"\r\n\r\n").count();
                    for _ in 0..k {
                        let n = count.fetch_add(1, Ordering::SeqCst);
                        let code = if n % 2 == 0 { "500 E" } else { "200 OK" };
                        let head = format!("HTTP/1.1 {code}\r\nContent-Length: 0\r\n\r\n");
                        if s.write_all(head.as_bytes()).is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    let probe = Probe {
        url,
        request: iolab_model::request::RequestSet::default(),
        timeout: Duration::from_secs(1),
        connections: iolab_model::driver::ConnectionMode::KeepAlive { max: 4 },
        gen_cpus: Vec::new(),
        target_cpus: Vec::new(),
        pid: None,
        metrics: None,
        cancel: Arc::new(AtomicBool::new(false)),
        live: None,
        work_base: None,
    };
    probe.settle(Duration::from_secs(1));
    assert_eq!(seen.load(Ordering::SeqCst), 3, "one round of three");
}

/// The rest after a collapse ends when Ctrl-C is pressed, not ten
/// seconds later.
#[test]
fn r31_21_ctrl_c_ends_the_rest_after_a_collapse() {
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = cancel.clone();
    let press = thread::spawn(move || {
        thread::sleep(Duration::from_millis(100));
        flag.store(true, Ordering::Relaxed);
    });
    let t = Instant::now();
    rest(&cancel, Duration::from_secs(10));
    press.join().unwrap();
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    // Not pressed, it lasts what it was given.
    let t = Instant::now();
    rest(&AtomicBool::new(false), Duration::from_millis(120));
    assert!(t.elapsed() >= Duration::from_millis(120));
}
