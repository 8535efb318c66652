//! The model crate's integration tests: the shared parser vectors and hostile input.
//! One test binary for the crate (ripgrep's way): each file below was a binary of its own,
//! and every one linked the crate and its dependencies again.

mod fuzz;
mod vectors;
