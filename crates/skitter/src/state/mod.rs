//! What a crawl keeps on disk below the frontier: the crash-safe outcome store
//! of `--state` ([`store`]), the recrawl records and their codec ([`recrawl`]),
//! and the anonymous spill files of bounded memory ([`spill`]).

pub mod recrawl;
pub mod spill;
pub mod store;
