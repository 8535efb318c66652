//! The scheduler's order on small cases, each a rule of tokio's.

use super::*;

/// Starts until every worker is busy or parked, as (worker, slot).
fn starts(t: &mut Tokio) -> Vec<(u32, u32)> {
    std::iter::from_fn(|| t.next_start(0)).collect()
}

#[test]
fn a_lone_request_on_a_new_connection_starts_at_once() {
    let mut t = Tokio::new(2);
    t.arrive(0, true);
    // accepted at one driver turn, seen at the next, then run
    assert_eq!(starts(&mut t), vec![(0, 0)]);
}

#[test]
fn a_kept_alive_request_goes_ahead_of_new_connections() {
    let mut t = Tokio::new(1);
    t.arrive(0, true);
    assert_eq!(starts(&mut t), vec![(0, 0)]);
    t.arrive(1, true);
    t.arrive(2, false);
    assert!(starts(&mut t).is_empty(), "the one worker is busy");
    t.release(0);
    // slot 2's socket is woken at the first turn; slot 1 must first be
    // accepted, polled, and seen at a later turn
    assert_eq!(starts(&mut t), vec![(0, 2)]);
    t.release(0);
    assert_eq!(starts(&mut t), vec![(0, 1)]);
}

#[test]
fn the_last_woken_runs_first_then_the_local_queue_in_order() {
    let mut t = Tokio::new(1);
    t.arrive(0, true);
    assert_eq!(starts(&mut t), vec![(0, 0)]);
    for slot in 1..=3 {
        t.arrive(slot, false);
    }
    let mut order = Vec::new();
    for _ in 0..3 {
        t.release(0);
        order.extend(starts(&mut t).into_iter().map(|(_, s)| s));
    }
    assert_eq!(order, vec![3, 1, 2]);
}

#[test]
fn an_idle_worker_steals_half_of_a_busy_ones_queue() {
    let mut t = Tokio::new(2);
    t.arrive(0, true);
    t.arrive(1, true);
    assert_eq!(starts(&mut t).len(), 2, "both workers busy");
    for slot in 2..=6 {
        t.arrive(slot, false);
    }
    t.release(0);
    // worker 0 turns: 6 in its LIFO slot, 2..=5 in its queue; worker 1
    // is busy, so worker 0 runs 6
    assert_eq!(starts(&mut t), vec![(0, 6)]);
    t.release(1);
    // worker 1 steals 2 and 3 (half of 4) and runs the last it took
    assert_eq!(starts(&mut t), vec![(1, 3)]);
    t.release(1);
    assert_eq!(starts(&mut t), vec![(1, 2)]);
}

#[test]
fn only_loop_blocking_on_one_tokio_runtime_takes_tokios_order() {
    use crate::sim::Scheduler;
    use iolab_model::runtime::Runtime;
    use iolab_model::{ModelKind, ModelParams};
    let rust = Runtime::rust();
    let python = Runtime::named("python").expect("a runtime");
    let one = ModelParams::default();
    let two = ModelParams {
        processes: Some(2),
        ..Default::default()
    };
    let of = |m, p: &ModelParams, r: &Runtime| Scheduler::of(m, p, r);
    assert_eq!(of(ModelKind::LoopBlocking, &one, &rust), Scheduler::Tokio);
    assert_eq!(of(ModelKind::LoopBlocking, &two, &rust), Scheduler::Fifo);
    assert_eq!(of(ModelKind::LoopBlocking, &one, &python), Scheduler::Fifo);
    for m in [
        ModelKind::LoopOffload,
        ModelKind::LoopAsync,
        ModelKind::Pool,
    ] {
        assert_eq!(of(m, &one, &rust), Scheduler::Fifo);
    }
}
