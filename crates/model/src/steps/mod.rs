//! The workload language: what one request (or batch task) does.
//!
//! ```text
//! steps := item (',' item)*            a top-level list runs in sequence
//! item  := seq(steps) | par(steps) | leaf
//! leaf  := cpu:N | BACKEND:ARG          a backend's word and argument (backend.rs)
//! ```
//! `N` is a whole number of Leibniz terms; `ARG` either `MS`, a decimal number
//! of milliseconds (`200`, `0.5`), or `KEY` (`[A-Za-z0-9_.:-]`, at most 250).
//! Steps serialize as their canonical text, so plans and results stay readable
//! and every runtime (Rust, JVM) parses exactly the same strings.

mod backend;
mod display;
mod parse;
#[cfg(test)]
mod tests;

use std::time::Duration;

pub use backend::{ArgSyntax, BackendDef, BackendKind, CounterDef};
pub use parse::{listed, parse, StepsError};

/// Limits that keep one request's work bounded whatever a client sends.
pub mod limits {
    /// Deepest nesting of `seq(...)` / `par(...)`.
    pub const MAX_DEPTH: usize = 16;
    /// Most leaf steps in one workload.
    pub const MAX_LEAVES: usize = 1_000;
    /// Longest single IO step, in milliseconds (one hour).
    pub const MAX_MS: f64 = 3_600_000.0;
    /// Most Leibniz terms in one `cpu` step (about 10 minutes of one core).
    pub const MAX_CPU_TERMS: u64 = 100_000_000_000;
    /// Longest memcached key (memcached's own limit).
    pub const MAX_KEY_LEN: usize = 250;
    /// Longest steps string accepted.
    pub const MAX_INPUT_LEN: usize = 16_384;
}

/// One step of a workload.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Step {
    /// `cpu:N`: N terms of the Leibniz series for pi, on the calling thread.
    Cpu {
        /// Number of series terms.
        terms: u64,
    },
    /// One call to a backend.
    Io(IoCall),
    /// Children one after another.
    Seq(Vec<Step>),
    /// Children at the same time, in whatever way the model can.
    Par(Vec<Step>),
}

/// One call to a backend: its kind and the argument its step syntax takes
/// ([`BackendDef::arg`]). Durations are kept in whole microseconds so that
/// scaled workloads (`--scale 0.01`) stay exact and hashable. Made by the
/// parser or [`BackendKind::timed_call`] / [`BackendKind::keyed_call`], so
/// the argument always fits the kind.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IoCall {
    kind: BackendKind,
    arg: IoArg,
}

/// What a call carries after the colon.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IoArg {
    /// A duration in microseconds (`sleep:MS`, `http:MS`, `pg:MS`).
    Micros(u64),
    /// A key (`mc:KEY`).
    Key(String),
}

impl IoCall {
    /// Which backend serves this call.
    pub fn kind(&self) -> BackendKind {
        self.kind
    }

    /// What the call carries.
    pub fn arg(&self) -> &IoArg {
        &self.arg
    }

    /// The duration of a timed call, in microseconds.
    pub fn micros(&self) -> Option<u64> {
        match self.arg {
            IoArg::Micros(m) => Some(m),
            IoArg::Key(_) => None,
        }
    }

    /// The key of a keyed call (`mc:KEY`).
    pub fn key(&self) -> Option<&str> {
        match &self.arg {
            IoArg::Key(k) => Some(k),
            IoArg::Micros(_) => None,
        }
    }

    /// The nominal duration of a timed call (`None` for `mc`, whose time is
    /// whatever the transfer takes).
    pub fn nominal(&self) -> Option<Duration> {
        self.micros().map(Duration::from_micros)
    }
}

/// Every word that starts a step, in the order messages list them: `cpu`,
/// each backend's word, `seq`, `par`.
pub fn step_words() -> Vec<&'static str> {
    let backends = BackendKind::ALL.into_iter().map(BackendKind::as_str);
    std::iter::once("cpu")
        .chain(backends)
        .chain(["seq", "par"])
        .collect()
}

impl Step {
    /// Number of leaf steps (`cpu` and IO calls); the contract's `"steps"` field.
    pub fn leaf_count(&self) -> usize {
        match self {
            Step::Cpu { .. } | Step::Io(_) => 1,
            Step::Seq(c) | Step::Par(c) => c.iter().map(Step::leaf_count).sum(),
        }
    }

    /// Every IO call in the workload, in textual order.
    pub fn io_calls(&self) -> Vec<&IoCall> {
        let mut out = Vec::new();
        self.visit_io(&mut |c| out.push(c));
        out
    }

    fn visit_io<'a>(&'a self, f: &mut dyn FnMut(&'a IoCall)) {
        match self {
            Step::Cpu { .. } => {}
            Step::Io(c) => f(c),
            Step::Seq(c) | Step::Par(c) => c.iter().for_each(|s| s.visit_io(f)),
        }
    }

    /// Total Leibniz terms (CPU work) in the workload, wherever it runs.
    pub fn cpu_terms(&self) -> u64 {
        match self {
            Step::Cpu { terms } => *terms,
            Step::Io(_) => 0,
            Step::Seq(c) | Step::Par(c) => c.iter().map(Step::cpu_terms).sum(),
        }
    }

    /// The IO time of one request given unlimited threads: `seq` adds, `par`
    /// takes the longest; `cpu` and `mc` count as zero.
    pub fn nominal_io(&self) -> Duration {
        match self {
            Step::Cpu { .. } => Duration::ZERO,
            Step::Io(c) => c.nominal().unwrap_or_default(),
            Step::Seq(c) => c.iter().map(Step::nominal_io).sum(),
            Step::Par(c) => c.iter().map(Step::nominal_io).max().unwrap_or_default(),
        }
    }

    /// The same workload with every duration and CPU term count multiplied by
    /// `factor` (the time-scale; 0 < factor). Non-zero amounts never round to 0.
    pub fn scaled(&self, factor: f64) -> Step {
        let us = |m: u64| {
            if m == 0 {
                0
            } else {
                ((m as f64 * factor).round() as u64).max(1)
            }
        };
        match self {
            Step::Cpu { terms } => Step::Cpu { terms: us(*terms) },
            Step::Io(c) => Step::Io(IoCall {
                kind: c.kind,
                arg: match &c.arg {
                    IoArg::Micros(m) => IoArg::Micros(us(*m)),
                    key @ IoArg::Key(_) => key.clone(),
                },
            }),
            Step::Seq(c) => Step::Seq(c.iter().map(|s| s.scaled(factor)).collect()),
            Step::Par(c) => Step::Par(c.iter().map(|s| s.scaled(factor)).collect()),
        }
    }
}
