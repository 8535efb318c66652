//! The least-squares line of the cost of waiting, and when a line through
//! a target's levels may be read as a cost: its points lie on it.

/// The least r² through three or more levels for a slope to count as a cost.
pub const STRAIGHT_R2: f64 = 0.9;

/// Whether points lie on their line: two always do; from three, r² says so.
pub fn straight(r2: Option<f64>, levels: usize) -> bool {
    levels <= 2 || r2.is_some_and(|r| r >= STRAIGHT_R2)
}

/// A least-squares line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    /// dy/dx.
    pub slope: f64,
    /// y at x = 0.
    pub intercept: f64,
    /// Share of the variance of y it explains (`None` when y does not vary).
    pub r2: Option<f64>,
}

/// The least-squares line through (xs, ys); `None` with fewer than two distinct xs.
pub fn fit(xs: &[f64], ys: &[f64]) -> Option<Line> {
    let n = xs.len().min(ys.len()) as f64;
    if n < 2.0 {
        return None;
    }
    let mx = xs.iter().sum::<f64>() / n;
    let my = ys.iter().sum::<f64>() / n;
    let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    let sxy: f64 = xs.iter().zip(ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let syy: f64 = ys.iter().map(|y| (y - my).powi(2)).sum();
    if sxx <= f64::EPSILON * n {
        return None;
    }
    let slope = sxy / sxx;
    Some(Line {
        slope,
        intercept: my - slope * mx,
        r2: (syy > 0.0).then(|| (sxy * sxy) / (sxx * syy)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_recovers_a_line_and_refuses_one_point() {
        let l = fit(&[100.0, 200.0, 400.0], &[10.0, 11.0, 13.0]).unwrap();
        assert!((l.slope - 0.01).abs() < 1e-12, "{l:?}");
        assert!((l.intercept - 9.0).abs() < 1e-9, "{l:?}");
        assert!((l.r2.unwrap() - 1.0).abs() < 1e-12);
        assert!(fit(&[5.0, 5.0], &[1.0, 2.0]).is_none());
        assert!(fit(&[5.0], &[1.0]).is_none());
    }
}
