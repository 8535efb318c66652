//! One plain sentence per run that explains its outcome from the numbers:
//! Little's law (in flight needed = rate x S) against the model's capacity,
//! the queue's growth above it, when timeouts had to start, and what the
//! error classes say. A number that was not recorded is not guessed: the
//! sentence just says less.

use iolab_model::batch::{TaskMix, WorkerKind};
use iolab_model::concurrency::{Capacity, Host};
use iolab_model::experiment::Work;
use iolab_model::runs::{Outcome, RunRecord};
use iolab_model::steps::BackendKind;
use iolab_model::{ModelKind, ModelParams};

use crate::numbers::{count, ms, percent, rate, secs};
use crate::summary::label;

/// The capacity of a model for blocking IO (its [`Shape`]); `None` when it
/// depends on a number that was not recorded (the core count for event-loop
/// workers).
pub(crate) fn capacity(model: ModelKind, p: &ModelParams, cores: Option<u32>) -> Option<Capacity> {
    let on = |cores: u32| model.shape(p, &Host::cores(cores)).capacity();
    match cores {
        Some(c) => Some(on(c)),
        // Unknown cores matter only when the capacity follows them.
        None => Some(on(1)).filter(|c| *c == on(2)),
    }
}

/// Write a time as run and, when the run was scaled, unscaled beside it.
struct Clock {
    scale: f64,
}

impl Clock {
    fn scaled(&self) -> bool {
        (self.scale - 1.0).abs() > 1e-12
    }

    fn secs(&self, s: f64) -> String {
        if self.scaled() {
            format!("{} ({} unscaled)", secs(s), secs(s / self.scale))
        } else {
            secs(s)
        }
    }

    fn ms(&self, v: f64) -> String {
        self.secs(v / 1e3)
    }

    fn rate(&self, r: f64) -> String {
        if self.scaled() {
            format!("{} req/s ({} unscaled)", rate(r), rate(r * self.scale))
        } else {
            format!("{} req/s", rate(r))
        }
    }
}

/// The one-sentence explanation of a run (event-loop defaults unknown).
pub fn explain(run: &RunRecord) -> String {
    explain_with_cores(run, None)
}

/// The one-sentence explanation, knowing the machine's cores (the default
/// number of event-loop workers).
pub fn explain_with_cores(run: &RunRecord, cores: Option<u32>) -> String {
    let who = label(run);
    let clock = Clock {
        scale: run.spec.scale,
    };
    let sentence = match (&run.outcome, &run.spec.work) {
        (Outcome::Completed | Outcome::Interrupted, Work::Http(_)) if run.attack.is_some() => {
            http(run, &who, &clock, cores)
        }
        (Outcome::Completed | Outcome::Interrupted, Work::Batch(_)) if run.batch.is_some() => {
            batch(run, &who, &clock, cores)
        }
        (Outcome::Completed, _) => format!("{who} completed but recorded no result"),
        (Outcome::Interrupted, _) => format!("{who} was interrupted before anything was measured"),
        (
            Outcome::StartFailed { detail }
            | Outcome::VerifyFailed { detail }
            | Outcome::TargetDied { detail }
            | Outcome::Skipped { detail },
            _,
        ) => {
            let what = match &run.outcome {
                Outcome::StartFailed { .. } => "did not start",
                Outcome::VerifyFailed { .. } => "failed verification",
                Outcome::TargetDied { .. } => "died during the run",
                _ => "was skipped",
            };
            let measured = match &run.attack {
                Some(a) => format!(
                    "; measured until then: {} ok of {} planned",
                    count(a.requests.ok),
                    count(a.requests.planned)
                ),
                None => "; nothing measured".into(),
            };
            format!("{who} {what} ({}){measured}", one_line(detail))
        }
    };
    format!("{sentence}.")
}

fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{} {word}s", count(n))
    }
}

fn one_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or("").trim();
    line.trim_end_matches('.').to_string()
}

