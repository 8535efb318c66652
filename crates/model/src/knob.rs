//! A model's knobs, listed once: [`ModelParams`] (the struct every model reads),
//! [`Knob`] (the handle model definitions list), [`KNOBS`] (name, help,
//! default, bounds, what it sizes, accessors) and everything derived from
//! them (labels, `--flag N` argv and its help naming the models that read it,
//! `{knob}` substitution, range and machine checks) come from the one
//! `knobs!` list below. Adding a knob adds one entry there, its handle in the
//! definitions of the models that read it, and their code.

use serde::{Deserialize, Serialize};

/// What a knob is worth when it is not set: the default of the real system
/// the model stands for. A model's file or a runtime's manifest may override it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KnobDefault {
    /// A fixed number (Tomcat's 200 threads, HikariCP's 10 connections).
    Fixed(u32),
    /// The machine's cores (tokio's worker threads).
    Cores,
    /// No limit (thread-per-request's `max_threads`).
    Unlimited,
}

impl KnobDefault {
    /// The value on a machine with `cores` cores (`None`: no limit).
    pub fn value(self, cores: u32) -> Option<u32> {
        match self {
            KnobDefault::Fixed(n) => Some(n),
            KnobDefault::Cores => Some(cores.max(1)),
            KnobDefault::Unlimited => None,
        }
    }

    /// The rule in words: `200`, `cores`, `no limit`.
    pub fn rule(self) -> String {
        match self {
            KnobDefault::Fixed(n) => crate::units::thousands(u64::from(n)),
            KnobDefault::Cores => "cores".into(),
            KnobDefault::Unlimited => "no limit".into(),
        }
    }
}

/// What a knob sizes, so checks that concern one kind of resource find
/// their knobs in the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sizes {
    /// A set of OS threads (checked against what this machine starts).
    Threads,
    /// A set of processes (checked like threads: each is one at least).
    Processes,
    /// Connections held open (a server's cap, a backend's pool).
    Connections,
    /// A queue of waiting connections.
    Queue,
}

/// One knob: its name (presets, results, `--name-with-dashes` flags), what it
/// does, its default, its range, what it sizes, and how to read and write it.
#[derive(Clone, Copy)]
pub struct KnobDef {
    /// Snake-case name, e.g. `max_connections`.
    pub name: &'static str,
    /// What it does, in a phrase (the models that read it are added by
    /// [`KnobDef::help`]).
    pub about: &'static str,
    /// Its default where a model does not say otherwise.
    pub default: KnobDefault,
    /// Largest value accepted (the smallest is always 1): a value past it is
    /// refused before anything is allocated or started.
    pub max: u32,
    /// What it sizes.
    pub sizes: Sizes,
    /// Read it from params.
    pub get: fn(&ModelParams) -> Option<u32>,
    /// Write it into params.
    pub set: fn(&mut ModelParams, Option<u32>),
}

impl std::fmt::Debug for KnobDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl PartialEq for KnobDef {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for KnobDef {}

impl KnobDef {
    /// The command-line flag, e.g. `--max-connections`.
    pub fn flag(&self) -> String {
        format!("--{}", self.name.replace('_', "-"))
    }

    /// Does it size threads or processes (what this machine starts)?
    pub fn sizes_tasks(&self) -> bool {
        matches!(self.sizes, Sizes::Threads | Sizes::Processes)
    }

    /// Check a value against this knob's range: one line naming the knob and
    /// the range when it is outside.
    pub fn check(&self, value: u64) -> Result<u32, KnobError> {
        if value == 0 || value > u64::from(self.max) {
            return Err(KnobError::Range {
                knob: self.name,
                value,
                max: self.max,
            });
        }
        Ok(value as u32)
    }
}

/// A knob setting that cannot be used; one line naming the knob.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KnobError {
    /// Outside 1..=max.
    #[error("{knob} = {value} is out of range: use 1..={max}")]
    Range {
        /// The knob.
        knob: &'static str,
        /// The value given.
        value: u64,
        /// Its largest value.
        max: u32,
    },
    /// No knob of that name.
    #[error("unknown knob '{0}' (expected one of: {names})", names = knob_names())]
    Unknown(String),
}

