//! The CPU step's work: the Leibniz series for pi, as in the E1 experiment.

/// `sum_{i=0}^{terms-1} 4 * (-1)^i / (2i + 1)`, computed term by term so the
/// cost is linear in `terms` and cannot be folded away by the optimiser.
pub fn leibniz(terms: u64) -> f64 {
    let mut acc = 0.0f64;
    let mut sign = 4.0f64;
    for i in 0..terms {
        acc += sign / (2 * i + 1) as f64;
        sign = -sign;
    }
    std::hint::black_box(acc)
}

#[cfg(test)]
mod tests {
    #[test]
    fn converges_to_pi() {
        assert!((super::leibniz(1_000_000) - std::f64::consts::PI).abs() < 1e-5);
        assert_eq!(super::leibniz(0), 0.0);
        assert_eq!(super::leibniz(1), 4.0);
    }
}
