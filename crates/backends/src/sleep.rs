//! `sleep:MS`: the embedded timer, a blocking sleep or an async timer.

use std::time::Duration;

/// Block the calling thread for `micros`.
pub(crate) fn blocking(micros: u64) {
    std::thread::sleep(Duration::from_micros(micros));
}

/// Wait `micros` without holding a thread.
pub(crate) async fn nonblocking(micros: u64) {
    tokio::time::sleep(Duration::from_micros(micros)).await;
}
