//! CPU per request, read from the load: the slope of the CPU busy (cores)
//! against the rate answered, over the passing steps: what one more
//! request costs, without the CPU burnt whatever the rate (JIT, GC, a
//! metrics thread), which a median over requests would spread over the few
//! requests of the light steps. With fewer than two rates apart, the median
//! of CPU over requests.
//!
//! **Whose CPU.** A target pinned to cores of its own is read from those
//! cores (`/proc/stat`): its own time and the kernel's interrupt and
//! softirq work for its packets on them, which `/proc/PID/stat` does not
//! charge it (from the process alone, quiet runs of `iolab whatif`
//! over-predicted CPU-bound changes by 57% and 60%, docs/capacity.md).
//! The cores are trusted only when they were not busy with other work:
//! what they burnt beyond the target's own CPU at no load (the intercept of
//! that excess against the rate) stays under [`OTHER_WORK`] of a core.
//! Otherwise, or unpinned, the process tree.

use iolab_model::capacity::{CpuMethod, CpuSource, StepRecord};

/// Most CPU other work may burn on the target's cores at no load, share of
/// the cores, for their busy time to stand for the target's.
pub const OTHER_WORK: f64 = 0.25;

/// The CPU per request and how it was read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cpu {
    /// CPU per request, ms.
    pub ms: f64,
    /// CPU burnt whatever the rate (the slope's intercept), cores.
    pub idle_cores: Option<f64>,
    /// Slope or median.
    pub method: CpuMethod,
    /// The pinned cores or the process tree.
    pub source: CpuSource,
}

/// The CPU per request over `passing` steps on a target of `cores` cores.
pub fn per_request(passing: &[&StepRecord], cores: u32) -> Option<Cpu> {
    let on_cores = !passing.is_empty()
        && passing
            .iter()
            .all(|s| s.core_busy_cores.is_some() && s.cpu_cores.is_some());
    if on_cores && other_work(passing) <= OTHER_WORK * f64::from(cores.max(1)) {
        if let Some(c) = read(passing, CpuSource::Cores) {
            return Some(c);
        }
    }
    read(passing, CpuSource::Process)
}

/// CPU per answered request of one step from `source`, ms: what a
/// calibration run (one rate, after a warm-up) cost, and A's cost at the
/// rate it is compared at. `None` without that reading or an answer.
pub fn at(s: &StepRecord, source: CpuSource) -> Option<f64> {
    let busy = busy(s, source)?;
    let r = answered_rps(s);
    (r > 0.0 && busy.is_finite()).then(|| busy * 1000.0 / r)
}

/// A step's busy time from `source`, cores: the process tree's or the
/// pinned cores', less the target's JIT compiler threads' either way
/// (`compiler_cores`: a warm-up's cost, not a request's; they run on the
/// target's cores). ci19: a Spring A limited by HikariCP's 10 connections
/// read 0.59 of its core busy at its knee, 0.39 of it C2 compiling, and
/// was named "cpu".
pub fn busy(s: &StepRecord, source: CpuSource) -> Option<f64> {
    let all = match source {
        CpuSource::Cores => s.core_busy_cores,
        CpuSource::Process => s.cpu_cores,
    };
    all.map(|c| (c - s.compiler_cores.unwrap_or(0.0)).max(0.0))
}

/// The rate a step answered, req/s.
fn answered_rps(s: &StepRecord) -> f64 {
    let answered = s.attack.requests.answered() as f64;
    answered / s.attack.elapsed_s.max(1e-3)
}

/// The cores' busy time beyond the target's own CPU at no load, cores: the
/// intercept of that excess against the rate (the kernel's work for the
/// target grows with the rate; other work does not), or its least value
/// with fewer than two rates apart.
fn other_work(passing: &[&StepRecord]) -> f64 {
    let excess: Vec<(f64, f64)> = passing
        .iter()
        .filter_map(|s| Some((answered_rps(s), s.core_busy_cores? - s.cpu_cores?)))
        .filter(|(r, e)| r.is_finite() && e.is_finite())
        .collect();
    if apart(&excess) {
        least_squares(&excess).1
    } else {
        excess.iter().map(|p| p.1).fold(f64::INFINITY, f64::min)
    }
}

/// Two rates at least 1.5x apart among `points`.
fn apart(points: &[(f64, f64)]) -> bool {
    let lo = points.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let hi = points.iter().map(|p| p.0).fold(0.0, f64::max);
    points.len() >= 2 && hi >= 1.5 * lo
}

/// The slope (or the median) from one source.
fn read(passing: &[&StepRecord], source: CpuSource) -> Option<Cpu> {
    let points: Vec<(f64, f64)> = passing
        .iter()
        .filter_map(|s| Some((answered_rps(s), busy(s, source)?)))
        .filter(|(r, c)| r.is_finite() && c.is_finite() && *r > 0.0)
        .collect();
    if apart(&points) {
        let (slope, intercept) = least_squares(&points);
        if slope > 0.0 {
            return Some(Cpu {
                ms: slope * 1000.0,
                idle_cores: Some(intercept),
                method: CpuMethod::Slope,
                source,
            });
        }
    }
    median(points.iter().map(|(r, c)| c * 1000.0 / r)).map(|ms| Cpu {
        ms,
        idle_cores: None,
        method: CpuMethod::Median,
        source,
    })
}

