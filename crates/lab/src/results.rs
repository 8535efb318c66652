//! The results folder: `runs.json` (`iolab.runs/1`) and `environment.json`,
//! each written atomically (a temp file in the same folder, then rename), so
//! an interrupted run never leaves a file that looks complete.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use iolab_model::runs::RunsFile;

/// File names inside a results folder.
pub const RUNS_JSON: &str = "runs.json";
/// The environment, also embedded in `runs.json`.
pub const ENVIRONMENT_JSON: &str = "environment.json";

/// Write `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

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

/// Read a `runs.json` back.
pub fn load(path: &Path) -> std::io::Result<RunsFile> {
    let text = std::fs::read(path)?;
    serde_json::from_slice(&text).map_err(std::io::Error::other)
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

    #[test]
    fn writes_atomically_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        assert!(write_atomic(&dir.path().join("no/such/dir.json"), b"x").is_err());
    }
}
