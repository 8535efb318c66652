//! The workload parser: text to [`Step`], with errors that name the offset.

use std::str::FromStr;

use super::{limits, ArgSyntax, BackendKind, IoArg, IoCall, Step};

/// A fault in a steps string, with the byte offset where it was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("steps: {message} at {position}")]
pub struct StepsError {
    /// What was wrong, e.g. "expected ')'".
    pub message: String,
    /// Byte offset into the input (0-based).
    pub position: usize,
}

impl FromStr for Step {
    type Err = StepsError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse(s)
    }
}

/// Parse and validate a steps string.
pub fn parse(input: &str) -> Result<Step, StepsError> {
    if input.len() > limits::MAX_INPUT_LEN {
        return Err(StepsError {
            message: format!("input longer than {} bytes", limits::MAX_INPUT_LEN),
            position: limits::MAX_INPUT_LEN,
        });
    }
    let mut p = Parser {
        s: input.as_bytes(),
        pos: 0,
        leaves: 0,
    };
    p.skip_ws();
    if p.at_end() {
        return Err(p.err("empty workload: expected a step such as 'sleep:100'"));
    }
    let mut items = p.list(0)?;
    p.skip_ws();
    if !p.at_end() {
        let msg = if p.peek() == Some(b')') {
            "unexpected ')'".to_string()
        } else {
            format!("unexpected '{}'", p.peek_char())
        };
        return Err(p.err(&msg));
    }
    Ok(if items.len() == 1 {
        items.pop().expect("one item")
    } else {
        Step::Seq(items)
    })
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    leaves: usize,
}

