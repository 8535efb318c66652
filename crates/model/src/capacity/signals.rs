//! What a capacity step saw inside the target and in the kernel, beside
//! the load's own numbers: its threads by state (`/proc/PID/task/*/stat`
//! and `wchan`), the time they waited for a CPU (`schedstat`), its busiest
//! thread, its connections to downstreams and the accept queue of its
//! listening socket. The fit reads them at the knee to name the resource
//! that binds ([`super::Binding`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Where a thread was when sampled: running, or asleep in one kind of wait
/// (read from its state and its kernel wait channel).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ThreadState {
    /// On a CPU or waiting for one (state R).
    Running,
    /// In a futex: a lock, a condition, a pool's queue (or an idle worker).
    Futex,
    /// In epoll/poll/select: an event loop or an idle worker waiting for work.
    Poll,
    /// In a timed sleep (nanosleep).
    Sleep,
    /// Reading a socket: waiting for a downstream's answer.
    Socket,
    /// In accept: an idle worker waiting for a connection.
    Accept,
    /// Uninterruptible (state D): disk or another kernel wait.
    Disk,
    /// Any other wait.
    Other,
}

impl ThreadState {
    /// Every state, in order.
    pub const ALL: [ThreadState; 8] = [
        ThreadState::Running,
        ThreadState::Futex,
        ThreadState::Poll,
        ThreadState::Sleep,
        ThreadState::Socket,
        ThreadState::Accept,
        ThreadState::Disk,
        ThreadState::Other,
    ];

    /// Its name, as saved.
    pub fn as_str(self) -> &'static str {
        match self {
            ThreadState::Running => "running",
            ThreadState::Futex => "futex",
            ThreadState::Poll => "poll",
            ThreadState::Sleep => "sleep",
            ThreadState::Socket => "socket",
            ThreadState::Accept => "accept",
            ThreadState::Disk => "disk",
            ThreadState::Other => "other",
        }
    }

    /// The state of a thread whose `/proc` state letter is `state` and
    /// whose wait channel is `wchan` (`0` or empty when the kernel hides it).
    pub fn of(state: char, wchan: &str) -> ThreadState {
        match state {
            'R' => return ThreadState::Running,
            'D' => return ThreadState::Disk,
            _ => {}
        }
        let has = |names: &[&str]| names.iter().any(|n| wchan.contains(n));
        if has(&["futex"]) {
            ThreadState::Futex
        } else if has(&[
            "ep_poll",
            "epoll",
            "do_sys_poll",
            "do_select",
            "io_uring",
            "poll_schedule",
        ]) {
            ThreadState::Poll
        } else if has(&["nanosleep", "hrtimer", "clock_nanosleep"]) {
            ThreadState::Sleep
        } else if has(&["accept"]) {
            ThreadState::Accept
        } else if has(&[
            "sk_wait",
            "tcp_recv",
            "unix_stream",
            "wait_woken",
            "sock_",
            "inet_",
        ]) {
            ThreadState::Socket
        } else {
            ThreadState::Other
        }
    }
}

/// The busiest thread of a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HotThread {
    /// Its name (`comm`).
    pub name: String,
    /// The CPU it used over the step, in cores.
    pub cores: f64,
}

/// The target's threads during a step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Threads {
    /// Samples taken.
    pub samples: u32,
    /// Threads of the process tree, mean over the samples.
    pub threads: f64,
    /// Processes of the tree, most seen.
    pub processes: u64,
    /// Threads in each state, mean over the samples.
    pub states: BTreeMap<ThreadState, f64>,
    /// The busiest thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hottest: Option<HotThread>,
    /// Threads waiting for a CPU, on average (run-queue delay from
    /// `schedstat` over the step's time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_wait: Option<f64>,
    /// Cores the target may run on (its CPU affinity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores_allowed: Option<u32>,
}

impl Threads {
    /// Threads in `s` on average.
    pub fn in_state(&self, s: ThreadState) -> f64 {
        self.states.get(&s).copied().unwrap_or(0.0)
    }

    /// Threads asleep in a wait a request makes (lock, timer, socket, disk):
    /// held by a request, or idle in a pool's queue.
    pub fn blocked(&self) -> f64 {
        [
            ThreadState::Futex,
            ThreadState::Sleep,
            ThreadState::Socket,
            ThreadState::Disk,
        ]
        .iter()
        .map(|s| self.in_state(*s))
        .sum()
    }
}

impl super::StepRecord {
    /// The time the target's threads waited for a CPU (threads on average,
    /// `schedstat`) that stands for CPU it wanted and did not get, beside
    /// `own` cores it used: when its pinned cores were read, at most what
    /// they were busy with beyond `own` (a thread waits for a CPU only
    /// while the CPU runs something; when that is the target's own other
    /// threads, their time is already in `own`, and the wait is a queue,
    /// not a want). Unpinned, the whole wait: nothing tells them apart.
    /// Issue 53: an event loop and its pool's connections on one core read
    /// 0.58 cores busy and 0.22 waiting at 650/s, and were named the CPU
    /// ("busy + wait >= 80%") where a pool of 10 bound.
    pub fn cpu_wait_denied(&self, own: f64) -> Option<f64> {
        let wait = self.signals.as_ref()?.threads.as_ref()?.cpu_wait?;
        Some(match self.core_busy_cores {
            Some(all) => wait.min((all - own).max(0.0)),
            None => wait,
        })
    }
}

/// Connections from the target to one downstream endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Downstream {
    /// `host:port` the target connects to.
    pub endpoint: String,
    /// Most connections established at once during the step.
    pub connections: u64,
}

/// What a step saw inside the target and in the kernel (with its PID).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Signals {
    /// Threads by state, the busiest one, the run-queue wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<Threads>,
    /// Connections the target opened to others, by endpoint, most first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub downstream: Vec<Downstream>,
    /// Most connections waiting in its listen sockets' accept queues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accept_queue: Option<u64>,
    /// Most connections established to its listening ports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inbound: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_threads_state_is_read_from_its_letter_and_wait_channel() {
        assert_eq!(ThreadState::of('R', "0"), ThreadState::Running);
        assert_eq!(ThreadState::of('S', "futex_wait_queue"), ThreadState::Futex);
        assert_eq!(ThreadState::of('S', "do_epoll_wait"), ThreadState::Poll);
        assert_eq!(ThreadState::of('S', "ep_poll"), ThreadState::Poll);
        assert_eq!(
            ThreadState::of('S', "hrtimer_nanosleep"),
            ThreadState::Sleep
        );
        assert_eq!(ThreadState::of('S', "inet_csk_accept"), ThreadState::Accept);
        assert_eq!(ThreadState::of('S', "sk_wait_data"), ThreadState::Socket);
        assert_eq!(ThreadState::of('D', "io_schedule"), ThreadState::Disk);
        assert_eq!(ThreadState::of('S', "0"), ThreadState::Other);
        let json = serde_json::to_string(&ThreadState::ALL).unwrap();
        let names: Vec<String> = ThreadState::ALL
            .iter()
            .map(|s| format!("\"{}\"", s.as_str()))
            .collect();
        assert_eq!(json, format!("[{}]", names.join(",")));
    }
}
