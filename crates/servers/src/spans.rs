//! Who held what (`iolab serve --spans N`): the glue between the models and
//! the span recorder (`iolab-spans`). A sampled request is admitted where a
//! model starts its workload (`Ctx::answer_queued`
//! on the thread models, [`traced`] on the event loops), records its spans
//! where it waits or runs (`exec`, the loop executors), and is marked done
//! with its status; `GET /spans` answers the sample ([`reply`]).
//!
//! What each model records (states of `iolab_model::spans::SpanState`):
//! - `sequential`, `thread-per-request`: running on the request's thread,
//!   IO held on it (a `par` child: on its own scoped thread);
//! - `pool`: queued from the moment its connection became readable until a
//!   worker took it, then running and IO held on that worker (a `par`
//!   child: queued, then on the pool thread that took it);
//! - `loop-blocking`: running and IO held on the loop thread that polled it;
//! - `loop-offload`: each IO leaf queued for the offload pool, then held on
//!   an offload thread (lane `offload`);
//! - `loop-async`: each IO leaf waits holding no thread; CPU steps run on
//!   the loop thread.

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use iolab_model::spans::{SpanSource, SpanState};
use iolab_spans::{Recorder, Tag};

use crate::exec::StepResult;
use crate::routes::{Reply, JSON};

/// Take this request into the sample, if the target records one and it is open.
pub fn admit(spans: Option<&Arc<Recorder>>) -> Option<Tag> {
    spans.and_then(Recorder::admit)
}

/// When to note a request's arrival: only while a sample is open, so a
/// target recording nothing reads no clock.
pub fn arrival(spans: Option<&Arc<Recorder>>) -> Option<Instant> {
    spans.filter(|r| r.is_open()).map(|_| Instant::now())
}

/// Mark a sampled request done with the status it is answered with.
pub fn done(tag: Option<&Tag>, accepted: Instant, reply: &Reply) {
    if let Some(tag) = tag {
        tag.request(accepted, Instant::now(), Some(reply.status));
    }
}

/// Run an event-loop request's workload with its task in the sample (if
/// admitted); returns the result and its tag, to mark it done.
pub async fn traced<F: Future<Output = StepResult>>(
    spans: Option<&Arc<Recorder>>,
    run: F,
) -> (StepResult, Option<Tag>) {
    match admit(spans) {
        None => (run.await, None),
        Some(tag) => (tag.clone().scope(run).await, Some(tag)),
    }
}

/// A blocking IO leaf moved to an offload thread: queued from `queued` (when
/// the task asked for a thread) until this thread took it, then held here.
pub fn offloaded<T>(tag: Option<&Tag>, queued: Option<Instant>, f: impl FnOnce() -> T) -> T {
    iolab_spans::on_thread(tag, queued, SpanState::IoHeld, Some("offload"), f)
}

/// The answer of `GET /spans` (`open`: `GET /spans?open`).
pub fn reply(spans: Option<&Recorder>, open: bool) -> Reply {
    let Some(rec) = spans else {
        return Reply::error(
            404,
            "this target records no spans: start it with --spans N (iolab serve --spans 200)",
        );
    };
    let body = if open {
        rec.open();
        format!("{{\"ok\":true,\"sample\":{}}}", rec.size())
    } else {
        serde_json::to_string(&rec.timeline(SpanSource::Target))
            .unwrap_or_else(|e| format!("{{\"ok\":false,\"error\":\"{e}\"}}"))
    };
    Reply {
        status: 200,
        content_type: JSON,
        body: body.into(),
    }
}
