//! Files iolab writes and reads back: each written atomically (a temp file in
//! the same folder, then a rename over the target, so an interrupted write
//! never leaves a file that looks complete), each read with a size cap (so a
//! wrong path such as `/dev/zero` fails at once instead of growing memory).
//!
//! Here, beside the documents, because every crate that writes or reads one
//! (`loadgen`'s `--hdr`/`--csv`, `lab`'s results folder, `report`'s readers)
//! depends on this crate and on nothing sideways.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::Path;

use crate::units::format_bytes;

/// Write `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, |w| w.write_all(bytes))
}

/// Write through `fill` into a temp file beside `path`, then rename it over
/// `path`; on any error the temp file is removed and `path` is untouched.
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file path"))?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let prefix = format!(".{}.", name.to_string_lossy());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix);
    // The mode a plain File::create gives (0666 less the umask), not the
    // temp file's private 0600: results are for sharing.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let tmp = builder.tempfile_in(dir)?;
    let (file, tmp_path) = tmp.into_parts();
    let mut w = BufWriter::new(file);
    fill(&mut w)?;
    w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    tmp_path.persist(path).map_err(|e| e.error)
}

/// Check, before any work whose result goes there, that `path` can be
/// written as [`write_atomic`] will write it: not a folder, and its folder
/// exists and takes a new file (one is created there and removed at once).
pub fn check_writable(path: &Path) -> io::Result<()> {
    if path.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is a folder, not a file",
        ));
    }
    path.file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file path"))?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    tempfile::Builder::new()
        .prefix(".iolab-check.")
        .tempfile_in(dir)
        .map(drop)
        .map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot create a file in {}: {e}", dir.display()),
            )
        })
}

/// The whole of `path`, refused with an error naming `cap` if it holds more;
/// never reads more than `cap` + 1 bytes.
pub fn read_capped(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    let file = File::open(path)?;
    let too_big = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than the {} cap", format_bytes(cap)),
        )
    };
    // A regular file says its size: refuse it before reading a byte.
    if file.metadata().is_ok_and(|m| m.is_file() && m.len() > cap) {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(too_big());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn writes_atomically_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(names(dir.path()), ["a.json"]);
        assert!(write_atomic(&dir.path().join("no/such/dir.json"), b"x").is_err());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&p).unwrap().permissions().mode();
            assert_eq!(
                mode & 0o044,
                0o044,
                "readable as File::create makes it: {mode:o}"
            );
        }
    }

    #[test]
    fn a_failed_fill_keeps_the_old_file_and_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.csv");
        write_atomic(&p, b"old").unwrap();
        let e = write_atomic_with(&p, |w| {
            w.write_all(b"half")?;
            Err(io::Error::other("disk full"))
        });
        assert_eq!(e.unwrap_err().to_string(), "disk full");
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        assert_eq!(names(dir.path()), ["a.csv"]);
    }

    #[test]
    fn reads_within_the_cap_only() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        std::fs::write(&p, b"12345").unwrap();
        assert_eq!(read_capped(&p, 5).unwrap(), b"12345");
        let e = read_capped(&p, 4).unwrap_err();
        assert_eq!(e.to_string(), "larger than the 4 bytes cap");
    }

    #[test]
    fn writable_paths_are_checked_without_leaving_a_file() {
        let dir = tempfile::tempdir().unwrap();
        check_writable(&dir.path().join("x.hdr")).unwrap();
        assert!(names(dir.path()).is_empty());
        let e = check_writable(&dir.path().join("no/such/x.hdr")).unwrap_err();
        assert!(e.to_string().contains("cannot create a file in"), "{e}");
        assert!(check_writable(dir.path()).is_err());
    }

    /// Regression (issue 16): an endless file is cut at the cap, at once.
    #[test]
    fn dev_zero_fails_fast_at_the_cap() {
        let t = std::time::Instant::now();
        let e = read_capped(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert_eq!(e.to_string(), "larger than the 1 MiB cap");
        assert!(t.elapsed() < std::time::Duration::from_secs(2));
    }
}
