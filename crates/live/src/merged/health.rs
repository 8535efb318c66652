//! How long `iolab merge --live` waits on a shard that gives no state.
//! A live merge ends only when every shard says it has finished, so a page
//! that answers garbage, redirects, has the wrong schema, hangs or is gone
//! kept it waiting for ever (issue 49 finding 10). Now a shard's reads are
//! held to two bounds, and the merge ends naming the shard and the fix:
//! a peer that answers, but not with a live state, [`WRONG_IN_A_ROW`] times
//! in a row; or no state at all for [`SILENT`] (a hang, a trickle, a page
//! gone before its last state was read). A shard waiting for its start
//! (503) is neither: it is on its way.

use std::time::{Duration, Instant};

/// Answers in a row that are not a live state (about 2.5 s of polls): a
/// shard restarting may answer oddly once, an address of something else
/// does every time.
pub const WRONG_IN_A_ROW: u32 = 5;
/// Longest a shard may go without a state read (and without a 503 saying
/// it waits for its start).
pub const SILENT: Duration = Duration::from_secs(30);

/// Why one read of a shard's `/state` gave no state.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ReadError {
    /// 503: the shard has not started sending.
    #[error("not sending yet")]
    Waiting,
    /// No answer within the read's deadline, or no connection.
    #[error("unreachable: {0}")]
    Unreachable(String),
    /// An answer, but not an iolab live state.
    #[error("{0}")]
    NotAPage(String),
}

/// Why the live merge gave up before every shard finished.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GiveUp {
    /// A shard's answers are not a live state.
    #[error("{url}: {why} ({WRONG_IN_A_ROW} answers in a row): give the page each `iolab attack --shard i/n --live` printed")]
    NotAPage {
        /// The shard's page.
        url: String,
        /// Its last answer's fault.
        why: String,
    },
    /// A shard gave no state for [`SILENT`].
    #[error("{url}: no state for {} s ({why}): merge the shards' files afterwards (iolab merge FILE...)", SILENT.as_secs())]
    Silent {
        /// The shard's page.
        url: String,
        /// Its last read's fault.
        why: String,
    },
    /// The shards' states do not merge, and every one has finished.
    #[error("{0}")]
    DoNotMerge(String),
    /// Ctrl-C.
    #[error("interrupted before every shard finished")]
    Interrupted,
}

/// One shard's record of reads.
#[derive(Debug, Clone)]
pub struct Health {
    since: Instant,
    wrong: u32,
}

impl Health {
    /// A shard not read yet: its silence counts from now.
    pub fn new() -> Health {
        Health {
            since: Instant::now(),
            wrong: 0,
        }
    }

    /// Note one read of the shard at `url`; the give-up it brings, if any.
    pub fn note<T>(&mut self, url: &str, read: &Result<T, ReadError>) -> Option<GiveUp> {
        match read {
            Ok(_) | Err(ReadError::Waiting) => {
                self.since = Instant::now();
                self.wrong = 0;
                None
            }
            Err(e) => {
                if let ReadError::NotAPage(why) = e {
                    self.wrong += 1;
                    if self.wrong >= WRONG_IN_A_ROW {
                        return Some(GiveUp::NotAPage {
                            url: url.to_string(),
                            why: why.clone(),
                        });
                    }
                } else {
                    self.wrong = 0;
                }
                (self.since.elapsed() >= SILENT).then(|| GiveUp::Silent {
                    url: url.to_string(),
                    why: e.to_string(),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_wrong_answers_in_a_row_give_up_and_a_good_one_resets() {
        let mut h = Health::new();
        let wrong: Result<(), _> = Err(ReadError::NotAPage("garbage".into()));
        for _ in 0..WRONG_IN_A_ROW - 1 {
            assert!(h.note("u", &wrong).is_none());
        }
        assert!(h.note("u", &Ok(())).is_none());
        for _ in 0..WRONG_IN_A_ROW - 1 {
            assert!(h.note("u", &wrong).is_none());
        }
        let e = h.note("u", &wrong).unwrap();
        assert!(e.to_string().starts_with("u: garbage"), "{e}");
    }

    #[test]
    fn silence_gives_up_after_its_bound_but_waiting_does_not() {
        let mut h = Health::new();
        h.since = Instant::now() - SILENT;
        assert!(h.note("u", &Err::<(), _>(ReadError::Waiting)).is_none());
        h.since = Instant::now() - SILENT;
        let e = h
            .note(
                "u",
                &Err::<(), _>(ReadError::Unreachable("timed out".into())),
            )
            .unwrap();
        assert!(matches!(e, GiveUp::Silent { .. }), "{e}");
    }
}