fn http(run: &RunRecord, who: &str, clock: &Clock, cores: Option<u32>) -> String {
    let a = run.attack.as_ref().expect("checked by the caller");
    let Work::Http(h) = &run.spec.work else {
        unreachable!("checked by the caller")
    };
    let s = h.steps.nominal_io().as_secs_f64();
    let t = h.timeout.as_secs_f64();
    let offered = h.driver.peak_rate();
    let dur = h.driver.duration().map(|d| d.as_secs_f64());
    let cap = capacity(run.model, &run.spec.params, cores);
    let success = a.success_ratio();

    let mut parts: Vec<String> = Vec::new();
    // Little's law: what the load needs against what the model has.
    let mut overloaded = false;
    if let (Some(r), true) = (offered, s > 0.0) {
        let need = r * s;
        let mut little = format!(
            "{} x {} = {} in flight needed",
            clock.rate(r),
            clock.secs(s),
            crate::numbers::num(need, 1)
        );
        match cap {
            Some(Capacity::Bounded { n, what }) => {
                let c = n as f64;
                if need > c {
                    overloaded = true;
                    little += &format!(" > {n} {what}");
                    parts.push(little);
                    let max_rate = c / s;
                    let rho = need / c;
                    let mut q = format!(
                        "capacity {n}/{} = {}, so the queue grew {}/s",
                        secs(s),
                        clock.rate(max_rate),
                        rate(r - max_rate)
                    );
                    if t > s {
                        let first = (t - s) / (rho - 1.0);
                        if dur.is_some_and(|d| first >= d) {
                            q += &format!(
                                "; requests sent after about {} would time out, past the run's end",
                                clock.secs(first)
                            );
                        } else {
                            q += &format!(
                                "; requests sent after about {} time out (timeout {})",
                                clock.secs(first),
                                clock.secs(t)
                            );
                        }
                    } else {
                        q += &format!("; the timeout ({}) is not above S", clock.secs(t));
                    }
                    parts.push(q);
                } else {
                    little += &format!(" <= {n} {what}");
                    parts.push(little);
                }
            }
            Some(Capacity::Unbounded { why }) => {
                little += &format!(" ({why})");
                parts.push(little);
            }
            None => parts.push(little),
        }
    }

    // Real PostgreSQL steps also wait for one of the pool's connections: the
    // pool caps every model, the non-blocking ones too (each request holds a
    // connection for each of its pg steps).
    let pg_s: f64 = h
        .steps
        .io_calls()
        .iter()
        .filter(|c| c.kind() == BackendKind::Pg)
        .filter_map(|c| c.nominal())
        .map(|d| d.as_secs_f64())
        .sum();
    if let (Some(r), true) = (offered, pg_s > 0.0) {
        let conns = run.spec.params.pg_pool();
        let need = r * pg_s;
        let busy = format!(
            "{} x {} of pg = {} PostgreSQL connections busy",
            clock.rate(r),
            clock.secs(pg_s),
            crate::numbers::num(need, 1)
        );
        if need > f64::from(conns) {
            overloaded = true;
            parts.push(format!(
                "{busy} > a pool of {conns}, which caps it at {conns}/{} = {}",
                secs(pg_s),
                clock.rate(f64::from(conns) / pg_s)
            ));
        } else {
            parts.push(format!("{busy} <= a pool of {conns}"));
        }
    }

    // What was measured.
    let mut m = format!(
        "{} ok, goodput {}, p99 {}",
        percent(success),
        clock.rate(a.throughput_rps.goodput),
        clock.ms(a.latency_ms.p99)
    );
    if let Some(first) = a.series.iter().find(|p| p.errors > 0) {
        if a.errors.total() > 0 {
            m += &format!(", first errors at {}", clock.secs(first.t_s));
        }
    }
    parts.push(m);

    let e = &a.errors;
    let mut errs: Vec<String> = Vec::new();
    if e.timeout > 0 {
        errs.push(format!("{} timed out", count(e.timeout)));
    }
    if e.refused > 0 {
        errs.push(format!("{} refused (accept queue full)", count(e.refused)));
    }
    if e.reset > 0 {
        errs.push(format!("{} reset", count(e.reset)));
    }
    if e.addr_unavailable > 0 {
        errs.push(format!(
            "{} EADDRNOTAVAIL (the client ran out of ephemeral ports)",
            count(e.addr_unavailable)
        ));
    }
    if e.connect_other > 0 {
        errs.push(format!("{} failed to connect", count(e.connect_other)));
    }
    if e.fd_limit > 0 {
        errs.push(format!(
            "{} never left the generator: it ran out of file descriptors (raise ulimit -n)",
            count(e.fd_limit)
        ));
    }
    if e.read > 0 {
        errs.push(format!("{} bad answers", count(e.read)));
    }
    if a.requests.non_2xx > 0 {
        errs.push(format!("{} non-2xx", count(a.requests.non_2xx)));
    }
    if a.requests.not_sent > 0 {
        errs.push(format!(
            "{} never sent (no connection in time)",
            count(a.requests.not_sent)
        ));
    }
    if !errs.is_empty() {
        parts.push(errs.join(", "));
    }
    if let Some(p) = run.telemetry.peak_in_flight() {
        parts.push(format!("peak {} in flight at the target", count(p as u64)));
    }
    if a.generator.saturated {
        parts.push(format!(
            "the generator was saturated (send lag p99 {}), so this run measured the generator as much as the target",
            ms(a.generator.lag_p99_ms)
        ));
    }

    let verdict = if overloaded {
        "saturated"
    } else if success >= 0.999 {
        "held up"
    } else {
        "lost requests"
    };
    let verdict = if matches!(run.outcome, Outcome::Interrupted) {
        "was interrupted"
    } else {
        verdict
    };
    format!("{who} {verdict}: {}", parts.join("; "))
}

