//! Shared types for iolab, with no behaviour beyond parsing, validation and
//! pure computation every side must agree on.
//!
//! Every other crate depends on this one and on nothing sideways, so the
//! vocabulary lives here: workload [`steps`] and the backends they call,
//! concurrency [`models`](concurrency) and their [`knobs`](knob), where a
//! target runs ([`runtime`]), load [`driver`]s and their arrival
//! [`schedule`] and its [`shard`]s, [`durations`](units), the result documents that renderers
//! read ([`attack`], [`runs`], [`batch`], [`predict`], [`verify`],
//! [`capacity`], and the threads' timelines in [`spans`]), the classes a
//! failed request lands in ([`error_class`]), what kind of fault an error
//! is for its exit code ([`exit_kind`]), the protocol requests go
//! over ([`protocol`]), what a request
//! sends ([`request`]), how those are written and read back ([`files`]),
//! every bound on input with the machine's kernel limits ([`limits`]), and
//! when two measured figures differ beyond their noise ([`noise`]).

pub mod attack;
pub mod batch;
pub mod capacity;
pub mod concurrency;
pub mod cpu;
pub mod cpu_speed;
pub mod driver;
pub mod engine;
pub mod environment;
pub mod error_class;
pub mod exit_kind;
pub mod experiment;
pub mod files;
pub mod generator;
pub mod knob;
pub mod limits;
pub mod live;
pub mod noise;
pub mod predict;
pub mod protocol;
pub mod replay;
pub mod request;
pub mod runs;
pub mod runtime;
pub mod schedule;
pub mod shard;
pub mod spans;
pub mod steps;
pub mod telemetry;
pub mod text;
pub mod units;
pub mod verify;
pub mod whatif;

pub use concurrency::{ModelDef, ModelKind};
pub use driver::{Arrival, ConnectionMode, Driver, Phase};
pub use exit_kind::{ExitKind, HasExitKind};
pub use knob::{KnobError, ModelParams, KNOBS};
pub use runtime::Runtime;
pub use steps::{IoCall, Step, StepsError};
pub use units::{format_duration, parse_duration, parse_rate, DurationError, RateError};
