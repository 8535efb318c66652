//! The shard records of a merge checked against each other, beyond the
//! plan hash: an index outside 1..n (issue 49 finding 20 said "shard 2 of
//! 2 missing" of a shard claiming 5 of 2), series intervals, or plan
//! figures that differ under one hash (an edited or corrupt shard).

use iolab_model::shard::ShardRecord;

/// Why two shard records do not belong to one merge.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// An index outside 1..n.
    #[error("{name} claims to be shard {index} of {count}: an index runs 1 to n (a corrupt or edited shard record)")]
    Index {
        name: String,
        index: u32,
        count: u32,
    },
    /// Series intervals differ.
    #[error("{name} has series intervals of {a} s, {name0} of {b} s: shards of one plan share --interval")]
    Interval {
        name: String,
        name0: String,
        a: f64,
        b: f64,
    },
    /// The plan's figures differ under one hash.
    #[error("{name} and {name0} record different plans (requests {a:?} and {b:?}, --start-at {sa:?} and {sb:?}) under one plan hash: a corrupt or edited shard")]
    Plan {
        name: String,
        name0: String,
        a: Option<u64>,
        b: Option<u64>,
        sa: Option<u64>,
        sb: Option<u64>,
    },
}

/// Shard `r` (named `name`) fits with the first shard `r0`.
pub(super) fn agree(
    (name, r): (&String, &ShardRecord),
    (name0, r0): (&String, &ShardRecord),
) -> Result<(), RecordError> {
    let (name, name0) = (name.clone(), name0.clone());
    if r.count == 0 || r.index == 0 || r.index > r.count {
        return Err(RecordError::Index {
            name,
            index: r.index,
            count: r.count,
        });
    }
    if r.interval_s != r0.interval_s {
        return Err(RecordError::Interval {
            name,
            name0,
            a: r.interval_s,
            b: r0.interval_s,
        });
    }
    if r.plan_requests != r0.plan_requests || r.start_at_unix_ms != r0.start_at_unix_ms {
        return Err(RecordError::Plan {
            name,
            name0,
            a: r.plan_requests,
            b: r0.plan_requests,
            sa: r.start_at_unix_ms,
            sb: r0.start_at_unix_ms,
        });
    }
    Ok(())
}
