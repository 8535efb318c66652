//! Where the sampled request a thread or task is working on is kept: a
//! thread-local while a thread runs it, a tokio task-local across awaits;
//! and the helpers the models wrap their work in. Each helper costs one
//! thread-local read when no sampled request is current.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::time::Instant;

use iolab_model::spans::SpanState;

use crate::Tag;

thread_local! {
    /// The sampled request this thread works on.
    static CURRENT: RefCell<Option<Tag>> = const { RefCell::new(None) };
    /// This thread's lane: (recorder id, lane id); recorder id 0 = none yet.
    static LANE: Cell<(u64, u32)> = const { Cell::new((0, 0)) };
}

tokio::task_local! {
    /// The sampled request a task works on (across awaits and threads).
    static TASK: Tag;
}

/// This thread's lane in recorder `id`, made by `make` on first use.
pub(crate) fn lane_of(id: u64, make: impl FnOnce() -> Option<u32>) -> Option<u32> {
    let (rec, lane) = LANE.with(Cell::get);
    if rec == id {
        return Some(lane);
    }
    let lane = make()?;
    LANE.with(|l| l.set((id, lane)));
    Some(lane)
}

/// The sampled request current here: this thread's, else this task's.
pub fn current() -> Option<Tag> {
    CURRENT
        .with(|c| c.borrow().clone())
        .or_else(|| TASK.try_with(Tag::clone).ok())
}

/// While alive, the tag is this thread's current request.
#[derive(Debug)]
pub struct Entered {
    previous: Option<Tag>,
}

impl Drop for Entered {
    fn drop(&mut self) {
        let previous = self.previous.take();
        CURRENT.with(|c| *c.borrow_mut() = previous);
    }
}

impl Tag {
    /// Make this the thread's current request until the guard drops.
    pub fn enter(&self) -> Entered {
        let previous = CURRENT.with(|c| c.borrow_mut().replace(self.clone()));
        Entered { previous }
    }

    /// Run `fut` with this as its task's current request.
    pub async fn scope<F: Future>(self, fut: F) -> F::Output {
        TASK.scope(self, fut).await
    }
}

/// Run `f` on this thread for `tag`, if there is one: a `queued` span from
/// `since` (when given) until now, then `state` on this thread (lane named
/// `role` if new) while `f` runs, with `tag` current for anything `f`
/// records. Without a tag, just `f()`.
pub fn on_thread<T>(
    tag: Option<&Tag>,
    since: Option<Instant>,
    state: SpanState,
    role: Option<&'static str>,
    f: impl FnOnce() -> T,
) -> T {
    let Some(tag) = tag else {
        return f();
    };
    let t0 = Instant::now();
    if let Some(q) = since {
        tag.span(SpanState::Queued, q, t0);
    }
    let out = {
        let _current = tag.enter();
        f()
    };
    tag.span_as(state, role, t0, Instant::now());
    out
}

/// A blocking IO call on this thread: recorded as waiting on IO holding
/// this thread, when a sampled request is current.
pub fn held<T>(f: impl FnOnce() -> T) -> T {
    on_thread(current().as_ref(), None, SpanState::IoHeld, None, f)
}

/// Work that holds this thread: recorded as running on it, when a sampled
/// request is current (the whole of a request on a thread model, a step run
/// blocking inside an event loop's poll).
pub fn running<T>(f: impl FnOnce() -> T) -> T {
    on_thread(current().as_ref(), None, SpanState::Running, None, f)
}

/// An IO wait that holds no thread (a timer, a non-blocking client): recorded
/// as such around the await, when the task's request is sampled.
pub async fn free<F: Future>(fut: F) -> F::Output {
    match current() {
        None => fut.await,
        Some(tag) => {
            let t0 = Instant::now();
            let out = fut.await;
            tag.span(SpanState::IoFree, t0, Instant::now());
            out
        }
    }
}
