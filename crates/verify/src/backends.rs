//! Did the target really call its backends? For each configured backend,
//! send [`BACKEND_REQUESTS`] requests of one step each (`pg:10`,
//! `mc:KEY`, `http:10`) and compare three numbers: the answers (all 200),
//! the target's own `iolab_backend_calls_total{kind=...}` (moved by exactly
//! N) and the backend's own counter (TechEmpower's `pg_stat_statements`
//! check).
//!
//! Backends are often shared (parallel tests, a user's memcached), and
//! other traffic moves their counters too, so the backend's count is judged
//! as follows:
//! - memcached: exact. verify stores a value under a key of its own
//!   (`iolab-verify-PID-N:v`), turns on memcached's per-prefix statistics
//!   (`stats detail on`, left on: it is a global switch others may use) and
//!   requires exactly N hits for that prefix.
//! - PostgreSQL: `pg_stat_statements` normalises constants, so every
//!   `SELECT pg_sleep($1)` is one entry whatever the duration; there is no
//!   way to tell our calls from another client's. The count must move by at
//!   least N (exactly N on an idle server, as the detail shows).
//! - delay service: one global hit counter; at least N, as for PostgreSQL.
//!
//! A target that answers without calling a backend fails unless other
//! traffic happens to make up the difference on a shared PostgreSQL or
//! delay service; memcached catches it always.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use iolab_backends::Addresses;
use iolab_model::steps::BackendKind;
use iolab_model::verify::Check;
use serde_json::Value;

use crate::client::Target;
use crate::vectors::short_body;
use crate::{fail, pass, Budget, VerifyError, VerifyOptions};

/// Requests sent per backend.
pub const BACKEND_REQUESTS: u64 = 5;

/// Milliseconds of the `pg` and `http` steps verify sends.
const STEP_MS: u32 = 10;

/// Check every backend in `backends` against the target at `base_url`. The
/// target must be idle and configured with the same backends.
pub fn verify_backends(
    base_url: &str,
    backends: &Addresses,
    opts: &VerifyOptions,
) -> Result<Vec<Check>, VerifyError> {
    let target = Target::parse(base_url)?;
    let budget = Budget::start(opts);
    let mut checks = Vec::new();
    for (kind, address) in backends.iter() {
        let counted: Result<Box<dyn Counted>, String> = match kind {
            BackendKind::Sleep => continue,
            BackendKind::Pg => Ok(Box::new(Pg(address.to_string()))),
            BackendKind::Http => Ok(Box::new(Http(address.to_string()))),
            BackendKind::Mc => Mc::prepare(address).map(|m| Box::new(m) as Box<dyn Counted>),
        };
        match counted {
            Ok(c) => checks.extend(one(&target, &budget, c.as_ref())),
            Err(e) => checks.push(fail(&format!("backend-{kind}-counted"), e)),
        }
    }
    Ok(checks)
}

/// One backend as verify sees it: the step to send and its counter.
trait Counted {
    fn kind(&self) -> BackendKind;
    /// The `steps=` value.
    fn steps(&self) -> String;
    /// The backend's counter for what verify sends.
    fn count(&self) -> Result<u64, String>;
    /// True when other traffic cannot move [`Counted::count`].
    fn exact(&self) -> bool;
    /// What the counter is, for messages.
    fn what(&self) -> &'static str;
}

struct Pg(String);

impl Counted for Pg {
    fn kind(&self) -> BackendKind {
        BackendKind::Pg
    }
    fn steps(&self) -> String {
        format!("pg:{STEP_MS}")
    }
    fn count(&self) -> Result<u64, String> {
        iolab_backends::pg::sleep_calls(&self.0)
    }
    fn exact(&self) -> bool {
        false
    }
    fn what(&self) -> &'static str {
        "PostgreSQL pg_stat_statements pg_sleep calls"
    }
}

struct Http(String);

