//! A keep-alive HTTP/1.1 server that reads each request's body and answers
//! `200 ok`, over plain TCP or TLS (a certificate made now by rcgen), for
//! `scripts/bench-capacity`'s cost of headers, bodies and TLS.
//!
//! Usage: `echo_server [PORT] [--tls]`; prints `listening on 127.0.0.1:PORT`
//! and serves until killed. One event loop, so `taskset` can pin it.

#[path = "../tests/common/echo.rs"]
mod echo;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let tls = args.iter().any(|a| a == "--tls");
    let port: u16 = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map_or(0, |p| p.parse().expect("PORT must be a number"));
    let server = echo::spawn_on(port, tls, false);
    println!("listening on {}", server.addr);
    loop {
        std::thread::park();
    }
}
