//! The GET of `verify --http2`: HTTP/2 with prior knowledge (h2c), framed by
//! the `h2` crate, under the same [`Limits`] as the HTTP/1.1 GET: a connect
//! timeout, one deadline for the whole exchange, a body cap and the cancel
//! flag. One connection and one stream per GET, as the HTTP/1.1 GET uses one
//! connection: a check never depends on the one before.

use std::io;
use std::time::Instant;

use super::{wire, Endpoint, HttpResponse, Limits};

/// `GET base+path` over h2c within `limits`.
pub(super) fn get(target: &Endpoint, path: &str, limits: &Limits) -> io::Result<HttpResponse> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let exchange = tokio::time::timeout(limits.deadline, exchange(target, path, limits));
        tokio::select! {
            r = exchange => r.unwrap_or_else(|_| Err(wire::name_timeout(
                io::ErrorKind::TimedOut.into(),
                "no complete answer",
                limits.deadline,
            ))),
            e = cancelled(limits) => Err(e),
        }
    })
}

/// Ends (with the "interrupted" error) once the cancel flag is set.
async fn cancelled(limits: &Limits) -> io::Error {
    loop {
        if let Err(e) = wire::check_cancel(limits.cancel.as_deref()) {
            return e;
        }
        tokio::time::sleep(wire::CANCEL_TICK).await;
    }
}

async fn exchange(target: &Endpoint, path: &str, limits: &Limits) -> io::Result<HttpResponse> {
    let connect = tokio::net::TcpStream::connect(target.addr);
    let tcp = tokio::time::timeout(limits.connect.min(limits.deadline), connect)
        .await
        .map_err(|_| {
            wire::name_timeout(
                io::ErrorKind::TimedOut.into(),
                "no connection",
                limits.connect,
            )
        })??;
    let _ = tcp.set_nodelay(true);
    let started = Instant::now();
    let (client, conn) = h2::client::handshake(tcp).await.map_err(|e| h2_error(&e))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let mut client = client.ready().await.map_err(|e| h2_error(&e))?;
    let request = http::Request::get(format!("http://{}{}{}", target.host, target.base, path))
        .header("user-agent", concat!("iolab/", env!("CARGO_PKG_VERSION")))
        .body(())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    let (answer, _) = client
        .send_request(request, true)
        .map_err(|e| h2_error(&e))?;
    let (head, mut body) = answer.await.map_err(|e| h2_error(&e))?.into_parts();
    let mut bytes = Vec::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.map_err(|e| h2_error(&e))?;
        let _ = body.flow_control().release_capacity(chunk.len());
        if bytes.len() + chunk.len() > limits.max_body {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("body over the cap of {} bytes", limits.max_body),
            ));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(HttpResponse {
        status: head.status.as_u16(),
        headers: head
            .headers
            .iter()
            .map(|(n, v)| {
                let value = String::from_utf8_lossy(v.as_bytes()).into_owned();
                (n.as_str().to_string(), value)
            })
            .collect(),
        body: String::from_utf8_lossy(&bytes).into_owned(),
        elapsed: started.elapsed(),
    })
}

/// An HTTP/2 failure as an I/O error that says so: a target answering
/// HTTP/1.1 to the h2c preface fails here, naming HTTP/2.
fn h2_error(e: &h2::Error) -> io::Error {
    let what = match e.reason() {
        Some(r) => format!("HTTP/2 {r:?}"),
        None => "HTTP/2".to_string(),
    };
    io::Error::other(format!(
        "{what}: {e} (does the target speak h2c, HTTP/2 with prior knowledge?)"
    ))
}
