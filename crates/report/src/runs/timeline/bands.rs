//! The three bands of a timeline and their boxes: thread lanes, the work
//! that holds no thread (packed into as few rows as overlap needs), and the
//! client's requests (a row each, by send time, under the timeout line).

use iolab_model::spans::{ClientOutcome, ClientRequest, Span, SpanState, Timeline};

use super::{outcome_colour, state_colour, state_words};
use crate::numbers::{count, ms};
use crate::svg::c;
use crate::svg::scale::Scale;

/// Most rows the no-thread band packs into (more overlapping waits share the last).
const MAX_ROWS: usize = 400;

/// What a band holds.
#[derive(Debug)]
enum Rows<'a> {
    /// One row per thread: its spans (running, IO held).
    Lanes(Vec<(String, Vec<&'a Span>)>),
    /// Packed rows of spans that hold no thread.
    Free(Vec<Vec<&'a Span>>),
    /// One row per request, and the client's timeout (ms).
    Client(&'a [ClientRequest], f64),
}

/// One band: where it is and what it holds.
#[derive(Debug)]
pub(super) struct Band<'a> {
    rows: Rows<'a>,
    /// Top edge, px.
    pub top: f64,
    /// Height, px.
    pub height: f64,
    row_h: f64,
}

/// Boxes of one kind, as one path.
#[derive(Debug)]
pub(super) struct Boxes {
    /// Path data.
    pub d: String,
    /// Fill.
    pub colour: &'static str,
    /// Tooltip.
    pub tip: String,
    /// Rows tall enough to outline each box.
    pub outline: bool,
}

fn row_height(room: f64, rows: usize, min: f64, max: f64) -> f64 {
    (room / rows.max(1) as f64).clamp(min, max)
}

/// Lay out the bands `t` has, from `top` down, `gap` apart.
pub(super) fn layout<'a>(t: &'a Timeline, top: f64, gap: f64) -> Vec<Band<'a>> {
    let mut out = Vec::new();
    let mut y = top;
    let push = |rows: Rows<'a>, n: usize, h: f64, y: &mut f64| -> Band<'a> {
        let band = Band {
            rows,
            top: *y,
            height: n as f64 * h,
            row_h: h,
        };
        *y += band.height + gap;
        band
    };
    if !t.lanes.is_empty() {
        let lanes: Vec<(String, Vec<&Span>)> = t
            .lanes
            .iter()
            .map(|l| {
                let on: Vec<&Span> = t.spans.iter().filter(|s| s.lane == Some(l.id)).collect();
                (short(&l.name), on)
            })
            .collect();
        let (n, h) = (lanes.len(), row_height(260.0, lanes.len(), 2.0, 14.0));
        out.push(push(Rows::Lanes(lanes), n, h, &mut y));
    }
    let free: Vec<&Span> = t.spans.iter().filter(|s| s.lane.is_none()).collect();
    if !free.is_empty() {
        let rows = pack(free);
        let (n, h) = (rows.len(), row_height(140.0, rows.len(), 1.0, 8.0));
        out.push(push(Rows::Free(rows), n, h, &mut y));
    }
    if let Some(cv) = t.client.as_ref().filter(|c| !c.requests.is_empty()) {
        let (n, h) = (
            cv.requests.len(),
            row_height(140.0, cv.requests.len(), 1.0, 8.0),
        );
        out.push(push(
            Rows::Client(&cv.requests, cv.timeout_ms),
            n,
            h,
            &mut y,
        ));
    }
    out
}

/// A numbered thread's family ("pool-3" -> "pool"): what a crowd of lanes
/// is labelled with.
pub(super) fn family(name: &str) -> &str {
    let trimmed = name.trim_end_matches(|c: char| c.is_ascii_digit());
    match trimmed.strip_suffix('-') {
        Some(f) if trimmed.len() < name.len() && !f.is_empty() => f,
        _ => name,
    }
}

/// A thread's name without the `iolab-` prefix every built-in thread has.
fn short(name: &str) -> String {
    name.strip_prefix("iolab-").unwrap_or(name).to_string()
}

