//! The machine's noise through one search ([`Machine`]): how far the CPU's
//! speed moved on the generator's and the target's cores, and the CPU
//! steal a hypervisor took. A capacity is only as precise as the machine
//! it was measured on was steady: on this project's 2-core VMs a fixed
//! loop's speed moved 41-76% through one pair of searches (issue 47), so a
//! search that asked for 5% and ran through such a move did not measure
//! 5%. The search records what it saw; [`Machine::allows`] says whether
//! that was steady enough for the precision asked, and
//! [`Machine::widen`] how far the interval reaches when it was not.
//!
//! A fixed loop timed by its own CPU clock does not see another process
//! on the target's core (time slices do not move a CPU clock), so the
//! target's pinned cores are also read for the time others took there
//! ([`Neighbours`]): a `stress-ng --cpu 1` beside a CPU-bound target halves
//! what it can serve while every timed loop reads a steady CPU.

use serde::{Deserialize, Serialize};

use super::{Interval, StepRecord};
use crate::cpu_speed::CpuSpeed;

/// What the machine did through a search.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Machine {
    /// A fixed loop timed on the generator's cores through the search.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator_cpu: Option<CpuSpeed>,
    /// The same loop on the target's cores, when it was pinned to them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_cpu: Option<CpuSpeed>,
    /// CPU steal through the search, % of the machine's CPU time
    /// (`/proc/stat`); `None` where it cannot be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_pct: Option<f64>,
    /// Other processes on the target's pinned cores, when they and the
    /// target's PID were known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub neighbours: Option<Neighbours>,
    /// The target's own pauses through the search, from its runtime's
    /// series, when `--metrics` exported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pauses: Option<TargetPauses>,
    /// The longest the target's event loop was held in a step, when
    /// `--metrics` exported its delay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_delay: Option<LoopDelay>,
    /// The precision the search asked for, %: what the machine is held to.
    #[serde(default)]
    pub asked_pct: f64,
}

/// How often and how long the target stopped itself (its GC) through a
/// search, from its own counters at the start and the end. Said beside the
/// machine's noise, not added to its reach: they are the service's own, a
/// rerun meets them again, and the verdicts' windows already judged them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TargetPauses {
    /// What paused ("the JVM's GC").
    pub what: String,
    /// The counter read.
    pub series: String,
    /// Pauses in the search.
    pub count: f64,
    /// Seconds paused in all.
    pub total_s: f64,
    /// The search's wall time between the two reads, s.
    pub over_s: f64,
    /// The longest recent pause at the end, s, where the series has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub longest_s: Option<f64>,
}

/// The longest the target held its own event loop in a step, from its
/// series: Node's prom-client exports the largest delay since its last
/// scrape and resets it at each (`nodejs_eventloop_lag_max_seconds`), so
/// it cannot be read at the search's two ends as a GC's counters are; the
/// search scrapes it every 200 ms through each step and keeps each step's
/// peak. Said beside the machine's noise, not added to its reach: a loop
/// held by its own handlers or its GC is the service's, met again by a
/// rerun.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoopDelay {
    /// The series read.
    pub series: String,
    /// The longest delay in any step, s.
    pub longest_s: f64,
    /// The rate of the step it was read in, req/s.
    pub at_rps: f64,
}

impl LoopDelay {
    /// Node's series (prom-client's default metrics).
    pub const SERIES: &'static str = "nodejs_eventloop_lag_max_seconds";

    /// The step with the longest delay; `None` when no step read one.
    pub fn of(steps: &[StepRecord]) -> Option<LoopDelay> {
        steps
            .iter()
            .filter_map(|s| Some((s.metrics.get(Self::SERIES)?, s.rate_rps)))
            .max_by(|a, b| a.0.total_cmp(b.0))
            .map(|(longest, at)| LoopDelay {
                series: Self::SERIES.to_string(),
                longest_s: *longest,
                at_rps: at,
            })
    }
}

impl TargetPauses {
    /// The share of the search spent paused, %.
    pub fn share_pct(&self) -> f64 {
        match self.over_s > 0.0 {
            true => self.total_s / self.over_s * 100.0,
            false => 0.0,
        }
    }
}

/// What other processes took of the target's pinned cores through a
/// search, read each second from the cores' counters less the target's own
/// CPU time, and the time the target's threads waited to run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Neighbours {
    /// Seconds read.
    pub readings: u32,
    /// Their share of the cores' time over the search, %.
    pub mean_pct: f64,
    /// Their largest share in one second, %.
    pub peak_pct: f64,
    /// The most they took from one of the target's threads in one
    /// second, % of it ([`Second::took`]).
    pub took_pct: f64,
}

