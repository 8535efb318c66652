//! Replaying recorded traffic (`iolab attack --replay FILE`): a recording
//! read into a [`Mix`] of endpoints (method and route template) with their
//! shares, samples and recorded service times.
//!
//! One registry of input formats ([`FORMATS`]), each format one file:
//! [`har`] (HAR 1.2), [`access_log`] (nginx / Apache combined, with
//! `$request_time` when present) and the vegeta targets file the generator
//! already reads ([`crate::parse_request_list`], reused here). A format is
//! detected from the file's first line unless named (`--replay-format`).
//! [`route`] makes templates, [`mix`] groups and applies the safety rules,
//! [`timeline`] lays the recorded times out as an open loop's phases.
//! Errors are [`ReplayError`]s: one line naming the file, line or entry,
//! and the fix.

pub mod access_log;
mod clock;
mod error;
pub mod har;
pub mod mix;
pub mod route;
pub mod timeline;

use std::io::Read;
use std::path::Path;

pub use error::ReplayError;
pub use mix::{Mix, MixBuilder, Recorded, Safety};
pub use route::Routes;

/// An input format of `--replay`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Har,
    Combined,
    Vegeta,
}

/// One row of the registry: a format, its name and how it is recognised.
pub struct FormatDef {
    pub format: Format,
    /// The `--replay-format` value.
    pub name: &'static str,
    /// Recognises the format from the file's first bytes.
    pub looks_like: fn(&str) -> bool,
}

/// Every input format, in the order detection tries them.
pub const FORMATS: &[FormatDef] = &[
    FormatDef {
        format: Format::Har,
        name: "har",
        looks_like: har::looks_like,
    },
    FormatDef {
        format: Format::Combined,
        name: "combined",
        looks_like: access_log::looks_like,
    },
    FormatDef {
        format: Format::Vegeta,
        name: "vegeta",
        looks_like: vegeta_looks_like,
    },
];

impl Format {
    /// The format named `name` (`--replay-format`).
    pub fn named(name: &str) -> Option<Format> {
        FORMATS.iter().find(|f| f.name == name).map(|f| f.format)
    }

    /// Its `--replay-format` name.
    pub fn name(self) -> &'static str {
        FORMATS
            .iter()
            .find(|f| f.format == self)
            .map_or("?", |f| f.name)
    }
}

/// How to read a recording.
#[derive(Debug, Clone)]
pub struct Options {
    /// `None`: detect from the content.
    pub format: Option<Format>,
    /// Load what can be loaded, counting bad lines or entries.
    pub skip_bad: bool,
    pub routes: Routes,
    pub safety: Safety,
    /// Largest HAR read, bytes ([`har::MAX_HAR_BYTES`]).
    pub har_limit: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            format: None,
            skip_bad: false,
            routes: Routes::default(),
            safety: Safety::default(),
            har_limit: har::MAX_HAR_BYTES,
        }
    }
}

/// A recording read.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub mix: Mix,
    pub format: Format,
    /// Lines or entries left out under `--skip-bad`.
    pub bad: u64,
}

impl Loaded {
    /// The one line saying what `--skip-bad` left out, if anything.
    pub fn bad_line(&self, file: &Path) -> Option<String> {
        (self.bad > 0).then(|| {
            format!(
                "replay: --skip-bad left out {} bad lines or entries of {}",
                self.bad,
                file.display()
            )
        })
    }
}

/// Where a format's loader hands each request (or the fault of its line).
pub struct Sink {
    mix: MixBuilder,
    skip_bad: bool,
    bad: u64,
    first_bad: Option<ReplayError>,
}

impl Sink {
    /// One line or entry: kept, or with `--skip-bad` counted as bad; a bad
    /// one without `--skip-bad` is the load's error.
    pub fn line(&mut self, r: Result<Recorded, ReplayError>) -> Result<(), ReplayError> {
        match r {
            Ok(r) => self.mix.add(r),
            Err(e) if self.skip_bad => {
                self.bad += 1;
                self.first_bad.get_or_insert(e);
            }
            Err(e) => return Err(e),
        }
        Ok(())
    }
}

