//! The live feed of a running attack (`--live`). Whenever one of a generator
//! thread's series intervals closes, the thread hands its books (counters,
//! histograms, the closed interval) to a bounded channel; a full channel
//! drops the frame and counts it, so no reader can ever slow a send. The
//! calling thread keeps the latest books of every thread in a [`LiveFeed`],
//! and a reader gets the attack's document as it stands, made by the very
//! merge that makes the final one: the same counters, the same exact
//! histograms, the same series, the same verdict on the generator.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};

use iolab_model::attack::{AttackPlan, AttackResult, Engine};

use crate::clock::now_ns;
use crate::recorder::{Interval, Live, Publish, Recorder};
use crate::report::AttackReport;
use crate::run_ctx::{RunOutput, ThreadOutput};

/// Frames waiting for the calling thread, per generator thread: it drains
/// them every 10 ms, so only a stalled caller fills this.
const FRAMES_PER_THREAD: usize = 16;

/// A generator thread's end of the feed.
#[derive(Debug, Clone)]
pub(crate) struct Tap {
    thread: usize,
    tx: SyncSender<Frame>,
    dropped: Arc<AtomicU64>,
}

/// One thread's books at the moment interval `closed` closed.
#[derive(Debug)]
pub(crate) struct Frame {
    thread: usize,
    closed: usize,
    interval: Interval,
    /// The recorder without its intervals and rows.
    books: Recorder,
    cpu_s: f64,
    wait_s: Option<f64>,
    at_ns: u64,
}

impl Publish for Tap {
    /// Hand over `rec`'s books now that its interval `closed` is complete
    /// (`rec` without its tap, which the caller holds).
    fn publish(&self, rec: &mut Recorder, closed: usize) {
        let intervals = std::mem::take(&mut rec.intervals);
        let rows = rec.rows.take();
        let books = rec.clone();
        rec.intervals = intervals;
        rec.rows = rows;
        let frame = Frame {
            thread: self.thread,
            closed,
            interval: rec.intervals[closed].clone(),
            books,
            cpu_s: crate::gen_thread::thread_cpu_s(),
            wait_s: crate::gen_thread::thread_wait_s(),
            at_ns: now_ns(),
        };
        match self.tx.try_send(frame) {
            Ok(()) | Err(TrySendError::Disconnected(_)) => {}
            Err(TrySendError::Full(_)) => {
                self.dropped.fetch_add(1, Relaxed);
            }
        }
    }
}

/// What a reader sees of a running (or finished) attack.
#[derive(Debug, Clone)]
pub struct LiveSnapshot {
    /// The document as it stands (the final one once `finished`).
    pub report: AttackReport,
    /// Requests sent and not yet answered, now.
    pub in_flight: u64,
    /// Frames the generator threads dropped because the feed was full.
    pub dropped_frames: u64,
    /// The attack is over: `report` is its final document.
    pub finished: bool,
    /// Width of one series interval.
    pub interval: std::time::Duration,
}

/// The books of a running attack, for a live page or `/metrics`; one feed
/// may serve several attacks in turn (a run's warm-up and measurement, a
/// capacity search's steps): each starts it afresh.
#[derive(Debug, Default)]
pub struct LiveFeed {
    state: Mutex<State>,
    version: AtomicU64,
    dropped: Arc<AtomicU64>,
    /// The last snapshot and the version it was made at: the page, `/state`
    /// and `/metrics` of one moment share one merge.
    cache: Mutex<Option<(u64, LiveSnapshot)>>,
}

#[derive(Debug, Default)]
struct State {
    run: Option<Run>,
    done: Option<AttackReport>,
    /// Every attack this feed saw end, oldest first (at most [`HISTORY`]).
    history: Vec<AttackResult>,
}

/// Finished attacks a feed remembers (a capacity search makes ~30).
const HISTORY: usize = 200;

#[derive(Debug)]
struct Run {
    plan: AttackPlan,
    start_ns: u64,
    started_unix_ms: u64,
    engine: Engine,
    cpus: Vec<usize>,
    threads: Vec<Option<Shadow>>,
    lives: Vec<Arc<Live>>,
}

/// A thread's latest books, with every interval it closed.
#[derive(Debug)]
struct Shadow {
    rec: Recorder,
    cpu_s: f64,
    wait_s: Option<f64>,
    at_ns: u64,
}

/// How the generator starts an attack on a feed.
pub(crate) struct Start<'a> {
    pub plan: &'a AttackPlan,
    pub start_ns: u64,
    pub started_unix_ms: u64,
    pub engine: Engine,
    pub cpus: Vec<usize>,
    pub lives: Vec<Arc<Live>>,
}

impl LiveFeed {
    /// An empty feed, to put in [`crate::Hooks::live`].
    pub fn new() -> Arc<LiveFeed> {
        Arc::new(LiveFeed::default())
    }

    /// Changes whenever there is something new to read.
    pub fn version(&self) -> u64 {
        self.version.load(Relaxed)
    }

    /// A new attack begins: its threads' taps and the receiver the calling
    /// thread drains with [`LiveFeed::drain`].
    pub(crate) fn begin(&self, s: Start<'_>) -> (Vec<Tap>, Receiver<Frame>) {
        let n = s.lives.len();
        let (tx, rx) = std::sync::mpsc::sync_channel(FRAMES_PER_THREAD * n.max(1));
        let taps = (0..n)
            .map(|thread| Tap {
                thread,
                tx: tx.clone(),
                dropped: self.dropped.clone(),
            })
            .collect();
        if let Ok(mut st) = self.state.lock() {
            let history = std::mem::take(&mut st.history);
            *st = State {
                history,
                run: Some(Run {
                    plan: s.plan.clone(),
                    start_ns: s.start_ns,
                    started_unix_ms: s.started_unix_ms,
                    engine: s.engine,
                    cpus: s.cpus,
                    threads: (0..n).map(|_| None).collect(),
                    lives: s.lives,
                }),
                done: None,
            };
        }
        self.version.fetch_add(1, Relaxed);
        (taps, rx)
    }