/// First-fit rows: each span goes to the first row free at its start.
fn pack(mut spans: Vec<&Span>) -> Vec<Vec<&Span>> {
    spans.sort_by(|a, b| a.from_ms.total_cmp(&b.from_ms));
    let mut rows: Vec<Vec<&Span>> = Vec::new();
    let mut ends: Vec<f64> = Vec::new();
    for s in spans {
        match ends.iter().position(|&e| e <= s.from_ms) {
            Some(i) => {
                rows[i].push(s);
                ends[i] = s.to_ms;
            }
            None if rows.len() < MAX_ROWS => {
                rows.push(vec![s]);
                ends.push(s.to_ms);
            }
            None => {
                let last = rows.len() - 1;
                rows[last].push(s);
                ends[last] = ends[last].max(s.to_ms);
            }
        }
    }
    rows
}

/// A box from `from` to `to` ms on the row at `y` of height `h`.
fn rect(d: &mut String, x: &Scale, from: f64, to: f64, y: f64, h: f64) {
    let (x0, x1) = (x.map(from.max(0.0)), x.map(to.max(from)));
    let inset = if h >= 3.0 { 0.5 } else { 0.0 };
    d.push_str(&format!(
        "M{} {}h{}v{}h{}z",
        c(x0),
        c(y + inset),
        c((x1 - x0).max(0.6)),
        c(h - 2.0 * inset),
        c(-(x1 - x0).max(0.6))
    ));
}

/// Total and longest of some spans, for a tooltip.
fn sum_up(spans: &[&Span]) -> String {
    let total: f64 = spans.iter().map(|s| s.to_ms - s.from_ms).sum();
    let longest = spans
        .iter()
        .map(|s| s.to_ms - s.from_ms)
        .fold(0.0, f64::max);
    format!(
        "{} span{}, {} in all, longest {}",
        count(spans.len() as u64),
        if spans.len() == 1 { "" } else { "s" },
        ms(total),
        ms(longest)
    )
}

