//! The concurrency models as real HTTP targets behind one contract (`iolab serve`).
//!
//! One file per model: [`sequential`], [`pool`], [`thread_per_request`] speak
//! HTTP/1.1 themselves on blocking std sockets ([`http1`]) with real OS
//! threads; [`loop_blocking`], [`loop_offload`] and [`loop_async`] share one
//! tokio + hyper server ([`event_loop`]) and differ only in how they run a
//! step. Every model answers the same [`routes`] and keeps the same
//! [`metrics`]; [`serve`] picks the model and blocks until [`Shutdown`].

pub mod accept;
pub mod affinity;
pub mod ctx;
pub mod event_loop;
pub mod exec;
pub mod held;
pub mod held_async;
pub mod http1;
pub mod loop_async;
pub mod loop_blocking;
pub mod loop_http1;
pub mod loop_offload;
pub mod metrics;
pub mod poller;
pub mod pool;
pub mod routes;
pub mod running;
pub mod sequential;
pub mod shutdown;
pub mod side_metrics;
pub mod spans;
pub mod thread_per_request;

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use iolab_backends::Backends;
use iolab_model::{ModelKind, ModelParams};

pub use affinity::pin_to_cpus;
pub use running::{listen_reuse_port, start, Running};
pub use shutdown::Shutdown;

/// Stack of every thread the thread models start (workers, per-request
/// threads, `par` children). Steps recurse at most 16 levels, so 512 KiB is
/// ample and keeps 10,000 threads' address space modest.
pub const THREAD_STACK: usize = iolab_model::concurrency::held::THREAD_STACK;

/// Everything a target needs to serve.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Which model.
    pub model: ModelKind,
    /// Its knobs (each model reads the ones that apply).
    pub params: ModelParams,
    /// Where IO steps go.
    pub backends: Arc<Backends>,
    /// After a shutdown, how long in-flight requests may take to finish.
    pub grace: Duration,
    /// Record who held what for a sample of this many requests (`/spans`).
    pub spans: Option<u32>,
}

impl ServeConfig {
    /// A config with default knobs, the embedded timer only, and a 5 s grace.
    pub fn new(model: ModelKind) -> Self {
        ServeConfig {
            model,
            params: ModelParams::default(),
            backends: Arc::new(Backends::sleep_only()),
            grace: Duration::from_secs(5),
            spans: None,
        }
    }
}

/// Why a target could not serve.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The model is not built into the Rust binary.
    #[error("model '{0}' is not built in: serve it from a runtime folder with --runtime (e.g. jvm, python; see runtimes/README.md)")]
    Unsupported(ModelKind),
    /// A knob is out of range.
    #[error("{0}")]
    BadParams(String),
    /// The socket or a thread could not be set up.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
}

impl ServeError {
    pub(crate) fn io(what: &'static str) -> impl FnOnce(std::io::Error) -> ServeError {
        move |source| ServeError::Io { what, source }
    }
}

/// Check `model` is built in and every knob is within its range.
pub fn validate(model: ModelKind, params: &ModelParams) -> Result<(), ServeError> {
    params
        .check()
        .map_err(|e| ServeError::BadParams(format!("{e} (model {model})")))?;
    if !model.def().built_in {
        return Err(ServeError::Unsupported(model));
    }
    Ok(())
}

/// Serve the contract on `listener` under `config.model` until `shutdown`
/// fires, then stop accepting, let in-flight requests finish within
/// `config.grace`, and return.
pub fn serve(
    config: ServeConfig,
    listener: TcpListener,
    shutdown: Shutdown,
) -> Result<(), ServeError> {
    serve_with(config, listener, None, shutdown)
}

/// [`serve`], with `/metrics` also on `metrics` from a thread of its own
/// ([`side_metrics`]) when given.
pub fn serve_with(
    config: ServeConfig,
    listener: TcpListener,
    metrics: Option<TcpListener>,
    shutdown: Shutdown,
) -> Result<(), ServeError> {
    validate(config.model, &config.params)?;
    let ctx = Arc::new(ctx::Ctx::new(&config, shutdown));
    let side = metrics
        .map(|l| side_metrics::spawn(Arc::clone(&ctx), l))
        .transpose()?;
    let served = serve_model(&config, ctx, listener);
    if let Some(t) = side {
        let _ = t.join();
    }
    served
}

fn serve_model(
    config: &ServeConfig,
    ctx: Arc<ctx::Ctx>,
    listener: TcpListener,
) -> Result<(), ServeError> {
    match server(config.model) {
        Some(serve) => serve(ctx, listener),
        None => Err(ServeError::Unsupported(config.model)),
    }
}

/// How a built-in model serves a listener.
type Server = fn(Arc<ctx::Ctx>, TcpListener) -> Result<(), ServeError>;

/// The built-in server of `model`: each model's file, registered here once
/// (`None`: a model only runtimes serve; its definition says it is not
/// built in, and a test holds the two together).
fn server(model: ModelKind) -> Option<Server> {
    Some(match model {
        ModelKind::Sequential => sequential::serve,
        ModelKind::Pool => pool::serve,
        ModelKind::ThreadPerRequest => thread_per_request::serve,
        ModelKind::LoopBlocking => |ctx, l| event_loop::serve(ctx, l, loop_blocking::LoopBlocking),
        ModelKind::LoopOffload => |ctx, l| {
            let exec = loop_offload::LoopOffload::new(&ctx);
            event_loop::serve(ctx, l, exec)
        },
        ModelKind::LoopAsync => |ctx, l| {
            let exec = loop_async::LoopAsync::new(&ctx);
            event_loop::serve(ctx, l, exec)
        },
        ModelKind::Virtual | ModelKind::Prefork => return None,
    })
}

#[cfg(test)]
mod registry_tests {
    use super::*;

    #[test]
    fn a_model_has_a_server_exactly_when_its_definition_says_built_in() {
        for &m in ModelKind::ALL {
            assert_eq!(server(m).is_some(), m.def().built_in, "{m}");
        }
    }
}
