//! One run's timeline (`iolab.spans/1`) as SVG: the picture the classic
//! articles teach with. Top to bottom: a lane per thread (running on it,
//! waiting on IO while holding it), a band of work that holds no thread
//! (queued, IO waits on timers), and the client's view, one row per request
//! by send time, with the client's timeout as a line (each request gives up
//! where the line crosses its row).
//!
//! Boxes of one band and state are one `<path>` (a few bytes per box, so a
//! report of thousands of spans stays small), each with a tooltip that sums
//! it up. The plot sits in a group the HTML page's script zooms and pans
//! along the time axis ([`ZOOM_JS`]); without the script (a PNG, a feed
//! reader) the picture is the whole sample.

mod bands;

use iolab_model::spans::{ClientOutcome, SpanState, Timeline};

use crate::numbers::ms;
use crate::svg::scale::{Kind, Scale};
use crate::svg::{c, esc, FONT};
use bands::{Band, Boxes};

/// The script that zooms and pans every timeline of a page (inline; no
/// network, nothing but the page's own SVG).
pub const ZOOM_JS: &str = include_str!("zoom.js");

/// Width of a timeline chart: two side by side on a wide page.
pub const WIDTH: f64 = 560.0;
const LEFT: f64 = 104.0;
/// Room for half the last tick's label ("600ms").
const RIGHT: f64 = 24.0;
const TOP: f64 = 46.0;
const GAP: f64 = 8.0;

/// What to draw.
#[derive(Debug, Clone, Copy)]
pub struct Picture<'a> {
    /// The timeline.
    pub timeline: &'a Timeline,
    /// Element id, unique in the page (names the clip path too).
    pub id: &'a str,
    /// Title line.
    pub title: &'a str,
    /// Line under the title (what the sample is).
    pub subtitle: &'a str,
    /// Right end of the time axis, ms (shared by a run's measured and
    /// predicted pictures so they line up).
    pub end_ms: f64,
    /// Pictures of one group zoom together.
    pub group: &'a str,
}

/// Colour of each state (Okabe-Ito: blue running, vermillion for a thread
/// blocked on IO, green for a wait that holds none, grey queued).
pub fn state_colour(s: SpanState) -> &'static str {
    match s {
        SpanState::Queued => "#A0A0A0",
        SpanState::Running => "#0072B2",
        SpanState::IoHeld => "#D55E00",
        SpanState::IoFree => "#009E73",
    }
}

/// Colour of a client outcome.
fn outcome_colour(o: ClientOutcome) -> &'static str {
    match o {
        ClientOutcome::Ok => "#56B4E9",
        ClientOutcome::Timeout => "#CC79A7",
        ClientOutcome::Error => "#E69F00",
        ClientOutcome::NotSent => "#000000",
    }
}

/// What a state is, in words (legend and tooltips).
pub fn state_words(s: SpanState) -> &'static str {
    match s {
        SpanState::Queued => "queued (no thread)",
        SpanState::Running => "running on a thread",
        SpanState::IoHeld => "IO wait holding the thread",
        SpanState::IoFree => "IO wait holding no thread",
    }
}

/// The right end of a time axis that shows everything up to `end_ms`.
pub fn nice_end(end_ms: f64) -> f64 {
    Scale::nice(Kind::Linear, 0.0, end_ms.max(1.0)).1
}

/// Draw the picture; the SVG and how many tooltipped shapes it has.
pub fn render(p: &Picture) -> (String, usize) {
    let t = p.timeline;
    let x = Scale {
        kind: Kind::Linear,
        d0: 0.0,
        d1: p.end_ms.max(1e-3),
        r0: LEFT,
        r1: WIDTH - RIGHT,
    };
    let bands = bands::layout(t, TOP, GAP);
    let bottom = bands.last().map_or(TOP + 20.0, |b| b.top + b.height);
    let mut out = String::new();
    out.push_str(&format!(
        "<text x=\"10\" y=\"18\" font-size=\"13\" font-weight=\"bold\">{}</text><text x=\"10\" y=\"34\" font-size=\"11\" fill=\"#444444\">{}</text>",
        esc(p.title),
        esc(p.subtitle)
    ));
    for b in &bands {
        labels(&mut out, b);
    }
    out.push_str(&format!(
        "<defs><clipPath id=\"{0}-clip\"><rect x=\"{1}\" y=\"{2}\" width=\"{3}\" height=\"{4}\"/></clipPath></defs><g clip-path=\"url(#{0}-clip)\"><g class=\"tl-zoom\">",
        esc(p.id),
        c(LEFT),
        c(TOP - 2.0),
        c(x.r1 - LEFT),
        c(bottom - TOP + 4.0)
    ));
    let mut points = 0;
    for b in &bands {
        for boxes in b.boxes(&x) {
            points += draw_boxes(&mut out, &boxes);
        }
        if let Some(line) = b.timeout_line(&x) {
            out.push_str(&line);
        }
    }
    out.push_str("</g></g>");
    axis(&mut out, &x, bottom);
    let height = legend(&mut out, bottom + 40.0, t.client.is_some()) + 8.0;
    out.push_str("</svg>");
    (open(p, &x, bottom, height) + &out, points)
}

