//! augur-formats: reading and writing DTMCs in files.
//!
//! Main items: [`read_model`] (by extension) and [`write_model`] / [`write_model_to_path`]
//! (by [`Format`]) dispatch over PRISM's explicit files ([`explicit`]: `.tra` with `.lab`,
//! `.srew`, `.trew`, `.sta`), Storm's DRN ([`drn`]), Augur's JSON ([`json`]), and export to
//! DOT ([`dot`]) and the PRISM language ([`prism_export`]). Errors are [`FormatError`]
//! ([`Result`]): every located one carries an `augur_source::Location` with the line's text,
//! and [`FormatError::diagnostic`] renders it with a caret under the offending token, field or
//! JSON value. The model itself ([`augur_dtmc::Dtmc`]) and its builder live in `augur-dtmc`.
//!
//! ```
//! use augur_formats::{json::read_json, write_model, Format, ReadOptions};
//! use std::path::Path;
//! let text = r#"{"states": 2, "initial": [0], "transitions": [[0, 1, 1], [1, 1, 1]]}"#;
//! let (dtmc, _report) = read_json(text.as_bytes(), Path::new("m.json"), &ReadOptions::default())?;
//! let mut out = Vec::new();
//! write_model(&dtmc, Format::Tra, &mut out)?;
//! assert_eq!(String::from_utf8(out).unwrap(), "2 2\n0 1 1\n1 1 1\n");
//!
//! let bad = r#"{"states": 2, "initial": [0], "transitions": [[0, 7, 1]]}"#;
//! let e = read_json(bad.as_bytes(), Path::new("m.json"), &ReadOptions::default()).unwrap_err();
//! assert_eq!(e.to_string(), "m.json:1:51: transitions[0][1]: state 7 out of range (2 states)");
//! # Ok::<(), augur_formats::FormatError>(())
//! ```
#![deny(missing_docs)]

mod error;
mod io;
#[cfg(test)]
mod proptests;
mod sta;
mod text;

pub mod confine;
pub mod dot;
pub mod drn;
pub mod explicit;
pub mod json;
pub mod param;
pub mod prism_export;
pub mod smoothing;

pub use error::{FormatError, Result};
pub use explicit::{read_prism_explicit, write_prism_explicit};
pub use io::*;
