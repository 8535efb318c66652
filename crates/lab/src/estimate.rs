//! How long a plan will take, said before it runs (`--dry-run`, progress
//! bars). Saturating arithmetic throughout: a preset of 10,000 week-long
//! runs repeated four billion times gets a long estimate, not an overflow.

use std::time::Duration;

use iolab_model::experiment::{ExperimentPlan, RunSpec, Work};

/// Per-run overhead (start, verify, stop, drain) used in time estimates.
const OVERHEAD: Duration = Duration::from_millis(700);

/// About how long one run (all its repetitions) takes.
pub fn estimate_run(plan: &ExperimentPlan, r: &RunSpec) -> Duration {
    let once = match &r.work {
        Work::Http(w) => {
            let opens = w.driver.duration().unwrap_or(Duration::from_secs(10));
            // A held run holds its last connection for the hold after opening it.
            let d = opens.saturating_add(w.held.as_ref().map_or(Duration::ZERO, |h| h.hold));
            plan.warmup
                .saturating_add(d)
                .saturating_add(OVERHEAD)
                .saturating_add(w.timeout.min(d) / 2)
        }
        Work::Batch(_) => Duration::from_secs(5),
    };
    once.saturating_mul(plan.reps.max(1))
}

/// About how long a plan takes to run.
pub fn estimate(plan: &ExperimentPlan) -> Duration {
    plan.runs.iter().fold(Duration::ZERO, |t, r| {
        t.saturating_add(estimate_run(plan, r))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_the_showdown_under_two_minutes() {
        let p = crate::preset::load_plan("showdown", None).unwrap();
        let e = estimate(&p);
        assert!(
            e > Duration::from_secs(30) && e < Duration::from_secs(120),
            "{e:?}"
        );
    }

    /// Issue 16, finding 7: `--reps 4294967295` on week-long runs overflowed.
    #[test]
    fn r16_07_huge_plans_saturate() {
        let mut p = crate::preset::load_plan("showdown", None).unwrap();
        p.reps = u32::MAX;
        p.warmup = Duration::from_secs(168 * 3600);
        assert!(estimate(&p) >= Duration::from_secs(168 * 3600));
    }
}
