//! `iolab merge --live URL...`: the shards' live pages read every half
//! second (`/state`), added by the very merge that adds their files
//! (counters, HdrHistograms, series on absolute time), so the page shows
//! the exact percentiles of all the requests together while they run.
//! Once every shard says it is finished, the strict merge of their final
//! documents is the result, the one `iolab merge` of their files gives.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use iolab_loadgen::shard::combine;
use iolab_model::attack::AttackResult;
use iolab_model::live::{LiveRun, LiveSource, LiveState, LiveView, LIVE_STATE_SCHEMA};

use crate::metrics::Snapshot;
use crate::Source;

mod health;

pub use health::GiveUp;
use health::{Health, ReadError};

/// How often the shards are read.
const POLL: Duration = Duration::from_millis(500);
/// Longest wait for one shard's `/state`.
const READ: Duration = Duration::from_secs(2);

/// Reads shards' live pages and merges them.
pub struct MergeWatch {
    urls: Vec<String>,
    started: Instant,
    version: AtomicU64,
    stop: AtomicBool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Each shard's last state read, in `urls` order.
    states: Vec<Option<LiveState>>,
    sources: Vec<LiveSource>,
    merged: Option<Now>,
    /// Why the states do not merge, when they do not.
    error: Option<String>,
    /// Each shard's record of reads, in `urls` order.
    health: Vec<Health>,
    /// Why the merge ends before every shard has finished.
    gave_up: Option<GiveUp>,
}

/// The merge as it stands.
#[derive(Clone)]
struct Now {
    result: AttackResult,
    latency: Option<Histogram<u64>>,
    interval_s: f64,
    in_flight: u64,
    finished: bool,
}

impl MergeWatch {
    /// Start reading `urls` (each a shard's live page) from a thread of its own.
    pub fn start(urls: Vec<String>) -> Arc<MergeWatch> {
        let w = Arc::new(MergeWatch {
            state: Mutex::new(State {
                states: vec![None; urls.len()],
                health: vec![Health::new(); urls.len()],
                ..State::default()
            }),
            urls,
            started: Instant::now(),
            version: AtomicU64::new(0),
            stop: AtomicBool::new(false),
        });
        let reader = w.clone();
        std::thread::Builder::new()
            .name("iolab-merge-live".into())
            .spawn(move || {
                while !reader.stop.load(Relaxed) && !reader.poll() {
                    std::thread::sleep(POLL);
                }
            })
            .expect("a thread for the merge");
        w
    }

    /// Read every shard once and merge; true once every shard has finished.
    fn poll(&self) -> bool {
        let reads: Vec<Result<LiveState, ReadError>> = self.urls.iter().map(|u| read(u)).collect();
        let Ok(mut st) = self.state.lock() else {
            return true;
        };
        let both = &mut *st;
        for ((h, url), r) in both.health.iter_mut().zip(&self.urls).zip(&reads) {
            if let Some(g) = h.note(url, r) {
                both.gave_up.get_or_insert(g);
            }
        }
        st.sources = self
            .urls
            .iter()
            .zip(&reads)
            .map(|(url, r)| LiveSource {
                url: url.clone(),
                ok: r.is_ok(),
                status: match r {
                    Ok(s) => format!(
                        "shard {}{}",
                        s.attack
                            .shard
                            .as_ref()
                            .map_or("?".into(), |r| r.shard().to_string()),
                        if s.finished {
                            ", finished"
                        } else {
                            ", sending"
                        }
                    ),
                    Err(e) => e.to_string(),
                },
            })
            .collect();
        for (slot, r) in st.states.iter_mut().zip(reads) {
            if let Ok(s) = r {
                *slot = Some(s);
            }
        }
        let docs: Vec<&LiveState> = st.states.iter().flatten().collect();
        let finished = docs.len() == self.urls.len() && docs.iter().all(|s| s.finished);
        let named: Vec<combine::Source> = self
            .urls
            .iter()
            .zip(&st.states)
            .filter_map(|(u, s)| s.as_ref().map(|s| (u.clone(), s.attack.clone())))
            .collect();
        let merged = match finished {
            true => combine::merge(&named),
            false => combine::merge_live(&named),
        };
        match merged {
            Ok(m) if !named.is_empty() => {
                st.merged = Some(Now {
                    latency: decode(m.result.histogram.as_deref()),
                    interval_s: docs.first().map_or(1.0, |s| s.interval_s),
                    in_flight: docs.iter().map(|s| s.in_flight).sum(),
                    result: m.result,
                    finished,
                });
                st.error = None;
            }
            Ok(_) => {}
            Err(e) => st.error = Some(e.to_string()),
        }
        let over = finished || st.gave_up.is_some();
        drop(st);
        self.version.fetch_add(1, Relaxed);
        over
    }

