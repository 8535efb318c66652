//! Held runs in shards, end to end with the real binary on 127.0.0.1:
//! `iolab attack ws://... --shard i/n` processes side by side against one
//! target, `iolab merge` of their documents (and refusals of what does
//! not merge), the file-limit refusal that says to shard, and `iolab
//! serve --reuse-port` (several target processes on one port).

mod common;

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use iolab_model::attack::AttackResult;
use iolab_model::ModelKind;
use iolab_servers::Running;

use common::held::{document, iolab, refused, server};

fn serve() -> Running {
    server(ModelKind::LoopAsync)
}

/// One absolute start for every shard of a plan, 2 s from now (a `+DUR`
/// is read on each process's clock, so its shards' records would differ).
fn start_at() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    (now + 2).to_string()
}

/// `iolab attack URL --connections N --shard i/n --start-at S ... -o DIR/shard-i.json`, started.
fn shard(
    url: &str,
    n: &str,
    (i, count): (u32, u32),
    start: &str,
    dir: &Path,
    extra: &[&str],
) -> Child {
    let out = dir.join(format!("shard-{i}.json"));
    let place = format!("{i}/{count}");
    Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["attack", url, "--connections", n, "--hold", "700ms"])
        .args(["--shard", &place, "--start-at", start, "--json", "-o"])
        .arg(&out)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("iolab runs")
}

