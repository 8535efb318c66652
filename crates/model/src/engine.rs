//! The generator's event-loop engine, a flag of `iolab attack` and a field of
//! its plan and results (`generator.engine`).

use serde::{Deserialize, Serialize};

/// The generator's event-loop engine. Both run the same schedule, recorder
/// and accounting; they differ only in how sockets are driven.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Engine {
    /// io_uring where the kernel offers it, else epoll. The default: on a
    /// quiet machine io_uring costs less CPU per request than epoll in a
    /// closed loop (`scripts/bench-loadgen`, docs/attack.md).
    #[default]
    Auto,
    /// A readiness loop on epoll (tokio): works on every Linux kernel.
    Epoll,
    /// Completions on io_uring: sends and receives of many connections
    /// submitted and reaped in one system call.
    IoUring,
}

impl Engine {
    /// The name used in flags and results (`auto`, `epoll`, `io_uring`).
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Auto => "auto",
            Engine::Epoll => "epoll",
            Engine::IoUring => "io_uring",
        }
    }
}
