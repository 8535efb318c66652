//! Flags that point a target at its backends (`--pg`, `--mc`, `--http-backend`,
//! pool sizes), shared by `iolab serve` and `iolab batch`.

use iolab_backends::BackendConfig;

/// Backend addresses and pool sizes.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct BackendFlags {}

impl BackendFlags {
    /// The typed configuration.
    pub fn config(&self) -> BackendConfig {
        BackendConfig::default()
    }
}
