//! The results folders of one sharded experiment (`iolab run PRESET --shard
//! i/n --start-at T` on n hosts) merged run by run into one `runs.json`:
//! each run's attacks (every repetition) merge exactly, as `iolab merge`
//! merges shards, and the median repetition is chosen again from the merged
//! ones.
//!
//! What does not add is left out rather than made up: each host measured its
//! own target process (the merged attack names the first host's URL), so the merged runs carry no telemetry and no backend
//! counts (each host's folder keeps its own); the verify report and the
//! prediction are the first host's (the plan is the same).

use iolab_loadgen::shard::combine::{merge_hosts as merge_attacks, ShardMergeError, Source};
use iolab_model::attack::AttackResult;
use iolab_model::runs::{Outcome, RunRecord, RunsFile};
use iolab_model::telemetry::Telemetry;

use crate::runner::spread;

/// One host's folder: a name for messages and its `runs.json`.
pub type Folder = (String, RunsFile);

/// Why hosts' folders do not merge; one line naming the fault.
#[derive(Debug, thiserror::Error)]
pub enum FoldersError {
    /// No folder.
    #[error("nothing to merge")]
    Nothing,
    /// A plan that does not serialize (never, for a plan read from JSON).
    #[error("{0}")]
    Plan(serde_json::Error),
    /// Another plan.
    #[error("{name} ran another plan than {name0} (preset, --scale or --reps differ): its runs are not shards of the same runs")]
    OtherPlan {
        /// A host's folder.
        name: String,
        /// The first one.
        name0: String,
    },
    /// A run whose attacks do not merge.
    #[error("run '{run}': {why}")]
    Run {
        /// The run.
        run: String,
        /// Why.
        why: Box<iolab_loadgen::shard::combine::ShardMergeError>,
    },
}

impl iolab_model::HasExitKind for FoldersError {
    /// The folders given do not merge: the user gives others.
    fn exit_kind(&self) -> iolab_model::ExitKind {
        iolab_model::ExitKind::BadInput
    }
}

/// Merge the hosts' folders; the error is one line naming the fault.
pub fn merge(folders: &[Folder]) -> Result<RunsFile, FoldersError> {
    let (name0, first) = folders.first().ok_or(FoldersError::Nothing)?;
    let plan0 = serde_json::to_value(&first.plan).map_err(FoldersError::Plan)?;
    for (name, f) in folders {
        if serde_json::to_value(&f.plan).map_err(FoldersError::Plan)? != plan0 {
            return Err(FoldersError::OtherPlan {
                name: name.clone(),
                name0: name0.clone(),
            });
        }
    }
    let runs = folders.iter().map(|(_, f)| f.runs.len()).min().unwrap_or(0);
    let mut out = first.clone();
    out.runs = (0..runs)
        .map(|j| {
            let records: Vec<(&String, &RunRecord)> =
                folders.iter().map(|(n, f)| (n, &f.runs[j])).collect();
            merge_run(&records).map_err(|why| FoldersError::Run {
                run: first.runs[j].name.clone(),
                why: Box::new(why),
            })
        })
        .collect::<Result<_, _>>()?;
    out.complete = runs == first.plan.runs.len() && folders.iter().all(|(_, f)| f.complete);
    out.started_utc = folders
        .iter()
        .map(|(_, f)| f.started_utc.clone())
        .min()
        .unwrap_or_default();
    out.finished_utc = folders
        .iter()
        .filter_map(|(_, f)| f.finished_utc.clone())
        .max();
    Ok(out)
}

/// One run over every host: its outcome is the first host's failure, if
/// any; its attacks merge when every host measured.
fn merge_run(records: &[(&String, &RunRecord)]) -> Result<RunRecord, ShardMergeError> {
    let mut run = records[0].1.clone();
    run.telemetry = Telemetry::default();
    run.backend_counts = None;
    run.outcome = records
        .iter()
        .map(|(_, r)| r.outcome.clone())
        .find(|o| !o.is_completed())
        .unwrap_or(Outcome::Completed);
    if records.iter().any(|(_, r)| r.attack.is_none()) {
        run.attack = None;
        run.reps.clear();
        run.spread = None;
        return Ok(run);
    }
    let reps = records.iter().map(|(_, r)| r.reps.len()).min().unwrap_or(0);
    if reps <= 1 {
        let sources: Vec<Source> = records
            .iter()
            .map(|(n, r)| ((*n).clone(), r.attack.clone().expect("checked")))
            .collect();
        run.attack = Some(merge_attacks(&sources)?.result);
        run.reps.clear();
        run.spread = None;
        return Ok(run);
    }
    let merged: Vec<AttackResult> = (0..reps)
        .map(|t| {
            let sources: Vec<Source> = records
                .iter()
                .map(|(n, r)| (format!("{n} repetition {}", t + 1), r.reps[t].clone()))
                .collect();
            merge_attacks(&sources).map(|m| m.result)
        })
        .collect::<Result<_, _>>()?;
    // The median repetition by goodput, as a single host chooses it.
    let mut order: Vec<&AttackResult> = merged.iter().collect();
    order.sort_by(|a, b| {
        a.throughput_rps
            .goodput
            .total_cmp(&b.throughput_rps.goodput)
    });
    run.attack = Some(order[(order.len() - 1) / 2].clone());
    run.spread = Some(spread(&merged.iter().collect::<Vec<_>>()));
    run.reps = merged;
    Ok(run)
}
