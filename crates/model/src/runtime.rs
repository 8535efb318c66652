//! [`Runtime`]: where a target runs. `rust` is built into the iolab binary;
//! every other name is a folder under `runtimes/` whose manifest the lab reads
//! (`jvm`, `node`, `ruby`, `python`, `scala`, `play`), so adding a runtime
//! adds no variant here.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Where a target runs: `rust` (built in) or the name of a runtime folder.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Runtime(String);

impl Default for Runtime {
    fn default() -> Self {
        Runtime::rust()
    }
}

impl Runtime {
    /// The built-in runtime.
    pub fn rust() -> Runtime {
        Runtime("rust".into())
    }

    /// A runtime by name, checked to be a plain folder name (`[a-z0-9-]`).
    pub fn named(name: &str) -> Result<Runtime, String> {
        let ok = !name.is_empty()
            && name.len() <= 32
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if ok {
            Ok(Runtime(name.to_string()))
        } else {
            Err(format!(
                "runtime '{name}' is not a runtime name: use rust or a folder under runtimes/ (e.g. jvm, node, python)"
            ))
        }
    }

    /// Built into the iolab binary?
    pub fn is_rust(&self) -> bool {
        self.0 == "rust"
    }

    /// Its name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_folder_names_and_serialize_plainly() {
        assert!(Runtime::default().is_rust());
        assert_eq!(Runtime::named("node").unwrap().as_str(), "node");
        assert!(Runtime::named("../etc").is_err());
        assert!(Runtime::named("").is_err());
        let v = serde_json::to_value(Runtime::named("jvm").unwrap()).unwrap();
        assert_eq!(v, "jvm");
        let r: Runtime = serde_json::from_str("\"rust\"").unwrap();
        assert!(r.is_rust());
    }
}
