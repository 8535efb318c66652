//! The predict crate's integration tests: closed forms, the classics and the showdown, predicted.
//! One test binary for the crate (ripgrep's way): each file below was a binary of its own,
//! and every one linked the crate and its dependencies again.

mod common;

mod classics;
mod closed_forms;
mod showdown;
