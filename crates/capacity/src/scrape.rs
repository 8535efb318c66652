//! A target's own Prometheus series during a capacity step (named with
//! `--metrics` and `--series`): scraped every 200 ms, the peak of each
//! kept, for the binding rules that read a service's own gauges.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

pub use iolab_telemetry::pick;

/// The target's own Prometheus series, scraped every 200 ms during a step;
/// the peak of each named series (summed over its label sets) is kept.
pub(super) struct Scraper {
    stop: Arc<AtomicBool>,
    handle: thread::JoinHandle<BTreeMap<String, f64>>,
}

impl Scraper {
    pub(super) fn start((url, series): (String, Vec<String>)) -> Scraper {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = thread::spawn(move || {
            let mut peaks: BTreeMap<String, f64> = BTreeMap::new();
            while !flag.load(Ordering::Relaxed) {
                if let Ok(r) = iolab_lab::http::get(&url, Duration::from_millis(150)) {
                    if r.status == 200 {
                        for (name, v) in pick(&r.body, &series) {
                            let peak = peaks.entry(name).or_insert(v);
                            *peak = peak.max(v);
                        }
                    }
                }
                thread::sleep(Duration::from_millis(200));
            }
            peaks
        });
        Scraper { stop, handle }
    }

    pub(super) fn finish(self) -> BTreeMap<String, f64> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_named_series_summed_over_labels() {
        let text = "# TYPE tomcat_threads_busy_threads gauge\n\
                    tomcat_threads_busy_threads{name=\"http-nio-8080\"} 12\n\
                    tomcat_threads_busy_threads{name=\"https\"} 3\n\
                    hikaricp_connections_active{pool=\"HikariPool-1\"} 4\n\
                    other 1\n";
        let names = vec![
            "tomcat_threads_busy_threads".to_string(),
            "hikaricp_connections_active".to_string(),
            "missing".to_string(),
        ];
        let m = pick(text, &names);
        assert_eq!(m.get("tomcat_threads_busy_threads"), Some(&15.0));
        assert_eq!(m.get("hikaricp_connections_active"), Some(&4.0));
        assert!(!m.contains_key("missing"));
    }
}
