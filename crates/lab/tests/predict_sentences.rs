//! Every sentence `iolab predict` says for every built-in preset, held to
//! its own numbers (issue 35): each `A / B = C`, each `N things each hold a
//! request for S, so capacity is C`, each `F1 x F2 = P`, each `rho X`, each
//! `X of Y ok (Z%)` and each Little's law product is recomputed from the
//! figures the sentence states. And the pool that caps is the one named:
//! `--pg-pool 10` under 200 threads, `--processes 9` of 200 threads.

use std::path::Path;
use std::time::Duration;

use iolab_model::experiment::{RunSpec, Work};
use iolab_model::Driver;

use iolab_lab::preset::{parse_plan, Overrides};
use iolab_lab::targets::predict_run;

/// `2,000` or `12.5` at the start of `s`, and the rest.
fn number(s: &str) -> Option<(f64, &str)> {
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == ',' || c == '.'))
        .unwrap_or(s.len());
    let text = s[..end].trim_end_matches(['.', ',']);
    let v = text.replace(',', "").parse().ok()?;
    Some((v, &s[text.len()..]))
}

/// The number that ends `s` (`... 1,800`).
fn last_number(s: &str) -> Option<f64> {
    let start = s
        .rfind(|c: char| !(c.is_ascii_digit() || c == ',' || c == '.'))
        .map_or(0, |i| i + 1);
    s[start..].replace(',', "").parse().ok()
}

/// `22.0 µs`, `100 ms` or `1.5 s` at the start of `s`, in seconds, and the rest.
fn seconds(s: &str) -> Option<(f64, &str)> {
    let (v, rest) = number(s)?;
    if let Some(r) = rest.strip_prefix(" µs") {
        Some((v / 1e6, r))
    } else if let Some(r) = rest.strip_prefix(" ms") {
        Some((v / 1e3, r))
    } else {
        rest.strip_prefix(" s").map(|r| (v, r))
    }
}

/// `a` and `b` agree within the rounding of the figures they come from.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 0.015 * a.abs().max(b.abs()) + 0.01
}

/// Recompute every figure of one sentence; the failures, described.
fn recompute(s: &str) -> Vec<String> {
    let mut bad = Vec::new();
    // A / S = C req/s.
    for (i, _) in s.match_indices(" / ") {
        let (Some(a), Some((b, rest))) = (last_number(&s[..i]), seconds(&s[i + 3..])) else {
            continue;
        };
        if let Some((c, _)) = rest.strip_prefix(" = ").and_then(number) {
            if !close(c, a / b) {
                bad.push(format!("{a} / {b} s is not {c}"));
            }
        }
    }
    // N holders each hold a request for S[ (sizing)], so capacity is C
    // (or ` (C req/s), but` when another resource binds).
    if let Some(i) = s.find(" each hold a request for ") {
        let n = s[..i]
            .split(' ')
            .filter_map(|w| w.replace(',', "").parse::<f64>().ok())
            .next_back();
        let after = &s[i + " each hold a request for ".len()..];
        if let (Some(n), Some((hold, rest))) = (n, seconds(after)) {
            let own = match rest.find(", so capacity is ") {
                Some(j) if !rest[..j].contains(", but ") => {
                    number(&rest[j + ", so capacity is ".len()..]).map(|(c, _)| c)
                }
                _ => rest
                    .find(" req/s), but ")
                    .and_then(|j| rest[..j].rfind('(').map(|k| &rest[k + 1..j]))
                    .and_then(|t| number(t).map(|(c, _)| c)),
            };
            if let Some(c) = own {
                if !close(c, n / hold) {
                    bad.push(format!("{n} held {hold} s each is not {c} req/s"));
                }
            }
        }
    }
    // F1 things x F2 things = P things.
    for (i, _) in s.match_indices(" x ") {
        let before: Vec<&str> = s[..i].split(' ').collect();
        let Some(a) = before
            .len()
            .checked_sub(2)
            .and_then(|k| before[k].replace(',', "").parse::<f64>().ok())
        else {
            continue;
        };
        let after = &s[i + 3..];
        let (Some((b, rest)), true) = (number(after), after.starts_with(char::is_numeric)) else {
            continue;
        };
        // A count of things, not a time (Little's law is checked below).
        let word = rest.trim_start().split(' ').next().unwrap_or("");
        if matches!(word, "ms" | "s" | "") {
            continue;
        }
        let rest = rest.trim_start_matches(|c: char| c.is_alphabetic() || c == ' ');
        if let Some((p, _)) = rest.strip_prefix("= ").and_then(number) {
            if !close(p, a * b) {
                bad.push(format!("{a} x {b} is not {p}"));
            }
        }
    }
    // Little's law: G req/s x L[ each] = F.
    if let Some(i) = s.find("Little's law: ") {
        let t = &s[i + "Little's law: ".len()..];
        if let Some((g, rest)) = number(t) {
            if let Some((l, rest)) = rest.strip_prefix(" req/s x ").and_then(seconds) {
                let rest = rest.strip_prefix(" each").unwrap_or(rest);
                if let Some((f, _)) = rest.strip_prefix(" = ").and_then(number) {
                    if !close(f, g * l) {
                        bad.push(format!("Little: {g} x {l} s is not {f}"));
                    }
                }
            }
        }
    }
    // at R req/s (rho X) / R req/s is rho X, against the capacity stated.
    let cap = s
        .find("capacity is ")
        .and_then(|i| {
            let t = &s[i + "capacity is ".len()..];
            // `capacity is A / S = C req/s`: C.
            match t.find(" = ") {
                Some(j) if j < 30 => number(&t[j + 3..]),
                _ => number(t),
            }
        })
        .map(|(c, _)| c);
    for pat in [" req/s (rho ", " req/s is rho "] {
        for (i, _) in s.match_indices(pat) {
            let (Some(r), Some(c)) = (last_number(&s[..i]), cap) else {
                continue;
            };
            if let Some((x, _)) = number(&s[i + pat.len()..]) {
                if (x - r / c).abs() > 0.006 + 0.01 * x {
                    bad.push(format!("rho {x} is not {r} / {c}"));
                }
            }
        }
    }
    // X of Y ok (Z%).
    if let Some(i) = s.find(" ok (") {
        let head = &s[..i];
        if let Some(j) = head.rfind(" of ") {
            let (x, y) = (last_number(&head[..j]), number(&head[j + 4..]));
            let z = number(&s[i + 5..]);
            if let (Some(x), Some((y, _)), Some((z, _))) = (x, y, z) {
                if y > 0.0 && (z - x / y * 100.0).abs() > 0.51 {
                    bad.push(format!("{x} of {y} is not {z}%"));
                }
            }
        }
    }
    bad
}

