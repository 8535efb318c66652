//! What every connection of one server shares: the model's name and knobs,
//! the backends, the metrics and the shutdown trigger; and the one function
//! that turns a request into its [`Reply`] on a blocking thread.

use std::sync::Arc;
use std::time::{Duration, Instant};

use iolab_backends::Backends;
use iolab_model::{ModelKind, ModelParams, Step};

use crate::exec::StepResult;
use crate::metrics::{InFlight, Metrics};
use crate::routes::{route, Reply, Route, WorkRequest};
use crate::{ServeConfig, Shutdown};

/// Shared state of one server.
#[derive(Debug)]
pub struct Ctx {
    /// The model served.
    pub model: ModelKind,
    /// Its knobs.
    pub params: ModelParams,
    /// Where IO steps go.
    pub backends: Arc<Backends>,
    /// `/metrics` counters.
    pub metrics: Metrics,
    /// The stop trigger.
    pub shutdown: Shutdown,
    /// How long in-flight work may finish after a shutdown.
    pub grace: Duration,
    /// The span sample, when `--spans N` asked for one.
    pub spans: Option<Arc<iolab_spans::Recorder>>,
}

impl Ctx {
    /// Shared state for `config`.
    pub fn new(config: &ServeConfig, shutdown: Shutdown) -> Self {
        Ctx {
            model: config.model,
            params: config.params.clone(),
            backends: config.backends.clone(),
            metrics: Metrics::default(),
            shutdown,
            grace: config.grace,
            spans: config.spans.map(iolab_spans::Recorder::new),
        }
    }

    /// Answer one request on this thread; `run` executes a parsed workload.
    pub fn answer(
        &self,
        method: &str,
        target: &str,
        run: impl FnOnce(&Step) -> StepResult,
    ) -> Reply {
        self.answer_queued(method, target, None, run)
    }

    /// [`Ctx::answer`] for a request that waited for this thread since
    /// `queued` (a pool's queue): a sampled request records that wait, then
    /// running on this thread for the whole request ([`crate::spans`]).
    pub fn answer_queued(
        &self,
        method: &str,
        target: &str,
        queued: Option<Instant>,
        run: impl FnOnce(&Step) -> StepResult,
    ) -> Reply {
        match self.quick(route(method, target)) {
            Ok(reply) => reply,
            Err(work) => {
                let guard = self.metrics.start();
                let t = Instant::now();
                let tag = crate::spans::admit(self.spans.as_ref());
                let result = iolab_spans::on_thread(
                    tag.as_ref(),
                    queued,
                    iolab_model::spans::SpanState::Running,
                    None,
                    || run(&work.step),
                );
                let reply = self.finish(&work, result, t, guard);
                crate::spans::done(tag.as_ref(), queued.unwrap_or(t), &reply);
                reply
            }
        }
    }

    /// The answer of every route that runs no workload; `Err(work)` when
    /// there is a workload to run (then call [`Ctx::finish`]).
    pub fn quick(&self, route: Route) -> Result<Reply, WorkRequest> {
        Ok(match route {
            Route::Health => Reply::health(),
            Route::Metrics => Reply::metrics(self.metrics.render(&self.backends)),
            Route::Spans { open } => crate::spans::reply(self.spans.as_deref(), open),
            Route::NotFound(path) => Reply::not_found(&path),
            Route::MethodNotAllowed(m) => Reply::method_not_allowed(&m),
            Route::Work(Err(msg)) => {
                self.metrics.complete();
                Reply::error(400, &msg.to_string())
            }
            Route::Work(Ok(work)) => return Err(work),
        })
    }

    /// The answer of a workload that ran since `started`; counts it as
    /// completed before anyone can see the answer.
    pub fn finish(
        &self,
        work: &WorkRequest,
        result: StepResult,
        started: Instant,
        guard: InFlight<'_>,
    ) -> Reply {
        let reply = Reply::work(self.model, work, result, started.elapsed());
        self.metrics.complete();
        drop(guard);
        reply
    }

    /// Wait (up to the grace period from now) until no request is in flight
    /// and `idle()` holds; true if everything finished in time.
    pub fn drain(&self, idle: impl Fn() -> bool) -> bool {
        let deadline = Instant::now() + self.grace;
        loop {
            if self.metrics.in_flight() <= 0 && idle() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
