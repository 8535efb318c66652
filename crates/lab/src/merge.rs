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

use iolab_loadgen::shard::combine::{merge_hosts as merge_attacks, Source};
use iolab_model::attack::AttackResult;
use iolab_model::runs::{Outcome, RunRecord, RunsFile};
use iolab_model::telemetry::Telemetry;

use crate::runner::spread;

/// One host's folder: a name for messages and its `runs.json`.
pub type Folder = (String, RunsFile);

/// Merge the hosts' folders; the error is one line naming the fault.
pub fn merge(folders: &[Folder]) -> Result<RunsFile, String> {
    let (name0, first) = folders.first().ok_or("nothing to merge")?;
    let plan0 = serde_json::to_value(&first.plan).map_err(|e| e.to_string())?;
    for (name, f) in folders {
        if serde_json::to_value(&f.plan).map_err(|e| e.to_string())? != plan0 {
            return Err(format!(
                "{name} ran another plan than {name0} (preset, --scale or --reps differ): its runs are not shards of the same runs"
            ));
        }
    }
    let runs = folders.iter().map(|(_, f)| f.runs.len()).min().unwrap_or(0);
    let mut out = first.clone();
    out.runs = (0..runs)
        .map(|j| {
            let records: Vec<(&String, &RunRecord)> =
                folders.iter().map(|(n, f)| (n, &f.runs[j])).collect();
            merge_run(&records).map_err(|e| format!("run '{}': {e}", first.runs[j].name))
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
fn merge_run(records: &[(&String, &RunRecord)]) -> Result<RunRecord, String> {
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
