//! Flags more than one subcommand takes, each defined once from the lab's own
//! tables: [`knobs`] (every model knob, from `iolab_model::KNOBS`) and
//! [`backends`] (every backend's address, from `BackendKind`'s definitions),
//! and [`request`] (what each request sends: `iolab attack`, `iolab capacity`).

pub mod backends;
pub mod knobs;
pub mod request;

pub use backends::BackendFlags;
pub use knobs::KnobFlags;
pub use request::RequestFlags;