    /// Wait until every shard has finished (or `cancel` is set): the merged
    /// final document, or why there is none.
    pub fn wait(&self, cancel: &AtomicBool) -> Result<AttackResult, GiveUp> {
        loop {
            if let Ok(st) = self.state.lock() {
                if let Some(g) = &st.gave_up {
                    return Err(g.clone());
                }
                match (&st.merged, &st.error) {
                    (Some(m), None) if m.finished => return Ok(m.result.clone()),
                    (_, Some(e))
                        if st
                            .states
                            .iter()
                            .all(|s| s.as_ref().is_some_and(|s| s.finished)) =>
                    {
                        return Err(GiveUp::DoNotMerge(e.clone()))
                    }
                    _ => {}
                }
            }
            if cancel.load(Relaxed) {
                self.stop.store(true, Relaxed);
                return Err(GiveUp::Interrupted);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A shard's `/state`.
/// A shard's `/state`, read within [`READ`] and the client's body cap; an
/// answer that is no live state is told from no answer (see [`health`]).
fn read(url: &str) -> Result<LiveState, ReadError> {
    let at = format!("{}/state", url.trim_end_matches('/'));
    let r = iolab_lab::http::get(&at, READ).map_err(|e| match e.kind() {
        std::io::ErrorKind::InvalidData | std::io::ErrorKind::InvalidInput => {
            ReadError::NotAPage(format!("not an HTTP answer of a live page: {e}"))
        }
        _ => ReadError::Unreachable(e.to_string()),
    })?;
    match r.status {
        200 => {}
        503 => return Err(ReadError::Waiting),
        s => {
            return Err(ReadError::NotAPage(format!(
                "answered {s}: is this an iolab --live page?"
            )))
        }
    }
    let s: LiveState = serde_json::from_str(&r.body).map_err(|e| {
        ReadError::NotAPage(format!(
            "not an iolab live state: {}",
            iolab_model::text::printable(&e.to_string())
        ))
    })?;
    if s.schema != LIVE_STATE_SCHEMA {
        return Err(ReadError::NotAPage(format!(
            "schema {} is not {LIVE_STATE_SCHEMA}",
            iolab_model::text::printable(&s.schema)
        )));
    }
    Ok(s)
}

/// The merged latency histogram (the merge has decoded each shard's
/// through the capped decoder already).
fn decode(b64: Option<&str>) -> Option<Histogram<u64>> {
    iolab_loadgen::shard::hist::decode_base64(b64?).ok()
}

impl Drop for MergeWatch {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
    }
}

impl Source for MergeWatch {
    fn version(&self) -> u64 {
        self.version.load(Relaxed)
    }

    fn view(&self) -> LiveView {
        let Ok(st) = self.state.lock() else {
            return LiveView::default();
        };
        let finished = st.merged.as_ref().is_some_and(|m| m.finished);
        LiveView {
            title: format!("iolab merge of {} shards", self.urls.len()),
            stage: match (&st.error, &st.merged) {
                _ if st.gave_up.is_some() => {
                    format!("gave up: {}", st.gave_up.as_ref().expect("checked"))
                }
                (Some(e), _) => format!("the shards do not merge: {e}"),
                (None, Some(m)) if m.finished => "every shard finished: merged".into(),
                (None, Some(_)) => "shards sending: merged as they stand".into(),
                (None, None) => "waiting for the shards".into(),
            },
            elapsed_s: self.started.elapsed().as_secs_f64(),
            eta_s: st
                .merged
                .as_ref()
                .filter(|m| !m.finished)
                .and_then(|m| crate::attack::remaining_s(&m.result)),
            current: st.merged.as_ref().map(|m| LiveRun {
                name: "all shards".into(),
                attack: m.result.clone(),
                interval_s: m.interval_s,
                in_flight: (!m.finished).then_some(m.in_flight),
                telemetry: Vec::new(),
            }),
            sources: st.sources.clone(),
            finished,
            ..LiveView::default()
        }
    }

    fn state(&self) -> Option<LiveState> {
        let st = self.state.lock().ok()?;
        let m = st.merged.as_ref()?;
        Some(LiveState {
            schema: LIVE_STATE_SCHEMA.to_string(),
            finished: m.finished,
            in_flight: m.in_flight,
            interval_s: m.interval_s,
            attack: m.result.clone(),
        })
    }

    fn metrics(&self) -> Option<Snapshot> {
        let st = self.state.lock().ok()?;
        let m = st.merged.clone()?;
        Some(Snapshot {
            result: m.result,
            latency: m.latency,
            in_flight: Some(m.in_flight),
            dropped_frames: 0,
        })
    }
}
