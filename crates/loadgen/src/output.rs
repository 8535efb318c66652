//! Files a report can be written to: an HdrHistogram interval log (`--hdr`)
//! and one CSV row per request (`--csv`). Both are written atomically
//! ([`write_atomic_with`]), so a reader never sees half a file.

use std::io::{self, Write};
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
use hdrhistogram::serialization::V2DeflateSerializer;
use iolab_model::attack::AttackResult;
use iolab_model::files::write_atomic_with;

use crate::report::{AttackReport, IntervalHistogram};

impl AttackReport {
    /// The HdrHistogram interval log of latency (microseconds, max column in
    /// ms), one histogram per series interval, readable by HistogramLogProcessor.
    pub fn write_hdr_log(&self, path: &Path) -> io::Result<()> {
        write_hdr_log(path, &self.result, &self.intervals)
    }

    /// One row per request: `intended_ms,sent_ms,latency_ms,status,error`
    /// (times from the run's start; `sent_ms` empty and error `not_sent` for
    /// requests that never got a connection). Needs `plan.record_requests`.
    pub fn write_csv(&self, path: &Path) -> io::Result<()> {
        write_atomic_with(path, |w| {
            writeln!(w, "intended_ms,sent_ms,latency_ms,status,error")?;
            let ms = |ns: u64| ns as f64 / 1e6;
            for r in &self.requests {
                match (r.sent_ns, r.done_ns) {
                    (Some(s), Some(d)) => writeln!(
                        w,
                        "{:.3},{:.3},{:.3},{},{}",
                        ms(r.intended_ns),
                        ms(s),
                        ms(d.saturating_sub(r.intended_ns)),
                        r.status,
                        r.error.map_or(String::new(), |e| e.label())
                    )?,
                    _ => writeln!(w, "{:.3},,,0,not_sent", ms(r.intended_ns))?,
                }
            }
            Ok(())
        })
    }
}

/// The HdrHistogram interval log of `result`'s latency from `intervals`
/// (StartTime = the run's, or the plan's for a shard, so the logs of a
/// plan's shards line up); a shard or a merge says so in a comment.
pub fn write_hdr_log(
    path: &Path,
    result: &AttackResult,
    intervals: &[IntervalHistogram],
) -> io::Result<()> {
    write_atomic_with(path, |w| {
        let start = UNIX_EPOCH + Duration::from_millis(result.started_unix_ms);
        let mut ser = V2DeflateSerializer::new();
        let mut builder = IntervalLogWriterBuilder::new();
        builder
            .add_comment(&format!("iolab attack {}", result.target))
            .add_comment("latency from intended send time, microseconds");
        if let Some(s) = &result.shard {
            builder.add_comment(&format!(
                "iolab shard {}/{} of plan {}",
                s.index, s.count, s.plan_hash
            ));
        }
        if let Some(m) = &result.merged {
            builder.add_comment(&format!(
                "iolab merge of {} shards of plan {}",
                m.shards, m.plan_hash
            ));
        }
        builder
            .with_start_time(start)
            .with_base_time(start)
            .with_max_value_divisor(1000.0);
        let mut log = builder.begin_log_with(w, &mut ser)?;
        for iv in intervals {
            log.write_histogram(&iv.histogram, iv.start, iv.duration, None)
                .map_err(|e| io::Error::other(format!("{e:?}")))?;
        }
        Ok(())
    })
}
