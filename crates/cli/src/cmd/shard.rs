//! The flags that place one run in a sharded plan (`--shard i/n`,
//! `--start-at TIME`), shared by `iolab attack` and `iolab run`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use iolab_model::shard::{Shard, MAX_START_LEAD};

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

fn parse_shard(s: &str) -> Result<Shard, iolab_model::shard::ShardParseError> {
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

/// A `--start-at` that is no usable time; `why` is one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--start-at '{text}': {why} (use Unix seconds, RFC 3339 like 2026-11-22T10:00:00Z, or +10s)"
)]
pub struct StartAtError {
    /// As given (trimmed).
    pub text: String,
    /// What is wrong with it.
    pub why: String,
}

/// Parse a start time into Unix milliseconds: Unix seconds (`1767225600`,
/// fractions allowed), RFC 3339 (`2026-01-01T00:00:00Z`, any offset), or
/// `+DUR` from `now` (`+10s`: convenient by hand, but each host reads its own
/// clock, so shards on several hosts should share an absolute time).
pub fn parse_start_at(s: &str, now: SystemTime) -> Result<u64, StartAtError> {
    let s = s.trim();
    let bad = |why: String| StartAtError {
        text: s.to_string(),
        why,
    };
    // Every sum is checked: a time past what the clock can hold (`1e19`) is
    // the same "too far ahead" as one a day and a second away, never a panic.
    let too_far = || bad("more than a day ahead (milliseconds given as seconds?)".into());
    let at = if let Some(rel) = s.strip_prefix('+') {
        let d = iolab_model::parse_duration(rel).map_err(|e| bad(e.to_string()))?;
        now.checked_add(d).ok_or_else(too_far)?
    } else if let Ok(secs) = s.parse::<f64>() {
        if !(secs.is_finite() && secs > 0.0) {
            return Err(bad("not a time after 1970".into()));
        }
        let d = Duration::try_from_secs_f64(secs).map_err(|_| too_far())?;
        UNIX_EPOCH.checked_add(d).ok_or_else(too_far)?
    } else {
        let t = chrono::DateTime::parse_from_rfc3339(s).map_err(|e| bad(e.to_string()))?;
        let ms = u64::try_from(t.timestamp_millis()).map_err(|_| bad("before 1970".into()))?;
        UNIX_EPOCH + Duration::from_millis(ms)
    };
    let ms = at
        .duration_since(UNIX_EPOCH)
        .map_err(|_| bad("before 1970".into()))?
        .as_millis() as u64;
    if at > now + MAX_START_LEAD {
        return Err(bad(format!(
            "{} from now is more than a day ahead (milliseconds given as seconds?)",
            iolab_model::format_duration(at.duration_since(now).unwrap_or_default())
        )));
    }
    Ok(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_times_in_three_spellings() {
        let now = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        assert_eq!(parse_start_at("1800000010", now), Ok(1_800_000_010_000));
        assert_eq!(parse_start_at("1800000010.25", now), Ok(1_800_000_010_250));
        assert_eq!(parse_start_at("+1.5s", now), Ok(1_800_000_001_500));
        // 2027-01-15T08:00:00Z = 1800000000, written with an offset.
        assert_eq!(
            parse_start_at("2027-01-15T09:00:05+01:00", now),
            Ok(1_800_000_005_000)
        );
        let e = parse_start_at("1800000000000", now)
            .unwrap_err()
            .to_string();
        assert!(e.contains("more than a day ahead"), "{e}");
        assert!(parse_start_at("tomorrow", now)
            .unwrap_err()
            .to_string()
            .contains("RFC 3339"));
    }

    /// Issue 30, finding 1: `--start-at 1e19` (and 1e20 and up) panicked
    /// adding to the clock before the "a day ahead" check.
    #[test]
    fn r30_01_a_start_past_the_clocks_range_is_refused_not_a_panic() {
        let now = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        for huge in ["1e19", "1e20", "1e300", "18446744073709551615"] {
            let e = parse_start_at(huge, now).unwrap_err().to_string();
            assert!(e.contains("more than a day ahead"), "{huge}: {e}");
        }
        assert!(parse_start_at("+9999999999999999s", now).is_err());
    }
}
