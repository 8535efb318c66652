//! `--live`, shared by `attack`, `run`, `capacity` and `merge`: the address
//! is bound before anything else happens (a busy port is a one-line error,
//! exit 2, before any load), and the page's URL printed on stderr.

use std::sync::Arc;

use iolab_live::{Listener, Server, Source};

use crate::CliError;

/// `--live[=ADDR]`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct LiveArgs {
    /// Watch it as it runs: a page on 127.0.0.1 at a free port (its URL is
    /// printed), drawn with the report's charts and updated as results come
    /// in, with /metrics for Prometheus and /state for `iolab merge --live`.
    /// --live=PORT, or --live=HOST:PORT for another address (the page says so).
    #[arg(
        long,
        value_name = "ADDR",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = iolab_live::DEFAULT_ADDR
    )]
    pub live: Option<String>,
}

impl LiveArgs {
    /// Bind the page's address, if asked for: before any load.
    pub fn bind(&self) -> Result<Option<Listener>, CliError> {
        self.live
            .as_deref()
            .map(|a| iolab_live::listen(a).map_err(CliError::from))
            .transpose()
    }
}

/// Serve `source` on `listener` and say where.
pub fn serve(listener: Listener, source: Arc<dyn Source>) -> Result<Server, CliError> {
    let exposed = !listener.loopback;
    let server =
        Server::start(listener, source).map_err(|e| CliError::Failed(anyhow::anyhow!(e)))?;
    eprintln!(
        "live: {} (metrics: {}metrics){}",
        server.url(),
        server.url(),
        if exposed {
            "; not loopback: other machines may reach it"
        } else {
            ""
        }
    );
    Ok(server)
}