/// y = a + b x by least squares: (b, a).
pub fn least_squares(p: &[(f64, f64)]) -> (f64, f64) {
    let n = p.len() as f64;
    let mx = p.iter().map(|q| q.0).sum::<f64>() / n;
    let my = p.iter().map(|q| q.1).sum::<f64>() / n;
    let sxy: f64 = p.iter().map(|q| (q.0 - mx) * (q.1 - my)).sum();
    let sxx: f64 = p.iter().map(|q| (q.0 - mx).powi(2)).sum();
    let b = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    (b, my - b * mx)
}

fn median(values: impl Iterator<Item = f64>) -> Option<f64> {
    let mut v: Vec<f64> = values.filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

#[cfg(test)]
mod tests {
    use iolab_model::attack::AttackResult;

    use super::*;

    /// A passing step at `rate` over 1 s: the process `own` cores busy, its
    /// pinned cores `core` (None: not pinned).
    fn step(rate: f64, own: f64, core: Option<f64>) -> StepRecord {
        let mut attack = AttackResult::default();
        attack.requests.ok = rate as u64;
        attack.elapsed_s = 1.0;
        StepRecord {
            rate_rps: rate,
            passed: true,
            cpu_cores: Some(own),
            core_busy_cores: core,
            attack,
            ..StepRecord::default()
        }
    }

    /// Steps at the search's rates: the process burns 0.3 ms a request,
    /// the kernel 0.2 ms more on its core, other work `other` cores.
    fn steps(other: Option<f64>) -> Vec<StepRecord> {
        [200.0, 400.0, 800.0, 1200.0, 1500.0]
            .iter()
            .map(|r| step(*r, 0.02 + r * 0.0003, other.map(|o| o + 0.02 + r * 0.0005)))
            .collect()
    }

    fn cpu(steps: &[StepRecord]) -> Cpu {
        let passing: Vec<&StepRecord> = steps.iter().collect();
        per_request(&passing, 1).expect("a reading")
    }

    #[test]
    fn r31_01_pinned_cores_slope_counts_the_kernels_softirq_work() {
        // Pinned and alone on its core: 0.5 ms a request, its softirq in.
        let c = cpu(&steps(Some(0.01)));
        assert_eq!((c.method, c.source), (CpuMethod::Slope, CpuSource::Cores));
        assert!((c.ms - 0.5).abs() < 1e-9, "{c:?}");
        assert!((c.idle_cores.unwrap() - 0.03).abs() < 1e-9, "{c:?}");
        // Not pinned: the process's 0.3 ms, said so.
        let c = cpu(&steps(None));
        assert_eq!((c.method, c.source), (CpuMethod::Slope, CpuSource::Process));
        assert!((c.ms - 0.3).abs() < 1e-9, "{c:?}");
    }

    #[test]
    fn r31_02_a_core_busy_with_other_work_falls_back_to_the_process() {
        // A build took 0.6 of the core whatever the rate: above OTHER_WORK.
        let c = cpu(&steps(Some(0.6)));
        assert_eq!(c.source, CpuSource::Process);
        assert!((c.ms - 0.3).abs() < 1e-9, "{c:?}");
        // Just under it, the cores still stand.
        let c = cpu(&steps(Some(OTHER_WORK - 0.01)));
        assert_eq!(c.source, CpuSource::Cores);
        assert!((c.ms - 0.5).abs() < 1e-9, "{c:?}");
        // One step without the cores' reading: the process for all.
        let mut mixed = steps(Some(0.01));
        mixed[2].core_busy_cores = None;
        assert_eq!(cpu(&mixed).source, CpuSource::Process);
    }

    #[test]
    fn one_step_costs_its_sources_busy_time_over_its_answers() {
        let s = step(1000.0, 0.32, Some(0.52));
        assert!((at(&s, CpuSource::Cores).unwrap() - 0.52).abs() < 1e-9);
        assert!((at(&s, CpuSource::Process).unwrap() - 0.32).abs() < 1e-9);
        let unpinned = step(1000.0, 0.32, None);
        assert_eq!(at(&unpinned, CpuSource::Cores), None);
        let mut silent = step(1000.0, 0.32, Some(0.52));
        silent.attack.requests.ok = 0;
        assert_eq!(at(&silent, CpuSource::Cores), None);
    }

    /// s12: a Spring hold of 212 requests over 2 s read 955 ms of its
    /// process tree's CPU, 333 of them its compiler threads': a request
    /// cost the other 622 ms, 2.93 ms each, not 4.50.
    #[test]
    fn r31_18_a_request_costs_its_process_less_its_compiler_threads() {
        let mut s = step(106.0, 0.955 / 2.0, Some(0.99));
        s.attack.requests.ok = 212;
        s.attack.elapsed_s = 2.0;
        s.compiler_cores = Some(0.333 / 2.0);
        assert!((at(&s, CpuSource::Process).unwrap() - 622.0 / 212.0).abs() < 1e-9);
        // The cores' reading leaves it out too (they ran on the core).
        assert!((at(&s, CpuSource::Cores).unwrap() - (1980.0 - 333.0) / 212.0).abs() < 1e-9);
        s.compiler_cores = None;
        assert!((at(&s, CpuSource::Process).unwrap() - 955.0 / 212.0).abs() < 1e-9);
    }

    #[test]
    fn one_rate_is_the_median_of_the_chosen_source() {
        let one = [step(1000.0, 0.32, Some(0.52))];
        let c = cpu(&one);
        assert_eq!((c.method, c.source), (CpuMethod::Median, CpuSource::Cores));
        assert!((c.ms - 0.52).abs() < 1e-9, "{c:?}");
        assert!(c.idle_cores.is_none());
    }
}
