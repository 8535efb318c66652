//! Rates held against one of the lab's copies ([`super::calibrate`]): a
//! warm-up, then holds until two in a row cost alike, or rounds of B's
//! copy at each new prediction.

use std::time::Duration;

use iolab_model::capacity::{CpuSource, Slo};
use iolab_model::whatif::{next_rate, RateCost, SETTLED};
use iolab_predict::fit::cpu;

use crate::preset::Rig;
use crate::warm::{Warm, STEADY};
use crate::Bench;

/// Most rates B's copy is measured at (each after the last prediction).
pub const ROUNDS: usize = 5;

/// Most holds before a copy's cost is called steady or given up.
pub const WARM_HOLDS: usize = 10;

/// Shortest measured hold.
pub const MIN_HOLD: Duration = Duration::from_secs(2);

/// Rates held against one copy.
pub struct Holds<'a> {
    slo: &'a Slo,
    max_rps: f64,
    probe: &'a dyn Bench,
    hold: Duration,
    source: CpuSource,
}

impl<'a> Holds<'a> {
    pub fn on(rig: &'a Rig<'a>, probe: &'a dyn Bench, hold: Duration, source: CpuSource) -> Self {
        Holds::new(rig.slo, rig.options.max_rps, probe, hold, source)
    }

    /// Holds of `hold` against `probe`'s target under `slo`, no rate above
    /// `max_rps`, each read from `source`'s CPU.
    pub fn new(
        slo: &'a Slo,
        max_rps: f64,
        probe: &'a dyn Bench,
        hold: Duration,
        source: CpuSource,
    ) -> Self {
        Holds {
            slo,
            max_rps,
            probe,
            hold,
            source,
        }
    }

    /// Ctrl-C (the rig's, which every probe carries).
    fn cancelled(&self) -> bool {
        self.probe.cancelled()
    }

    /// Serve `warm_requests` at half `rate` (where no queue builds: a copy
    /// at A's rate can be at its own capacity, and a full-size Ruby copy
    /// warmed there answered nothing within the timeout), then hold `rate`
    /// until two holds in a row cost within [`STEADY`] of each other, or of
    /// `scale` ms when larger (a JIT has compiled, pools are full), at most
    /// [`WARM_HOLDS`] holds: every hold measured, in order (the last two's
    /// spread says how steady they were); it stops at a hold that answered
    /// nothing.
    pub fn settled(
        &self,
        rate: f64,
        warm_requests: f64,
        scale: f64,
    ) -> Result<Vec<RateCost>, String> {
        let warm = Warm {
            requests: warm_requests,
            rate: rate / 2.0,
        };
        warm.serve(self.probe, self.slo)?;
        let mut holds = vec![self.cost(rate)?];
        while holds.len() < WARM_HOLDS && !self.cancelled() {
            let now = self.cost(rate)?;
            holds.push(now);
            let [a, b] = [holds[holds.len() - 2].ms, now.ms];
            let (Some(a), Some(b)) = (a, b) else {
                break;
            };
            if (a - b).abs() <= STEADY * b.max(scale) {
                break;
            }
        }
        Ok(holds)
    }

    /// `n` holds at `rate`, no warm-up (the probe's target is warm): every
    /// hold, in order.
    pub fn again(&self, rate: f64, n: usize) -> Result<Vec<RateCost>, String> {
        let mut holds = Vec::with_capacity(n);
        while holds.len() < n && !self.cancelled() {
            holds.push(self.cost(rate)?);
        }
        Ok(holds)
    }

    /// B's copy from `first`: each rate's cost, then B predicted with it
    /// (`predict`), and the next rate, until the prediction settles, the
    /// copy is bracketed, or [`ROUNDS`] rates were held; `said` hears each.
    pub fn rounds(
        &self,
        first: f64,
        warm_requests: f64,
        predict: &dyn Fn(f64) -> Option<f64>,
        said: &dyn Fn(f64, &RateCost, Option<f64>),
    ) -> Result<Vec<RateCost>, String> {
        let max_rps = self.max_rps;
        let mut rate = first.min(max_rps);
        self.settled(rate, warm_requests, 0.0)?;
        let mut tried: Vec<RateCost> = Vec::new();
        for _ in 0..ROUNDS {
            let cost = self.cost(rate)?;
            tried.push(cost);
            let met = tried.iter().rev().filter(|r| r.met).find_map(|r| r.ms);
            let predicted = met.and_then(predict);
            said(rate, &cost, predicted);
            // Failed with nothing met yet: below it, by the bracket's rule.
            let Some(next) = predicted.or((!cost.met).then_some(rate)) else {
                break;
            };
            let next = next_rate(&tried, next).min(max_rps);
            if (next - rate).abs() <= SETTLED * rate || self.cancelled() {
                break;
            }
            rate = next;
        }
        Ok(tried)
    }

