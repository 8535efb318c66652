//! Connection pools with a size and a wait limit, one blocking and one async.
//!
//! Both work the same way: a slot is taken first (waiting at most the limit,
//! else a pool timeout), then an idle connection is reused or, if there is none,
//! the caller connects. Connections are made lazily, so a pool costs nothing
//! while its backend is down, and a broken connection is simply not handed
//! back, so the next call reconnects: that is how a target recovers after a
//! backend restart without being restarted itself.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Lock a mutex, ignoring poisoning: the state is a counter and a list that a
/// panic cannot leave half-updated.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A pool for threads that block while they wait for a slot.
#[derive(Debug)]
pub(crate) struct BlockingPool<C> {
    size: usize,
    state: Mutex<State<C>>,
    freed: Condvar,
}

#[derive(Debug)]
struct State<C> {
    in_use: usize,
    idle: Vec<C>,
}

impl<C> BlockingPool<C> {
    pub(crate) fn new(size: usize) -> Self {
        BlockingPool {
            size: size.max(1),
            state: Mutex::new(State {
                in_use: 0,
                idle: Vec::new(),
            }),
            freed: Condvar::new(),
        }
    }

    /// Take a slot, waiting at most `wait`; `Err` carries how long it waited.
    pub(crate) fn acquire(&self, wait: Duration) -> Result<BlockingLease<'_, C>, Duration> {
        let start = Instant::now();
        let mut st = lock(&self.state);
        while st.in_use >= self.size {
            let left = match wait.checked_sub(start.elapsed()) {
                Some(left) if !left.is_zero() => left,
                _ => return Err(start.elapsed()),
            };
            st = self
                .freed
                .wait_timeout(st, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        st.in_use += 1;
        let conn = st.idle.pop();
        Ok(BlockingLease { pool: self, conn })
    }
}

/// One taken slot, with the idle connection it came with (if any).
pub(crate) struct BlockingLease<'a, C> {
    pool: &'a BlockingPool<C>,
    conn: Option<C>,
}

impl<C> BlockingLease<'_, C> {
    /// The pooled connection, if one was idle.
    pub(crate) fn take(&mut self) -> Option<C> {
        self.conn.take()
    }

    /// Give a healthy connection back with the slot.
    pub(crate) fn put(&mut self, conn: C) {
        self.conn = Some(conn);
    }
}

impl<C> Drop for BlockingLease<'_, C> {
    fn drop(&mut self) {
        let mut st = lock(&self.pool.state);
        st.in_use -= 1;
        if let Some(c) = self.conn.take() {
            st.idle.push(c);
        }
        drop(st);
        self.pool.freed.notify_one();
    }
}

/// A pool for tasks: waiting for a slot yields to the event loop.
#[derive(Debug)]
pub(crate) struct AsyncPool<C> {
    slots: tokio::sync::Semaphore,
    idle: Mutex<Vec<C>>,
}

impl<C> AsyncPool<C> {
    pub(crate) fn new(size: usize) -> Self {
        AsyncPool {
            slots: tokio::sync::Semaphore::new(size.max(1)),
            idle: Mutex::new(Vec::new()),
        }
    }

    /// Take a slot, waiting at most `wait`; `Err` carries how long it waited.
    pub(crate) async fn acquire(&self, wait: Duration) -> Result<AsyncLease<'_, C>, Duration> {
        let start = Instant::now();
        match tokio::time::timeout(wait, self.slots.acquire()).await {
            Ok(Ok(permit)) => {
                let conn = lock(&self.idle).pop();
                Ok(AsyncLease {
                    pool: self,
                    _permit: permit,
                    conn,
                })
            }
            // The semaphore is never closed; treat it like a timeout anyway.
            Ok(Err(_)) | Err(_) => Err(start.elapsed()),
        }
    }
}

/// One taken slot of an [`AsyncPool`].
pub(crate) struct AsyncLease<'a, C> {
    pool: &'a AsyncPool<C>,
    _permit: tokio::sync::SemaphorePermit<'a>,
    conn: Option<C>,
}

impl<C> AsyncLease<'_, C> {
    /// The pooled connection, if one was idle.
    pub(crate) fn take(&mut self) -> Option<C> {
        self.conn.take()
    }

    /// Give a healthy connection back with the slot.
    pub(crate) fn put(&mut self, conn: C) {
        self.conn = Some(conn);
    }
}

impl<C> Drop for AsyncLease<'_, C> {
    fn drop(&mut self) {
        if let Some(c) = self.conn.take() {
            lock(&self.pool.idle).push(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocking_pool_times_out_when_full_and_reuses_what_is_put_back() {
        let pool = BlockingPool::<u32>::new(1);
        let mut lease = pool.acquire(Duration::from_millis(10)).unwrap();
        assert!(lease.take().is_none());
        let waited = pool.acquire(Duration::from_millis(30)).err().unwrap();
        assert!(waited >= Duration::from_millis(30));
        lease.put(7);
        drop(lease);
        let mut again = pool.acquire(Duration::from_millis(10)).unwrap();
        assert_eq!(again.take(), Some(7));
    }

    #[tokio::test]
    async fn async_pool_times_out_when_full_and_reuses_what_is_put_back() {
        let pool = AsyncPool::<u32>::new(1);
        let mut lease = pool.acquire(Duration::from_millis(10)).await.unwrap();
        assert!(pool.acquire(Duration::from_millis(30)).await.is_err());
        lease.put(9);
        drop(lease);
        assert_eq!(
            pool.acquire(Duration::ZERO).await.ok().unwrap().take(),
            Some(9)
        );
    }
}
