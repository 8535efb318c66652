//! A prediction is right only while it simulates the sends a measurement
//! makes: the load generator's threads, merged, send at exactly the times the
//! simulation's open-loop clients arrive, for every arrival process, however
//! the plan is cut into shards and each shard into threads.

use std::time::Duration;

use iolab_model::attack::AttackPlan;
use iolab_model::driver::{Arrival, Driver, Phase};
use iolab_model::shard::Shard;

/// The send times of `shards` generators of `threads` threads each (the
/// plan's one schedule as the generator cuts it), merged in time order.
fn sharded(phases: &[Phase], arrival: Arrival, shards: u32, threads: usize) -> Vec<u64> {
    let driver = Driver::Open {
        phases: phases.to_vec(),
        arrival,
    };
    let mut all: Vec<u64> = (1..=shards)
        .flat_map(|index| {
            let mut plan = AttackPlan::new("http://127.0.0.1:1/", driver.clone());
            plan.shard = Some(Shard {
                index,
                count: shards,
            });
            (0..threads)
                .flat_map(|i| iolab_loadgen::thread_schedule(&plan, i, threads).expect("open"))
                .collect::<Vec<u64>>()
        })
        .collect();
    all.sort_unstable();
    all
}

/// The send times of one `threads`-thread generator.
fn generator(phases: &[Phase], arrival: Arrival, threads: usize) -> Vec<u64> {
    sharded(phases, arrival, 1, threads)
}

fn simulated(phases: &[Phase], arrival: Arrival) -> Vec<u64> {
    iolab_predict::sim::arrivals(phases, arrival).collect()
}

#[test]
fn loadgen_and_predict_send_the_same_sequence() {
    let ramp_then_hold = vec![
        Phase {
            duration: Duration::from_secs(3),
            from_rps: 20.0,
            to_rps: 400.0,
        },
        Phase::hold(400.0, Duration::from_secs(2)),
        Phase {
            duration: Duration::from_secs(1),
            from_rps: 400.0,
            to_rps: 0.0,
        },
    ];
    let hold = vec![Phase::hold(250.0, Duration::from_secs(4))];
    for phases in [&hold, &ramp_then_hold] {
        for arrival in [
            Arrival::Constant,
            Arrival::Poisson { seed: 1 },
            Arrival::Poisson { seed: 42 },
        ] {
            let predicted = simulated(phases, arrival);
            assert!(predicted.len() > 500, "{arrival:?}: {}", predicted.len());
            for threads in [1, 3, 8] {
                assert_eq!(
                    generator(phases, arrival, threads),
                    predicted,
                    "{arrival:?} on {threads} generator threads"
                );
                assert_eq!(
                    sharded(phases, arrival, 3, threads),
                    predicted,
                    "{arrival:?} on 3 shards of {threads} generator threads"
                );
            }
        }
    }
}

#[test]
fn seeds_change_the_sequence_on_both_sides() {
    let p = [Phase::hold(500.0, Duration::from_secs(1))];
    let a = simulated(&p, Arrival::Poisson { seed: 1 });
    let b = generator(&p, Arrival::Poisson { seed: 2 }, 2);
    assert_ne!(a, b);
}
