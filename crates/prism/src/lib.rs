//! augur-prism
#![deny(missing_docs)]
