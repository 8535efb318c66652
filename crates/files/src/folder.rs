//! Results folders, claimed atomically: the claim is an exclusive create of
//! [`CLAIM`] inside the folder (made first if need be), which exactly one
//! process can win, whether the folder is new or the user made it. So two
//! runs with the same `--out` never write into one folder: the second is
//! refused. Default names ([`claim_new`]) are taken by `mkdir`, which also
//! has one winner, so two runs started in the same second get two folders.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The marker a run leaves in a folder it claimed that existed before it.
pub const CLAIM: &str = ".iolab-claim";

/// How many suffixed names [`claim_new`] tries.
const MAX_SUFFIX: u32 = 1000;

fn taken(dir: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!(
            "{} belongs to another run (it holds {CLAIM} or results): choose another --out folder or remove it",
            dir.display()
        ),
    )
}

/// Claim `dir` for one run: made if need be (with its parents), then
/// claimed by creating [`CLAIM`] in it, which fails if another run did
/// first. `done_marker` (e.g. `runs.json`) in the folder means an earlier
/// run's results: refused too.
pub fn claim(dir: &Path, done_marker: &str) -> io::Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} exists and is not a folder", dir.display()),
        ));
    }
    std::fs::create_dir_all(dir)?;
    if dir.join(done_marker).exists() {
        return Err(taken(dir));
    }
    let mut marker = match OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(dir.join(CLAIM))
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Err(taken(dir)),
        Err(e) => return Err(e),
    };
    writeln!(marker, "{}", std::process::id())
}

/// Claim a new folder named `base`, or `base-2`, `base-3`, ... when that
/// name is taken (two runs started in the same second); returns the one
/// claimed. Only a folder made here counts: an existing one is never shared.
pub fn claim_new(base: &Path) -> io::Result<PathBuf> {
    if let Some(parent) = base.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    for n in 1..=MAX_SUFFIX {
        let dir = if n == 1 {
            base.to_path_buf()
        } else {
            let mut name = base.as_os_str().to_owned();
            name.push(format!("-{n}"));
            PathBuf::from(name)
        };
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!(
            "{} and {MAX_SUFFIX} suffixed names are taken: name a folder with --out",
            base.display()
        ),
    ))
}
