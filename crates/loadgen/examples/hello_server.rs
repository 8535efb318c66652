//! A keep-alive "hello" HTTP server on 127.0.0.1 for `scripts/bench-loadgen`:
//! `/` answers 200 "hello", `/delay?ms=50` answers after 50 ms.
//!
//! Usage: `hello_server [PORT]` (default 0 = any free port); prints
//! `listening on 127.0.0.1:PORT` and serves until killed. One event loop, so
//! `taskset` can pin it to one CPU.

#[path = "../tests/common/server.rs"]
mod server;

fn main() {
    let port: u16 = std::env::args()
        .nth(1)
        .map_or(0, |p| p.parse().expect("PORT must be a number"));
    let listener = std::net::TcpListener::bind(("127.0.0.1", port)).expect("bind 127.0.0.1");
    listener.set_nonblocking(true).expect("nonblocking");
    println!(
        "listening on {}",
        listener.local_addr().expect("local addr")
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let stats = std::sync::Arc::new(server::Stats::default());
    rt.block_on(server::serve(listener, stats));
}
