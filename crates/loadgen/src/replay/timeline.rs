//! A replay at the recorded times (`--speed`): the recorded requests in
//! the order they were sent, and an open loop's phases that send each
//! recorded second's requests within that second (scaled by the speed),
//! evenly spaced. A log's times are whole seconds, so a second is the
//! finest the recording knows; a HAR's are read to the same grain. A long
//! recording whose seconds would pass the plan's phase limit is laid out
//! in wider buckets (2 s, 4 s, ...), said by [`Recording::bucket_s`]. The
//! generator's own schedule and clock send them: nothing here sleeps.

use std::time::Duration;

use iolab_model::driver::Phase;
use iolab_model::limits::MAX_PHASES;
use iolab_model::request::RequestTemplate;

use super::mix::{Mix, MAX_SEQUENCE};

/// How much a phase's rate is raised above its count over its duration: a
/// duration such as 1/3 s is not exact in binary, so count / d x d can fall a
/// hair short of the count and the schedule (which plans the floor of the
/// area) would drop a recorded request (r53_1). A part in a billion keeps
/// the floor at the count for any sequence this holds ([`MAX_SEQUENCE`]),
/// and moves a send by nanoseconds.
const AREA_MARGIN: f64 = 1e-9;

/// What a replay at the recorded times sends.
#[derive(Debug, Clone)]
pub struct Recording {
    /// The recorded requests in time order.
    pub list: Vec<RequestTemplate>,
    /// The endpoint of each.
    pub of: Vec<u32>,
    /// One phase per run of seconds with the same count.
    pub phases: Vec<Phase>,
    /// Only the first [`MAX_SEQUENCE`] requests were kept.
    pub truncated: bool,
    /// Seconds per bucket: 1, or wider when one phase a second would pass
    /// [`MAX_PHASES`].
    pub bucket_s: u64,
}

/// The recording at `speed` (2.0: twice as fast); `None` when some kept
/// request has no time (a vegeta file): such a mix is replayed at `--rate`.
pub fn recorded(mix: &Mix, speed: f64) -> Option<Recording> {
    let mut steps: Vec<(u64, usize)> = Vec::with_capacity(mix.sequence.len());
    for (i, s) in mix.sequence.iter().enumerate() {
        steps.push((s.at_ms?, i));
    }
    steps.sort();
    let first = steps.first()?.0;
    let span_ms = steps.last()?.0 - first;
    // Past MAX_PHASES the plan is refused: widen the buckets until it fits
    // (each bucket's requests then spread evenly over it).
    let mut bucket_s = 1u64;
    let phases = loop {
        let phases = phases(&steps, first, span_ms, bucket_s, speed);
        if phases.len() <= MAX_PHASES {
            break phases;
        }
        bucket_s *= 2;
    };
    let list = steps
        .iter()
        .map(|(_, i)| mix.sequence[*i].request.clone())
        .collect();
    let of = steps
        .iter()
        .map(|(_, i)| mix.sequence[*i].endpoint)
        .collect();
    Some(Recording {
        list,
        of,
        phases,
        truncated: mix.total as usize > MAX_SEQUENCE,
        bucket_s,
    })
}

/// The phases of `steps` (times in ms from `first`) in buckets of
/// `bucket_s` seconds: one phase per run of buckets with the same count.
fn phases(
    steps: &[(u64, usize)],
    first: u64,
    span_ms: u64,
    bucket_s: u64,
    speed: f64,
) -> Vec<Phase> {
    let width_ms = bucket_s * 1000;
    let mut counts = vec![0u64; (span_ms / width_ms + 1) as usize];
    for (at, _) in steps {
        counts[((at - first) / width_ms) as usize] += 1;
    }
    let mut phases = Vec::new();
    let mut i = 0;
    while i < counts.len() {
        let run = counts[i..].iter().take_while(|c| **c == counts[i]).count();
        let dur = Duration::from_secs_f64((run as u64 * bucket_s) as f64 / speed);
        let rate = (counts[i] * run as u64) as f64 / dur.as_secs_f64() * (1.0 + AREA_MARGIN);
        phases.push(Phase::hold(rate, dur));
        i += run;
    }
    phases
}
