//! A replayed mix read by the fit.

use super::*;

/// A replayed mix's median is one endpoint's: Little's law reads the mean
/// of its endpoints' (a pool of 4 at 16.5 ms mean, 6.8 ms median, was
/// fitted as 2).
#[test]
fn r53_3_a_replayed_mix_is_fitted_on_its_mean_service_time() {
    let ep = |sent: u64, p50: f64| {
        let mut e = iolab_model::attack::EndpointResult {
            sent,
            ..Default::default()
        };
        e.latency_ms.p50 = p50;
        e
    };
    let mut steps = vec![step(100.0, true, 6.8, None), step(240.0, true, 6.8, None)];
    steps.push(step(260.0, false, 6.8, None));
    for s in &mut steps {
        s.attack.endpoints = vec![ep(50, 0.3), ep(30, 50.0), ep(20, 7.0)];
    }
    let f = fit(&steps, 240.0, 2).unwrap();
    assert!((f.service_ms - 16.55).abs() < 1e-9, "{}", f.service_ms);
    assert!((f.concurrency - 3.972).abs() < 1e-9, "{}", f.concurrency);
    // Without a mix the median stands.
    steps.iter_mut().for_each(|s| s.attack.endpoints.clear());
    assert_eq!(fit(&steps, 240.0, 2).unwrap().service_ms, 6.8);
}
