//! The backends an io step can go to, each described once: its name in step
//! strings, the flag and environment variable that give its address, the
//! knob that sizes its pool, and whether a call takes a duration. Flags,
//! the services `iolab run` starts, verify's checks and batch IO all read
//! [`BackendKind::def`].

use std::fmt;

use serde::{Deserialize, Serialize};

/// The backends an [`IoCall`](super::IoCall) can go to.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
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

/// What one backend is.
#[derive(Debug, Clone, Copy)]
pub struct BackendDef {
    /// The word in step strings and metric labels: `pg`.
    pub name: &'static str,
    /// What a call does, in a phrase.
    pub about: &'static str,
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
    /// A call takes a duration (`pg:200`), so a batch IO task can be one.
    pub timed: bool,
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
                flag: "",
                env: "",
                address: "",
                value_name: "",
                pool_knob: None,
                timed: true,
            },
            Self::Http => &BackendDef {
                name: "http",
                about: "iolab's HTTP delay service answers after MS",
                flag: "--http-backend",
                env: "IOLAB_HTTP_BACKEND",
                address: "http://HOST:PORT (the URL `iolab backend http` prints)",
                value_name: "URL",
                pool_knob: None,
                timed: true,
            },
            Self::Pg => &BackendDef {
                name: "pg",
                about: "SELECT pg_sleep(MS) on PostgreSQL",
                flag: "--pg",
                env: "IOLAB_PG",
                address: "postgres://USER@HOST:PORT/DB",
                value_name: "URL",
                pool_knob: Some("pg_pool"),
                timed: true,
            },
            Self::Mc => &BackendDef {
                name: "mc",
                about: "a memcached get of KEY",
                flag: "--mc",
                env: "IOLAB_MC",
                address: "HOST:PORT, e.g. 127.0.0.1:11211",
                value_name: "HOST:PORT",
                pool_knob: Some("mc_pool"),
                timed: false,
            },
        }
    }

    /// The real backends: every kind but the embedded timer.
    pub fn real() -> impl Iterator<Item = BackendKind> {
        Self::ALL.into_iter().filter(|k| !k.is_sleep())
    }

    /// The embedded timer (needs nothing installed).
    pub fn is_sleep(&self) -> bool {
        *self == Self::Sleep
    }

    /// The word used in step strings and metric labels.
    pub fn as_str(self) -> &'static str {
        self.def().name
    }

    /// The kind called `name`.
    pub fn named(name: &str) -> Option<BackendKind> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// A timed call of this kind taking `micros` (`None` for a kind whose
    /// calls take no duration, such as a memcached get).
    pub fn timed_call(self, micros: u64) -> Option<super::IoCall> {
        use super::IoCall;
        match self {
            Self::Sleep => Some(IoCall::Sleep { micros }),
            Self::Http => Some(IoCall::Http { micros }),
            Self::Pg => Some(IoCall::Pg { micros }),
            Self::Mc => None,
        }
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
