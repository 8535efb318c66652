//! A plain tokio-tungstenite WebSocket client, the yardstick of
//! `scripts/bench-held`: it opens N connections at a rate, sends each one
//! message every 1/R seconds for the hold and waits for its echo, the way a
//! team's own test client would (one task per connection, send then read,
//! no schedule of intended send times, no accounting beyond counts). One
//! event loop on one thread, as iolab's held generator, so the two are
//! compared thread for thread. Bounded: N <= 50,000, the hold <= 1 h, every
//! wait for an echo or a handshake by 5 s.
//!
//! Usage: `ws_plain_client URL N OPEN_RATE HOLD_S MESSAGE_RATE [SOURCES]`
//! (SOURCES: addresses to connect from in turn, e.g. `127.0.0.1,127.0.0.2`,
//! as iolab's `--source-addrs`, each bound with port 0); prints one JSON
//! line: connections established, messages echoed, errors, seconds.

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use std::net::{IpAddr, SocketAddr};

use tokio::net::{TcpSocket, TcpStream};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;

/// Longest wait for a handshake or an echo.
const WAIT: Duration = Duration::from_secs(5);

/// What one connection came to: established, echoed, failed.
type Counts = (u64, u64, u64);

/// Connect to `addr`, from `source` when one is given.
async fn connect(addr: SocketAddr, source: Option<IpAddr>) -> std::io::Result<TcpStream> {
    let Some(ip) = source else {
        return TcpStream::connect(addr).await;
    };
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(ip, 0))?;
    socket.connect(addr).await
}

async fn hold(
    url: String,
    addr: SocketAddr,
    source: Option<IpAddr>,
    hold: Duration,
    gap: Duration,
) -> Counts {
    let opened = tokio::time::timeout(WAIT, async {
        let tcp = connect(addr, source).await.ok()?;
        let _ = tcp.set_nodelay(true);
        let config = WebSocketConfig::default().read_buffer_size(16 << 10);
        tokio_tungstenite::client_async_with_config(url.as_str(), tcp, Some(config))
            .await
            .ok()
    })
    .await;
    let Ok(Some((mut ws, _))) = opened else {
        return (0, 0, 1);
    };
    let end = Instant::now() + hold;
    let mut tick = tokio::time::interval(gap);
    let (mut echoed, mut seq) = (0u64, 0u64);
    while Instant::now() < end {
        tick.tick().await;
        seq += 1;
        if ws
            .send(Message::text(format!("{seq} hello")))
            .await
            .is_err()
        {
            return (1, echoed, 1);
        }
        match tokio::time::timeout(WAIT, ws.next()).await {
            Ok(Some(Ok(Message::Text(_)))) => echoed += 1,
            _ => return (1, echoed, 1),
        }
    }
    let _ = ws.close(None).await;
    (1, echoed, 0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !(5..=6).contains(&args.len()) {
        eprintln!("usage: ws_plain_client URL N OPEN_RATE HOLD_S MESSAGE_RATE [SOURCES]");
        std::process::exit(2);
    }
    let url = args[0].clone();
    let num = |i: usize| -> f64 {
        args[i].parse().unwrap_or_else(|_| {
            eprintln!("ws_plain_client: '{}' is not a number", args[i]);
            std::process::exit(2)
        })
    };
    let (n, open_rate, hold_s, rate) = (num(1) as u64, num(2), num(3), num(4));
    if !(1..=50_000).contains(&n)
        || open_rate <= 0.0
        || !(0.0..=3600.0).contains(&hold_s)
        || rate <= 0.0
    {
        eprintln!("ws_plain_client: N 1..50000, OPEN_RATE > 0, HOLD_S 0..3600, MESSAGE_RATE > 0");
        std::process::exit(2);
    }
    let addr: SocketAddr = match url
        .trim_start_matches("ws://")
        .split('/')
        .next()
        .map(str::parse)
    {
        Some(Ok(a)) => a,
        _ => {
            eprintln!("ws_plain_client: give a ws://IP:PORT/ URL");
            std::process::exit(2)
        }
    };
    let sources: Vec<IpAddr> = match args.get(5).map(|l| l.split(',').map(str::parse).collect()) {
        None => Vec::new(),
        Some(Ok(v)) => v,
        Some(Err(_)) => {
            eprintln!("ws_plain_client: SOURCES is a comma-separated list of addresses");
            std::process::exit(2)
        }
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("an event loop");
    let started = Instant::now();
    let (est, echoed, failed) = rt.block_on(async {
        let local = tokio::task::LocalSet::new();
        local
            .run_until(async {
                let mut tasks = Vec::with_capacity(n as usize);
                for i in 0..n {
                    let at = started + Duration::from_secs_f64(i as f64 / open_rate);
                    tokio::time::sleep_until(at.into()).await;
                    let source = (!sources.is_empty()).then(|| sources[i as usize % sources.len()]);
                    tasks.push(tokio::task::spawn_local(hold(
                        url.clone(),
                        addr,
                        source,
                        Duration::from_secs_f64(hold_s),
                        Duration::from_secs_f64(1.0 / rate),
                    )));
                }
                let mut sum = (0, 0, 0);
                for t in tasks {
                    let (e, m, f) = t.await.unwrap_or((0, 0, 1));
                    sum = (sum.0 + e, sum.1 + m, sum.2 + f);
                }
                sum
            })
            .await
    });
    println!(
        "{{\"connections\":{n},\"established\":{est},\"echoed\":{echoed},\"failed\":{failed},\"elapsed_s\":{:.3}}}",
        started.elapsed().as_secs_f64()
    );
}
