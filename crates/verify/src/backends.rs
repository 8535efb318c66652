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
//!
//! Here: each backend's step and counter ([`Counted`]); sending and judging
//! the three numbers is in `checks`.

mod checks;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use iolab_backends::Addresses;
use iolab_model::steps::BackendKind;
use iolab_model::verify::Check;

use crate::client::Endpoint;
use crate::fault::CounterFault;
use crate::{fail, Budget, VerifyError, VerifyOptions};

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
    let target = Endpoint::parse(base_url)?;
    let budget = Budget::start(opts);
    let mut checks = Vec::new();
    for (kind, address) in backends.iter() {
        let Some(counter) = kind.def().counter else {
            continue;
        };
        // memcached is counted exactly (a key of verify's own); a timed
        // backend by its one shared counter.
        let counted: Result<Box<dyn Counted>, CounterFault> = if kind == BackendKind::Mc {
            Mc::prepare(address).map(|m| Box::new(m) as Box<dyn Counted>)
        } else if kind.is_timed() {
            Ok(Box::new(Shared {
                kind,
                addr: address.to_string(),
                what: counter.what,
            }))
        } else {
            Err(CounterFault::NoStep(kind))
        };
        match counted {
            Ok(c) => checks.extend(checks::one(&target, &budget, c.as_ref())),
            Err(e) => checks.push(fail(&check_name(kind, "counted"), e.to_string())),
        }
    }
    Ok(checks)
}

/// `backend-pg-answers`: the name of one of a backend's three checks.
fn check_name(kind: BackendKind, what: &str) -> String {
    format!("backend-{kind}-{what}")
}

/// One backend as verify sees it: the step to send and its counter.
trait Counted {
    fn kind(&self) -> BackendKind;
    /// The `steps=` value.
    fn steps(&self) -> String;
    /// The backend's counter for what verify sends.
    fn count(&self) -> Result<u64, CounterFault>;
    /// True when other traffic cannot move [`Counted::count`].
    fn exact(&self) -> bool;
    /// What the counter is, for messages.
    fn what(&self) -> &'static str;
}

/// A backend with one global counter that every client moves (PostgreSQL's
/// `pg_stat_statements`, the delay service's hits): a timed step of
/// [`STEP_MS`], judged "at least N".
struct Shared {
    kind: BackendKind,
    addr: String,
    what: &'static str,
}

impl Counted for Shared {
    fn kind(&self) -> BackendKind {
        self.kind
    }
    fn steps(&self) -> String {
        format!("{}:{STEP_MS}", self.kind)
    }
    fn count(&self) -> Result<u64, CounterFault> {
        Ok(iolab_backends::backend(self.kind).count(&self.addr)?)
    }
    fn exact(&self) -> bool {
        false
    }
    fn what(&self) -> &'static str {
        self.what
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
    fn prepare(addr: &str) -> Result<Mc, CounterFault> {
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
        iolab_backends::mc::set(addr, &key, b"iolab verify").map_err(|why| {
            CounterFault::Store {
                key: key.clone(),
                addr: addr.to_string(),
                why,
            }
        })?;
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
    fn count(&self) -> Result<u64, CounterFault> {
        if self.detail {
            prefix_hits(&self.addr, self.prefix())
        } else {
            Ok(iolab_backends::mc::mc_get_hits(&self.addr)?)
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

/// Send one memcached command and expect a one-line answer.
fn command(addr: &str, cmd: &str, expect: &str) -> Result<(), CounterFault> {
    let mut r = connect(addr)?;
    r.get_mut().write_all(format!("{cmd}\r\n").as_bytes())?;
    let mut line = String::new();
    r.read_line(&mut line)?;
    if line.trim_end() == expect {
        Ok(())
    } else {
        Err(CounterFault::Answer {
            cmd: cmd.to_string(),
            line: line.trim_end().to_string(),
        })
    }
}

fn connect(addr: &str) -> Result<BufReader<TcpStream>, CounterFault> {
    let s = TcpStream::connect(addr).map_err(|why| CounterFault::Connect {
        addr: addr.to_string(),
        why,
    })?;
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    Ok(BufReader::new(s))
}

/// `hit` of `PREFIX p get G hit H set S del D` in `stats detail dump` (0
/// when the prefix has not been seen).
fn prefix_hits(addr: &str, prefix: &str) -> Result<u64, CounterFault> {
    let mut r = connect(addr)?;
    r.get_mut().write_all(b"stats detail dump\r\n")?;
    let mut hits = 0;
    for _ in 0..1_000_000 {
        let mut line = String::new();
        if r.read_line(&mut line)? == 0 {
            return Err(CounterFault::DumpClosed);
        }
        let line = line.trim_end();
        if line == "END" {
            return Ok(hits);
        }
        if let Some(h) = parse_detail(line, prefix) {
            hits = h;
        }
    }
    Err(CounterFault::DumpEndless)
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