macro_rules! knobs {
    ($( $(#[doc = $doc:literal])* $handle:ident $name:ident: $default:expr, max $max:expr, $sizes:ident; )*) => {
        /// A model's knobs; `None` means "the default of the system it stands
        /// for". Each model reads only the knobs that apply to it.
        #[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct ModelParams {
            $(
                $(#[doc = $doc])*
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub $name: Option<u32>,
            )*
        }

        /// A knob, as model definitions name it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Knob {
            $(
                #[doc = concat!("`", stringify!($name), "`: ", $($doc),*)]
                $handle,
            )*
        }

        impl Knob {
            /// Every handle, in [`KNOBS`] order.
            pub const ALL: &'static [Knob] = &[$(Knob::$handle,)*];
        }

        /// Every knob, in the order labels and flags list them ([`Knob`]'s order).
        pub const KNOBS: &[KnobDef] = &[
            $(KnobDef {
                name: stringify!($name),
                about: concat!($($doc),*),
                default: $default,
                max: $max,
                sizes: Sizes::$sizes,
                get: |p| p.$name,
                set: |p, v| p.$name = v,
            },)*
        ];
    };
}

knobs! {
    /// worker threads (Tomcat maxThreads 200).
    Threads threads: KnobDefault::Fixed(200), max 100_000, Threads;
    /// connections held open at once (Tomcat maxConnections 8,192).
    MaxConnections max_connections: KnobDefault::Fixed(8_192), max 1_000_000, Connections;
    /// listen backlog (Tomcat acceptCount 100 for the thread models; 4,096 for the loops).
    Backlog backlog: KnobDefault::Fixed(100), max 1_000_000, Queue;
    /// event-loop worker threads (tokio: one per core).
    Workers workers: KnobDefault::Cores, max 1_024, Threads;
    /// blocking pool threads (Kotlin Dispatchers.IO 64).
    Offload offload: KnobDefault::Fixed(64), max 100_000, Threads;
    /// most threads alive at once (default: no cap).
    MaxThreads max_threads: KnobDefault::Unlimited, max 100_000, Threads;
    /// worker processes (gunicorn workers, Node cluster).
    Processes processes: KnobDefault::Cores, max 1_024, Processes;
    /// memcached connections (1, E4's set-up).
    McPool mc_pool: KnobDefault::Fixed(1), max 10_000, Connections;
    /// PostgreSQL connections in the pool (HikariCP 10).
    PgPool pg_pool: KnobDefault::Fixed(10), max 10_000, Connections;
}

impl Knob {
    /// Its definition.
    pub fn def(self) -> &'static KnobDef {
        &KNOBS[self as usize]
    }
}

/// The knob called `name`.
pub fn knob(name: &str) -> Option<&'static KnobDef> {
    KNOBS.iter().find(|k| k.name == name)
}

/// The names of every knob, for messages: `threads, max_connections, ...`.
pub fn knob_names() -> String {
    let names: Vec<&str> = KNOBS.iter().map(|k| k.name).collect();
    names.join(", ")
}

