//! augur-dtmc: the sparse DTMC and its builder.
//!
//! Main types: [`Dtmc`] (CSR transition matrix with u32 indices, labels, reward structures,
//! initial states, valuations), [`StateSet`], [`Matrix`], [`DtmcBuilder`] (the checked way to
//! make one, with a [`BuildReport`]), [`DtmcError`] / [`Result`]. Files are `augur-formats`'s
//! job; learning, PAC bounds and simulation are `augur-learn`'s.
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
pub mod interval;
mod model;
mod valuations;

pub use builder::*;
pub use error::*;
pub use interval::{
    distribute_rest, robust_row_value, weighted, ExactIntervals, IntervalProblem, Intervals,
    Normalised,
};
pub use model::*;
