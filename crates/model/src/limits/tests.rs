//! Tests of the bounds.

use super::*;
use crate::driver::{ConnectionMode, Phase};

fn plan(driver: Driver) -> AttackPlan {
    AttackPlan::new("http://127.0.0.1:1/", driver)
}

#[test]
fn cpu_lists_are_bounded_before_expansion() {
    assert_eq!(parse_cpu_list("0,2-3").unwrap(), vec![0, 2, 3]);
    assert_eq!(parse_cpu_list(" 1 ").unwrap(), vec![1]);
    for bad in [
        "3-1",
        "a",
        "",
        "0-18446744073709551615",
        "0-4000000000",
        "1,,2",
    ] {
        let e = parse_cpu_list(bad).unwrap_err().to_string();
        assert!(
            e.starts_with("bad CPU list") && !e.contains('\n'),
            "{bad}: {e}"
        );
    }
}

#[test]
fn plans_past_a_bound_name_the_field() {
    let week = Duration::from_secs(7 * 86_400);
    let cases = [
        (plan(Driver::constant(1e9, week)), Field::Rate),
        (plan(Driver::constant(1e6, week)), Field::Duration),
        (
            plan(Driver::Open {
                phases: vec![Phase::hold(1.0, Duration::from_secs(1)); MAX_PHASES + 1],
                arrival: crate::Arrival::Constant,
            }),
            Field::Phases,
        ),
        (
            plan(Driver::Closed {
                concurrency: u32::MAX,
                requests: None,
                duration: Some(week),
            }),
            Field::Concurrency,
        ),
        (
            plan(Driver::Closed {
                concurrency: 1,
                requests: Some(u64::MAX),
                duration: None,
            }),
            Field::Requests,
        ),
    ];
    for (p, field) in cases {
        let f = check_attack(&p).unwrap_err();
        assert_eq!(f.field, field, "{f}");
        assert!(
            !f.message.contains('\n') && !f.message.contains("--"),
            "{f}"
        );
    }
    let mut p = plan(Driver::constant(10.0, Duration::from_secs(1)));
    p.connections = ConnectionMode::KeepAlive { max: u32::MAX };
    assert_eq!(check_attack(&p).unwrap_err().field, Field::Connections);
    p.connections = ConnectionMode::default();
    p.interval = Duration::from_micros(10);
    assert_eq!(check_attack(&p).unwrap_err().field, Field::Interval);
    p.interval = Duration::from_secs(1);
    p.timeout = Duration::from_secs(86_400);
    assert_eq!(check_attack(&p).unwrap_err().field, Field::Timeout);
    p.timeout = Duration::from_secs(1);
    p.threads = Some(usize::MAX);
    assert_eq!(check_attack(&p).unwrap_err().field, Field::Threads);
    p.threads = None;
    p.record_requests = true;
    check_attack(&p).unwrap();
    p.driver = Driver::Closed {
        concurrency: 1,
        requests: None,
        duration: Some(Duration::from_secs(1)),
    };
    assert_eq!(check_attack(&p).unwrap_err().field, Field::Csv);
}

#[test]
fn thousands_are_grouped() {
    assert_eq!(thousands(1_234_567), "1,234,567");
    assert_eq!(thousands(12), "12");
}

#[test]
fn a_sweep_is_bounded() {
    for ok in [MIN_SWEEP, 32, MAX_SWEEP] {
        assert!(check_sweep(ok).is_ok(), "{ok}");
    }
    for bad in [0, 1, MIN_SWEEP - 1, MAX_SWEEP + 1, u32::MAX] {
        let e = check_sweep(bad).unwrap_err().to_string();
        assert!(
            !e.contains('\n') && (e.contains("give at least") || e.contains("at most")),
            "{e}"
        );
    }
    assert!(check_sweep_step(Duration::from_secs(3)).is_ok());
    assert!(check_sweep_step(Duration::ZERO).is_err());
    assert!(check_sweep_step(MAX_SWEEP_STEP + Duration::from_secs(1)).is_err());
}
