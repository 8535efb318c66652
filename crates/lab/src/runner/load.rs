//! The load of a run: its attack plan against a target's URL, the warm-up
//! that precedes it, the attack itself with live progress forwarded to the
//! observer, and the settle that lets a warmed-up target drain.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use iolab_loadgen::{AttackError, Hooks, Progress, RequestRow};
use iolab_model::attack::{AttackPlan, AttackResult};
use iolab_model::experiment::{HttpWork, RunSpec};
use iolab_model::Driver;

use super::Ctx;
use crate::progress::Stage;
use iolab_telemetry as telemetry;

/// Clients of the warm-up load of an open-loop run: a closed loop of a few
/// clients opens connections and starts threads, but can never leave a
/// backlog behind (a slow model at a high rate would carry one into the
/// measured run).
const WARMUP_CLIENTS: u32 = 4;

/// The load plan of one HTTP run against `base` (a target's base URL): the
/// contract's `/work?steps=`, or a foreign target's own request.
pub(super) fn attack_plan(base: &str, w: &HttpWork, driver: Driver, cpus: &[usize]) -> AttackPlan {
    let (target, request) = match &w.foreign {
        Some(f) => (
            iolab_model::request::ForeignSpec::join(base, &f.request.url),
            f.requests(base),
        ),
        None => (w.body.work_url(base, &w.steps), Default::default()),
    };
    AttackPlan {
        connections: w.connections,
        timeout: w.timeout,
        interval: w.interval,
        threads: (!cpus.is_empty()).then_some(cpus.len()),
        cpus: cpus.to_vec(),
        // A pinned generator owns its core: spin so sends leave on time.
        spin: !cpus.is_empty(),
        request,
        ..AttackPlan::new(target, driver)
    }
}

/// The warm-up load: a few clients in a closed loop for the warm-up time
/// (a closed-loop run keeps its own clients), stopped sooner after
/// `max_requests` when the preset caps it (`warmup_requests`).
pub(super) fn warmup_driver(
    d: &Driver,
    warmup: Duration,
    max_requests: Option<u64>,
) -> Option<Driver> {
    if warmup.is_zero() || max_requests == Some(0) {
        return None;
    }
    let clients = match d {
        Driver::Open { .. } => WARMUP_CLIENTS,
        Driver::Closed { concurrency, .. } => *concurrency,
    };
    // More clients than requests would only open idle connections.
    let concurrency = max_requests.map_or(clients, |n| clients.min(n.min(u32::MAX as u64) as u32));
    Some(Driver::Closed {
        concurrency,
        requests: max_requests,
        duration: Some(warmup),
    })
}

impl Ctx<'_> {
    /// One attack with live progress (and the target's telemetry, as it is
    /// sampled) forwarded to the observer; the result,
    /// whether it was cancelled, and its request rows (`plan.record_requests`).
    pub(super) fn attack(
        &self,
        spec: &RunSpec,
        stage: Stage,
        plan: &AttackPlan,
    ) -> Result<(AttackResult, bool, Vec<RequestRow>), AttackError> {
        let slot: Arc<Mutex<Option<Progress>>> = Arc::new(Mutex::new(None));
        let writer = Arc::clone(&slot);
        let hooks = Hooks {
            cancel: Some(Arc::clone(&self.opts.cancel)),
            progress: Some(Arc::new(move |p: &Progress| {
                if let Ok(mut s) = writer.lock() {
                    *s = Some(p.clone());
                }
            })),
            live: self.observer.feed(),
        };
        let done = AtomicBool::new(false);
        thread::scope(|s| {
            s.spawn(|| {
                while !done.load(Ordering::Relaxed) {
                    thread::sleep(Duration::from_millis(100));
                    let live = slot.lock().ok().and_then(|mut l| l.take());
                    if let Some(l) = live {
                        self.observer.live(spec, stage, &l);
                    }
                    for (at, point) in self.telemetry.take() {
                        self.observer.telemetry(spec, at, &point);
                    }
                }
            });
            let out = iolab_loadgen::attack(plan, &hooks);
            done.store(true, Ordering::Relaxed);
            out.map(|r| (r.result, r.cancelled, r.requests))
        })
    }

    /// After warm-up, wait until the target has no request in flight or
    /// queued (read from its metrics at `metrics`), at most the timeout
    /// (capped at 1 s) plus half a second.
    pub(super) fn settle(&self, metrics: &str, timeout: Duration) {
        let url = format!("{metrics}/metrics");
        let deadline =
            Instant::now() + timeout.min(Duration::from_secs(1)) + Duration::from_millis(500);
        while Instant::now() < deadline && !self.opts.cancelled() {
            match crate::http::get(&url, Duration::from_millis(200)) {
                Ok(r) if r.status == 200 => {
                    let m = telemetry::parse_metrics(&r.body);
                    match (m.in_flight, m.queued) {
                        (Some(f), q) if f <= 1.0 && q.unwrap_or(0.0) == 0.0 => return,
                        (None, _) => return,
                        _ => {}
                    }
                }
                // A busy target that cannot answer is still draining.
                Ok(_) | Err(_) => {}
            }
            thread::sleep(Duration::from_millis(50));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warmup_is_a_few_clients_that_leave_no_backlog() {
        let d = Driver::constant(800.0, Duration::from_secs(5));
        let w = warmup_driver(&d, Duration::from_secs(1), None).unwrap();
        assert_eq!(
            w,
            Driver::Closed {
                concurrency: WARMUP_CLIENTS,
                requests: None,
                duration: Some(Duration::from_secs(1))
            }
        );
        assert!(warmup_driver(&d, Duration::ZERO, None).is_none());
        let c = Driver::Closed {
            concurrency: 10,
            requests: Some(100),
            duration: None,
        };
        let w = warmup_driver(&c, Duration::from_millis(300), None).unwrap();
        assert_eq!(
            w,
            Driver::Closed {
                concurrency: 10,
                requests: None,
                duration: Some(Duration::from_millis(300))
            }
        );
    }

    /// Issue 35: ~74 warm-up requests hit a real endpoint before a
    /// 40-request run. `warmup_requests` caps them (and the clients).
    #[test]
    fn r35_the_warm_up_stops_at_its_request_cap() {
        let d = Driver::constant(800.0, Duration::from_secs(5));
        let w = warmup_driver(&d, Duration::from_secs(1), Some(3)).unwrap();
        assert_eq!(
            w,
            Driver::Closed {
                concurrency: 3,
                requests: Some(3),
                duration: Some(Duration::from_secs(1))
            }
        );
        let w = warmup_driver(&d, Duration::from_secs(1), Some(20)).unwrap();
        assert!(matches!(
            w,
            Driver::Closed {
                concurrency: WARMUP_CLIENTS,
                requests: Some(20),
                ..
            }
        ));
    }
}
