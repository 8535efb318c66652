//! A target started in this process on its own thread, for tests and
//! in-process experiments: [`start`] it, read its [`Running::url`], [`Running::stop`] it.

use std::net::{SocketAddr, TcpListener};
use std::thread::JoinHandle;

use crate::{serve, ServeConfig, ServeError, Shutdown};

/// A target serving on a background thread.
#[derive(Debug)]
pub struct Running {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its stop trigger.
    pub shutdown: Shutdown,
    handle: JoinHandle<Result<(), ServeError>>,
}

/// Bind `addr` (port 0 = a free port) and serve `config` on a new thread.
pub fn start(config: ServeConfig, addr: SocketAddr) -> Result<Running, ServeError> {
    crate::validate(config.model, &config.params)?;
    let listener = TcpListener::bind(addr).map_err(ServeError::io("binding the listener"))?;
    let addr = listener
        .local_addr()
        .map_err(ServeError::io("reading the bound address"))?;
    let shutdown = Shutdown::new();
    let handle = std::thread::Builder::new()
        .name(format!("iolab-serve-{}", config.model))
        .spawn({
            let shutdown = shutdown.clone();
            move || serve(config, listener, shutdown)
        })
        .map_err(ServeError::io("starting the server thread"))?;
    Ok(Running {
        addr,
        shutdown,
        handle,
    })
}

impl Running {
    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Trigger shutdown and wait for the server to return.
    pub fn stop(self) -> Result<(), ServeError> {
        self.shutdown.trigger();
        self.handle
            .join()
            .unwrap_or_else(|_| Err(ServeError::BadParams("the server thread panicked".into())))
    }
}

/// A listener on `addr` with `SO_REUSEPORT`, so several `iolab serve`
/// processes share one port and the kernel deals incoming connections
/// among them (by a hash of each connection's addresses): one target
/// holding more sockets than one process's file limit allows.
pub fn listen_reuse_port(addr: SocketAddr) -> std::io::Result<TcpListener> {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    socket.set_reuse_address(true)?;
    socket.set_reuse_port(true)?;
    socket.bind(&addr.into())?;
    // The kernel caps this at net.core.somaxconn, as std's bind does.
    socket.listen(4096)?;
    Ok(socket.into())
}
