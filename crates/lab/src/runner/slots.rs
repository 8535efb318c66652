//! A sharded experiment (`iolab run PRESET --shard i/n --start-at T`): n
//! hosts run the same preset, each sending shard i of every run's load.
//! Every measured attack starts at a slot fixed by the plan alone (T, plus
//! the length of every attack before it, plus a gap in which the next
//! target stops, starts, is verified and warms up), so the hosts' attacks of
//! run j, repetition r begin at one instant without the hosts ever talking.
//! A host that reaches a slot late skips that run (the load generator
//! refuses a start already past, saying by how much); the others keep theirs.

use std::time::Duration;

use iolab_model::experiment::{ExperimentPlan, Work};
use iolab_model::shard::Shard;

use super::load::attack_plan;

/// Time between one attack's planned end and the next slot, beyond the
/// warm-up: stopping the target, draining its sockets, starting the next,
/// verifying it, settling after the warm-up.
pub const DEFAULT_GAP: Duration = Duration::from_secs(10);

/// Which shard this host sends, and from when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sharding {
    /// This host's shard of every run.
    pub shard: Shard,
    /// The first attack's start, Unix ms (the same on every host).
    pub start_at_unix_ms: u64,
    /// [`DEFAULT_GAP`] unless the targets need longer to start.
    pub gap: Duration,
}

/// A run of a plan that cannot be sharded.
#[derive(Debug, thiserror::Error)]
pub enum SlotError {
    /// A batch run.
    #[error(
        "run '{0}' is a batch: only HTTP runs can be sharded (run the batch presets on one host)"
    )]
    Batch(String),
    /// A closed loop without a duration.
    #[error("run '{0}' is a closed loop bounded by requests only: a sharded run needs a duration to fix its slot")]
    NoDuration(String),
    /// Its shard of the attack is refused.
    #[error("run '{run}': {why}")]
    Attack {
        /// The run.
        run: String,
        /// Why.
        why: iolab_loadgen::AttackError,
    },
}

/// Refuse a plan whose runs cannot be cut into slots or shards.
pub fn check(plan: &ExperimentPlan, sharding: &Sharding) -> Result<(), SlotError> {
    for spec in &plan.runs {
        let w = match &spec.work {
            Work::Http(w) => w,
            Work::Batch(_) => return Err(SlotError::Batch(spec.name.clone())),
        };
        if w.driver.duration().is_none() {
            return Err(SlotError::NoDuration(spec.name.clone()));
        }
        let mut probe = attack_plan("http://127.0.0.1:1", w, w.driver.clone(), &[]);
        probe.shard = Some(sharding.shard);
        iolab_loadgen::validate(&probe).map_err(|why| SlotError::Attack {
            run: spec.name.clone(),
            why,
        })?;
    }
    Ok(())
}

/// The start (Unix ms) of every measured attack: `[run][rep]`.
pub fn slots(plan: &ExperimentPlan, sharding: &Sharding) -> Vec<Vec<u64>> {
    let mut t = Duration::from_millis(sharding.start_at_unix_ms);
    let step = |w: &iolab_model::experiment::HttpWork| {
        w.driver
            .duration()
            .unwrap_or_default()
            .saturating_add(w.timeout)
            .saturating_add(plan.warmup)
            .saturating_add(sharding.gap)
    };
    plan.runs
        .iter()
        .map(|spec| {
            (0..plan.reps.max(1))
                .map(|_| {
                    let at = t.as_millis() as u64;
                    if let Work::Http(w) = &spec.work {
                        t = t.saturating_add(step(w));
                    }
                    at
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sharding() -> Sharding {
        Sharding {
            shard: Shard { index: 2, count: 3 },
            start_at_unix_ms: 1_000_000,
            gap: DEFAULT_GAP,
        }
    }

    #[test]
    fn slots_follow_each_other_by_run_length_warmup_and_gap() {
        let plan = crate::preset::load_plan("showdown", None).unwrap();
        check(&plan, &sharding()).unwrap();
        let s = slots(&plan, &sharding());
        assert_eq!(s.len(), plan.runs.len());
        let Work::Http(w) = &plan.runs[0].work else {
            unreachable!()
        };
        let step = w.driver.duration().unwrap() + w.timeout + plan.warmup + DEFAULT_GAP;
        assert_eq!(s[0][0], 1_000_000);
        assert_eq!(s[1][0] - s[0][0], step.as_millis() as u64);
        assert!(s
            .iter()
            .flatten()
            .collect::<Vec<_>>()
            .windows(2)
            .all(|p| p[0] < p[1]));
    }

    #[test]
    fn batches_are_refused() {
        let plan = crate::preset::load_plan("e3-futures", None).unwrap();
        let e = check(&plan, &sharding()).unwrap_err().to_string();
        assert!(e.contains("only HTTP runs can be sharded"), "{e}");
    }
}
