//! `thread-per-request`: a new OS thread for every task (Scala's `blocking{}`,
//! a servlet container with a huge pool). An optional cap (`max_threads`,
//! standing for `blocking{}`'s cores + 256) makes further calls wait for a
//! thread to finish, as Scala's ForkJoinPool does. When the OS refuses a
//! thread, that task fails, the failure is recorded and the batch goes on.

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use iolab_model::ModelParams;

use crate::{Ctx, Outcome};

pub(crate) fn run(ctx: &Ctx, params: &ModelParams) -> Outcome {
    let cap = params.max_threads.map(|c| c.max(1));
    let gauge = Gauge::new(cap);
    let mut spawned = 0u64;
    let mut refused = 0u64;
    let mut first_error = None;
    let mut spawn_total = Duration::ZERO;
    let mut spawn_max = Duration::ZERO;
    std::thread::scope(|s| {
        for i in 0..ctx.len() {
            if ctx.cancelled() {
                break;
            }
            gauge.acquire();
            let gauge = &gauge;
            let t0 = Instant::now();
            // A small name-less thread with the default stack: what a JVM or
            // std spawn would do, so the cost measured is the ordinary one.
            let res = std::thread::Builder::new().spawn_scoped(s, move || {
                ctx.run_blocking(i);
                gauge.release();
            });
            let took = t0.elapsed();
            match res {
                Ok(_) => {
                    spawned += 1;
                    spawn_total += took;
                    spawn_max = spawn_max.max(took);
                }
                Err(e) => {
                    gauge.release();
                    ctx.timings.fail(i);
                    refused += 1;
                    first_error.get_or_insert_with(|| (i + 1, gauge.alive(), e.to_string()));
                }
            }
        }
    });
    let failure = first_error.map(|(task, alive, e)| {
        format!("the OS refused a thread at task {task} with {alive} alive ({e}); {refused} tasks failed")
    });
    let mut out = Outcome {
        failure,
        peak_threads: Some(gauge.peak()),
        ..Default::default()
    };
    if let Some(c) = cap {
        out = out.param("max_threads", c);
    }
    let c = &mut out.counters;
    c.insert("threads_spawned".into(), spawned as f64);
    c.insert("threads_refused".into(), refused as f64);
    c.insert("peak_alive_threads".into(), gauge.peak() as f64);
    c.insert("cap_waits".into(), gauge.waits() as f64);
    if spawned > 0 {
        c.insert(
            "spawn_us_mean".into(),
            spawn_total.as_secs_f64() * 1e6 / spawned as f64,
        );
        c.insert("spawn_us_max".into(), spawn_max.as_secs_f64() * 1e6);
    }
    out
}

/// Threads alive, with an optional cap that makes `acquire` wait.
struct Gauge {
    cap: Option<u32>,
    state: Mutex<GaugeState>,
    freed: Condvar,
}

#[derive(Default)]
struct GaugeState {
    alive: u64,
    peak: u64,
    waits: u64,
}

impl Gauge {
    fn new(cap: Option<u32>) -> Self {
        Gauge {
            cap,
            state: Mutex::default(),
            freed: Condvar::new(),
        }
    }

    fn acquire(&self) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(cap) = self.cap {
            if st.alive >= u64::from(cap) {
                st.waits += 1;
                while st.alive >= u64::from(cap) {
                    st = self.freed.wait(st).unwrap_or_else(|e| e.into_inner());
                }
            }
        }
        st.alive += 1;
        st.peak = st.peak.max(st.alive);
    }

    fn release(&self) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.alive -= 1;
        drop(st);
        self.freed.notify_one();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, GaugeState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn alive(&self) -> u64 {
        self.lock().alive
    }

    fn peak(&self) -> u64 {
        self.lock().peak
    }

    fn waits(&self) -> u64 {
        self.lock().waits
    }
}