fn open(p: &Picture, x: &Scale, bottom: f64, height: f64) -> String {
    format!(
        "<svg class=\"chart timeline\" id=\"{id}\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" font-family=\"{FONT}\" font-size=\"12\" data-tl-x0=\"{x0}\" data-tl-w=\"{pw}\" data-tl-t1=\"{t1}\" data-tl-y=\"{y}\" data-tl-group=\"{g}\"><title>{title}</title><rect x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" fill=\"#ffffff\"/>",
        id = esc(p.id),
        w = WIDTH,
        h = c(height),
        x0 = c(x.r0),
        pw = c(x.r1 - x.r0),
        t1 = x.d1,
        y = c(bottom),
        g = esc(p.group),
        title = esc(p.title),
    )
}

/// A band's name at the left, and its lanes' light backgrounds.
fn labels(out: &mut String, b: &Band) {
    out.push_str(&format!(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f4f4f4\"/>",
        c(LEFT),
        c(b.top),
        c(WIDTH - RIGHT - LEFT),
        c(b.height)
    ));
    for (y, text, bold) in b.row_labels() {
        let weight = if bold { " font-weight=\"bold\"" } else { "" };
        out.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"10\" fill=\"#333333\"{weight}>{}</text>",
            c(LEFT - 6.0),
            c(y),
            esc(&text)
        ));
    }
}

/// One path of boxes with its tooltip; 1 if drawn.
fn draw_boxes(out: &mut String, b: &Boxes) -> usize {
    if b.d.is_empty() {
        return 0;
    }
    // Boxes on a lane meet end to end: a hairline of white tells them apart.
    let outline = if b.outline {
        " stroke=\"#ffffff\" stroke-width=\"0.6\" vector-effect=\"non-scaling-stroke\""
    } else {
        ""
    };
    out.push_str(&format!(
        "<path d=\"{}\" fill=\"{}\"{outline}><title>{}</title></path>",
        b.d,
        b.colour,
        esc(&b.tip)
    ));
    1
}

/// The time axis under the bands (the page's script redraws it on zoom).
fn axis(out: &mut String, x: &Scale, bottom: f64) {
    out.push_str("<g class=\"tl-axis\" fill=\"#333333\" font-size=\"10\">");
    for (v, _) in x.ticks() {
        let px = x.map(v);
        out.push_str(&format!(
            "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#555555\"/><text x=\"{0}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>",
            c(px),
            c(bottom + 2.0),
            c(bottom + 6.0),
            c(bottom + 17.0),
            esc(&ms(v))
        ));
    }
    out.push_str("</g>");
    out.push_str(&format!(
        "<path d=\"M{} {}H{}\" stroke=\"#555555\"/><text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"10\" fill=\"#333333\">time since the sample opened (scroll to zoom, drag to pan, double-click to reset)</text>",
        c(LEFT),
        c(bottom + 2.0),
        c(WIDTH - RIGHT),
        c((LEFT + WIDTH - RIGHT) / 2.0),
        c(bottom + 31.0)
    ));
}

/// The legend from `y` down; returns where it ends.
fn legend(out: &mut String, y: f64, client: bool) -> f64 {
    let mut items: Vec<(String, &str, bool)> = SpanState::ALL
        .iter()
        .map(|&s| (state_words(s).to_string(), state_colour(s), false))
        .collect();
    if client {
        for (o, words) in [
            (ClientOutcome::Ok, "client: answered"),
            (ClientOutcome::Timeout, "client: timed out"),
            (ClientOutcome::Error, "client: error"),
        ] {
            items.push((words.to_string(), outcome_colour(o), false));
        }
        items.push(("client's timeout".to_string(), "#000000", true));
    }
    out.push_str("<g class=\"legend\" font-size=\"10\" fill=\"#222222\">");
    let (mut lx, mut ly) = (10.0, y);
    for (name, colour, line) in items {
        let w = 22.0 + name.chars().count() as f64 * 5.6 + 12.0;
        if lx + w > WIDTH - 4.0 {
            lx = 10.0;
            ly += 18.0;
        }
        if line {
            out.push_str(&format!(
                "<path d=\"M{} {}h14\" stroke=\"{colour}\" stroke-dasharray=\"4 2\"/>",
                c(lx),
                c(ly + 5.0)
            ));
        } else {
            out.push_str(&format!(
                "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"10\" fill=\"{colour}\"/>",
                c(lx),
                c(ly)
            ));
        }
        out.push_str(&format!(
            "<text x=\"{}\" y=\"{}\">{}</text>",
            c(lx + 18.0),
            c(ly + 9.0),
            esc(&name)
        ));
        lx += w;
    }
    out.push_str("</g>");
    ly + 14.0
}

#[cfg(test)]
mod tests;
