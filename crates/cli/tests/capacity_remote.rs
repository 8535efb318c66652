//! Issue 50 finding 4 on real sockets: a remote service shaped like Spring
//! Boot (a Tomcat-like pool of 50 request threads behind a poller, a
//! HikariCP-like pool of 10 connections each held 50 ms, the actuator's
//! gauges at `/actuator/prometheus` counted from its own state), searched
//! with `--metrics` and the default series, no PID: the pool is named from
//! its series alone (capacity about 10 / 50 ms = 200/s), and the what-if
//! for a bigger pool is said in HikariCP's own knob.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::Duration;

const THREADS: i64 = 50;
const POOL: i64 = 10;
const HOLD: Duration = Duration::from_millis(50);

#[derive(Default)]
struct Gauges {
    busy: AtomicI64,
    active: AtomicI64,
    pending: AtomicI64,
}

impl Gauges {
    fn page(&self) -> String {
        let g =
            |n: &str, labels: &str, v: i64| format!("# TYPE {n} gauge\n{n}{{{labels}}} {v}.0\n");
        let tomcat = "name=\"http-nio-8080\"";
        let hikari = "pool=\"HikariPool-1\"";
        [
            g(
                "tomcat_threads_busy_threads",
                tomcat,
                self.busy.load(Ordering::SeqCst),
            ),
            g("tomcat_threads_config_max_threads", tomcat, THREADS),
            g(
                "hikaricp_connections_active",
                hikari,
                self.active.load(Ordering::SeqCst),
            ),
            g("hikaricp_connections_max", hikari, POOL),
            g(
                "hikaricp_connections_pending",
                hikari,
                self.pending.load(Ordering::SeqCst),
            ),
            g("jvm_threads_live_threads", "", THREADS + 11),
        ]
        .concat()
    }
}

/// The pool of connections: a count under a lock, waited on.
struct Pool {
    free: Mutex<i64>,
    freed: Condvar,
}

type Job = Sender<()>;

fn worker(jobs: Arc<Mutex<Receiver<Job>>>, pool: Arc<Pool>, g: Arc<Gauges>) {
    loop {
        let Ok(done) = jobs.lock().unwrap().recv() else {
            return;
        };
        g.busy.fetch_add(1, Ordering::SeqCst);
        g.pending.fetch_add(1, Ordering::SeqCst);
        let mut free = pool.free.lock().unwrap();
        while *free == 0 {
            free = pool.freed.wait(free).unwrap();
        }
        *free -= 1;
        drop(free);
        g.pending.fetch_sub(1, Ordering::SeqCst);
        g.active.fetch_add(1, Ordering::SeqCst);
        thread::sleep(HOLD);
        g.active.fetch_sub(1, Ordering::SeqCst);
        *pool.free.lock().unwrap() += 1;
        pool.freed.notify_one();
        g.busy.fetch_sub(1, Ordering::SeqCst);
        let _ = done.send(());
    }
}

/// One keep-alive connection: its requests handed to the workers in turn.
fn connection(s: TcpStream, jobs: Sender<Job>, g: Arc<Gauges>) {
    let mut w = s.try_clone().unwrap();
    let mut r = BufReader::new(s);
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
        loop {
            let mut h = String::new();
            if r.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            if h == "\r\n" {
                break;
            }
        }
        let body = if path == "/actuator/prometheus" {
            g.page()
        } else {
            let (tx, rx) = channel();
            if jobs.send(tx).is_err() || rx.recv().is_err() {
                return;
            }
            "ok".to_string()
        };
        let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
        if w.write_all(format!("{head}{body}").as_bytes()).is_err() {
            return;
        }
    }
}

fn serve() -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let g = Arc::new(Gauges::default());
    let pool = Arc::new(Pool {
        free: Mutex::new(POOL),
        freed: Condvar::new(),
    });
    let (tx, rx) = channel::<Job>();
    let rx = Arc::new(Mutex::new(rx));
    for _ in 0..THREADS {
        let (rx, pool, g) = (rx.clone(), pool.clone(), g.clone());
        thread::spawn(move || worker(rx, pool, g));
    }
    thread::spawn(move || {
        for s in l.incoming().flatten() {
            let (tx, g) = (tx.clone(), g.clone());
            thread::spawn(move || connection(s, tx, g));
        }
    });
    url
}

#[test]
fn r50_26_a_remote_spring_shaped_pool_is_named_from_its_series_alone() {
    let url = serve();
    let out_dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args([
            "capacity",
            &format!("{url}/orders"),
            "--metrics",
            &format!("{url}/actuator/prometheus"),
            "--slo",
            "p99<250ms,success>=99%",
            "--precision",
            "10%",
            "--start",
            "50",
            "--max-step",
            "3s",
            "--json",
            "--quiet",
            "--out",
            &out_dir.path().display().to_string(),
        ])
        .output()
        .unwrap();
    let doc = common::json_ok(&out);
    let s = &doc["searches"][0];
    let cap = s["capacity_rps"].as_f64().unwrap();
    assert!((cap - 200.0).abs() <= 0.15 * 200.0, "capacity {cap}");
    let b = &s["fit"]["binding"];
    assert_eq!(b["resource"], "pool", "{b}");
    assert_eq!(b["name"], "hikaricp", "{b}");
    assert_eq!(b["size"], 10.0, "{b}");
    let bigger = s["what_if"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| {
            w["change"]
                .as_str()
                .unwrap()
                .contains("spring.datasource.hikari.maximum-pool-size 10 -> 20")
        })
        .unwrap_or_else(|| panic!("{}", s["what_if"]));
    // 20 connections x 50 ms: 400/s, the 50 threads far above.
    let p = bigger["slo_capacity_rps"].as_f64().unwrap();
    assert!((p - 400.0).abs() <= 0.2 * 400.0, "{bigger}");
}
