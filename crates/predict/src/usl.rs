//! The Universal Scalability Law fitted to a closed-loop sweep:
//! X(n) = λ n / (1 + σ (n - 1) + κ n (n - 1)), by nonlinear least squares.
//!
//! - **Start**: λ0 = the largest X(n) / n (usl4j's guess), then σ and κ by
//!   linear least squares on the transformed law n λ0 / X(n) - 1 =
//!   σ (n - 1) + κ n (n - 1) (Gunther's linearization, what usl4j did
//!   before it moved to Levenberg-Marquardt).
//! - **Refine**: Levenberg-Marquardt on the three parameters (Marquardt's
//!   damping of the diagonal, so σ ~ 0.1, κ ~ 1e-4 and λ ~ 100 each get
//!   steps of their own size), with σ kept in 0..1 and κ >= 0 after every
//!   step, as R's `usl` package bounds them: a negative κ or σ describes no
//!   system.
//! - **Confidence intervals**: from the Jacobian's covariance at the
//!   solution, s^2 (J^T J)^-1 with s^2 = residual sum of squares / (m - 3),
//!   each parameter ± Student's t(0.975, m - 3) x its standard error. Not a
//!   bootstrap: six to eight levels are too few to resample.
//! - **Peak** N* = sqrt((1 - σ) / κ), only when κ's interval lies above 0
//!   and κ n (n - 1) is at least [`KAPPA_FELT`] of the denominator at the
//!   largest level n swept: a κ the sweep cannot tell from zero describes
//!   no fall, and its N* would be a number the data never saw (infinite at
//!   κ = 0).

use iolab_model::capacity::usl::{usl, Estimate, UslFit};

/// Fewest levels fitted (usl4j's minimum): three parameters and three
/// degrees of freedom left for their intervals.
pub const MIN_LEVELS: usize = 6;

/// κ is taken for 0 when its share of the law's denominator at the largest
/// level swept is below this: it changes no throughput the sweep could see.
pub const KAPPA_FELT: f64 = 1e-4;

/// Most Levenberg-Marquardt iterations.
const MAX_ITERATIONS: u32 = 500;

/// Fit the law to `(n, X(n))` points (clients, req/s); `None` with fewer
/// than [`MIN_LEVELS`] points of positive throughput, or fewer than three
/// distinct client counts.
pub fn fit(points: &[(f64, f64)]) -> Option<UslFit> {
    let pts: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|(n, x)| n.is_finite() && x.is_finite() && *n >= 1.0 && *x > 0.0)
        .collect();
    let mut distinct: Vec<f64> = pts.iter().map(|p| p.0).collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    if pts.len() < MIN_LEVELS || distinct.len() < 3 {
        return None;
    }
    let p = refine(&pts, start(&pts));
    let rss = rss(&pts, p);
    let m = pts.len();
    let cov =
        invert(&normal(&pts, p).0).map(|inv| inv.map(|row| row.map(|v| v * rss / (m - 3) as f64)));
    let t = t975(m - 3);
    let estimate = |i: usize| {
        let se = cov.map_or(f64::NAN, |c| c[i][i].max(0.0).sqrt());
        Estimate {
            value: p[i],
            low: p[i] - t * se,
            high: p[i] + t * se,
        }
    };
    let (sigma, kappa, lambda) = (estimate(0), estimate(1), estimate(2));
    let top = distinct[distinct.len() - 1];
    let felt = kappa.value * top * (top - 1.0) >= KAPPA_FELT * (1.0 + sigma.value * (top - 1.0));
    let peak_concurrency = (kappa.low > 0.0 && felt && sigma.value < 1.0)
        .then(|| ((1.0 - sigma.value) / kappa.value).sqrt());
    let mean = pts.iter().map(|q| q.1).sum::<f64>() / m as f64;
    let tss: f64 = pts.iter().map(|q| (q.1 - mean).powi(2)).sum();
    Some(UslFit {
        sigma,
        kappa,
        lambda,
        peak_concurrency,
        peak_rps: peak_concurrency.map(|n| usl(p[2], p[0], p[1], n)),
        r_squared: if tss > 0.0 { 1.0 - rss / tss } else { 1.0 },
        levels: m as u32,
    })
}

/// The parameters, in the order (σ, κ, λ).
type Params = [f64; 3];

