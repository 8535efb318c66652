//! Experiments: presets, sweeps, process control, telemetry, results folders.

pub mod preset;
