//! Counts add class by class, the same way for a run's threads and for
//! shards.

use iolab_model::attack::{AttackResult, ErrorCounts, RequestCounts};
use iolab_model::shard::ShardRecord;

use super::merge;

/// Shard `index` of 2 that sent `n` requests, every one refused for want
/// of file descriptors on the generator.
fn fd_starved(index: u32, n: u64) -> (String, AttackResult) {
    let doc = AttackResult {
        target: "http://127.0.0.1:1/".into(),
        requests: RequestCounts {
            planned: n,
            sent: n,
            ..RequestCounts::default()
        },
        errors: ErrorCounts {
            fd_limit: n,
            ..ErrorCounts::default()
        },
        shard: Some(ShardRecord {
            index,
            count: 2,
            plan_hash: "p".into(),
            interval_s: 1.0,
            ..ShardRecord::default()
        }),
        ..AttackResult::default()
    };
    (format!("shard-{index}.json"), doc)
}

/// Shards with `fd_limit` errors merge into a document that still
/// balances: a class left out of the sum would leave `sent` unaccounted.
#[test]
fn every_error_class_adds_up_across_shards() {
    let merged = merge(&[fd_starved(1, 3), fd_starved(2, 4)]).unwrap();
    assert_eq!(merged.result.errors.fd_limit, 7);
    assert_eq!(merged.result.requests.sent, 7);
}
