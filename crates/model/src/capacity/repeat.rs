//! `iolab capacity --repeat N`: the same search run N times back to back,
//! and what their answers say together ([`Repeat`]). One search is one draw
//! of the machine's and the service's mood (uvicorn measured 370, 2,160,
//! 1,680, 1,840 and 1,680/s in five default searches, issue 51); the
//! spread of repeated answers is the noise measured, not modelled, as
//! hyperfine reports a command's runs.

use serde::{Deserialize, Serialize};

use super::{Interval, Search};

/// N searches of one target, together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Repeat {
    /// Searches run (each in the document's `searches`, named `NAME #k`).
    pub runs: u32,
    /// Each search's capacity, in the order run (`None`: it found none).
    pub capacities_rps: Vec<Option<f64>>,
    /// The median of the capacities found.
    pub median_rps: Option<f64>,
    /// The largest capacity found over the smallest.
    pub max_over_min: Option<f64>,
    /// Of the searches with an interval, those whose interval holds the
    /// median.
    pub intervals_holding_median: u32,
    /// Searches with an interval.
    pub intervals: u32,
    /// Where the capacity lies over every run: from the lowest end of
    /// their intervals (or capacities) to the highest.
    pub interval: Option<Interval>,
}

impl Repeat {
    /// What `searches` of one target say together.
    pub fn of(searches: &[Search]) -> Repeat {
        let caps: Vec<Option<f64>> = searches.iter().map(|s| s.capacity_rps).collect();
        let mut found: Vec<f64> = caps.iter().flatten().copied().collect();
        found.sort_by(f64::total_cmp);
        let median = match found.len() {
            0 => None,
            n => Some((found[(n - 1) / 2] + found[n / 2]) / 2.0),
        };
        let max_over_min = match (found.first(), found.last()) {
            (Some(lo), Some(hi)) if *lo > 0.0 => Some(hi / lo),
            _ => None,
        };
        let with: Vec<Interval> = searches.iter().filter_map(|s| s.interval).collect();
        let holding = median.map_or(0, |m| {
            with.iter()
                .filter(|i| i.low_rps <= m && m <= i.high_rps)
                .count() as u32
        });
        let lows = with.iter().map(|i| i.low_rps).chain(found.first().copied());
        let highs = with.iter().map(|i| i.high_rps).chain(found.last().copied());
        let interval = lows
            .reduce(f64::min)
            .zip(highs.reduce(f64::max))
            .map(|(low_rps, high_rps)| Interval { low_rps, high_rps });
        Repeat {
            runs: searches.len() as u32,
            capacities_rps: caps,
            median_rps: median,
            max_over_min,
            intervals_holding_median: holding,
            intervals: with.len() as u32,
            interval,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(cap: Option<f64>, i: Option<(f64, f64)>) -> Search {
        Search {
            capacity_rps: cap,
            interval: i.map(|(low_rps, high_rps)| Interval { low_rps, high_rps }),
            ..Search::default()
        }
    }

    #[test]
    fn five_runs_give_their_median_spread_and_the_interval_over_all() {
        let r = Repeat::of(&[
            search(Some(370.0), Some((350.0, 400.0))),
            search(Some(2160.0), Some((2000.0, 2300.0))),
            search(Some(1680.0), Some((1600.0, 1800.0))),
            search(Some(1840.0), Some((1700.0, 1950.0))),
            search(None, None),
        ]);
        assert_eq!(r.runs, 5);
        assert_eq!(r.median_rps, Some((1680.0 + 1840.0) / 2.0));
        assert!((r.max_over_min.unwrap() - 2160.0 / 370.0).abs() < 1e-9);
        // 1,760 lies in 1,700-1,950 and 1,600-1,800 only.
        assert_eq!((r.intervals_holding_median, r.intervals), (2, 4));
        assert_eq!(
            r.interval,
            Some(Interval {
                low_rps: 350.0,
                high_rps: 2300.0
            })
        );
    }

    #[test]
    fn runs_that_found_nothing_give_no_figures() {
        let r = Repeat::of(&[search(None, None), search(None, None)]);
        assert_eq!(
            (r.median_rps, r.max_over_min, r.interval),
            (None, None, None)
        );
    }
}
