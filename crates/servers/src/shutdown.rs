//! The stop trigger shared by a server, its threads and whoever stops it
//! (a signal handler, a test, the experiment runner).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::sync::watch;

/// A cloneable "stop now" trigger. Thread models poll [`Shutdown::is_triggered`]
/// between short waits; the event loops await [`Shutdown::wait`].
#[derive(Debug, Clone)]
pub struct Shutdown {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    flag: AtomicBool,
    tx: watch::Sender<bool>,
}

impl Default for Shutdown {
    fn default() -> Self {
        Self::new()
    }
}

impl Shutdown {
    /// A trigger that has not fired.
    pub fn new() -> Self {
        let (tx, _rx) = watch::channel(false);
        Shutdown {
            inner: Arc::new(Inner {
                flag: AtomicBool::new(false),
                tx,
            }),
        }
    }

    /// Fire: stop accepting, finish in-flight work within the grace period.
    pub fn trigger(&self) {
        self.inner.flag.store(true, Ordering::SeqCst);
        self.inner.tx.send_replace(true);
    }

    /// Has the trigger fired?
    pub fn is_triggered(&self) -> bool {
        self.inner.flag.load(Ordering::SeqCst)
    }

    /// Resolve once the trigger has fired.
    pub async fn wait(&self) {
        let mut rx = self.inner.tx.subscribe();
        let _ = rx.wait_for(|fired| *fired).await;
    }

    /// Fire on SIGINT or SIGTERM (a background thread waits for them); a
    /// second signal exits at once (status 130), as people expect of Ctrl-C.
    pub fn on_signals(&self) -> std::io::Result<()> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
        let me = self.clone();
        std::thread::Builder::new()
            .name("iolab-signals".into())
            .spawn(move || {
                let mut forever = signals.forever();
                if forever.next().is_some() {
                    me.trigger();
                }
                if forever.next().is_some() {
                    std::process::exit(130);
                }
            })?;
        Ok(())
    }
}
