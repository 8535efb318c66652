//! What one held connection (a WebSocket on `GET /ws`) costs a model, said
//! from its [`Shape`] before anything runs, and the sizes that say it: the
//! one place where the memory assumption lives (the built-in servers take
//! their buffer and stack sizes from here, so the assumption and the server
//! cannot drift apart).
//!
//! A held connection holds what the model gives a request for as long as it
//! is open: a thread in the thread models (the thread that read the upgrade
//! serves the socket until it closes), a task and a socket in the
//! event-loop models. So a model whose requests hold a capped number of
//! threads holds that many connections; the next ones wait for a thread (in
//! the pool's queue, then the kernel's listen backlog) and time out.
//!
//! Memory per held connection, resident (RSS), assumed:
//! - the WebSocket's read buffer, [`WS_READ_BUFFER`] (allocated up front);
//! - its state, the socket's user-space half and, on a loop, its task:
//!   [`CONN_STATE_KIB`];
//! - on a thread: the stack pages a blocking read loop touches plus the
//!   thread's descriptor and TLS at the top of its mapping,
//!   [`STACK_TOUCHED_KIB`] (of [`THREAD_STACK`] reserved: untouched pages
//!   are not resident).
//!
//! Kernel socket buffers are not in RSS and are not counted.

use super::{Admission, Capacity, Shape};
use crate::units::thousands;

/// Each WebSocket's read buffer on the built-in servers, bytes
/// (tungstenite's default is 128 KiB, allocated up front).
pub const WS_READ_BUFFER: usize = 4 << 10;
/// Stack reserved for each thread the built-in thread models start, bytes.
pub const THREAD_STACK: usize = 512 << 10;
/// Resident stack of a thread blocked on a held socket, KiB (assumed: three
/// 4 KiB pages, two of call frames and one of descriptor and TLS).
pub const STACK_TOUCHED_KIB: f64 = 12.0;
/// A connection's state beyond its read buffer, KiB (assumed: the
/// WebSocket's state and frame buffers while idle, the stream, a task).
pub const CONN_STATE_KIB: f64 = 2.0;

/// What one held connection costs a model, and where it stops holding them.
#[derive(Debug, Clone, PartialEq)]
pub struct HeldCost {
    /// OS threads per held connection: 1 where a request holds a thread.
    pub threads_per_connection: f64,
    /// Resident KiB per held connection (the module's assumption).
    pub kib_per_connection: f64,
    /// Most connections it holds at once (`None`: nothing in the model
    /// bounds it; the machine does: open files, threads, memory).
    pub holds: Option<u32>,
    /// Connections past `holds` that wait for a thread (the pool's queue
    /// and the listen backlog) until their handshake times out; the kernel
    /// drops the handshakes of any past these, so they time out too.
    pub waits: Option<u32>,
    /// What bounds it, in a phrase made from the numbers.
    pub why: String,
}

/// The cost of a held connection to a model of this shape.
pub fn held_cost(shape: &Shape) -> HeldCost {
    let threads = shape.model.def().held_on_thread;
    let kib = WS_READ_BUFFER as f64 / 1024.0
        + CONN_STATE_KIB
        + if threads { STACK_TOUCHED_KIB } else { 0.0 };
    let holds = match (threads, shape.capacity()) {
        (true, Capacity::Bounded { n, .. }) => Some(n),
        _ => None,
    };
    let waits = match (holds, shape.admission) {
        (
            Some(n),
            Admission::Limited {
                max_connections,
                backlog,
            },
        ) => Some(max_connections.saturating_sub(n).saturating_add(backlog)),
        _ => None,
    };
    let why = match (holds, waits) {
        (Some(n), Some(w)) => format!(
            "{} threads, one per connection; the next {} wait (queue and backlog) and time out, and the kernel drops the rest's handshakes",
            thousands(u64::from(n)),
            thousands(u64::from(w))
        ),
        (Some(n), None) => format!(
            "{} threads, one per connection; past them refused",
            thousands(u64::from(n))
        ),
        (None, _) if threads => {
            "a thread per connection, no cap: threads-max, open files or memory".into()
        }
        (None, _) => "no thread per connection: open files or memory".into(),
    };
    HeldCost {
        threads_per_connection: if threads { 1.0 } else { 0.0 },
        kib_per_connection: kib,
        holds,
        waits,
        why,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::concurrency::Host;
    use crate::knob::ModelParams;
    use crate::ModelKind;

    #[test]
    fn a_pool_holds_its_threads_and_a_loop_holds_no_thread() {
        let host = Host::cores(2);
        let pool = held_cost(&ModelKind::Pool.shape(&ModelParams::default(), &host));
        assert_eq!((pool.threads_per_connection, pool.holds), (1.0, Some(200)));
        // Tomcat's 8,192 connections less the 200 on threads, plus 100 backlog.
        assert_eq!(pool.waits, Some(8_092));
        assert_eq!(pool.kib_per_connection, 4.0 + 2.0 + 12.0);
        let la = held_cost(&ModelKind::LoopAsync.shape(&ModelParams::default(), &host));
        assert_eq!((la.threads_per_connection, la.holds), (0.0, None));
        assert_eq!(la.kib_per_connection, 6.0);
        let tpr = held_cost(&ModelKind::ThreadPerRequest.shape(&ModelParams::default(), &host));
        assert_eq!((tpr.threads_per_connection, tpr.holds), (1.0, None));
        // A loop that blocks its thread on a request's IO still holds a
        // connection on a task.
        let lb = held_cost(&ModelKind::LoopBlocking.shape(&ModelParams::default(), &host));
        assert_eq!((lb.threads_per_connection, lb.holds), (0.0, None));
    }
}