fn batch(run: &RunRecord, who: &str, clock: &Clock, cores: Option<u32>) -> String {
    let b = run.batch.as_ref().expect("checked by the caller");
    let Work::Batch(spec) = &run.spec.work else {
        unreachable!("checked by the caller")
    };
    let measured = format!("measured {}", clock.secs(b.total_s));
    let mut s = match (&spec.tasks, &spec.master) {
        (TaskMix::Calls { n, ms: call_ms }, _) => {
            let call = call_ms / 1e3;
            let mut cap = capacity(run.model, &run.spec.params, cores);
            // Real PostgreSQL calls wait for one of the pool's connections
            // first: the pool caps every executor, the non-blocking one too.
            if spec.io_backend == BackendKind::Pg {
                let conns = run.spec.params.pg_pool();
                if !matches!(cap, Some(Capacity::Bounded { n, .. }) if n <= conns) {
                    cap = Some(Capacity::Bounded {
                        n: conns,
                        what: "PostgreSQL connections",
                    });
                }
            }
            match cap {
                Some(Capacity::Bounded { n: c, what }) => {
                    let rounds = n.div_ceil(c.max(1) as u64);
                    format!(
                        "{who} ran {} of {} on {c} {what}: ceil({n}/{c}) = {} x {} = {} expected, {measured}",
                        plural(*n, "call"),
                        clock.secs(call),
                        plural(rounds, "round"),
                        secs(call),
                        clock.secs(rounds as f64 * call)
                    )
                }
                Some(Capacity::Unbounded { why }) => format!(
                    "{who} ran {} of {} at once ({why}): {} expected, {measured}",
                    plural(*n, "call"),
                    clock.secs(call),
                    clock.secs(call)
                ),
                None => format!(
                    "{who} ran {} calls of {}: {measured}",
                    count(*n),
                    clock.secs(call)
                ),
            }
        }
        (TaskMix::Mixed { io, io_ms, .. }, Some(master)) => {
            let w = master.workers.max(1) as f64;
            let io_mean = if io_ms.is_empty() {
                0.0
            } else {
                io_ms.iter().sum::<f64>() / io_ms.len() as f64 / 1e3
            };
            let io_total = *io as f64 * io_mean;
            let cpu_total = b
                .by_type
                .get("cpu")
                .map(|c| c.count as f64 * c.service_mean_ms / 1e3);
            let kind = match master.worker {
                WorkerKind::Blocking => "blocking",
                WorkerKind::SharedPool => "shared-pool",
                WorkerKind::Timer => "timer",
            };
            let bound = match master.worker {
                WorkerKind::Blocking => {
                    let busy = io_total + cpu_total.unwrap_or(0.0);
                    format!(
                        "each worker holds its thread through every sleep, so {} of IO{} over {w} workers takes at least {}",
                        clock.secs(io_total),
                        cpu_total.map_or(String::new(), |c| format!(" + {} of CPU", clock.secs(c))),
                        clock.secs(busy / w)
                    )
                }
                WorkerKind::SharedPool => {
                    let d = master.shared_pool.unwrap_or(0).max(1) as f64;
                    format!(
                        "IO sleeps move to a shared pool of {d} threads, so {} of IO takes at least {} whatever W",
                        clock.secs(io_total),
                        clock.secs(io_total / d)
                    )
                }
                WorkerKind::Timer => format!(
                    "IO waits on timers and holds no thread, so only the CPU work{} is shared by the workers",
                    cpu_total.map_or(String::new(), |c| format!(" ({})", clock.secs(c)))
                ),
            };
            format!("{who} with {w} {kind} workers: {bound}; {measured}")
        }
        (TaskMix::Mixed { cpu, io, .. }, None) => {
            format!("{who} ran {cpu} cpu and {io} io tasks: {measured}")
        }
    };
    if let Some(io) = b.by_type.get("io") {
        if io.wait_mean_ms > 0.0 {
            s += &format!(", IO tasks waited {} on average", clock.ms(io.wait_mean_ms));
        }
    }
    s += &format!(", peak {} threads", count(b.peak_threads));
    if b.failed > 0 {
        s += &format!("; {} tasks failed", count(b.failed));
    }
    if let Some(f) = &b.failure {
        s += &format!(" ({})", one_line(f));
    }
    s
}
