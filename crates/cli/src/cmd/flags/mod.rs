//! Flags more than one subcommand takes, each defined once from the lab's own
//! tables: [`knobs`] (every model knob, from `iolab_model::KNOBS`) and
//! [`backends`] (every backend's address, from `BackendKind`'s definitions).

pub mod backends;
pub mod knobs;

pub use backends::BackendFlags;
pub use knobs::KnobFlags;