/// λ0 = max X(n)/n; σ, κ by least squares on the linearized law.
fn start(pts: &[(f64, f64)]) -> Params {
    let lambda = pts.iter().map(|(n, x)| x / n).fold(0.0, f64::max);
    // y = σ a + κ b, a = n - 1, b = n (n - 1), no intercept.
    let (mut saa, mut sab, mut sbb, mut say, mut sby) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(n, x) in pts {
        let (a, b, y) = (n - 1.0, n * (n - 1.0), n * lambda / x - 1.0);
        saa += a * a;
        sab += a * b;
        sbb += b * b;
        say += a * y;
        sby += b * y;
    }
    let det = saa * sbb - sab * sab;
    let (sigma, kappa) = if det.abs() > 1e-12 * saa * sbb {
        ((say * sbb - sby * sab) / det, (saa * sby - sab * say) / det)
    } else {
        (0.1, 0.01)
    };
    clamp([sigma, kappa, lambda])
}

/// σ in 0..1, κ >= 0, λ > 0.
fn clamp(p: Params) -> Params {
    [p[0].clamp(0.0, 1.0), p[1].max(0.0), p[2].max(1e-12)]
}

/// The law and its gradient in (σ, κ, λ) at `n`.
fn model(p: Params, n: f64) -> (f64, Params) {
    let [sigma, kappa, lambda] = p;
    let d = 1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0);
    let x = lambda * n / d;
    let dd = -lambda * n / (d * d);
    (x, [dd * (n - 1.0), dd * n * (n - 1.0), n / d])
}

fn rss(pts: &[(f64, f64)], p: Params) -> f64 {
    pts.iter().map(|&(n, x)| (x - model(p, n).0).powi(2)).sum()
}

/// J^T J and J^T r at `p`.
fn normal(pts: &[(f64, f64)], p: Params) -> ([[f64; 3]; 3], Params) {
    let mut jtj = [[0.0; 3]; 3];
    let mut jtr = [0.0; 3];
    for &(n, x) in pts {
        let (f, g) = model(p, n);
        for i in 0..3 {
            jtr[i] += g[i] * (x - f);
            for j in 0..3 {
                jtj[i][j] += g[i] * g[j];
            }
        }
    }
    (jtj, jtr)
}

/// Levenberg-Marquardt from `p`, each step projected into the bounds.
fn refine(pts: &[(f64, f64)], mut p: Params) -> Params {
    let mut mu = 1e-3;
    let mut cost = rss(pts, p);
    for _ in 0..MAX_ITERATIONS {
        let (jtj, jtr) = normal(pts, p);
        let mut a = jtj;
        for (i, row) in a.iter_mut().enumerate() {
            row[i] += mu * jtj[i][i].max(1e-300);
        }
        let Some(inv) = invert(&a) else {
            mu *= 10.0;
            continue;
        };
        let step: Params = std::array::from_fn(|i| (0..3).map(|j| inv[i][j] * jtr[j]).sum());
        let next = clamp([p[0] + step[0], p[1] + step[1], p[2] + step[2]]);
        let c = rss(pts, next);
        if c < cost {
            let done = (cost - c) <= 1e-15 * cost.max(1e-300);
            p = next;
            cost = c;
            mu = (mu / 10.0).max(1e-12);
            if done {
                break;
            }
        } else {
            mu *= 10.0;
            if mu > 1e12 {
                break;
            }
        }
    }
    p
}

/// A 3 x 3 inverse by cofactors; `None` when singular.
fn invert(m: &[[f64; 3]; 3]) -> Option<[[f64; 3]; 3]> {
    let c = |i: usize, j: usize| {
        let (r0, r1) = ((i + 1) % 3, (i + 2) % 3);
        let (c0, c1) = ((j + 1) % 3, (j + 2) % 3);
        m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0]
    };
    let det = m[0][0] * c(0, 0) + m[0][1] * c(0, 1) + m[0][2] * c(0, 2);
    let scale = m.iter().flatten().fold(0.0f64, |a, v| a.max(v.abs()));
    if !det.is_finite() || det.abs() <= 1e-300 || det.abs() <= (f64::EPSILON * scale).powi(3) {
        return None;
    }
    // The inverse is the transposed cofactor matrix over the determinant.
    Some(std::array::from_fn(|i| {
        std::array::from_fn(|j| c(j, i) / det)
    }))
}

/// Student's t at 0.975 (a two-sided 95% interval) for `df` degrees of freedom.
pub fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        _ => 1.96 + 2.4 / df as f64,
    }
}

#[cfg(test)]
mod tests;
