//! The flags a vegeta, oha, hey, wrk(2) or k6 user types first, and what
//! iolab calls each: one table ([`PEER_FLAGS`]) that the usage errors read
//! (a "did you mean" naming iolab's flag, [`crate::usage`]) and that
//! docs/attack.md shows ([`markdown`], checked by a test), so a new peer flag
//! is one row here.

/// A peer tool's flag and iolab's way of saying the same.
#[derive(Debug, Clone, Copy)]
pub struct PeerFlag {
    /// The flag as the peer spells it, e.g. `-z` or `--disable-keepalive`.
    pub flag: &'static str,
    /// Which tools take it that way, e.g. `oha, hey`.
    pub tools: &'static str,
    /// What it means there.
    pub means: &'static str,
    /// iolab's way, e.g. `-d/--duration 30s`.
    pub iolab: &'static str,
    /// iolab uses the same flag for something else (`-q` is quiet here):
    /// what, and the values that show the peer's meaning was meant (`-q 50`),
    /// so the hint shows only then.
    pub here: Option<(&'static str, Meant)>,
}

/// Whether a value shows the peer's meaning was meant (`-q 50`).
pub type Meant = fn(&str) -> bool;

const fn row(
    flag: &'static str,
    tools: &'static str,
    means: &'static str,
    iolab: &'static str,
) -> PeerFlag {
    PeerFlag {
        flag,
        tools,
        means,
        iolab,
        here: None,
    }
}

const fn clash(
    flag: &'static str,
    tools: &'static str,
    means: &'static str,
    iolab: &'static str,
    here: &'static str,
    meant: Meant,
) -> PeerFlag {
    PeerFlag {
        flag,
        tools,
        means,
        iolab,
        here: Some((here, meant)),
    }
}

/// `-q 50`: a number is a rate, never a flag's value here.
fn is_number(v: &str) -> bool {
    v.parse::<f64>().is_ok()
}

/// `-d '{"id":1}'`: neither a duration nor a mistyped one (`-d 30`).
fn is_not_duration(v: &str) -> bool {
    iolab_model::parse_duration(v).is_err() && !v.starts_with(|c: char| c.is_ascii_digit())
}

/// Every peer flag iolab knows, in the order docs/attack.md lists them.
pub const PEER_FLAGS: &[PeerFlag] = &[
    row("-z", "oha, hey", "how long to send", "`-d/--duration 30s`"),
    row("-t", "wrk", "generator threads", "`--threads N`"),
    row("-t", "oha, hey", "per-request timeout", "`--timeout 10s`"),
    row("-R", "wrk2", "requests per second", "`--rate N`"),
    clash(
        "-q",
        "oha, hey",
        "requests per second",
        "`--rate N`",
        "-q is quiet (no progress line)",
        is_number,
    ),
    clash(
        "-d",
        "oha, hey, curl",
        "the request body",
        "`--body TEXT`",
        "-d is the duration",
        is_not_duration,
    ),
    row(
        "-D",
        "oha, hey",
        "the body from a file",
        "`--body-file FILE`",
    ),
    row(
        "-T",
        "oha, hey",
        "Content-Type",
        "`-H 'Content-Type: application/json'`",
    ),
    row("-A", "oha", "Accept", "`-H 'Accept: text/html'`"),
    row(
        "-a",
        "oha, hey",
        "basic auth",
        "`-H 'Authorization: Basic …'`",
    ),
    row(
        "--output",
        "vegeta",
        "where the results go",
        "`-o/--out FILE` (`--json` for stdout)",
    ),
    row(
        "--latency-correction",
        "oha",
        "latency from the intended send time",
        "always on: drop the flag",
    ),
    row(
        "--latency",
        "wrk",
        "print the latency distribution",
        "always printed; `--hdr FILE` for the whole histogram",
    ),
    row(
        "--disable-keepalive",
        "oha, hey",
        "a new connection per request",
        "`--new-connection`",
    ),
    row(
        "--keepalive",
        "vegeta",
        "`-keepalive=false`: a new connection per request",
        "`--new-connection`",
    ),
    row(
        "--vus",
        "k6",
        "virtual users",
        "`--concurrency C` (closed loop)",
    ),
    row(
        "-u",
        "k6",
        "virtual users",
        "`--concurrency C` (closed loop)",
    ),
    row("--iterations", "k6", "requests in all", "`--requests N`"),
    row("-i", "k6", "requests in all", "`--requests N`"),
    row("--rps", "k6", "requests per second", "`--rate N`"),
    row(
        "-s",
        "wrk",
        "a Lua script",
        "no scripts: `--targets FILE` for varied requests",
    ),
    row(
        "--no-tui",
        "oha",
        "no live screen",
        "the progress line shows only on a terminal; `-q` hides it",
    ),
];

/// The rows for `flag` as typed (`-output=x`, `--output`, `-t`): its name
/// before any `=`, and a single-dash long name as vegeta's Go flags spell
/// it (`-output`) read as `--output`.
pub fn rows_for(typed: &str) -> Vec<&'static PeerFlag> {
    let name = typed.split('=').next().unwrap_or(typed);
    let long = match name.strip_prefix('-') {
        Some(rest) if rest.len() > 1 && !rest.starts_with('-') => format!("-{name}"),
        _ => name.to_string(),
    };
    PEER_FLAGS
        .iter()
        .filter(|p| p.flag == name || p.flag == long)
        .collect()
}

