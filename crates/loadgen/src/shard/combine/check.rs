//! The shards of a merge checked before any is added ([`check`]): every
//! document a shard of one plan, cut and run, each index once; and why a
//! merge is refused ([`ShardMergeError`]), one line naming the fault.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use iolab_model::attack::AttackResult;
use iolab_model::shard::ShardRecord;

use super::records;
use super::Source;

/// Why shard documents do not merge; one line naming the fault.
#[derive(Debug, thiserror::Error)]
pub enum ShardMergeError {
    /// Two shards attacked different targets.
    #[error("{name} {} {target}, {name0} {target0}: shards of one plan attack one target", if *live { "attacks" } else { "attacked" })]
    Targets {
        /// A shard.
        name: String,
        /// Its target.
        target: String,
        /// The first shard.
        name0: String,
        /// Its target.
        target0: String,
        /// Read while running (`merge --live`).
        live: bool,
    },
    /// A document without a shard record.
    #[error(
        "{0} is not a shard (no \"shard\" record): write shards with iolab attack --shard i/n"
    )]
    NotShard(String),
    /// No document at all.
    #[error("nothing to merge: give shard result files or folders holding them")]
    Nothing,
    /// Two records that do not belong to one merge.
    #[error(transparent)]
    Records(#[from] records::RecordError),
    /// Different plan hashes.
    #[error(
        "{name} is of plan {plan}, {name0} of plan {plan0}: shards of different plans do not merge"
    )]
    Plans {
        /// A shard.
        name: String,
        /// Its plan hash.
        plan: String,
        /// The first shard.
        name0: String,
        /// Its plan hash.
        plan0: String,
    },
    /// Different cuts of the plan.
    #[error("{name} is shard {shard} but {name0} is shard {shard0}: one plan, one n")]
    Cuts {
        /// A shard.
        name: String,
        /// Its `i/n`.
        shard: String,
        /// The first shard.
        name0: String,
        /// Its `i/n`.
        shard0: String,
    },
    /// One index given twice.
    #[error("shard {shard} appears twice ({other} and {name}): give each shard once")]
    Twice {
        /// Its `i/n`.
        shard: String,
        /// The first document with it.
        other: String,
        /// The second.
        name: String,
    },
    /// Indexes missing.
    #[error("shard(s) {missing} of {count} missing: a merge needs every shard of the plan")]
    Missing {
        /// The missing indexes, comma separated.
        missing: String,
        /// n.
        count: u32,
    },
    /// Starts too far apart to be one run.
    #[error("{last} started {gap_s:.1} s after {first}, and the plan lasts {lasts_s:.1} s: they are shards of different runs")]
    Apart {
        /// The last to start.
        last: String,
        /// The first to start.
        first: String,
        /// Seconds between their starts.
        gap_s: f64,
        /// Seconds the plan lasts.
        lasts_s: f64,
    },
    /// A shard's own document cannot be added (its name first).
    #[error("{name}: {why}")]
    Shard {
        /// The shard.
        name: String,
        /// What is wrong in it.
        why: ShardFault,
    },
    /// The endpoints sections do not add.
    #[error(transparent)]
    Endpoints(#[from] crate::endpoints::EndpointsError),
    /// The sums do not balance (the document's own accounting says how).
    #[error("the merged counts do not balance ({0}): a shard document was edited or is corrupt")]
    Unbalanced(iolab_model::attack::AccountingError),
}

impl iolab_model::HasExitKind for ShardMergeError {
    /// The documents given do not merge: the user gives others.
    fn exit_kind(&self) -> iolab_model::ExitKind {
        iolab_model::ExitKind::BadInput
    }
}

/// What is wrong inside one shard's document.
#[derive(Debug, thiserror::Error)]
pub enum ShardFault {
    /// Its latency histogram does not hold its answers.
    #[error(transparent)]
    Answers(#[from] super::super::hist::AnswersError),
    /// A histogram does not decode.
    #[error("the {what} histogram {why}")]
    Histogram {
        /// Which one.
        what: &'static str,
        /// Why.
        why: super::super::hist::HistError,
    },
    /// Interval histograms and series points do not pair.
    #[error("{histograms} interval histograms for {points} series points")]
    Intervals {
        /// Interval histograms.
        histograms: usize,
        /// Series points.
        points: usize,
    },
}

/// A shard: its name, document and record.
pub(crate) type Checked<'a> = (&'a String, &'a AttackResult, &'a ShardRecord);

