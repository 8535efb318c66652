//! Shared types for iolab, with no behaviour beyond parsing and validation.
//!
//! Every other crate depends on this one and on nothing sideways, so the
//! vocabulary lives here: workload [`steps`], concurrency [`models`](concurrency) and their [`knobs`](knob),
//! load [`driver`]s, [`durations`](units), and the result documents that
//! renderers read ([`attack`], [`runs`], [`batch`], [`predict`], [`verify`]).

pub mod attack;
pub mod batch;
pub mod concurrency;
pub mod cpu;
pub mod driver;
pub mod environment;
pub mod experiment;
pub mod knob;
pub mod predict;
pub mod runs;
pub mod runtime;
pub mod steps;
pub mod telemetry;
pub mod units;
pub mod verify;

pub use concurrency::{ModelDef, ModelKind};
pub use driver::{Arrival, ConnectionMode, Driver, Phase};
pub use knob::{ModelParams, KNOBS};
pub use runtime::Runtime;
pub use steps::{IoCall, Step, StepsError};
pub use units::{format_duration, parse_duration, DurationError};