impl ModelParams {
    /// Every knob as (name, value), in [`KNOBS`] order.
    pub fn knobs(&self) -> impl Iterator<Item = (&'static str, Option<u32>)> + '_ {
        KNOBS.iter().map(move |k| (k.name, (k.get)(self)))
    }

    /// The knobs that are set, as (definition, value).
    pub fn set_knobs(&self) -> impl Iterator<Item = (&'static KnobDef, u32)> + '_ {
        KNOBS.iter().filter_map(move |k| Some((k, (k.get)(self)?)))
    }

    /// The value of `knob`, or its default on `cores` cores (`None`: no limit).
    pub fn value(&self, knob: &KnobDef, cores: u32) -> Option<u32> {
        (knob.get)(self).or_else(|| knob.default.value(cores))
    }

    /// Set the knob called `name`, checking its range.
    pub fn set(&mut self, name: &str, value: u64) -> Result<(), KnobError> {
        let k = knob(name).ok_or_else(|| KnobError::Unknown(name.to_string()))?;
        (k.set)(self, Some(k.check(value)?));
        Ok(())
    }

    /// Every set knob within its range.
    pub fn check(&self) -> Result<(), KnobError> {
        for (k, v) in self.set_knobs() {
            k.check(u64::from(v))?;
        }
        Ok(())
    }

    /// A short label of the knobs that are set, e.g. `threads=200,backlog=100`.
    pub fn label(&self) -> String {
        let parts: Vec<String> = self
            .set_knobs()
            .map(|(k, v)| format!("{}={v}", k.name))
            .collect();
        parts.join(",")
    }

    /// The knobs that are set as command-line flags, e.g.
    /// `["--threads", "200", "--max-connections", "10"]`.
    pub fn flags(&self) -> Vec<String> {
        self.set_knobs()
            .flat_map(|(k, v)| [k.flag(), v.to_string()])
            .collect()
    }

    /// Replace `{knob}` for every set knob in `text` (custom target commands).
    pub fn substitute(&self, text: &str) -> String {
        self.set_knobs().fold(text.to_string(), |a, (k, v)| {
            a.replace(&format!("{{{}}}", k.name), &v.to_string())
        })
    }

    /// `pool` threads, defaulted (Tomcat's 200).
    pub fn threads(&self) -> u32 {
        self.fixed("threads")
    }

    /// Connection cap, defaulted.
    pub fn max_connections(&self) -> u32 {
        self.fixed("max_connections")
    }

    /// Listen backlog, defaulted.
    pub fn backlog(&self) -> u32 {
        self.fixed("backlog")
    }

    /// Event-loop workers, defaulted to the number of cores (tokio's default).
    pub fn workers(&self, cores: u32) -> u32 {
        self.workers.unwrap_or(cores.max(1))
    }

    /// Offload pool size, defaulted.
    pub fn offload(&self) -> u32 {
        self.fixed("offload")
    }

    /// Worker processes, defaulted to the number of cores.
    pub fn processes(&self, cores: u32) -> u32 {
        self.processes.unwrap_or(cores.max(1))
    }

    /// PostgreSQL connections, defaulted.
    pub fn pg_pool(&self) -> u32 {
        self.fixed("pg_pool")
    }

    /// A knob with a fixed default, set or defaulted.
    fn fixed(&self, name: &str) -> u32 {
        let k = knob(name).expect("a knob of the list");
        self.value(k, 1).unwrap_or(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_lists_only_set_knobs() {
        let p = ModelParams {
            threads: Some(8),
            offload: Some(2),
            ..Default::default()
        };
        assert_eq!(p.label(), "threads=8,offload=2");
        assert_eq!(p.max_connections(), 8_192);
        assert_eq!(p.threads(), 8);
        assert_eq!(ModelParams::default().pg_pool(), 10);
    }

    #[test]
    fn set_knobs_become_serve_flags_and_substitutions() {
        let p = ModelParams {
            max_connections: Some(10),
            pg_pool: Some(4),
            ..Default::default()
        };
        assert_eq!(p.flags(), ["--max-connections", "10", "--pg-pool", "4"]);
        assert!(ModelParams::default().flags().is_empty());
        assert_eq!(p.substitute("x {pg_pool} {threads}"), "x 4 {threads}");
    }

    #[test]
    fn every_knob_is_reachable_by_name_and_checked() {
        for k in KNOBS {
            let mut p = ModelParams::default();
            p.set(k.name, 3).unwrap();
            assert_eq!((k.get)(&p), Some(3), "{}", k.name);
            assert!(p.set(k.name, 0).is_err());
            let e = p.set(k.name, u64::from(k.max) + 1).unwrap_err().to_string();
            assert!(e.contains(k.name) && e.contains("1..="), "{e}");
            assert!(!k.about.is_empty());
        }
        let e = ModelParams::default()
            .set("fibers", 1)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unknown knob 'fibers'") && e.contains("threads"),
            "{e}"
        );
    }

    #[test]
    fn handles_name_their_knobs() {
        assert_eq!(Knob::PgPool.def().name, "pg_pool");
        assert_eq!(Knob::ALL.len(), KNOBS.len());
        for (i, h) in Knob::ALL.iter().enumerate() {
            assert_eq!((*h as usize, h.def().name), (i, KNOBS[i].name));
        }
    }

    #[test]
    fn serde_is_the_flat_map_of_set_knobs() {
        let p = ModelParams {
            threads: Some(20),
            processes: Some(3),
            ..Default::default()
        };
        let v = serde_json::to_value(&p).unwrap();
        assert_eq!(v, serde_json::json!({"threads": 20, "processes": 3}));
        assert!(serde_json::from_str::<ModelParams>(r#"{"fibers": 1}"#).is_err());
    }
}
