//! `thread-per-request`: the acceptor starts a new OS thread for every
//! connection (which then serves its keep-alive requests), up to
//! `--max-threads` at once. At the cap, or when the OS refuses a thread, the
//! acceptor itself answers 503 and counts a rejection: the process never
//! dies. `par(...)` children get scoped threads of their own.

use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::accept;
use crate::ctx::Ctx;
use crate::exec::{run_blocking, ScopedThreads};
use crate::http1::{
    answer_and_linger, read_request, write_reply, Incoming, KEEP_ALIVE, REQUEST_TIMEOUT,
};
use crate::routes::Reply;
use crate::{ServeError, THREAD_STACK};

/// Serve until shutdown; the calling thread accepts.
pub fn serve(ctx: Arc<Ctx>, listener: TcpListener) -> Result<(), ServeError> {
    accept::prepare(&listener, ctx.params.backlog())?;
    let cap = ctx.params.max_threads.map_or(usize::MAX, |n| n as usize);
    let live = Arc::new(AtomicUsize::new(0));
    while let Some(stream) = accept::next(&listener, &ctx.shutdown) {
        if live.load(Ordering::SeqCst) >= cap {
            reject(
                &ctx,
                stream,
                &format!("thread-per-request: --max-threads {cap} reached"),
            );
            continue;
        }
        live.fetch_add(1, Ordering::SeqCst);
        // The stream waits in a slot so that the acceptor gets it back if
        // the OS refuses the thread (a refused closure is dropped unrun).
        let slot = Arc::new(Mutex::new(Some(stream)));
        let spawned = std::thread::Builder::new()
            .name("iolab-request".into())
            .stack_size(THREAD_STACK)
            .spawn({
                let (ctx, slot, live) = (ctx.clone(), slot.clone(), live.clone());
                move || {
                    let stream = slot.lock().map(|mut s| s.take()).ok().flatten();
                    if let Some(stream) = stream {
                        serve_connection(&ctx, stream);
                    }
                    live.fetch_sub(1, Ordering::SeqCst);
                }
            });
        if let Err(e) = spawned {
            live.fetch_sub(1, Ordering::SeqCst);
            let stream = slot.lock().map(|mut s| s.take()).ok().flatten();
            if let Some(stream) = stream {
                reject(&ctx, stream, &format!("the OS refused a new thread: {e}"));
            }
        }
    }
    drop(listener);
    ctx.drain(|| true);
    Ok(())
}

/// Serve one connection's requests until it closes, idles out or shutdown.
fn serve_connection(ctx: &Ctx, mut stream: TcpStream) {
    // Idle connections hold their thread: wake twice a second, not ten times.
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    let mut buf = Vec::new();
    loop {
        let outcome = read_request(&mut stream, &mut buf, &|waited, partial| {
            if partial {
                waited < REQUEST_TIMEOUT
            } else {
                waited < KEEP_ALIVE && !ctx.shutdown.is_triggered()
            }
        });
        match outcome {
            Ok(Incoming::Request(req)) => {
                if let Some(held) = crate::held::route(&req) {
                    let answer = |target: &str| {
                        ctx.answer("GET", target, |step| {
                            run_blocking(step, &ctx.backends, &ScopedThreads)
                        })
                    };
                    return crate::held::serve(ctx, stream, &req, held, &answer);
                }
                let reply = ctx.answer(&req.method, &req.target, |step| {
                    run_blocking(step, &ctx.backends, &ScopedThreads)
                });
                let keep = req.keep_alive && !ctx.shutdown.is_triggered();
                if write_reply(&mut stream, &reply, keep, req.method == "HEAD").is_err() || !keep {
                    return;
                }
            }
            Ok(Incoming::Bad(reply)) => {
                answer_and_linger(&mut stream, &reply);
                return;
            }
            Ok(Incoming::Closed) | Err(_) => return,
        }
    }
}

/// Answer 503 on the acceptor thread. The request is read first (briefly),
/// so the client gets the answer rather than a reset for unread bytes.
fn reject(ctx: &Ctx, mut stream: TcpStream, why: &str) {
    ctx.metrics.reject();
    let _ = stream.set_read_timeout(Some(Duration::from_millis(50)));
    let mut buf = Vec::new();
    let _ = read_request(&mut stream, &mut buf, &|waited, _| {
        waited < Duration::from_millis(500)
    });
    let _ = write_reply(&mut stream, &Reply::overloaded(why), false, false);
}
