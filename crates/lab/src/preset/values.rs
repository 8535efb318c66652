//! Value types of preset files that validate while they deserialize, so a bad
//! value is refused with the TOML span (hence the line) of the value itself.

use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;

use serde::de::{self, IntoDeserializer, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use iolab_model::steps::{self, Step};

/// A field given either as one value or as a list of values (a sweep axis).
#[derive(Debug, Clone, PartialEq)]
pub struct OneOrMany<T>(pub Vec<T>);

impl<T> OneOrMany<T> {
    /// The values, in the order written.
    pub fn values(&self) -> &[T] {
        &self.0
    }

    /// True when the field sweeps (more than one value).
    pub fn is_sweep(&self) -> bool {
        self.0.len() > 1
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for OneOrMany<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);

        /// Hands a scalar on to `T`'s own deserializer, so its message stays.
        macro_rules! forward {
            ($name:ident, $ty:ty) => {
                fn $name<E: de::Error>(self, v: $ty) -> Result<Self::Value, E> {
                    T::deserialize(v.into_deserializer()).map(|t| OneOrMany(vec![t]))
                }
            };
        }

        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = OneOrMany<T>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a value or a list of values (a sweep)")
            }

            forward!(visit_bool, bool);
            forward!(visit_i64, i64);
            forward!(visit_u64, u64);
            forward!(visit_f64, f64);
            forward!(visit_string, String);

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                T::deserialize(v.to_string().into_deserializer()).map(|t| OneOrMany(vec![t]))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = seq.next_element()? {
                    out.push(v);
                }
                if out.is_empty() {
                    return Err(de::Error::custom("an empty list sweeps over nothing"));
                }
                Ok(OneOrMany(out))
            }
        }

        d.deserialize_any(V(PhantomData))
    }
}

/// A duration written as text (`500ms`, `5s`, `1m`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dur(pub Duration);

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)
            .map_err(|_| de::Error::custom("expected a duration string such as \"5s\""))?;
        let v = iolab_model::parse_duration(&s).map_err(de::Error::custom)?;
        if v.is_zero() {
            return Err(de::Error::custom(format!(
                "duration '{s}' must be above zero"
            )));
        }
        Ok(Dur(v))
    }
}

/// A duration that may be zero (`"0s"`: none), for the warm-up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DurOrZero(pub Duration);

impl<'de> Deserialize<'de> for DurOrZero {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d).map_err(|_| {
            de::Error::custom("expected a duration string such as \"1s\" or \"0s\"")
        })?;
        iolab_model::parse_duration(&s)
            .map(DurOrZero)
            .map_err(de::Error::custom)
    }
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&iolab_model::format_duration(self.0))
    }
}

/// A workload steps string, parsed and validated.
#[derive(Debug, Clone, PartialEq)]
pub struct StepsText(pub Step);

impl<'de> Deserialize<'de> for StepsText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        steps::parse(&s).map(StepsText).map_err(de::Error::custom)
    }
}

/// A number above zero (rates, service times).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Positive(pub f64);

impl<'de> Deserialize<'de> for Positive {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = f64::deserialize(d)?;
        if v.is_finite() && v > 0.0 {
            Ok(Positive(v))
        } else {
            Err(de::Error::custom(format!(
                "{v} must be a number above zero"
            )))
        }
    }
}

/// A whole number above zero (threads, workers, clients, tasks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count(pub u64);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = i64::deserialize(d)?;
        if v >= 1 {
            Ok(Count(v as u64))
        } else {
            Err(de::Error::custom(format!(
                "{v} must be a whole number of at least 1"
            )))
        }
    }
}

impl Count {
    /// As a `u32`, saturating (presets never need more).
    pub fn u32(self) -> u32 {
        u32::try_from(self.0).unwrap_or(u32::MAX)
    }
}

/// A time-scale factor outside 0 < scale <= 1.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("scale {0} is out of range: it must be above 0 and at most 1 (e.g. 0.1)")]
pub struct ScaleError(pub f64);

/// A time-scale factor: 0 < scale <= 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale(pub f64);

impl Scale {
    /// Check a factor given on the command line or in a file.
    pub fn check(v: f64) -> Result<Scale, ScaleError> {
        if v.is_finite() && v > 0.0 && v <= 1.0 {
            Ok(Scale(v))
        } else {
            Err(ScaleError(v))
        }
    }
}

impl<'de> Deserialize<'de> for Scale {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Scale::check(f64::deserialize(d)?).map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct T {
        a: OneOrMany<Count>,
        d: Option<OneOrMany<Dur>>,
        s: Option<OneOrMany<StepsText>>,
    }

    #[test]
    fn one_or_many() {
        let t: T = toml::from_str("a = 3\nd = \"5s\"").unwrap();
        assert_eq!(t.a.values(), &[Count(3)]);
        assert!(!t.a.is_sweep());
        assert_eq!(t.d.unwrap().values()[0].0, Duration::from_secs(5));
        let t: T = toml::from_str("a = [1, 2]\ns = [\"sleep:1\", \"cpu:5\"]").unwrap();
        assert!(t.a.is_sweep());
        assert_eq!(t.s.unwrap().values().len(), 2);
    }

    #[test]
    fn refuses_bad_values() {
        let e = toml::from_str::<T>("a = 0").unwrap_err();
        assert!(e.message().contains("at least 1"), "{e}");
        let e = toml::from_str::<T>("a = \"x\"").unwrap_err();
        assert!(e.message().contains("invalid type"), "{e}");
        let e = toml::from_str::<T>("a = []").unwrap_err();
        assert!(e.message().contains("empty list"), "{e}");
        let e = toml::from_str::<T>("a = 1\nd = \"5\"").unwrap_err();
        assert!(e.message().contains("missing unit"), "{e}");
        let e = toml::from_str::<T>("a = 1\ns = \"nap:3\"").unwrap_err();
        assert!(e.message().contains("unknown step"), "{e}");
        assert!(Scale::check(0.0).is_err());
        assert!(Scale::check(1.5).is_err());
        assert!(Scale::check(0.25).is_ok());
    }
}
