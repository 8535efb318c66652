//! PostgreSQL's clients: `SELECT pg_sleep($1)` through a pool of `pg_pool`
//! connections with a `pg_wait` limit (HikariCP's defaults: 10 and 30 s).
//!
//! Both clients speak the protocol with `tokio-postgres`:
//! - non-blocking: the connection's driver task runs on the caller's runtime,
//!   and a call yields while it waits for a slot or an answer;
//! - blocking: the calling thread blocks on a channel for the whole call while
//!   the socket is driven by a private one-thread IO runtime. (The `postgres`
//!   crate does the same with a runtime per client, but it panics when used on
//!   a thread that is inside a tokio runtime, which is exactly where the
//!   `loop-blocking` model makes its blocking calls.)
//!
//! Each connection prepares the statement once, so a call is one round trip.

use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;

use bytes::Bytes;
use iolab_model::steps::{BackendKind, IoCall};
use tokio_postgres::{Client, NoTls, Statement};

use crate::backend::{micros, CallFuture, Clients};
use crate::pool::{AsyncPool, BlockingPool};
use crate::{BackendError, CountError};

/// The statement every `pg` step runs.
pub const SLEEP_SQL: &str = "SELECT pg_sleep($1)";
/// Longest a connect may take before the backend counts as unavailable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// One pooled connection with its prepared statement.
#[derive(Debug)]
struct Conn {
    client: Client,
    sleep: Statement,
}

/// What one attempt failed with, and whether its connection is still good.
struct Failure {
    error: BackendError,
    keep: bool,
}

fn classify(e: &tokio_postgres::Error, client_closed: bool) -> Failure {
    let unavailable = match e.as_db_error() {
        // 08: connection exception, 53: insufficient resources (too many
        // connections), 57P: operator intervention (shutdown, restart).
        Some(db) => {
            let code = db.code().code();
            code.starts_with("08") || code.starts_with("53") || code.starts_with("57P")
        }
        None => true,
    };
    let error = if unavailable {
        BackendError::unavailable(BackendKind::Pg, e)
    } else {
        BackendError::failed(BackendKind::Pg, e)
    };
    Failure {
        error,
        keep: !unavailable && !client_closed,
    }
}

async fn connect(config: tokio_postgres::Config) -> Result<Conn, Failure> {
    let (client, connection) = config.connect(NoTls).await.map_err(|e| Failure {
        error: BackendError::unavailable(BackendKind::Pg, format!("connect: {e}")),
        keep: false,
    })?;
    // The connection ends by itself when the client is dropped or the server
    // goes away; the client then reports `is_closed()`.
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let sleep = client
        .prepare(SLEEP_SQL)
        .await
        .map_err(|e| classify(&e, client.is_closed()))?;
    Ok(Conn { client, sleep })
}

/// One attempt on `conn` (or a fresh connection); gives the connection back
/// if it is still good.
async fn attempt(
    config: tokio_postgres::Config,
    conn: Option<Conn>,
    secs: f64,
) -> (Result<(), Failure>, Option<Conn>) {
    let conn = match conn {
        Some(c) => c,
        None => match connect(config).await {
            Ok(c) => c,
            Err(f) => return (Err(f), None),
        },
    };
    match conn.client.execute(&conn.sleep, &[&secs]).await {
        Ok(_) => (Ok(()), Some(conn)),
        Err(e) => {
            let f = classify(&e, conn.client.is_closed());
            let back = f.keep.then_some(conn);
            (Err(f), back)
        }
    }
}

/// The private runtime that drives the blocking client's sockets; it lives on
/// its own thread for the life of the process (dropping a runtime inside
/// another one would panic, so it is never dropped).
fn io_runtime() -> &'static tokio::runtime::Handle {
    static IO: OnceLock<tokio::runtime::Handle> = OnceLock::new();
    IO.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("cannot build the PostgreSQL IO runtime");
        let handle = rt.handle().clone();
        std::thread::Builder::new()
            .name("iolab-pg-io".into())
            .spawn(move || rt.block_on(std::future::pending::<()>()))
            .expect("cannot start the PostgreSQL IO thread");
        handle
    })
}