    /// Take every waiting frame into the threads' books.
    pub(crate) fn drain(&self, rx: &Receiver<Frame>) {
        let frames: Vec<Frame> = rx.try_iter().collect();
        if frames.is_empty() {
            return;
        }
        if let Ok(mut st) = self.state.lock() {
            if let Some(run) = &mut st.run {
                for f in frames {
                    run.apply(f);
                }
            }
        }
        self.version.fetch_add(1, Relaxed);
    }

    /// The attack ended: from now on readers get its final document.
    pub(crate) fn finish(&self, report: &AttackReport) {
        if let Ok(mut st) = self.state.lock() {
            st.done = Some(report.clone());
            if st.history.len() == HISTORY {
                st.history.remove(0);
            }
            st.history.push(report.result.clone());
        }
        self.version.fetch_add(1, Relaxed);
    }

    /// The documents of the attacks that ended, oldest first.
    pub fn history(&self) -> Vec<AttackResult> {
        self.state
            .lock()
            .map(|st| st.history.clone())
            .unwrap_or_default()
    }

    /// The attack as it stands; `None` before the first one began.
    pub fn snapshot(&self) -> Option<LiveSnapshot> {
        let version = self.version();
        if let Ok(cache) = self.cache.lock() {
            if let Some((_, s)) = cache.as_ref().filter(|(v, _)| *v == version) {
                return Some(s.clone());
            }
        }
        let s = self.make_snapshot()?;
        if let Ok(mut cache) = self.cache.lock() {
            *cache = Some((version, s.clone()));
        }
        Some(s)
    }

    fn make_snapshot(&self) -> Option<LiveSnapshot> {
        let dropped_frames = self.dropped.load(Relaxed);
        let st = self.state.lock().ok()?;
        let run = st.run.as_ref()?;
        if let Some(done) = &st.done {
            return Some(LiveSnapshot {
                interval: done
                    .intervals
                    .first()
                    .map_or(run.plan.interval, |i| i.duration),
                report: done.clone(),
                in_flight: 0,
                dropped_frames,
                finished: true,
            });
        }
        let (output, in_flight) = run.output();
        let plan = run.plan.clone();
        drop(st);
        let width = output.threads.iter().map(|t| t.rec.interval_ns()).max();
        let mut report = crate::merge::report(&plan, output);
        // Offered so far: what was planned up to now, over the time it took
        // (the final document divides by the plan's whole duration).
        let r = &mut report.result;
        if r.elapsed_s > 0.0 {
            r.throughput_rps.offered = r.requests.planned as f64 / r.elapsed_s;
        }
        Some(LiveSnapshot {
            interval: width.map_or(plan.interval, std::time::Duration::from_nanos),
            report,
            in_flight,
            dropped_frames,
            finished: false,
        })
    }
}

impl Run {
    fn apply(&mut self, f: Frame) {
        let Some(slot) = self.threads.get_mut(f.thread) else {
            return;
        };
        let mut rec = f.books;
        if let Some(old) = slot.take() {
            let mut old = old.rec;
            // The thread widened its intervals (a long run): so do its books.
            old.coarsen_to(rec.interval_ns());
            rec.intervals = old.intervals;
        }
        if rec.intervals.len() <= f.closed {
            rec.intervals.resize_with(f.closed + 1, Interval::empty);
        }
        // The thread's whole interval, so replacing is right even when it
        // merged an interval sent before into this one.
        rec.intervals[f.closed] = f.interval;
        *slot = Some(Shadow {
            rec,
            cpu_s: f.cpu_s,
            wait_s: f.wait_s,
            at_ns: f.at_ns,
        });
    }

    /// The threads' books as the merge takes them, and the requests in
    /// flight now.
    fn output(&self) -> (RunOutput, u64) {
        let width = self
            .threads
            .iter()
            .flatten()
            .map(|s| s.rec.interval_ns())
            .max()
            .unwrap_or(0);
        let threads = self
            .threads
            .iter()
            .flatten()
            .map(|s| {
                let mut rec = s.rec.clone();
                rec.coarsen_to(width);
                rec
            })
            .collect::<Vec<_>>();
        // Only the intervals every thread has closed: each shown one is whole.
        let closed = threads.iter().map(|r| r.intervals.len()).min().unwrap_or(0);
        let threads = threads
            .into_iter()
            .zip(self.threads.iter().flatten())
            .map(|(mut rec, s)| {
                rec.intervals.truncate(closed);
                ThreadOutput {
                    rec,
                    engine: self.engine,
                    cpu_s: s.cpu_s,
                    wait_s: s.wait_s,
                    end_ns: s.at_ns,
                }
            })
            .collect::<Vec<_>>();
        let in_flight = self
            .lives
            .iter()
            .map(|l| {
                let sent = l.sent.load(Relaxed);
                sent.saturating_sub(l.ok.load(Relaxed) + l.errors.load(Relaxed))
            })
            .sum();
        let output = RunOutput {
            engine: crate::engine::ran_on(std::iter::once(self.engine)),
            threads,
            start_ns: self.start_ns,
            started_unix_ms: self.started_unix_ms,
            cpus: self.cpus.clone(),
            cancelled: false,
        };
        (output, in_flight)
    }
}