/// Every document a shard, all of one plan, cut and start, each index once
/// (and, with `every`, each index there); the shards sorted by index.
pub(crate) fn check(docs: &[Source], every: bool) -> Result<Vec<Checked<'_>>, ShardMergeError> {
    let mut shards = Vec::with_capacity(docs.len());
    for (name, doc) in docs {
        let rec = doc
            .shard
            .as_ref()
            .ok_or_else(|| ShardMergeError::NotShard(name.clone()))?;
        shards.push((name, doc, rec));
    }
    let Some(&(name0, _, r0)) = shards.first() else {
        return Err(ShardMergeError::Nothing);
    };
    for &(name, _, r) in &shards {
        records::agree((name, r), (name0, r0))?;
        if r.plan_hash != r0.plan_hash {
            return Err(ShardMergeError::Plans {
                name: name.clone(),
                plan: r.plan_hash.clone(),
                name0: name0.clone(),
                plan0: r0.plan_hash.clone(),
            });
        }
        if r.count != r0.count {
            return Err(ShardMergeError::Cuts {
                name: name.clone(),
                shard: r.shard().to_string(),
                name0: name0.clone(),
                shard0: r0.shard().to_string(),
            });
        }
    }
    apart(&shards)?;
    let mut by_index: BTreeMap<u32, &String> = BTreeMap::new();
    for &(name, _, r) in &shards {
        if let Some(other) = by_index.insert(r.index, name) {
            return Err(ShardMergeError::Twice {
                shard: r.shard().to_string(),
                other: other.clone(),
                name: name.clone(),
            });
        }
    }
    let missing: Vec<String> = (1..=r0.count)
        .filter(|i| !by_index.contains_key(i))
        .map(|i| i.to_string())
        .collect();
    if every && !missing.is_empty() {
        return Err(ShardMergeError::Missing {
            missing: missing.join(", "),
            count: r0.count,
        });
    }
    shards.sort_by_key(|(_, _, r)| r.index);
    Ok(shards)
}

/// Shards whose sends cannot have overlapped (one started after another's
/// plan was over) are of different runs of the plan. Starts closer than
/// that line up on absolute time (a `+DUR` start read on each host's clock
/// differs by how far apart the hosts read it).
fn apart(shards: &[Checked<'_>]) -> Result<(), ShardMergeError> {
    let d = &shards[0].1.driver;
    // A held plan's connections are held for `hold` after their opens.
    let hold_s = (shards[0].1.connections.as_ref()).map_or(0.0, |c| c.hold_ms as f64 / 1e3);
    let Some(lasts_s) = d.duration_s.map(|s| s + d.timeout_s + hold_s) else {
        return Ok(());
    };
    let first = shards
        .iter()
        .min_by_key(|(_, d, _)| d.started_unix_ms)
        .expect("not empty");
    let last = shards
        .iter()
        .max_by_key(|(_, d, _)| d.started_unix_ms)
        .expect("not empty");
    let gap_s = (last.1.started_unix_ms - first.1.started_unix_ms) as f64 / 1e3;
    if gap_s > lasts_s {
        return Err(ShardMergeError::Apart {
            last: last.0.clone(),
            first: first.0.clone(),
            gap_s,
            lasts_s,
        });
    }
    Ok(())
}

/// A base64 V2 + deflate histogram, through the capped decoder.
pub(super) fn decode(
    what: &'static str,
    b64: Option<&str>,
) -> Result<Option<Histogram<u64>>, ShardFault> {
    let Some(b64) = b64.filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    super::super::hist::decode_base64(b64)
        .map(Some)
        .map_err(|why| ShardFault::Histogram { what, why })
}