/// Run `fut` on the IO runtime and block the calling thread until it is done;
/// works on any thread, inside a tokio runtime or not.
fn block_on_io<F>(fut: F) -> Option<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    io_runtime().spawn(async move {
        let _ = tx.send(fut.await);
    });
    rx.recv().ok()
}

/// Both PostgreSQL clients of one target.
#[derive(Debug)]
pub(crate) struct Pg {
    config: tokio_postgres::Config,
    wait: Duration,
    blocking: BlockingPool<Conn>,
    nonblocking: AsyncPool<Conn>,
}

fn parse(url: &str) -> Result<tokio_postgres::Config, BackendError> {
    let mut config: tokio_postgres::Config = url
        .parse()
        .map_err(|e| BackendError::failed(BackendKind::Pg, format!("bad URL '{url}': {e}")))?;
    config.connect_timeout(CONNECT_TIMEOUT);
    config.application_name("iolab");
    Ok(config)
}

impl Pg {
    /// A bad URL is reported on every call (the CLI validates it at start-up).
    pub(crate) fn new(url: &str, pool: u32, wait: Duration) -> Result<Self, BackendError> {
        Ok(Pg {
            config: parse(url)?,
            wait,
            blocking: BlockingPool::new(pool as usize),
            nonblocking: AsyncPool::new(pool as usize),
        })
    }

    /// `pg_sleep` on the calling thread.
    pub(crate) fn sleep_blocking(&self, micros: u64) -> Result<(), BackendError> {
        let secs = micros as f64 / 1e6;
        let mut lease = self
            .blocking
            .acquire(self.wait)
            .map_err(|w| BackendError::pool_timeout(BackendKind::Pg, w))?;
        let mut pooled = lease.take().filter(|c| !c.client.is_closed());
        loop {
            let reused = pooled.is_some();
            let (result, back) = block_on_io(attempt(self.config.clone(), pooled.take(), secs))
                .unwrap_or_else(|| {
                    let error = BackendError::unavailable(BackendKind::Pg, "IO thread gone");
                    (Err(Failure { error, keep: false }), None)
                });
            if let Some(c) = back {
                lease.put(c);
            }
            match result {
                // A pooled connection that died with a restarted server gets
                // one retry on a fresh connection, as a pool's validation would.
                Err(f) if reused && !f.keep => continue,
                r => return r.map_err(|f| f.error),
            }
        }
    }

    /// `pg_sleep` without blocking a thread.
    pub(crate) async fn sleep_async(&self, micros: u64) -> Result<(), BackendError> {
        let secs = micros as f64 / 1e6;
        let mut lease = self
            .nonblocking
            .acquire(self.wait)
            .await
            .map_err(|w| BackendError::pool_timeout(BackendKind::Pg, w))?;
        let mut pooled = lease.take().filter(|c| !c.client.is_closed());
        loop {
            let reused = pooled.is_some();
            let (result, back) = attempt(self.config.clone(), pooled.take(), secs).await;
            if let Some(c) = back {
                lease.put(c);
            }
            match result {
                Err(f) if reused && !f.keep => continue,
                r => return r.map_err(|f| f.error),
            }
        }
    }
}

impl Clients for Pg {
    fn blocking(&self, call: &IoCall) -> Result<Option<Bytes>, BackendError> {
        self.sleep_blocking(micros(call)).map(|()| None)
    }

    fn nonblocking<'a>(&'a self, call: &'a IoCall) -> CallFuture<'a> {
        Box::pin(async move { self.sleep_async(micros(call)).await.map(|()| None) })
    }
}

/// How many times PostgreSQL ran a `pg` step's statement, from
/// `pg_stat_statements` (the number `iolab verify` compares).
pub fn sleep_calls(url: &str) -> Result<u64, CountError> {
    let config = parse(url).map_err(CountError::PgUrl)?;
    let url = url.to_string();
    block_on_io(async move {
        let (client, connection) = config
            .connect(NoTls)
            .await
            .map_err(|why| CountError::PgConnect { url, why })?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        let row = client
            .query_one(
                "SELECT coalesce(sum(calls), 0)::int8 FROM pg_stat_statements \
                 WHERE query ILIKE 'select pg_sleep(%'",
                &[],
            )
            .await
            .map_err(CountError::PgStatStatements)?;
        Ok(row.get::<_, i64>(0) as u64)
    })
    .unwrap_or(Err(CountError::PgThreadGone))
}
