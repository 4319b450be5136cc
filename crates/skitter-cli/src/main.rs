//! The `skitter` command line (being built).
fn main() {}
