//! The runtime folders built into the binary (`build.rs` embeds `runtimes/` and
//! `vectors/`), unpacked into a cache when iolab runs outside a checkout, so
//! `iolab run python-showdown` works from any folder: `~/.cache/iolab/runtimes/<hash>/`
//! (`$IOLAB_CACHE`, else `$XDG_CACHE_HOME/iolab`), one folder per content hash,
//! written to a temporary folder and renamed into place, so a half-written copy is
//! never used and two processes unpacking at once both end with a whole one.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

use super::EmbedError;

include!(concat!(env!("OUT_DIR"), "/runtimes.rs"));

/// The marker file of a root holding runtime folders.
const MARKER: &str = "runtimes/README.md";

/// The runtime folders built into this binary (`jvm`, `node`, ...), sorted: the
/// ones `--runtime` can always name, listed in help from here, not typed there.
pub fn names() -> Vec<&'static str> {
    let mut names: Vec<&str> = RUNTIME_FILES
        .iter()
        .filter_map(|(path, _, _)| {
            path.strip_prefix("runtimes/")?
                .strip_suffix("/runtime.toml")
        })
        .filter(|name| !name.contains('/'))
        .collect();
    names.sort_unstable();
    names
}

/// The short hash of every embedded file's path, mode and bytes.
fn content_hash() -> String {
    let mut h = Sha256::new();
    for (path, bytes, exec) in RUNTIME_FILES {
        h.update(path.as_bytes());
        h.update([0, u8::from(*exec)]);
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    h.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Where the cache of unpacked runtime folders lives.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("IOLAB_CACHE").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("iolab"))
}

/// The root holding the embedded runtime folders, unpacked once per process
/// (and once per content on the machine). Says where on stderr the first time.
pub fn root() -> Result<PathBuf, EmbedError> {
    static ROOT: OnceLock<Result<PathBuf, EmbedError>> = OnceLock::new();
    ROOT.get_or_init(|| {
        let cache = cache_dir().ok_or(EmbedError::NoCache)?;
        let dir = cache.join("runtimes").join(content_hash());
        let fresh = !dir.join(MARKER).is_file();
        if fresh {
            unpack(&dir)?;
        }
        eprintln!(
            "iolab: no iolab checkout here: using the runtime folders built into this binary, {} {} (IOLAB_ROOT=PATH uses a checkout)",
            if fresh { "unpacked into" } else { "in" },
            dir.display()
        );
        Ok(dir)
    })
    .clone()
}

/// Write every embedded file under `dir`, through a temporary sibling renamed into place.
pub fn unpack(dir: &Path) -> Result<(), EmbedError> {
    let parent = dir.parent().ok_or(EmbedError::NoParent)?;
    let fail = |what: &Path, e: std::io::Error| EmbedError::Unpack {
        dir: dir.to_path_buf(),
        what: what.to_path_buf(),
        why: e.to_string(),
    };
    std::fs::create_dir_all(parent).map_err(|e| fail(parent, e))?;
    let tmp = parent.join(format!(
        ".{}.tmp-{}",
        dir.file_name().and_then(|n| n.to_str()).unwrap_or("unpack"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&tmp);
    for (rel, bytes, exec) in RUNTIME_FILES {
        let path = tmp.join(rel);
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p).map_err(|e| fail(p, e))?;
        }
        let mut f = std::fs::File::create(&path).map_err(|e| fail(&path, e))?;
        f.write_all(bytes).map_err(|e| fail(&path, e))?;
        let mode = if *exec { 0o755 } else { 0o644 };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
            .map_err(|e| fail(&path, e))?;
    }
    match std::fs::rename(&tmp, dir) {
        Ok(()) => Ok(()),
        // Another process unpacked the same content first: theirs is whole, use it.
        Err(_) if dir.join(MARKER).is_file() => {
            let _ = std::fs::remove_dir_all(&tmp);
            Ok(())
        }
        Err(e) => Err(fail(dir, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r48_1_the_runtime_names_are_every_folder_with_a_manifest() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let on_disk = crate::targets::manifest::available(&root);
        assert!(on_disk.len() >= 7, "{on_disk:?}");
        assert_eq!(names(), on_disk);
    }

    #[test]
    fn every_runtime_folder_is_embedded_with_its_launchers_executable() {
        let has = |p: &str| RUNTIME_FILES.iter().find(|(r, _, _)| *r == p);
        assert!(has(MARKER).is_some());
        assert!(has("runtimes/lib/install.sh").is_some());
        assert!(has("vectors/contract.json").is_some());
        for name in ["python", "node", "jvm", "ruby"] {
            let start = has(&format!("runtimes/{name}/start")).unwrap_or_else(|| panic!("{name}"));
            assert!(start.2, "{name}/start is executable");
            assert!(has(&format!("runtimes/{name}/runtime.toml")).is_some());
        }
        assert!(
            !RUNTIME_FILES
                .iter()
                .any(|(r, _, _)| r.contains("node_modules") || r.contains("/.venv/")),
            "build outputs stay out"
        );
    }

    #[test]
    fn unpacking_writes_a_whole_copy_once() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("runtimes").join("abc");
        unpack(&dir).unwrap();
        assert!(dir.join(MARKER).is_file());
        let start = dir.join("runtimes/python/start");
        assert_ne!(
            std::fs::metadata(&start).unwrap().permissions().mode() & 0o111,
            0
        );
        // A second unpack of the same content into the same place leaves it whole.
        unpack(&dir).unwrap();
        assert!(dir.join("runtimes/python/runtime.toml").is_file());
        let leftovers = std::fs::read_dir(dir.parent().unwrap()).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary folder left behind");
    }
}
