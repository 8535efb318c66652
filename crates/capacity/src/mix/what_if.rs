//! What each change buys a replayed mix: the what-ifs simulate the fitted
//! service as one request of the mix's mean work, on the host's cores;
//! the mix's CPU, read per endpoint by the probe on the cores the target
//! may use, bounds it too. Each change's answer for the mix is the lower of
//! the two: a bigger pool lifts the pool's endpoint only until the CPU
//! caps the mix. A change that adds cores raises the CPU's bound in
//! proportion.

use iolab_model::capacity::{MixWhatIf, Search};
use iolab_predict::whatif::changes;

/// Each what-if of `search` for the mix (none without the mix's CPU bound
/// or a fit).
pub fn what_if(search: &Search) -> Vec<MixWhatIf> {
    let Some(bound) = search.mix_cpu.as_ref().and_then(|c| c.bound_rps) else {
        return Vec::new();
    };
    let Some(fit) = &search.fit else {
        return Vec::new();
    };
    let nets = changes(fit);
    (search.what_if.iter())
        .filter_map(|w| {
            let simulated = w.slo_capacity_rps.or(w.capacity_rps)?;
            let cores =
                (nets.iter().find(|c| c.change == w.change)).map_or(fit.cores, |c| c.network.cores);
            Some(capped(
                &w.change,
                simulated,
                bound * f64::from(cores) / f64::from(fit.cores.max(1)),
            ))
        })
        .collect()
}

/// A change's answer for the mix: the lower of the simulated service's
/// and the CPU's.
pub fn capped(change: &str, simulated_rps: f64, cpu_rps: f64) -> MixWhatIf {
    MixWhatIf {
        change: change.to_string(),
        simulated_rps,
        cpu_rps,
        capacity_rps: simulated_rps.min(cpu_rps),
        cpu_caps: cpu_rps < simulated_rps,
    }
}
