//! The backends an io step can go to, each described once ([`BackendDef`]):
//! its word and argument in step strings (`pg:MS`, `mc:KEY`), the flag and
//! environment variable that give its address, the knob that sizes its
//! pool, and the counter it keeps of the work it did. The parser, flags,
//! the result documents' counters and every message listing the backends
//! read [`BackendKind::def`]; the clients, counters and services behind
//! each kind are its module in the `iolab-backends` crate.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::IoCall;

/// The backends an [`IoCall`] can go to.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// Embedded timer.
    #[default]
    Sleep,
    /// HTTP delay service.
    Http,
    /// PostgreSQL.
    Pg,
    /// memcached.
    Mc,
}

/// What follows the colon in a backend's step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgSyntax {
    /// `MS`: a decimal number of milliseconds (`200`, `0.5`); the call takes
    /// that long, so a batch IO task can be one.
    Millis,
    /// `KEY`: `[A-Za-z0-9_.:-]`, at most 250 bytes; `what` names it in
    /// messages (`memcached key`).
    Key {
        /// What the key is, for messages.
        what: &'static str,
    },
}

/// The counter a backend keeps of the work it did (what `iolab verify` and
/// `runs.json`'s `backend_counts` compare with the target's answers).
#[derive(Debug, Clone, Copy)]
pub struct CounterDef {
    /// Its field in `backend_counts`: `pg_sleep_calls`.
    pub field: &'static str,
    /// Where it is read, for `iolab backend counts`: `pg_stat_statements`.
    pub source: &'static str,
    /// What it counts, for verify's messages: `delay service hits`.
    pub what: &'static str,
    /// Who counted, in a sentence: `PostgreSQL counted`.
    pub counted_by: &'static str,
}

/// What one backend is.
#[derive(Debug, Clone, Copy)]
pub struct BackendDef {
    /// The word in step strings and metric labels: `pg`.
    pub name: &'static str,
    /// What a call does, in a phrase.
    pub about: &'static str,
    /// What follows the colon in its step.
    pub arg: ArgSyntax,
    /// The flag giving its address (`--pg`); empty for the embedded timer.
    pub flag: &'static str,
    /// The environment variable standing for the flag (`IOLAB_PG`).
    pub env: &'static str,
    /// What an address looks like, for messages.
    pub address: &'static str,
    /// The flag's value in help and messages: `URL`, `HOST:PORT`.
    pub value_name: &'static str,
    /// The knob sizing its connection pool, if it has one.
    pub pool_knob: Option<&'static str>,
    /// Its own counter of the work it did (`None`: the embedded timer).
    pub counter: Option<CounterDef>,
}

impl BackendKind {
    /// All kinds, in label order.
    pub const ALL: [BackendKind; 4] = [Self::Sleep, Self::Http, Self::Pg, Self::Mc];

    /// Its definition.
    pub fn def(self) -> &'static BackendDef {
        match self {
            Self::Sleep => &BackendDef {
                name: "sleep",
                about: "the embedded timer",
                arg: ArgSyntax::Millis,
                flag: "",
                env: "",
                address: "",
                value_name: "",
                pool_knob: None,
                counter: None,
            },
            Self::Http => &BackendDef {
                name: "http",
                about: "iolab's HTTP delay service answers after MS",
                arg: ArgSyntax::Millis,
                flag: "--http-backend",
                env: "IOLAB_HTTP_BACKEND",
                address: "http://HOST:PORT (the URL `iolab backend http` prints)",
                value_name: "URL",
                pool_knob: None,
                counter: Some(CounterDef {
                    field: "http_hits",
                    source: "delay service /metrics",
                    what: "delay service hits",
                    counted_by: "the delay service counted",
                }),
            },
            Self::Pg => &BackendDef {
                name: "pg",
                about: "SELECT pg_sleep(MS) on PostgreSQL",
                arg: ArgSyntax::Millis,
                flag: "--pg",
                env: "IOLAB_PG",
                address: "postgres://USER@HOST:PORT/DB",
                value_name: "URL",
                pool_knob: Some("pg_pool"),
                counter: Some(CounterDef {
                    field: "pg_sleep_calls",
                    source: "pg_stat_statements",
                    what: "PostgreSQL pg_stat_statements pg_sleep calls",
                    counted_by: "PostgreSQL counted",
                }),
            },
            Self::Mc => &BackendDef {
                name: "mc",
                about: "a memcached get of KEY",
                arg: ArgSyntax::Key {
                    what: "memcached key",
                },
                flag: "--mc",
                env: "IOLAB_MC",
                address: "HOST:PORT, e.g. 127.0.0.1:11211",
                value_name: "HOST:PORT",
                pool_knob: Some("mc_pool"),
                counter: Some(CounterDef {
                    field: "mc_get_hits",
                    source: "memcached stats",
                    what: "memcached get_hits",
                    counted_by: "memcached counted",
                }),
            },
        }
    }

    /// The real backends: every kind but the embedded timer.
    pub fn real() -> impl Iterator<Item = BackendKind> {
        Self::ALL.into_iter().filter(|k| !k.is_sleep())
    }

    /// The kinds whose calls take a duration (what a batch IO task can be).
    pub fn timed() -> impl Iterator<Item = BackendKind> {
        Self::ALL.into_iter().filter(|k| k.is_timed())
    }

    /// The embedded timer (needs nothing installed).
    pub fn is_sleep(&self) -> bool {
        *self == Self::Sleep
    }

    /// A call takes a duration (`pg:200`), so a batch IO task can be one.
    pub fn is_timed(self) -> bool {
        self.def().arg == ArgSyntax::Millis
    }

    /// The word used in step strings and metric labels.
    pub fn as_str(self) -> &'static str {
        self.def().name
    }

    /// The kind called `name`.
    pub fn named(name: &str) -> Option<BackendKind> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// Every kind's word, for messages: `sleep, http, pg, mc`.
    pub fn names() -> String {
        let names: Vec<&str> = Self::ALL.into_iter().map(Self::as_str).collect();
        names.join(", ")
    }

    /// The kinds whose counter is called `field` in `backend_counts`.
    pub fn counted_as(field: &str) -> Option<BackendKind> {
        Self::ALL
            .into_iter()
            .find(|k| k.def().counter.is_some_and(|c| c.field == field))
    }

    /// A timed call of this kind taking `micros` (`None` for a kind whose
    /// calls take no duration, such as a memcached get).
    pub fn timed_call(self, micros: u64) -> Option<IoCall> {
        self.is_timed().then_some(IoCall {
            kind: self,
            arg: super::IoArg::Micros(micros),
        })
    }

    /// A call of this kind reading `key` (`None` for a timed kind). The key
    /// is taken as given; the parser is what checks a key's characters.
    pub fn keyed_call(self, key: impl Into<String>) -> Option<IoCall> {
        (!self.is_timed()).then(|| IoCall {
            kind: self,
            arg: super::IoArg::Key(key.into()),
        })
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
