//! The arithmetic a manifest's defaults may use, because a runtime's own
//! defaults follow the machine: `"cores"`, `"cores - 1"`, `"max(cores, 4)"`,
//! `"clamp(cores, 8, 24)"`, `"min(32, cores + 4)"`. Whole numbers, `cores`,
//! `+ - *`, parentheses and `min`/`max`/`clamp`; written by hand because the
//! language is five rules and a crate would be larger than it.

use serde::de::{self, Deserializer};
use serde::Deserialize;

/// Why a default's expression does not evaluate.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExprError {
    /// A character or word where it cannot be.
    #[error("unexpected '{0}'")]
    Unexpected(String),
    /// A missing token.
    #[error("expected '{want}', found '{found}'")]
    Expected {
        /// What was needed.
        want: String,
        /// What was there (`end` at the end).
        found: String,
    },
    /// The text ends where a value was due.
    #[error("expected a value, found the end")]
    NoValue,
    /// A name other than the four.
    #[error("unknown name '{0}' (use cores, min, max, clamp)")]
    Name(String),
    /// A function given the wrong arguments.
    #[error("{name} takes {}", if name == "clamp" { "3 values" } else { "values" })]
    Arguments {
        /// The function.
        name: String,
    },
}

/// A default: a number, or an expression of `cores`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Default {
    /// A fixed value.
    Fixed(u32),
    /// Checked text, evaluated for a machine.
    Expr(String),
}

impl Default {
    /// The value on a machine of `cores` cores (at least 1).
    pub fn value(&self, cores: u32) -> u32 {
        match self {
            Default::Fixed(n) => *n,
            Default::Expr(e) => {
                eval(e, i64::from(cores)).map_or(1, |v| v.clamp(1, i64::from(u32::MAX)) as u32)
            }
        }
    }
}

impl Default {
    /// The rule as the manifest writes it: `2,048`, `2 * cores + 1`.
    pub fn rule(&self) -> String {
        match self {
            Default::Fixed(n) => iolab_model::limits::thousands(u64::from(*n)),
            Default::Expr(e) => e.clone(),
        }
    }
}

impl<'de> Deserialize<'de> for Default {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(u32),
            S(String),
        }
        match Raw::deserialize(d)? {
            Raw::N(n) => Ok(Default::Fixed(n)),
            Raw::S(s) => eval(&s, 2).map(|_| Default::Expr(s.clone())).map_err(|e| {
                de::Error::custom(format!("default '{s}': {e} (e.g. \"max(cores, 4)\")"))
            }),
        }
    }
}

/// Evaluate `text` with `cores`.
pub fn eval(text: &str, cores: i64) -> Result<i64, ExprError> {
    let tokens = tokens(text)?;
    let mut p = Parser {
        t: &tokens,
        i: 0,
        cores,
    };
    let v = p.sum()?;
    if p.i != tokens.len() {
        return Err(ExprError::Unexpected(tokens[p.i].clone()));
    }
    Ok(v)
}

fn tokens(text: &str) -> Result<Vec<String>, ExprError> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c.is_ascii_alphanumeric() {
            let mut w = String::new();
            while let Some(&c) = chars.peek().filter(|c| c.is_ascii_alphanumeric()) {
                w.push(c);
                chars.next();
            }
            out.push(w);
        } else if "+-*(),".contains(c) {
            out.push(c.to_string());
            chars.next();
        } else {
            return Err(ExprError::Unexpected(c.to_string()));
        }
    }
    Ok(out)
}

struct Parser<'a> {
    t: &'a [String],
    i: usize,
    cores: i64,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.t.get(self.i).map(String::as_str)
    }

    fn take(&mut self, s: &str) -> Result<(), ExprError> {
        match self.peek() {
            Some(t) if t == s => {
                self.i += 1;
                Ok(())
            }
            other => Err(ExprError::Expected {
                want: s.to_string(),
                found: other.unwrap_or("end").to_string(),
            }),
        }
    }

    fn sum(&mut self) -> Result<i64, ExprError> {
        let mut v = self.product()?;
        while let Some(op) = self.peek().filter(|t| *t == "+" || *t == "-") {
            let plus = op == "+";
            self.i += 1;
            let r = self.product()?;
            v = if plus {
                v.saturating_add(r)
            } else {
                v.saturating_sub(r)
            };
        }
        Ok(v)
    }

    fn product(&mut self) -> Result<i64, ExprError> {
        let mut v = self.atom()?;
        while self.peek() == Some("*") {
            self.i += 1;
            v = v.saturating_mul(self.atom()?);
        }
        Ok(v)
    }

    fn atom(&mut self) -> Result<i64, ExprError> {
        let t = self.peek().ok_or(ExprError::NoValue)?.to_string();
        self.i += 1;
        if t == "(" {
            let v = self.sum()?;
            self.take(")")?;
            return Ok(v);
        }
        if t == "cores" {
            return Ok(self.cores);
        }
        if let Ok(n) = t.parse::<i64>() {
            return Ok(n);
        }
        let f: fn(&[i64]) -> Option<i64> = match t.as_str() {
            "min" => |a| a.iter().copied().min(),
            "max" => |a| a.iter().copied().max(),
            "clamp" => |a| (a.len() == 3).then(|| a[0].clamp(a[1], a[2].max(a[1]))),
            _ => return Err(ExprError::Name(t)),
        };
        self.take("(")?;
        let mut args = vec![self.sum()?];
        while self.peek() == Some(",") {
            self.i += 1;
            args.push(self.sum()?);
        }
        self.take(")")?;
        f(&args).ok_or(ExprError::Arguments { name: t })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_runtimes_have() {
        assert_eq!(eval("cores", 2), Ok(2));
        assert_eq!(eval("max(cores, 4)", 2), Ok(4));
        assert_eq!(eval("clamp(cores, 8, 24)", 32), Ok(24));
        assert_eq!(eval("min(32, cores + 4)", 2), Ok(6));
        assert_eq!(eval("cores - 1", 2), Ok(1));
        assert_eq!(eval("2 * cores + 1", 2), Ok(5));
        assert_eq!(Default::Expr("cores - 1".into()).value(1), 1);
        for bad in [
            "",
            "cores +",
            "sqrt(4)",
            "max(1",
            "clamp(1, 2)",
            "1 2",
            "c%",
        ] {
            assert!(eval(bad, 2).is_err(), "{bad}");
        }
    }
}
