//! Who held what in a batch (`iolab batch --spans N`): tasks `0..N` (the
//! order they are handed out) are sampled, each recorded from the moment it
//! was issued: queued until a thread (or timer) took it, then running (CPU)
//! or waiting on IO holding that thread, or, on `loop-async`, waiting on a
//! timer holding none. The recorder is `iolab-spans`'s.

use std::time::Instant;

use iolab_model::spans::SpanState;
use iolab_spans::{Recorder, Tag};

use crate::tasks::Task;

/// One task's trace: its tag if sampled, and when it was issued.
pub(crate) struct TaskTrace {
    tag: Option<Tag>,
    issued: Instant,
}

impl TaskTrace {
    /// Task `i`, issued at `issued`; untraced unless it is in the sample.
    pub fn of(spans: Option<&std::sync::Arc<Recorder>>, i: usize, issued: Instant) -> TaskTrace {
        TaskTrace {
            tag: spans.and_then(|r| r.admit_index(i)),
            issued,
        }
    }

    /// Run `task`'s work `f` on this thread: queued since issued, then
    /// running (CPU) or waiting on IO holding this thread (lane `role`).
    pub fn on_thread<T>(&self, task: Task, role: Option<&'static str>, f: impl FnOnce() -> T) -> T {
        let state = match task {
            Task::Cpu { .. } => SpanState::Running,
            Task::Io { .. } => SpanState::IoHeld,
        };
        iolab_spans::on_thread(self.tag.as_ref(), Some(self.issued), state, role, f)
    }

    /// The task waited on IO from `from` until now holding no thread.
    pub fn waited_free(&self, from: Instant) {
        if let Some(tag) = &self.tag {
            tag.span(SpanState::IoFree, from, Instant::now());
        }
    }

    /// The task is done (or failed): issued..now.
    pub fn done(&self) {
        if let Some(tag) = &self.tag {
            tag.request(self.issued, Instant::now(), None);
        }
    }
}
