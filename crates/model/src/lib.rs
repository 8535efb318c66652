//! Shared types for iolab, with no behaviour beyond parsing, validation and
//! pure computation every side must agree on.
//!
//! Every other crate depends on this one and on nothing sideways, so the
//! vocabulary lives here: workload [`steps`], concurrency [`models`](model_kind),
//! load [`driver`]s and their arrival [`schedule`], [`durations`](units), the
//! result documents that renderers read ([`attack`], [`runs`], [`batch`],
//! [`predict`], [`verify`]), and how those are written and read back
//! ([`files`]).

pub mod attack;
pub mod batch;
pub mod cpu;
pub mod driver;
pub mod environment;
pub mod experiment;
pub mod files;
pub mod model_kind;
pub mod predict;
pub mod runs;
pub mod schedule;
pub mod steps;
pub mod telemetry;
pub mod units;
pub mod verify;

pub use driver::{Arrival, ConnectionMode, Driver, Phase};
pub use model_kind::{ModelKind, ModelParams, Runtime};
pub use steps::{IoCall, Step, StepsError};
pub use units::{format_duration, parse_duration, DurationError};
