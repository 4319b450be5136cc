//! Proxy utilities

pub mod matcher;