impl Band<'_> {
    /// The band's boxes, one path per kind (per lane and state, for lanes).
    pub fn boxes(&self, x: &Scale) -> Vec<Boxes> {
        let h = self.row_h;
        match &self.rows {
            Rows::Lanes(lanes) => {
                let mut out = Vec::new();
                for (i, (name, spans)) in lanes.iter().enumerate() {
                    let y = self.top + i as f64 * h;
                    for state in [SpanState::Running, SpanState::IoHeld] {
                        let of: Vec<&Span> =
                            spans.iter().copied().filter(|s| s.state == state).collect();
                        out.push(self.path(x, &of, |_| y, state, &format!("thread {i} ({name})")));
                    }
                }
                out
            }
            Rows::Free(rows) => [SpanState::Queued, SpanState::IoFree]
                .into_iter()
                .map(|state| {
                    let mut of = Vec::new();
                    let mut ys = Vec::new();
                    for (r, row) in rows.iter().enumerate() {
                        for s in row.iter().filter(|s| s.state == state) {
                            of.push(*s);
                            ys.push(self.top + r as f64 * h);
                        }
                    }
                    let mut k = 0;
                    self.path(
                        x,
                        &of,
                        |_| {
                            k += 1;
                            ys[k - 1]
                        },
                        state,
                        "no thread",
                    )
                })
                .collect(),
            Rows::Client(reqs, _) => [
                ClientOutcome::Ok,
                ClientOutcome::Timeout,
                ClientOutcome::Error,
                ClientOutcome::NotSent,
            ]
            .into_iter()
            .map(|o| self.client(x, reqs, o))
            .collect(),
        }
    }

    fn path(
        &self,
        x: &Scale,
        spans: &[&Span],
        mut y: impl FnMut(&Span) -> f64,
        state: SpanState,
        place: &str,
    ) -> Boxes {
        let mut d = String::new();
        for s in spans {
            rect(&mut d, x, s.from_ms, s.to_ms, y(s), self.row_h);
        }
        Boxes {
            d,
            colour: state_colour(state),
            tip: format!("{place}: {}: {}", state_words(state), sum_up(spans)),
            outline: self.row_h >= 6.0,
        }
    }

    fn client(&self, x: &Scale, reqs: &[ClientRequest], o: ClientOutcome) -> Boxes {
        let mut d = String::new();
        let mut n = 0u64;
        let mut longest = 0.0f64;
        for (i, r) in reqs.iter().enumerate() {
            if r.outcome != o {
                continue;
            }
            n += 1;
            let end = r.done_ms.unwrap_or(r.sent_ms);
            longest = longest.max(end - r.sent_ms);
            let y = self.top + i as f64 * self.row_h;
            rect(&mut d, x, r.sent_ms, end, y, self.row_h);
        }
        let words = match o {
            ClientOutcome::Ok => "answered",
            ClientOutcome::Timeout => "timed out",
            ClientOutcome::Error => "failed (status or connection)",
            ClientOutcome::NotSent => "not sent",
        };
        Boxes {
            d,
            colour: outcome_colour(o),
            tip: format!("client: {} {words}, longest {}", count(n), ms(longest)),
            outline: self.row_h >= 6.0,
        }
    }

    /// The client's timeout: where each request (row) gives up.
    pub fn timeout_line(&self, x: &Scale) -> Option<String> {
        let Rows::Client(reqs, timeout) = &self.rows else {
            return None;
        };
        let mut d = String::new();
        for (i, r) in reqs.iter().enumerate() {
            let px = c(x.map(r.sent_ms + timeout));
            let y = self.top + i as f64 * self.row_h;
            if i == 0 {
                d.push_str(&format!("M{px} {}", c(y)));
            } else {
                d.push_str(&format!("H{px}"));
            }
            d.push_str(&format!("V{}", c(y + self.row_h)));
        }
        Some(format!(
            "<path d=\"{d}\" fill=\"none\" stroke=\"#000000\" stroke-width=\"1\" stroke-dasharray=\"4 2\" vector-effect=\"non-scaling-stroke\"/>"
        ))
    }

    /// Labels at the left: (y, text, bold); a band too thin for two lines
    /// keeps its first.
    pub fn row_labels(&self) -> Vec<(f64, String, bool)> {
        let mut out = self.all_labels();
        if self.height < 24.0 && out.len() == 2 && out[0].2 {
            out.truncate(1);
            out[0].0 = self.top + self.height / 2.0 + 3.5;
        }
        out
    }

    fn all_labels(&self) -> Vec<(f64, String, bool)> {
        let mid = self.top + self.height / 2.0;
        match &self.rows {
            Rows::Lanes(lanes) if self.row_h >= 9.0 => {
                // Threads a batch names one by one ("pool-3") keep their
                // name; threads that share one ("pool") are numbered.
                let mut names: Vec<&str> = lanes.iter().map(|(n, _)| n.as_str()).collect();
                names.sort_unstable();
                names.dedup();
                let unique = names.len() == lanes.len();
                lanes
                    .iter()
                    .enumerate()
                    .map(|(i, (name, _))| {
                        let label = if unique {
                            name.clone()
                        } else {
                            format!("{name} {i}")
                        };
                        (self.top + (i as f64 + 0.5) * self.row_h + 3.5, label, false)
                    })
                    .collect()
            }
            Rows::Lanes(lanes) => {
                let mut names: Vec<&str> = lanes.iter().map(|(n, _)| family(n)).collect();
                names.sort_unstable();
                names.dedup();
                vec![
                    (
                        mid - 2.0,
                        format!("{} threads", count(lanes.len() as u64)),
                        true,
                    ),
                    (mid + 10.0, names.join(", "), false),
                ]
            }
            Rows::Free(_) => vec![
                (mid - 2.0, "no thread".to_string(), true),
                (mid + 10.0, "queued, waits".to_string(), false),
            ],
            Rows::Client(..) => vec![
                (mid - 2.0, "client".to_string(), true),
                (mid + 10.0, "by send time".to_string(), false),
            ],
        }
    }
}
