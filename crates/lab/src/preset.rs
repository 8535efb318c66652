//! Preset files (TOML) turned into a validated [`ExperimentPlan`].
//!
//! A preset is found by path (`path/to/x.toml`) or by name: `presets/NAME.toml`
//! under the current directory if it exists, else the copy embedded in the
//! binary, so `iolab run` works from anywhere. Any fault is one line naming the
//! file, the line and the field.

pub mod expand;
pub mod file;
pub mod sweep;
pub mod values;

use std::path::{Path, PathBuf};

use iolab_model::experiment::ExperimentPlan;
use iolab_model::limits::{MAX_PRESET_BYTES, MAX_REPS};

pub use expand::{FieldError, Overrides};

/// A preset that cannot be used; the message names file, line and field.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct PresetError(pub String);

impl iolab_model::HasExitKind for PresetError {
    /// A preset that cannot be read or run: the user's to fix, nothing run.
    fn exit_kind(&self) -> iolab_model::ExitKind {
        iolab_model::ExitKind::BadInput
    }
}

// Presets built into the binary, so `iolab run NAME` works from any folder
// (a `presets/NAME.toml` in the current folder wins): every file of
// `presets/`, listed by build.rs.
include!(concat!(env!("OUT_DIR"), "/presets.rs"));

/// The preset run when none is named.
pub const DEFAULT_PRESET: &str = "showdown";

/// Load a preset by name (from `presets/`) or by path, at time-scale `scale`
/// (None = the preset's own default).
pub fn load_plan(name_or_path: &str, scale: Option<f64>) -> Result<ExperimentPlan, PresetError> {
    load_plan_with(
        name_or_path,
        Overrides {
            scale,
            ..Overrides::default()
        },
    )
}

/// [`load_plan`] with every command-line override.
pub fn load_plan_with(name_or_path: &str, over: Overrides) -> Result<ExperimentPlan, PresetError> {
    if let Some(s) = over.scale {
        values::Scale::check(s).map_err(|e| PresetError(format!("--scale: {e}")))?;
    }
    match over.reps {
        Some(0) => return Err(PresetError("--reps: give at least 1".into())),
        Some(r) if r > MAX_REPS => {
            return Err(PresetError(format!("--reps {r}: at most {MAX_REPS}")))
        }
        _ => {}
    }
    let (origin, text) = locate(name_or_path)?;
    parse_plan(&text, &origin, over)
}

/// Where a preset came from, for messages and `plan.source`, and its text.
pub fn locate(name_or_path: &str) -> Result<(String, String), PresetError> {
    let looks_like_path = name_or_path.ends_with(".toml") || name_or_path.contains('/');
    if looks_like_path {
        let text = read_preset(Path::new(name_or_path)).map_err(|e| {
            PresetError(format!(
                "{name_or_path}: cannot read preset ({e}); `iolab presets` lists the built-in ones"
            ))
        })?;
        return Ok((name_or_path.to_string(), text));
    }
    let on_disk = Path::new("presets").join(format!("{name_or_path}.toml"));
    if on_disk.is_file() {
        let text = read_preset(&on_disk)
            .map_err(|e| PresetError(format!("{}: cannot read preset ({e})", on_disk.display())))?;
        return Ok((on_disk.display().to_string(), text));
    }
    EMBEDDED
        .iter()
        .find(|(n, _)| *n == name_or_path)
        .map(|(n, t)| (format!("presets/{n}.toml (embedded)"), t.to_string()))
        .ok_or_else(|| {
            PresetError(format!(
                "no preset named '{name_or_path}': run `iolab presets` to list them, or give a path to a .toml file"
            ))
        })
}

/// A preset's text, read with a size cap (`iolab run /dev/zero` fails at
/// once instead of growing memory).
fn read_preset(path: &Path) -> std::io::Result<String> {
    let bytes = iolab_model::files::read_capped(path, MAX_PRESET_BYTES)?;
    String::from_utf8(bytes)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"))
}

/// Parse preset text; `origin` names it in messages.
pub fn parse_plan(
    text: &str,
    origin: &str,
    over: Overrides,
) -> Result<ExperimentPlan, PresetError> {
    let file: file::PresetFile = toml::from_str(text).map_err(|e| toml_error(text, origin, &e))?;
    expand::expand(file, Some(origin.to_string()), over).map_err(|e| field_error(text, origin, &e))
}

/// One line from a toml/serde error: `file:line: field 'x': message`.
fn toml_error(text: &str, origin: &str, e: &toml::de::Error) -> PresetError {
    let msg = e.message().trim().replace('\n', " ");
    let Some(span) = e.span() else {
        return PresetError(format!("{origin}: {msg}"));
    };
    let line_no = text[..span.start.min(text.len())].matches('\n').count() + 1;
    let field = field_at(text, span.start);
    let fix = if msg.starts_with("unknown field") {
        " (see presets/README.md for every field)"
    } else {
        ""
    };
    match field {
        Some(f) => PresetError(format!("{origin}:{line_no}: field '{f}': {msg}{fix}")),
        None => PresetError(format!("{origin}:{line_no}: {msg}{fix}")),
    }
}

