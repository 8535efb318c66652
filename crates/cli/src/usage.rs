//! Usage errors in one line that names the fault and the fix: clap's own
//! first line, completed with what it puts on later lines (the missing
//! arguments, its "did you mean"), and the peers' flags
//! ([`crate::peers`]) pointed at iolab's. Checked before clap too
//! ([`foreign`]): a peer's spelling that clap would read as something else
//! (vegeta's `-output x` is `-o utput`, oha's `-q 50` is quiet and a
//! stray `50`) is refused before it can run.

use std::ffi::OsString;
use std::io::IsTerminal;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::CommandFactory;

use crate::cli::Cli;
use crate::peers;

/// The subcommand named by `args` (program name first), as clap defines it.
fn subcommand(args: &[String]) -> Option<clap::Command> {
    let name = args.iter().skip(1).find(|a| !a.starts_with('-'))?;
    Cli::command()
        .get_subcommands()
        .find(|c| c.get_name() == name || c.get_all_aliases().any(|a| a == name))
        .cloned()
}

/// `args` as strings (lossy: only for reading what was typed).
pub fn strings<I, T>(args: I) -> Vec<String>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    args.into_iter()
        .map(|a| a.into().to_string_lossy().into_owned())
        .collect()
}

/// A peer's flag that clap would misread, refused before parsing: a
/// single-dash long name (`-rate=50`, `-output x`, vegeta's Go spelling)
/// and a flag iolab uses otherwise given the peer's kind of value
/// (`-q 50`, `-d '{"id":1}'`). `None` when nothing looks foreign.
pub fn foreign(args: &[String]) -> Option<String> {
    let sub = subcommand(args)?;
    let longs: Vec<&str> = sub.get_arguments().filter_map(|a| a.get_long()).collect();
    let shorts: Vec<char> = sub.get_arguments().filter_map(|a| a.get_short()).collect();
    let typed = args.iter().skip(1).take_while(|a| *a != "--");
    let mut prev: Option<&String> = None;
    for a in typed {
        if let Some(p) = prev {
            let clash = peers::rows_for(p).into_iter().find(|r| {
                r.here.is_some_and(|(_, meant)| meant(a))
                    && p.chars().nth(1).is_some_and(|c| shorts.contains(&c))
            });
            if let Some(r) = clash {
                return Some(format!(
                    "'{p} {a}': {}",
                    peers::hint(&[r], true).unwrap_or_default()
                ));
            }
        }
        prev = Some(a);
        let Some(word) = a.strip_prefix('-').filter(|w| !w.starts_with('-')) else {
            continue;
        };
        let name = word.split('=').next().unwrap_or(word);
        if name.len() < 3 || !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
            continue;
        }
        let rows = peers::rows_for(a);
        if let Some(h) = peers::hint(&rows, false) {
            return Some(format!("'{a}': {h}"));
        }
        if longs.contains(&name) {
            return Some(format!(
                "'{a}' has one dash (vegeta's way): iolab's long flags take two, --{name}"
            ));
        }
    }
    None
}

/// Clap's error as one line: its first line, the missing arguments it
/// lists below it, a hint for a peer's flag, or its own suggestion.
pub fn one_line(e: &clap::Error, args: &[String]) -> String {
    let text = e.to_string();
    let first = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("error")
        .trim_end()
        .to_string();
    let invalid = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(s)) => vec![s.clone()],
        Some(ContextValue::Strings(v)) => v.clone(),
        _ => Vec::new(),
    };
    match e.kind() {
        ErrorKind::MissingRequiredArgument => {
            format!("error: missing {}", missing(&invalid, args))
        }
        ErrorKind::UnknownArgument => {
            let typed = invalid.first().map(String::as_str).unwrap_or_default();
            if let Some(h) = peers::hint(&peers::rows_for(typed), false) {
                return format!("error: unexpected argument '{typed}': {h}");
            }
            match e.get(ContextKind::SuggestedArg) {
                Some(s) => format!("{first}; did you mean '{s}'?"),
                None => first,
            }
        }
        _ => first,
    }
}

/// What a missing-argument error lists, with the way round it when the
/// missing one is the URL of a command that also takes `--targets`.
fn missing(invalid: &[String], args: &[String]) -> String {
    let list = if invalid.is_empty() {
        "a required argument".to_string()
    } else {
        invalid.join(", ")
    };
    let takes_targets = subcommand(args)
        .is_some_and(|s| s.get_arguments().any(|a| a.get_long() == Some("targets")));
    if !(takes_targets && invalid.iter().any(|a| a.contains("URL"))) {
        return list;
    }
    let stdin = if std::io::stdin().is_terminal() {
        ""
    } else {
        " (stdin is read only when --targets - says so)"
    };
    format!("{list}: give the URL to send to, or --targets FILE (vegeta's format; - reads it from stdin){stdin}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split(' ').map(String::from).collect()
    }

    #[test]
    fn single_dash_long_flags_and_clashing_values_are_named() {
        let f = |s| foreign(&args(s)).unwrap_or_default();
        assert!(f("iolab attack http://x/ -output o.bin").contains("-o/--out FILE"));
        assert!(f("iolab attack http://x/ -rate=50").contains("--rate"));
        assert!(f("iolab attack http://x/ -q 50 -d 1s").contains("--rate N"));
        assert!(f("iolab attack http://x/ -d {\"a\":1}").contains("--body TEXT"));
        assert_eq!(f("iolab attack http://x/ -q -d 30s --rate 5"), "");
        assert_eq!(f("iolab attack http://x/ -kq -d 30 --rate 5"), "");
    }
}
