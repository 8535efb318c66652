//! `iolab k8s`'s flags checked as the Kubernetes API server checks them, so
//! a manifest `kubectl apply` would refuse is never written: issue 49
//! finding 22 found `--cpu banana`, `--storage banana`, `--namespace 'Not
//! Valid!'` and `--image ''` written into manifests, and finding 12 a
//! `--name` holding a newline echoed as a two-line error.

use iolab_model::text::printable;

/// A flag Kubernetes would refuse.
#[derive(Debug, thiserror::Error)]
#[error("{flag} '{}': {rule}", printable(value))]
pub struct K8sFlagError {
    /// The flag, e.g. `--cpu`.
    pub flag: &'static str,
    /// What was given.
    pub value: String,
    /// What Kubernetes takes, and an example.
    pub rule: &'static str,
}

fn refuse(flag: &'static str, value: &str, rule: &'static str) -> K8sFlagError {
    K8sFlagError {
        flag,
        value: value.to_string(),
        rule,
    }
}

/// A name Kubernetes accepts for every object made from it (the Job, its
/// Service and claim add suffixes, hence 50, not 63).
pub fn name(s: &str) -> Result<(), K8sFlagError> {
    match s.len() <= 50 && s.starts_with(|c: char| c.is_ascii_lowercase()) && label_chars(s) {
        true => Ok(()),
        false => Err(refuse(
            "--name",
            s,
            "use lowercase letters, digits and '-', at most 50 characters, starting with a letter",
        )),
    }
}

/// A namespace: an RFC 1123 label (`kubectl create namespace` refuses others).
pub fn namespace(s: &str) -> Result<(), K8sFlagError> {
    match !s.is_empty() && s.len() <= 63 && label_chars(s) {
        true => Ok(()),
        false => Err(refuse(
            "--namespace",
            s,
            "an RFC 1123 label: lowercase letters, digits and '-', at most 63, starting and ending with a letter or digit (e.g. load-test)",
        )),
    }
}

/// Lowercase letters, digits and inner '-'.
fn label_chars(s: &str) -> bool {
    !s.starts_with('-')
        && !s.ends_with('-')
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// A storage class or claim name: an RFC 1123 subdomain.
pub fn subdomain(flag: &'static str, s: &str) -> Result<(), K8sFlagError> {
    let ok =
        !s.is_empty() && s.len() <= 253 && s.split('.').all(|l| !l.is_empty() && label_chars(l));
    match ok {
        true => Ok(()),
        false => Err(refuse(
            flag,
            s,
            "an RFC 1123 name: lowercase letters, digits, '-' and '.' (e.g. fast-ssd)",
        )),
    }
}

/// An image reference: not empty, no spaces or control characters.
pub fn image(s: &str) -> Result<(), K8sFlagError> {
    let ok = !s.is_empty() && !s.chars().any(|c| c.is_whitespace() || c.is_control());
    match ok {
        true => Ok(()),
        false => Err(refuse(
            "--image",
            s,
            "give the image with iolab on its PATH, e.g. registry.example/iolab:1",
        )),
    }
}

/// A CPU request: a quantity above 0, in cores or millicores (`2`, `0.5`,
/// `500m`).
pub fn cpu(s: &str) -> Result<(), K8sFlagError> {
    match quantity(s, &["", "m"]) {
        true => Ok(()),
        false => Err(refuse(
            "--cpu",
            s,
            "a CPU quantity above 0, in cores or millicores (e.g. 2, 0.5, 500m)",
        )),
    }
}

/// A storage size: a quantity above 0 with a byte suffix (`1Gi`, `500M`).
pub fn storage(s: &str) -> Result<(), K8sFlagError> {
    let suffixes = [
        "", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
    ];
    match quantity(s, &suffixes) {
        true => Ok(()),
        false => Err(refuse(
            "--storage",
            s,
            "a size above 0, e.g. 1Gi, 500Mi or 10G",
        )),
    }
}

/// Digits (with one optional fraction) above 0, then one of `suffixes`.
fn quantity(s: &str, suffixes: &[&str]) -> bool {
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(end);
    let digits_ok = !number.is_empty()
        && number.matches('.').count() <= 1
        && number.chars().any(|c| c.is_ascii_digit());
    digits_ok && suffixes.contains(&suffix) && number.parse::<f64>().is_ok_and(|v| v > 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_kubernetes_accepts_and_refuses() {
        assert!(name("iolab-e2").is_ok());
        for bad in [
            "",
            "Iolab",
            "9x",
            "a_b",
            "x-",
            &"a".repeat(51),
            "x\nkind: Secret",
        ] {
            assert!(name(bad).is_err(), "{bad}");
        }
        assert!(namespace("load-test").is_ok());
        assert!(namespace("Not Valid!").is_err());
        assert!(cpu("500m").is_ok() && cpu("2").is_ok() && cpu("0.5").is_ok());
        for bad in ["banana", "0", "", "1.2.3", "-1", "5x"] {
            assert!(cpu(bad).is_err(), "{bad}");
        }
        assert!(storage("1Gi").is_ok() && storage("500M").is_ok());
        assert!(storage("banana").is_err() && storage("0Gi").is_err());
        assert!(image("").is_err() && image("a b").is_err() && image("r/i:1").is_ok());
        assert!(subdomain("--storage-class", "fast.ssd").is_ok());
        assert!(subdomain("--storage-class", "Fast SSD").is_err());
    }

    #[test]
    fn r38_12_a_name_with_a_newline_is_one_line() {
        let e = name("x\nkind: Secret").unwrap_err().to_string();
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.contains("x\\nkind: Secret"), "{e}");
    }
}
