//! Finding where a chunked body ends (the generator skips bodies, so no
//! byte of one is kept; `verify` keeps them, [`Chunked::feed_with`]). By hand: `httparse::parse_chunk_size` reads one size
//! line from a buffer, but bodies arrive in pieces split anywhere, and this
//! state machine takes them a byte or a chunk at a time without copying.

use super::head::Malformed;

/// Incremental chunked-body decoder that only finds the end of the body.
#[derive(Debug, Default)]
pub struct Chunked {
    state: State,
    size: u64,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum State {
    #[default]
    Size,
    Ext,
    SizeLf,
    Data,
    DataCr,
    DataLf,
    TrailerStart,
    Trailer,
    TrailerLf,
    EndLf,
}

impl Chunked {
    /// Feed bytes; `Ok(Some(rest))` when the body ended with `rest` bytes
    /// left over, `Err` for a malformed size or framing.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Option<usize>, Malformed> {
        self.feed_with(bytes, &mut |_| {})
    }

    /// [`Chunked::feed`], handing each piece of chunk data to `data` as it
    /// passes.
    pub fn feed_with(
        &mut self,
        mut bytes: &[u8],
        data: &mut impl FnMut(&[u8]),
    ) -> Result<Option<usize>, Malformed> {
        use State::*;
        while !bytes.is_empty() {
            if self.state == Data {
                let take = (self.size.min(bytes.len() as u64)) as usize;
                data(&bytes[..take]);
                self.size -= take as u64;
                bytes = &bytes[take..];
                if self.size == 0 {
                    self.state = DataCr;
                }
                continue;
            }
            let b = bytes[0];
            bytes = &bytes[1..];
            self.state = match (self.state, b) {
                (Size, b) if b.is_ascii_hexdigit() => {
                    let d = (b as char).to_digit(16).unwrap_or(0) as u64;
                    self.size = self
                        .size
                        .checked_mul(16)
                        .ok_or(Malformed("chunk size past 2^64"))?
                        + d;
                    Size
                }
                (Size, b';' | b' ' | b'\t') | (Ext, _) if b != b'\r' => Ext,
                (Size | Ext, b'\r') => SizeLf,
                (SizeLf, b'\n') if self.size == 0 => TrailerStart,
                (SizeLf, b'\n') => Data,
                (DataCr, b'\r') => DataLf,
                (DataLf, b'\n') => Size,
                (TrailerStart, b'\r') => EndLf,
                (TrailerStart | Trailer, b) if b != b'\r' => Trailer,
                (Trailer, b'\r') => TrailerLf,
                (TrailerLf, b'\n') => TrailerStart,
                (EndLf, b'\n') => return Ok(Some(bytes.len())),
                _ => return Err(Malformed("bad chunked framing")),
            };
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_finds_the_end_in_any_split() {
        let body = b"5\r\nhello\r\n1;ext=1\r\n!\r\n0\r\nX-T: 1\r\n\r\n";
        for cut in 0..body.len() {
            let mut d = Chunked::default();
            let first = d.feed(&body[..cut]).unwrap();
            let end = match first {
                Some(rest) => Some(rest),
                None => d.feed(&body[cut..]).unwrap(),
            };
            assert_eq!(end, Some(0), "cut at {cut}");
        }
        assert!(Chunked::default().feed(b"zz\r\n").is_err());
        assert_eq!(Chunked::default().feed(b"0\r\n\r\nGET"), Ok(Some(3)));
    }
}