    /// Hold `rate` and read the CPU per answered request (and the cores'
    /// beside the process tree's). A hold that failed the objective is
    /// recovered from as a search's failed step is, before the next: a
    /// full-size Spring copy (virtual threads, `sleep:361`) held 7,682/s
    /// first, answered none, then failed 3,841, 1,920 and 960/s one after
    /// the other with nothing between and passed only 480/s, so B was held
    /// to 720/s and its search then passed 4,800/s (s15).
    fn cost(&self, rate: f64) -> Result<RateCost, String> {
        let s = self.probe.step_then_recover(self.slo, rate, self.hold)?;
        let cores = (self.source == CpuSource::Process)
            .then(|| cpu::at(&s, CpuSource::Cores))
            .flatten();
        Ok(RateCost {
            rate_rps: rate,
            ms: cpu::at(&s, self.source),
            cores_ms: cores,
            met: s.passed,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Write};
    use std::net::{TcpListener, TcpStream};
    use std::sync::atomic::AtomicBool;
    use std::sync::{Arc, Mutex};
    use std::thread;

    use iolab_model::driver::ConnectionMode;
    use iolab_model::request::RequestSet;

    use super::*;
    use crate::Probe;

    /// One worker behind a thread per connection, `work` a request: 1/work
    /// req/s at most, and a request whose client gave up is still worked
    /// (its thread already waits for the worker), as a real backlog is.
    fn one_worker(work: Duration) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let worker = Arc::new(Mutex::new(()));
        thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let worker = worker.clone();
                thread::spawn(move || serve(conn, &worker, work));
            }
        });
        url
    }

    fn serve(conn: TcpStream, worker: &Mutex<()>, work: Duration) {
        let mut out = conn.try_clone().unwrap();
        let mut lines = BufReader::new(conn).lines();
        // One request per blank line (GETs: no body).
        while let Some(Ok(_request_line)) = lines.next() {
            for line in lines.by_ref() {
                if line.map_or(true, |l| l.is_empty()) {
                    break;
                }
            }
            {
                let _held = worker.lock().unwrap();
                thread::sleep(work);
            }
            let ok = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
            if out.write_all(ok).is_err() {
                return;
            }
        }
    }

    /// A hold that failed is recovered from before the next: a full-size
    /// Spring copy failed 7,682/s, then 3,841, 1,920 and 960/s back to
    /// back and passed only 480/s, so B was held to 720/s where it then
    /// held 4,800 (s15). Here a 20/s server held at 60/s leaves a second's
    /// backlog; a hold at 5/s just after it passes only once it drained.
    #[test]
    fn r31_22_a_copy_recovers_after_a_failed_hold_before_the_next() {
        let url = one_worker(Duration::from_millis(50));
        let slo: Slo = "p99<300ms,success>=99%".parse().unwrap();
        let probe = Probe {
            url,
            request: RequestSet::default(),
            timeout: Duration::from_secs(1),
            connections: ConnectionMode::KeepAlive { max: 64 },
            gen_cpus: Vec::new(),
            target_cpus: Vec::new(),
            pid: None,
            metrics: None,
            cancel: Arc::new(AtomicBool::new(false)),
            live: None,
            work_base: None,
        };
        let holds = Holds {
            slo: &slo,
            max_rps: 1e5,
            probe: &probe,
            hold: Duration::from_secs(1),
            source: CpuSource::Process,
        };
        let over = holds.cost(60.0).unwrap();
        assert!(!over.met, "60/s on a 20/s server met {slo:?}");
        let under = holds.cost(5.0).unwrap();
        assert!(under.met, "5/s after the failed hold: {under:?}");
    }
}
