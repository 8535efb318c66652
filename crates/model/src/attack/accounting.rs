//! Which accounting identity a document broke ([`AccountingError`]), as
//! [`super::AttackResult::check_accounting`] and
//! [`super::EndpointResult::check_accounting`] find it.

use super::HeldAccountingError;
use crate::error_class::CodesError;

/// Which accounting identity a document broke; the message shows the sums.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccountingError {
    /// `planned != sent + not_sent`.
    #[error("planned {planned} != sent {sent} + not_sent {not_sent}")]
    Planned {
        /// Planned.
        planned: u64,
        /// Sent.
        sent: u64,
        /// Not sent.
        not_sent: u64,
    },
    /// `sent != ok + non_2xx + errors`.
    #[error("sent {sent} != ok {ok} + non_2xx {non_2xx} + errors {errors}")]
    Sent {
        /// Sent.
        sent: u64,
        /// 2xx.
        ok: u64,
        /// Other statuses.
        non_2xx: u64,
        /// Errors, every class.
        errors: u64,
    },
    /// More retries than sends.
    #[error("retried {retried} > sent {sent}")]
    Retried {
        /// Retried.
        retried: u64,
        /// Sent.
        sent: u64,
    },
    /// More unclean TLS closes than answers.
    #[error("unclean_tls_close {unclean} > answers {answered}")]
    Unclean {
        /// Unclean closes.
        unclean: u64,
        /// Answers.
        answered: u64,
    },
    /// Errors by code do not add to their class.
    #[error(transparent)]
    Codes(#[from] CodesError),
    /// A held-connection identity.
    #[error(transparent)]
    Held(#[from] HeldAccountingError),
    /// Status codes do not add to the answers.
    #[error("status codes add to {by_status}, not ok + non_2xx = {answers}")]
    Status {
        /// Their sum.
        by_status: u64,
        /// `ok + non_2xx`.
        answers: u64,
    },
    /// An endpoint's sends do not add up.
    #[error("endpoint {method} {template}: sent {sent} != ok + non_2xx + errors {answered}")]
    Endpoint {
        /// Its method.
        method: String,
        /// Its template.
        template: String,
        /// Sent.
        sent: u64,
        /// What the counts add to.
        answered: u64,
    },
}
