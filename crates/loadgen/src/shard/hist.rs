//! A histogram read back from a document or a live page (base64 of
//! HdrHistogram's V2, deflated or not), held to caps before the
//! `hdrhistogram` crate sees it: that crate sizes its buffer from the
//! length a header announces, so a 70-byte histogram announcing 0x7fffffff
//! bytes took 2.1 GB before it was refused, and a deflate bomb 216 MB
//! (issue 49 finding 11). Here the announced length must be held by the
//! bytes that follow it, and inflating stops at [`MAX_INFLATED`].

use std::io::Read;

use base64::Engine;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use iolab_model::attack::AttackResult;

/// Most bytes a histogram may inflate to. iolab's histograms (3 significant
/// digits over microseconds) hold at most ~60,000 counters of at most 9
/// bytes each, about 0.5 MiB; 4 MiB leaves room for any honest writer.
pub const MAX_INFLATED: usize = 4 << 20;
/// Most significant digits: 5 is HdrHistogram's own ceiling (and each more
/// digit is ten times the counters to allocate).
const MAX_DIGITS: u32 = 5;

const V2_COOKIE: u32 = 0x1c84_9313;
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9314;
/// The V2 header after its cookie: payload length, normalizing offset,
/// significant digits, lowest, highest, integer-to-double ratio.
const V2_HEADER: usize = 4 + 4 + 4 + 8 + 8 + 8;

/// Why a histogram was refused.
#[derive(Debug, thiserror::Error)]
pub enum HistError {
    /// The text is not base64.
    #[error("is not base64 ({0})")]
    Base64(#[from] base64::DecodeError),
    /// Fewer bytes than a header.
    #[error("is cut short ({0} bytes, no whole header)")]
    Short(usize),
    /// The first four bytes are not HdrHistogram V2's.
    #[error("is not an HdrHistogram V2 (cookie {0:#010x})")]
    Cookie(u32),
    /// A header announces more bytes than follow it.
    #[error("announces {announced} bytes and holds {held}")]
    Announced {
        /// The length in the header.
        announced: u64,
        /// The bytes after the header.
        held: usize,
    },
    /// The deflated payload inflates past [`MAX_INFLATED`].
    #[error("inflates past {} MiB (a deflate bomb?)", MAX_INFLATED >> 20)]
    Bomb,
    /// The deflated payload is not zlib.
    #[error("does not inflate ({0})")]
    Inflate(std::io::Error),
    /// More significant digits than HdrHistogram allows.
    #[error("asks for {0} significant digits (at most {MAX_DIGITS})")]
    Digits(u32),
    /// Within its caps, the crate refused it.
    #[error("does not decode ({0})")]
    Decode(String),
}

/// A histogram as base64 V2 + deflate, as documents carry it (the
/// inverse of [`decode_base64`]).
pub use super::record::encode as encode_base64;

/// A base64 V2 (or V2 + deflate) histogram, held to the caps above.
pub fn decode_base64(b64: &str) -> Result<Histogram<u64>, HistError> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(b64)?;
    decode(&bytes)
}

/// A V2 (or V2 + deflate) histogram, held to the caps above.
pub fn decode(bytes: &[u8]) -> Result<Histogram<u64>, HistError> {
    let plain = match cookie(bytes)? {
        V2_COMPRESSED_COOKIE => inflate(bytes)?,
        V2_COOKIE => bytes.to_vec(),
        other => return Err(HistError::Cookie(other)),
    };
    if cookie(&plain)? != V2_COOKIE {
        return Err(HistError::Cookie(cookie(&plain)?));
    }
    if plain.len() < 4 + V2_HEADER {
        return Err(HistError::Short(plain.len()));
    }
    let announced = u64::from(be32(&plain[4..8]));
    let held = plain.len() - 4 - V2_HEADER;
    if announced > held as u64 {
        return Err(HistError::Announced { announced, held });
    }
    let digits = be32(&plain[12..16]);
    if digits > MAX_DIGITS {
        return Err(HistError::Digits(digits));
    }
    Deserializer::new()
        .deserialize(&mut &plain[..])
        .map_err(|e| HistError::Decode(format!("{e:?}")))
}

/// The deflated payload after a compressed header, inflated up to the cap.
fn inflate(bytes: &[u8]) -> Result<Vec<u8>, HistError> {
    if bytes.len() < 8 {
        return Err(HistError::Short(bytes.len()));
    }
    let announced = u64::from(be32(&bytes[4..8]));
    let held = bytes.len() - 8;
    if announced > held as u64 {
        return Err(HistError::Announced { announced, held });
    }
    let deflated = &bytes[8..8 + announced as usize];
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(deflated)
        .take(MAX_INFLATED as u64 + 1)
        .read_to_end(&mut out)
        .map_err(HistError::Inflate)?;
    if out.len() > MAX_INFLATED {
        return Err(HistError::Bomb);
    }
    Ok(out)
}

