//! A target's own pauses, from the series its runtime's Prometheus client
//! exports: the JVM's GC (Micrometer's `jvm_gc_pause_seconds`, the older
//! client's `jvm_gc_collection_seconds`), Go's GC (`go_gc_duration_seconds`)
//! and Node's GC (prom-client's `nodejs_gc_duration_seconds`). One table,
//! [`KINDS`], names them; a capacity search reads the counters at its start
//! and end and says how often the target stopped itself, for how long in
//! all, and the longest when the series has one.

/// One runtime's pause series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Kind {
    /// What pauses, as a sentence says it.
    pub what: &'static str,
    /// The counter of pauses (summed over label sets).
    pub count: &'static str,
    /// The counter of seconds paused (summed over label sets).
    pub sum: &'static str,
    /// The series holding the longest recent pause, seconds (the largest
    /// over label sets), with the labels that pick it (a summary's
    /// `quantile="1"`); `None` where the client exports none.
    pub longest: Option<(&'static str, &'static str)>,
}

/// Every pause series read, first match wins.
pub const KINDS: &[Kind] = &[
    Kind {
        what: "the JVM's GC",
        count: "jvm_gc_pause_seconds_count",
        sum: "jvm_gc_pause_seconds_sum",
        longest: Some(("jvm_gc_pause_seconds_max", "")),
    },
    Kind {
        what: "the JVM's GC",
        count: "jvm_gc_collection_seconds_count",
        sum: "jvm_gc_collection_seconds_sum",
        longest: None,
    },
    Kind {
        what: "Go's GC",
        count: "go_gc_duration_seconds_count",
        sum: "go_gc_duration_seconds_sum",
        longest: Some(("go_gc_duration_seconds", "quantile=\"1\"")),
    },
    Kind {
        what: "Node's GC",
        count: "nodejs_gc_duration_seconds_count",
        sum: "nodejs_gc_duration_seconds_sum",
        longest: None,
    },
];

/// The pause counters in one scrape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Counters {
    /// Which series they came from.
    pub kind: &'static Kind,
    /// Pauses so far.
    pub count: f64,
    /// Seconds paused so far.
    pub sum_s: f64,
    /// The longest recent pause, s, when exported.
    pub longest_s: Option<f64>,
}

/// The first [`KINDS`] entry whose counters `text` (Prometheus text) has.
pub fn read(text: &str) -> Option<Counters> {
    let samples = iolab_verify::prometheus::parse_lenient(text);
    let base = |key: &str| key.split('{').next().unwrap_or(key).to_string();
    let sum_of = |name: &str| {
        samples
            .iter()
            .filter(|(k, _)| base(k) == name)
            .map(|(_, v)| *v)
            .reduce(|a, b| a + b)
    };
    KINDS.iter().find_map(|kind| {
        let longest_s = kind.longest.and_then(|(name, labels)| {
            samples
                .iter()
                .filter(|(k, _)| base(k) == name && k.contains(labels))
                .map(|(_, v)| *v)
                .reduce(f64::max)
        });
        Some(Counters {
            kind,
            count: sum_of(kind.count)?,
            sum_s: sum_of(kind.sum)?,
            longest_s,
        })
    })
}

/// The pauses between two scrapes of the same series: (count, seconds);
/// `None` when the series changed or a counter went back (a restart).
pub fn between(first: &Counters, last: &Counters) -> Option<(f64, f64)> {
    let count = last.count - first.count;
    let sum_s = last.sum_s - first.sum_s;
    (first.kind == last.kind && count >= 0.0 && sum_s >= 0.0).then_some((count, sum_s))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spring Boot's actuator (Micrometer): a counter per GC action and
    /// cause, summed; the longest is the largest `_max`.
    #[test]
    fn reads_micrometer_gc_pauses_summed_over_their_causes() {
        let text = "# TYPE jvm_gc_pause_seconds summary\n\
            jvm_gc_pause_seconds_count{action=\"end of minor GC\",cause=\"G1 Evacuation Pause\",gc=\"G1 Young Generation\"} 40\n\
            jvm_gc_pause_seconds_sum{action=\"end of minor GC\",cause=\"G1 Evacuation Pause\",gc=\"G1 Young Generation\"} 0.8\n\
            jvm_gc_pause_seconds_count{action=\"end of major GC\",cause=\"System.gc()\",gc=\"G1 Old Generation\"} 2\n\
            jvm_gc_pause_seconds_sum{action=\"end of major GC\",cause=\"System.gc()\",gc=\"G1 Old Generation\"} 0.4\n\
            jvm_gc_pause_seconds_max{action=\"end of minor GC\",cause=\"G1 Evacuation Pause\",gc=\"G1 Young Generation\"} 0.03\n\
            jvm_gc_pause_seconds_max{action=\"end of major GC\",cause=\"System.gc()\",gc=\"G1 Old Generation\"} 0.21\n";
        let c = read(text).unwrap();
        assert_eq!(c.kind.what, "the JVM's GC");
        assert_eq!(c.count, 42.0);
        assert!((c.sum_s - 1.2).abs() < 1e-9);
        assert_eq!(c.longest_s, Some(0.21));
        let later = Counters {
            count: 50.0,
            sum_s: 1.5,
            ..c
        };
        let (n, s) = between(&c, &later).unwrap();
        assert_eq!(n, 8.0);
        assert!((s - 0.3).abs() < 1e-9);
        assert_eq!(between(&later, &c), None, "a counter went back: restarted");
    }

    /// Go's client: a summary whose `quantile="1"` is the longest recent
    /// pause; a text with no pause series reads nothing.
    #[test]
    fn reads_gos_gc_summary_and_nothing_from_other_text() {
        let text = "go_gc_duration_seconds{quantile=\"0\"} 1e-05\n\
            go_gc_duration_seconds{quantile=\"0.5\"} 4e-05\n\
            go_gc_duration_seconds{quantile=\"1\"} 0.0021\n\
            go_gc_duration_seconds_sum 0.05\n\
            go_gc_duration_seconds_count 120\n";
        let c = read(text).unwrap();
        assert_eq!(
            (c.kind.what, c.count, c.longest_s),
            ("Go's GC", 120.0, Some(0.0021))
        );
        assert_eq!(read("iolab_requests_in_flight 3\n"), None);
        let node = read("nodejs_gc_duration_seconds_sum{kind=\"minor\"} 0.2\nnodejs_gc_duration_seconds_count{kind=\"minor\"} 9\n").unwrap();
        assert_eq!((node.kind.what, node.longest_s), ("Node's GC", None));
    }
}
