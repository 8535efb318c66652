//! A rate's decision from its windows (`iolab_model::capacity::Budget`):
//! the k-of-n rule, and the objective judged over every window's requests
//! pooled.
//!
//! Why both: a window is a step of a hundred or so requests, whose p99 is
//! its one or two slowest; a 200 ms pause in it fails it at a rate the
//! service sustains (the pool paused every 3 s of `tests/sim_bench/pauses.rs`
//! failed 20/s and was "found" at 4/s, where it holds 190). Windows that
//! miss by a request or two are outvoted by their pooled requests; a rate
//! the service cannot sustain queues in every window and misses both ways.

use iolab_model::capacity::{Clause, Observed, Slo, StepRecord, Windows};

/// The objective over `windows`' requests together: planned, answered in
/// time and within each latency bound, summed.
// A String is right here: the Err is the objective's verdict in words
// (`Slo::judge`), kept as the record's text, not a fault.
pub fn pooled(slo: &Slo, windows: &[StepRecord]) -> Result<(), String> {
    let planned: u64 = windows.iter().map(|w| w.attack.requests.planned).sum();
    let ok: f64 = windows
        .iter()
        .map(|w| w.success_ratio * w.attack.requests.planned as f64)
        .sum();
    let within = |ms: f64| -> u64 {
        windows
            .iter()
            .flat_map(|w| &w.within)
            .filter(|x| (x.below_ms - ms).abs() < 1e-9)
            .map(|x| x.answered)
            .sum()
    };
    slo.judge(&Observed {
        planned,
        success: if planned == 0 {
            0.0
        } else {
            ok / planned as f64
        },
        answered_within: &within,
    })
}

/// `slo` with every clause's allowed misses doubled (p99 read as p98,
/// success>=99.9% as 99.8%): what the pooled requests must miss for a
/// rate to fail before all its windows are held.
pub(crate) fn loosened(slo: &Slo) -> Slo {
    let clauses = slo
        .clauses
        .iter()
        .map(|c| match *c {
            Clause::Latency {
                percentile,
                below_ms,
            } => Clause::Latency {
                percentile: 100.0 - 2.0 * (100.0 - percentile),
                below_ms,
            },
            Clause::Success { at_least } => Clause::Success {
                at_least: 1.0 - 2.0 * (1.0 - at_least),
            },
        })
        .collect();
    Slo { clauses }
}

/// `Some(held)` once `tally` and the pooled verdict of `windows` decide
/// the rate: held when the k-of-n rule holds it; failed early when it
/// fails it and the pooled requests miss by twice what the objective
/// allows (a rate that queues); otherwise every window is held and the
/// pooled requests decide.
pub fn decide(slo: &Slo, tally: &Windows, windows: &[StepRecord]) -> Option<bool> {
    match tally.decided() {
        Some(true) => Some(true),
        Some(false) if pooled(&loosened(slo), windows).is_err() => Some(false),
        Some(false) => tally.full().then(|| pooled(slo, windows).is_ok()),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_model::capacity::{Budget, Within};

    /// A window of 100 requests, `late` of them past 200 ms.
    fn window(late: u64) -> StepRecord {
        let mut s = StepRecord {
            passed: late <= 1,
            success_ratio: 1.0,
            within: vec![Within {
                below_ms: 200.0,
                answered: 100 - late,
            }],
            ..StepRecord::default()
        };
        s.attack.requests.planned = 100;
        s
    }

    /// A pause that makes two requests late fails a window of a hundred;
    /// four windows with four late requests among them meet a p99.
    #[test]
    fn windows_that_miss_by_a_request_are_outvoted_by_their_pooled_requests() {
        let slo: Slo = "p99<200ms".parse().unwrap();
        let ws = [window(2), window(0), window(2), window(0)];
        let mut tally = Budget::default().tally();
        let mut decided = Vec::new();
        for (i, w) in ws.iter().enumerate() {
            tally.add(w.passed);
            decided.push(decide(&slo, &tally, &ws[..=i]));
        }
        assert_eq!(decided, [None, None, None, Some(true)]);
        // A rate that queues misses in every window, and pooled: two do.
        let ws = [window(30), window(60)];
        let mut tally = Budget::default().tally();
        tally.add(false);
        tally.add(false);
        assert_eq!(decide(&slo, &tally, &ws), Some(false));
    }
}
