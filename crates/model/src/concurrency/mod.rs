//! The concurrency models, each described once: one file per model holds its
//! [`ModelDef`] (name, what it stands for, the knobs it reads, the words that
//! explain it) and its [`Shape`] (how it holds requests: admission, a thread
//! per request, an offload pool, where CPU runs, whether `par` overlaps).
//! `iolab serve`, batches, the simulation behind `iolab predict` and the
//! explanations all read these, so adding a model adds its file, one variant
//! and one arm of [`ModelKind::def`], and its server.

pub mod held;
mod loop_async;
mod loop_blocking;
mod loop_offload;
mod pool;
mod prefork;
mod sequential;
mod shape;
mod thread_per_request;
mod r#virtual;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::knob::{Knob, KnobDef, ModelParams};

pub use shape::{Admission, Capacity, Host, RequestThreads, Shape};

/// How work is scheduled onto threads.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum ModelKind {
    /// One thread, one request at a time.
    Sequential,
    /// N OS threads, blocking IO, bounded connections and accept queue (Tomcat).
    Pool,
    /// A new OS thread per connection, up to a cap.
    ThreadPerRequest,
    /// Event loop whose handler blocks the loop thread (`suspend fun` + `Thread.sleep`).
    LoopBlocking,
    /// Event loop that moves blocking calls to a bounded pool (`Dispatchers.IO`).
    LoopOffload,
    /// Event loop with truly non-blocking IO (timers, async drivers).
    LoopAsync,
    /// Virtual or green threads (JVM Loom, gevent).
    Virtual,
    /// N single-threaded processes sharing one listen socket (gunicorn sync, unicorn).
    Prefork,
}

/// What one model is, for every part of the lab that needs to know.
#[derive(Debug, Clone, Copy)]
pub struct ModelDef {
    /// The name on the command line, in presets and in results.
    pub name: &'static str,
    /// One line: how it schedules work.
    pub about: &'static str,
    /// The real systems it stands for.
    pub analogue: &'static str,
    /// Knobs it reads, beyond the backend pools every model reads.
    pub knobs: &'static [Knob],
    /// The knobs whose product is how many requests it holds at once (pool:
    /// threads x processes), so a sentence names what sets its capacity.
    pub sized_by: &'static [Knob],
    /// Served by the Rust binary itself (`iolab serve`, batches).
    pub built_in: bool,
    /// Does a blocking IO call hold an OS thread in this model?
    pub blocks_threads: bool,
    /// Does a held connection (a WebSocket on `/ws`) hold an OS thread for
    /// as long as it is open? The thread models serve it on the thread that
    /// read the upgrade; the loops on a task ([`held`]).
    pub held_on_thread: bool,
    /// What a simulated timeline calls the threads that hold its requests
    /// (`pool 3`, `loop 0`), so a new model names its own lanes.
    pub lane: &'static str,
    /// How it holds requests, on a host.
    pub shape: fn(&ModelParams, &Host) -> Shape,
    /// Words the explanations use.
    pub words: Words,
}

/// Words that explain a model, kept with its definition.
#[derive(Debug, Clone, Copy)]
pub struct Words {
    /// What a request holds while it waits, in the plural: `threads`.
    pub unit: &'static str,
    /// What holds a request, as a subject: `pool threads`.
    pub holder: &'static str,
    /// How many calls of a batch run at once: `one per pool thread`.
    pub per_call: &'static str,
    /// Why nothing bounds it, when nothing does.
    pub unbounded: &'static str,
}

/// `n` things named by `plural`, in the number it takes: `1 worker process`,
/// `5 worker processes`, `1 event-loop thread`, `1,000 pool threads`.
pub fn counted(n: u64, plural: &str) -> String {
    let n_text = crate::units::thousands(n);
    if n != 1 {
        return format!("{n_text} {plural}");
    }
    let one = plural
        .strip_suffix("sses")
        .map(|s| format!("{s}ss"))
        .or_else(|| plural.strip_suffix('s').map(str::to_string))
        .unwrap_or_else(|| plural.to_string());
    format!("1 {one}")
}

impl Words {
    /// The words of a model that something bounds (threads, processes): no
    /// reason to give for being unbounded.
    pub const fn bounded(
        unit: &'static str,
        holder: &'static str,
        per_call: &'static str,
    ) -> Words {
        Words {
            unit,
            holder,
            per_call,
            unbounded: "",
        }
    }

