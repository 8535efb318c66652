//! The report crate's integration tests: renderers, documents, schemas and the live page on fixtures.
//! One test binary for the crate (ripgrep's way): each file below was a binary of its own,
//! and every one linked the crate and its dependencies again.

mod capacity;
mod documents;
mod explained;
mod held;
mod live;
mod png_names;
mod render;
mod schemas;
mod service_series;
