//! A prediction is right only while it simulates the sends a measurement
//! makes: the load generator's threads, merged, send at exactly the times the
//! simulation's open-loop clients arrive, for every arrival process.

use std::time::Duration;

use iolab_model::driver::{Arrival, Phase};

/// The send times of a `threads`-thread generator, merged in time order.
fn generator(phases: &[Phase], arrival: Arrival, threads: usize) -> Vec<u64> {
    let mut all: Vec<u64> = (0..threads)
        .flat_map(|i| iolab_loadgen::thread_schedule(phases, arrival, i, threads))
        .collect();
    all.sort_unstable();
    all
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
