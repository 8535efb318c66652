//! Text from outside (a server, a document, a flag) made fit for one line
//! of a message: issue 49 finding 12 found a reflection error, a document's
//! `target` and `--slo` text echoed raw, so an escape sequence cleared the
//! screen and a newline broke a one-line error in two.

/// Most characters of outside text kept in a message.
pub const MAX_PRINTED: usize = 200;

/// `s` with its control characters (escape, newline, bell...) shown
/// escaped, cut to [`MAX_PRINTED`] characters (then `...`).
pub fn printable(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars().take(MAX_PRINTED) {
        match c.is_control() {
            true => out.extend(c.escape_default()),
            false => out.push(c),
        }
    }
    if s.chars().nth(MAX_PRINTED).is_some() {
        out.push_str("...");
    }
    out
}

/// `s` with its control characters shown escaped, whole: for a field kept
/// (a document's `target`), where cutting would change what it names.
pub fn escape_controls(s: &str) -> String {
    match s.chars().any(char::is_control) {
        true => s
            .chars()
            .flat_map(|c| match c.is_control() {
                true => c.escape_default().collect::<Vec<_>>(),
                false => vec![c],
            })
            .collect(),
        false => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_long_text_cut() {
        assert_eq!(printable("a\x1b[2J\nb\x07"), "a\\u{1b}[2J\\nb\\u{7}");
        let long = "x".repeat(500);
        assert_eq!(printable(&long).len(), MAX_PRINTED + 3);
        assert_eq!(printable("ok"), "ok");
        assert_eq!(
            escape_controls("http://x/\x1b[2J\x07"),
            "http://x/\\u{1b}[2J\\u{7}"
        );
    }
}
