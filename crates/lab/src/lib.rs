//! Experiments: presets, sweeps, process control, telemetry, results folders (iolab run).
