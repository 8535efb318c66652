//! Bad presets and names: one line naming file, line, field and fix.

use super::*;

/// `BASE` with one edit (`from` replaced by `to`), and what its error must
/// start with and contain.
const EDITS: &[(&str, &str, &str, &[&str])] = &[
    (
        "threads = 20",
        "thread = 20",
        "t.toml:13: field 'targets[0].thread': unknown field 'thread'",
        &[],
    ),
    (
        "threads = 20",
        "threads = \"twenty\"",
        "t.toml:11: invalid type: string \"twenty\", expected a whole number",
        &[],
    ),
    (
        "threads = 20",
        "threads = 0",
        "",
        &[":13: field 'targets[0].threads'", "out of range"],
    ),
    (
        "rate = 200",
        "rate = -5",
        "",
        &[":7: field 'load.rate'", "above zero"],
    ),
    (
        "\"sleep:100\"",
        "\"nap:3\"",
        "",
        &[":6: field 'load.steps'", "unknown step"],
    ),
    (
        "\"5s\"",
        "\"5\"",
        "",
        &[":8: field 'load.duration'", "missing unit"],
    ),
    (
        "\"pool\"",
        "\"fibers\"",
        "",
        &[":12: field 'targets.model'", "unknown variant"],
    ),
    (
        "rate = 200\n",
        "",
        "t.toml:5: field 'load.rate': an open loop needs `rate`",
        &[],
    ),
    (
        "rate = 200",
        "rate = 200\nconcurrency = 3",
        "t.toml:8: field 'load.concurrency'",
        &[],
    ),
    ("name = \"x\"\n", "", "", &["missing field `name`"]),
    (
        "description = \"d\"",
        "description = \"d\"\nscale = 2",
        "",
        &[":4: field 'scale'", "at most 1"],
    ),
];

#[test]
fn bad_presets_name_file_line_and_field() {
    for (from, to, starts, has) in EDITS {
        let e = err(&BASE.replace(from, to));
        assert!(
            e.starts_with(starts) && has.iter().all(|h| e.contains(h)),
            "{from} -> {to}: {e}"
        );
    }
    let e = err(&format!(
        "{BASE}\n[[targets]]\nmodel = \"pool\"\nthreads = 20\n"
    ));
    assert!(e.contains("both be named 'pool'"), "{e}");
    let e = err(&format!("{BASE}\n[[targets]]\nmodel = \"virtual\"\n"));
    assert!(e.starts_with("t.toml:16: field 'targets[1].model'"), "{e}");
    let e = err("name = \"x\"\ndescription = [\n");
    assert!(e.starts_with("t.toml:"), "{e}");
    assert!(!e.contains('\n'), "one line: {e}");
}

#[test]
fn bad_names_and_overrides() {
    let e = load_plan("no-such-preset", None).unwrap_err().0;
    assert!(e.contains("iolab presets"), "{e}");
    let e = load_plan("showdown", Some(0.0)).unwrap_err().0;
    assert!(e.starts_with("--scale:"), "{e}");
    let e = load_plan("/nonexistent/x.toml", None).unwrap_err().0;
    assert!(e.starts_with("/nonexistent/x.toml: cannot read"), "{e}");
}

#[test]
fn target_rate_needs_an_open_loop() {
    let e = err(r#"
name = "x"
description = "d"
[load]
steps = "sleep:1"
driver = "closed"
concurrency = 2
requests = 10
[[targets]]
model = "pool"
rate = 5
"#);
    assert!(e.contains("targets[0].rate"), "{e}");
}