impl Counted for Http {
    fn kind(&self) -> BackendKind {
        BackendKind::Http
    }
    fn steps(&self) -> String {
        format!("http:{STEP_MS}")
    }
    fn count(&self) -> Result<u64, String> {
        iolab_backends::http::delay_hits(&self.0)
    }
    fn exact(&self) -> bool {
        false
    }
    fn what(&self) -> &'static str {
        "delay service hits"
    }
}

/// memcached, counted per key prefix (`stats detail`), or by the global
/// `get_hits` when the server has no detail statistics.
struct Mc {
    addr: String,
    key: String,
    detail: bool,
}

impl Mc {
    /// Store a key of our own and turn on per-prefix statistics.
    fn prepare(addr: &str) -> Result<Mc, String> {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let prefix = format!(
            "iolab-verify-{}-{nanos}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let detail = command(addr, "stats detail on", "OK").is_ok();
        let key = format!("{prefix}:v");
        iolab_backends::mc::set(addr, &key, b"iolab verify")
            .map_err(|e| format!("cannot store '{key}' in memcached at {addr}: {e}"))?;
        Ok(Mc {
            addr: addr.to_string(),
            key,
            detail,
        })
    }

    fn prefix(&self) -> &str {
        self.key.split(':').next().unwrap_or(&self.key)
    }
}

impl Counted for Mc {
    fn kind(&self) -> BackendKind {
        BackendKind::Mc
    }
    fn steps(&self) -> String {
        format!("mc:{}", self.key)
    }
    fn count(&self) -> Result<u64, String> {
        if self.detail {
            prefix_hits(&self.addr, self.prefix())
        } else {
            iolab_backends::counts::mc_get_hits(&self.addr)
        }
    }
    fn exact(&self) -> bool {
        self.detail
    }
    fn what(&self) -> &'static str {
        if self.detail {
            "memcached hits of verify's own key"
        } else {
            "memcached get_hits"
        }
    }
}

/// Send the requests for one backend and judge the three numbers.
fn one(target: &Target, budget: &Budget, b: &dyn Counted) -> Vec<Check> {
    let kind = b.kind();
    let name = |what: &str| format!("backend-{kind}-{what}");
    let n = BACKEND_REQUESTS;
    let series = format!("iolab_backend_calls_total{{kind=\"{kind}\"}}");
    let calls = |t: &Target| -> Result<f64, String> {
        let m = crate::metrics(t, budget)?;
        m.get(&series)
            .copied()
            .ok_or_else(|| format!("/metrics has no {series}"))
    };
    let backend_before = b.count();
    let target_before = calls(target);

    let path = format!("/work?steps={}", b.steps());
    let mut answered = 0u64;
    let mut first_bad = None;
    for _ in 0..n {
        match budget.get(target, &path) {
            Ok(r) => {
                let ok = serde_json::from_str::<Value>(&r.body)
                    .ok()
                    .and_then(|j| j.get("ok").and_then(Value::as_bool));
                if r.status == 200 && ok == Some(true) {
                    answered += 1;
                } else if first_bad.is_none() {
                    first_bad = Some(format!("{} {}", r.status, short_body(&r.body)));
                }
            }
            Err(e) => {
                first_bad.get_or_insert(e);
            }
        }
    }
    // A backend may book a call a moment after its answer left.
    std::thread::sleep(Duration::from_millis(100));
    let backend_after = b.count();
    let target_after = calls(target);

    let mut checks = Vec::new();
    checks.push(match &first_bad {
        None => pass(
            &name("answers"),
            format!("{n} x GET {path}: all 200 with ok:true"),
        ),
        Some(bad) => fail(
            &name("answers"),
            format!("{answered} of {n} x GET {path} answered 200 ok; first other answer: {bad}"),
        ),
    });
    checks.push(match (&target_before, &target_after) {
        (Ok(a), Ok(z)) if z - a == n as f64 => pass(
            &name("metrics"),
            format!("the target's {series} moved by {n}"),
        ),
        (Ok(a), Ok(z)) => fail(
            &name("metrics"),
            format!("the target's {series} moved by {}, but {n} requests with one {kind} step were sent", z - a),
        ),
        (Err(e), _) | (_, Err(e)) => fail(&name("metrics"), e.clone()),
    });
    checks.push(match (&backend_before, &backend_after) {
        (Ok(a), Ok(z)) => {
            let moved = z.saturating_sub(*a);
            let want = answered;
            let good = if b.exact() {
                moved == want
            } else {
                moved >= want
            };
            let rule = if b.exact() { "exactly" } else { "at least" };
            let detail = format!(
                "{} moved by {moved} for {want} answers ok (needs {rule} {want}{})",
                b.what(),
                if b.exact() {
                    ""
                } else {
                    "; more means other traffic on a shared backend"
                }
            );
            if good && want > 0 {
                pass(&name("counted"), detail)
            } else if want == 0 {
                fail(
                    &name("counted"),
                    format!("no request answered ok, nothing to count ({detail})"),
                )
            } else {
                fail(
                    &name("counted"),
                    format!("the backend did less work than the target claims: {detail}"),
                )
            }
        }
        (Err(e), _) | (_, Err(e)) => fail(
            &name("counted"),
            format!("cannot read the backend's counter: {e}"),
        ),
    });
    checks
}

