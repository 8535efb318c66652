//! A share given as `5%` or `0.05` (`--precision`, `--max-drop`, a
//! preset's `precision`), read once for every flag that takes one.

/// A share (`--precision`, `--max-drop`) that cannot be used; the caller
/// names the flag.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShareError {
    /// Not a number.
    #[error("'{0}' is not a share like 5%")]
    NotShare(String),
    /// Outside 0.5%..=100%.
    #[error("'{0}': give between 0.5% and 100%")]
    Range(String),
}

/// `5%` or `0.05`.
pub fn parse_share(s: &str) -> Result<f64, ShareError> {
    let v = match s.trim().strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|p| p / 100.0),
        None => s.trim().parse::<f64>(),
    }
    .map_err(|_| ShareError::NotShare(s.to_string()))?;
    if !(0.005..=1.0).contains(&v) {
        return Err(ShareError::Range(s.to_string()));
    }
    Ok(v)
}