impl Parser<'_> {
    fn err(&self, message: &str) -> StepsError {
        StepsError {
            message: message.to_string(),
            position: self.pos,
        }
    }

    fn at_end(&self) -> bool {
        self.pos >= self.s.len()
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn peek_char(&self) -> char {
        std::str::from_utf8(&self.s[self.pos..])
            .ok()
            .and_then(|r| r.chars().next())
            .unwrap_or('?')
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }

    fn list(&mut self, depth: usize) -> Result<Vec<Step>, StepsError> {
        let mut items = vec![self.item(depth)?];
        loop {
            self.skip_ws();
            if self.peek() == Some(b',') {
                self.pos += 1;
                self.skip_ws();
                items.push(self.item(depth)?);
            } else {
                return Ok(items);
            }
        }
    }

    fn word(&mut self) -> &str {
        let start = self.pos;
        while matches!(self.peek(), Some(c) if c.is_ascii_alphabetic()) {
            self.pos += 1;
        }
        std::str::from_utf8(&self.s[start..self.pos]).expect("ascii")
    }

    fn item(&mut self, depth: usize) -> Result<Step, StepsError> {
        self.skip_ws();
        let start = self.pos;
        let word = self.word().to_string();
        match word.as_str() {
            "seq" | "par" => self.group(&word, depth),
            "" if self.at_end() => Err(self.err("expected a step")),
            "" => Err(self.err(&format!("expected a step, found '{}'", self.peek_char()))),
            "cpu" => {
                self.leaf_colon(&word, start)?;
                Ok(Step::Cpu {
                    terms: self.whole()?,
                })
            }
            other => match BackendKind::named(other) {
                Some(kind) => {
                    self.leaf_colon(&word, start)?;
                    self.call(kind).map(Step::Io)
                }
                None => {
                    self.pos = start;
                    Err(self.err(&format!(
                        "unknown step '{other}' (expected {})",
                        listed(&super::step_words())
                    )))
                }
            },
        }
    }

    /// `seq(...)` or `par(...)`, after its word.
    fn group(&mut self, word: &str, depth: usize) -> Result<Step, StepsError> {
        if self.peek() != Some(b'(') {
            return Err(self.err(&format!("expected '(' after '{word}'")));
        }
        if depth + 1 > limits::MAX_DEPTH {
            return Err(self.err(&format!("nesting deeper than {} levels", limits::MAX_DEPTH)));
        }
        self.pos += 1;
        self.skip_ws();
        if self.peek() == Some(b')') {
            return Err(self.err(&format!("'{word}(...)' needs at least one step")));
        }
        let children = self.list(depth + 1)?;
        self.skip_ws();
        if self.peek() != Some(b')') {
            return Err(self.err("expected ')'"));
        }
        self.pos += 1;
        Ok(if word == "seq" {
            Step::Seq(children)
        } else {
            Step::Par(children)
        })
    }

    /// The ':' after a leaf's word, counting the leaf against the limit.
    fn leaf_colon(&mut self, word: &str, start: usize) -> Result<(), StepsError> {
        if self.peek() != Some(b':') {
            return Err(self.err(&format!("expected ':' after '{word}'")));
        }
        self.pos += 1;
        self.leaves += 1;
        if self.leaves > limits::MAX_LEAVES {
            self.pos = start;
            return Err(self.err(&format!("more than {} steps", limits::MAX_LEAVES)));
        }
        Ok(())
    }

    /// A call to `kind`: its argument in the syntax its definition names.
    fn call(&mut self, kind: BackendKind) -> Result<IoCall, StepsError> {
        let arg = match kind.def().arg {
            ArgSyntax::Millis => IoArg::Micros(self.millis()?),
            ArgSyntax::Key { what } => IoArg::Key(self.key(what)?),
        };
        Ok(IoCall { kind, arg })
    }

    fn digits(&mut self) -> &str {
        let start = self.pos;
        while matches!(self.peek(), Some(c) if c.is_ascii_digit()) {
            self.pos += 1;
        }
        std::str::from_utf8(&self.s[start..self.pos]).expect("ascii")
    }

    fn whole(&mut self) -> Result<u64, StepsError> {
        let start = self.pos;
        let d = self.digits().to_string();
        if d.is_empty() {
            return Err(self.err("expected a whole number of terms"));
        }
        match d.parse::<u64>() {
            Ok(n) if n <= limits::MAX_CPU_TERMS => Ok(n),
            _ => {
                self.pos = start;
                Err(self.err(&format!(
                    "cpu terms above the limit of {}",
                    limits::MAX_CPU_TERMS
                )))
            }
        }
    }

    fn millis(&mut self) -> Result<u64, StepsError> {
        let start = self.pos;
        let int = self.digits().to_string();
        let mut text = int.clone();
        if self.peek() == Some(b'.') {
            self.pos += 1;
            let frac = self.digits().to_string();
            if frac.is_empty() {
                return Err(self.err("expected digits after '.'"));
            }
            text = format!("{int}.{frac}");
        }
        if int.is_empty() {
            self.pos = start;
            return Err(self.err("expected milliseconds, e.g. 200 or 0.5"));
        }
        let ms: f64 = text.parse().map_err(|_| self.err("bad number"))?;
        if ms > limits::MAX_MS {
            self.pos = start;
            return Err(self.err(&format!(
                "{text} ms is above the limit of {} ms",
                limits::MAX_MS
            )));
        }
        Ok((ms * 1000.0).round() as u64)
    }

    fn key(&mut self, what: &str) -> Result<String, StepsError> {
        let start = self.pos;
        while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-' | b':'))
        {
            self.pos += 1;
        }
        let key = std::str::from_utf8(&self.s[start..self.pos]).expect("ascii");
        if key.is_empty() {
            return Err(self.err(&format!("expected a {what}")));
        }
        if key.len() > limits::MAX_KEY_LEN {
            self.pos = start;
            return Err(self.err(&format!("{what} longer than {} bytes", limits::MAX_KEY_LEN)));
        }
        Ok(key.to_string())
    }
}

/// `a, b or c`: a list of words as messages name it.
pub fn listed(words: &[&str]) -> String {
    match words {
        [] => String::new(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}
