//! The verify crate's integration tests: the client, the gate and hostile targets, on real sockets.
//! One test binary for the crate (ripgrep's way): each file below was a binary of its own,
//! and every one linked the crate and its dependencies again.

mod client;
mod gate;
mod held;
mod hostile;
mod hostile_round4;
