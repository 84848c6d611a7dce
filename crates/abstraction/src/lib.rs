//! augur-abstraction
#![deny(missing_docs)]
