//! augur-solver: graph algorithms, numerical and exact solvers, and the PCTL checker for DTMCs.
//!
//! (API skeleton agreed between the solver-core and checker work; bodies land with them.)
#![deny(missing_docs)]

pub mod check;
pub mod numeric;