    /// The words of a model that holds no thread while a request waits.
    pub const fn non_blocking(holder: &'static str, why: &'static str) -> Words {
        Words {
            unit: "",
            holder,
            per_call: "no thread held while waiting",
            unbounded: why,
        }
    }
}

impl ModelKind {
    /// Every model, in the order tables show them.
    pub const ALL: &'static [ModelKind] = &[
        Self::Sequential,
        Self::Prefork,
        Self::Pool,
        Self::ThreadPerRequest,
        Self::LoopBlocking,
        Self::LoopOffload,
        Self::LoopAsync,
        Self::Virtual,
    ];

    /// Its definition: the one registration of a model.
    pub fn def(self) -> &'static ModelDef {
        match self {
            Self::Sequential => &sequential::DEF,
            Self::Pool => &pool::DEF,
            Self::ThreadPerRequest => &thread_per_request::DEF,
            Self::LoopBlocking => &loop_blocking::DEF,
            Self::LoopOffload => &loop_offload::DEF,
            Self::LoopAsync => &loop_async::DEF,
            Self::Virtual => &r#virtual::DEF,
            Self::Prefork => &prefork::DEF,
        }
    }

    /// Models built into the Rust binary, in table order.
    pub fn built_in() -> impl Iterator<Item = ModelKind> {
        Self::ALL.iter().copied().filter(|m| m.def().built_in)
    }

    /// The name used on the command line, in presets and in results.
    pub fn as_str(self) -> &'static str {
        self.def().name
    }

    /// Does a blocking IO call hold an OS thread in this model?
    pub fn blocks_threads(self) -> bool {
        self.def().blocks_threads
    }

    /// The model's shape with `params` on `host`.
    pub fn shape(self, params: &ModelParams, host: &Host) -> Shape {
        (self.def().shape)(params, &host.at_least_one_core())
    }

    /// Does `knob` apply to this model (the backend pools apply to all)?
    pub fn reads(self, knob: &str) -> bool {
        let pool = crate::steps::BackendKind::ALL
            .iter()
            .any(|b| b.def().pool_knob == Some(knob));
        pool || self.def().knobs.iter().any(|k| k.def().name == knob)
    }

    /// Every name, for messages: `sequential, prefork, pool, ...`.
    pub fn names() -> String {
        let v: Vec<&str> = Self::ALL.iter().map(|m| m.as_str()).collect();
        v.join(", ")
    }
}

impl fmt::Display for ModelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An unknown model name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown model '{0}' (expected one of: {names})", names = ModelKind::names())]
pub struct UnknownModel(pub String);

impl FromStr for ModelKind {
    type Err = UnknownModel;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .iter()
            .copied()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| UnknownModel(s.to_string()))
    }
}

/// A knob's help line: the models that read it (from this table), then
/// what it does (`pool, virtual: worker threads (Tomcat maxThreads 200).`).
pub fn knob_help(k: &KnobDef) -> String {
    let readers: Vec<&str> = ModelKind::ALL
        .iter()
        .filter(|m| m.reads(k.name))
        .map(|m| m.as_str())
        .collect();
    let who = if readers.len() == ModelKind::ALL.len() {
        "every model".to_string()
    } else {
        readers.join(", ")
    };
    format!("{who}: {}", k.about.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_knobs_help_names_the_models_that_read_it() {
        assert_eq!(
            knob_help(Knob::Threads.def()),
            "pool, virtual: worker threads (Tomcat maxThreads 200)."
        );
        assert!(knob_help(Knob::PgPool.def()).starts_with("every model: "));
    }

    #[test]
    fn counts_take_their_number() {
        assert_eq!(counted(1, "worker processes"), "1 worker process");
        assert_eq!(counted(5, "worker processes"), "5 worker processes");
        assert_eq!(counted(1, "event-loop workers"), "1 event-loop worker");
        assert_eq!(counted(2_000, "pool threads"), "2,000 pool threads");
    }

    #[test]
    fn names_round_trip() {
        for &m in ModelKind::ALL {
            assert_eq!(m.as_str().parse::<ModelKind>().unwrap(), m);
            assert_eq!(serde_json::to_value(m).unwrap(), m.as_str());
            assert_eq!(m.shape(&ModelParams::default(), &Host::cores(2)).model, m);
            for k in m.def().sized_by {
                assert!(
                    m.def().knobs.contains(k),
                    "{m} is sized by {k:?}, a knob it reads"
                );
            }
        }
        assert!("fibers".parse::<ModelKind>().is_err());
    }
}