/// The dotted field name at a byte offset: the key on that line, prefixed by
/// the table header above it.
fn field_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let line = &text[line_start..line_end];
    let key = line
        .split_once('=')
        .map(|(k, _)| k.trim().trim_matches('"').to_string())
        .filter(|k| !k.is_empty() && !k.starts_with('['))?;
    let table = table_above(&text[..line_start]);
    Some(match table {
        Some(t) => format!("{t}.{key}"),
        None => key,
    })
}

/// The nearest `[table]` / `[[table]]` header before a position.
fn table_above(before: &str) -> Option<String> {
    before.lines().rev().find_map(|l| {
        let l = l.trim();
        if l.starts_with('[') && !l.starts_with("[[") {
            Some(l.trim_matches(|c| c == '[' || c == ']').trim().to_string())
        } else if l.starts_with("[[") {
            Some(l.trim_matches(|c| c == '[' || c == ']').trim().to_string())
        } else {
            None
        }
    })
}

/// One line from a rule that spans fields, with the line of the field (or its table).
fn field_error(text: &str, origin: &str, e: &FieldError) -> PresetError {
    // A flag (`--scale`) is named as typed, with no line of the preset.
    if e.field.starts_with("--") {
        return PresetError(format!("{} {}", e.field, e.message));
    }
    match line_of(text, &e.field) {
        Some(n) => PresetError(format!("{origin}:{n}: field '{}': {}", e.field, e.message)),
        None => PresetError(format!("{origin}: field '{}': {}", e.field, e.message)),
    }
}

/// Find the line of a dotted field (`load.rate`, `targets[1].command`, `name`,
/// `load`): the key inside its table, else the table header, else none.
fn line_of(text: &str, field: &str) -> Option<usize> {
    let (table, index, key) = match field.split_once('.') {
        Some((head, key)) => match head.split_once('[') {
            Some((t, rest)) => (
                Some(t),
                rest.trim_end_matches(']').parse().unwrap_or(0),
                Some(key),
            ),
            None => (Some(head), 0, Some(key)),
        },
        None => (None, 0, Some(field)),
    };
    let header = |l: &str| -> Option<String> {
        l.starts_with('[')
            .then(|| l.trim_matches(|c| c == '[' || c == ']').trim().to_string())
    };
    let mut current: Option<String> = None;
    let mut occurrences = 0usize;
    let mut wanted = false;
    let mut table_line = None;
    for (i, raw) in text.lines().enumerate() {
        let l = raw.trim();
        if let Some(name) = header(l) {
            wanted = false;
            // A bare field may name a table (`load`, `targets`).
            if table.is_none() && Some(name.as_str()) == key && table_line.is_none() {
                table_line = Some(i + 1);
            }
            if Some(name.as_str()) == table {
                if occurrences == index {
                    wanted = true;
                    table_line = Some(i + 1);
                }
                occurrences += 1;
            }
            current = Some(name);
            continue;
        }
        let in_scope = if table.is_none() {
            current.is_none()
        } else {
            wanted
        };
        if in_scope {
            if let Some((k, _)) = l.split_once('=') {
                if Some(k.trim().trim_matches('"')) == key {
                    return Some(i + 1);
                }
            }
        }
    }
    table_line
}

/// One entry of `iolab presets`.
#[derive(Debug, Clone)]
pub struct PresetInfo {
    /// Preset name.
    pub name: String,
    /// Where it lives.
    pub origin: String,
    /// The plan at its own scale, or why it cannot be loaded.
    pub plan: Result<ExperimentPlan, PresetError>,
    /// What it is run with: `run`, `capacity` or `whatif` (a `[capacity]`
    /// table makes it searched, a `[whatif]` table a pair).
    pub command: &'static str,
}

/// The command a preset's text is run with (see [`PresetInfo::command`]).
fn command_of(text: &str) -> &'static str {
    let tables = toml::from_str::<toml::Table>(text).unwrap_or_default();
    match (
        tables.contains_key("whatif"),
        tables.contains_key("capacity"),
    ) {
        (true, _) => "whatif",
        (false, true) => "capacity",
        (false, false) => "run",
    }
}

/// Every preset: embedded ones and `presets/*.toml` under `dir` (a file on
/// disk shadows the embedded copy of the same name), sorted by name.
pub fn list(dir: &Path) -> Vec<PresetInfo> {
    let mut out: Vec<PresetInfo> = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    for path in files {
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        let origin = path.display().to_string();
        let text = read_preset(&path).map_err(|e| PresetError(format!("{origin}: {e}")));
        let command = text.as_deref().map_or("run", command_of);
        let plan = text.and_then(|t| parse_plan(&t, &origin, Overrides::default()));
        out.push(PresetInfo {
            name,
            origin,
            plan,
            command,
        });
    }
    for (name, text) in EMBEDDED {
        if out.iter().all(|p| p.name != *name) {
            let origin = format!("presets/{name}.toml (embedded)");
            let plan = parse_plan(text, &origin, Overrides::default());
            out.push(PresetInfo {
                name: name.to_string(),
                origin,
                plan,
                command: command_of(text),
            });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

#[cfg(test)]
mod tests;