/// Two processes each hold their shard of one WebSocket plan (and of an
/// SSE plan) side by side; `iolab merge` of the folder is the plan's
/// document: counts add, two processes, their CPU and peak RSS summed and
/// kept per shard, the message error (send lag p99) from both.
#[test]
fn r52_23_held_shards_as_processes_merge_into_the_plans_document() {
    let srv = serve();
    for (url, extra) in [
        (
            format!("ws://{}/ws", srv.addr),
            &["--message-rate", "10"][..],
        ),
        (format!("http://{}/events", srv.addr), &["--sse"][..]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let start = start_at();
        let kids: Vec<Child> = (1..=2)
            .map(|i| shard(&url, "7", (i, 2), &start, dir.path(), extra))
            .collect();
        let docs: Vec<AttackResult> = kids
            .into_iter()
            .map(|k| document(&k.wait_with_output().unwrap()))
            .collect();
        let held: Vec<u64> = docs
            .iter()
            .map(|d| d.connections.as_ref().unwrap().held)
            .collect();
        assert_eq!(held, [4, 3], "{url}");
        for d in &docs {
            assert!(d.generator.peak_rss_kib.is_some_and(|k| k > 0), "{url}");
            assert_eq!(d.shard.as_ref().unwrap().count, 2);
        }
        let merged = document(&iolab(&["merge", dir.path().to_str().unwrap(), "--json"]));
        let (c, m) = (merged.connections.unwrap(), merged.messages.unwrap());
        assert_eq!((c.attempted, c.established, c.held), (7, 7, 7), "{url}");
        let sum = |f: fn(&AttackResult) -> u64| docs.iter().map(f).sum::<u64>();
        assert_eq!(m.sent, sum(|d| d.messages.as_ref().unwrap().sent));
        assert_eq!(m.answered, sum(|d| d.messages.as_ref().unwrap().answered));
        assert_eq!(
            merged.generator.peak_rss_kib,
            Some(sum(|d| d.generator.peak_rss_kib.unwrap()))
        );
        assert_eq!(merged.generator.threads, 2);
        let rec = merged.merged.expect("a merge record");
        assert_eq!((rec.shards, rec.parts.len()), (2, 2));
        assert!(rec
            .parts
            .iter()
            .all(|p| p.peak_rss_kib.is_some() && p.cpu_s > 0.0));
        match extra[0] {
            "--sse" => assert!(m.send_lag_p99_ms.is_none(), "SSE sends nothing"),
            _ => assert!(m.send_lag_p99_ms.is_some() && m.send_lag_histogram.is_some()),
        }
    }
    srv.stop().unwrap();
}

/// A held document merged with a request document, and held shards of two
/// plans: one line each, exit 2.
#[test]
fn r52_24_merging_held_with_request_documents_or_other_plans_is_refused() {
    let srv = serve();
    let dir = tempfile::tempdir().unwrap();
    let ws = format!("ws://{}/ws", srv.addr);
    let start = start_at();
    let one = shard(&ws, "4", (1, 2), &start, dir.path(), &[]);
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let two = shard(&ws, "6", (2, 2), &start, &other, &[]);
    document(&one.wait_with_output().unwrap());
    document(&two.wait_with_output().unwrap());
    let request = dir.path().join("request.json");
    let http = format!("http://{}/", srv.addr);
    document(&iolab(&[
        "attack",
        &http,
        "--rate",
        "20",
        "-d",
        "200ms",
        "--json",
        "-o",
        request.to_str().unwrap(),
    ]));
    let held = dir.path().join("shard-1.json");
    let out = iolab(&["merge", held.to_str().unwrap(), request.to_str().unwrap()]);
    refused(&out, &["held-connection document", "request document"]);
    let out = iolab(&[
        "merge",
        held.to_str().unwrap(),
        other.join("shard-2.json").to_str().unwrap(),
    ]);
    refused(&out, &["different plans"]);
    srv.stop().unwrap();
}

/// A shard left with no connection, and a process asked for more
/// connections than it may open files (its hard limit lowered to 1,024
/// here): refused before anything opens, the second saying to shard.
#[test]
fn r52_25_a_held_shard_too_small_or_past_the_file_limit_is_refused() {
    let out = iolab(&[
        "attack",
        "ws://127.0.0.1:1/ws",
        "--connections",
        "1",
        "--hold",
        "1s",
        "--shard",
        "2/2",
    ]);
    refused(&out, &["leaves shard 2/2 none"]);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_iolab"));
    cmd.args([
        "attack",
        "ws://127.0.0.1:1/ws",
        "--connections",
        "3000",
        "--hold",
        "1s",
    ]);
    // SAFETY: setrlimit only, between fork and exec; lowering is always allowed.
    unsafe {
        cmd.pre_exec(|| {
            let r = libc::rlimit {
                rlim_cur: 1024,
                rlim_max: 1024,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &r) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    refused(&out, &["ulimit -n", "--shard 1/4"]);
}

/// `iolab serve --reuse-port`: two target processes on one port (the
/// kernel deals connections among them), which a held run reaches as one
/// URL; without the flag the second cannot listen (one line, exit 2).
#[test]
fn r52_26_two_serve_processes_share_one_port_with_reuse_port() {
    let spawn = |port: &str, reuse: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_iolab"));
        c.args(["serve", "--model", "loop-async", "--port", port]);
        if reuse {
            c.arg("--reuse-port");
        }
        c.stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let url = |child: &mut Child| {
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        line.trim().to_string()
    };
    let mut first = spawn("0", true);
    let base = url(&mut first);
    let port = base.rsplit(':').next().unwrap().to_string();
    let mut second = spawn(&port, true);
    assert_eq!(url(&mut second), base);
    let out = spawn(&port, false).wait_with_output().unwrap();
    refused(&out, &["cannot listen"]);
    let ws = format!("ws{}/ws", base.trim_start_matches("http"));
    let doc = document(&iolab(&[
        "attack",
        &ws,
        "--connections",
        "40",
        "--open-rate",
        "400",
        "--hold",
        "300ms",
        "--json",
    ]));
    assert_eq!(doc.connections.unwrap().held, 40);
    for mut p in [first, second] {
        // SAFETY: a signal to our own child.
        unsafe { libc::kill(p.id() as i32, libc::SIGTERM) };
        assert!(p.wait().unwrap().success());
    }
}