/// One sentence pointing from the peers' flag to iolab's, e.g. `oha's and
/// hey's -z (how long to send) is -d/--duration 30s`; `clashes` when the
/// flag was read as iolab's own (`-q 50`), so that is said first.
pub fn hint(rows: &[&PeerFlag], clashes: bool) -> Option<String> {
    let first = rows.first()?;
    let parts: Vec<String> = rows
        .iter()
        .map(|p| {
            format!(
                "{} {} ({}) is {}",
                possessive(p.tools),
                first.flag,
                p.means.replace('`', ""),
                p.iolab.replace('`', "")
            )
        })
        .collect();
    let mut s = parts.join("; ");
    if let Some((here, _)) = first.here.filter(|_| clashes) {
        s = format!("{here} in iolab; {s}");
    }
    Some(s)
}

/// `oha, hey` -> `oha's and hey's`.
fn possessive(tools: &str) -> String {
    let names: Vec<String> = tools.split(", ").map(|t| format!("{t}'s")).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => names.concat(),
    }
}

/// The table as docs/attack.md shows it ("Coming from another tool").
pub fn markdown() -> String {
    let mut s = String::from("| flag | tool | means there | in iolab |\n|---|---|---|---|\n");
    for p in PEER_FLAGS {
        let iolab = match p.here {
            Some((here, _)) => format!("{}; in iolab {here}", p.iolab),
            None => p.iolab.to_string(),
        };
        s += &format!("| `{}` | {} | {} | {iolab} |\n", p.flag, p.tools, p.means);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_dash_long_flag_reads_as_vegetas() {
        assert_eq!(
            rows_for("-output=x.bin")[0].iolab,
            "`-o/--out FILE` (`--json` for stdout)"
        );
        assert_eq!(rows_for("--output")[0].tools, "vegeta");
        assert_eq!(rows_for("-t").len(), 2);
        assert!(rows_for("-x").is_empty());
    }

    #[test]
    fn docs_attack_shows_the_table_as_generated() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/attack.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let table = markdown();
        assert!(
            doc.contains(&table),
            "docs/attack.md must carry peers::markdown() as it is:\n{table}"
        );
    }

    #[test]
    fn hints_name_every_tool_and_iolabs_flag() {
        let h = hint(&rows_for("-z"), false).unwrap();
        assert_eq!(
            h,
            "oha's and hey's -z (how long to send) is -d/--duration 30s"
        );
        let h = hint(&rows_for("-q"), true).unwrap();
        assert!(
            h.starts_with("-q is quiet (no progress line) in iolab; "),
            "{h}"
        );
        assert!(h.contains("--rate N"), "{h}");
    }
}
