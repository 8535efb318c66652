//! Scales from data to pixels, and their ticks: linear with 1-2-5 steps,
//! log10 with decades, and the percentile scale of latency spectra
//! (x = 1/(1-p), labelled 0%, 90%, 99%, 99.9%, ...).

use crate::numbers::num;

/// How data maps to a pixel range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// Proportional.
    Linear,
    /// Log base 10 (data must be > 0).
    Log,
    /// Percentiles 0..100 mapped as log10(1/(1-p/100)).
    Percentile,
}

/// A scale: domain `d0..d1` onto pixels `r0..r1`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    /// Mapping kind.
    pub kind: Kind,
    /// Domain start.
    pub d0: f64,
    /// Domain end.
    pub d1: f64,
    /// Pixel start.
    pub r0: f64,
    /// Pixel end.
    pub r1: f64,
}

fn tr(kind: Kind, v: f64) -> f64 {
    match kind {
        Kind::Linear => v,
        Kind::Log => v.max(1e-12).log10(),
        Kind::Percentile => (1.0 / (1.0 - (v / 100.0).min(0.999_999_9))).log10(),
    }
}

impl Scale {
    /// A scale that covers `lo..hi` with round ends.
    pub fn nice(kind: Kind, lo: f64, hi: f64) -> (f64, f64) {
        match kind {
            Kind::Linear => {
                let (lo, hi) = if hi - lo < 1e-12 {
                    (
                        lo - 1.0_f64.max(lo.abs() * 0.1),
                        hi + 1.0_f64.max(hi.abs() * 0.1),
                    )
                } else {
                    (lo, hi)
                };
                let step = step(hi - lo, 5);
                ((lo / step).floor() * step, (hi / step).ceil() * step)
            }
            Kind::Log => {
                let lo = lo.max(1e-9);
                let hi = hi.max(lo);
                // Round out to 1-2-5 steps, not whole decades: less empty space.
                let down = |v: f64| {
                    let d = 10f64.powf(v.log10().floor());
                    [5.0, 2.0, 1.0]
                        .into_iter()
                        .map(|m| m * d)
                        .find(|&x| x <= v * 1.000_001)
                        .unwrap_or(d)
                };
                let up = |v: f64| {
                    let d = 10f64.powf(v.log10().floor());
                    [1.0, 2.0, 5.0, 10.0]
                        .into_iter()
                        .map(|m| m * d)
                        .find(|&x| x >= v * 0.999_999)
                        .unwrap_or(d * 10.0)
                };
                let (a, mut b) = (down(lo), up(hi));
                if b <= a {
                    b = up(a * 1.5);
                }
                (a, b)
            }
            Kind::Percentile => {
                let top = [90.0, 99.0, 99.9, 99.99, 99.999, 99.9999]
                    .into_iter()
                    .find(|&p| p >= hi)
                    .unwrap_or(99.9999);
                (0.0, top)
            }
        }
    }

    /// Pixel of a data value.
    pub fn map(&self, v: f64) -> f64 {
        let (a, b) = (tr(self.kind, self.d0), tr(self.kind, self.d1));
        let t = if (b - a).abs() < 1e-12 {
            0.5
        } else {
            (tr(self.kind, v) - a) / (b - a)
        };
        self.r0 + t * (self.r1 - self.r0)
    }

    /// Tick values and labels.
    pub fn ticks(&self) -> Vec<(f64, String)> {
        match self.kind {
            Kind::Linear => {
                let s = step(self.d1 - self.d0, 5);
                let mut out = Vec::new();
                let mut v = (self.d0 / s).ceil() * s;
                while v <= self.d1 + s * 1e-9 {
                    out.push((v, label(v)));
                    v += s;
                }
                out
            }
            Kind::Log => {
                let mut out = Vec::new();
                let decades = (self.d1 / self.d0).log10();
                let mults: &[f64] = if decades <= 2.5 {
                    &[1.0, 2.0, 5.0]
                } else {
                    &[1.0]
                };
                let mut d = 10f64.powf(self.d0.log10().floor());
                while d <= self.d1 * 1.000_001 {
                    for m in mults {
                        let v = d * m;
                        if v >= self.d0 * 0.999_999 && v <= self.d1 * 1.000_001 {
                            out.push((v, label(v)));
                        }
                    }
                    d *= 10.0;
                }
                out
            }
            Kind::Percentile => [0.0, 90.0, 99.0, 99.9, 99.99, 99.999, 99.9999]
                .into_iter()
                .filter(|&p| p <= self.d1 + 1e-9)
                .map(|p| (p, format!("{}%", num(p, 4))))
                .collect(),
        }
    }
}

/// A 1-2-5 step giving about `n` intervals over `span`.
fn step(span: f64, n: usize) -> f64 {
    let raw = (span / n as f64).max(1e-12);
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// A short tick label: `0`, `250`, `1.5`, `2k`, `10k`, `0.01`.
pub fn label(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 && (a / 1e6).fract() == 0.0 {
        format!("{}M", num(v / 1e6, 1))
    } else if a >= 1e3 && ((a / 1e3) * 10.0).fract().abs() < 1e-9 {
        format!("{}k", num(v / 1e3, 1))
    } else if a >= 1.0 || a == 0.0 {
        num(v, 1)
    } else {
        num(v, 4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_ranges_and_ticks() {
        assert_eq!(Scale::nice(Kind::Linear, 0.0, 780.0), (0.0, 800.0));
        assert_eq!(Scale::nice(Kind::Log, 0.9, 2100.0), (0.5, 5_000.0));
        let s = Scale {
            kind: Kind::Log,
            d0: 1.0,
            d1: 1000.0,
            r0: 0.0,
            r1: 300.0,
        };
        assert_eq!(s.map(10.0).round(), 100.0);
        let p = Scale {
            kind: Kind::Percentile,
            d0: 0.0,
            d1: 99.9,
            r0: 0.0,
            r1: 300.0,
        };
        assert_eq!(p.map(99.0).round(), 200.0);
        assert_eq!(
            p.ticks().iter().map(|t| t.1.as_str()).collect::<Vec<_>>(),
            ["0%", "90%", "99%", "99.9%"]
        );
        assert_eq!(label(2000.0), "2k");
    }
}
