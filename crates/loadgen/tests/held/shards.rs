//! Shards of one held plan (`HeldPlan::shard`) against one real server:
//! each holds the plan's connections `k` with `k mod n` its own, and
//! `held::combine::merge_documents` adds them into the plan's document,
//! whatever the order given; what will not merge is refused by name.

use std::time::Duration;

use iolab_loadgen::held::combine::{merge_documents, plan_hash};
use iolab_model::attack::AttackResult;
use iolab_model::shard::Shard;
use iolab_model::ModelKind;

use super::{run, sections, serve, ws};

fn shard(plan: &iolab_model::attack::HeldPlan, index: u32, count: u32) -> AttackResult {
    let mut p = plan.clone();
    p.shard = Some(Shard { index, count });
    run(&p, Duration::from_secs(10)).result
}

/// Every shard of `count`, run side by side as shards are (threads here).
fn shards(plan: &iolab_model::attack::HeldPlan, count: u32) -> Vec<AttackResult> {
    std::thread::scope(|s| {
        let runs: Vec<_> = (1..=count)
            .map(|i| s.spawn(move || shard(plan, i, count)))
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    })
}

fn named(docs: &[AttackResult]) -> Vec<(String, AttackResult)> {
    (docs.iter().enumerate())
        .map(|(i, d)| (format!("shard-{}.json", i + 1), d.clone()))
        .collect()
}

/// Issue 52: 20,000 held connections are past one process's file limit,
/// and held runs refused `--shard`. Three shards of 10 connections hold
/// 4, 3 and 3 (plan connections 0,3,6,9 / 1,4,7 / 2,5,8), each document
/// carries its record (one plan hash, its send-lag histogram) and the
/// merge adds every count, the generators' CPU and peak memory, and reads
/// the send lag from the added histograms.
#[test]
fn r52_20_held_shards_hold_their_part_and_merge_into_the_plan() {
    let srv = serve(ModelKind::LoopAsync);
    let plan = ws(
        &format!("ws://{}/ws", srv.addr),
        10,
        Duration::from_millis(800),
        10.0,
    );
    let docs = shards(&plan, 3);
    let held: Vec<u64> = docs.iter().map(|d| sections(d).0.held).collect();
    assert_eq!(held, [4, 3, 3]);
    for d in &docs {
        let rec = d.shard.as_ref().expect("a shard record");
        assert_eq!(rec.plan_hash, plan_hash(&plan));
        assert_eq!(rec.plan_requests, Some(10));
        assert!(rec.lag_histogram.is_some());
        let m = sections(d).1;
        assert!(
            m.send_lag_p99_ms.is_some() && m.send_lag_histogram.is_some(),
            "{m:?}"
        );
        assert_eq!(d.requests.planned, d.driver.max_connections as u64);
    }
    let mut docs_with_rss = docs.clone();
    for (i, d) in docs_with_rss.iter_mut().enumerate() {
        d.generator.peak_rss_kib = Some(1000 * (i as u64 + 1));
    }
    let merged = merge_documents(&named(&docs_with_rss)).expect("shards merge");
    let (c, m) = sections(&merged);
    let sum = |f: fn(&AttackResult) -> u64| docs.iter().map(f).sum::<u64>();
    assert_eq!((c.attempted, c.held), (10, 10));
    assert_eq!(m.sent, sum(|d| sections(d).1.sent));
    assert_eq!(m.answered, sum(|d| sections(d).1.answered));
    assert_eq!(merged.requests.planned, 10);
    assert_eq!(merged.driver.max_connections, 10);
    assert!((merged.driver.rate.unwrap() - plan.open_rate).abs() < 1e-9);
    assert_eq!(merged.generator.threads, 3);
    assert_eq!(merged.generator.peak_rss_kib, Some(6000));
    let cpu: f64 = docs.iter().map(|d| d.generator.cpu_s).sum();
    assert!((merged.generator.cpu_s - cpu).abs() < 1e-9);
    let lags: Vec<f64> = docs
        .iter()
        .map(|d| sections(d).1.send_lag_p99_ms.unwrap())
        .collect();
    let lag = m.send_lag_p99_ms.expect("merged send lag");
    assert!(
        lags.iter().any(|l| *l >= lag) && lag > 0.0,
        "{lag} vs {lags:?}"
    );
    let rec = merged.merged.as_ref().expect("a merge record");
    assert_eq!(rec.shards, 3);
    let rss: Vec<Option<u64>> = rec.parts.iter().map(|p| p.peak_rss_kib).collect();
    assert_eq!(rss, [Some(1000), Some(2000), Some(3000)]);
    assert!(merged.shard.is_none());
    // The order given does not matter.
    let mut reversed = named(&docs_with_rss);
    reversed.reverse();
    assert_eq!(merge_documents(&reversed).unwrap(), merged);
    srv.stop().unwrap();
}

/// Held shards that are not every shard of one plan are refused, naming
/// the fault: another plan's shard, a missing or repeated one, a shard
/// with an unsharded document, a held document with a request document.
#[test]
fn r52_21_held_shards_of_other_plans_or_incomplete_are_refused() {
    let srv = serve(ModelKind::LoopAsync);
    let plan = ws(
        &format!("ws://{}/ws", srv.addr),
        4,
        Duration::from_millis(300),
        5.0,
    );
    let other = iolab_model::attack::HeldPlan {
        connections: 6,
        ..plan.clone()
    };
    let [a, b] = <[AttackResult; 2]>::try_from(shards(&plan, 2)).unwrap();
    let b_other = shard(&other, 2, 2);
    let whole = run(&plan, Duration::from_secs(10)).result;
    let err = |docs: &[AttackResult]| merge_documents(&named(docs)).unwrap_err().to_string();
    let e = err(&[a.clone(), b_other]);
    assert!(e.contains("different plans"), "{e}");
    let e = err(std::slice::from_ref(&a));
    assert!(e.contains("missing"), "{e}");
    let e = err(&[a.clone(), a.clone()]);
    assert!(e.contains("twice"), "{e}");
    let e = err(&[a.clone(), b.clone(), whole]);
    assert!(e.contains("no shard"), "{e}");
    let request = AttackResult {
        connections: None,
        ..b.clone()
    };
    let e = iolab_loadgen::held::combine::all_held(&named(&[a, request]))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("held-connection document") && e.contains("request document"),
        "{e}"
    );
    srv.stop().unwrap();
}

/// Merging unsharded held documents (several generators) kept the first
/// document's generator lag as the merged one's: a second generator that
/// was late went unseen. The merge now says the largest p99 (a bound on
/// the p99 of all sends together) when it has no histograms to add.
#[test]
fn r52_22_merged_generator_lag_is_not_the_first_documents() {
    let srv = serve(ModelKind::LoopAsync);
    let plan = ws(
        &format!("ws://{}/ws", srv.addr),
        2,
        Duration::from_millis(300),
        5.0,
    );
    let a = run(&plan, Duration::from_secs(10)).result;
    let mut b = run(&plan, Duration::from_secs(10)).result;
    b.generator.lag_p99_ms = a.generator.lag_p99_ms + 50.0;
    b.generator.lag_max_ms = a.generator.lag_max_ms.max(b.generator.lag_max_ms) + 50.0;
    let merged = merge_documents(&named(&[a, b.clone()])).unwrap();
    assert_eq!(merged.generator.lag_p99_ms, b.generator.lag_p99_ms);
    assert_eq!(merged.generator.lag_max_ms, b.generator.lag_max_ms);
    srv.stop().unwrap();
}
