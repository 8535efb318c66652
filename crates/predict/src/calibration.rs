//! Constants that turn workload amounts into time on this machine.
//!
//! They are measured, not guessed: `cargo bench -p iolab-predict --bench speed`
//! re-measures the Leibniz cost and prints it beside the constant.

/// Nanoseconds per Leibniz term (`iolab_model::cpu::leibniz`), one core.
///
/// Measured 2026-11-21 on the 2-core AMD EPYC (2.6 GHz) build machine:
/// 1.1 ns/term when the core is quiet (one divide per term, pipelined);
/// 3.4 ns/term while other builds shared the cores. The quiet figure is kept:
/// targets are measured pinned to their own CPUs.
pub const NS_PER_TERM: f64 = 1.1;

/// Time of one `mc:KEY` get of a small value over loopback, ns (a round trip
/// plus parsing; the value's size is not modelled).
pub const MC_NS: u64 = 100_000;

/// How long a request may wait for a pooled PostgreSQL connection before it
/// fails (HikariCP's `connectionTimeout`, iolab's `BackendConfig` default).
pub const PG_WAIT_NS: u64 = 30_000_000_000;

/// CPU time of `terms` Leibniz terms, ns.
pub fn cpu_ns(terms: u64) -> u64 {
    (terms as f64 * NS_PER_TERM).round() as u64
}