/// One second on the target's pinned cores, each a share of the cores'
/// time (a core for a second is 1 / cores).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Second {
    /// The target's CPU time.
    pub target: f64,
    /// Everyone else's.
    pub others: f64,
    /// The most one of the target's threads waited, runnable, for a CPU:
    /// a share of the second.
    pub waited: f64,
}

impl Second {
    /// The share of a thread's second that others took: it waited
    /// `waited` for a CPU while they ran `others`, so at most the smaller
    /// of the two was theirs (a target's own threads queueing for its one
    /// core wait too, beside nobody). Read per thread, the worst: an event
    /// loop's one thread that waited half its second beside a busy loop
    /// lost half its time, so half its rate; each of a pool's 20 threads
    /// asleep 100 ms a request that waited 12 ms in a second beside a
    /// build lost about a millisecond a request, 1.2% (the threads' waits
    /// summed, 0.25 of a second against the 0.01 they ran, read as 96%
    /// taken: r51_13).
    pub fn took(&self) -> f64 {
        self.waited.min(self.others).clamp(0.0, 1.0)
    }
}

impl Neighbours {
    /// The most a capacity is held to have lost to neighbours: past it the
    /// reach (99x) would span every rate. A busy loop beside an event loop
    /// on its core took 98% of what it wanted in one second: an interval
    /// that stops short of the target's own rate would print a wrong
    /// number, so the reach goes as far as the figure says.
    const MAX_TOOK: f64 = 0.99;

    /// From each second read; `None` with none.
    pub fn of(seconds: &[Second]) -> Option<Neighbours> {
        if seconds.is_empty() {
            return None;
        }
        let n = seconds.len() as f64;
        let others = seconds.iter().map(|s| s.others.max(0.0));
        Some(Neighbours {
            readings: seconds.len() as u32,
            mean_pct: others.clone().sum::<f64>() / n * 100.0,
            peak_pct: others.fold(0.0, f64::max) * 100.0,
            took_pct: seconds.iter().map(Second::took).fold(0.0, f64::max) * 100.0,
        })
    }

    /// How far a capacity read through them may sit below the target's
    /// own, as a share of the rate read: a second that took a share `p` of
    /// a thread's time left it `1 - p`, so its own rate is up to
    /// `1 / (1 - p)` of the one read.
    pub fn reach(&self) -> f64 {
        let p = (self.took_pct / 100.0).clamp(0.0, Self::MAX_TOOK);
        p / (1.0 - p)
    }
}

impl Machine {
    /// How far the CPU's speed moved, %: the larger of both places';
    /// `None` when neither was timed.
    pub fn moved_pct(&self) -> Option<f64> {
        [&self.generator_cpu, &self.target_cpu]
            .into_iter()
            .flatten()
            .map(CpuSpeed::spread_pct)
            .reduce(f64::max)
    }

    /// How far a capacity measured through this may sit from a rerun's, as
    /// a share: half the speed's move (a rate read at either end of it is
    /// that far from the middle) plus the steal, which took that share of
    /// the CPU away at times the search did not see.
    /// plus what neighbours on the target's cores took from it.
    pub fn reach(&self) -> f64 {
        self.moved_pct().unwrap_or(0.0) / 200.0
            + self.steal_pct.unwrap_or(0.0) / 100.0
            + self.neighbours.as_ref().map_or(0.0, Neighbours::reach)
    }

    /// The machine was steady enough for the precision asked
    /// ([`Machine::asked_pct`]): its [`Machine::reach`] is within it.
    pub fn allows(&self) -> bool {
        self.reach() <= self.asked_pct / 100.0
    }

