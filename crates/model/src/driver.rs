//! How load arrives at a target: open loop (a rate, in phases) or closed loop
//! (C clients each waiting for its answer), over kept-alive or fresh connections.
//! Arrival process, loop kind and connection mode are independent axes.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::units::secs;

/// One stretch of an open-loop schedule; the rate moves linearly from
/// `from_rps` to `to_rps` (equal for a hold) over `duration`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Phase {
    /// How long the phase lasts.
    #[serde(rename = "duration_s", with = "secs")]
    #[schemars(with = "f64")]
    pub duration: Duration,
    /// Rate at the phase's start, requests per second.
    pub from_rps: f64,
    /// Rate at the phase's end, requests per second.
    pub to_rps: f64,
}

impl Phase {
    /// A constant rate for a duration.
    pub fn hold(rps: f64, duration: Duration) -> Self {
        Phase {
            duration,
            from_rps: rps,
            to_rps: rps,
        }
    }

    /// Requests this phase schedules (the area under the rate line).
    pub fn planned(&self) -> f64 {
        (self.from_rps + self.to_rps) / 2.0 * self.duration.as_secs_f64()
    }
}

/// The arrival process of an open loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Arrival {
    /// Evenly spaced sends (vegeta, wrk2, artillery).
    Constant,
    /// Exponential gaps with the given seed, so runs are repeatable.
    Poisson {
        /// Seed of the gap generator.
        seed: u64,
    },
}

/// Open or closed loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Driver {
    /// Requests sent on a computed schedule regardless of answers.
    Open {
        /// Phases in order; they do not overlap.
        phases: Vec<Phase>,
        /// Evenly spaced or Poisson.
        arrival: Arrival,
    },
    /// `concurrency` clients, each sending its next request when answered.
    Closed {
        /// Number of clients.
        concurrency: u32,
        /// Stop after this many requests in all, if set.
        requests: Option<u64>,
        /// Stop after this long, if set (at least one of the two is set).
        #[serde(rename = "duration_s", with = "secs::option")]
        #[schemars(with = "Option<f64>")]
        duration: Option<Duration>,
    },
}

impl Driver {
    /// A constant-rate open loop.
    pub fn constant(rps: f64, duration: Duration) -> Self {
        Driver::Open {
            phases: vec![Phase::hold(rps, duration)],
            arrival: Arrival::Constant,
        }
    }

    /// Total scheduled length of an open loop, or the duration bound of a closed one.
    pub fn duration(&self) -> Option<Duration> {
        match self {
            Driver::Open { phases, .. } => Some(
                phases
                    .iter()
                    .fold(Duration::ZERO, |t, p| t.saturating_add(p.duration)),
            ),
            Driver::Closed { duration, .. } => *duration,
        }
    }

    /// The highest rate an open loop reaches.
    pub fn peak_rate(&self) -> Option<f64> {
        match self {
            Driver::Open { phases, .. } => phases
                .iter()
                .map(|p| p.from_rps.max(p.to_rps))
                .fold(None, |a: Option<f64>, r| Some(a.map_or(r, |a| a.max(r)))),
            Driver::Closed { .. } => None,
        }
    }

    /// Requests an open loop plans (rounded down), or a closed loop's request bound.
    pub fn planned(&self) -> Option<u64> {
        match self {
            Driver::Open { phases, .. } => {
                Some(phases.iter().map(Phase::planned).sum::<f64>().floor() as u64)
            }
            Driver::Closed { requests, .. } => *requests,
        }
    }

    /// The same driver with durations multiplied and rates divided by `factor`
    /// (the time-scale), so requests in flight stay the same.
    pub fn scaled(&self, factor: f64) -> Driver {
        match self {
            Driver::Open { phases, arrival } => Driver::Open {
                phases: phases
                    .iter()
                    .map(|p| Phase {
                        duration: p.duration.mul_f64(factor),
                        from_rps: p.from_rps / factor,
                        to_rps: p.to_rps / factor,
                    })
                    .collect(),
                arrival: *arrival,
            },
            Driver::Closed {
                concurrency,
                requests,
                duration,
            } => Driver::Closed {
                concurrency: *concurrency,
                requests: *requests,
                duration: duration.map(|d| d.mul_f64(factor)),
            },
        }
    }
}

/// How requests use TCP connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ConnectionMode {
    /// A pool of kept-alive connections that grows as needed up to `max`.
    KeepAlive {
        /// Most connections open at once.
        max: u32,
    },
    /// One fresh TCP connection per request, closed after the answer
    /// (artillery's way; runs a client out of ephemeral ports).
    NewPerRequest {
        /// Most connections open at once.
        max: u32,
    },
}

impl ConnectionMode {
    /// Default connection cap: below the 20,000 open files a process may hold here.
    pub const DEFAULT_MAX: u32 = 10_000;

    /// The connection cap, whatever the mode.
    pub fn max(&self) -> u32 {
        match self {
            ConnectionMode::KeepAlive { max } | ConnectionMode::NewPerRequest { max } => *max,
        }
    }
}

impl Default for ConnectionMode {
    fn default() -> Self {
        ConnectionMode::KeepAlive {
            max: Self::DEFAULT_MAX,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planned_is_the_area_under_the_rate() {
        let d = Driver::Open {
            phases: vec![
                Phase {
                    duration: Duration::from_secs(10),
                    from_rps: 50.0,
                    to_rps: 450.0,
                },
                Phase::hold(450.0, Duration::from_secs(60)),
            ],
            arrival: Arrival::Constant,
        };
        assert_eq!(d.planned(), Some(2_500 + 27_000));
        assert_eq!(d.duration(), Some(Duration::from_secs(70)));
        assert_eq!(d.peak_rate(), Some(450.0));
    }

    #[test]
    fn scaling_keeps_in_flight() {
        let d = Driver::constant(450.0, Duration::from_secs(60)).scaled(0.1);
        assert_eq!(d.planned(), Some(27_000));
        assert_eq!(d.duration(), Some(Duration::from_secs(6)));
    }

    #[test]
    fn serializes_with_tags() {
        let j = serde_json::to_value(Driver::constant(10.0, Duration::from_secs(2))).unwrap();
        assert_eq!(j["kind"], "open");
        assert_eq!(j["phases"][0]["duration_s"], 2.0);
        assert_eq!(j["arrival"]["kind"], "constant");
    }
}
