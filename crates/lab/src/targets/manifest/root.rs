//! Where the runtime folders are: the checkout holding `runtimes/`, or
//! the copy built into the binary.

use std::path::{Path, PathBuf};

use crate::targets::TargetError;

/// The file that marks a checkout's runtime folders.
const MARKER: &str = "runtimes/README.md";

/// The checkout holding `runtimes/`: `IOLAB_ROOT` if set, else the first
/// folder above the current one, then above this executable, that holds it,
/// else the runtime folders built into the binary, unpacked into a cache
/// ([`crate::targets::embedded`]), said on stderr.
pub fn find_root() -> Result<PathBuf, TargetError> {
    if let Some(root) = std::env::var_os("IOLAB_ROOT") {
        let root = PathBuf::from(root);
        if root.join(MARKER).is_file() {
            return Ok(root);
        }
        return Err(TargetError::Root {
            root,
            marker: MARKER,
        });
    }
    let starts = [
        std::env::current_dir().ok(),
        std::env::current_exe()
            .ok()
            .and_then(|p| p.canonicalize().ok()),
    ];
    starts
        .iter()
        .flatten()
        .flat_map(|start| start.ancestors())
        .find(|dir| dir.join(MARKER).is_file())
        .map_or_else(
            || crate::targets::embedded::root().map_err(TargetError::from),
            |d| Ok(d.to_path_buf()),
        )
}

/// The names of the runtime folders there are (`jvm`, `node`, ...).
pub fn available(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root.join("runtimes"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join("runtime.toml").is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    names
}