#[test]
fn every_built_in_presets_predictions_do_their_arithmetic() {
    let mut checked = 0;
    for info in iolab_lab::preset::list(Path::new("/nonexistent")) {
        let plan = info.plan.unwrap_or_else(|e| panic!("{}: {e}", info.name));
        for spec in &plan.runs {
            let Some(p) = predict_run(&short(spec), 2) else {
                continue;
            };
            let bad = recompute(&p.explanation);
            assert!(
                bad.is_empty(),
                "{}/{}: {bad:?} in: {}",
                info.name,
                spec.name,
                p.explanation
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked} sentences");
}

/// `spec` cut to CI size: at most 3 s a phase and 5,000 requests a closed
/// loop (the arithmetic of a sentence does not depend on its length).
fn short(spec: &RunSpec) -> RunSpec {
    let mut s = spec.clone();
    if let Work::Http(w) = &mut s.work {
        match &mut w.driver {
            Driver::Open { phases, .. } => {
                for p in phases {
                    p.duration = p.duration.min(Duration::from_secs(3));
                }
            }
            Driver::Closed {
                requests, duration, ..
            } => {
                *requests = Some(requests.unwrap_or(5_000).min(5_000));
                *duration = duration.map(|d| d.min(Duration::from_secs(3)));
            }
        }
    }
    s
}

fn sentence(target: &str) -> String {
    let text = format!(
        "name = \"t\"\ndescription = \"t\"\n[load]\nsteps = \"pg:100\"\nrate = 50\nduration = \"2s\"\ntimeout = \"1s\"\n[[targets]]\n{target}\n"
    );
    let mut plan = parse_plan(&text, "t.toml", Overrides::default()).unwrap();
    let p = predict_run(&plan.runs.remove(0), 2).unwrap();
    let bad = recompute(&p.explanation);
    assert!(bad.is_empty(), "{bad:?}: {}", p.explanation);
    p.explanation
}

#[test]
fn pg_pool_10_is_named_as_the_cap_under_200_threads() {
    // Issue 35: "200 pool threads each hold a request for 100 ms, so
    // capacity is 500 req/s" with --pg-pool 10, the pool never named.
    let s = sentence("model = \"pool\"\nthreads = 200\npg_pool = 10");
    assert!(
        s.starts_with("200 pool threads each hold a request for 100 ms"),
        "{s}"
    );
    assert!(
        s.contains(
            "(2,000 req/s), but 10 PostgreSQL connections (iolab serve --pg-pool 10, as set)"
        ),
        "{s}"
    );
    assert!(s.contains("so capacity is 10 / 100 ms = 100 req/s"), "{s}");
    // Virtual threads hold no thread; the pool still caps, and is named.
    let s = sentence("model = \"loop-async\"\npg_pool = 10");
    assert!(s.contains("but 10 PostgreSQL connections"), "{s}");
    assert!(s.contains("10 / 100 ms = 100 req/s"), "{s}");
}

#[test]
fn processes_9_say_9_x_threads() {
    // Issue 35: --processes 9 turned the pool into "1,800 pool threads" silently.
    let s = sentence("model = \"pool\"\nthreads = 200\nprocesses = 9");
    assert!(
        s.contains("200 threads x 9 processes = 1,800 pool threads each hold a request"),
        "{s}"
    );
}

#[test]
fn the_recomputation_catches_wrong_arithmetic() {
    assert!(recompute("so capacity is 10 / 100 ms = 100 req/s").is_empty());
    assert_eq!(
        recompute("so capacity is 200 / 100 ms = 500 req/s").len(),
        1
    );
    assert_eq!(
        recompute("200 pool threads each hold a request for 100 ms, so capacity is 500 req/s")
            .len(),
        1
    );
    assert_eq!(
        recompute("200 threads x 9 processes = 1,000 pool threads").len(),
        1
    );
    assert_eq!(recompute("12 of 800 ok (5%), p50").len(), 1);
    assert_eq!(
        recompute("capacity is 200 req/s; at 400 req/s (rho 3.00) the queue").len(),
        1
    );
    assert_eq!(
        recompute(". Little's law: 48.0 req/s x 100 ms = 9.60 in flight.").len(),
        1
    );
}
