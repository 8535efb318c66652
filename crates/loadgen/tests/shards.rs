//! Shards of one plan against a real server on 127.0.0.1, started together
//! with `--start-at` and merged: the merge is the plan, request for request,
//! and every percentile it reports is the one of all requests together,
//! over HTTP/1.1 and over HTTP/2 (h2c, requests as streams).

mod common;
// Its odd servers are for tests/http2.rs; this file serves requests only.
#[allow(dead_code)]
#[path = "common/h2server.rs"]
mod h2server;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::{open, run, server};
use iolab_loadgen::shard::combine::{merge, Source};
use iolab_loadgen::{AttackReport, Schedule};
use iolab_model::attack::AttackPlan;
use iolab_model::driver::{Arrival, ConnectionMode, Driver, Phase};
use iolab_model::protocol::HttpVersion;
use iolab_model::shard::Shard;

/// A Poisson ramp then hold (so neither spacing nor rate is uniform), to a
/// 5 ms delay, in shards of `n` starting 1.5 s from now, run in parallel;
/// `h2`: over HTTP/2 (6 connections of 8 streams, 2 per shard).
fn shards(url: &str, n: u32, h2: bool) -> (Vec<AttackReport>, Driver) {
    let driver = Driver::Open {
        phases: vec![
            Phase {
                duration: Duration::from_millis(500),
                from_rps: 50.0,
                to_rps: 250.0,
            },
            Phase::hold(250.0, Duration::from_millis(1000)),
        ],
        arrival: Arrival::Poisson { seed: 11 },
    };
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    let start = now.as_millis() as u64 + 1_500;
    let reports = std::thread::scope(|s| {
        let handles: Vec<_> = (1..=n)
            .map(|index| {
                let mut plan = open(url, 1.0, 1.0);
                plan.driver = driver.clone();
                plan.interval = Duration::from_millis(100);
                plan.record_requests = true;
                // Hosts differ: the threads are not part of the plan.
                plan.threads = Some(1 + index as usize % 2);
                plan.shard = Some(Shard { index, count: n });
                plan.start_at_unix_ms = Some(start);
                if h2 {
                    over_http2(&mut plan);
                }
                s.spawn(move || run(&plan))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    (reports, driver)
}

fn over_http2(plan: &mut AttackPlan) {
    plan.request.protocol.http = HttpVersion::Http2;
    plan.request.protocol.streams = 8;
    plan.connections = ConnectionMode::KeepAlive { max: 6 };
}

/// The value at quantile `q` of sorted values, as HdrHistogram ranks it.
fn exact(sorted: &[f64], q: f64) -> f64 {
    let rank = ((q * sorted.len() as f64).ceil() as usize).max(1);
    sorted[rank - 1]
}

#[test]
fn shards_merge_to_the_single_host_plan_exactly() {
    let srv = server::spawn(0);
    let (reports, driver) = shards(&srv.url("/delay?ms=5"), 3, false);
    let m = merges_exactly(&reports, &driver);
    assert!(m.protocol.is_none(), "HTTP/1.1 says no protocol");
}

/// Issue 32: HTTP/2 results merge across shards exactly, as HTTP/1.1 ones
/// do, and the merge says what was spoken.
#[test]
fn http2_shards_merge_to_the_single_host_plan_exactly() {
    let srv = h2server::spawn(h2server::Behaviour::Serve {
        delay: Duration::from_millis(5),
        max_streams: 100,
    });
    let (reports, driver) = shards(&srv.url("/x"), 3, true);
    let m = merges_exactly(&reports, &driver);
    let p = m.protocol.expect("the merge of HTTP/2 shards says so");
    assert_eq!((p.version.as_str(), p.streams), ("h2c", 8));
    let opened: u64 = reports
        .iter()
        .map(|r| r.result.protocol.as_ref().unwrap().connections_opened)
        .sum();
    assert_eq!(p.connections_opened, opened, "{p:?}");
}

/// The merge of `reports` is the single-host plan of `driver`, request
/// for request, percentile for percentile; returns it.
fn merges_exactly(reports: &[AttackReport], driver: &Driver) -> iolab_model::attack::AttackResult {
    let Driver::Open { phases, arrival } = &driver else {
        unreachable!()
    };
    let schedule: Vec<u64> = Schedule::new(phases, *arrival).collect();
    let docs: Vec<Source> = reports
        .iter()
        .rev() // the order given does not matter
        .map(|r| {
            (
                format!("shard-{}", r.result.shard.as_ref().unwrap().index),
                r.result.clone(),
            )
        })
        .collect();
    let m = merge(&docs).expect("the shards merge").result;
    let q = &m.requests;
    // Counts: each shard planned its residue of the one schedule; together the plan.
    assert_eq!(q.planned, schedule.len() as u64);
    assert_eq!(
        (q.sent, q.ok),
        (q.planned, q.planned),
        "{q:?} {:?}",
        m.errors
    );
    let rec = m.merged.as_ref().unwrap();
    assert_eq!(rec.plan_requests, Some(q.planned));
    for (i, part) in rec.parts.iter().enumerate() {
        let s = Shard {
            index: i as u32 + 1,
            count: 3,
        };
        assert_eq!(part.planned, s.share(q.planned), "shard {s}");
    }
    // The shards started together: one start, and first sends close to it
    // (generous: a loaded machine may wake a thread late).
    assert!(rec.start_at_unix_ms.is_some() && !rec.series_shifted);
    assert!(rec.start_skew_ms.unwrap() < 250.0, "{rec:?}");
    // Every request's intended time is on the plan's clock: the union of the
    // shards' rows is the single-host schedule.
    let mut intended: Vec<u64> = reports
        .iter()
        .flat_map(|r| r.requests.iter().map(|row| row.intended_ns))
        .collect();
    intended.sort_unstable();
    assert_eq!(intended, schedule);
    // Percentiles are those of all requests together, within HDR precision.
    let mut latency: Vec<f64> = reports
        .iter()
        .flat_map(|r| r.requests.iter())
        .map(|row| (row.done_ns.unwrap() - row.intended_ns) as f64 / 1e6)
        .collect();
    latency.sort_by(f64::total_cmp);
    let l = &m.latency_ms;
    for (name, got, want) in [
        ("p50", l.p50, exact(&latency, 0.5)),
        ("p99", l.p99, exact(&latency, 0.99)),
        ("max", l.max, *latency.last().unwrap()),
    ] {
        assert!(
            (got - want).abs() <= want * 0.001 + 0.001,
            "{name}: merged {got} ms, all requests {want} ms"
        );
    }
    // Series: every send and answer in exactly one interval on one clock.
    assert_eq!(m.series.iter().map(|p| p.sent).sum::<u64>(), q.sent);
    assert_eq!(m.series.iter().map(|p| p.ok).sum::<u64>(), q.ok);
    let widest = reports.iter().map(|r| r.result.series.len()).max().unwrap();
    assert_eq!(m.series.len(), widest);
    m.check_accounting().unwrap();
    m
}

#[test]
fn shards_of_a_closed_loop_split_clients_and_requests() {
    let srv = server::spawn(0);
    let reports: Vec<AttackReport> = (1..=3)
        .map(|index| {
            let mut plan = open(&srv.url("/"), 1.0, 1.0);
            plan.driver = Driver::Closed {
                concurrency: 7,
                requests: Some(301),
                duration: None,
            };
            plan.shard = Some(Shard { index, count: 3 });
            run(&plan)
        })
        .collect();
    let counts: Vec<(u64, Option<u32>)> = reports
        .iter()
        .map(|r| (r.result.requests.planned, r.result.driver.concurrency))
        .collect();
    assert_eq!(counts, vec![(101, Some(7)), (100, Some(7)), (100, Some(7))]);
    let docs: Vec<Source> = reports
        .iter()
        .map(|r| ("s".to_string(), r.result.clone()))
        .collect();
    let m = merge(&docs).unwrap().result;
    assert_eq!((m.requests.planned, m.requests.ok), (301, 301));
    assert_eq!(m.merged.unwrap().start_at_unix_ms, None);
}

#[test]
fn merges_refuse_what_is_not_one_plan_in_one_line() {
    let srv = server::spawn(0);
    let shard = |index: u32, count: u32, rate: f64| {
        let mut plan = open(&srv.url("/"), rate, 0.2);
        plan.shard = Some(Shard { index, count });
        (format!("s{index}-{rate}"), run(&plan).result)
    };
    let (a, b) = (shard(1, 2, 100.0), shard(2, 2, 100.0));
    assert!(merge(&[a.clone(), b.clone()]).is_ok());
    let cases: Vec<(Vec<Source>, &str)> = vec![
        (vec![a.clone()], "shard(s) 2 of 2 missing"),
        (vec![a.clone(), a.clone(), b.clone()], "appears twice"),
        (vec![a.clone(), shard(2, 2, 120.0)], "different plans"),
        (vec![a.clone(), shard(2, 3, 100.0)], "one plan, one n"),
        (
            vec![
                a.clone(),
                ("plain".into(), run(&open(&srv.url("/"), 100.0, 0.2)).result),
            ],
            "is not a shard",
        ),
        (vec![], "nothing to merge"),
    ];
    for (docs, why) in cases {
        let e = merge(&docs).unwrap_err().to_string();
        assert!(e.contains(why) && !e.contains('\n'), "{why}: {e}");
    }
    let mut elsewhere = b.clone();
    elsewhere.1.target = "http://10.1.2.3:80/".into();
    let e = merge(&[a.clone(), elsewhere.clone()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("shards of one plan attack one target"), "{e}");
    assert!(iolab_loadgen::shard::combine::merge_hosts(&[a.clone(), elsewhere]).is_ok());
    let mut edited = b.clone();
    edited.1.shard.as_mut().unwrap().interval_histograms.pop();
    assert!(merge(&[a.clone(), edited])
        .unwrap_err()
        .to_string()
        .contains("interval histograms"));
    let mut late = b;
    late.1.started_unix_ms += 60_000;
    let e = merge(&[a, late]).unwrap_err().to_string();
    assert!(e.contains("shards of different runs"), "{e}");
}

#[test]
fn shard_and_merged_documents_match_the_schema() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schema/attack.schema.json"
    );
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let srv = server::spawn(0);
    let docs: Vec<Source> = (1..=2)
        .map(|index| {
            let mut plan = open(&srv.url("/"), 100.0, 0.3);
            plan.shard = Some(Shard { index, count: 2 });
            ("s".to_string(), run(&plan).result)
        })
        .collect();
    let merged = merge(&docs).unwrap().result;
    for doc in [&docs[0].1, &merged] {
        let v = serde_json::to_value(doc).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&v)
            .map(|e| format!("{e} at {}", e.instance_path))
            .collect();
        assert!(errors.is_empty(), "{errors:#?}");
    }
    // The schema bites on the new records too (it is generated from the types: a shard's
    // index is a number, and a shard record without its count is no shard record).
    let mut v = serde_json::to_value(&docs[0].1).unwrap();
    assert!(v["shard"]["index"].is_u64(), "{}", v["shard"]);
    v["shard"]["index"] = "first".into();
    assert!(!validator.is_valid(&v));
    let mut v = serde_json::to_value(&docs[0].1).unwrap();
    v["shard"].as_object_mut().unwrap().remove("count");
    assert!(!validator.is_valid(&v));
}