/// Send one memcached command and expect a one-line answer.
fn command(addr: &str, cmd: &str, expect: &str) -> Result<(), String> {
    let mut r = connect(addr)?;
    r.get_mut()
        .write_all(format!("{cmd}\r\n").as_bytes())
        .map_err(|e| e.to_string())?;
    let mut line = String::new();
    r.read_line(&mut line).map_err(|e| e.to_string())?;
    if line.trim_end() == expect {
        Ok(())
    } else {
        Err(format!(
            "memcached answered '{}' to '{cmd}'",
            line.trim_end()
        ))
    }
}

fn connect(addr: &str) -> Result<BufReader<TcpStream>, String> {
    let s = TcpStream::connect(addr)
        .map_err(|e| format!("cannot connect to memcached at {addr}: {e}"))?;
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    Ok(BufReader::new(s))
}

/// `hit` of `PREFIX p get G hit H set S del D` in `stats detail dump` (0
/// when the prefix has not been seen).
fn prefix_hits(addr: &str, prefix: &str) -> Result<u64, String> {
    let mut r = connect(addr)?;
    r.get_mut()
        .write_all(b"stats detail dump\r\n")
        .map_err(|e| e.to_string())?;
    let mut hits = 0;
    for _ in 0..1_000_000 {
        let mut line = String::new();
        if r.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
            return Err("memcached closed the connection during 'stats detail dump'".into());
        }
        let line = line.trim_end();
        if line == "END" {
            return Ok(hits);
        }
        if let Some(h) = parse_detail(line, prefix) {
            hits = h;
        }
    }
    Err("'stats detail dump' did not end".into())
}

fn parse_detail(line: &str, prefix: &str) -> Option<u64> {
    let mut w = line.split_whitespace();
    if w.next()? != "PREFIX" || w.next()? != prefix {
        return None;
    }
    let rest: Vec<&str> = w.collect();
    rest.chunks(2)
        .find(|kv| kv.first() == Some(&"hit"))
        .and_then(|kv| kv.get(1)?.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detail_lines_give_hits_of_our_prefix_only() {
        let l = "PREFIX iolab-verify-1-2-0 get 5 hit 5 set 1 del 0";
        assert_eq!(parse_detail(l, "iolab-verify-1-2-0"), Some(5));
        assert_eq!(parse_detail(l, "other"), None);
        assert_eq!(
            parse_detail("PREFIX x get 7 hit 3 set 0 del 0", "x"),
            Some(3)
        );
    }
}