/// Read the recording at `file` into a mix.
pub fn load(file: &Path, opts: &Options) -> Result<Loaded, ReplayError> {
    let format = match opts.format {
        Some(f) => f,
        None => detect(file)?,
    };
    let mut sink = Sink {
        mix: MixBuilder::new(opts.routes.clone(), opts.safety.clone()),
        skip_bad: opts.skip_bad,
        bad: 0,
        first_bad: None,
    };
    match format {
        Format::Har => har::load(file, opts.har_limit, &mut sink)?,
        Format::Combined => access_log::load(file, &mut sink)?,
        Format::Vegeta => vegeta(file, &mut sink)?,
    }
    if sink.mix.seen() == 0 {
        // Every line bad: the first one's fault is the error.
        return Err(sink.first_bad.unwrap_or(ReplayError::Empty {
            file: file.to_path_buf(),
        }));
    }
    let mix = sink.mix.finish();
    if mix.total == 0 {
        let why = mix.skipped_line().unwrap_or_default();
        return Err(ReplayError::AllSkipped {
            file: file.to_path_buf(),
            why: why.trim_start_matches("replay: ").to_string(),
        });
    }
    Ok(Loaded {
        mix,
        format,
        bad: sink.bad,
    })
}

/// The format of `file` from its first non-blank line (read: 64 KiB at most).
fn detect(file: &Path) -> Result<Format, ReplayError> {
    let mut head = Vec::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(64 << 10).read_to_end(&mut head))
        .map_err(|e| ReplayError::Read {
            file: file.to_path_buf(),
            why: e.to_string(),
        })?;
    let text = String::from_utf8_lossy(&head);
    if text.trim().is_empty() {
        return Err(ReplayError::Empty {
            file: file.to_path_buf(),
        });
    }
    let blank = text.lines().take_while(|l| l.trim().is_empty()).count() as u64;
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    FORMATS
        .iter()
        .find(|f| (f.looks_like)(first))
        .map(|f| f.format)
        .ok_or(ReplayError::UnknownFormat {
            file: file.to_path_buf(),
            line: blank + 1,
        })
}

fn vegeta_looks_like(line: &str) -> bool {
    let line = line.trim();
    line.starts_with('#')
        || line.split_once(' ').is_some_and(|(m, url)| {
            !m.is_empty() && m.bytes().all(|b| b.is_ascii_uppercase()) && url.contains("://")
        })
}

/// A vegeta targets file, read by the generator's own parser.
fn vegeta(file: &Path, sink: &mut Sink) -> Result<(), ReplayError> {
    use iolab_model::limits::{MAX_BODY_BYTES, MAX_TARGETS_BYTES};
    let bytes = iolab_files::read(file, MAX_TARGETS_BYTES).map_err(|e| ReplayError::Read {
        file: file.to_path_buf(),
        why: e.to_string(),
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let read = |p: &str| {
        iolab_files::read(Path::new(p), MAX_BODY_BYTES)
            .map_err(|e| format!("cannot read body file {p}: {e}"))
    };
    let origin = file.display().to_string();
    let list = crate::parse_request_list(&text, &origin, &read).map_err(ReplayError::Vegeta)?;
    for t in list {
        let target = path_of(&t.url).unwrap_or_else(|| "/".into());
        sink.line(Ok(Recorded {
            method: t.method,
            target,
            headers: t.headers,
            body: t.body,
            at_ms: None,
            service_ms: None,
        }))?;
    }
    Ok(())
}

/// The path and query of an absolute URL (`None`: not one); the host is
/// dropped, since a replay goes only to `--base`.
pub fn path_of(url: &str) -> Option<String> {
    let (_, rest) = url.split_once("://")?;
    let rest = rest.split('#').next().unwrap_or_default();
    Some(match rest.find(['/', '?']) {
        Some(i) if rest.as_bytes()[i] == b'/' => rest[i..].to_string(),
        Some(i) => format!("/{}", &rest[i..]),
        None => "/".to_string(),
    })
}
