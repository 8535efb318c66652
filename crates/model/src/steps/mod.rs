//! The workload language: what one request (or batch task) does.
//!
//! ```text
//! steps := item (',' item)*            a top-level list runs in sequence
//! item  := seq(steps) | par(steps) | leaf
//! leaf  := cpu:N | sleep:MS | http:MS | pg:MS | mc:KEY
//! ```
//! `MS` is a decimal number of milliseconds (`200`, `0.5`); `N` a whole number
//! of Leibniz terms; `KEY` a memcached key (`[A-Za-z0-9_.:-]`, at most 250).
//! Steps serialize as their canonical text, so plans and results stay readable
//! and every runtime (Rust, JVM) parses exactly the same strings.

mod backend;
mod display;
mod parse;
#[cfg(test)]
mod tests;

use std::time::Duration;

pub use backend::{BackendDef, BackendKind};
pub use parse::{parse, StepsError};

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

/// One call to a backend; durations are kept in whole microseconds so that
/// scaled workloads (`--scale 0.01`) stay exact and hashable.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IoCall {
    /// `sleep:MS`: the embedded timer (a blocking sleep or an async timer).
    Sleep {
        /// Duration in microseconds.
        micros: u64,
    },
    /// `http:MS`: iolab's HTTP delay service answers after MS.
    Http {
        /// Duration in microseconds.
        micros: u64,
    },
    /// `pg:MS`: `SELECT pg_sleep(MS/1000.0)` on PostgreSQL.
    Pg {
        /// Duration in microseconds.
        micros: u64,
    },
    /// `mc:KEY`: a memcached get of KEY.
    Mc {
        /// The memcached key.
        key: String,
    },
}

impl IoCall {
    /// Which backend serves this call.
    pub fn kind(&self) -> BackendKind {
        match self {
            Self::Sleep { .. } => BackendKind::Sleep,
            Self::Http { .. } => BackendKind::Http,
            Self::Pg { .. } => BackendKind::Pg,
            Self::Mc { .. } => BackendKind::Mc,
        }
    }

    /// The nominal duration of a timed call (`None` for `mc`, whose time is
    /// whatever the transfer takes).
    pub fn nominal(&self) -> Option<Duration> {
        match self {
            Self::Sleep { micros } | Self::Http { micros } | Self::Pg { micros } => {
                Some(Duration::from_micros(*micros))
            }
            Self::Mc { .. } => None,
        }
    }
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
            Step::Io(IoCall::Sleep { micros }) => Step::Io(IoCall::Sleep {
                micros: us(*micros),
            }),
            Step::Io(IoCall::Http { micros }) => Step::Io(IoCall::Http {
                micros: us(*micros),
            }),
            Step::Io(IoCall::Pg { micros }) => Step::Io(IoCall::Pg {
                micros: us(*micros),
            }),
            Step::Io(c @ IoCall::Mc { .. }) => Step::Io(c.clone()),
            Step::Seq(c) => Step::Seq(c.iter().map(|s| s.scaled(factor)).collect()),
            Step::Par(c) => Step::Par(c.iter().map(|s| s.scaled(factor)).collect()),
        }
    }
}