    /// `interval` stretched to the reach either side of its ends (upward
    /// only for what neighbours took), when the machine did not allow the
    /// precision asked.
    pub fn widen(&self, interval: Interval) -> Interval {
        if self.allows() {
            return interval;
        }
        // Neighbours only take: what they moved was read low, never high.
        let both_ways = self.reach() - self.neighbours.as_ref().map_or(0.0, Neighbours::reach);
        Interval {
            low_rps: (interval.low_rps * (1.0 - both_ways)).max(0.0),
            high_rps: interval.high_rps * (1.0 + self.reach()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn speed(p10_ms: f64, p90_ms: f64) -> Option<CpuSpeed> {
        Some(CpuSpeed {
            timings: 40,
            p10_ms,
            p50_ms: (p10_ms + p90_ms) / 2.0,
            p90_ms,
        })
    }

    #[test]
    fn a_steady_machine_allows_the_precision_and_leaves_the_interval() {
        let m = Machine {
            generator_cpu: speed(1.0, 1.06),
            target_cpu: None,
            steal_pct: Some(0.5),
            neighbours: None,
            pauses: None,
            loop_delay: None,
            asked_pct: 5.0,
        };
        assert!((m.reach() - 0.035).abs() < 1e-9);
        assert!(m.allows());
        let i = Interval {
            low_rps: 90.0,
            high_rps: 110.0,
        };
        assert_eq!(m.widen(i), i);
    }

    #[test]
    fn a_cpu_that_moved_45_percent_widens_the_interval_by_half_of_it() {
        let m = Machine {
            generator_cpu: speed(1.0, 1.1),
            target_cpu: speed(1.0, 1.45),
            steal_pct: None,
            neighbours: None,
            pauses: None,
            loop_delay: None,
            asked_pct: 5.0,
        };
        assert!((m.moved_pct().unwrap() - 45.0).abs() < 1e-9);
        assert!(!m.allows());
        let w = m.widen(Interval {
            low_rps: 2900.0,
            high_rps: 3100.0,
        });
        assert!((w.low_rps - 2900.0 * 0.775).abs() < 1e-6, "{w:?}");
        assert!((w.high_rps - 3100.0 * 1.225).abs() < 1e-6, "{w:?}");
    }

    fn second(target: f64, others: f64, waited: f64) -> Second {
        Second {
            target,
            others,
            waited,
        }
    }

    /// A hog on the target's core through half the search: the seconds in
    /// which the target waited beside it say what was taken.
    #[test]
    fn a_hog_on_the_targets_core_widens_the_interval_by_what_it_took() {
        let mut seconds = vec![second(0.97, 0.01, 0.02); 10];
        seconds.extend(vec![second(0.5, 0.49, 0.5); 10]);
        let n = Neighbours::of(&seconds).unwrap();
        assert_eq!(n.readings, 20);
        assert!((n.mean_pct - 25.0).abs() < 1e-9, "{n:?}");
        assert!((n.peak_pct - 49.0).abs() < 1e-9, "{n:?}");
        assert!((n.took_pct - 49.0).abs() < 1e-9, "{n:?}");
        let p = n.took_pct / 100.0;
        let m = Machine {
            neighbours: Some(n),
            asked_pct: 5.0,
            ..Machine::default()
        };
        assert!((m.reach() - p / (1.0 - p)).abs() < 1e-9);
        assert!(!m.allows());
        let w = m.widen(Interval {
            low_rps: 500.0,
            high_rps: 520.0,
        });
        assert!(
            w.high_rps >= 1000.0,
            "the target's own 1,000/s is inside: {w:?}"
        );
        assert_eq!(
            w.low_rps, 500.0,
            "what a neighbour took was read low, not high"
        );
    }

    /// A thread mostly asleep waits little beside a hog and loses little;
    /// threads queueing for their own core beside nobody lose nothing; an
    /// event loop's thread that waited 53% of its second beside a busy
    /// loop lost 53% of it.
    #[test]
    fn what_neighbours_took_is_the_worst_threads_wait_they_caused() {
        assert!(second(0.05, 0.94, 0.002).took() < 0.01);
        assert_eq!(second(0.98, 0.0, 0.75).took(), 0.0);
        assert!((second(0.12, 0.88, 0.53).took() - 0.53).abs() < 1e-12);
        assert_eq!(second(0.0, 0.0, 0.0).took(), 0.0);
        // r51_13: a pool's threads asleep on their requests, the worst
        // waiting 12 ms of its second beside a build, lost 1.2%.
        assert!((second(0.01, 0.9, 0.012).took() - 0.012).abs() < 1e-12);
        assert_eq!(Neighbours::of(&[]), None);
        let all = Neighbours::of(&[second(0.12, 0.88, 0.53)]).unwrap();
        assert!((all.reach() - 0.53 / 0.47).abs() < 1e-9, "{all:?}");
        // Past 99% taken, the reach stops at 99x: not every rate.
        let most = Neighbours::of(&[second(0.001, 1.0, 1.0)]).unwrap();
        assert!((most.reach() - 99.0).abs() < 1e-6, "{most:?}");
    }

    #[test]
    fn nothing_read_is_no_noise_said() {
        let m = Machine {
            asked_pct: 5.0,
            ..Machine::default()
        };
        assert_eq!(m.moved_pct(), None);
        assert!(m.allows());
    }
}
