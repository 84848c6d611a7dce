//! augur-dtmc: the sparse DTMC, its builder, and the explicit model formats.
//!
//! Main types: [`Dtmc`] (CSR transition matrix with u32 indices, labels, reward structures,
//! initial states, valuations), [`DtmcBuilder`] (the checked way to make one, with a
//! [`BuildReport`]), [`DtmcError`] / [`Result`]. Files: [`read_model`] / [`write_model`]
//! dispatch over PRISM explicit files ([`explicit`]), Storm's DRN ([`drn`]), Augur's JSON
//! ([`json`]), and export to DOT ([`dot`]) and the PRISM language ([`prism_export`]).
//! Learning from abstract traces: [`learn`] (transition counts, validity-aware Laplace
//! smoothing, Wilson intervals), [`pac`] (PAC sample-size bounds), [`simulate`] (seeded traces).
//!
//! ```
//! use augur_dtmc::DtmcBuilder;
//! let mut b = DtmcBuilder::new(2);
//! b.add_row(0, [(0, 0.5), (1, 0.5)])?;
//! b.add_row(1, [(1, 1.0)])?;
//! b.add_initial(0)?;
//! b.add_label_state("done", 1)?;
//! let (dtmc, _report) = b.build()?;
//! assert_eq!(dtmc.num_states(), 2);
//! assert!(dtmc.label_or_err("done")?.contains(1));
//! # Ok::<(), augur_dtmc::DtmcError>(())
//! ```
#![deny(missing_docs)]

mod builder;
mod error;
mod io;
mod model;
#[cfg(test)]
mod proptests;
mod text;
mod valuations;

pub mod dot;
pub mod drn;
pub mod explicit;
pub mod json;
pub mod learn;
pub mod pac;
pub mod prism_export;
pub mod simulate;

pub use builder::*;
pub use error::*;
pub use explicit::{read_prism_explicit, write_prism_explicit};
pub use io::*;
pub use model::*;
