//! `GET /ws` and `GET /events` on the event-loop models: the same contract
//! as [`crate::held`] (echo after the URL's steps; an event every interval
//! with `id:` and `sent_unix_us`), served by the connection's task, so a
//! held connection costs an event loop a task and a socket, not a thread.
//! Framing by tokio-tungstenite; both end on shutdown, the client's close,
//! or [`IDLE`](crate::held::IDLE) without a frame.

use std::future::Future;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::{SinkExt, StreamExt};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::WebSocketStream;

use crate::ctx::Ctx;
use crate::held::{Held, IDLE, MAX_FRAME, READ_BUFFER};
use crate::http1::Request;
use crate::routes::Reply;

/// Serve a held route on this task until it ends; `answer` runs a `/work`
/// target as the model runs requests (for `/ws?steps=...`).
pub async fn serve<F, Fut>(ctx: &Ctx, stream: TcpStream, req: &Request, held: Held, answer: F)
where
    F: Fn(String, String) -> Fut,
    Fut: Future<Output = Reply>,
{
    match held {
        Held::Ws { work } => websocket(ctx, stream, req, work, answer).await,
        Held::Events { every } => events(ctx, stream, every).await,
    }
}

async fn websocket<F, Fut>(
    ctx: &Ctx,
    mut stream: TcpStream,
    req: &Request,
    work: Option<String>,
    answer: F,
) where
    F: Fn(String, String) -> Fut,
    Fut: Future<Output = Reply>,
{
    let Some(key) = &req.websocket_key else {
        let head = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        let _ = stream.write_all(head.as_bytes()).await;
        return;
    };
    let head = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {}\r\n\r\n",
        derive_accept_key(key.as_bytes())
    );
    if stream.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    // tungstenite's default read buffer is 128 KiB a connection, allocated
    // up front: 128 MB for 1,000 held connections, which would be charged
    // to the model (or the generator) rather than to holding them.
    let config = WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER)
        .max_message_size(Some(MAX_FRAME))
        .max_frame_size(Some(MAX_FRAME));
    let mut ws = WebSocketStream::from_raw_socket(stream, Role::Server, Some(config)).await;
    loop {
        let msg = tokio::select! {
            biased;
            _ = ctx.shutdown.wait() => return close(&mut ws, CloseCode::Away, "server going away").await,
            m = tokio::time::timeout(IDLE, ws.next()) => m,
        };
        let msg = match msg {
            Err(_) => return close(&mut ws, CloseCode::Away, "idle").await,
            Ok(None) | Ok(Some(Err(_))) => return,
            Ok(Some(Ok(m))) => m,
        };
        if !(msg.is_text() || msg.is_binary()) {
            continue;
        }
        if let Some(target) = &work {
            if answer("GET".into(), target.clone()).await.status != 200 {
                return close(&mut ws, CloseCode::Error, "the message's steps failed").await;
            }
        }
        if ws.send(msg).await.is_err() {
            return;
        }
    }
}

async fn close(ws: &mut WebSocketStream<TcpStream>, code: CloseCode, why: &str) {
    let frame = CloseFrame {
        code,
        reason: why.into(),
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), ws.close(Some(frame))).await;
}

async fn events(ctx: &Ctx, mut stream: TcpStream, every: Duration) {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n";
    if stream.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    for seq in 1u64.. {
        tokio::select! {
            biased;
            _ = ctx.shutdown.wait() => return,
            _ = tick.tick() => {}
        }
        let stamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros());
        let event = format!("id: {seq}\ndata: {{\"seq\":{seq},\"sent_unix_us\":{stamp}}}\n\n");
        if stream.write_all(event.as_bytes()).await.is_err() {
            return;
        }
    }
}