/// A finished shard's latency histogram does not hold its answers.
#[derive(Debug, thiserror::Error)]
pub enum AnswersError {
    /// The histogram is refused.
    #[error("the latency histogram {0}")]
    Decode(#[from] HistError),
    /// It holds another number of values than the counts' answers.
    #[error("its latency histogram holds {held} answers and its counts {answered}: the merged percentiles would leave some out (a corrupt or edited shard)")]
    Count {
        /// Values in the histogram (0 when it is missing).
        held: u64,
        /// `ok + non_2xx`.
        answered: u64,
    },
}

/// A finished shard's latency histogram holds one value per answer (ok
/// and non-2xx alike, as the recorder writes it): a histogram missing or
/// short would leave the merged percentiles those of part of the requests
/// (issue 49 finding 15: a null histogram gave the percentiles of 50 of 100).
pub(crate) fn holds_answers(doc: &AttackResult) -> Result<(), AnswersError> {
    let answered = doc.requests.ok + doc.requests.non_2xx;
    let held = match doc.histogram.as_deref().filter(|s| !s.is_empty()) {
        Some(b64) => decode_base64(b64)?.len(),
        None => 0,
    };
    if held != answered {
        return Err(AnswersError::Count { held, answered });
    }
    Ok(())
}

fn cookie(bytes: &[u8]) -> Result<u32, HistError> {
    bytes
        .get(..4)
        .map(be32)
        .ok_or(HistError::Short(bytes.len()))
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::{Serializer, V2DeflateSerializer, V2Serializer};
    use std::io::Write;

    fn sample() -> Histogram<u64> {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        for v in 1..1000 {
            h.record(v * 17).unwrap();
        }
        h
    }

    #[test]
    fn honest_histograms_round_trip() {
        let h = sample();
        let mut plain = Vec::new();
        V2Serializer::new().serialize(&h, &mut plain).unwrap();
        let mut deflated = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&h, &mut deflated)
            .unwrap();
        for bytes in [plain, deflated] {
            let back = decode(&bytes).unwrap();
            assert_eq!(back.len(), h.len());
            assert_eq!(back.value_at_quantile(0.99), h.value_at_quantile(0.99));
        }
    }

    /// Issue 49 finding 11: 70 bytes announcing 0x7fffffff were read into a
    /// 2 GiB buffer before being refused.
    #[test]
    fn r38_11_a_header_announcing_2_gib_is_refused_unread() {
        let mut plain = Vec::new();
        V2Serializer::new()
            .serialize(&sample(), &mut plain)
            .unwrap();
        plain[4..8].copy_from_slice(&0x7fff_ffffu32.to_be_bytes());
        plain.truncate(70);
        let e = decode(&plain).unwrap_err();
        assert!(
            matches!(
                e,
                HistError::Announced {
                    announced: 0x7fff_ffff,
                    ..
                }
            ),
            "{e}"
        );
        let mut compressed = V2_COMPRESSED_COOKIE.to_be_bytes().to_vec();
        compressed.extend(0x7fff_ffffu32.to_be_bytes());
        compressed.extend([0u8; 62]);
        let e = decode(&compressed).unwrap_err();
        assert!(matches!(e, HistError::Announced { .. }), "{e}");
        assert!(
            e.to_string()
                .contains("announces 2147483647 bytes and holds 62"),
            "{e}"
        );
    }

    /// Issue 49 finding 11: a deflate bomb inflated to 216 MB.
    #[test]
    fn r38_11_a_deflate_bomb_stops_at_the_cap() {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(&V2_COOKIE.to_be_bytes()).unwrap();
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..64 {
            z.write_all(&zeros).unwrap();
        }
        let deflated = z.finish().unwrap();
        let mut bytes = V2_COMPRESSED_COOKIE.to_be_bytes().to_vec();
        bytes.extend((deflated.len() as u32).to_be_bytes());
        bytes.extend(&deflated);
        assert!(bytes.len() < 1 << 20, "a small file: {}", bytes.len());
        let e = decode(&bytes).unwrap_err();
        assert!(matches!(e, HistError::Bomb), "{e}");
    }

    #[test]
    fn r38_11_too_many_digits_and_garbage_are_named() {
        let mut plain = Vec::new();
        V2Serializer::new()
            .serialize(&sample(), &mut plain)
            .unwrap();
        plain[12..16].copy_from_slice(&9u32.to_be_bytes());
        assert!(matches!(decode(&plain), Err(HistError::Digits(9))));
        assert!(matches!(decode(b"ab"), Err(HistError::Short(2))));
        assert!(matches!(decode(b"abcdefgh"), Err(HistError::Cookie(_))));
        assert!(matches!(decode_base64("!!"), Err(HistError::Base64(_))));
    }
}
