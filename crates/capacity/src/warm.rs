//! Warming a target before it is measured: a JIT compiles by count (a
//! method after thousands of calls, in stages), and pools fill, so a
//! target read in its first seconds reads its warm-up, not itself. A
//! Spring copy warmed 2 s at 106/s cost 3.1 ms a request twice in a row,
//! then 0.9 after eight more holds; a Spring target searched fresh failed
//! 500/s at 1.84 ms a request, then passed 475/s at 1.02 in the same
//! search. So a target is first sent as many requests as the one it is
//! compared with had answered when it was read, at a rate where no queue
//! builds (half the rate it will be held at), within [`WARM_UP`] and
//! [`MAX_WARM_UP`]; a target searched after it ([`Warm::until_steady`])
//! then holds that rate until its CPU per request is steady: a Spring
//! target warmed so read 8.4 ms a request at 50/s, 3.6 at 100/s and 1.4-1.8
//! from 300/s, its compiler threads busy beside it.

use std::time::Duration;

use iolab_model::capacity::{CpuSource, SearchStage, Slo, StepRecord};
use iolab_predict::fit::cpu;

use super::{Bench, StepError};

/// Shortest warm-up.
pub const WARM_UP: Duration = Duration::from_secs(2);

/// Longest warm-up: a Spring B warmed 3,565 requests (14 s at 379/s) held
/// 700/s, as one warmed 17,856 (60 s) did, where one warmed 1,412 held 375.
pub const MAX_WARM_UP: Duration = Duration::from_secs(30);

/// Two holds in a row within this share of each other are steady.
pub const STEADY: f64 = 0.1;

/// A warm-up: `requests` sent at `rate` req/s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Warm {
    /// Requests to send (the other target's count).
    pub requests: f64,
    /// The rate they are sent at.
    pub rate: f64,
}

impl Warm {
    /// How long it lasts: `requests` at `rate`, within [`WARM_UP`] and
    /// [`MAX_WARM_UP`].
    pub fn length(&self) -> Duration {
        let s = self.requests / self.rate.max(1e-3);
        Duration::from_secs_f64(s.clamp(WARM_UP.as_secs_f64(), MAX_WARM_UP.as_secs_f64()))
    }

    /// Send it to `probe`'s target (a step held to `slo`, judged by no
    /// one), then let what it queued drain (until single requests come back
    /// about as fast as its fastest did).
    pub fn serve(&self, probe: &dyn Bench, slo: &Slo) -> Result<StepRecord, StepError> {
        probe.step_then_recover(slo, self.rate, self.length())
    }

    /// [`Warm::serve`], then holds of [`WARM_UP`] at its rate until two in
    /// a row cost within [`STEADY`] of each other (CPU per request from
    /// `source`), [`MAX_WARM_UP`] in all at most: every step, in order.
    pub fn until_steady(
        &self,
        probe: &dyn Bench,
        slo: &Slo,
        source: CpuSource,
    ) -> Result<Vec<StepRecord>, StepError> {
        let mut steps = vec![self.serve(probe, slo)?];
        let mut spent = self.length();
        // Without a CPU reading (no PID, cores not pinned) steadiness
        // cannot be read: the count alone is the warm-up, not 30 s of holds.
        let readable =
            |steps: &[StepRecord]| steps.last().and_then(|s| cpu::at(s, source)).is_some();
        while spent + WARM_UP <= MAX_WARM_UP && readable(&steps) && !steady(&steps, source) {
            if probe.cancelled() {
                break;
            }
            steps.push(probe.step(slo, self.rate, WARM_UP, SearchStage::Ramp)?);
            spent += WARM_UP;
        }
        Ok(steps)
    }

    /// Warm a target before its search ([`Warm::until_steady`], its CPU
    /// read from its process tree when its PID is known): what was done, in
    /// a sentence for the search's notes.
    pub fn before_search(&self, probe: &dyn Bench, slo: &Slo) -> Result<String, StepError> {
        let source = probe.cpu_source();
        let steps = self.until_steady(probe, slo, source)?;
        Ok(said(self.rate, &steps, source))
    }
}

/// `warmed first: 5800 requests answered at 288/s over 20.0 s (a JIT
/// compiles by count); CPU a request 8.45 ms in the first hold, 1.75 and
/// 1.79 in the last two: steady`.
fn said(rate: f64, steps: &[StepRecord], source: CpuSource) -> String {
    let answered: u64 = steps.iter().map(|s| s.attack.requests.answered()).sum();
    let seconds: f64 = steps.iter().map(|s| s.duration_s).sum();
    let ms = |s: &StepRecord| cpu::at(s, source).map_or("-".into(), |m| format!("{m:.2}"));
    let costs = match steps {
        [first, .., a, b] => format!(
            "{} ms in the first hold, {} and {} in the last two",
            ms(first),
            ms(a),
            ms(b)
        ),
        [a, b] => format!("{} then {} ms", ms(a), ms(b)),
        [a] => format!("{} ms", ms(a)),
        [] => "-".into(),
    };
    let verdict = if steady(steps, source) {
        "steady"
    } else if steps.iter().all(|s| cpu::at(s, source).is_none()) {
        "its CPU not read, so not judged steady (give --pid)"
    } else if steps.len() < 2 {
        "the count took the longest warm-up, so no hold to compare"
    } else {
        "not steady within the longest warm-up"
    };
    format!(
        "warmed first: {answered} requests answered at {rate:.0}/s over {seconds:.1} s (a JIT compiles by count); CPU a request {costs}: {verdict}"
    )
}

/// The last two steps cost within [`STEADY`] of each other.
pub fn steady(steps: &[StepRecord], source: CpuSource) -> bool {
    let [.., a, b] = steps else {
        return false;
    };
    match (cpu::at(a, source), cpu::at(b, source)) {
        (Some(a), Some(b)) => (a - b).abs() <= STEADY * b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warm_up_lasts_its_count_at_its_rate_within_the_bounds() {
        let warm = |requests| Warm {
            requests,
            rate: 100.0,
        };
        assert_eq!(warm(350.0).length(), Duration::from_secs_f64(3.5));
        assert_eq!(warm(10.0).length(), WARM_UP);
        assert_eq!(warm(1e9).length(), MAX_WARM_UP);
    }

    #[test]
    fn steady_is_two_holds_in_a_row_costing_alike() {
        let hold = |cores: f64| {
            let mut s = StepRecord {
                cpu_cores: Some(cores),
                ..StepRecord::default()
            };
            s.attack.requests.ok = 100;
            s.attack.elapsed_s = 1.0;
            s
        };
        let p = CpuSource::Process;
        // 8.4 ms, then 3.6 a request: a JIT still compiling.
        assert!(!steady(&[hold(0.84), hold(0.36)], p));
        assert!(steady(&[hold(0.84), hold(0.18), hold(0.17)], p));
        assert!(!steady(&[hold(0.17)], p));
        // No reading: not known to be steady.
        assert!(!steady(&[hold(0.17), hold(0.17)], CpuSource::Cores));
    }
}
