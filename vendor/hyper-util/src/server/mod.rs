//! Server utilities.

pub mod conn;

#[cfg(feature = "server-graceful")]
pub mod graceful;
