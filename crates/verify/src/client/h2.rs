//! The GET of `verify --http2`: HTTP/2 with prior knowledge (h2c), framed by
//! the `h2` crate, under the same [`Limits`] as the HTTP/1.1 GET: a connect
//! timeout, one deadline for the whole exchange, a body cap and the cancel
//! flag. One connection and one stream per GET, as the HTTP/1.1 GET uses one
//! connection: a check never depends on the one before. The answer is read
//! by the generator's HTTP/2 rules (at most 32 interim answers, 256 headers,
//! a 1 MiB head), and the server's SETTINGS watched as the generator's are,
//! so a fault names what the server did (issue 49, findings 3 and 4).

use std::io;
use std::sync::Arc;
use std::time::Instant;

use iolab_loadgen::http2::{final_head, Bytes, Failed, Seen, Watched};
use iolab_loadgen::response;

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
    let (tcp, seen) = Watched::new(tcp);
    let broke = |e: h2::Error| h2_error(&Failed::H2(e), &seen);
    let (client, conn) = h2::client::Builder::new()
        .max_header_list_size(response::MAX_HEAD as u32)
        .handshake::<_, Bytes>(tcp)
        .await
        .map_err(broke)?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let mut client = client.ready().await.map_err(broke)?;
    let request = http::Request::get(format!("http://{}{}{}", target.host, target.base, path))
        .header("user-agent", concat!("iolab/", env!("CARGO_PKG_VERSION")))
        .body(())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    let (answer, _) = client.send_request(request, true).map_err(broke)?;
    let answer = final_head(answer, response::DEFAULT_MAX_HEADERS).await;
    let (head, mut body) = answer.map_err(|f| h2_error(&f, &seen))?.into_parts();
    let mut bytes = Vec::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.map_err(broke)?;
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

/// An HTTP/2 failure as an I/O error that says so: what the server's
/// SETTINGS broke, else `h2`'s error or the rule the answer broke; asking
/// whether the target speaks h2c only when it sent no HTTP/2 frame (an
/// HTTP/1.1 answer to the preface, a close).
fn h2_error(f: &Failed, seen: &Arc<Seen>) -> io::Error {
    if let Some(fault) = seen.fault() {
        return io::Error::other(format!("HTTP/2 PROTOCOL_ERROR: the target sent {fault}"));
    }
    let what = match f {
        Failed::H2(e) => match e.reason() {
            Some(r) => format!("HTTP/2 {r:?}: {e}"),
            None => format!("HTTP/2: {e}"),
        },
        other => format!("HTTP/2 answer refused: {other}"),
    };
    match seen.settings_arrived() {
        true => io::Error::other(what),
        false => io::Error::other(format!(
            "{what} (does the target speak h2c, HTTP/2 with prior knowledge?)"
        )),
    }
}
