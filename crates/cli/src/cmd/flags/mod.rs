//! Flags more than one subcommand takes, each defined once from the lab's own
//! tables: [`knobs`] (every model knob, from `iolab_model::KNOBS`) and
//! [`backends`] (every backend's address, from `BackendKind`'s definitions),
//! [`request`] (what each request sends: `iolab attack`, `iolab capacity`)
//! and [`held`] (held connections: `iolab attack ws://...` or `--sse`).

pub mod backends;
pub mod held;
pub mod knobs;
pub mod request;

pub use backends::BackendFlags;
pub use held::HeldFlags;
pub use knobs::KnobFlags;
pub use request::RequestFlags;

/// A rate flag's value: `50`, or vegeta's `50/s`, `3000/1m`
/// (`iolab_model::parse_rate`), as clap's value parser.
pub fn rate(s: &str) -> Result<f64, iolab_model::RateError> {
    iolab_model::parse_rate(s)
}
