//! The results folder: `runs.json` (`iolab.runs/1`) and `environment.json`,
//! each written atomically ([`write_atomic`]), so an interrupted run never
//! leaves a file that looks complete; read back with
//! [`iolab_model::runs::load`].

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use iolab_model::files::write_atomic;
use iolab_model::runs::RunsFile;

pub use iolab_model::runs::RUNS_JSON;
/// The environment, also embedded in `runs.json`.
pub const ENVIRONMENT_JSON: &str = "environment.json";

/// Write `runs.json` and `environment.json` into `dir`.
pub fn save(dir: &Path, runs: &RunsFile) -> std::io::Result<()> {
    let json = serde_json::to_vec_pretty(runs).map_err(std::io::Error::other)?;
    write_atomic(&dir.join(ENVIRONMENT_JSON), &{
        let mut v = serde_json::to_vec_pretty(&runs.environment).map_err(std::io::Error::other)?;
        v.push(b'\n');
        v
    })?;
    let mut json = json;
    json.push(b'\n');
    write_atomic(&dir.join(RUNS_JSON), &json)
}

/// `results/<preset>-<yyyymmddThhmmssZ>` for a run started now.
pub fn default_dir(preset: &str) -> PathBuf {
    Path::new("results").join(format!("{preset}-{}", compact_utc(SystemTime::now())))
}

fn civil(t: SystemTime) -> (i64, u32, u32, u32, u32, u32, u32) {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        year,
        month,
        day,
        (rem / 3600) as u32,
        (rem % 3600 / 60) as u32,
        (rem % 60) as u32,
        d.subsec_millis(),
    )
}

/// `2026-11-21T21:25:59.123Z`.
pub fn rfc3339(t: SystemTime) -> String {
    let (y, mo, d, h, mi, s, ms) = civil(t);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z")
}

/// `20261121T212559Z`.
pub fn compact_utc(t: SystemTime) -> String {
    let (y, mo, d, h, mi, s, _) = civil(t);
    format!("{y:04}{mo:02}{d:02}T{h:02}{mi:02}{s:02}Z")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn formats_utc() {
        let t = UNIX_EPOCH + Duration::from_millis(1_795_296_359_123);
        assert_eq!(rfc3339(t), "2026-11-21T21:25:59.123Z");
        assert_eq!(compact_utc(t), "20261121T212559Z");
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(compact_utc(leap), "20000229T000000Z");
        assert!(default_dir("showdown")
            .to_string_lossy()
            .starts_with("results/showdown-"));
    }
}
