//! What every connection of one server shares: the model's name and knobs,
//! the backends, the metrics and the shutdown trigger; and the one function
//! that turns a request into its [`Reply`] on a blocking thread.

use std::sync::Arc;
use std::time::{Duration, Instant};

use iolab_backends::Backends;
use iolab_model::{ModelKind, ModelParams, Step};

use crate::exec::StepResult;
use crate::metrics::{InFlight, Metrics};
use crate::routes::{route, Reply, Route, Work};
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
        }
    }

    /// Answer one request on this thread; `run` executes a parsed workload.
    pub fn answer(
        &self,
        method: &str,
        target: &str,
        run: impl FnOnce(&Step) -> StepResult,
    ) -> Reply {
        match self.quick(route(method, target)) {
            Ok(reply) => reply,
            Err(work) => {
                let guard = self.metrics.start();
                let t = Instant::now();
                let result = run(&work.step);
                self.finish(&work, result, t, guard)
            }
        }
    }

    /// The answer of every route that runs no workload; `Err(work)` when
    /// there is a workload to run (then call [`Ctx::finish`]).
    pub fn quick(&self, route: Route) -> Result<Reply, Work> {
        Ok(match route {
            Route::Health => Reply::health(),
            Route::Metrics => Reply::metrics(self.metrics.render(&self.backends)),
            Route::NotFound(path) => Reply::not_found(&path),
            Route::MethodNotAllowed(m) => Reply::method_not_allowed(&m),
            Route::Work(Err(msg)) => {
                self.metrics.complete();
                Reply::error(400, &msg)
            }
            Route::Work(Ok(work)) => return Err(work),
        })
    }

    /// The answer of a workload that ran since `started`; counts it as
    /// completed before anyone can see the answer.
    pub fn finish(
        &self,
        work: &Work,
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
