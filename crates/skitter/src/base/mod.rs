//! The bottom layer: the crawl's vocabulary and pure leaves that every other
//! layer may use and that use nothing of the crate above them — URL
//! normalisation and scope, the request and outcome records, trap rules, safe
//! file names, the varint codec and stop reasons.

pub(crate) mod fsname;
pub mod outcome;
pub(crate) mod request;
pub mod scope;
pub(crate) mod stop;
pub mod trap;
pub mod urlnorm;
pub(crate) mod varint;
