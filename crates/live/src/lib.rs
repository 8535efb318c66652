//! Watching a command as it runs (`--live` on `attack`, `run`, `capacity`
//! and `merge`): a page on 127.0.0.1 drawn by the report's own renderers
//! (`iolab_report::live`), its parts pushed again as they change over
//! server-sent events, the attack's document as it stands at `/state` (so
//! another process can merge shards live), and `/metrics` in the
//! OpenMetrics text format for Prometheus.
//!
//! - [`listen`]: the address (loopback unless another is asked for by name),
//!   bound before any load, so a busy port fails first.
//! - [`Source`]: what a page shows; one per command: [`AttackWatch`] (an
//!   attack, or a capacity search's steps), [`ExperimentWatch`] (an
//!   experiment, as a lab [`Observer`](iolab_lab::Observer)), [`MergeWatch`]
//!   (shards' `/state`, merged exactly).
//! - [`Server`]: the HTTP side; every reader has a bounded buffer, and a full
//!   one drops the frame and counts it: no reader slows the generator.
//! - [`metrics`]: the OpenMetrics text, with `prometheus-client`.

mod attack;
mod experiment;
mod listen;
mod merged;
pub mod metrics;
mod server;

use iolab_model::live::{LiveState, LiveView};

pub use attack::AttackWatch;
pub use experiment::ExperimentWatch;
pub use listen::{listen, BindFault, ListenError, Listener, ResolveFault, DEFAULT_ADDR};
pub use merged::MergeWatch;
pub use server::{Server, StartError};

/// What a live page shows; implemented once per command.
pub trait Source: Send + Sync + 'static {
    /// Changes whenever there is something new to show.
    fn version(&self) -> u64;
    /// The page's picture now.
    fn view(&self) -> LiveView;
    /// The attack under way as its document stands (`/state`): what a
    /// merged view of shards adds up.
    fn state(&self) -> Option<LiveState>;
    /// What `/metrics` reports now.
    fn metrics(&self) -> Option<metrics::Snapshot>;
}
