//! The flags that place one run in a sharded plan (`--shard i/n`,
//! `--start-at TIME`), shared by `iolab attack` and `iolab run`.

use std::time::SystemTime;

use iolab_model::shard::{parse_start_at, Shard};

use crate::CliError;

/// `--shard` and `--start-at`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ShardArgs {
    /// Send only shard i of n of the plan: the requests whose index k has
    /// k mod n = i - 1 (open loop), or 1/n of the clients and requests (closed
    /// loop). n hosts with 1/n .. n/n send the plan together; `iolab merge` adds
    /// their results.
    #[arg(long, value_name = "i/n", value_parser = parse_shard)]
    pub shard: Option<Shard>,
    /// Start at this wall-clock time, so that shards begin together however
    /// late their engine started them: Unix seconds, RFC 3339
    /// (2026-11-22T10:00:00Z) or +DUR from now. A start already past is refused.
    #[arg(long, value_name = "TIME")]
    pub start_at: Option<String>,
}

fn parse_shard(s: &str) -> Result<Shard, String> {
    s.parse()
}

impl ShardArgs {
    /// `--start-at` as Unix ms (read against this host's clock, now).
    pub fn start_at_unix_ms(&self) -> Result<Option<u64>, CliError> {
        self.start_at
            .as_deref()
            .map(|s| parse_start_at(s, SystemTime::now()).map_err(CliError::usage))
            .transpose()
    }
}
