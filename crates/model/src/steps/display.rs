//! The canonical text of a workload (what the parser reads back), and serde as that text.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{parse, IoArg, IoCall, Step};

/// Milliseconds as text: whole numbers bare, fractions with up to 3 decimals.
fn fmt_micros(micros: u64, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let ms = micros / 1000;
    let frac = micros % 1000;
    if frac == 0 {
        write!(f, "{ms}")
    } else {
        let s = format!("{frac:03}");
        write!(f, "{ms}.{}", s.trim_end_matches('0'))
    }
}

impl fmt::Display for IoCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:", self.kind())?;
        match self.arg() {
            IoArg::Micros(micros) => fmt_micros(*micros, f),
            IoArg::Key(key) => f.write_str(key),
        }
    }
}

impl fmt::Display for Step {
    /// The canonical text: `parse(step.to_string()) == step`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |f: &mut fmt::Formatter<'_>, name: &str, c: &[Step]| {
            write!(f, "{name}(")?;
            for (i, s) in c.iter().enumerate() {
                if i > 0 {
                    f.write_str(",")?;
                }
                write!(f, "{s}")?;
            }
            f.write_str(")")
        };
        match self {
            Step::Cpu { terms } => write!(f, "cpu:{terms}"),
            Step::Io(c) => write!(f, "{c}"),
            Step::Seq(c) => list(f, "seq", c),
            Step::Par(c) => list(f, "par", c),
        }
    }
}

impl Serialize for Step {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Step {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        parse(&text).map_err(serde::de::Error::custom)
    }
}

/// In a document a workload is its text (`seq(sleep:10,cpu:2)`), which only
/// the parser checks.
impl schemars::JsonSchema for Step {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Step".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "A workload in the steps language: `seq(sleep:10,cpu:2)`.",
        })
    }
}
