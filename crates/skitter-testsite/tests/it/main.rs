//! The test site's integration tests, one binary (as uv's `it`): each file below
//! is a module that serves the site on loopback and reads it back with
//! `support`'s plain HTTP client.
//!
//! Run one file's tests by its module path: `cargo test -p skitter-testsite
//! --test it -- versions::`.

mod support;

mod site;
mod special;
mod throughput;
mod versions;
