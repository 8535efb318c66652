//! Shared types for iolab, with no behaviour beyond parsing and validation.
//!
//! Every other crate depends on this one and on nothing sideways, so the
//! vocabulary lives here: workload [`steps`], concurrency [`models`](model_kind),
//! load [`driver`]s, [`durations`](units), and the result documents that
//! renderers read ([`attack`], [`runs`], [`batch`], [`predict`], [`verify`]).

pub mod attack;
pub mod batch;
pub mod cpu;
pub mod driver;
pub mod environment;
pub mod experiment;
pub mod model_kind;
pub mod predict;
pub mod runs;
pub mod steps;
pub mod telemetry;
pub mod units;
pub mod verify;

pub use driver::{Arrival, ConnectionMode, Driver, Phase};
pub use model_kind::{ModelKind, ModelParams, Runtime};
pub use steps::{IoCall, Step, StepsError};
pub use units::{format_duration, parse_duration, DurationError};
